#!/usr/bin/python3
"""test_half.py: the kernels' 16-bit choices (docs/forms.md) in vlastab against numpy written
from the kernels' algorithms (tests/gated_ref.py: tri_inverse, tri_inverse16, the seq forms'
cache, decay_bf16, beta_bf16), not from lib/recur.h.

1. The triangular inverse (I + L)^-1 of a chunk's L (kda's, unit keys; and raw keys), by
   vla_ut_inverse in each way (tri = forward, blocked, neumann):
   - f64 against the exact inverse (rationals) within 2 n u64 max(|T| |I + L| |T|) (the
     triangular inverse's componentwise forward error bound, Higham, Accuracy and Stability,
     section 14.2, c_n = n, doubled), and against gated_ref.tri_inverse (float64, the same way,
     another order) within twice that, C = 32
     and 64 (blocked merges 16 x 16 blocks there);
   - f16-kern and bf16-kern against gated_ref.tri_inverse16 (the 16-bit kernels' arithmetic:
     binary32 sums in ascending order, io-rounded operands and results) bit for bit.
2. Decoding with the 16-bit knobs: gdn and kda seq in vlastab's f64 policy with cache = f16 or
   bf16, decay_bf16, beta_bf16 against gated_ref's seq with the same roundings (numpy's float16,
   bfloat16 by frexp and half-even rounding), within sqrt(d T) u64 as tests/test_gated.py (two
   binary64 evaluations in other orders; a 16-bit rounding that a 1e-16 difference flips would
   show as 2^-9 relative, far above it); and each knob changes the result by more than 1e3 times
   that bound (the check can fail).
Run under pytest by tests/test_python.c (numpy)."""
import ctypes
from fractions import Fraction

import numpy as np
import pytest

import gated_ref
import vlastab

U64 = 2.0 ** -53
TRI = {"blocked": 0, "forward": 1, "neumann": 2}  # vla_tri
_D = ctypes.POINTER(ctypes.c_double)
lib = vlastab.library
lib.vla_ut_inverse.argtypes = [ctypes.c_int, ctypes.c_int, _D, ctypes.c_int, _D]


def prec(name):
    p = ctypes.c_int()
    assert lib.vla_prec_parse(name.encode(), ctypes.byref(p)) == 0
    return p.value


def ut(precision, tri, L):
    n = L.shape[0]
    Lc = np.ascontiguousarray(L, dtype=np.float64)
    T = np.zeros((n, n))
    r = lib.vla_ut_inverse(prec(precision), TRI[tri], Lc.ctypes.data_as(_D), n,
                           T.ctypes.data_as(_D))
    assert r == 0, r
    return T


def kda_L(C, d, seed, unit=True, beta_hi=1.0):
    """L_rc = beta_r sum_j k_rj k_cj exp(G_rj - G_cj) (c < r) of one chunk, as kda's"""
    rng = np.random.default_rng(seed)
    k = rng.standard_normal((C, d))
    if unit:
        k = gated_ref.l2norm(k, 0.0)
    beta = rng.uniform(0, beta_hi, C)
    G = np.cumsum(-rng.uniform(0, 0.2, (C, d)), axis=0)
    L = np.zeros((C, C))
    for r in range(C):
        for c in range(r):
            L[r, c] = beta[r] * np.sum(k[r] * k[c] * np.exp(G[r] - G[c]))
    return L


def exact_inverse(L):
    """(I + L)^-1 of the binary64 L exactly (rationals), rounded once to binary64"""
    n = L.shape[0]
    F = [[Fraction(float(L[r, c])) for c in range(n)] for r in range(n)]
    X = [[Fraction(int(r == c)) for c in range(n)] for r in range(n)]
    for r in range(1, n):
        for c in range(r):
            X[r][c] = -(F[r][c] + sum(F[r][m] * X[m][c] for m in range(c + 1, r)))
    return np.array([[float(x) for x in row] for row in X])


@pytest.mark.parametrize("C", (32, 40, 64))  # 40: a last block of 8 rows (a partial chunk's)
@pytest.mark.parametrize("unit", (True, False), ids=("unit", "raw"))
def test_tri_inverse(C, unit):
    L = kda_L(C, 16, C + unit, unit)
    I_L = np.eye(C) + np.tril(L, -1)
    T_ex = exact_inverse(L)
    for tri in ("forward", "blocked", "neumann"):
        T = ut("f64", tri, L)
        ref = gated_ref.tri_inverse(L, tri)
        bound = 2 * C * U64 * (np.abs(T_ex) @ np.abs(I_L) @ np.abs(T_ex)).max()
        e1, e2 = np.abs(T - ref).max(), np.abs(T - T_ex).max()
        assert e1 <= 2 * bound and e2 <= bound, \
            "C=%d %s keys tri=%-7s f64 against gated_ref %.1e (bound %.1e), exact %.1e " \
            "(bound %.1e)" % (C, "unit" if unit else "raw ", tri, e1, 2 * bound, e2, bound)
    if unit:
        for p, io in (("f16-kern", "f16"), ("bf16-kern", "bf16")):
            for tri in ("forward", "blocked", "neumann"):
                T = ut(p, tri, L)
                ref = gated_ref.tri_inverse16(L, tri, io)
                same = np.array_equal(T.view(np.uint64), ref.view(np.uint64))
                assert same, "C=%d unit keys tri=%-7s %s against gated_ref.tri_inverse16: not " \
                    "bit for bit (%d entries differ; error against the exact %.1e)" % (
                        C, tri, p, (T.view(np.uint64) != ref.view(np.uint64)).sum(),
                        np.abs(ref - T_ex).max())


def test_neumann_overflows_on_a_repeated_key():
    """the doubling's weakness: one unit key repeated (T's entries in {-1, 0, 1}), C = 32: the
    powers L^(2^j) reach 1.6e8 (docs/gated.md), binary16 overflows; forward substitution does
    not"""
    C = 32
    L = np.tril(np.ones((C, C)), -1)
    Tn, Tf = ut("f16-kern", "neumann", L), ut("f16-kern", "forward", L)
    ref = gated_ref.tri_inverse16(L, "neumann", "f16")
    assert np.array_equal(np.isfinite(Tn), np.isfinite(ref)) and not np.isfinite(Tn).all(), \
        "repeated key C=32 f16-kern: neumann non-finite in %d of %d entries, gated_ref's in %d" % (
            (~np.isfinite(Tn)).sum(), C * C, (~np.isfinite(ref)).sum())
    exact = np.linalg.solve(np.eye(C) + L, np.eye(C))
    assert np.isfinite(Tf).all() and np.array_equal(Tf, exact), \
        "repeated key C=32 f16-kern: forward not exact (%d entries differ)" % (Tf != exact).sum()


@pytest.mark.parametrize("model", ("gdn", "kda"))
def test_decoding_16bit_knobs(model):
    """decoding with 16-bit state, decays, beta"""
    T, d = 160, 16
    bound = np.sqrt(d * T) * U64
    x = gated_ref.example_inputs(model, H=2, T=T, d=d, dv=d, seed=5)
    seq = getattr(gated_ref, model + "_seq")
    o0, _ = seq(x["q"], x["k"], x["v"], beta=x["beta"], logdecay=x["logdecay"])
    for knobs in (dict(cache="bf16"), dict(cache="f16"), dict(decay_bf16=True),
                  dict(beta_bf16=True), dict(cache="bf16", decay_bf16=True, beta_bf16=True)):
        o_ref, S_ref = seq(x["q"], x["k"], x["v"], beta=x["beta"], logdecay=x["logdecay"],
                           **knobs)
        r = vlastab.run(x["q"], x["k"], x["v"], model=model, precision="f64", beta=x["beta"],
                        logdecay=x["logdecay"], reference=False, **knobs)
        eo, eS = gated_ref.relerr(r["o"], o_ref), gated_ref.relerr(r["S"], S_ref)
        moved = gated_ref.relerr(o_ref, o0)
        name = " ".join("%s=%s" % kv for kv in sorted(knobs.items()))
        assert eo <= bound and eS <= bound and moved > 1e3 * bound, \
            "%-3s seq f64 %-45s against gated_ref: o %.1e, S %.1e (bound %.1e); the knob " \
            "moves o by %.1e (at least %.1e)" % (model, name, eo, eS, bound, moved, 1e3 * bound)
