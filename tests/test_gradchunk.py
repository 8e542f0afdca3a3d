#!/usr/bin/python3
"""test_gradchunk.py: the chunk form's backward of vlastab (lib/recur_gradchunk.h, vla_grad with
form chunk:C through the ctypes binding, binary64) against torch.autograd float64 of
tests/gated_ref.py's torch_chunk, gdn's chunked algorithm written from the published equations
(not from recur.h, which the MPFR twin shares): the gradients of L = sum_t c_t . o_t with respect
to q, k, v, beta and the log-decays, on gated_ref.example_inputs (2 heads x T = 64, d = 16,
dv = 12, C = 16 and a C = 32 that leaves no partial chunk, C = 16 at T = 56 that does), c drawn
N(0, 1); the delta rule's chunk (no decay, unit keys), kda's (a decay per key channel), gla's and
mamba2's (no UT transform).

The bound, as tests/test_grad.py's: two binary64 evaluations of the same gradients in different
orders differ norm-wise by rounding errors growing like the square root of the operations'
count, sqrt(d T) u64, times 4 for the two passes and the norms' chain: 1.4e-14. The last check
plants a slip (c a token late) that moves the error to 1e-1 or more.
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
H, d, dv = 2, 16, 12
failed = 0


def check(ok, what):
    global failed
    failed += not ok
    print("%s %s" % ("ok  " if ok else "FAIL", what))


def torch_grads(name, x, c, C):
    t = {key: torch.tensor(val, dtype=torch.float64, requires_grad=True) for key, val in x.items()}
    o = gated_ref.torch_chunk(name, t, C)
    (o * torch.tensor(c)).sum().backward()
    return {key: val.grad.numpy() for key, val in t.items()}


rng = np.random.default_rng(12)
for name, T, C in (("gdn", 64, 16), ("gdn", 64, 32), ("gdn", 56, 16), ("delta", 56, 16),
                   ("kda", 56, 16), ("gla", 56, 16), ("mamba2", 56, 16)):
    x = gated_ref.example_inputs("gdn" if name == "delta" else name, H=H, T=T, d=d, dv=dv, seed=6)
    if name == "delta":
        del x["logdecay"]
    c = rng.standard_normal((H, T, dv))
    ref = torch_grads(name, x, c, C)
    extra = {"features": "id"} if name == "delta" else {}
    ours = vlastab.grad(x["q"], x["k"], x["v"], c, model=name, precision="f64", beta=x.get("beta"),
                        logdecay=x.get("logdecay"), form="chunk:%d" % C, normalize="off", **extra)
    names = [("q", "dq"), ("k", "dk"), ("v", "dv")] + ([("beta", "dbeta")] if "beta" in x else [])
    names += [("logdecay", "dg")] if "logdecay" in x else []
    errs = {n: gated_ref.relerr(ours[g], ref[n]) for n, g in names}
    bound = 4 * np.sqrt(d * T) * U64
    check(max(errs.values()) <= bound, "%-5s T = %d chunk:%d f64 against torch.autograd: %s "
          "(bound %.1e)" % (name, T, C, ", ".join("d%s %.1e" % (n, e) for n, e in errs.items()),
                            bound))

x = gated_ref.example_inputs("gdn", H=H, T=64, d=d, dv=dv, seed=6)
c = rng.standard_normal((H, 64, dv))
ref = torch_grads("gdn", x, c, 16)
ours = vlastab.grad(x["q"], x["k"], x["v"], np.roll(c, 1, axis=1), model="gdn", beta=x["beta"],
                    logdecay=x["logdecay"], form="chunk:16")
e = gated_ref.relerr(ours["dq"], ref["q"])
check(e > 1e3 * 4 * np.sqrt(d * 64) * U64, "a c_t a token late is caught in dq (%.1e)" % e)
try:
    r = gated_ref.example_inputs("rwkv7", H=H, T=64, d=d, dv=dv, seed=6)
    vlastab.grad(r["q"], r["k"], r["v"], c, model="rwkv7", logdecay=r["logdecay"], a=r["a"],
                 b=r["b"], form="chunk:16")
    check(False, "rwkv7's chunk backward is refused")
except ValueError as err:
    check("rwkv7: --form seq" in str(err), "rwkv7's chunk backward is refused: %s" % err)

print("gradchunk: %s" % ("passed" if not failed else "%d failed" % failed))
sys.exit(1 if failed else 0)
