"""vla-check --states (docs/trace.md, "States saved by a cache") against numpy written from the
published Gated DeltaNet recurrence, not from lib/:

    S_t = a_t S_{t-1} (I - beta_t k_t k_t^T) + beta_t v_t k_t^T,    a_t = exp(g_t)

(Gated DeltaNet, Yang et al. 2024, in its layout, which is vlastab's: S is dv x d, v its rows, k
its columns; k L2-normalized as fla's use_qk_l2norm_in_kernel does, k / sqrt(k . k + 1e-6)), here in
float64 on a trace of 2 heads x 2000 tokens, d = dv = 16. The states the numpy loop gives at five
positions are saved as a prefix cache would save them:

1. under their true positions: every state agrees with its label, matched at it, exit 0. The
   distance is numpy's float64 against vla-check's exact reference: within the budget of the f64
   policy (4 x the state error of vlastab's own binary64 run, and at least sqrt(d) u64), which
   a recurrence other than the published one (a missing normalization, the decay after the write)
   would miss by orders of magnitude;
2. the state at 364 saved under 1600, as in vLLM issue 51113 ("hashed as state@1600 but holds
   state@364"): exit 1, that state alone mislabelled and the summary names 364;
3. positions as int32 and uint16, the states as float32 (the policy f32, from the dtype): exit 0;
4. bad files: a position past T, positions as floats, states of another shape, a NaN: exit 2,
   one line naming the file.
"""
import os
import subprocess

import numpy as np
import pytest

H, T, D = 2, 2000, 16
POS = [0, 364, 1000, 1600, 2000]


def gdn_states(q, k, v, beta, g, ts):
    """the published recurrence token by token in float64: S_t for t in ts, (len(ts), H, dv, d)"""
    k = k / np.sqrt((k * k).sum(-1, keepdims=True) + 1e-6)
    S = np.zeros((H, v.shape[-1], k.shape[-1]))
    out = {0: S.copy()}
    eye = np.eye(k.shape[-1])
    for t in range(1, T + 1):
        for h in range(H):
            kt, vt, b = k[h, t - 1], v[h, t - 1], beta[h, t - 1]
            S[h] = np.exp(g[h, t - 1]) * S[h] @ (eye - b * np.outer(kt, kt)) + b * np.outer(vt, kt)
        out[t] = S.copy()
    return np.stack([out[t] for t in ts])


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    """a gdn trace (model.txt: gdn) and the numpy states at POS"""
    d = tmp_path_factory.mktemp("states")
    rng = np.random.default_rng(5)
    arrays = {"q": rng.standard_normal((H, T, D)), "k": rng.standard_normal((H, T, D)),
              "v": rng.standard_normal((H, T, D)),
              "beta": 1 / (1 + np.exp(-rng.standard_normal((H, T)))),
              "logdecay": -0.05 * np.abs(rng.standard_normal((H, T)))}
    tr = d / "tr"
    tr.mkdir()
    for name, x in arrays.items():
        np.save(tr / ("%s.npy" % name), x)
    (tr / "model.txt").write_text("model gdn\n")
    S = gdn_states(arrays["q"], arrays["k"], arrays["v"], arrays["beta"], arrays["logdecay"],
                   POS)
    return d, tr, S


def judge(bin_dir, tr, cache, states, positions, *more):
    """vla-check --states on states.npy and positions.npy written here: exit, rows, stderr"""
    os.makedirs(cache, exist_ok=True)
    np.save(os.path.join(cache, "states.npy"), states)
    np.save(os.path.join(cache, "positions.npy"), positions)
    p = subprocess.run([os.path.join(bin_dir, "vla-check"), "trace:%s" % tr, "--states",
                        str(cache)] + list(more), capture_output=True, text=True, timeout=600)
    rows = [line.split() for line in p.stdout.splitlines() if line and line[0] != "#"]
    return p.returncode, rows, p.stderr


def test_true_labels_agree(bin_dir, trace):
    d, tr, S = trace
    st, rows, err = judge(bin_dir, tr, d / "c1", S, np.array(POS))
    assert st == 0 and len(rows) == len(POS) * H, (st, err)
    assert "ok: all 5 states agree with their labels" in err, err
    for r in rows:  # state head label matched dist_label budget_label ... verdict
        assert r[8] == "ok" and r[3] == r[2] and float(r[4]) <= float(r[5]) < 1e-13, r
    print("numpy's float64 states: distance at their labels %.3g at most (budget %.3g at least)"
          % (max(float(r[4]) for r in rows), min(float(r[5]) for r in rows)))


def test_mislabelled_state_named(bin_dir, trace):
    d, tr, S = trace
    X = S.copy()
    X[3] = S[1]  # the state at 364 saved as 1600
    st, rows, err = judge(bin_dir, tr, d / "c2", X, np.array(POS))
    assert st == 1, (st, err)
    assert "state 3: label t=1600, content matches t=364 (distance" in err, err
    for r in rows:
        if r[0] == "3":
            assert r[8] == "mislabelled" and r[3] == "364" and float(r[4]) > 0.1, r
        else:
            assert r[8] == "ok", r
    print(err.strip())


@pytest.mark.parametrize("pdtype", ["<i4", "<u2"])
def test_dtypes(bin_dir, trace, pdtype):
    d, tr, S = trace
    st, rows, err = judge(bin_dir, tr, d / ("c3" + pdtype[1:]), S.astype(np.float32),
                          np.array(POS, dtype=pdtype))
    assert st == 0 and all(r[8] == "ok" for r in rows), (st, err)
    assert len(rows) == len(POS) * H


@pytest.mark.parametrize("what,states,positions,says", [
    ("a position past T", None, [0, 364, 1000, 1600, 2001],
     "positions.npy: 2001 at [4] is outside 0..2000"),
    ("positions as floats", None, np.array(POS, dtype=np.float64),
     "positions.npy: unsupported dtype '<f8' (integers only"),
    ("a state per head missing", "drop-head", POS,
     "states.npy: shape (5, 1, 16, 16), expected (N, heads, dv, d) = (N, 2, 16, 16)"),
    ("a NaN", "nan", POS, "states.npy: NaN at [2, 1, 3, 4]"),
])
def test_bad_files_refused(bin_dir, trace, what, states, positions, says):
    d, tr, S = trace
    X = S.copy()
    if states == "drop-head":
        X = X[:, :1]
    elif states == "nan":
        X[2, 1, 3, 4] = np.nan
    st, rows, err = judge(bin_dir, tr, d / "bad", X, np.array(positions))
    assert st == 2 and says in err and err.count("\n") == 1 and not rows, (what, st, err)
