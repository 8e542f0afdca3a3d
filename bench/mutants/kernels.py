"""kernels.py: the reference chunked kernels of the mutation benchmark of vlastab's kernel judge
(README.md): Gated DeltaNet (gdn), Kimi Delta Attention (kda) and Mamba-2's SSD (mamba2), written in
plain PyTorch in the style of flash-linear-attention's (fla) chunk kernels, and mutants of them with
the bugs of the field's reports and reviews. Written by this project from the published equations
and from reading what fla's and Mamba-2's kernels compute (docs/gated.md lists the files and
commits); no code is copied.

Call convention (fla's chunk_gated_delta_rule / chunk_kda; vlastab.judge calls it so):

    o = fn(q, k, v, g=g, beta=beta)                                   # gdn, kda
    o = fn(q, k, v, g=g)                                              # mamba2 (k = B dt, q = C)
    o, S = fn(q, k, v, g=g, beta=beta, initial_state=S0, output_final_state=True)

q, k (B, T, H, d); v (B, T, H, dv); g the log-decays (B, T, H), per key channel (B, T, H, d) for
kda; beta (B, T, H); o (B, T, H, dv) in q's dtype; S0, S (B, H, d, dv) fla's h (vlastab's S^T),
float32 (float64 when the inputs are float64).

The recurrences (fla's orientation, h of d x dv; a = exp(g)):

    gdn     h_t = a_t h_{t-1};  h_t += beta_t k_t (v_t - h_t^T k_t)^T;   o_t = d^-1/2 h_t^T q_t
    kda     h_t = Diag(a_t) h_{t-1};  then as gdn                        (a_t per key channel)
    mamba2  h_t = a_t h_{t-1} + k_t v_t^T;                               o_t = h_t^T q_t

gdn and kda L2-normalize q and k first (x / sqrt(x.x + 1e-6), fla's use_qk_l2norm_in_kernel).

The chunked algorithm (chunk of C tokens; G the chunk's inclusive cumulative sum of g, times
log2(e) and exponentiated by exp2 as fla does, or natural; E(x) that exponential):

    A_kk = StrictTril(diag(beta) (K K^T o E(G_i - G_j)))     (kda: sum over channels of the
    A_qk = Tril(Q K^T o E(G_i - G_j))                          per-channel differences)
    Tinv = (I + A_kk)^-1                                        (the UT / WY transform)
    w = Tinv diag(beta) (K o E(G)),  u = Tinv diag(beta) V
    per chunk, with h the state entering it:
      v_new = u - w h
      o     = scale ((Q o E(G)) h + A_qk v_new)
      h    <- E(G_C) h + (K o E(G_C - G))^T v_new
    mamba2: no A_kk, v_new = V, scale 1.

As fla: operands in the input dtype (bf16), float32 accumulation; stored in the input dtype where
fla stores them (the normalized q and k, Tinv, w, u, v_new, the per-chunk states h that the
products read, A_qk and the decayed operands before their products); the state carried across
chunks and returned in float32. With float64 inputs everything is float64 and nothing is rounded
(except where a mutant casts on purpose), so that the chunked code can be checked against the
sequential recurrence to ~1e-13. The backward is autograd through this code.

KERNELS maps a name "model.variant" to a Kernel (fn, model, chunk, kind "correct" / "mutant",
where: fwd (o of a single call from a zero state is wrong in exact arithmetic), state (only the
state convention shows it: initial_state read or the final state returned), bwd (the forward is
bit for bit the correct kernel's, a gradient is wrong), precision (a pure-precision bug: the same
as correct in exact arithmetic; its casts are explicit, so it differs in float64 too), and the
one-line description). `reference()` is the
token-by-token recurrence (float64, or float32 for the field's rules).
"""
import math
from dataclasses import dataclass, field, replace

import torch

__all__ = ["KERNELS", "Kernel", "reference", "make_kernel", "Cfg", "MODELS"]

MODELS = ("gdn", "kda", "mamba2")
RCP_LN2 = 1.0 / math.log(2.0)  # rounds to fla's 1.4426950216 (0x3FB8AA3B) in float32
L2_EPS = 1e-6


@dataclass(frozen=True)
class Cfg:
    C: int = 64                # chunk size
    cumsum: str = "tree"       # tree (a parallel Hillis-Steele scan, as tl.cumsum) | running
    base2: bool = True         # exp2 of log2(e)-scaled cumulative gates (fla) | natural exp
    store: str = "io"          # io: intermediates rounded to the input dtype where fla does | f32
    split_intra: int = 0       # > 0: the products over a chunk's tokens summed over sub-blocks
    states: str = "seq"        # seq: states passed chunk by chunk | segsum (mamba2: ssd_minimal)
    split_call: int = 0        # > 0: two calls, cut at T // 2 + split_call, float32 state carried
    kda_anchor: int = 0        # > 0: kda's off-diagonal sub-blocks factored at the first row of
    #                            the row sub-chunk of this size (fla's chunk_intra)
    mut: frozenset = field(default_factory=frozenset)  # mutation switches (MUTANTS)
    intra_scale: float = 1.0   # the intra-chunk term scaled by this (the sensitivity ladder)


def _l2(x, detach=False):
    n = torch.sqrt((x * x).sum(-1, keepdim=True) + L2_EPS)
    return x / (n.detach() if detach else n)


def _scan_tree(x, dim):
    """inclusive prefix sum along dim by Hillis-Steele doubling: log2(n) rounds, each a sum of
    two partial sums (a tree order, as Triton's tl.cumsum; not a running sum)"""
    n = x.shape[dim]
    off = 1
    while off < n:
        x = torch.cat([x.narrow(dim, 0, off),
                       x.narrow(dim, off, n - off) + x.narrow(dim, 0, n - off)], dim)
        off *= 2
    return x


def _scan_running(x, dim, dtype=None):
    """inclusive running sum along dim, every partial sum rounded to dtype (default x's)"""
    xs = x.to(dtype or x.dtype).unbind(dim)
    acc, out = xs[0], [xs[0]]
    for t in xs[1:]:
        acc = acc + t
        out.append(acc)
    return torch.stack(out, dim).to(x.dtype)


def _core(model, cfg, q, k, v, g, beta, scale, h0):
    """the chunked forward of the module's docstring on (B, T, H, .) inputs: (o, h_final)"""
    M = cfg.mut
    io = q.dtype
    cd = torch.float64 if io == torch.float64 else torch.float32
    rnd = cfg.store == "io" and io != cd

    def st(x):  # stored in the input dtype (where fla stores it), read back into float32
        return x.to(io).to(cd) if rnd else x

    B, T, H, d = q.shape
    dv = v.shape[-1]
    delta = model in ("gdn", "kda")
    per_ch = model == "kda"
    tr = lambda x: x.transpose(1, 2).to(cd)  # (B, T, H, .) -> (B, H, T, .)
    q, k, v = tr(q), tr(k), tr(v)
    if g is None:
        g = q.new_zeros((B, H, T, d) if per_ch else (B, H, T))
    else:
        g = tr(g)
        if per_ch and g.dim() == 3:
            g = g[..., None].expand(B, H, T, d)
    if "kda_gate_ch0" in M:
        g = g[..., :1].expand_as(g)
    if delta:
        beta = q.new_ones(B, H, T) if beta is None else tr(beta)
        if "no_qnorm" not in M:
            q = _l2(q, detach="detach_qnorm" in M)
        if "no_knorm" not in M:
            k = _l2(k)
        q, k = st(q), st(k)  # fla's l2norm_fwd writes them in the input dtype
    if scale is None:
        scale = 1.0 if model == "mamba2" else d ** -0.5
    C = cfg.C
    N = -(-T // C)
    pad = N * C - T
    if pad:  # a zero-padded last chunk: k = 0, g = 0 change nothing
        P = lambda x: torch.cat([x, x.new_zeros((x.shape[0], x.shape[1], pad) +
                                                tuple(x.shape[3:]))], 2)
        q, k, v, g = P(q), P(k), P(v), P(g)
        beta = P(beta) if delta else None
    ch = lambda x: x.reshape((B, H, N, C) + tuple(x.shape[3:]))  # chunks
    Q, K, V, Gr = ch(q), ch(k), ch(v), ch(g)
    bt = ch(beta) if delta else None

    # cumulative log-gates within each chunk (float32, reset at every chunk)
    gd = -2 if per_ch else -1  # the token axis of a gate tensor
    if "cumsum_bf16" in M:
        G = _scan_running(Gr, gd, torch.bfloat16)
    elif cfg.cumsum == "tree":
        G = _scan_tree(Gr, gd)
    else:
        G = _scan_running(Gr, gd)
    if "pad_tail_gate0" in M and pad:  # the tail of the last chunk staged as 0, read as G_C
        live = torch.arange(N * C, device=G.device).reshape(N, C) < T
        G = G * (live[..., None] if per_ch else live).to(G.dtype)
    if "no_log2e" in M:
        E = torch.exp2  # exp2 of the natural-log gates: a decay 2^g instead of e^g
    elif cfg.base2:
        G = G * RCP_LN2
        E = torch.exp2
    else:
        E = torch.exp
    if "fp16_exp" in M:  # every exponential factor rounded to float16 (range loss below 6e-5)
        Ex = lambda x: E(x).half().to(cd)
    else:
        Ex = E

    Gl = G.select(gd, C - 1)  # (B, H, N) or (B, H, N, d): the chunk's total
    Gl_ = Gl.unsqueeze(gd)
    if per_ch:
        D = G[..., :, None, :] - G[..., None, :, :]  # (B, H, N, C, C, d)
    else:
        D = G[..., :, None] - G[..., None, :]  # (B, H, N, C, C)
    ninf = torch.tensor(-float("inf"), dtype=cd)

    def decay(off):  # E(G_i - G_j) for j <= i + off, 0 above: every exponent taken under the mask
        m = torch.tril(torch.ones(C, C, dtype=torch.bool), off)
        return Ex(torch.where(m[..., None] if per_ch else m, D, ninf))

    def pair(X, Y, off):  # sum_c X_ic Y_jc E(G_ic - G_jc) for j <= i + off
        if per_ch and cfg.kda_anchor and off <= 0:
            return _pair_anchored(X, Y, G, off, cfg.kda_anchor, Ex)
        if per_ch:
            return (X[..., :, None, :] * Y[..., None, :, :] * decay(off)).sum(-1)
        return (X @ Y.transpose(-1, -2)) * decay(off)

    mask_o = -1 if "mask_strict_o" in M else (1 if "mask_plus1_o" in M else 0)
    Aqk = pair(Q, K, mask_o)
    if "detach_Aqk" in M:
        Aqk = Aqk.detach()
    if delta:
        Akk = pair(K, K, 0 if "mask_Akk_diag" in M else -1)
        if "beta_missing_A" not in M:
            Akk = bt[..., :, None] * Akk
        if "mask_Akk_diag" not in M:
            Akk = torch.tril(Akk, -1)
        I = torch.eye(C, dtype=cd)
        Tm = I - Akk if "ut_sign_flip" in M else I + Akk
        Tinv = st(torch.linalg.solve_triangular(Tm, I.expand(Tm.shape), upper=False))
        Gw = G
        if "w_exclusive" in M:  # the decay one token late: exclusive cumulative gate in w
            Gw = torch.cat([torch.zeros_like(G.narrow(gd, 0, 1)), G.narrow(gd, 0, C - 1)], gd)
        eGw = Ex(Gw)
        if "detach_gate_w" in M:
            eGw = eGw.detach()
        bw = torch.ones_like(bt) if "beta_missing_w" in M else bt
        Kw = K * (eGw * bw[..., None]) if per_ch else K * (bw * eGw)[..., None]
        w = st(Tinv @ st(Kw))
        bu = bt * bt if "beta_twice_u" in M else (bt.detach() if "detach_beta_u" in M else bt)
        u = st(Tinv @ st(V * bu[..., None]))
    eG = Ex(G)
    eGl = Ex(Gl)
    eGd = Ex(Gl_ - G)  # decay from each token to the chunk's end
    if "detach_gate_decay" in M:
        eGl = eGl.detach()
    if "no_state_decay" in M:
        eGl = torch.ones_like(eGl)
    Qi = K if "k_for_q_inter" in M else Q
    Qg = Qi * eG if per_ch else Qi * eG[..., None]  # (B, H, N, C, d)
    s_inter = 1.0 if "no_scale_inter" in M else scale
    s_intra = (1.0 if "no_scale_intra" in M else scale) * cfg.intra_scale
    sb = cfg.split_intra

    def mm(A, X):  # A (.., C, C) @ X (.., C, n), over sub-blocks of sb columns when split
        if not sb:
            return A @ X
        return sum(A[..., :, s:s + sb] @ X[..., s:s + sb, :] for s in range(0, C, sb))

    def mmT(Kd, X):  # Kd^T (.., d, C) @ X (.., C, n)
        return mm(Kd.transpose(-1, -2), X)

    h = q.new_zeros(B, H, d, dv) if h0 is None or "init_ignored" in M else h0.to(cd)

    if cfg.states == "segsum":  # mamba2 only: every chunk's own state, then passed at once
        assert model == "mamba2"
        Sloc = mmT(st(K * eGd[..., None]), V)  # (B, H, N, d, dv)
        Z = torch.cat([Gl.new_zeros(B, H, 1), _scan_running(Gl, -1)], -1)  # (B, H, N + 1)
        Dz = Z[..., :, None] - Z[..., None, :]
        mz = torch.tril(torch.ones(N + 1, N + 1, dtype=torch.bool))
        Lz = E(torch.where(mz, Dz, ninf))  # (B, H, N + 1, N + 1)
        allS = torch.cat([h[:, :, None], Sloc], 2)  # (B, H, N + 1, d, dv)
        Hin = torch.einsum("bhnm,bhmkv->bhnkv", Lz, allS)  # Hin[n]: the state entering chunk n
        O = s_inter * (Qg @ st(Hin[:, :, :N])) + s_intra * mm(st(Aqk), V)
        o = O.reshape(B, H, N * C, dv)[:, :, :T]
        return o, Hin[:, :, N]

    outs = []
    for n in range(N):
        hs = st(h)  # the per-chunk state, stored in the input dtype
        hr = hs.transpose(-1, -2) if "state_transposed" in M else hs
        if delta:
            vn = st(u[:, :, n] - w[:, :, n] @ (hr.detach() if "detach_h_vnew" in M else hr))
        else:
            vn = V[:, :, n]
        if per_ch:
            Kd = st(K[:, :, n] * eGd[:, :, n])
            h_new = eGl[:, :, n][..., :, None] * h + mmT(Kd, vn)
        else:
            vd = st(vn * eGd[:, :, n][..., None])
            h_new = eGl[:, :, n][..., None, None] * h + mmT(K[:, :, n], vd)
        if "state_after" in M:  # the read-out takes the state after this chunk's update
            hr = st(h_new)
        if "detach_h_o" in M:
            hr = hr.detach()
        o_n = s_inter * (Qg[:, :, n] @ hr) + s_intra * mm(st(Aqk[:, :, n]), vn)
        outs.append(o_n)
        if "final_state_early" in M and n == N - 1:
            break
        if "state_bf16_carry" in M:  # the state stored in bf16 between chunks
            h_new = h_new.to(torch.bfloat16).to(cd)
        if "detach_h_carry" in M:
            h_new = h_new.detach()
        h = h_new
    o = torch.stack(outs, 2).reshape(B, H, N * C, dv)[:, :, :T]
    return o, h


def _pair_anchored(X, Y, G, off, bc, Ex):
    """kda's sum_c X_ic Y_jc E(G_ic - G_jc), j <= i + off (off 0 or -1), the off-diagonal
    sub-blocks factored at the first row n of the row's sub-chunk of bc tokens,
    E(G_i - G_n) E(G_n - G_j) (both exponents <= 0), the diagonal sub-blocks pair by pair"""
    C = X.shape[-2]
    rows = []
    for r in range(0, C, bc):
        Xi, Gi = X[..., r:r + bc, :], G[..., r:r + bc, :]
        Gn = G[..., r:r + 1, :]
        parts = []
        if r:
            parts.append((Xi * Ex(Gi - Gn)) @ (Y[..., :r, :] * Ex(Gn - G[..., :r, :])).transpose(
                -1, -2))
        Dd = Gi[..., :, None, :] - Gi[..., None, :, :]
        m = torch.tril(torch.ones(bc, bc, dtype=torch.bool), off)[..., None]
        dd = Ex(torch.where(m, Dd, torch.tensor(-float("inf"), dtype=G.dtype)))
        parts.append(torch.einsum("...ic,...jc,...ijc->...ij", Xi, Y[..., r:r + bc, :], dd))
        parts.append(X.new_zeros(Xi.shape[:-1] + (C - r - bc,)))
        rows.append(torch.cat(parts, -1))
    return torch.cat(rows, -2)


def make_kernel(model, cfg, name=None):
    """fn(q, k, v, g=None, beta=None, scale=None, initial_state=None, output_final_state=False)
    in fla's convention for one model and one configuration"""
    def fn(q, k, v, g=None, beta=None, scale=None, initial_state=None,
           output_final_state=False):
        if model == "mamba2" and beta is not None:
            raise ValueError("mamba2 takes no beta")
        if cfg.split_call:
            T = q.shape[1]
            c = min(max(1, T // 2 + cfg.split_call), T - 1) if T > 1 else T
            one = replace(cfg, split_call=0)
            sl = lambda x, a, b: None if x is None else x[:, a:b]
            o1, h1 = _core(model, one, sl(q, 0, c), sl(k, 0, c), sl(v, 0, c), sl(g, 0, c),
                           sl(beta, 0, c), scale, initial_state)
            if c < T:
                o2, h = _core(model, one, sl(q, c, T), sl(k, c, T), sl(v, c, T), sl(g, c, T),
                              sl(beta, c, T), scale, h1)
                o = torch.cat([o1, o2], 2)
            else:
                o, h = o1, h1
        else:
            o, h = _core(model, cfg, q, k, v, g, beta, scale, initial_state)
        o = o.transpose(1, 2).to(q.dtype)
        return (o, h) if output_final_state else o
    fn.__name__ = name or model
    return fn


def reference(model, q, k, v, g=None, beta=None, scale=None, initial_state=None,
              output_final_state=False, dtype=torch.float64):
    """the token-by-token recurrence of the module's docstring, in dtype (float64 for the checks,
    float32 for the field's rules, as fla's naive references), on the inputs as given (cast to
    dtype); o in dtype"""
    B, T, H, d = q.shape
    dv = v.shape[-1]
    tr = lambda x: x.transpose(1, 2).to(dtype)
    q, k, v = tr(q), tr(k), tr(v)
    if model in ("gdn", "kda"):
        q, k = _l2(q), _l2(k)
        beta = q.new_ones(B, H, T) if beta is None else tr(beta)
    g = q.new_zeros(B, H, T) if g is None else tr(g)
    if scale is None:
        scale = 1.0 if model == "mamba2" else d ** -0.5
    h = q.new_zeros(B, H, d, dv) if initial_state is None else initial_state.to(dtype)
    os_ = []
    for t in range(T):
        kt, vt, qt = k[:, :, t], v[:, :, t], q[:, :, t]
        if model == "kda":
            a = torch.exp(g[:, :, t] if g.dim() == 4 else g[:, :, t, None].expand(B, H, d))
            h = a[..., :, None] * h
        else:
            h = torch.exp(g[:, :, t])[..., None, None] * h
        if model == "mamba2":
            h = h + kt[..., :, None] * vt[..., None, :]
        else:
            pred = torch.einsum("bhkv,bhk->bhv", h, kt)
            h = h + kt[..., :, None] * (beta[:, :, t, None] * (vt - pred))[..., None, :]
        os_.append(scale * torch.einsum("bhkv,bhk->bhv", h, qt))
    o = torch.stack(os_, 1)  # (B, T, H, dv)
    return (o, h) if output_final_state else o


@dataclass
class Kernel:
    name: str
    model: str
    cfg: Cfg
    kind: str        # correct | mutant
    where: str       # correct: "-"; mutant: fwd | bwd | state | precision
    desc: str
    fn: object = None

    @property
    def chunk(self):
        return self.cfg.C


# (variant, models, Cfg changes, description)
CORRECT = [
    ("c64", MODELS, {}, "fla's default: C = 64, tree cumsum, exp2 of log2(e)-scaled gates, "
     "intermediates stored in the input dtype where fla stores them; kda: the off-diagonal "
     "16-token sub-blocks factored at the row sub-chunk's first token (fla's chunk_intra), "
     "both factors <= 1, the diagonal sub-blocks pair by pair"),
    ("c16", ("gdn",), {"C": 16}, "chunk 16"),
    ("c32", ("gdn", "kda"), {"C": 32}, "chunk 32"),
    ("c128", ("gdn", "mamba2"), {"C": 128}, "chunk 128"),
    ("running_exp", ("gdn", "kda", "mamba2"), {"cumsum": "running", "base2": False},
     "running (sequential) cumulative sum of the gates, natural exp"),
    ("f32inter", ("gdn", "kda"), {"store": "f32"}, "every intermediate in float32 (nothing "
     "stored in the input dtype but o)"),
    ("split16", ("gdn", "kda"), {"split_intra": 16}, "the products over a chunk's tokens (A v, "
     "K^T v) accumulated as sums of 16-token sub-blocks (another accumulation order)"),
    ("splitcall", ("gdn", "kda", "mamba2"), {"split_call": 17}, "two calls cut at T/2 + 17 (off "
     "the chunk grid), the float32 state carried between them"),
    ("direct", ("kda",), {"kda_anchor": 0}, "kda's intra-chunk matrices pair by pair, "
     "sum_c x_ic y_jc E(G_ic - G_jc) over the whole chunk (no sub-chunk anchor; the eager "
     "PyTorch form)"),
    ("segsum", ("mamba2",), {"states": "segsum"}, "every chunk's state first, then passed to all "
     "chunks at once by the matrix of exponentials of chunk-gate differences (ssd_minimal's "
     "order)"),
]

# (variant, models, mutation switch or Cfg changes, where, description)
MUTANTS = [
    ("w_exclusive", ("gdn", "kda"), "w_exclusive", "fwd",
     "a decay one token late: exclusive instead of inclusive cumulative gate in w"),
    ("cumsum_bf16", ("gdn", "mamba2"), "cumsum_bf16", "precision",
     "gates cumulated in bf16 (every partial sum rounded to bf16)"),
    ("no_scale_inter", ("gdn", "kda"), "no_scale_inter", "fwd",
     "the scale d^-1/2 missing on the inter-chunk term q h"),
    ("no_scale_intra", ("gdn", "kda"), "no_scale_intra", "fwd",
     "the scale d^-1/2 missing on the intra-chunk term A_qk v_new"),
    ("beta_twice_u", ("gdn", "kda"), "beta_twice_u", "fwd", "beta applied twice in u"),
    ("beta_missing_w", ("gdn", "kda"), "beta_missing_w", "fwd", "beta not applied in w"),
    ("beta_missing_A", ("gdn",), "beta_missing_A", "fwd", "beta not applied in A_kk"),
    ("mask_strict_o", ("gdn", "mamba2"), "mask_strict_o", "fwd",
     "the causal mask of A_qk off by one: diagonal excluded"),
    ("mask_plus1_o", ("gdn", "kda", "mamba2"), "mask_plus1_o", "fwd",
     "the causal mask of A_qk off by one: one above the diagonal included (acausal)"),
    ("mask_Akk_diag", ("gdn", "kda"), "mask_Akk_diag", "fwd",
     "the strict mask of A_kk includes the diagonal (I + L + diag(beta |k|^2))"),
    ("no_state_decay", ("gdn", "kda", "mamba2"), "no_state_decay", "fwd",
     "the state not decayed across a chunk boundary (E(G_C) h dropped to h)"),
    ("pad_tail_gate0", ("gdn", "mamba2"), "pad_tail_gate0", "state",
     "zero-padded last chunk whose tail's cumulative gate is staged as 0 and read as G_C "
     "(transformers issue 46190 / sparkinfer PR 604 class): the final state wrong when C "
     "does not divide T"),
    ("init_ignored", ("gdn", "kda", "mamba2"), "init_ignored", "state",
     "initial_state ignored"),
    ("no_qnorm", ("gdn", "kda"), "no_qnorm", "fwd", "q not L2-normalized"),
    ("no_knorm", ("gdn",), "no_knorm", "fwd", "k not L2-normalized"),
    ("k_for_q_inter", ("gdn", "mamba2"), "k_for_q_inter", "fwd",
     "k used for q in the inter-chunk product (K E(G) h)"),
    ("ut_sign_flip", ("gdn", "kda"), "ut_sign_flip", "fwd",
     "a sign flip in the triangular solve: (I - A_kk)^-1"),
    ("state_transposed", ("gdn", "mamba2"), "state_transposed", "fwd",
     "the per-chunk state read transposed (h^T; d = dv)"),
    ("fp16_exp", ("gdn", "kda"), "fp16_exp", "precision",
     "every exponential factor rounded to float16 (range loss: subnormal below 6e-5, 0 below "
     "6e-8)"),
    ("state_bf16_carry", ("gdn", "mamba2"), "state_bf16_carry", "precision",
     "the state carried between chunks stored in bf16 instead of float32"),
    ("detach_h_vnew", ("gdn", "kda"), "detach_h_vnew", "bwd",
     "backward: .detach() on h in v_new = u - w h (forward bit for bit correct)"),
    ("detach_h_o", ("gdn", "mamba2"), "detach_h_o", "bwd",
     "backward: .detach() on h in the read-out q h"),
    ("detach_h_carry", ("gdn", "kda", "mamba2"), "detach_h_carry", "bwd",
     "backward: the state detached at every chunk boundary (truncated backpropagation)"),
    ("detach_gate_w", ("gdn", "kda"), "detach_gate_w", "bwd",
     "backward: .detach() on E(G) in w"),
    ("detach_gate_decay", ("gdn", "mamba2"), "detach_gate_decay", "bwd",
     "backward: .detach() on the chunk decay E(G_C) of the state"),
    ("detach_beta_u", ("gdn", "kda"), "detach_beta_u", "bwd", "backward: .detach() on beta in u"),
    ("detach_qnorm", ("gdn",), "detach_qnorm", "bwd",
     "backward: q's L2 norm detached (x / ||x||.detach())"),
    ("detach_Aqk", ("kda", "mamba2"), "detach_Aqk", "bwd",
     "backward: .detach() on the intra-chunk matrix A_qk"),
    ("intra_x1.005", ("gdn", "kda", "mamba2"), {"intra_scale": 1.005}, "fwd",
     "the intra-chunk term scaled by 1.005"),
    ("intra_x1.01", ("gdn", "kda", "mamba2"), {"intra_scale": 1.01}, "fwd",
     "the intra-chunk term scaled by 1.01"),
    ("intra_x1.02", ("gdn", "kda", "mamba2"), {"intra_scale": 1.02}, "fwd",
     "the intra-chunk term scaled by 1.02"),
    ("intra_x1.04", ("gdn", "kda", "mamba2"), {"intra_scale": 1.04}, "fwd",
     "the intra-chunk term scaled by 1.04"),
    ("final_state_early", ("gdn", "kda", "mamba2"), "final_state_early", "state",
     "the final state returned before the last chunk's update"),
    ("no_log2e", ("gdn", "mamba2"), "no_log2e", "fwd",
     "exp2 of the natural-log cumulative gates (the log2(e) scale forgotten: decay 2^g)"),
    ("state_after", ("gdn", "mamba2"), "state_after", "fwd",
     "state passing off by one: the read-out takes the state after the chunk's own update"),
    ("kda_gate_ch0", ("kda",), "kda_gate_ch0", "fwd",
     "kda's per-channel gate broadcast from channel 0 (a broadcasting bug)"),
]


def _build():
    ks = {}
    base = {m: Cfg(kda_anchor=16 if m == "kda" else 0) for m in MODELS}
    for var, models, ch, desc in CORRECT:
        for m in models:
            cfg = replace(base[m], **ch)
            ks["%s.%s" % (m, var)] = Kernel("%s.%s" % (m, var), m, cfg, "correct", "-", desc)
    for var, models, sw, where, desc in MUTANTS:
        for m in models:
            cfg = replace(base[m], **(sw if isinstance(sw, dict) else {"mut": frozenset([sw])}))
            ks["%s.%s" % (m, var)] = Kernel("%s.%s" % (m, var), m, cfg, "mutant", where, desc)
    for kn in ks.values():
        kn.fn = make_kernel(kn.model, kn.cfg, kn.name.replace(".", "_"))
    return ks


KERNELS = _build()
