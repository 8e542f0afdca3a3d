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
Run by tests/test_python.c with /usr/bin/python3; exit 77 without numpy or torch."""
import os
import sys

try:
    import numpy as np
    import torch
except ImportError as err:
    print("numpy or torch absent: %s" % err)
    sys.exit(77)

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, "..", "tools", "python"))
import gated_ref  # noqa: E402
import vlastab  # noqa: E402

U64 = 2.0 ** -53
H, T, d, dv = 2, 64, 16, 12
bound = 4 * np.sqrt(d * T) * U64
failed = 0


def check(ok, what):
    global failed
    failed += not ok
    print("%s %s" % ("ok  " if ok else "FAIL", what))


def torch_grads(model, x, c):
    t = {key: torch.tensor(val, dtype=torch.float64, requires_grad=True) for key, val in x.items()}
    o, _ = gated_ref.torch_seq(model, t)
    (o * torch.tensor(c)).sum().backward()
    return {key: val.grad.numpy() for key, val in t.items()}


rng = np.random.default_rng(11)
for model in ("gdn", "kda", "gla", "mamba2", "rwkv7"):
    x = gated_ref.example_inputs(model, H=H, T=T, d=d, dv=dv, seed=5)
    c = rng.standard_normal((H, T, dv))
    ref = torch_grads(model, x, c)
    ours = vlastab.grad(x["q"], x["k"], x["v"], c, model=model, precision="f64",
                        beta=x.get("beta"), logdecay=x["logdecay"], a=x.get("a"), b=x.get("b"))
    names = [("q", "dq"), ("k", "dk"), ("v", "dv"), ("logdecay", "dg")]
    names += [("beta", "dbeta")] if "beta" in x else []
    names += [("a", "da"), ("b", "db")] if "a" in x else []
    errs = {n: gated_ref.relerr(ours[g], ref[n]) for n, g in names}
    check(max(errs.values()) <= bound, "%-6s f64 against torch.autograd: %s (bound %.1e)" % (
        model, ", ".join("d%s %.1e" % (n, e) for n, e in errs.items()), bound))

# the check can fail: c a token late, and the gated family's decays' gradient negated
x = gated_ref.example_inputs("gdn", H=H, T=T, d=d, dv=dv, seed=5)
c = rng.standard_normal((H, T, dv))
ref = torch_grads("gdn", x, c)
ours = vlastab.grad(x["q"], x["k"], x["v"], np.roll(c, 1, axis=1), model="gdn", beta=x["beta"],
                    logdecay=x["logdecay"])
e = gated_ref.relerr(ours["dq"], ref["q"])
check(e > 1e3 * bound, "a c_t a token late is caught in dq (%.1e)" % e)
ours = vlastab.grad(x["q"], x["k"], x["v"], c, model="gdn", beta=x["beta"],
                    logdecay=x["logdecay"])
e = gated_ref.relerr(-ours["dg"], ref["logdecay"])
check(e > 1e3 * bound, "a negated dg is caught (%.1e)" % e)


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


for model, consts in (("rls", {}), ("vla1", {}), ("vla1", {"clip": 0.5, "clamp": 3.0}),
                      ("vla3", {})):
    lo = 0.1 if model == "vla3" else -1.0  # vla3: n . q above its floor
    x = {key: rng.uniform(lo, 1.0, (H, T, d)) for key in ("q", "k", "u")}
    x["v"] = rng.uniform(-1.0, 1.0, (H, T, dv))
    c = rng.standard_normal((H, T, dv))
    ours = vlastab.grad(x["q"], x["k"], x["v"], c, model=model, u=x["u"], features="id",
                        **consts)
    errs = {}
    for h in range(H):
        t = {key: torch.tensor(val[h], dtype=torch.float64, requires_grad=True)
             for key, val in x.items()}
        o = torch_A(model, t["q"], t["k"], t["v"], t["u"], **consts)
        (o * torch.tensor(c[h])).sum().backward()
        for key in ("q", "k", "v") + (("u",) if model != "rls" else ()):
            errs[key] = max(errs.get(key, 0), gated_ref.relerr(ours["d" + key][h][None],
                                                               t[key].grad.numpy()[None]))
    check(max(errs.values()) <= bound, "%-6s f64 against torch.autograd%s: %s (bound %.1e)" % (
        model, " " + str(consts) if consts else "",
        ", ".join("d%s %.1e" % (n, e) for n, e in errs.items()), bound))
# the check has teeth here too: a torch forward without vla3's three nudges (1e-3 I at t = 20,
# 40, 60) is told apart in every gradient, by far more than the bound
t = {key: torch.tensor(val[0], dtype=torch.float64, requires_grad=True) for key, val in x.items()}
o = torch_A("vla3", t["q"], t["k"], t["v"], t["u"], nudge=False)
(o * torch.tensor(c[0])).sum().backward()
e = min(gated_ref.relerr(ours["d" + key][0][None], t[key].grad.numpy()[None]) for key in "qkvu")
check(e > 1e3 * bound, "vla3 without its nudges is caught (the smallest relerr %.1e)" % e)
try:
    vlastab.grad(x["q"], x["k"], x["v"], c, model="vla3", track="joseph")
    check(False, "vla3's backward in --track joseph is refused")
except ValueError as err:
    check("--track sm" in str(err),
          "vla3's backward in track joseph is refused: %s" % err)

print("grad: %s" % ("passed" if not failed else "%d failed" % failed))
sys.exit(1 if failed else 0)
