#!/usr/bin/python3
"""test_gated.py: the gated family's binary64 trajectories in vlastab (lib/models/, run through the
ctypes binding) against tests/gated_ref.py, a numpy implementation written from the published
equations and the kernels' algorithms (docs/gated.md), not from lib/recur.h: the MPFR twin shares
recur.h's text and cannot catch a transcription slip; this can.

For each model, on inputs in the published layers' ranges (gated_ref.example_inputs: 2 heads x
T = 160, d = 16):
  - seq (f64) against gated_ref's seq: every read-out and the final state;
  - scan (f64) against gated_ref's seq (an associative reordering of the same recurrence);
  - chunk:C (f64, every model: rwkv7's the DPLR chunk) against gated_ref's chunk: every
    token's read-out (the chunk's masked intra-chunk part included) and the final state.
The bound: two binary64 evaluations of one recurrence in different orders differ by at most
c d T u64 norm-wise in the worst case (d = 16 terms per product, T = 160 steps, u64 = 2^-53), but
rounding errors of independent signs grow like the square root of the number of operations with
high probability (Higham and Mary, SIAM J. Sci. Comput. 41 (2019)), so the bound used is
sqrt(d T) u64 = 5.6e-15: the measured errors sit near 3e-16, and a wrong sign, a missing
decay or a transposed gate moves them to 1e-2 or more (the last checks plant such slips).
Run under pytest by tests/test_python.c with Debian's python3 (numpy)."""
import warnings

import numpy as np
import pytest

import gated_ref
import vlastab

U64 = 2.0 ** -53
T, d = 160, 16
bound = np.sqrt(d * T) * U64


def inputs(model, T=160, d=16, seed=3):
    x = gated_ref.example_inputs(model, H=2, T=T, d=d, dv=d, seed=seed)
    return x


def ref_seq(model, x):
    f = getattr(gated_ref, model + "_seq")
    args = dict(q=x["q"], k=x["k"], v=x["v"], logdecay=x.get("logdecay"))
    if model in ("gdn", "kda"):
        args["beta"] = x["beta"]
    if model == "rwkv7":
        args["a"], args["b"] = x["a"], x["b"]
    return f(**args)


def ref_chunk(model, x, C):
    f = getattr(gated_ref, model + "_chunk")
    args = dict(q=x["q"], k=x["k"], v=x["v"], logdecay=x.get("logdecay"), C=C)
    if model in ("gdn", "kda"):
        args["beta"] = x["beta"]
    if model == "rwkv7":
        args["a"], args["b"] = x["a"], x["b"]
    return f(**args)


def ours(model, x, form="seq"):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning (an unread input, Inf) is a failure here
        r = vlastab.run(x["q"], x["k"], x["v"], model=model, precision="f64", form=form,
                        beta=x.get("beta"), logdecay=x.get("logdecay"), a=x.get("a"),
                        b=x.get("b"), reference=False)
    return r["o"], r["S"]


@pytest.mark.parametrize("model", ["gdn", "kda", "gla", "mamba2", "rwkv7"])
def test_against_gated_ref(model):
    x = inputs(model, T, d)
    o_ref, S_ref = ref_seq(model, x)
    for form in ("seq", "scan"):
        o, S = ours(model, x, form)
        eo, eS = gated_ref.relerr(o, o_ref), gated_ref.relerr(S, S_ref)
        assert eo <= bound and eS <= bound, \
            "%-6s %-5s f64 against gated_ref seq: o %.1e, S %.1e (bound %.1e)" % (
                model, form, eo, eS, bound)
    for C in (4, 16, 32):
        o_c, S_c = ref_chunk(model, x, C)
        o, S = ours(model, x, "chunk:%d" % C)
        eo = gated_ref.relerr(o, o_c)  # every token's read-out, the masked ones too
        eS = gated_ref.relerr(S, S_c)
        assert eo <= bound and eS <= bound, \
            "%-6s chunk:%-3d f64 against gated_ref chunk: o %.1e, S %.1e (bound %.1e)" % (
                model, C, eo, eS, bound)


def chunk32(model, sets):
    x = inputs(model, T, d)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = vlastab.run(x["q"], x["k"], x["v"], model=model, precision="f64", form="chunk:32",
                        beta=x["beta"], logdecay=x["logdecay"], reference=False, **sets)
    return x, r


# the exponent-range knobs of the chunk forms (docs/forms.md) against gated_ref's own chunk
# algorithm, written from fla's kernels: base 2 (exp2 of cumsum(g) * RCP_LN2, RCP_LN2 the binary32
# 1/ln 2) in gdn and kda, and kda's safe_gate anchor (sub-chunks of 16, the diagonal sub-blocks
# anchored at row 8, the off-diagonal ones at the row sub-chunk's first row), on the same bound
@pytest.mark.parametrize("model, sets, ref_kw", [
    ("gdn", dict(base="2"), dict(base="2")),
    ("kda", dict(base="2"), dict(base="2")),
    ("kda", dict(anchor="mid", anchor_block=16, base="2"), dict(anchor="mid", base="2")),
    ("kda", dict(anchor="first", anchor_block=16), dict())])
def test_chunk_exponent_knobs(model, sets, ref_kw):
    x, r = chunk32(model, sets)
    o_c, S_c = gated_ref.MODELS[model].chunk(q=x["q"], k=x["k"], v=x["v"], beta=x["beta"],
                                             logdecay=x["logdecay"], C=32, **ref_kw)
    eo, eS = gated_ref.relerr(r["o"], o_c), gated_ref.relerr(r["S"], S_c)
    assert eo <= bound and eS <= bound, \
        "%-6s chunk:32 %-40s f64 against gated_ref chunk: o %.1e, S %.1e (bound %.1e)" % (
            model, " ".join("%s=%s" % kv for kv in sets.items()), eo, eS, bound)


def test_base_2_is_not_base_e():
    """fla's exponent is off by 1.3e-8 relative, far above the bound"""
    x, r = chunk32("kda", dict(base="2"))
    o_e, _ = gated_ref.kda.chunk(q=x["q"], k=x["k"], v=x["v"], beta=x["beta"],
                                 logdecay=x["logdecay"], C=32)
    e = gated_ref.relerr(r["o"], o_e)
    assert e > 10 * bound, "base 2 differs from base e by %.1e, not beyond 10 x %.1e" % (e, bound)


# the check can fail: the same inputs with one planted slip each (the gates shifted by one token,
# the low-rank pair swapped, beta halved) are far outside the bound
def test_planted_slips_are_caught():
    x = inputs("gdn", T, d)
    o_ref, _ = ref_seq("gdn", x)
    o, _ = ours("gdn", dict(x, logdecay=np.roll(x["logdecay"], 1, axis=1)))
    e = gated_ref.relerr(o, o_ref)
    assert e > 1e3 * bound, "a gdn whose gates are a token late: %.1e, not beyond %.1e" % (
        e, 1e3 * bound)
    x = inputs("rwkv7", T, d)
    o_ref, _ = ref_seq("rwkv7", x)
    o, _ = ours("rwkv7", dict(x, a=x["b"], b=x["a"]))
    e = gated_ref.relerr(o, o_ref)
    assert e > 1e3 * bound, "an rwkv7 with a and b swapped: %.1e, not beyond %.1e" % (
        e, 1e3 * bound)
    o_c, _ = ref_chunk("rwkv7", x, 16)
    o, _ = ours("rwkv7", dict(x, logdecay=np.roll(x["logdecay"], 1, axis=1)), "chunk:16")
    e = gated_ref.relerr(o, o_c)
    assert e > 1e3 * bound, "an rwkv7 chunk:16 whose gates are a token late: %.1e, not beyond " \
        "%.1e" % (e, 1e3 * bound)
    x = inputs("kda", T, d)
    o_ref, _ = ref_seq("kda", x)
    o, _ = ours("kda", dict(x, beta=x["beta"] / 2))
    e = gated_ref.relerr(o, o_ref)
    assert e > 1e3 * bound, "a kda with beta halved: %.1e, not beyond %.1e" % (e, 1e3 * bound)
