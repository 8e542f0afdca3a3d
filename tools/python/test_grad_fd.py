"""vlastab.grad against central differences of vlastab.run in binary64, for every model of the
binding's list (vlastab.models()) with its default feature map, and with features=own where the
model's feature map takes q or k: every gradient is that of the input as given (q and k raw,
before phi; k's part through u = k when u is absent), and a gradient that is not finite is a
RuntimeWarning, as run()'s state is (tests/test_python.c runs it under pytest).

The check, per entry x of an input at four steps (the first, two inside, the last):
|g - FD(h)| <= 2 (|FD(2h) - FD(h)| / 3 + E / h), FD(h) = (L(x + h) - L(x - h)) / 2h, L = sum_t
c_t . o_t of run(precision="f64"). The truncation of FD(h) is h^2 f'''/6 + O(h^4), and FD(2h) -
FD(h) = 3 h^2 f'''/6, so |FD(2h) - FD(h)| / 3 estimates it; E bounds the binary64 rounding of L
at one point, E = n u64 sum |c_t,i o_t,i| with n = T (3 d + dv) + T dv + 1: a read-out of step t
gathers at most t steps of d- and dv-long dot products and updates (3 d + dv operations a step,
the linear model's count; the models with A and the l2norm are within it at this d), then the
T dv products with c and their sum. Two points, over 2h: E / h. The step h = cbrt(3 E / M) with
M = max |L| is the one that balances h^2 f'''/6 against E / h for f''' of L's scale, rounded
down to a power of two so that x +- h is exact; the gradients are O(1) and the planted bug
(dq of phi(q) instead of q) moves them by 0.2 to 1.6 relative, some 10^6 bounds."""
import ctypes
import os
import warnings

import numpy as np
import pytest

import vlastab

H, T, d, dv = 1, 12, 4, 4
U64 = 2.0 ** -53
STEPS = (0, T // 3, 2 * T // 3, T - 1)
_L = vlastab.library
_abi = vlastab._abi


def reads(model, **constants):
    """the inputs the model reads (the bits of VLA_MODELS' reads column, vla_model_reads)"""
    c = vlastab._configure(model, "f64", "sm", True, d, dv, dict(constants))
    return _L.vla_model_reads(vlastab.ctypes.byref(c))


def inputs(model, seed):
    """the model's inputs, each entry of q and k at least 0.05 from phi's kink at 0 (phi'' jumps
    there) and both signs present, the gates and rates inside their ranges by far more than 2h"""
    rng = np.random.default_rng(seed)
    bits = reads(model)

    def away(shape):
        x = rng.uniform(-1, 1, shape)
        return np.sign(x) * (0.05 + 0.95 * np.abs(x))
    x = {"q": away((H, T, d)), "k": away((H, T, d)), "v": rng.uniform(-1, 1, (H, T, dv))}
    if bits & _abi.VLA_IN_U:
        x["u"] = rng.uniform(-1, 1, (H, T, d))
    if bits & _abi.VLA_IN_BETA:
        x["beta"] = rng.uniform(0.2, 0.9, (H, T))
    if bits & _abi.VLA_IN_LOGDECAY_D:  # one per key channel
        x["logdecay"] = -rng.uniform(0.01, 0.5, (H, T, d))
    elif bits & _abi.VLA_IN_LOGDECAY:  # a scalar per token
        x["logdecay"] = -rng.uniform(0.01, 0.5, (H, T))
    if bits & _abi.VLA_IN_A:  # rwkv7's low rank
        x["a"] = rng.uniform(-0.3, 0.3, (H, T, d))
    if bits & _abi.VLA_IN_B:
        x["b"] = rng.uniform(-0.3, 0.3, (H, T, d))
    return x


def loss(model, x, c, constants):
    """L = sum c . o of the binary64 forward, and sum |c o|"""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (an unread input would warn: none is given here)
        a = dict(x)
        o = vlastab.run(a.pop("q"), a.pop("k"), a.pop("v"), model=model, precision="f64",
                        reference=False, **a, **constants)["o"]
    return float(np.sum(c * o)), float(np.sum(np.abs(c * o)))


def fd(model, x, c, constants, name, i, h):
    """the central difference of L in the entry x[name][i]"""
    x0 = x[name][i]
    x[name][i] = x0 + h
    lp, mag = loss(model, x, c, constants)
    x[name][i] = x0 - h
    lm, _ = loss(model, x, c, constants)
    x[name][i] = x0
    return (lp - lm) / (2 * h), mag


def cases():
    """(model, constants, u given, seed) of every model of the binding's list, its default feature
    map and features=own where the model's map takes q or k; without u where the model reads it
    (u = k, and dk is all of dL/dk)"""
    out = []
    for mi, model in enumerate(vlastab.models()):
        if _L.vla_grad_check(ctypes.byref(vlastab._configure(model, "f64", "sm", True, d, dv, {})),
                             None):
            continue  # a model without a backward: vla_grad_check refuses it
        own = _L.vla_model_phi(vlastab._configure(model, "f64", "sm", True, d, dv, {}).model)
        default_id = vlastab._configure(model, "f64", "sm", True, d, dv, {}).features == \
            _abi.VLA_FEAT_ID
        variants = [{}] + ([{"features": "own"}] if default_id and own else [])
        for vi, constants in enumerate(variants):
            out.append((model, constants, True, 7 + 10 * mi + vi))
        if reads(model) & _abi.VLA_IN_U:
            out.append((model, {}, False, 7 + 10 * mi + 5))
    return out


@pytest.mark.parametrize("model, constants, u_given, seed", cases(),
                         ids=lambda v: None if not isinstance(v, dict) else
                         ",".join("%s=%s" % kv for kv in v.items()) or "default")
def test_grad_against_finite_differences(model, constants, u_given, seed):
    x = inputs(model, seed)
    if not u_given:
        x.pop("u", None)
    rng = np.random.default_rng(seed + 1000)
    c = rng.uniform(-1, 1, (H, T, dv))
    a = dict(x)
    # every model of the list has a backward in the seq form: a ValueError fails the test
    g = vlastab.grad(a.pop("q"), a.pop("k"), a.pop("v"), c, model=model, precision="f64", **a,
                     **constants)
    L, mag = loss(model, x, c, constants)
    E = (T * (3 * d + dv) + T * dv + 1) * U64 * mag
    h = 2.0 ** np.floor(np.log2(np.cbrt(3 * E / max(abs(L), mag, 1e-300))))
    worst, gmax, name_of, bad = 0.0, 0.0, "", []
    for name in x:
        gname = "d" + name if name != "logdecay" else "dg"
        for t in STEPS:
            for j in range(x[name].shape[2] if x[name].ndim == 3 else 1):
                i = (0, t, j) if x[name].ndim == 3 else (0, t)
                gi = g[gname][i]
                f1, _ = fd(model, x, c, constants, name, i, h)
                f2, _ = fd(model, x, c, constants, name, i, 2 * h)
                bound = abs(f2 - f1) / 3 + E / h
                ratio = abs(gi - f1) / bound
                if ratio > worst:
                    worst, name_of = ratio, "%s%s" % (gname, list(i))
                gmax = max(gmax, abs(gi))
                if not abs(gi - f1) <= 2 * bound:
                    bad.append("%s%s%s: %s%s = %.17g, the finite difference %.17g (|diff| %.3g "
                               "> 2 x bound %.3g)" % (
                                   model, "".join(" %s=%s" % kv for kv in constants.items()),
                                   "" if u_given else " (u absent: u = k)", gname, list(i), gi,
                                   f1, abs(gi - f1), bound))
    assert not bad, "\n".join(bad)
    assert gmax > 1e-2, "%s: the gradients are too small to test (%.3g)" % (model, gmax)
    if os.environ.get("VLA_TEST_VERBOSE"):
        print("grad fd %s %s%s: h %g, worst |g - FD| / bound %.3g (%s)" % (
            model, constants, "" if u_given else " u absent", h, worst, name_of))


def test_nonfinite_gradients_warn():
    """a gradient that is not finite is a RuntimeWarning, as run()'s state is, and nonfinite says
    where"""
    rng = np.random.default_rng(11)
    q, k, v = (rng.uniform(-1, 1, (2, 8, 4)) for _ in range(3))
    c = rng.uniform(-1, 1, (2, 8, 4))
    c[1, 5] = 6e4  # in binary16 c_t rounds to 6e4, and its products overflow
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        g = vlastab.grad(q, k, v, c, model="delta", precision="f64")
    assert not w and "nonfinite" in g and not g["nonfinite"].any(), \
        "a finite f64 backward warned: %s" % [str(m.message) for m in w]
    with pytest.warns(Warning) as w:
        g = vlastab.grad(q, k, v, c * 30, model="delta", precision="f16")
    words = ("vlastab.grad", "not finite", "head 1")
    assert any(all(x in str(m.message) for x in words) for m in w), \
        "f16 gradients that overflow: no warning with %s (%s)" % (
            words, [str(m.message) for m in w])
    assert "nonfinite" in g and g["nonfinite"][0] == 0 and g["nonfinite"][1] == 6, \
        "nonfinite %s, expected [0 6] (head 1's c_6 overflows)" % g.get("nonfinite")
    assert not np.isfinite(g["dq"][1]).all(), "the warning's gradients are finite"
    with pytest.raises(ValueError, match="sm"):
        vlastab.grad(q, k, v, c, model="vla3", track="joseph")
