#!/usr/bin/python3
"""test_loglinear.py: log-linear Mamba-2 (lib/models/loglinear.h, run through the ctypes binding)
against a naive O(T^2) numpy form written from the paper's equations (Guo, Yang et al.,
"Log-Linear Attention", 2025, section 3), not from lib/: the attention matrix masked by the
Fenwick partition of each prefix,

    o_t = sum_{s <= t} lambda_t^(l(t, s)) exp(sum_{s < r <= t} g_r) (q_t . k_s) v_s,

where the prefix [0, t] (0-based positions) is cut into buckets by walking t's bits from the
lowest: level 0 is {t}, and for each set bit b of t, from b = 0 up, the next 2^b tokens below
those already taken form level b + 1. lambda_t^(l) is u_t[l] (vlastab takes the per-level
weights from the input u's first L = min(d, 31) entries).

The bound: the read-out is a sum over at most log2(T) + 1 levels of lambda times a state read
out by a d-term dot product, each state a sum of at most T decayed rank-1 writes; two binary64
evaluations in different orders differ by at most c (d + T) u64 norm-wise in the worst case, and
with rounding errors of independent signs by about sqrt(d T) u64 (Higham and Mary, SIAM J. Sci.
Comput. 41 (2019)), the bound of tests/test_gated.py: 5.6e-15 at d = 16, T = 160. A level
assignment off by one (a bucket's tokens given the next level's weight) is caught far above it.
The chunk form (fla's chunk_log_linear_attn) is checked against the same naive form, its bound
derived below (test_chunk_against_naive).
The segment sums are summed per pair: exp(G_t - G_s) of the cumulative sums G, as fla's naive
form and SSD's segsum take them, loses u64 |G_t| (G_T = -319 here) and put the naive form itself
at 2.2e-15 from vlastab's, where the direct sums give 2.8e-16.
Run under pytest by tests/test_python.c with Debian's python3 (numpy)."""
import warnings

import numpy as np

import gated_ref
import vlastab

U64 = 2.0 ** -53
H, T, d = 2, 160, 16
bound = np.sqrt(d * T) * U64


def levels(T, shift=0):
    """lev[t, s]: the Fenwick level of token s in the prefix of t (-1 above the diagonal), by the
    walk over t's bits; shift moves every bucket but level 0 up by that many levels (a slip)"""
    lev = -np.ones((T, T), dtype=int)
    for t in range(T):
        lev[t, t] = 0
        top, b = t, 0  # tokens below top are not yet in a bucket
        while top > 0:
            if (t >> b) & 1:
                lev[t, top - (1 << b):top] = b + 1 + shift
                top -= 1 << b
            b += 1
    return lev


def naive(q, k, v, logdecay, lam, shift=0):
    """o (heads, T, dv) by the masked attention matrix, every head in binary64"""
    Hh, TT, _ = q.shape
    lev = levels(TT, shift)
    o = np.zeros((Hh, TT, v.shape[2]))
    for h in range(Hh):
        seg = np.full((TT, TT), -np.inf)  # sum_{s < r <= t} g_r, summed directly per pair
        for t in range(TT):
            seg[t, t] = 0.0
            seg[t, :t] = np.cumsum(logdecay[h, t:0:-1])[::-1]
        decay = np.exp(seg)
        w = np.zeros((TT, TT))
        on = lev >= 0
        w[on] = lam[h][np.nonzero(on)[0], np.minimum(lev[on], lam.shape[2] - 1)]
        w[lev >= lam.shape[2]] = 0.0  # (a slip past the last level weighs nothing)
        o[h] = (w * decay * (q[h] @ k[h].T)) @ v[h]
    return o


def inputs(seed=5):
    x = gated_ref.example_inputs("mamba2", H=H, T=T, d=d, dv=d, seed=seed)
    x["u"] = np.random.default_rng(seed + 1).standard_normal((H, T, d))
    return x


def ours(x, model="loglinear", precision="f64", reference=False, form="seq"):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning (an unread input, Inf) is a failure here
        return vlastab.run(x["q"], x["k"], x["v"], model=model, precision=precision,
                           u=x.get("u") if model == "loglinear" else None,
                           logdecay=x["logdecay"], reference=reference, form=form)


def test_fenwick_levels_are_the_highest_differing_bit():
    """the walk's buckets are the tokens s whose highest bit that differs from t's is b (level
    b + 1), and at most ceil(log2 T) + 1 levels occur"""
    lev = levels(64)
    for t in range(64):
        for s in range(t):
            assert lev[t, s] == (t ^ s).bit_length(), (t, s, lev[t, s])
    assert lev.max() == int(np.ceil(np.log2(64)))


def test_against_naive():
    x = inputs()
    r = ours(x)
    e = gated_ref.relerr(r["o"], naive(x["q"], x["k"], x["v"], x["logdecay"], x["u"]))
    assert e <= bound, "loglinear f64 against the naive form: o %.1e (bound %.1e)" % (e, bound)
    # S is the levels' sum: Mamba-2's state
    _, S_m = gated_ref.mamba2_seq(x["q"], x["k"], x["v"], logdecay=x["logdecay"])
    eS = gated_ref.relerr(r["S"], S_m)
    assert eS <= bound, "loglinear's S against mamba2's: %.1e (bound %.1e)" % (eS, bound)


def test_reference_against_naive():
    """a bf16 run's binary64 reference (the inputs rounded to bfloat16) against the naive form on
    the same rounded inputs"""
    x = inputs(7)
    r = ours(x, precision="bf16", reference=True)
    xr = {n: vlastab.round_to(a, "bf16") for n, a in x.items()}
    e = gated_ref.relerr(r["o_ref"], naive(xr["q"], xr["k"], xr["v"], xr["logdecay"], xr["u"]))
    assert e <= bound, "loglinear's f64 reference against the naive form: %.1e" % e


def test_every_lambda_one_is_mamba2():
    x = inputs(11)
    x["u"] = np.ones((H, T, d))
    o = ours(x)["o"]
    o_m = ours(x, model="mamba2")["o"]
    e = gated_ref.relerr(o, o_m)
    assert e <= bound, "loglinear with every lambda 1 against mamba2: %.1e (bound %.1e)" % (
        e, bound)
    o_r, _ = gated_ref.mamba2_seq(x["q"], x["k"], x["v"], logdecay=x["logdecay"])
    assert gated_ref.relerr(o, o_r) <= bound


def test_a_level_off_by_one_is_caught():
    x = inputs()
    o = ours(x)["o"]
    e = gated_ref.relerr(o, naive(x["q"], x["k"], x["v"], x["logdecay"], x["u"], shift=1))
    assert e > 1e3 * bound, "a level off by one: %.1e, not beyond %.1e" % (e, 1e3 * bound)


def test_levels_past_L_weigh_zero():
    """d = 4 gives L = 4 levels, which hold 2^3 = 8 tokens: over T = 40 the buckets of level 4
    and 5 weigh 0 (fla's kernel reads level_scales past L as 0) and leave the state"""
    x = gated_ref.example_inputs("mamba2", H=H, T=40, d=4, dv=4, seed=13)
    x["u"] = np.random.default_rng(14).standard_normal((H, 40, 4))
    o = ours(x)["o"]
    e = gated_ref.relerr(o, naive(x["q"], x["k"], x["v"], x["logdecay"], x["u"]))
    b = np.sqrt(4 * 40) * U64
    assert e <= b, "loglinear d = 4, T = 40 against the naive form: %.1e (bound %.1e)" % (e, b)


# the chunk form (fla's chunk_log_linear_attn: the intra-chunk scores weighed by their pair's
# level, then the levels of whole chunks passed between chunks, docs/gated.md) against the same
# naive form. The chunk changes the order of the sums, and takes its decays as exponentials of
# the chunk's cumulative log-decays gamma (the naive form sums each pair's directly): gamma_r is
# rounded with an absolute error of about |gamma_r| u, which exp turns into a relative one, so the
# bound is seq's plus max |gamma| u over the chunks (G_C = -150 at C = 64 here: 2.2e-14 in
# binary64). T = 160 is no multiple of 64: the last 32 tokens are a shorter chunk (vstate_finish).
def chunk_bound(logdecay, C, u):
    g = max(np.abs(logdecay[:, i:i + C].sum(1)).max() for i in range(0, logdecay.shape[1], C))
    return (np.sqrt(d * T) + g) * u


def test_chunk_against_naive():
    x = inputs(17)
    o_n = naive(x["q"], x["k"], x["v"], x["logdecay"], x["u"])
    _, S_m = gated_ref.mamba2_seq(x["q"], x["k"], x["v"], logdecay=x["logdecay"])
    for C in (2, 4, 16, 64):
        r = ours(x, form="chunk:%d" % C)
        e, eS, b = (gated_ref.relerr(r["o"], o_n), gated_ref.relerr(r["S"], S_m),
                    chunk_bound(x["logdecay"], C, U64))
        assert e <= b and eS <= b, (
            "loglinear chunk:%d f64 against the naive form: o %.1e, S %.1e (bound %.1e)" % (
                C, e, eS, b))


def test_chunk_f32_against_naive():
    """f32 against the naive form on the inputs rounded to binary32, bound as above in u32"""
    x = inputs(17)
    xr = {n: vlastab.round_to(a, "f32") for n, a in x.items()}
    o_n = naive(xr["q"], xr["k"], xr["v"], xr["logdecay"], xr["u"])
    for C in (16, 64):
        e = gated_ref.relerr(ours(x, precision="f32", form="chunk:%d" % C)["o"], o_n)
        b = chunk_bound(xr["logdecay"], C, 2.0 ** -24)
        assert e <= b, "loglinear chunk:%d f32 against the naive form: o %.1e (bound %.1e)" % (
            C, e, b)


def test_chunk_levels_past_L():
    """d = 4 (L = 4 levels, 8 tokens) in chunk:16: a chunk's own pairs reach level 4, which
    weighs 0, and the chunk's write leaves out the tokens seq has dropped by the chunk's end, so
    S is seq's levels' sum (T = 48 ends with a whole chunk of 16, or a last one of 16 in chunk:32)"""
    x = gated_ref.example_inputs("mamba2", H=H, T=48, d=4, dv=4, seed=19)
    x["u"] = np.random.default_rng(20).standard_normal((H, 48, 4))
    o_n = naive(x["q"], x["k"], x["v"], x["logdecay"], x["u"])
    S_seq = ours(x)["S"]
    b = np.sqrt(4 * 48) * U64
    for C in (4, 8, 16, 32):
        r = ours(x, form="chunk:%d" % C)
        e, eS = gated_ref.relerr(r["o"], o_n), gated_ref.relerr(r["S"], S_seq)
        assert e <= b and eS <= b, (
            "loglinear d = 4 chunk:%d against the naive form: o %.1e, against seq's S %.1e "
            "(bound %.1e)" % (C, e, eS, b))


# the seq backward (lib/models/loglinear.h's grad_loglinear, vla_grad) against torch.autograd
# float64 of the naive masked form above written in torch: the gradients of L = sum_t c_t . o_t
# with respect to q, k, v, the log-decays and lambda (u). The bound is tests/test_grad.py's:
# 4 sqrt(d T) u64 for the forward's and backward's two evaluations in different orders.
def torch_naive(t, L):
    """o (heads, T, dv) of the naive form in torch (t: q, k, v, logdecay, u tensors); the weights
    of levels L and above 0"""
    import torch
    q, k, v, g, lam = t["q"], t["k"], t["v"], t["logdecay"], t["u"]
    TT = q.shape[1]
    lev = levels(TT)
    seg = np.zeros((TT, TT, TT))  # seg[t, s, r] = 1 where s < r <= t
    for a in range(TT):
        for b in range(a):
            seg[a, b, b + 1:a + 1] = 1.0
    G = torch.einsum("tsr,hr->hts", torch.tensor(seg), g)
    on = torch.tensor((lev >= 0) & (lev < L))
    li = torch.tensor(np.clip(lev, 0, L - 1))
    w = torch.gather(lam[:, :, :L], 2, li.unsqueeze(0).expand(q.shape[0], TT, TT))
    w = torch.where(on, w, torch.zeros_like(w))
    return (w * torch.exp(torch.where(on, G, torch.zeros_like(G))) * (q @ k.transpose(1, 2))) @ v


def autograd(x, c, L):
    import torch
    t = {n: torch.tensor(a, dtype=torch.float64, requires_grad=True) for n, a in x.items()}
    (torch_naive(t, L) * torch.tensor(c)).sum().backward()
    return {n: a.grad.numpy() for n, a in t.items()}


def grad_errs(x, c, d_, form="seq", precision="f64"):
    """vlastab's gradients in form and precision (the inputs rounded to it) against torch.autograd
    of the naive form on the same inputs, relative, per input"""
    if precision != "f64":
        x = {n: vlastab.round_to(a, precision) for n, a in x.items()}
        c = vlastab.round_to(c, precision)
    ref = autograd(x, c, min(d_, 31))
    ours = vlastab.grad(x["q"], x["k"], x["v"], c, model="loglinear", precision=precision,
                        logdecay=x["logdecay"], u=x["u"], form=form)
    return {n: gated_ref.relerr(ours[g], ref[n]) for n, g in
            (("q", "dq"), ("k", "dk"), ("v", "dv"), ("logdecay", "dg"), ("u", "du"))}


def grad_inputs(T_, d_, dv, seed):
    """loglinear's inputs (mamba2's draws, u N(0, 1)) and a cotangent c, from seeds seed..seed + 2"""
    x = gated_ref.example_inputs("mamba2", H=H, T=T_, d=d_, dv=dv, seed=seed)
    x["u"] = np.random.default_rng(seed + 1).standard_normal((H, T_, d_))
    return x, np.random.default_rng(seed + 2).standard_normal((H, T_, dv))


def test_backward_against_autograd():
    pytest = __import__("pytest")
    pytest.importorskip("torch")
    TT = 64
    x, c = grad_inputs(TT, d, 12, 23)
    b = 4 * np.sqrt(d * TT) * U64
    errs = grad_errs(x, c, d)
    assert max(errs.values()) <= b, "loglinear f64 against torch.autograd: %s (bound %.1e)" % (
        ", ".join("d%s %.1e" % (n, e) for n, e in errs.items()), b)
    # d = 4: L = 4 levels over T = 40, the dropped buckets' gradients 0
    x, c = grad_inputs(40, 4, 4, 26)
    b = 4 * np.sqrt(4 * 40) * U64
    errs = grad_errs(x, c, 4)
    assert max(errs.values()) <= b, "loglinear d = 4 against torch.autograd: %s (bound %.1e)" % (
        ", ".join("d%s %.1e" % (n, e) for n, e in errs.items()), b)


# the chunk backward (lib/models/loglinear.h's gradchunk_loglinear: chunk_loglinear's operations
# in reverse, vla_grad with form chunk:C) against the same torch.autograd float64 of the naive
# form. The bound: the seq backward's 4 sqrt(d T) u, plus the chunk's exponentials of the
# cumulative log-decays gamma, each off by |gamma| u relative (chunk_bound above), which the
# gradients carry as the read-outs do: 4 (sqrt(d T) + max |gamma_C|) u. T = 100 leaves a last
# chunk of 4 tokens at C = 16 and of 36 at C = 64; d = 4 (L = 4 levels, 8 tokens) drops buckets
# inside a chunk and between chunks.
def grad_chunk_bound(logdecay, d_, C, u):
    TT = logdecay.shape[1]
    g = max(np.abs(logdecay[:, i:i + C].sum(1)).max() for i in range(0, TT, C))
    return 4 * (np.sqrt(d_ * TT) + g) * u


def test_chunk_backward_against_autograd():
    pytest = __import__("pytest")
    pytest.importorskip("torch")
    TT = 100
    x, c = grad_inputs(TT, d, 12, 29)
    for C in (2, 4, 16, 64):
        errs = grad_errs(x, c, d, "chunk:%d" % C)
        b = grad_chunk_bound(x["logdecay"], d, C, U64)
        assert max(errs.values()) <= b, (
            "loglinear chunk:%d f64 against torch.autograd: %s (bound %.1e)" % (
                C, ", ".join("d%s %.1e" % (n, e) for n, e in errs.items()), b))
    x, c = grad_inputs(40, 4, 4, 32)
    for C in (4, 8, 16):
        errs = grad_errs(x, c, 4, "chunk:%d" % C)
        b = grad_chunk_bound(x["logdecay"], 4, C, U64)
        assert max(errs.values()) <= b, (
            "loglinear d = 4 chunk:%d against torch.autograd: %s (bound %.1e)" % (
                C, ", ".join("d%s %.1e" % (n, e) for n, e in errs.items()), b))


def test_chunk_backward_f32_against_autograd():
    """f32 against autograd float64 on the inputs (and c) rounded to binary32, bound as above in
    u32"""
    pytest = __import__("pytest")
    pytest.importorskip("torch")
    TT = 100
    x, c = grad_inputs(TT, d, 12, 29)
    for C in (16, 64):
        errs = grad_errs(x, c, d, "chunk:%d" % C, "f32")
        b = grad_chunk_bound(vlastab.round_to(x["logdecay"], "f32"), d, C, 2.0 ** -24)
        assert max(errs.values()) <= b, (
            "loglinear chunk:%d f32 against torch.autograd: %s (bound %.1e)" % (
                C, ", ".join("d%s %.1e" % (n, e) for n, e in errs.items()), b))
