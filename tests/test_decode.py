"""vla-forms --what decode with a rollback's handed state (--rejected N, --stale N; docs/forms.md
"Prefill, then decode") against numpy written from the published Gated DeltaNet recurrence, not
from lib/:

    S_t = a_t S_{t-1} (I - beta_t k_t k_t^T) + beta_t v_t k_t^T,    a_t = exp(g_t)

(Yang et al. 2024, in vlastab's layout: S is dv x d; k L2-normalized as fla's
use_qk_l2norm_in_kernel does, k / sqrt(k . k + 1e-6)), in float64 on a trace of 2 heads x 257
tokens, d = dv = 8. A speculative decoder's rollback hands the decode the state after the prompt's
P = 100 tokens and then one rejected draft (the trace's token 257, after the 256 run), or the state
after P - 1 tokens (the last accepted token's update missing); the decode then runs tokens
101..256 from it. numpy's relative state error of that decode against its own one pass, the mean
over the heads, is the table's s_pd at every checkpoint, within 4 sqrt(d t) u64 (both sides'
binary64 rounding of S over t steps relative to ||S||, in the probabilistic bound of Higham and
Mary 2019, sqrt(d t) u where the worst case is d t u; measured: 1.7e-16 at most, the bound at
t = 256 2.0e-14); a handover that ignored the setting would be off
by the whole error (0.1 to 1 at the first checkpoint). One pass: s_one 0 (the f64 policy is the
f64 reference's arithmetic).
"""
import os
import subprocess

import numpy as np
import pytest

H, T, D, P = 2, 256, 8, 100


def gdn(k, v, beta, g, S, steps):
    """the published recurrence over the given steps (0-based) from S, in float64; S after them"""
    k = k / np.sqrt((k * k).sum(-1, keepdims=True) + 1e-6)
    S = S.copy()
    eye = np.eye(D)
    for t in steps:
        for h in range(H):
            kt, vt, b = k[h, t], v[h, t], beta[h, t]
            S[h] = np.exp(g[h, t]) * S[h] @ (eye - b * np.outer(kt, kt)) + b * np.outer(vt, kt)
    return S


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    d = tmp_path_factory.mktemp("rollback")
    rng = np.random.default_rng(11)
    x = {"q": rng.standard_normal((H, T + 1, D)), "k": rng.standard_normal((H, T + 1, D)),
         "v": rng.standard_normal((H, T + 1, D)),
         "beta": 1 / (1 + np.exp(-rng.standard_normal((H, T + 1)))),
         "logdecay": -0.02 * np.abs(rng.standard_normal((H, T + 1)))}
    for name, a in x.items():
        np.save(d / ("%s.npy" % name), a)
    (d / "model.txt").write_text("model gdn\n")
    return d, x


def decode_rows(bin_dir, tr, *more):
    p = subprocess.run([os.path.join(bin_dir, "vla-forms"), "--what", "decode", "--model", "gdn",
                        "--stream", "trace:%s" % tr, "--d", str(D), "--steps", str(T), "--runs",
                        str(H), "--prefix", str(P), "--forms", "seq", "--precisions", "f64",
                        "--ref", "f64"] + list(more), capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    return [[float(c) if i != 2 else c for i, c in enumerate(line.split())]
            for line in p.stdout.splitlines() if line and line[0] != "#"]


def relerr(S, X):
    """the mean over the heads of ||S_h - X_h||_F / ||X_h||_F"""
    return np.mean([np.linalg.norm(S[h] - X[h]) / np.linalg.norm(X[h]) for h in range(H)])


@pytest.mark.parametrize("setting", [("--rejected", "1"), ("--stale", "1")])
def test_rollback_state_error_is_numpys(bin_dir, trace, setting):
    tr, x = trace
    k, v, beta, g = x["k"], x["v"], x["beta"], x["logdecay"]
    rows = decode_rows(bin_dir, tr, *setting)
    assert len(rows) >= 8
    zero = np.zeros((H, D, D))
    if setting[0] == "--rejected":  # the prompt, then the trace's token T + 1 (index T)
        handed = gdn(k, v, beta, g, gdn(k, v, beta, g, zero, range(P)), [T])
    else:  # the prompt less its last token
        handed = gdn(k, v, beta, g, zero, range(P - 1))
    exact, pd, done = gdn(k, v, beta, g, zero, range(P)), handed, P
    for r in rows:
        t = int(r[0])
        exact = gdn(k, v, beta, g, exact, range(done, t))
        pd = gdn(k, v, beta, g, pd, range(done, t))
        done = t
        bound = 4 * np.sqrt(D * t) * np.finfo(np.float64).eps / 2
        want = relerr(pd, exact)
        assert abs(r[6] - want) <= bound, (setting, t, r[6], want, bound)
        assert r[5] == 0, (setting, t, r[5])
    assert rows[0][6] > 1e-2, rows[0]  # the rollback's error is there at the first checkpoint
