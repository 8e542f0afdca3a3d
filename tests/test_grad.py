#!/usr/bin/python3
"""test_grad.py: the backward pass of vlastab (lib/recur_grad.h, vla_grad through the ctypes
binding, binary64) against torch.autograd float64 of tests/gated_ref.py's torch_seq, the gated
family written from the published recurrences (not from recur.h, which the MPFR twin shares):
the gradients of L = sum_t c_t . o_t with respect to q, k, v, beta, the log-decays and rwkv7's
a, b, on gated_ref.example_inputs (2 heads x T = 64, d = 16, dv = 12) with c drawn N(0, 1);
and rls, vla1 and vla3 (track sm: dq, dk, dv, du) against autograd of torch_A below, written
from docs/math.md sections 2.3-2.5, on uniform inputs of the same shapes.

The bound: two binary64 evaluations of the same gradients in different orders (the backward's
cotangent recurrence here, autograd's tape there) differ norm-wise by rounding errors that grow
like the square root of the operations' count with high probability (Higham and Mary 2019, as in
tests/test_gated.py): each gradient entry of step t gathers the T - t later steps, each a d- or
dv-term product, so the bound is sqrt(d T) u64 times a factor 4 for the forward and backward
passes' two recurrences (and the chain through l2norm): 4 sqrt(16 * 64) 2^-53 = 1.4e-14. The
errors printed sit near 1e-16 to 1e-15; the last checks plant slips (c a token late, the decays'
gradient of the wrong sign) that move them to 1e-1 or more.
Run under pytest by tests/test_python.c with /usr/bin/python3 (numpy, torch)."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gated_ref  # noqa: E402
import vlastab  # noqa: E402

U64 = 2.0 ** -53
H, T, d, dv = 2, 64, 16, 12
bound = 4 * np.sqrt(d * T) * U64
GATED = ("gdn", "kda", "gla", "mamba2", "rwkv7")
WITH_A = (("rls", {}), ("vla1", {}), ("vla1", {"clip": 0.5, "clamp": 3.0}), ("vla3", {}))


def draws():
    """the cotangents c of every case (and the A models' inputs), drawn from one generator in
    one order"""
    rng = np.random.default_rng(11)
    c = {m: rng.standard_normal((H, T, dv)) for m in GATED}
    c["slip"] = rng.standard_normal((H, T, dv))
    xa = []
    for model, _ in WITH_A:
        lo = 0.1 if model == "vla3" else -1.0  # vla3: n . q above its floor
        x = {key: rng.uniform(lo, 1.0, (H, T, d)) for key in ("q", "k", "u")}
        x["v"] = rng.uniform(-1.0, 1.0, (H, T, dv))
        xa.append((x, rng.standard_normal((H, T, dv))))
    return c, xa


C, XA = draws()


def torch_grads(model, x, c):
    t = {key: torch.tensor(val, dtype=torch.float64, requires_grad=True) for key, val in x.items()}
    o, _ = gated_ref.torch_seq(model, t)
    (o * torch.tensor(c)).sum().backward()
    return {key: val.grad.numpy() for key, val in t.items()}


@pytest.mark.parametrize("model", GATED)
def test_gated_against_autograd(model):
    x = gated_ref.example_inputs(model, H=H, T=T, d=d, dv=dv, seed=5)
    c = C[model]
    ref = torch_grads(model, x, c)
    ours = vlastab.grad(x["q"], x["k"], x["v"], c, model=model, precision="f64",
                        beta=x.get("beta"), logdecay=x["logdecay"], a=x.get("a"), b=x.get("b"))
    names = [("q", "dq"), ("k", "dk"), ("v", "dv"), ("logdecay", "dg")]
    names += [("beta", "dbeta")] if "beta" in x else []
    names += [("a", "da"), ("b", "db")] if "a" in x else []
    errs = {n: gated_ref.relerr(ours[g], ref[n]) for n, g in names}
    assert max(errs.values()) <= bound, "%-6s f64 against torch.autograd: %s (bound %.1e)" % (
        model, ", ".join("d%s %.1e" % (n, e) for n, e in errs.items()), bound)


def test_gated_slips_are_caught():
    """c a token late, and the gated family's decays' gradient negated"""
    x = gated_ref.example_inputs("gdn", H=H, T=T, d=d, dv=dv, seed=5)
    c = C["slip"]
    ref = torch_grads("gdn", x, c)
    ours = vlastab.grad(x["q"], x["k"], x["v"], np.roll(c, 1, axis=1), model="gdn",
                        beta=x["beta"], logdecay=x["logdecay"])
    e = gated_ref.relerr(ours["dq"], ref["q"])
    assert e > 1e3 * bound, "a c_t a token late in dq: %.1e, not beyond %.1e" % (e, 1e3 * bound)
    ours = vlastab.grad(x["q"], x["k"], x["v"], c, model="gdn", beta=x["beta"],
                        logdecay=x["logdecay"])
    e = gated_ref.relerr(-ours["dg"], ref["logdecay"])
    assert e > 1e3 * bound, "a negated dg: %.1e, not beyond %.1e" % (e, 1e3 * bound)


# The models with A (rls, vla1, vla3), written here from docs/math.md sections 2.3-2.5 (the
# equations of the seeds' documents), features id, not from recur.h: torch.autograd float64 of
# this forward against vla_grad in binary64 (track sm), the same bound.
def unit(x):
    return x / torch.linalg.norm(x)


def torch_A(model, q, k, v, u, clip=10.0, clamp=1000.0, nudge=True):
    """o (T, dv) of one head; q, k, u (T, d), v (T, dv)"""
    T, d = q.shape
    eye = torch.eye(d, dtype=torch.float64)
    A = eye * (10.0 if model == "vla3" else 1.0)  # A_0 = I / lambda0
    S = torch.zeros(v.shape[1], d, dtype=torch.float64)
    n = torch.zeros(d, dtype=torch.float64)
    out = []
    for t in range(T):
        step = t + 1  # the nudge's t counts from 1
        up = {"rls": k[t], "vla1": u[t] / d ** 0.5, "vla3": unit(u[t]) / d ** 0.5}[model]
        z = A @ up
        delta = 1 + up @ z
        if model == "vla3":
            delta = torch.clamp(delta, min=1e-4)
        A = A - torch.outer(z, z) / delta
        if model == "vla1" and step % 50 == 0:
            A = A + 1e-5 * eye
        if model == "vla3" and step % 20 == 0 and nudge:
            A = A + 1e-3 * eye
        kp = unit(k[t]) if model == "vla3" else k[t]
        alpha = A @ kp
        if model == "vla3":
            alpha = unit(alpha)
        e = v[t] - S @ kp
        if model == "vla1" and torch.linalg.norm(e) > clip:
            e = e * (clip / torch.linalg.norm(e))
        S = S + torch.outer(e, alpha)
        if model == "vla1" and (torch.linalg.norm(S) > clamp or torch.linalg.norm(A) > clamp):
            A = A + 1e-5 * eye
        if model == "vla3":
            n = n + k[t]
            out.append(S @ q[t] / torch.clamp(n @ q[t], min=1e-4))
        else:
            out.append(S @ (A @ q[t]) if model == "vla1" else S @ q[t])
    return torch.stack(out)


def autograd_A(model, consts, x, c, h, nudge=True):
    """torch.autograd's gradients of head h through torch_A"""
    t = {key: torch.tensor(val[h], dtype=torch.float64, requires_grad=True)
         for key, val in x.items()}
    o = torch_A(model, t["q"], t["k"], t["v"], t["u"], nudge=nudge, **consts)
    (o * torch.tensor(c[h])).sum().backward()
    return {key: val.grad.numpy() for key, val in t.items() if val.grad is not None}


@pytest.mark.parametrize("i", range(len(WITH_A)), ids=["rls", "vla1", "vla1-clip", "vla3"])
def test_A_models_against_autograd(i):
    (model, consts), (x, c) = WITH_A[i], XA[i]
    ours = vlastab.grad(x["q"], x["k"], x["v"], c, model=model, u=x["u"], features="id",
                        **consts)
    errs = {}
    for h in range(H):
        g = autograd_A(model, consts, x, c, h)
        for key in ("q", "k", "v") + (("u",) if model != "rls" else ()):
            errs[key] = max(errs.get(key, 0), gated_ref.relerr(ours["d" + key][h][None],
                                                               g[key][None]))
    assert max(errs.values()) <= bound, "%-6s f64 against torch.autograd%s: %s (bound %.1e)" % (
        model, " " + str(consts) if consts else "",
        ", ".join("d%s %.1e" % (n, e) for n, e in errs.items()), bound)


def test_vla3_without_nudges_is_caught():
    """a torch forward without vla3's three nudges (1e-3 I at t = 20, 40, 60) is told apart in
    every gradient, by far more than the bound"""
    x, c = XA[-1]
    ours = vlastab.grad(x["q"], x["k"], x["v"], c, model="vla3", u=x["u"], features="id")
    g = autograd_A("vla3", {}, x, c, 0, nudge=False)
    e = min(gated_ref.relerr(ours["d" + key][0][None], g[key][None]) for key in "qkvu")
    assert e > 1e3 * bound, "vla3 without its nudges: the smallest relerr %.1e, not beyond " \
        "%.1e" % (e, 1e3 * bound)


def test_vla3_backward_only_in_track_sm():
    x, c = XA[-1]
    with pytest.raises(ValueError, match="--track sm"):
        vlastab.grad(x["q"], x["k"], x["v"], c, model="vla3", track="joseph")
