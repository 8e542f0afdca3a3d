"""test_cp.py: the context-parallel form (vla-forms --what cp, docs/forms.md "The context-parallel
form") against numpy in binary64 written from the equations, not from lib/ or experiments/.

The gated delta rule (Yang, Kautz and Hatamizadeh 2025; fla's l2norm of q and k, the read-out
scaled by d^-1/2), in vlastab's layout (S is dv x d):

    S_t = a_t S_{t-1} (I - b_t k_t k_t^T) + b_t v_t k_t^T,   o_t = scale S_t q_t

is affine in S: over a segment of tokens S_out = S_in A + B, A (d x d) the product of the
transitions a_t (I - b_t k_t k_t^T) and B (dv x d) the segment's state from S_in = 0. The
sequence split over R ranks: each rank's summary (A, B), B from S_in = 0, A either directly (the
recurrence from S_in = I with v = 0, the product of the transitions: fla's KCP M chain, maxtext,
attention-gym) or from two runs (from S_in = I with v, A = (A + B) - B: hybrid-model-factory);
the summaries folded left to right from S_0 give every rank's incoming state, and each rank's
read-outs come from its incoming state. Checked here:

1. numpy: every rank's direct A equals the explicit matrix product of its transitions, and the
   folded state and the ranks' read-outs equal the one pass, both constructions, within the
   bound of two binary64 evaluations of one recurrence in different orders, sqrt(d T) u64
   (the square-root model of test_gated.py), times (1 + max ||B||_F) for the two runs: their A
   carries the rounding of (A + B), u64 (||A|| + ||B||), which the fold multiplies by S_in.
2. vla-forms --what cp on the same inputs (a trace) in binary64 against the binary64 one pass
   (test_gated.py checks that one pass against gated_ref.py's): every error within that bound;
   at R = 1 no fold is made, so both constructions give the one pass's bits.
3. The ranks' runs are the engines' (bit for bit on every backend: the lanes give the cpu's
   rows), the fold the program's.
4. The cancellation of the two runs: with v scaled by 2^10 the binary32 state's error of the two
   runs grows (their A's absolute error is u32 (||A|| + ||B||), ||B|| grew 2^10 fold), the direct
   construction's does not (A does not see v): a test of the construction, not of a tolerance.
5. The refusals, exit 2: a model not linear in S alone, R out of range, dv != d, a scan form, a
   chunk form on a backend that does not hand every token's read-out.
"""
import os
import subprocess

import numpy as np
import pytest

import vlastab

U64 = 2.0 ** -53
H, T, d = 2, 256, 16
RANKS = (1, 2, 4, 8)


def l2norm(x, eps=1e-6):
    return x / np.sqrt((x * x).sum(-1, keepdims=True) + eps)


def inputs(seed=5, vscale=1.0):
    rng = np.random.default_rng(seed)
    x = {"q": rng.standard_normal((H, T, d)), "k": rng.standard_normal((H, T, d)),
         "v": vscale * rng.standard_normal((H, T, d)),
         "beta": 1 / (1 + np.exp(-rng.standard_normal((H, T)))),
         # slow decays (memory ~ 1000 tokens): the summaries' A stay far from 0
         "logdecay": -1e-3 * (1 + rng.random((H, T))),
         "S0": rng.standard_normal((H, d, d))}
    return x


def run(x, S, t0, t1, zero_v=False):
    """the recurrence over tokens t0 .. t1 - 1 from S (H, dv, d): its final state and read-outs"""
    q, k = l2norm(x["q"]), l2norm(x["k"])
    S = S.copy()
    o = np.zeros((H, t1 - t0, d))
    for t in range(t0, t1):
        a, b = np.exp(x["logdecay"][:, t]), x["beta"][:, t]
        v = 0 * x["v"][:, t] if zero_v else x["v"][:, t]
        Sk = np.einsum("hij,hj->hi", S, k[:, t])
        S = a[:, None, None] * (S - b[:, None, None] * Sk[:, :, None] * k[:, t, None, :]) \
            + b[:, None, None] * v[:, :, None] * k[:, t, None, :]
        o[:, t - t0] = d ** -0.5 * np.einsum("hij,hj->hi", S, q[:, t])
    return S, o


def transitions(x, t0, t1):
    """the explicit product of the transitions a_t (I - b_t k_t k_t^T), t0 .. t1 - 1"""
    k = l2norm(x["k"])
    A = np.broadcast_to(np.eye(d), (H, d, d)).copy()
    for t in range(t0, t1):
        J = np.exp(x["logdecay"][:, t])[:, None, None] * (
            np.eye(d) - x["beta"][:, t, None, None] * k[:, t, :, None] * k[:, t, None, :])
        A = A @ J
    return A


def cp(x, R, way):
    """the context-parallel form: the incoming states, the fold after T, the read-outs"""
    L = T // R
    Sin, outs, Bmax = x["S0"], [], 0.0
    zero, eye = np.zeros((H, d, d)), np.broadcast_to(np.eye(d), (H, d, d))
    for r in range(R):
        B, _ = run(x, zero, r * L, (r + 1) * L)
        if way == "direct":
            A, _ = run(x, eye, r * L, (r + 1) * L, zero_v=True)
        else:
            AB, _ = run(x, eye, r * L, (r + 1) * L)
            A = AB - B
        _, o = run(x, Sin, r * L, (r + 1) * L)
        outs.append(o)
        Sin = Sin @ A + B
        Bmax = max(Bmax, np.sqrt((B ** 2).sum((1, 2))).max())
    return Sin, np.concatenate(outs, axis=1), Bmax


def relerr(x, ref):
    num = np.sqrt(((x - ref) ** 2).reshape(H, -1).sum(1))
    return float((num / np.sqrt((ref ** 2).reshape(H, -1).sum(1))).max())


BOUND = np.sqrt(d * T) * U64


def test_direct_summary_is_the_product_of_transitions():
    x = inputs()
    A, _ = run(x, np.broadcast_to(np.eye(d), (H, d, d)), 32, 96, zero_v=True)
    P = transitions(x, 32, 96)
    assert relerr(A, P) < BOUND
    assert relerr(A, np.broadcast_to(np.eye(d), (H, d, d))) > 0.1  # A is no identity here


@pytest.mark.parametrize("way", ["two", "direct"])
def test_numpy_cp_equals_one_pass(way):
    x = inputs()
    S1, o1 = run(x, x["S0"], 0, T)
    for R in RANKS:
        S, o, Bmax = cp(x, R, way)
        bound = BOUND * (1 + Bmax if way == "two" else 1)
        assert relerr(S, S1) < bound, (R, relerr(S, S1), bound)
        assert relerr(o, o1) < bound, (R, relerr(o, o1), bound)


def write_trace(x, path):
    os.makedirs(path, exist_ok=True)
    for name in ("q", "k", "v", "beta", "logdecay", "S0"):
        np.save(os.path.join(path, name + ".npy"), x[name])


def cp_table(bin_dir, trace, prec, forms="seq,chunk:16", extra=()):
    out = os.path.join(trace, "cp.dat")
    cmd = [os.path.join(bin_dir, "vla-forms"), "--what", "cp", "--model", "gdn", "--stream",
           "trace:" + trace, "--steps", str(T), "--runs", str(H), "--ref", "f64", "--forms", forms,
           "--precisions", prec, "--ranks", ",".join(map(str, RANKS)), "--out", out] + list(extra)
    p = subprocess.run(cmd, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    rows = []
    for line in open(out):
        if line.strip() and not line.startswith("#"):
            f = line.split()
            rows.append({"R": int(f[0]), "C": int(f[1]), "prec": f[2], "summary": f[3],
                         "s_in": float(f[4]), "s_fold": float(f[5]), "s_end": float(f[6]),
                         "o": float(f[7]), "o_last": float(f[8])})
    assert len(rows) == 2 * len(RANKS) * len(forms.split(",")) * len(prec.split(","))
    return rows


def test_program_f64_within_bound(tmp_path, bin_dir):
    x = inputs()
    write_trace(x, str(tmp_path))
    _, _, Bmax = cp(x, max(RANKS), "two")
    rows = cp_table(bin_dir, str(tmp_path), "f64")
    for r in rows:
        bound = BOUND * (1 + Bmax if r["summary"] == "two" else 1)
        for key in ("s_in", "s_fold", "s_end", "o", "o_last"):
            assert r[key] < bound, (r, key, bound)
    for C in (0, 16):  # R = 1: the one pass, both constructions the same bits
        one = [r for r in rows if r["R"] == 1 and r["C"] == C]
        assert one[0]["s_in"] == 0 == one[1]["s_in"]
        for key in ("s_end", "o", "o_last"):
            assert one[0][key] == one[1][key]
    # seq at R = 1 in binary64 is the reference's own computation: 0 in every bit
    one = [r for r in rows if r["R"] == 1 and r["C"] == 0][0]
    assert one["s_end"] == one["o"] == one["o_last"] == 0
    # chunk:16 differs from seq in its order: its R = 1 error is its own, not 0
    assert [r for r in rows if r["R"] == 1 and r["C"] == 16][0]["o"] > 0


def test_two_runs_cancel_with_the_state_scale(tmp_path, bin_dir):
    errs = {}
    for vs in (1.0, 1024.0):
        path = os.path.join(str(tmp_path), "v%g" % vs)
        write_trace(inputs(vscale=vs), path)
        rows = cp_table(bin_dir, path, "f32", forms="seq")
        errs[vs] = {r["summary"]: r["s_fold"] for r in rows if r["R"] == max(RANKS)}
    # the direct construction's relative error does not see v's scale (within a factor 4 of
    # rounding noise); the two runs' grows by orders of magnitude
    assert errs[1024.0]["direct"] < 4 * errs[1.0]["direct"] + 1e-6, errs
    assert errs[1024.0]["two"] > 30 * errs[1.0]["two"], errs
    assert errs[1024.0]["two"] > 30 * errs[1024.0]["direct"], errs


def test_backends_same_bits(tmp_path, bin_dir):
    """the fold is the program's, the ranks' runs the engines': the lanes give the cpu's rows"""
    write_trace(inputs(), str(tmp_path))
    rows = {}
    for b in ("cpu", "lanes"):
        rows[b] = cp_table(bin_dir, str(tmp_path), "f32,bf16-kern", forms="seq",
                           extra=("--backend", b))
    assert rows["cpu"] == rows["lanes"]
    assert all(r["o"] > 0 for r in rows["cpu"])


@pytest.mark.parametrize("args,said", [
    (["--model", "vla3"], "affine summary"),
    (["--model", "rls"], "affine summary"),
    (["--model", "la"], "affine summary"),
    (["--model", "gdn", "--ranks", "0"], "rank count"),
    (["--model", "gdn", "--ranks", "512"], "--ranks"),
    (["--model", "gdn", "--dv", "8"], "--dv = --d"),
    (["--model", "gdn", "--forms", "scan"], "seq or chunk:C"),
    (["--model", "gdn", "--summary", "wy"], "construction"),
    (["--model", "gdn", "--forms", "chunk:16", "--backend", "lanes"], "cpu backend alone"),
])
def test_refused(bin_dir, args, said):
    cmd = [os.path.join(bin_dir, "vla-forms"), "--what", "cp", "--stream", "gauss", "--d", "16",
           "--steps", "256", "--ref", "f64", "--forms", "seq"] + args
    p = subprocess.run(cmd, capture_output=True, text=True)
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert said in p.stderr, p.stderr
