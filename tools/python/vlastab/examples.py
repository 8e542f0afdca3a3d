"""EXAMPLES, not kernels to use: three chunked Gated DeltaNet forwards in plain PyTorch, written by
this project from the published equations to exercise vlastab.judge(): one correct, two with the
faults of two flash-linear-attention (fla) bug reports. They take and return tensors in fla's
layout and call convention (chunk_gated_delta_rule), so that judge() calls them as it calls yours:

    o = gdn_chunk(q, k, v, g=g, beta=beta)                         # (B, T, H, dv), q.dtype
    o, S = gdn_chunk(q, k, v, g=g, beta=beta, initial_state=S0, output_final_state=True)

q, k (B, T, H, d); v (B, T, H, dv); g (B, T, H) the log-decays (<= 0, a_t = exp(g_t)); beta
(B, T, H) the rates; S0 and S (B, H, d, dv), fla's state h = S^T, in float32. The recurrence
(Yang, Kautz, Hatamizadeh, "Gated Delta Networks", ICLR 2025; vlastab's orientation, S dv x d):

    S_t = a_t S_{t-1} (I - beta_t k_t k_t^T) + beta_t v_t k_t^T,   o_t = d^-1/2 S_t q_t

with q and k L2-normalized first (x / sqrt(x.x + 1e-6), fla's use_qk_l2norm_in_kernel and
vlastab's gdn default: tests/gated_ref.py, docs/trace.md). In a chunk of C tokens with G the
chunk's inclusive cumulative sum of g and Gamma_ij = exp(G_i - G_j) for j <= i (0 above):

    L = StrictTril(diag(beta) K K^T * Gamma),  T = (I + L)^-1        (UT transform)
    W = T diag(beta exp(G)) K,  U = T diag(beta) V,  E = U - W S^T
    O = d^-1/2 (diag(exp(G)) Q S^T + Tril(Q K^T * Gamma) E)
    S <- exp(G_C) S + (diag(exp(G_C - G)) E)^T K

gdn_chunk:           the above, chunk C = 64, T by forward substitution row by row, every exponent
                     a difference G_i - G_j <= 0 taken under the mask (never exp of a positive
                     number), computed in float32; inputs and o in the caller's dtype (bf16).
gdn_chunk_anchored:  the fla issue 1240 class, as this project reproduces its mechanism (an
                     assumption: the report itself was not at hand): Gamma_ij = exp(G_i - G_C) *
                     exp(G_C - G_j), both factors anchored on the chunk's LAST row C and each
                     rounded to the input dtype before the product, as a kernel that folds them into
                     q and k stored in bf16 does. Exact arithmetic would cancel G_C; rounded, every
                     output of the chunk depends on G_C, that is on the gates of tokens after it
                     (acausal outputs), and with a chunk's total decay beyond 88 exp(G_i - G_C)
                     overflows (inf * 0 = NaN through the mask, applied by multiplication).
gdn_chunk_fp16_ut:   the fla issue 736 class (NaNs after wy_fast with float16 inputs and
                     unnormalized keys): no L2 normalization of q and k, and the UT transform in
                     float16 (K K^T, beta's scaling and the forward substitution each rounded to
                     float16, as a kernel that keeps A and T in the input dtype). Keys of norm^2
                     beyond 65504 overflow K K^T before beta scales them down, and the inverse turns
                     inf into NaN, though the recurrence itself is stable (beta |k|^2 < 2).
"""
import torch

__all__ = ["gdn_chunk", "gdn_chunk_anchored", "gdn_chunk_fp16_ut"]

L2_EPS = 1e-6


def _l2(x):
    return x / torch.sqrt((x * x).sum(-1, keepdim=True) + L2_EPS)


def _r16(x):
    """x rounded to float16 and back: one float16 operation's result"""
    return x.half().float()


def _forward(q, k, v, g, beta, scale, initial_state, output_final_state, qk_l2norm, C, gamma,
             ut):
    """the chunked algorithm of the module's docstring; gamma(G, n) gives a chunk's Gamma (incl.
    diagonal, zero above), ut(K, b, Gam) its T = (I + L)^-1"""
    dtype = q.dtype
    B, T, H, d = q.shape
    dv = v.shape[-1]
    f = lambda x: x.float().transpose(1, 2)  # (B, T, H, .) -> (B, H, T, .) in float32
    q, k, v = f(q), f(k), f(v)
    g = q.new_zeros(B, H, T) if g is None else g.float().transpose(1, 2)
    beta = q.new_ones(B, H, T) if beta is None else beta.float().transpose(1, 2)
    if qk_l2norm:
        q, k = _l2(q), _l2(k)
    scale = d ** -0.5 if scale is None else scale
    S = q.new_zeros(B, H, dv, d) if initial_state is None else \
        initial_state.float().transpose(-1, -2).clone()  # fla's (B, H, d, dv) -> S (dv x d)
    o = []
    for s in range(0, T, C):
        e = min(s + C, T)
        Q, K, V, b = q[:, :, s:e], k[:, :, s:e], v[:, :, s:e], beta[:, :, s:e]
        G = torch.cumsum(g[:, :, s:e], -1)
        Gam = gamma(G)
        Tm = ut(K, b, Gam)
        W = Tm @ ((b * torch.exp(G))[..., None] * K)
        U = Tm @ (b[..., None] * V)
        E = U - W @ S.transpose(-1, -2)
        A = (Q @ K.transpose(-1, -2)) * Gam
        o.append(scale * (torch.exp(G)[..., None] * (Q @ S.transpose(-1, -2)) + A @ E))
        Gl = G[..., -1:]
        S = torch.exp(Gl)[..., None] * S + (E * torch.exp(Gl - G)[..., None]).transpose(-1, -2) @ K
    o = torch.cat(o, 2).transpose(1, 2).to(dtype)
    return (o, S.transpose(-1, -2).contiguous()) if output_final_state else o


def _gamma_direct(G):
    n = G.shape[-1]
    incl = torch.tril(torch.ones(n, n, dtype=torch.bool, device=G.device))
    D = G[..., :, None] - G[..., None, :]
    return torch.exp(torch.where(incl, D, torch.full_like(D, -float("inf"))))  # exp(-inf) = 0


def _ut_f32(K, b, Gam):
    """T = (I + StrictTril(diag(b) K K^T * Gam))^-1 by forward substitution, in float32"""
    n = K.shape[-2]
    L = torch.tril(b[..., None] * (K @ K.transpose(-1, -2)) * Gam, -1)
    return _substitute(L, lambda x: x)


def _substitute(L, rnd):
    """T = (I + L)^-1 for a strictly lower triangular L, row by row (row i of (I + L) T = I: T_i =
    e_i - sum_{j<i} L_ij T_j), each row through rnd; built of new tensors, no in-place write, so
    that autograd differentiates it"""
    n = L.shape[-1]
    eye = torch.eye(n, dtype=L.dtype, device=L.device).expand(L.shape)
    rows = [eye[..., 0, :]]
    for i in range(1, n):
        prev = torch.stack(rows, -2)  # (..., i, n): rows 0 .. i-1
        rows.append(eye[..., i, :] - rnd((L[..., i, None, :i] @ prev)[..., 0, :]))
    return torch.stack(rows, -2)


def gdn_chunk(q, k, v, g=None, beta=None, scale=None, initial_state=None,
              output_final_state=False, use_qk_l2norm_in_kernel=True, chunk_size=64):
    """EXAMPLE: a correct chunked Gated DeltaNet (module docstring), float32 inside"""
    return _forward(q, k, v, g, beta, scale, initial_state, output_final_state,
                    use_qk_l2norm_in_kernel, chunk_size, _gamma_direct, _ut_f32)


def gdn_chunk_anchored(q, k, v, g=None, beta=None, scale=None, initial_state=None,
                       output_final_state=False, use_qk_l2norm_in_kernel=True, chunk_size=64):
    """EXAMPLE of a FAULT (fla issue 1240 class): Gamma = exp(G_i - G_last) * exp(G_last - G_j),
    each factor rounded to the input dtype, the mask applied by multiplication"""
    dtype = q.dtype

    def gamma(G):
        n = G.shape[-1]
        Gl = G[..., -1:]
        up = torch.exp(G - Gl).to(dtype).float()    # >= 1: overflows past a decay of 88
        down = torch.exp(Gl - G).to(dtype).float()  # <= 1
        return up[..., :, None] * down[..., None, :] * torch.tril(G.new_ones(n, n))

    return _forward(q, k, v, g, beta, scale, initial_state, output_final_state,
                    use_qk_l2norm_in_kernel, chunk_size, gamma, _ut_f32)


def _ut_f16(K, b, Gam):
    """T as _ut_f32 with every intermediate rounded to float16 (K K^T first, then beta, then
    Gamma; each row of the substitution)"""
    n = K.shape[-2]
    KK = _r16(_r16(K) @ _r16(K).transpose(-1, -2))  # |k|^2 > 65504: inf
    L = torch.tril(_r16(_r16(_r16(b)[..., None] * KK) * _r16(Gam)), -1)
    return _substitute(L, _r16)


def gdn_chunk_fp16_ut(q, k, v, g=None, beta=None, scale=None, initial_state=None,
                      output_final_state=False, use_qk_l2norm_in_kernel=False, chunk_size=64):
    """EXAMPLE of a FAULT (fla issue 736 class): unnormalized q and k (the default here), the UT
    transform's intermediates in float16"""
    return _forward(q, k, v, g, beta, scale, initial_state, output_final_state,
                    use_qk_l2norm_in_kernel, chunk_size, _gamma_direct, _ut_f16)



def library_kernel(model="gdn", precision="bf16-kern", form="chunk:64", **settings):
    """EXAMPLE: vlastab's own emulation of a kernel policy (the C library, through vlastab.run) as
    a function of fla's call, fn(q, k, v, g=None, beta=None) -> o in q's dtype: what judge()
    calls the attainable error, judged through the same path as your kernel. settings: the
    model's --set (qknorm=False, ...). No state in or out."""
    from . import run

    def fn(q, k, v, g=None, beta=None):
        B, T, H = q.shape[:3]
        h = lambda x: x.detach().cpu().double().transpose(1, 2).reshape(
            (B * H, T) + tuple(x.shape[3:])).numpy()
        r = run(h(q), h(k), h(v), model=model, precision=precision, form=form,
                beta=None if beta is None else h(beta), logdecay=None if g is None else h(g),
                reference=False, **settings)
        o = torch.from_numpy(r["o"]).reshape(B, H, T, -1).transpose(1, 2)
        return o.to(device=q.device, dtype=q.dtype)

    fn.__name__ = "vlastab_%s_%s_%s" % (model, precision, form.replace(":", ""))
    return fn
