#!/usr/bin/python3
"""test_mamba3.py: Mamba-3's SISO recurrence in vlastab (lib/models/mamba3.h, through the ctypes
binding) against a binary64 numpy implementation written here from the Mamba-3 paper's equations
(the trapezoidal discretization and the data-dependent rotary embeddings), not from lib/:

    Theta_t = Theta_{t-1} + theta_t dt_t          (each key-channel pair's cumulative angle)
    k~_t = R(Theta_t) B_t,  q~_t = R(Theta_t) C_t (pair p = (2p, 2p + 1) turned by Theta_t,p)
    h_t = a_t h_{t-1} + (1 - lambda_t) dt_t a_t x_{t-1} k~_{t-1}^T + lambda_t dt_t x_t k~_t^T
    y_t = h_t q~_t,   a_t = exp(g_t), g_t = dt_t A_t

with vlastab's inputs q = C, k = B, v = x, beta = lambda, decay = dt, logdecay = g, u = theta.
Here Theta is the paper's running sum in binary64 and R takes its cos and sin; vlastab keeps
Theta as state-spaces/mamba's step reference keeps it, summed in the compute format and reduced
mod 2 pi at every step with 2 pi rounded to that format.

The bound (bound() below), in two parts. The state and read-out: each step's write of S (the
decay's product, two products and two sums per entry) adds at most 5 u to S's relative error, the
turn of q and k (2 products and a sum per part) 3 u, the read-out's dot product d u: n = d + 8 T
roundings, (d + 8 T) u = 1.4e-13 in binary64 (u = 2^-53) at d = 16, T = 160 in the worst case.
Rounding errors of independent signs grow like the square root of their number with high
probability (Higham and Mary, SIAM J. Sci. Comput. 41 (2019); tests/test_gated.py's bound), so
2 sqrt(d + 8 T) u. The angle: each step rounds it three times, theta dt by at most pi u (|theta|
<= pi, dt <= 1), the sum by 3 pi u, the reduction's difference by 2 pi u (the period's multiple
n fl(2 pi), n in {-1, 0, 1} here, is exact), 6 pi u in all, of independent signs over the steps;
and each turn taken (each unit of floor(Theta_t / 2 pi)) moves it by the period's own rounding
|fl(2 pi) - 2 pi| (1.7e-7 in binary32, 2.4e-16 in binary64). A phase error of delta moves q~ and
every key by delta relative, so 2 (sqrt(T) 6 pi u + W |fl(2 pi) - 2 pi|) more, W the most turns
a pair has taken by any t (W = 2 here).
Measured: see each test's printed line; the planted slips (Euler's rule for the trapezoid, the
rotation a token late, the previous token's term without its decay) move o by 0.5 or more.
Run under pytest (tests/test_python.c) with Debian's python3 (numpy)."""
import json
import os
import subprocess
import tempfile
import warnings

import numpy as np
import pytest

import gated_ref
import vlastab

U64 = 2.0 ** -53
U32 = 2.0 ** -24
T, d = 160, 16


def inputs(H=2, T=T, d=d, dv=16, seed=5):
    """Inputs in the ranges of state-spaces/mamba's Mamba-3 SISO test, dt widened to [0.01, 1]
    (their [0.001, 0.1] turns and discretizes so little in 160 steps that a slip hides): q and k
    RMS-normalized, A = -U(1, 16), lambda = U(0, 1), theta = pi tanh(N(0, 1)) on d/4 pairs (their
    headdim_angles = d/4), the other pairs not turning."""
    rng = np.random.default_rng(seed)
    rms = lambda x: x / np.sqrt((x ** 2).mean(-1, keepdims=True))
    dt = np.exp(rng.uniform(np.log(0.01), np.log(1.0), (H, T)))
    th = np.zeros((H, T, d))
    th[:, :, : d // 4] = np.pi * np.tanh(rng.standard_normal((H, T, d // 4)))
    return {"q": rms(rng.standard_normal((H, T, d))), "k": rms(rng.standard_normal((H, T, d))),
            "v": rng.standard_normal((H, T, dv)), "logdecay": -rng.uniform(1, 16, (H, 1)) * dt,
            "beta": rng.uniform(0, 1, (H, T)), "decay": dt, "u": th}


def rot(x, ang):
    """x with pair p = (x_2p, x_2p+1) turned by ang_p (an odd length's last entry as it is)"""
    y = x.copy()
    c, s = np.cos(ang), np.sin(ang)
    n = len(ang)
    y[0:2 * n:2] = x[0:2 * n:2] * c - x[1:2 * n:2] * s
    y[1:2 * n:2] = x[0:2 * n:2] * s + x[1:2 * n:2] * c
    return y


def mamba3_seq(q, k, v, logdecay, beta, decay, u, slip=None):
    """the paper's recurrence, head by head; slip plants one mistake: "euler" (h_t = a h_{t-1} +
    dt x k~^T), "late" (token t turned by Theta_{t-1}), "undecayed" (the previous token's term
    without a_t)"""
    H, T, d = q.shape
    dv = v.shape[2]
    o = np.zeros((H, T, dv))
    S_end = np.zeros((H, dv, d))
    for h in range(H):
        S, kx, vx, Th = np.zeros((dv, d)), np.zeros(d), np.zeros(dv), np.zeros(d // 2)
        for t in range(T):
            lam, dt, a = beta[h, t], decay[h, t], np.exp(logdecay[h, t])
            Th_prev = Th
            Th = Th + u[h, t, : d // 2] * dt
            ang = Th_prev if slip == "late" else Th
            kr, qr = rot(k[h, t], ang), rot(q[h, t], ang)
            if slip == "euler":
                b, g = 0.0, dt
            else:
                b, g = (1 - lam) * dt * (1.0 if slip == "undecayed" else a), lam * dt
            S = a * S + b * np.outer(vx, kx) + g * np.outer(v[h, t], kr)
            o[h, t] = S @ qr
            kx, vx = kr, v[h, t]
        S_end[h] = S
    return o, S_end


def ours(x, precision="f64", **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning (an unread input, Inf) is a failure here
        r = vlastab.run(x["q"], x["k"], x["v"], model="mamba3", precision=precision,
                        u=x["u"], beta=x["beta"], decay=x["decay"], logdecay=x["logdecay"],
                        reference=False, **kw)
    return r["o"], r["S"]


TWO_PI_ERR = {U64: 2.4492935982947064e-16,  # 2 pi - fl64(2 pi)
              U32: abs(float(np.float32(2 * np.pi)) - 2 * np.pi) + 2.5e-16}


def bound(x, u):
    """2 sqrt(d + 8 T) u + 2 (sqrt(T) 6 pi u + W |fl(2 pi) - 2 pi|) (the module's docstring), W
    from the binary64 angles of the inputs x"""
    H, T_, d_ = x["q"].shape
    Th = np.cumsum(x["u"][:, :, : d_ // 2] * x["decay"][:, :, None], axis=1)
    W = np.abs(np.floor(Th / (2 * np.pi))).max()
    return 2 * np.sqrt(d_ + 8 * T_) * u + 2 * (np.sqrt(T_) * 6 * np.pi * u + W * TWO_PI_ERR[u])


BOUND = bound(inputs(), U64)


def test_f64_against_the_papers_equations():
    x = inputs()
    o_ref, S_ref = mamba3_seq(**x)
    o, S = ours(x)
    eo, eS = gated_ref.relerr(o, o_ref), gated_ref.relerr(S, S_ref)
    print("mamba3 f64 against numpy: o %.2e, S %.2e (bound %.2e)" % (eo, eS, BOUND))
    assert eo <= BOUND and eS <= BOUND, "o %.1e, S %.1e (bound %.1e)" % (eo, eS, BOUND)


def f32_against_numpy(x, what):
    """the f32 policy on x rounded to binary32 against numpy on the same inputs, within bound()"""
    x = {key: val.astype(np.float32).astype(np.float64) for key, val in x.items()}
    o_ref, S_ref = mamba3_seq(**x)
    o, S = ours(x, "f32")
    eo, eS = gated_ref.relerr(o, o_ref), gated_ref.relerr(S, S_ref)
    b = bound(x, U32)
    print("mamba3 f32 " + what + "against numpy: o %.2e, S %.2e (bound %.2e)" % (eo, eS, b))
    assert eo <= b and eS <= b, "o %.1e, S %.1e (bound %.1e)" % (eo, eS, b)


def test_f32_against_the_papers_equations():
    """the f32 policy against numpy on the inputs rounded to binary32 (vlastab rounds every input
    to the io format): the same count in u32"""
    f32_against_numpy(inputs(), "")


def test_f32_at_large_angles():
    """The angle at 4096 tokens of dt = 1 and theta = pi |tanh(N(0, 1))| (every pair turning one
    way, Theta up to 7221 rad, 1149 turns): binary32 keeps it only reduced mod 2 pi at
    every step (an unreduced sum of that size has an ulp of 2^-11 or more, a phase error growing
    to about 1e-2 over the tokens); the bound (bound()) is dominated by the turns' part, W times
    the period's rounding, which q~ and k~ share (o hardly sees it, S does)."""
    rng = np.random.default_rng(11)
    x = inputs(T=4096)
    x["decay"] = np.ones_like(x["decay"])
    x["logdecay"] = -rng.uniform(1, 16, (x["q"].shape[0], 1)) * x["decay"]
    x["u"][:, :, : d // 4] = np.abs(x["u"][:, :, : d // 4])
    f32_against_numpy(x, "at large angles ")


@pytest.mark.parametrize("slip", ["euler", "late", "undecayed"])
def test_planted_slips_are_caught(slip):
    x = inputs()
    o_bad, _ = mamba3_seq(**x, slip=slip)
    o, _ = ours(x)
    e = gated_ref.relerr(o, o_bad)
    print("mamba3 against numpy with the slip %s: %.2e" % (slip, e))
    assert e > 1e3 * BOUND, "the slip %s: %.1e, not beyond %.1e" % (slip, e, 1e3 * BOUND)


@pytest.mark.parametrize("precision", ["f64", "f32", "f16", "bf16", "f16-f32", "bf16-f32",
                                       "f16-kern", "bf16-kern"])
def test_lambda_1_no_turn_is_mamba2_bit_for_bit(precision):
    """lambda = 1, dt = 1 and theta = 0: the previous token's term is 0 (beta = 0 exactly), gamma =
    1, every turn the identity, so mamba3's step is mamba2's (S = a S + v k^T, the same
    operations in the same order): the same bits in every policy"""
    x = inputs()
    x["beta"] = np.ones_like(x["beta"])
    x["decay"] = np.ones_like(x["decay"])
    x["u"] = np.zeros_like(x["u"])
    x["logdecay"] = np.maximum(x["logdecay"], -4.0)  # dt = 1: the decays of mamba2's range
    o3, S3 = ours(x, precision)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = vlastab.run(x["q"], x["k"], x["v"], model="mamba2", precision=precision,
                        logdecay=x["logdecay"], reference=False)
    assert np.array_equal(o3, r["o"]) and np.array_equal(S3, r["S"]), \
        "%s: max |o3 - o2| = %.3g" % (precision, np.abs(o3 - r["o"]).max())
    # and the numpy side reduces to mamba2's published recurrence (tests/gated_ref.py)
    o_ref, S_ref = mamba3_seq(**x)
    o2, S2 = gated_ref.mamba2_seq(q=x["q"], k=x["k"], v=x["v"], logdecay=x["logdecay"])
    assert gated_ref.relerr(o_ref, o2) <= BOUND and gated_ref.relerr(S_ref, S2) <= BOUND


def mamba3_chunk(q, k, v, logdecay, beta, decay, u, C, slip=None):
    """the chunked form of state-spaces/mamba's mamba3_siso_fwd_ref, head by head, chunk by chunk,
    each chunk entered with the state (S, k~, x) of the one before as its Initial_States: S_0 +
    dt_s (1 - lambda_s) x_{s-1} k~_{s-1}^T (s the chunk's first token), each key scaled by
    dt_t lambda_t + dt_{t+1} (1 - lambda_{t+1}) (the next token's term, 0 past the chunk), the
    causal scores q~_t . k~_c exp(G_t - G_c) for c < t, the diagonal's dt_t lambda_t (q_t . k_t),
    and the chunk's end state from the cumulative log-decays G. slip "noinit": the chunk's first
    token without the last token's term (S_0 as it is)."""
    H, T, d = q.shape
    dv = v.shape[2]
    o = np.zeros((H, T, dv))
    S_end = np.zeros((H, dv, d))
    for h in range(H):
        Th = np.cumsum(u[h, :, : d // 2] * decay[h][:, None], axis=0)
        kr = np.array([rot(k[h, t], Th[t]) for t in range(T)])
        qr = np.array([rot(q[h, t], Th[t]) for t in range(T)])
        lam, dt = beta[h], decay[h]
        S, kx, vx = np.zeros((dv, d)), np.zeros(d), np.zeros(dv)
        for s in range(0, T, C):
            e = min(s + C, T)
            if slip != "noinit":
                S = S + dt[s] * (1 - lam[s]) * np.outer(vx, kx)
            nxt = np.append(dt[s + 1:e] * (1 - lam[s + 1:e]), 0.0)
            scale = dt[s:e] * lam[s:e] + nxt
            G = np.cumsum(logdecay[h, s:e])
            D = np.tril(np.exp(G[:, None] - G[None, :]), -1)
            P = (qr[s:e] @ kr[s:e].T) * D * scale[None, :]
            diag = np.einsum("td,td->t", q[h, s:e], k[h, s:e]) * dt[s:e] * lam[s:e]
            o[h, s:e] = (np.exp(G)[:, None] * (qr[s:e] @ S.T) + P @ v[h, s:e]
                         + diag[:, None] * v[h, s:e])
            w = np.exp(G[-1] - G) * scale
            S = np.exp(G[-1]) * S + (v[h, s:e] * w[:, None]).T @ kr[s:e]
            kx, vx = kr[e - 1], v[h, e - 1]
        S_end[h] = S
    return o, S_end


@pytest.mark.parametrize("C", [4, 16, 64])
def test_chunk_is_the_step_in_binary64(C):
    """the kernel's chunk and the step reference are the same function: numpy's two forms agree to
    rounding in binary64 (the next token's term that the chunk folds into a key's scale is the
    step's beta_{t+1} term, its a_{t+1} from the segment sum)"""
    x = inputs()
    o_s, S_s = mamba3_seq(**x)
    o_c, S_c = mamba3_chunk(**x, C=C)
    eo, eS = gated_ref.relerr(o_c, o_s), gated_ref.relerr(S_c, S_s)
    print("mamba3 numpy chunk:%d against numpy seq: o %.2e, S %.2e" % (C, eo, eS))
    assert eo <= BOUND and eS <= BOUND, "o %.1e, S %.1e (bound %.1e)" % (eo, eS, BOUND)


@pytest.mark.parametrize("C", [4, 16, 64])
@pytest.mark.parametrize("precision", ["f64", "f32"])
def test_chunk_against_the_references_chunk(C, precision):
    """vlastab's chunk:C against numpy's chunk (T = 160: chunk:64's last chunk has 32 tokens) on
    the inputs rounded to the policy's format; the roundings per read-out (2 dot products of d,
    the masked sum of C terms, the scale's and the exponentials' few) and per chunk of the state
    (a sum of C terms, the decay) number at most 2 d + C + 8 + (T / C) (C + 5) <= d + 8 T here,
    so the seq form's bound holds"""
    x = inputs()
    u_ = U64
    if precision == "f32":
        x = {key: val.astype(np.float32).astype(np.float64) for key, val in x.items()}
        u_ = U32
    o_ref, S_ref = mamba3_chunk(**x, C=C)
    o, S = ours(x, precision, form="chunk:%d" % C)
    eo, eS = gated_ref.relerr(o, o_ref), gated_ref.relerr(S, S_ref)
    b = bound(x, u_)
    print("mamba3 %s chunk:%d against numpy's chunk: o %.2e, S %.2e (bound %.2e)"
          % (precision, C, eo, eS, b))
    assert eo <= b and eS <= b, "o %.1e, S %.1e (bound %.1e)" % (eo, eS, b)


def test_chunk_slip_is_caught():
    x = inputs()
    o_bad, _ = mamba3_chunk(**x, C=16, slip="noinit")
    o, _ = ours(x, form="chunk:16")
    e = gated_ref.relerr(o, o_bad)
    print("mamba3 chunk:16 against numpy's chunk with the slip noinit: %.2e" % e)
    assert e > 1e3 * BOUND, "the slip noinit: %.1e, not beyond %.1e" % (e, 1e3 * BOUND)


def test_scan_is_refused():
    with pytest.raises(ValueError, match="mamba3"):
        ours(inputs(T=8), form="scan")


# ---- MIMO (rank R > 1) ----
#
# state-spaces/mamba's Mamba-3 MIMO (mamba3_MIMO_step_ref in tests/ops/tilelang/test_mamba3_mimo.py,
# the tilelang kernel mamba_mimo_fwd): per token R queries and keys C_t,r, B_t,r (n each) and R
# values x_t,r = x_t * Psi_r (p each: the head's x up-projected channel by channel), one dt,
# lambda, A dt and one set of angles per head, turning every rank alike:
#
#     h_t = a_t h_{t-1} + beta_t sum_r x_{t-1,r} k~_{t-1,r}^T + gamma_t sum_r x_t,r k~_t,r^T
#     y_t,r = h_t q~_t,r       (the kernel's raw_y; reduceO sums Phi_r * y_t,r outside)
#
# vlastab takes rank=R, q and k (heads, T, R n) and v (heads, T, R p): the ranks' vectors side by
# side; its o is (heads, T, R p), its S the top-left p x n block of (dv, d), zeros elsewhere.
#
# The bound (bound_mimo): per step and entry of S the decay's product, 2 R products beta v_r,
# 2 R products with k~ and 2 R sums (6 R + 1), the weights beta and gamma (3), the turn of k
# (3); the read-out's dot product of n and the turn of q (n + 3): N = n + 3 + (6 R + 7) T
# roundings, 2 sqrt(N) u with independent signs (the SISO docstring's argument), and the angle's
# part unchanged (one angle per pair for every rank).
R_N, R_P = 16, 16


def mimo_inputs(R, H=2, T=T, n=R_N, p=R_P, seed=7):
    """SISO's ranges (inputs()) with R ranks: q and k RMS-normalized per rank, x ~ N(0, 1) times
    Psi ~ N(0, 1) / R per rank (the kernel's test draws Psi so), theta on n/4 pairs"""
    rng = np.random.default_rng(seed)
    rms = lambda x: x / np.sqrt((x ** 2).mean(-1, keepdims=True))
    dt = np.exp(rng.uniform(np.log(0.01), np.log(1.0), (H, T)))
    th = np.zeros((H, T, R * n))
    th[:, :, : n // 4] = np.pi * np.tanh(rng.standard_normal((H, T, n // 4)))
    x = rng.standard_normal((H, T, p))
    psi = rng.standard_normal((H, R, p)) / R
    return {"q": rms(rng.standard_normal((H, T, R, n))), "k": rms(rng.standard_normal((H, T, R, n))),
            "v": x[:, :, None, :] * psi[:, None, :, :], "logdecay": -rng.uniform(1, 16, (H, 1)) * dt,
            "beta": rng.uniform(0, 1, (H, T)), "decay": dt, "u": th}


def mamba3_mimo_seq(q, k, v, logdecay, beta, decay, u, slip=None):
    """the MIMO recurrence above, head by head (q, k (H, T, R, n), v (H, T, R, p); o (H, T, R, p),
    S (H, p, n)); slip plants one mistake: "crossed" (rank r's value written with rank r + 1's
    key), "lastrank" (the previous token's term from its last rank only, a carried k~ and x of one
    rank)"""
    H, T, R, n = q.shape
    p = v.shape[3]
    o = np.zeros((H, T, R, p))
    S_end = np.zeros((H, p, n))
    for h in range(H):
        S, kx, vx, Th = np.zeros((p, n)), np.zeros((R, n)), np.zeros((R, p)), np.zeros(n // 2)
        for t in range(T):
            lam, dt, a = beta[h, t], decay[h, t], np.exp(logdecay[h, t])
            Th = Th + u[h, t, : n // 2] * dt
            kr = np.array([rot(k[h, t, r], Th) for r in range(R)])
            qr = np.array([rot(q[h, t, r], Th) for r in range(R)])
            kw = np.roll(kr, -1, axis=0) if slip == "crossed" else kr
            prev = np.outer(vx[-1], kx[-1]) if slip == "lastrank" else np.einsum("rp,rn->pn", vx, kx)
            S = a * S + (1 - lam) * dt * a * prev + lam * dt * np.einsum("rp,rn->pn", v[h, t], kw)
            o[h, t] = qr @ S.T
            kx, vx = kr, v[h, t]
        S_end[h] = S
    return o, S_end


def side_by_side(x):
    """q, k, v with the ranks side by side, (H, T, R n) and (H, T, R p), as vlastab takes them"""
    return {key: (val.reshape(val.shape[0], val.shape[1], -1) if key in ("q", "k", "v") else val)
            for key, val in x.items()}


def ours_mimo(x, precision="f64", **kw):
    """vlastab with rank R: o back to (H, T, R, p), S's p x n block and the rest of S"""
    H, T_, R, n = x["q"].shape
    p = x["v"].shape[3]
    o, S = ours(side_by_side(x), precision, **{"rank": R, **kw})
    rest = S.copy()
    rest[:, :p, :n] = 0
    return o.reshape(H, T_, R, p), S[:, :p, :n], rest


def bound_mimo(x, u):
    """2 sqrt(n + 3 + (6 R + 7) T) u + the angle's part of bound() (the comment above)"""
    H, T_, R, n = x["q"].shape
    Th = np.cumsum(x["u"][:, :, : n // 2] * x["decay"][:, :, None], axis=1)
    W = np.abs(np.floor(Th / (2 * np.pi))).max()
    return (2 * np.sqrt(n + 3 + (6 * R + 7) * T_) * u
            + 2 * (np.sqrt(T_) * 6 * np.pi * u + W * TWO_PI_ERR[u]))


@pytest.mark.parametrize("R", [2, 4])
@pytest.mark.parametrize("precision", ["f64", "f32"])
def test_mimo_against_the_equations(R, precision):
    """rank R against numpy's MIMO recurrence (f32 on the inputs rounded to binary32), S outside
    its p x n block exactly 0"""
    x, u_ = mimo_inputs(R), U64
    if precision == "f32":
        x, u_ = {key: val.astype(np.float32).astype(np.float64) for key, val in x.items()}, U32
    o_ref, S_ref = mamba3_mimo_seq(**x)
    o, S, rest = ours_mimo(x, precision)
    eo, eS, b = gated_ref.relerr(o, o_ref), gated_ref.relerr(S, S_ref), bound_mimo(x, u_)
    print("mamba3 rank %d %s against numpy: o %.2e, S %.2e (bound %.2e)" % (R, precision, eo, eS, b))
    assert eo <= b and eS <= b and not rest.any(), "o %.1e, S %.1e (bound %.1e)" % (eo, eS, b)


@pytest.mark.parametrize("slip", ["crossed", "lastrank"])
def test_mimo_planted_slips_are_caught(slip):
    x = mimo_inputs(4)
    o_bad, _ = mamba3_mimo_seq(**x, slip=slip)
    o, _, _ = ours_mimo(x)
    e, b = gated_ref.relerr(o, o_bad), bound_mimo(x, U64)
    print("mamba3 rank 4 against numpy with the slip %s: %.2e" % (slip, e))
    assert e > 1e3 * b, "the slip %s: %.1e, not beyond %.1e" % (slip, e, 1e3 * b)


def test_mimo_rank_1_is_siso():
    """numpy's MIMO at R = 1 is the SISO recurrence; vlastab's rank=1 is its default, bit for bit"""
    x = mimo_inputs(1)
    o1, S1 = mamba3_mimo_seq(**x)
    xs = {key: (val[:, :, 0] if key in ("q", "k", "v") else val) for key, val in x.items()}
    o0, S0 = mamba3_seq(**xs)
    assert gated_ref.relerr(o1[:, :, 0], o0) <= BOUND and gated_ref.relerr(S1, S0) <= BOUND
    o, S = ours(xs, "f32")
    o_r, S_r = ours(xs, "f32", rank=1)
    assert np.array_equal(o, o_r) and np.array_equal(S, S_r)


@pytest.mark.parametrize("what, kw, match", [
    ("the chunk form", {"form": "chunk:16"}, "MIMO"),
    ("the scan form", {"form": "scan"}, "mamba3"),
    ("qknorm", {"qknorm": True}, "qknorm"),
    ("a rank that does not divide d", {"rank": 3}, "divides"),
])
def test_mimo_refusals(what, kw, match):
    """what rank > 1 does not have is refused with a message (the programs: exit 2)"""
    with pytest.raises(ValueError, match=match):
        ours_mimo(mimo_inputs(2, T=8), **kw)


def test_mimo_backward_is_refused():
    x = side_by_side(mimo_inputs(2, T=8))
    with pytest.raises(ValueError, match="MIMO"):
        vlastab.grad(x["q"], x["k"], x["v"], np.ones_like(x["v"]), model="mamba3", u=x["u"],
                     beta=x["beta"], logdecay=x["logdecay"], rank=2)


def test_rank_is_refused_for_other_models():
    x = inputs(T=8)
    with pytest.raises(ValueError, match="rank"):
        vlastab.run(x["q"], x["k"], x["v"], model="mamba2", logdecay=x["logdecay"], rank=2,
                    reference=False)


def write_mimo_trace(path, x):
    """x as a trace (docs/trace.md): the ranks side by side, model.txt's set rank=R"""
    os.makedirs(path)
    for name, val in side_by_side(x).items():
        np.save(os.path.join(path, name + ".npy"), val)
    with open(os.path.join(path, "model.txt"), "w") as f:
        f.write("model mamba3\nset rank=%d\n" % x["q"].shape[2])


def test_mimo_backends_same_bits(tmp_path, bin_dir):
    """rank 4 in every policy: the lanes and emu (the CUDA kernels' text on host threads) give
    the cpu's rows of vla-check's table (their errors printed to 17 digits)"""
    trace = os.path.join(str(tmp_path), "trace")
    write_mimo_trace(trace, mimo_inputs(4, T=64))
    rows = {}
    for b in ("cpu", "lanes", "emu"):
        out = os.path.join(str(tmp_path), b + ".dat")
        r = subprocess.run([os.path.join(bin_dir, "vla-check"), "trace:" + trace, "--forms", "seq",
                            "--backend", b, "--report", "none", "--out", out],
                           capture_output=True, text=True)
        assert r.returncode == 0, "%s: exit %d: %s" % (b, r.returncode, r.stderr)
        with open(out) as f:
            rows[b] = [line for line in f if not line.startswith("#")]
    assert len(rows["cpu"]) == 8 and rows["lanes"] == rows["cpu"] and rows["emu"] == rows["cpu"]


def test_mimo_trace_judged_against_the_exact_reference():
    """a rank-4 trace (docs/trace.md) with numpy's read-outs and final S as a kernel's binary64
    outputs, judged by vla-check --ref exact (the MPFR emulation of recur.h's step at rank 4):
    within bound_mimo in o and S"""
    x = mimo_inputs(4, T=64)
    H, T_, R, n = x["q"].shape
    p = x["v"].shape[3]
    o, S = mamba3_mimo_seq(**x)
    with tempfile.TemporaryDirectory() as tmp:
        trace, out, rep = (os.path.join(tmp, w) for w in ("trace", "out", "judge"))
        write_mimo_trace(trace, x)
        os.makedirs(out)
        S_full = np.zeros((H, R * p, R * n))
        S_full[:, :p, :n] = S
        np.save(os.path.join(out, "o.npy"), o.reshape(H, T_, -1))
        np.save(os.path.join(out, "S.npy"), S_full)
        exe = os.path.join(os.environ.get("VLA_BIN_DIR", "bin"), "vla-check")
        r = subprocess.run([exe, "--stream", "trace:" + trace, "--outputs", out, "--precision",
                            "f64", "--ref", "exact", "--report", rep, "--out",
                            os.path.join(tmp, "t.dat")], capture_output=True, text=True)
        assert os.path.exists(rep + ".json"), "exit %d: %s" % (r.returncode, r.stderr)
        with open(rep + ".json") as f:
            j = json.load(f)
    b = bound_mimo(x, U64)
    eo = max(h["rel_rms"] for h in j["heads"])
    eS = max(st["rel_fro"] for st in j["state"])
    print("mamba3 rank 4 numpy against vla-check's exact reference: o %.2e, S %.2e (bound %.2e)"
          % (eo, eS, b))
    assert r.returncode == 0 and j["verdict"] == "ok" and len(j["heads"]) == H, r.stderr
    assert eo <= b and eS <= b, "o %.1e, S %.1e (bound %.1e)" % (eo, eS, b)


# The backward (lib/models/mamba3.h's grad_mamba3, seq, and gradchunk_mamba3, chunk:C: vla_grad
# through vlastab.grad) against torch.autograd float64 of the paper's recurrence above (mamba3_seq
# written again in torch, Theta its binary64 running sum): the gradients of L = sum_t c_t . o_t
# with respect to q, k, v, the log-decays g, lambda (beta) and theta (u); dt is an input without
# a gradient of its own. The bound: the forward's (bound() above) twice, once for the forward's
# roundings that the backward reads (the states, the turned vectors: the angle's error moves them
# and so every gradient by as much relative) and once for the backward's own, the same operations
# transposed, as many and as ordered; plus in chunk:C the chunk's exponentials of the cumulative
# log-decays gamma, e^(gamma_r - gamma_c) and e^(gamma_C), each within |gamma| u relative: 4 max
# |gamma| u over the chunks' sums of g, as tests/test_loglinear.py's chunk bound.
def torch_mamba3(t):
    """o (heads, T, dv) of mamba3_seq's recurrence in torch (t: tensors of inputs())"""
    import torch
    q, k, v, g, lam, dt, th = t["q"], t["k"], t["v"], t["logdecay"], t["beta"], t["decay"], t["u"]
    H, TT, d_ = q.shape
    n = d_ // 2
    Th = torch.cumsum(th[:, :, :n] * dt[:, :, None], dim=1)
    c, s = torch.cos(Th), torch.sin(Th)

    def turn(x):
        e, o_ = x[:, :, 0:2 * n:2], x[:, :, 1:2 * n:2]
        y = torch.stack((e * c - o_ * s, e * s + o_ * c), dim=3).reshape(H, TT, 2 * n)
        return torch.cat((y, x[:, :, 2 * n:]), dim=2)
    kr, qr = turn(k), turn(q)
    a = torch.exp(g)
    S = torch.zeros(H, v.shape[2], d_, dtype=q.dtype)
    out = []
    for i in range(TT):
        S = a[:, i, None, None] * S + (lam[:, i] * dt[:, i])[:, None, None] * (
            v[:, i, :, None] * kr[:, i, None, :])
        if i > 0:
            S = S + ((1 - lam[:, i]) * dt[:, i] * a[:, i])[:, None, None] * (
                v[:, i - 1, :, None] * kr[:, i - 1, None, :])
        out.append(torch.einsum("hvd,hd->hv", S, qr[:, i]))
    return torch.stack(out, dim=1)


GRADS = (("q", "dq"), ("k", "dk"), ("v", "dv"), ("logdecay", "dg"), ("beta", "dbeta"), ("u", "du"))


def grad_errs(x, c, form, precision="f64"):
    """vlastab's gradients in form and precision (x and c rounded to it) against torch.autograd
    float64 of torch_mamba3 on the same inputs, relative, per input"""
    import torch
    if precision != "f64":
        x = {n: vlastab.round_to(a, precision) for n, a in x.items()}
        c = vlastab.round_to(c, precision)
    t = {n: torch.tensor(a, dtype=torch.float64, requires_grad=n != "decay") for n, a in x.items()}
    (torch_mamba3(t) * torch.tensor(c)).sum().backward()
    ours = vlastab.grad(x["q"], x["k"], x["v"], c, model="mamba3", precision=precision,
                        beta=x["beta"], logdecay=x["logdecay"], u=x["u"], decay=x["decay"],
                        form=form)
    return {n: gated_ref.relerr(ours[g], t[n].grad.numpy()) for n, g in GRADS}


def grad_bound(x, C, u):
    """2 bound(x, u) + 4 max |gamma| u, gamma the sums of g over each chunk of C (0 for seq)"""
    g = x["logdecay"]
    gam = max(np.abs(g[:, i:i + C].sum(1)).max() for i in range(0, g.shape[1], C)) if C else 0
    return 2 * bound(x, u) + 4 * gam * u


def grad_inputs(TT=100, seed=41):
    """inputs() at T = 100 (chunk:16's last chunk of 4 tokens, chunk:64's of 36) and c N(0, 1)"""
    x = inputs(T=TT, seed=seed)
    return x, np.random.default_rng(seed + 1).standard_normal(x["v"].shape)


@pytest.mark.parametrize("form", ["seq", "chunk:4", "chunk:16", "chunk:64"])
def test_backward_against_autograd(form):
    pytest.importorskip("torch")
    x, c = grad_inputs()
    errs = grad_errs(x, c, form)
    b = grad_bound(x, int(form[6:]) if form != "seq" else 0, U64)
    msg = ", ".join("d%s %.2e" % (n, e) for n, e in errs.items())
    print("mamba3 %s f64 against torch.autograd: %s (bound %.2e)" % (form, msg, b))
    assert max(errs.values()) <= b, "%s: %s (bound %.1e)" % (form, msg, b)


@pytest.mark.parametrize("form", ["chunk:16", "chunk:64"])
def test_chunk_backward_f32_against_autograd(form):
    """f32 against autograd float64 on the inputs and c rounded to binary32, bound as above in u32"""
    pytest.importorskip("torch")
    x, c = grad_inputs()
    errs = grad_errs(x, c, form, "f32")
    xr = {n: vlastab.round_to(a, "f32") for n, a in x.items()}
    b = grad_bound(xr, int(form[6:]), U32)
    msg = ", ".join("d%s %.2e" % (n, e) for n, e in errs.items())
    print("mamba3 %s f32 against torch.autograd: %s (bound %.2e)" % (form, msg, b))
    assert max(errs.values()) <= b, "%s: %s (bound %.1e)" % (form, msg, b)


def test_torch_form_is_the_numpy_one():
    """torch_mamba3, the autograd tests' forward, is mamba3_seq's recurrence: the same o to
    rounding (the bound of the seq form)"""
    torch = pytest.importorskip("torch")
    x, _ = grad_inputs()
    o = torch_mamba3({n: torch.tensor(a, dtype=torch.float64) for n, a in x.items()}).numpy()
    e = gated_ref.relerr(o, mamba3_seq(**x)[0])
    print("mamba3 torch form against numpy's: o %.2e (bound %.2e)" % (e, BOUND))
    assert e <= BOUND, "o %.1e (bound %.1e)" % (e, BOUND)
