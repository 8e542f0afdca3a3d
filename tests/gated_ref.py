#!/usr/bin/python3
"""gated_ref: binary64 ground truth for the gated family (gdn, kda, gla, mamba2, rwkv7).

Written from the published recurrences (docs/gated.md cites the papers' equations and the
kernels' files), not from lib/recur.h: an independent check of vlastab's C text. Plain numpy,
float64 everywhere. For every model two functions:

    <model>.seq(q, k, v, ..., **settings)        token by token
    <model>.chunk(q, k, v, ..., C=64, **settings)  the chunked algorithm of the kernel, in float64

both returning (o, S): o of shape (heads, T, dv), S the final state of shape (heads, dv, d).

Orientation. vlastab keeps S as dv x d (values by keys) and reads o_t = scale * S_t q_t.
flash-linear-attention (fla) keeps h = S^T of shape (K, V) = (d, dv) and reads
o_t = h_t^T (scale * q_t). Mamba-2's own state (headdim P, d_state N) is already dv x d.
Everything here is in vlastab's orientation; the torch cross-check at the bottom runs fla's.

Inputs (the trace files of docs/trace.md; numpy arrays, any float dtype, converted to float64):
    q, k       (heads, T, d)
    v          (heads, T, dv)
    beta       (heads, T)                    gdn, kda (default 1)
    logdecay   (heads, T)      scalar g_t    gdn, mamba2 (g_t = dt_t A for mamba2)
               (heads, T, d)   per key chan  kda, gla, rwkv7 (rwkv7: log w_t)
    a, b       (heads, T, d)                 rwkv7's low-rank pair (a = -kk, b = kk * iclr)
    S0         (heads, dv, d)  optional initial state (default 0)
Every log-decay must be <= 0 (a = exp(g) in (0, 1]); nothing here checks it.

The recurrences (vlastab orientation; Dg = Diag(exp(g_t)), a_t = exp(g_t) for scalar g):
    gdn     S_t = a_t S_{t-1} (I - beta_t k_t k_t^T) + beta_t v_t k_t^T
    kda     S_t = S_{t-1} Dg (I - beta_t k_t k_t^T) + beta_t v_t k_t^T
    gla     S_t = S_{t-1} Dg + v_t k_t^T
    mamba2  S_t = a_t S_{t-1} + v_t k_t^T          (q = C, k = B dt, v = x; no D skip)
    rwkv7   S_t = S_{t-1} (Dg + a_t b_t^T) + v_t k_t^T
    o_t = scale * S_t q_t   (q, k after the optional L2 normalization)

Defaults (fla's published layers):
    gdn, kda  qk_l2norm=True (x / sqrt(sum x^2 + eps), eps = 1e-6, fla's l2norm_fwd and
              use_qk_l2norm_in_kernel), scale = d^-1/2
    gla       no normalization, scale = d^-1/2
    mamba2    no normalization, scale = 1
    rwkv7     no normalization, scale = 1 (fla's chunk_rwkv7 passes scale=1.0)

Chunk settings (defaults mirror fla at commit bc3b101 / mamba at e9594ce, docs/gated.md):
    C          chunk size (any C >= 1; the last chunk may be partial)
    base       'e' (default): gamma = cumsum(g), exp(gamma_i - gamma_j);
               '2': gamma = cumsum(g) * RCP_LN2 and exp2, as fla's kernels (RCP_LN2 is the
               binary32 1/ln 2 = 1.44269502162933..., so this is not exactly base e: the
               exponent is off by 1.3e-8 relative; seq always uses exp)
    tri        the unit lower triangular inverse of the UT/WY transform (gdn, kda, rwkv7):
               'forward' (default, fla's solve_tril rows), 'blocked' (16 x 16 diagonal blocks by
               forward substitution, merged by blocks as fla's fused kernels), 'neumann'
               (doubling product (I - L)(I + L^2)(I + L^4)...), 'solve' (numpy.linalg.solve)
    sub        secondary chunk (kda, gla; default 16 as fla's BC): off-diagonal sub-blocks
               take the factor exp(gamma_i - gamma_n) exp(gamma_n - gamma_j) with n the first
               row of the row sub-chunk (both <= 1), diagonal sub-blocks the direct difference;
               sub=None: direct differences everywhere
    anchor     kda, rwkv7 diagonal stage: 'direct' (default; fla's token-parallel / sub_intra
               path) or 'mid' (fla's safe_gate path: one anchor per sub-chunk (kda, row
               min(8, len-1)) or per chunk (rwkv7, row len // 2); exponents may be > 0)
    segsum     mamba2: 'diff' (default; differences of the chunk's cumulative sums, clamped
               at 0 as mamba's Triton kernels since PR 713) or 'direct' (ssd_minimal's
               segment sums, each a sum of its own terms)

Run `python3 tests/gated_ref.py` (re-executes under /usr/bin/python3, the Makefile's PYTHON, when
the first python3 has no numpy): chunk == seq for every model and setting, gdn at g = 0 == the
plain delta rule, the triangular inverses against numpy's solve, and a torch float64 cross-check
of every model in fla's orientation when torch is importable.
"""

import os
import sys

try:
    import numpy as np
except ImportError:  # the first python3 on PATH may lack numpy; the project's is /usr/bin/python3
    if __name__ == "__main__" and os.path.exists("/usr/bin/python3") and \
            os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    raise

from types import SimpleNamespace

RCP_LN2 = float(np.float32(1.0 / np.log(2.0)))  # fla's RCP_LN2 = 1.4426950216 (binary32 0x3FB8AA3B)
L2_EPS = 1e-6                                   # fla's l2norm_fwd eps (inside the square root)
SUB = 16                                        # fla's secondary chunk BC


# ---------------------------------------------------------------------------------------------
# helpers

def _f64(x):
    return None if x is None else np.asarray(x, dtype=np.float64)


def l2norm(x, eps=L2_EPS):
    """x / sqrt(sum(x^2) + eps) over the last axis (fla's l2norm_fwd; eps = 0: plain unit)."""
    return x / np.sqrt((x * x).sum(-1, keepdims=True) + eps)


def _setup(q, k, v, scale, qk_l2norm, eps, S0):
    q, k, v = _f64(q), _f64(k), _f64(v)
    H, T, d = q.shape
    dv = v.shape[-1]
    if qk_l2norm:
        q, k = l2norm(q, eps), l2norm(k, eps)
    S = np.zeros((H, dv, d)) if S0 is None else _f64(S0).copy()
    return q, k, v, H, T, d, dv, S


def _chunks(T, C):
    if C < 1:
        raise ValueError("C must be >= 1")
    for s in range(0, T, C):
        yield s, min(s + C, T)


def _gamma(g, base):
    """Chunk-local inclusive cumulative sum of log-gates along axis 0, and the exponential."""
    gam = np.cumsum(g, axis=0)
    if base == "e":
        return gam, np.exp
    if base == "2":
        return gam * RCP_LN2, np.exp2
    raise ValueError("base must be 'e' or '2'")


def tri_inverse(L, method="forward", block=SUB):
    """(I + L)^-1 for a strictly lower triangular L (n x n), by the kernels' methods."""
    n = L.shape[0]
    L = np.tril(L, -1)
    if method == "forward":  # row i of X = (I + L)^-1: X[i, :i] = -L[i, :i] X[:i, :i]
        X = np.eye(n)
        for i in range(1, n):
            X[i, :i] = -L[i, :i] @ X[:i, :i]
        return X
    if method == "blocked":  # diagonal blocks by forward substitution, then block rows
        X = np.zeros((n, n))
        bs = [(s, min(s + block, n)) for s in range(0, n, block)]
        for (s, e) in bs:
            X[s:e, s:e] = tri_inverse(L[s:e, s:e], "forward")
        for I, (si, ei) in enumerate(bs):
            for J in range(I - 1, -1, -1):
                sj, ej = bs[J]
                acc = np.zeros((ei - si, ej - sj))
                for K in range(J, I):
                    sk, ek = bs[K]
                    acc += L[si:ei, sk:ek] @ X[sk:ek, sj:ej]
                X[si:ei, sj:ej] = -X[si:ei, si:ei] @ acc
        return X
    if method == "neumann":  # sum_{k < 2^m} (-L)^k as prod_j (I + (-L)^(2^j)); -L is nilpotent
        N = -L
        X = np.eye(n) + N
        P = N
        m = 1
        while (1 << m) < n:
            P = P @ P
            X = X @ (np.eye(n) + P)
            m += 1
        return X
    if method == "solve":
        return np.linalg.solve(np.eye(n) + L, np.eye(n))
    raise ValueError("tri must be forward, blocked, neumann or solve")


def rnd16(x, fmt):
    """x (float64) rounded to nearest even into binary16 ('f16': numpy's float16 conversion) or
    bfloat16 ('bf16': 8 significant bits kept by frexp and numpy's half-even round, binary32's
    exponent range; the values here are far from its under- and overflow), returned as float64."""
    x = np.asarray(x, dtype=np.float64)
    if fmt == "f32":
        return x.astype(np.float32).astype(np.float64)
    if fmt == "f16":
        with np.errstate(over="ignore"):  # (an overflow to Inf is the rounding's result)
            return x.astype(np.float16).astype(np.float64)
    if fmt == "bf16":
        m, e = np.frexp(x)                      # x = m 2^e, |m| in [0.5, 1)
        return np.ldexp(np.round(np.ldexp(m, 8)), e - 8)
    raise ValueError("fmt must be f16 or bf16")


def tri_inverse16(L, method, io="f16", block=SUB):
    """(I + L)^-1 as the 16-bit kernels compute it: L's entries rounded to io, every product's
    operands in io (or binary32), sums in binary32 with the terms in ascending order, the result
    rounded to io. 'neumann' (FlashKDA, megagdn-pto): X = I - L, P = L; while 2p < n: P <- P P and
    X <- X + X P, each rounded to io. 'blocked' (fla's solve_tril): 16 x 16 diagonal blocks by
    forward substitution in binary32, the block rows below merged, X_IJ = -X_II (sum_K L_IK X_KJ),
    binary32 throughout; 'forward': one block. Returns float64 (values of io)."""
    f32 = np.float32
    n = L.shape[0]
    Lr = rnd16(np.tril(L, -1), io)
    if method == "neumann":
        P = Lr.astype(f32)
        X = (np.eye(n) - Lr).astype(f32)
        r, c = np.indices((n, n))
        p = 1
        with np.errstate(over="ignore", invalid="ignore"):  # (the doubling's overflow is shown)
            while 2 * p < n:
                acc = np.zeros((n, n), f32)
                for m in range(n):              # (P P)_rc: c < m < r ascending, in binary32
                    acc = np.where((c < m) & (m < r), acc + P[:, m:m + 1] * P[m:m + 1, :], acc)
                P = rnd16(acc, io).astype(f32)
                acc = np.zeros((n, n), f32)
                for m in range(n):              # (X P)_rc: c < m <= r, X_rr = 1 the last term
                    acc = np.where((c < m) & (m <= r), acc + X[:, m:m + 1] * P[m:m + 1, :], acc)
                X = rnd16(np.where(c < r, X + acc, 0), io).astype(f32) + np.eye(n, dtype=f32)
                p *= 2
        return X.astype(np.float64)
    nb = n if method == "forward" else min(block, n)
    L32 = Lr.astype(f32)
    T = np.eye(n, dtype=f32)
    for r in range(1, n):                       # diagonal blocks: T_rc = -(L_rc + sum L_rm T_mc)
        r0 = r - r % nb
        acc = L32[r, r0:r].copy()
        for m in range(r0 + 1, r):
            acc[:m - r0] = acc[:m - r0] + L32[r, m] * T[m, r0:m]
        T[r, r0:r] = -acc
    for i0 in range(nb, n, nb):                 # block rows: Y = L_I,<i0 T_<i0, then -T_II Y
        rows = slice(i0, i0 + nb)
        Y = L32[rows, :i0].copy()
        for m in range(i0):
            Y[:, :m] = Y[:, :m] + L32[rows, m:m + 1] * T[m:m + 1, :m]
        for r in range(i0, min(i0 + nb, n)):
            acc = Y[r - i0].copy()
            if r > i0:
                acc = T[r, i0] * Y[0]
                for m in range(i0 + 1, r):
                    acc = acc + T[r, m] * Y[m - i0]
                acc = acc + Y[r - i0]
            T[r, :i0] = -acc
    return rnd16(T.astype(np.float64), io)


def _pair_decay(gam, E, incl, sub=None, anchor="direct", Xrow=None, Xcol=None):
    """sum_c Xrow[i,c] Xcol[j,c] E(gam[i,c] - gam[j,c]) for j < i (incl: j <= i), per-channel gam.

    sub: secondary chunk size (off-diagonal sub-blocks by the first-row anchor); anchor: the
    diagonal sub-blocks' way ('direct' differences, or 'mid': one anchor row per sub-block)."""
    n = gam.shape[0]
    M = np.tril(np.ones((n, n), dtype=bool), 0 if incl else -1)
    out = np.zeros((n, n))
    blocks = [(s, min(s + sub, n)) for s in range(0, n, sub)] if sub else [(0, n)]
    for I, (si, ei) in enumerate(blocks):
        for J, (sj, ej) in enumerate(blocks[:I + 1]):
            R, Cc, G = Xrow[si:ei], Xcol[sj:ej], gam
            if J < I:  # off-diagonal: anchor at the row block's first token, both factors <= 1
                gn = G[si]
                out[si:ei, sj:ej] = (R * E(G[si:ei] - gn)) @ (Cc * E(gn - G[sj:ej])).T
            elif anchor == "mid":
                gn = G[si + min((ei - si) // 2, ei - si - 1)]
                out[si:ei, sj:ej] = (R * E(G[si:ei] - gn)) @ (Cc * E(gn - G[sj:ej])).T
            else:  # direct: each pair's own difference, only where j <= i (no exp of a positive)
                D = G[si:ei, None, :] - G[None, sj:ej, :]
                m = M[si:ei, sj:ej]
                D = np.where(m[:, :, None], D, 0.0)
                out[si:ei, sj:ej] = np.einsum("ic,jc,ijc->ij", R, Cc, E(D))
    return np.where(M, out, 0.0)


# ---------------------------------------------------------------------------------------------
# gdn: Gated DeltaNet (fla chunk_gated_delta_rule / fused_recurrent_gated_delta_rule)

def gdn_seq(q, k, v, beta=None, logdecay=None, scale=None, qk_l2norm=True, eps=L2_EPS, S0=None,
            cache=None, decay_bf16=False, beta_bf16=False):
    q, k, v, H, T, d, dv, S = _setup(q, k, v, scale, qk_l2norm, eps, S0)
    beta = np.ones((H, T)) if beta is None else _f64(beta)
    g = np.zeros((H, T)) if logdecay is None else _f64(logdecay)
    scale = d ** -0.5 if scale is None else scale
    beta = rnd16(beta, "bf16") if beta_bf16 else beta
    a = np.exp(g)
    a = rnd16(a, "bf16") if decay_bf16 else a
    o = np.zeros((H, T, dv))
    for t in range(T):
        S = a[:, t][:, None, None] * S                                 # S' = a_t S_{t-1}
        e = beta[:, t, None] * (v[:, t] - np.einsum("hij,hj->hi", S, k[:, t]))
        S = S + e[:, :, None] * k[:, t, None, :]                      # S_t = S' + e k^T
        o[:, t] = scale * np.einsum("hij,hj->hi", S, q[:, t])
        S = rnd16(S, cache) if cache else S                       # stored in 16 bits
    return o, S


def gdn_chunk(q, k, v, beta=None, logdecay=None, C=64, scale=None, qk_l2norm=True, eps=L2_EPS,
              S0=None, base="e", tri="forward"):
    q, k, v, H, T, d, dv, S = _setup(q, k, v, scale, qk_l2norm, eps, S0)
    beta = np.ones((H, T)) if beta is None else _f64(beta)
    g = np.zeros((H, T)) if logdecay is None else _f64(logdecay)
    scale = d ** -0.5 if scale is None else scale
    o = np.zeros((H, T, dv))
    for h in range(H):
        Sh = S[h]
        for s, e in _chunks(T, C):
            Q, K, V, b = q[h, s:e], k[h, s:e], v[h, s:e], beta[h, s:e]
            gam, E = _gamma(g[h, s:e], base)
            n = e - s
            D = gam[:, None] - gam[None, :]
            strict = np.tril(np.ones((n, n), dtype=bool), -1)
            incl = np.tril(np.ones((n, n), dtype=bool))
            L = np.where(strict, b[:, None] * (K @ K.T) * E(np.where(strict, D, 0.0)), 0.0)
            Tm = tri_inverse(L, tri)                                   # (I + L)^-1
            W = Tm @ ((b * E(gam))[:, None] * K)                       # fla's w
            U = Tm @ (b[:, None] * V)                                  # fla's u
            Ev = U - W @ Sh.T                                          # fla's v_new
            A = np.where(incl, (Q @ K.T) * E(np.where(incl, D, 0.0)), 0.0)
            o[h, s:e] = scale * (E(gam)[:, None] * (Q @ Sh.T) + A @ Ev)
            Sh = E(gam[-1]) * Sh + (Ev * E(gam[-1] - gam)[:, None]).T @ K
        S[h] = Sh
    return o, S


# ---------------------------------------------------------------------------------------------
# kda: Kimi Delta Attention (fla chunk_kda / fused_recurrent_kda), per-key-channel decay

def kda_seq(q, k, v, beta=None, logdecay=None, scale=None, qk_l2norm=True, eps=L2_EPS, S0=None,
            cache=None, decay_bf16=False, beta_bf16=False):
    q, k, v, H, T, d, dv, S = _setup(q, k, v, scale, qk_l2norm, eps, S0)
    beta = np.ones((H, T)) if beta is None else _f64(beta)
    g = np.zeros((H, T, d)) if logdecay is None else _f64(logdecay)
    scale = d ** -0.5 if scale is None else scale
    beta = rnd16(beta, "bf16") if beta_bf16 else beta
    a = np.exp(g)
    a = rnd16(a, "bf16") if decay_bf16 else a
    o = np.zeros((H, T, dv))
    for t in range(T):
        S = S * a[:, t][:, None, :]                                   # S' = S_{t-1} Diag(a_t)
        e = beta[:, t, None] * (v[:, t] - np.einsum("hij,hj->hi", S, k[:, t]))
        S = S + e[:, :, None] * k[:, t, None, :]
        o[:, t] = scale * np.einsum("hij,hj->hi", S, q[:, t])
        S = rnd16(S, cache) if cache else S
    return o, S


def kda_chunk(q, k, v, beta=None, logdecay=None, C=64, scale=None, qk_l2norm=True, eps=L2_EPS,
              S0=None, base="e", tri="forward", sub=SUB, anchor="direct"):
    q, k, v, H, T, d, dv, S = _setup(q, k, v, scale, qk_l2norm, eps, S0)
    beta = np.ones((H, T)) if beta is None else _f64(beta)
    g = np.zeros((H, T, d)) if logdecay is None else _f64(logdecay)
    scale = d ** -0.5 if scale is None else scale
    o = np.zeros((H, T, dv))
    for h in range(H):
        Sh = S[h]
        for s, e in _chunks(T, C):
            Q, K, V, b = q[h, s:e], k[h, s:e], v[h, s:e], beta[h, s:e]
            gam, E = _gamma(g[h, s:e], base)                           # (n, d)
            Akk = b[:, None] * _pair_decay(gam, E, False, sub, anchor, K, K)
            Aqk = _pair_decay(gam, E, True, sub, anchor, Q, K)
            Tm = tri_inverse(Akk, tri)
            W = Tm @ (b[:, None] * K * E(gam))
            U = Tm @ (b[:, None] * V)
            Ev = U - W @ Sh.T
            o[h, s:e] = scale * ((Q * E(gam)) @ Sh.T + Aqk @ Ev)
            Sh = Sh * E(gam[-1])[None, :] + Ev.T @ (K * E(gam[-1] - gam))
        S[h] = Sh
    return o, S


# ---------------------------------------------------------------------------------------------
# gla: Gated Linear Attention (fla chunk_gla / fused_recurrent_gla)

def gla_seq(q, k, v, logdecay=None, scale=None, qk_l2norm=False, eps=L2_EPS, S0=None):
    q, k, v, H, T, d, dv, S = _setup(q, k, v, scale, qk_l2norm, eps, S0)
    g = np.zeros((H, T, d)) if logdecay is None else _f64(logdecay)
    scale = d ** -0.5 if scale is None else scale
    o = np.zeros((H, T, dv))
    for t in range(T):
        S = S * np.exp(g[:, t])[:, None, :] + v[:, t, :, None] * k[:, t, None, :]
        o[:, t] = scale * np.einsum("hij,hj->hi", S, q[:, t])
    return o, S


def gla_chunk(q, k, v, logdecay=None, C=64, scale=None, qk_l2norm=False, eps=L2_EPS, S0=None,
              base="e", sub=SUB):
    q, k, v, H, T, d, dv, S = _setup(q, k, v, scale, qk_l2norm, eps, S0)
    g = np.zeros((H, T, d)) if logdecay is None else _f64(logdecay)
    scale = d ** -0.5 if scale is None else scale
    o = np.zeros((H, T, dv))
    for h in range(H):
        Sh = S[h]
        for s, e in _chunks(T, C):
            Q, K, V = q[h, s:e], k[h, s:e], v[h, s:e]
            gam, E = _gamma(g[h, s:e], base)
            A = _pair_decay(gam, E, True, sub, "direct", Q, K)
            o[h, s:e] = scale * ((Q * E(gam)) @ Sh.T + A @ V)
            Sh = Sh * E(gam[-1])[None, :] + V.T @ (K * E(gam[-1] - gam))
        S[h] = Sh
    return o, S


# ---------------------------------------------------------------------------------------------
# mamba2: SSD (state-spaces/mamba ssd_minimal_discrete / mamba_chunk_scan_combined)

def mamba2_seq(q, k, v, logdecay=None, scale=1.0, S0=None):
    q, k, v, H, T, d, dv, S = _setup(q, k, v, scale, False, 0.0, S0)
    g = np.zeros((H, T)) if logdecay is None else _f64(logdecay)
    o = np.zeros((H, T, dv))
    for t in range(T):
        S = np.exp(g[:, t])[:, None, None] * S + v[:, t, :, None] * k[:, t, None, :]
        o[:, t] = scale * np.einsum("hij,hj->hi", S, q[:, t])
    return o, S


def _segsum_direct(x):
    """ssd_minimal's stable segsum: seg[i, j] = sum_{j < t <= i} x_t, each entry its own sum."""
    n = x.shape[0]
    seg = np.full((n, n), -np.inf)
    for j in range(n):
        seg[j, j] = 0.0
        if j + 1 < n:
            seg[j + 1:, j] = np.cumsum(x[j + 1:])
    return seg


def mamba2_chunk(q, k, v, logdecay=None, C=256, scale=1.0, S0=None, base="e", segsum="diff"):
    q, k, v, H, T, d, dv, S = _setup(q, k, v, scale, False, 0.0, S0)
    g = np.zeros((H, T)) if logdecay is None else _f64(logdecay)
    o = np.zeros((H, T, dv))
    for h in range(H):
        Sh = S[h]
        for s, e in _chunks(T, C):
            Q, K, V = q[h, s:e], k[h, s:e], v[h, s:e]
            gam, E = _gamma(g[h, s:e], base)
            n = e - s
            incl = np.tril(np.ones((n, n), dtype=bool))
            if segsum == "diff":   # exp(min(gamma_i - gamma_j, 0)), as the Triton chunk_scan
                Lm = np.where(incl, E(np.minimum(gam[:, None] - gam[None, :], 0.0)), 0.0)
            elif segsum == "direct":
                seg = _segsum_direct(g[h, s:e])
                if base == "2":
                    seg = seg * RCP_LN2
                Lm = E(seg)       # exp(-inf) = 0 above the diagonal
            else:
                raise ValueError("segsum must be diff or direct")
            o[h, s:e] = scale * (E(gam)[:, None] * (Q @ Sh.T) + (Lm * (Q @ K.T)) @ V)
            dec = E(np.minimum(gam[-1] - gam, 0.0))                  # chunk_state's decay
            Sh = E(gam[-1]) * Sh + (V * dec[:, None]).T @ K           # state passing
        S[h] = Sh
    return o, S


# ---------------------------------------------------------------------------------------------
# rwkv7: generalized delta rule, diagonal plus low rank (fla chunk_rwkv7 / chunk_dplr_delta_rule)

def rwkv7_seq(q, k, v, a, b, logdecay=None, scale=1.0, qk_l2norm=False, eps=L2_EPS, S0=None):
    q, k, v, H, T, d, dv, S = _setup(q, k, v, scale, qk_l2norm, eps, S0)
    a, b = _f64(a), _f64(b)
    g = np.zeros((H, T, d)) if logdecay is None else _f64(logdecay)
    o = np.zeros((H, T, dv))
    for t in range(T):
        Sa = np.einsum("hij,hj->hi", S, a[:, t])                     # S_{t-1} a_t
        S = S * np.exp(g[:, t])[:, None, :] + Sa[:, :, None] * b[:, t, None, :] \
            + v[:, t, :, None] * k[:, t, None, :]
        o[:, t] = scale * np.einsum("hij,hj->hi", S, q[:, t])
    return o, S


def rwkv7_chunk(q, k, v, a, b, logdecay=None, C=16, scale=1.0, qk_l2norm=False, eps=L2_EPS,
                S0=None, base="e", tri="forward", anchor="direct"):
    q, k, v, H, T, d, dv, S = _setup(q, k, v, scale, qk_l2norm, eps, S0)
    a, b = _f64(a), _f64(b)
    g = np.zeros((H, T, d)) if logdecay is None else _f64(logdecay)
    o = np.zeros((H, T, dv))
    for h in range(H):
        Sh = S[h]
        for s, e in _chunks(T, C):
            Q, K, V, Aa, Bb = q[h, s:e], k[h, s:e], v[h, s:e], a[h, s:e], b[h, s:e]
            gi, E = _gamma(g[h, s:e], base)                            # inclusive
            ge = gi - (g[h, s:e] * (RCP_LN2 if base == "2" else 1.0))  # exclusive
            n = e - s
            incl = np.tril(np.ones((n, n), dtype=bool))
            strict = np.tril(np.ones((n, n), dtype=bool), -1)
            if anchor == "mid":   # one anchor for the whole chunk (fla's safe_gate tensor-core path)
                gn = gi[n // 2]
                qo, ko, bo, ao = Q * E(gi - gn), K * E(gn - gi), Bb * E(gn - gi), Aa * E(ge - gn)
                Aqk, Aqb = np.where(incl, qo @ ko.T, 0), np.where(incl, qo @ bo.T, 0)
                Aak, Aab = np.where(strict, ao @ ko.T, 0), np.where(strict, ao @ bo.T, 0)
            elif anchor == "direct":
                Di = np.where(incl[:, :, None], gi[:, None, :] - gi[None, :, :], 0.0)
                De = np.where(strict[:, :, None], ge[:, None, :] - gi[None, :, :], 0.0)
                Aqk = np.where(incl, np.einsum("ic,jc,ijc->ij", Q, K, E(Di)), 0)
                Aqb = np.where(incl, np.einsum("ic,jc,ijc->ij", Q, Bb, E(Di)), 0)
                Aak = np.where(strict, np.einsum("ic,jc,ijc->ij", Aa, K, E(De)), 0)
                Aab = np.where(strict, np.einsum("ic,jc,ijc->ij", Aa, Bb, E(De)), 0)
            else:
                raise ValueError("anchor must be direct or mid")
            Tm = tri_inverse(-Aab, tri)                                # (I - A_ab)^-1
            W = Tm @ (Aa * E(ge))                                      # fla's w (from ag)
            U = Tm @ (Aak @ V)                                         # fla's u
            V2 = U + W @ Sh.T                                          # S_{i-1} a_i (v_new)
            o[h, s:e] = scale * ((Q * E(gi)) @ Sh.T + Aqk @ V + Aqb @ V2)
            dec = E(gi[-1] - gi)
            Sh = Sh * E(gi[-1])[None, :] + V.T @ (K * dec) + V2.T @ (Bb * dec)
        S[h] = Sh
    return o, S


# ---------------------------------------------------------------------------------------------
# a plain delta rule, written out separately, for the gdn(g = 0) check

def delta_seq(q, k, v, beta, scale):
    """S_t = S_{t-1} - beta_t (S_{t-1} k_t - v_t) k_t^T, o_t = scale S_t q_t (q, k as given)."""
    H, T, d = q.shape
    S = np.zeros((H, v.shape[-1], d))
    o = np.zeros((H, T, v.shape[-1]))
    for h in range(H):
        for t in range(T):
            r = S[h] @ k[h, t] - v[h, t]
            S[h] = S[h] - beta[h, t] * np.outer(r, k[h, t])
            o[h, t] = scale * (S[h] @ q[h, t])
    return o, S


# binary32 cumulative sums in two orders (mamba PR 713's positive differences)

def cumsum32(x, order="seq"):
    """Inclusive cumulative sum of a 1-D array in binary32: 'seq' a running sum (monotone for
    non-positive terms), 'tree' a Hillis-Steele scan (log2 n rounds, as parallel scans do)."""
    y = np.asarray(x, dtype=np.float32).copy()
    if order == "seq":
        for i in range(1, y.shape[0]):
            y[i] = np.float32(y[i - 1] + y[i])
        return y
    if order == "tree":
        step = 1
        while step < y.shape[0]:
            z = y.copy()
            z[step:] = (y[step:] + y[:-step]).astype(np.float32)
            y = z
            step *= 2
        return y
    raise ValueError("order must be seq or tree")


gdn = SimpleNamespace(name="gdn", seq=gdn_seq, chunk=gdn_chunk)
kda = SimpleNamespace(name="kda", seq=kda_seq, chunk=kda_chunk)
gla = SimpleNamespace(name="gla", seq=gla_seq, chunk=gla_chunk)
mamba2 = SimpleNamespace(name="mamba2", seq=mamba2_seq, chunk=mamba2_chunk)
rwkv7 = SimpleNamespace(name="rwkv7", seq=rwkv7_seq, chunk=rwkv7_chunk)
MODELS = {m.name: m for m in (gdn, kda, gla, mamba2, rwkv7)}


# ---------------------------------------------------------------------------------------------
# self-test

def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def example_inputs(model, H=2, T=128, d=16, dv=16, seed=0, S0=False):
    """Random inputs in the published layers' ranges (gates as the layers make them)."""
    rng = np.random.default_rng(seed)
    x = {"q": rng.standard_normal((H, T, d)), "k": rng.standard_normal((H, T, d)),
         "v": rng.standard_normal((H, T, dv))}
    if model in ("gdn", "kda"):   # -exp(A_log) softplus(.), A in [1, 16]; beta = sigmoid
        A = rng.uniform(1, 16, (H, 1, 1) if model == "kda" else (H, 1))
        pre = rng.standard_normal((H, T, d) if model == "kda" else (H, T)) - 3.0
        x["logdecay"] = -A * np.log1p(np.exp(pre))
        x["beta"] = _sigmoid(rng.standard_normal((H, T)))
    elif model == "gla":          # logsigmoid(.) / 16 (fla's gate_logit_normalizer)
        x["logdecay"] = -np.log1p(np.exp(-rng.standard_normal((H, T, d)))) / 16.0
    elif model == "mamba2":       # dA = dt A, dt = softplus(. - 2), A = -U(1, 16); k = B dt
        dt = np.log1p(np.exp(rng.standard_normal((H, T)) - 2.0))
        x["logdecay"] = dt * -rng.uniform(1, 16, (H, 1))
        x["k"] = x["k"] * dt[:, :, None]
    elif model == "rwkv7":        # log w = -e^-0.5 sigmoid(.); a = -kk, b = kk * iclr
        x["logdecay"] = -np.exp(-0.5) * _sigmoid(rng.standard_normal((H, T, d)))
        kk = l2norm(rng.standard_normal((H, T, d)), 0.0)
        x["a"], x["b"] = -kk, kk * _sigmoid(rng.standard_normal((H, T, d)))
    if S0:
        x["S0"] = rng.standard_normal((H, dv, d))
    return x


def relerr(x, ref):
    """Norm-wise relative error, the largest over the heads (axis 0)."""
    x, ref = np.asarray(x), np.asarray(ref)
    num = np.sqrt(((x - ref) ** 2).reshape(x.shape[0], -1).sum(1))
    den = np.sqrt((ref ** 2).reshape(ref.shape[0], -1).sum(1))
    return float((num / np.maximum(den, 1e-300)).max())


def torch_seq(name, t):
    """The five recurrences in torch float64 (torch imported by the caller; t a dict of tensors
    as example_inputs names them, S0 optional), in fla's orientation h = S^T (d x dv),
    o = h^T (scale q), every operation differentiable (tests/test_grad.py takes its gradients by
    torch.autograd). Returns o (H, T, dv) and the final h (H, d, dv)."""
    import torch
    q, k, v = t["q"], t["k"], t["v"]
    H, T, d = q.shape
    if name in ("gdn", "kda"):
        q = q / torch.sqrt((q * q).sum(-1, keepdim=True) + L2_EPS)
        k = k / torch.sqrt((k * k).sum(-1, keepdim=True) + L2_EPS)
    scale = d ** -0.5 if name in ("gdn", "kda", "gla") else 1.0
    outs, finals = [], []
    for i in range(H):
        hh = t["S0"][i].T if "S0" in t else torch.zeros(d, v.shape[-1], dtype=torch.float64)
        os_ = []
        for s in range(T):
            qt, kt, vt, gt = q[i, s], k[i, s], v[i, s], t["logdecay"][i, s]
            if name == "gdn":
                hh = hh * torch.exp(gt)
                hh = hh + torch.outer(kt, t["beta"][i, s] * (vt - kt @ hh))
            elif name == "kda":
                hh = torch.exp(gt)[:, None] * hh
                hh = hh + torch.outer(kt, t["beta"][i, s] * (vt - kt @ hh))
            elif name == "gla":
                hh = torch.exp(gt)[:, None] * hh + torch.outer(kt, vt)
            elif name == "mamba2":
                hh = torch.exp(gt) * hh + torch.outer(kt, vt)
            else:   # rwkv7: h_t = (Diag(w) + b a^T) h_{t-1} + k v^T
                at, bt = t["a"][i, s], t["b"][i, s]
                hh = torch.exp(gt)[:, None] * hh + torch.outer(bt, at @ hh) \
                    + torch.outer(kt, vt)
            os_.append(hh.T @ (scale * qt))
        outs.append(torch.stack(os_))
        finals.append(hh)
    return torch.stack(outs), torch.stack(finals)


def torch_chunk(name, t, C):
    """gdn's chunked algorithm in torch float64, every operation differentiable (tests/
    test_gradchunk.py takes its gradients by torch.autograd), from the published equations
    (Yang, Kautz and Hatamizadeh 2025, Gated Delta Networks, section 3.3: the UT transform; fla's
    chunk_gated_delta_rule): per chunk of C tokens (the last may be shorter), gamma the
    cumulative log-decays, L = strictly_lower(beta k k^T o exp(gamma_i - gamma_j)),
    T = (I + L)^-1, W = T (beta exp(gamma) k), U = T (beta v), v_new = U - W h,
    o = scale (exp(gamma) q h + (q k^T o exp(gamma_i - gamma_j))_causal v_new),
    h <- exp(gamma_C) h + k^T (exp(gamma_C - gamma) v_new), h = S^T (d x dv).
    name "delta": the delta rule, no decay, k / ||k|| (unit, no eps), q as given, scale 1.
    name "kda": a log-decay per key channel (Kimi Linear's chunkwise KDA), gamma (C, d):
    L_ij = beta_i sum_c k_ic k_jc exp(gamma_ic - gamma_jc), W = T (beta k o exp(gamma)), the
    scores sum_c q_ic k_jc exp(gamma_ic - gamma_jc), the read-out's (q o exp(gamma)) h,
    h <- Diag(exp(gamma_C)) h + (k o exp(gamma_C - gamma))^T v_new; the differences masked to 0
    above the diagonal before exp (transformers PR 48455). "gla" and "mamba2": the same without the
    UT transform (v_new = v; fla's chunk_gla, SSD's chunk scan), gla's decays per channel, mamba2's
    scalar (broadcast over the channels), no q/k normalization, scale d^-1/2 (gla) or 1 (mamba2).
    Returns o (H, T, dv)."""
    import torch
    q, k, v = t["q"], t["k"], t["v"]
    H, T, d = q.shape
    if name in ("kda", "gla", "mamba2"):
        return _torch_chunk_ch(name, t, C)
    if name == "gdn":
        q = q / torch.sqrt((q * q).sum(-1, keepdim=True) + L2_EPS)
        k = k / torch.sqrt((k * k).sum(-1, keepdim=True) + L2_EPS)
        g, scale = t["logdecay"], d ** -0.5
    else:
        k = k / torch.sqrt((k * k).sum(-1, keepdim=True))
        g, scale = torch.zeros(H, T, dtype=torch.float64), 1.0
    outs = []
    for i in range(H):
        hh = torch.zeros(d, v.shape[-1], dtype=torch.float64)
        os_ = []
        for s, e in _chunks(T, C):
            Q, K, V, b = q[i, s:e], k[i, s:e], v[i, s:e], t["beta"][i, s:e]
            gam = torch.cumsum(g[i, s:e], 0)
            n = e - s
            D = gam[:, None] - gam[None, :]
            strict = torch.tril(torch.ones(n, n, dtype=torch.bool), -1)
            incl = torch.tril(torch.ones(n, n, dtype=torch.bool))
            zero = torch.zeros(n, n, dtype=torch.float64)
            L = torch.where(strict, b[:, None] * (K @ K.T) * torch.exp(torch.where(strict, D, zero)),
                            zero)
            Tm = torch.linalg.inv(torch.eye(n, dtype=torch.float64) + L)
            W = Tm @ ((b * torch.exp(gam))[:, None] * K)
            U = Tm @ (b[:, None] * V)
            Ev = U - W @ hh
            A = torch.where(incl, (Q @ K.T) * torch.exp(torch.where(incl, D, zero)), zero)
            os_.append(scale * (torch.exp(gam)[:, None] * (Q @ hh) + A @ Ev))
            hh = torch.exp(gam[-1]) * hh + K.T @ (torch.exp(gam[-1] - gam)[:, None] * Ev)
        outs.append(torch.cat(os_))
    return torch.stack(outs)


def _torch_chunk_ch(name, t, C):
    """torch_chunk's kda, gla and mamba2 (its docstring)"""
    import torch
    q, k, v = t["q"], t["k"], t["v"]
    H, T, d = q.shape
    wy = name == "kda"
    if wy:
        q = q / torch.sqrt((q * q).sum(-1, keepdim=True) + L2_EPS)
        k = k / torch.sqrt((k * k).sum(-1, keepdim=True) + L2_EPS)
    g = t["logdecay"] if t["logdecay"].dim() == 3 else t["logdecay"][:, :, None].expand(H, T, d)
    scale = 1.0 if name == "mamba2" else d ** -0.5
    outs = []
    for i in range(H):
        hh = torch.zeros(d, v.shape[-1], dtype=torch.float64)
        os_ = []
        for s, e in _chunks(T, C):
            Q, K, V = q[i, s:e], k[i, s:e], v[i, s:e]
            gam = torch.cumsum(g[i, s:e], 0)                           # (n, d)
            n = e - s
            incl = torch.tril(torch.ones(n, n, dtype=torch.bool))
            D = gam[:, None, :] - gam[None, :, :]                      # (n, n, d)
            Dx = torch.exp(torch.where(incl[:, :, None], D, torch.zeros_like(D)))
            zero = torch.zeros(n, n, dtype=torch.float64)
            if wy:
                b = t["beta"][i, s:e]
                strict = torch.tril(torch.ones(n, n, dtype=torch.bool), -1)
                L = torch.where(strict, b[:, None] * torch.einsum("ic,jc,ijc->ij", K, K, Dx), zero)
                Tm = torch.linalg.inv(torch.eye(n, dtype=torch.float64) + L)
                W = Tm @ (b[:, None] * K * torch.exp(gam))
                Ev = Tm @ (b[:, None] * V) - W @ hh
            else:
                Ev = V
            A = torch.where(incl, torch.einsum("ic,jc,ijc->ij", Q, K, Dx), zero)
            os_.append(scale * ((Q * torch.exp(gam)) @ hh + A @ Ev))
            hh = torch.exp(gam[-1])[:, None] * hh + (K * torch.exp(gam[-1] - gam)).T @ Ev
        outs.append(torch.cat(os_))
    return torch.stack(outs)


def _torch_check(tol):
    """The five recurrences once more in torch float64, in fla's orientation h = S^T (d x dv),
    o = h^T (scale q): an independent text and library for the orientation and the defaults."""
    try:
        import torch
    except ImportError as err:
        print("torch: skipped (%s)" % err)
        return 0
    fails = 0
    for name, m in MODELS.items():
        x = example_inputs(name, H=2, T=96, d=16, dv=12, seed=7, S0=True)
        o_np, S_np = m.seq(**x)
        t = {key: torch.tensor(val, dtype=torch.float64) for key, val in x.items()}
        o, hs = torch_seq(name, t)
        eo = relerr(o.detach().numpy(), o_np)
        eS = relerr(hs.transpose(1, 2).detach().numpy(), S_np)
        ok = eo <= tol and eS <= tol
        fails += not ok
        print("torch  %-6s fla orientation (h = S^T)  o %.1e  S %.1e  %s"
              % (name, eo, eS, "ok" if ok else "FAIL"))
    return fails


def selftest(tol=1e-12):
    fails = 0

    def report(label, eo, eS):
        nonlocal fails
        ok = eo <= tol and eS <= tol
        fails += not ok
        print("%-52s o %.1e  S %.1e  %s" % (label, eo, eS, "ok" if ok else "FAIL"))

    print("chunk against seq, norm-wise relative error (the largest over 2 heads), d = 16, tol %g"
          % tol)
    for name, m in MODELS.items():
        for T in (64, 160, 256):
            x = example_inputs(name, T=T, seed=T)
            o_s, S_s = m.seq(**x)
            for C in (4, 16, 64):
                o_c, S_c = m.chunk(**x, C=C)
                report("%-6s T=%-3d C=%-2d" % (name, T, C), relerr(o_c, o_s), relerr(S_c, S_s))

    print("settings (T = 160, initial state S0 != 0 where marked)")
    variants = [
        ("gdn", dict(C=64, tri="blocked")), ("gdn", dict(C=64, tri="neumann")),
        ("gdn", dict(C=64, tri="solve")), ("kda", dict(C=64, tri="blocked")),
        ("kda", dict(C=64, tri="neumann")), ("kda", dict(C=64, anchor="mid")),
        ("kda", dict(C=64, sub=None)), ("gla", dict(C=64, sub=None)),
        ("gla", dict(C=128, sub=16)), ("mamba2", dict(C=64, segsum="direct")),
        ("mamba2", dict(C=256)), ("rwkv7", dict(C=64, anchor="mid")),
        ("rwkv7", dict(C=64, tri="blocked")),
    ]
    for name, kw in variants:
        x = example_inputs(name, T=160, seed=3)
        o_s, S_s = MODELS[name].seq(**x)
        o_c, S_c = MODELS[name].chunk(**x, **kw)
        report("%-6s %s" % (name, " ".join("%s=%s" % i for i in kw.items())),
               relerr(o_c, o_s), relerr(S_c, S_s))
    for name, m in MODELS.items():
        x = example_inputs(name, T=160, seed=5, S0=True)
        o_s, S_s = m.seq(**x)
        o_c, S_c = m.chunk(**x, C=16)
        report("%-6s C=16 S0 != 0" % name, relerr(o_c, o_s), relerr(S_c, S_s))

    print("gdn with every log-gate 0 (a = 1) against the plain delta rule written separately")
    x = example_inputs("gdn", T=256, seed=11)
    x["logdecay"] = np.zeros_like(x["logdecay"])
    qn, kn = l2norm(x["q"]), l2norm(x["k"])
    o_d, S_d = delta_seq(qn, kn, x["v"], x["beta"], 16 ** -0.5)
    o_s, S_s = gdn.seq(**x)
    report("gdn seq   g=0 vs delta", relerr(o_s, o_d), relerr(S_s, S_d))
    for C in (4, 16, 64):
        o_c, S_c = gdn.chunk(**x, C=C)
        report("gdn chunk g=0 C=%-2d vs delta" % C, relerr(o_c, o_d), relerr(S_c, S_d))

    print("triangular inverses against numpy.linalg.solve (C = 64, L from kda's first chunk)")
    x = example_inputs("kda", T=64, seed=13)
    kn = l2norm(x["k"][0])
    gam = np.cumsum(x["logdecay"][0], axis=0)
    L = x["beta"][0][:, None] * _pair_decay(gam, np.exp, False, SUB, "direct", kn, kn)
    ref = np.linalg.solve(np.eye(64) + L, np.eye(64))
    for meth in ("forward", "blocked", "neumann"):
        e = float(np.abs(tri_inverse(L, meth) - ref).max() / np.abs(ref).max())
        report("tri_inverse %-8s" % meth, e, 0.0)

    print("information (not checked): fla's base 2 with RCP_LN2 = %.17g against exp" % RCP_LN2)
    for name in ("gdn", "kda"):
        x = example_inputs(name, T=256, seed=17)
        o_s, _ = MODELS[name].seq(**x)
        o_c, _ = MODELS[name].chunk(**x, C=64, base="2")
        print("%-52s o %.1e" % ("%-6s C=64 base=2" % name, relerr(o_c, o_s)))

    fails += _torch_check(tol)
    print("%s: %d failed" % ("gated_ref self-test", fails))
    return fails


if __name__ == "__main__":
    sys.exit(1 if selftest() else 0)
