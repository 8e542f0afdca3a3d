"""vla-check --outputs on a packed trace (cu_seqlens.npy, docs/trace.md "Packed sequences") against
numpy written from the published Gated DeltaNet recurrence, not from lib/:

    S_t = a_t S_{t-1} (I - beta_t k_t k_t^T) + beta_t v_t k_t^T,    a_t = exp(g_t)
    o_t = d^-1/2 S_t q_t

(Gated DeltaNet, Yang et al. 2024, in vlastab's layout: S is dv x d; q and k L2-normalized as
fla's use_qk_l2norm_in_kernel does, x / sqrt(x . x + 1e-6)), each sequence of the pack starting
from its own initial state, S0.npy's row (fla's initial_state of a varlen call). A trace of 2
heads x 96 tokens, three sequences of 30, 26 and 40 tokens, d = dv = 8, float64. The numpy loop's
read-outs and final state (the last sequence's) are the kernel's outputs:

1. the loop restarting at each sequence from its row: exit 0 (float64 against vla-check's exact
   reference: within the f64 policy's budget, 4 x the attainable error);
2. the loop letting sequence 1's state run on into sequence 2 (fla issue 1088, slime PR 1686:
   cu_seqlens lost): exit 1, the summary naming packed sequence 2 and its first token;
3. the loop starting every sequence from 0, the initial states not read (fla issue 351's class):
   exit 1, the summary naming sequence 0 and its first token;
4. the recorder (TraceRecorder.save(cu_seqlens=, initial_state=)) writes the same trace files.
"""
import os
import subprocess

import numpy as np
import pytest

H, D = 2, 8
CU = [0, 30, 56, 96]
T = CU[-1]


def gdn_packed(q, k, v, beta, g, S0, cu, leak_at=None, h0=True):
    """the published recurrence token by token in float64, restarting at each sequence i from
    S0[i] (from 0 where h0 is False); at sequence leak_at the state runs on from the one before.
    Returns o (H, T, dv) and the last sequence's final state (H, dv, d)"""
    q = q / np.sqrt((q * q).sum(-1, keepdims=True) + 1e-6)
    k = k / np.sqrt((k * k).sum(-1, keepdims=True) + 1e-6)
    o = np.zeros(v.shape)
    S = np.zeros((H, v.shape[-1], k.shape[-1]))
    eye = np.eye(k.shape[-1])
    for i in range(len(cu) - 1):
        if i != leak_at:
            S = S0[i].copy() if h0 else np.zeros_like(S)
        for t in range(cu[i], cu[i + 1]):
            for h in range(H):
                kt, b = k[h, t], beta[h, t]
                S[h] = np.exp(g[h, t]) * S[h] @ (eye - b * np.outer(kt, kt)) + \
                    b * np.outer(v[h, t], kt)
                o[h, t] = D ** -0.5 * (S[h] @ q[h, t])
    return o, S


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    d = tmp_path_factory.mktemp("varlen")
    rng = np.random.default_rng(11)
    arrays = {"q": rng.standard_normal((H, T, D)), "k": rng.standard_normal((H, T, D)),
              "v": rng.standard_normal((H, T, D)),
              "beta": 1 / (1 + np.exp(-rng.standard_normal((H, T)))),
              "logdecay": -0.05 * np.abs(rng.standard_normal((H, T)))}
    S0 = rng.standard_normal((len(CU) - 1, H, D, D))
    tr = d / "tr"
    tr.mkdir()
    for name, x in arrays.items():
        np.save(tr / ("%s.npy" % name), x)
    np.save(tr / "S0.npy", S0)
    np.save(tr / "cu_seqlens.npy", np.array(CU, dtype=np.int64))
    (tr / "model.txt").write_text("model gdn\n")
    return d, tr, arrays, S0


def judge(bin_dir, tr, out, o, S):
    """vla-check --outputs on o.npy and S.npy written here: exit, stderr"""
    os.makedirs(out, exist_ok=True)
    np.save(os.path.join(out, "o.npy"), o)
    np.save(os.path.join(out, "S.npy"), S)
    p = subprocess.run([os.path.join(bin_dir, "vla-check"), "trace:%s" % tr, "--outputs",
                        str(out), "--out", os.path.join(out, "table.dat"),
                        "--report", os.path.join(out, "report")],
                       capture_output=True, text=True, timeout=600)
    return p.returncode, p.stderr


def run(arrays, S0, **how):
    a = arrays
    return gdn_packed(a["q"], a["k"], a["v"], a["beta"], a["logdecay"], S0, CU, **how)


def test_restarting_kernel_passes(bin_dir, trace):
    d, tr, arrays, S0 = trace
    o, S = run(arrays, S0)
    st, err = judge(bin_dir, tr, d / "ok", o, S)
    assert st == 0 and err.startswith("vla-check: ok: 0 of 2 heads beyond"), (st, err)
    table = open(d / "ok" / "table.dat").read()
    assert "cu_seqlens.npy" in [ln for ln in table.splitlines() if ln.startswith("# files:")][0]
    assert "packed sequence" not in err  # (a head within its budget names none)
    print(err.strip())


def test_leak_named(bin_dir, trace):
    d, tr, arrays, S0 = trace
    o, S = run(arrays, S0, leak_at=2)
    st, err = judge(bin_dir, tr, d / "leak", o, S)
    assert st == 1, (st, err)
    assert "first in packed sequence 2 of 3, t = 57..96" in err, err
    assert "its first token's error" in err and "beyond the budget already" in err, err
    assert "the state of sequence 1 leaked into it" in err, err
    assert "packed sequence 0" not in err and "packed sequence 1 " not in err, err
    print(err.strip())


def test_h0_ignored_named(bin_dir, trace):
    d, tr, arrays, S0 = trace
    o, S = run(arrays, S0, h0=False)
    st, err = judge(bin_dir, tr, d / "noh0", o, S)
    assert st == 1, (st, err)
    assert "first in packed sequence 0 of 3, t = 1..30" in err, err
    assert "its S0.npy row not read?" in err, err
    print(err.strip())


def test_recorder_writes_packed_trace(trace, tmp_path):
    torch = pytest.importorskip("torch")
    from vlastab.torch_trace import TraceRecorder
    d, tr, arrays, S0 = trace
    rec = TraceRecorder(heads=H)
    with rec:
        for name in ("q", "k", "v", "beta", "logdecay"):
            x = torch.from_numpy(arrays[name].astype(np.float32))  # (H, T, ...): a batch of 1
            rec.capture(name, x.transpose(0, 1).unsqueeze(0))
    h0 = torch.from_numpy(S0).transpose(-1, -2)  # fla's (N, heads, d, dv)
    rec.save(tmp_path, model="gdn", initial_state=h0, cu_seqlens=torch.tensor(CU))
    cu = np.load(tmp_path / "cu_seqlens.npy")
    assert cu.dtype == np.int64 and cu.tolist() == CU
    s0 = np.load(tmp_path / "S0.npy")
    assert s0.shape == S0.shape and np.array_equal(s0, S0), s0.shape
    with pytest.raises(ValueError, match="strictly increasing"):
        rec.save(tmp_path / "bad", model="gdn", cu_seqlens=[0, 50, 40, 96])
    with pytest.raises(ValueError, match="initial_state: shape"):
        rec.save(tmp_path / "bad2", model="gdn", initial_state=h0[0], cu_seqlens=CU)
