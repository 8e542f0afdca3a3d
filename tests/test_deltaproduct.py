#!/usr/bin/python3
"""test_deltaproduct.py: Gated DeltaProduct (lib/models/deltaproduct.h, docs/gated.md) against a
float64 numpy implementation written here from the paper's equations (Siems et al., "DeltaProduct:
Improving State-Tracking in Linear RNNs via Householder Products", 2025, the gated recurrence), not
from lib/: the MPFR twin runs recur.h's own text and cannot catch a transcription slip.

The paper's token i, in vlastab's orientation (S = H^T, dv x d; o = scale S q):
    S_i = a_i S_{i-1} P_{i,1} P_{i,2} ... P_{i,n} + sum_j beta_{i,j} v_{i,j} k_{i,j}^T
                                                    P_{i,j+1} ... P_{i,n},
    P_{i,j} = I - beta_{i,j} k_{i,j} k_{i,j}^T,  a_i = exp(g_i),  o_i = scale S_i q_i,
q and k L2-normalized (x / sqrt(x . x + 1e-6)), scale d^-1/2, n = n_h Householder factors. Here J_i
and B_i are formed as matrices and S_i = S_{i-1} J_i + B_i: another order of operations than the
library's n_h rank-1 writes per token.

vlastab reads the token as n_h steps of its input stream (step r = i n_h + j: k, v, beta of
sub-step j; g_i at the token's first step, q_i at its last, the other rows' g and q not read, its
read-outs there 0), which is fla's interleaved sequence (chunk_gated_delta_product_ref).

Checks:
  - f64 seq, scan and chunk:C (C = 4, 16, 64; C no multiple of n_h = 3 too) against the numpy
    reference: every token's read-out and the final state;
  - the exact reference (vla-check --outputs, MPFR/double-double) against the numpy reference's
    o and S written as a kernel's outputs;
  - n_h = 1 is gdn bit for bit, every policy, seq, chunk:16 and scan;
  - a mutated reference (the gate at the token's last Householder step; the query read at its
    first) is far outside the bound.
Bound: two binary64 evaluations of one recurrence in different orders; t = T n_h steps of d-term
products, worst case c d t u64; the errors of independent signs grow like sqrt(d t) u64 (Higham
and Mary, SIAM J. Sci. Comput. 41 (2019)), the bound used, as tests/test_gated.py's."""
import json
import os
import subprocess
import tempfile
import warnings

import numpy as np
import pytest

import vlastab

U64 = 2.0 ** -53
H, T, d = 2, 96, 16
EPS = 1e-6


def l2norm(x):
    return x / np.sqrt((x * x).sum(-1, keepdims=True) + EPS)


def relerr(x, ref):
    """norm-wise, the largest over the heads"""
    num = np.sqrt(((x - ref) ** 2).reshape(x.shape[0], -1).sum(1))
    den = np.sqrt((ref ** 2).reshape(ref.shape[0], -1).sum(1))
    return float((num / den).max())


def tokens(nh, seed=5, T=T):
    """per-token inputs in Gated DeltaProduct's layer ranges: q (H, T, d), k (H, T, nh, d),
    v (H, T, nh, d), beta (H, T, nh) = sigmoid (the paper's beta in (0, 1)), g (H, T) =
    -A softplus(x - 3) as fla's gated layers"""
    rng = np.random.default_rng(seed)
    A = rng.uniform(1, 16, (H, 1))
    return dict(q=rng.standard_normal((H, T, d)), k=rng.standard_normal((H, T, nh, d)),
                v=rng.standard_normal((H, T, nh, d)),
                beta=1 / (1 + np.exp(-rng.standard_normal((H, T, nh)))),
                g=-A * np.log1p(np.exp(rng.standard_normal((H, T)) - 3.0)))


def reference(x, gate_after=0, read_at=None):
    """the paper's recurrence, token by token with J_i and B_i as matrices. gate_after: the
    Householder factors applied before the gate (0: the gate first, the paper's; a mutation
    otherwise); read_at: the sub-step whose S is read (None: the token's last, the paper's)"""
    q, k, v, beta, g = l2norm(x["q"]), l2norm(x["k"]), x["v"], x["beta"], x["g"]
    nh = k.shape[2]
    o = np.zeros((H, q.shape[1], v.shape[3]))
    S = np.zeros((H, v.shape[3], d))
    for h in range(H):
        for i in range(q.shape[1]):
            P = [np.eye(d) - beta[h, i, j] * np.outer(k[h, i, j], k[h, i, j]) for j in range(nh)]
            J, B = np.eye(d), np.zeros_like(S[h])
            partial = None
            for j in range(nh):  # S_{i,j} = S_{i,j-1} P_j + beta v k^T, with the gate
                if j == gate_after:
                    J, B = np.exp(g[h, i]) * J, np.exp(g[h, i]) * B
                J = J @ P[j]
                B = B @ P[j] + beta[h, i, j] * np.outer(v[h, i, j], k[h, i, j])
                if read_at == j:
                    partial = S[h] @ J + B
            if gate_after == nh:
                J, B = np.exp(g[h, i]) * J, np.exp(g[h, i]) * B
            S[h] = S[h] @ J + B
            o[h, i] = (partial if partial is not None else S[h]) @ q[h, i] / np.sqrt(d)
    return o, S


def stream(x, seed=9):
    """the tokens as vlastab's stream of T n_h steps: k, v, beta per step; q at each token's
    last step and g at its first, the other steps' q and g random (they must not be read)"""
    nh = x["k"].shape[2]
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((H, T, nh, d))
    q[:, :, nh - 1] = x["q"]
    g = -rng.uniform(0.5, 3, (H, T, nh))
    g[:, :, 0] = x["g"]
    return dict(q=q.reshape(H, T * nh, d), k=x["k"].reshape(H, T * nh, d),
                v=x["v"].reshape(H, T * nh, -1), beta=x["beta"].reshape(H, T * nh),
                logdecay=g.reshape(H, T * nh))


def ours(s, nh, form="seq", precision="f64", model="deltaproduct"):
    sets = dict(householder=nh) if model == "deltaproduct" else {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = vlastab.run(s["q"], s["k"], s["v"], model=model, precision=precision, form=form,
                        beta=s["beta"], logdecay=s["logdecay"], reference=False, **sets)
    return r["o"], r["S"]


def token_outputs(o, nh):
    """the read-outs at each token's last step; the others must be exactly 0 (a zero query)"""
    o = o.reshape(H, T, nh, -1)
    assert not np.any(o[:, :, :nh - 1]), "a read-out before a token's last step is not 0"
    return o[:, :, nh - 1]


@pytest.mark.parametrize("nh", [2, 3])
def test_against_the_papers_recurrence(nh):
    x = tokens(nh)
    o_ref, S_ref = reference(x)
    s = stream(x)
    bound = np.sqrt(d * T * nh) * U64
    worst = 0
    for form in ("seq", "scan", "chunk:4", "chunk:16", "chunk:64"):
        o, S = ours(s, nh, form)
        eo, eS = relerr(token_outputs(o, nh), o_ref), relerr(S, S_ref)
        worst = max(worst, eo / bound, eS / bound)
        assert eo <= bound and eS <= bound, \
            "deltaproduct householder=%d %-8s f64 against numpy: o %.1e, S %.1e (bound %.1e)" % (
                nh, form, eo, eS, bound)
    if os.environ.get("VLA_TEST_VERBOSE"):
        print("deltaproduct householder=%d: worst relerr / sqrt(d t) u64 %.3g" % (nh, worst))


def write_trace(path, s, nh):
    os.makedirs(path)
    for name in ("q", "k", "v", "beta", "logdecay"):
        np.save(os.path.join(path, name + ".npy"), s[name])
    with open(os.path.join(path, "model.txt"), "w") as f:
        f.write("model deltaproduct\nset householder=%d\n" % nh)


def exact_judge(tmp, s, o, S, nh):
    """vla-check --outputs: the numpy o (every step, 0 before a token's last) and S as a kernel's
    float64 outputs against the exact reference; the JSON's rows"""
    trace, out = os.path.join(tmp, "trace"), os.path.join(tmp, "out")
    write_trace(trace, s, nh)
    os.makedirs(out)
    full = np.zeros((H, T, nh, o.shape[2]))
    full[:, :, nh - 1] = o
    np.save(os.path.join(out, "o.npy"), full.reshape(H, T * nh, -1))
    np.save(os.path.join(out, "S.npy"), S)
    exe = os.path.join(os.environ.get("VLA_BIN_DIR", "bin"), "vla-check")
    prefix = os.path.join(tmp, "judge")
    p = subprocess.run([exe, "--stream", "trace:" + trace, "--outputs", out, "--precision", "f64",
                        "--ref", "exact", "--report", prefix, "--out",
                        os.path.join(tmp, "t.dat")], capture_output=True, text=True)
    with open(prefix + ".json") as f:
        return p, json.load(f)


@pytest.mark.parametrize("nh", [2, 3])
def test_exact_reference_against_the_papers_recurrence(nh):
    x = tokens(nh, seed=7)
    o_ref, S_ref = reference(x)
    with tempfile.TemporaryDirectory() as tmp:
        p, j = exact_judge(tmp, stream(x), o_ref, S_ref, nh)
    bound = np.sqrt(d * T * nh) * U64
    assert p.returncode == 0 and j["verdict"] == "ok" and len(j["heads"]) == H, p.stderr
    for h, st in zip(j["heads"], j["state"]):  # rel_rms: norm-wise over the read-outs
        assert h["rel_rms"] <= bound and st["rel_fro"] <= bound, \
            "deltaproduct householder=%d head %d: numpy against exact o %.1e, S %.1e (bound " \
            "%.1e)" % (nh, h["head"], h["rel_rms"], st["rel_fro"], bound)
    if os.environ.get("VLA_TEST_VERBOSE"):
        print("deltaproduct householder=%d: numpy against exact, o %s, S %s; bound %.2g" % (
            nh, [h["rel_rms"] for h in j["heads"]], [st["rel_fro"] for st in j["state"]], bound))


def test_one_householder_step_is_gdn_bit_for_bit():
    x = tokens(1, seed=11)
    s = stream(x)
    for p in vlastab.precisions():
        for form in ("seq", "chunk:16", "scan"):
            a, b = ours(s, 1, form, p), ours(s, 1, form, p, model="gdn")
            assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]), \
                "deltaproduct householder=1 %s %s differs from gdn" % (p, form)


def test_mutated_reference_fails():
    nh = 2
    x = tokens(nh)
    s = stream(x)
    o, S = ours(s, nh)
    o = token_outputs(o, nh)
    bound = np.sqrt(d * T * nh) * U64
    for kw, what in ((dict(gate_after=nh), "the gate after the token's last Householder step"),
                     (dict(gate_after=1), "the gate after its first Householder step"),
                     (dict(read_at=0), "the query read after the first Householder step")):
        o_m, _ = reference(x, **kw)
        e = relerr(o, o_m)
        assert e > 1e3 * bound, "a reference with %s: %.1e, not beyond %.1e" % (
            what, e, 1e3 * bound)
