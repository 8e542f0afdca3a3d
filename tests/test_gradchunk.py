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
Run under pytest by tests/test_python.c with /usr/bin/python3 (numpy, torch)."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gated_ref  # noqa: E402
import vlastab  # noqa: E402

U64 = 2.0 ** -53
H, d, dv = 2, 16, 12
CASES = (("gdn", 64, 16), ("gdn", 64, 32), ("gdn", 56, 16), ("delta", 56, 16), ("kda", 56, 16),
         ("gla", 56, 16), ("mamba2", 56, 16))
# the cotangents c of every case and of the slip, drawn from one generator in one order
_rng = np.random.default_rng(12)
COT = [_rng.standard_normal((H, T, dv)) for _, T, _ in CASES] + [_rng.standard_normal((H, 64, dv))]


def torch_grads(name, x, c, C):
    t = {key: torch.tensor(val, dtype=torch.float64, requires_grad=True) for key, val in x.items()}
    o = gated_ref.torch_chunk(name, t, C)
    (o * torch.tensor(c)).sum().backward()
    return {key: val.grad.numpy() for key, val in t.items()}


@pytest.mark.parametrize("i", range(len(CASES)), ids=["%s-T%d-chunk%d" % c for c in CASES])
def test_chunk_backward_against_autograd(i):
    (name, T, C), c = CASES[i], COT[i]
    x = gated_ref.example_inputs("gdn" if name == "delta" else name, H=H, T=T, d=d, dv=dv, seed=6)
    if name == "delta":
        del x["logdecay"]
    ref = torch_grads(name, x, c, C)
    extra = {"features": "id"} if name == "delta" else {}
    ours = vlastab.grad(x["q"], x["k"], x["v"], c, model=name, precision="f64", beta=x.get("beta"),
                        logdecay=x.get("logdecay"), form="chunk:%d" % C, normalize="off", **extra)
    names = [("q", "dq"), ("k", "dk"), ("v", "dv")] + ([("beta", "dbeta")] if "beta" in x else [])
    names += [("logdecay", "dg")] if "logdecay" in x else []
    errs = {n: gated_ref.relerr(ours[g], ref[n]) for n, g in names}
    bound = 4 * np.sqrt(d * T) * U64
    assert max(errs.values()) <= bound, "%-5s T = %d chunk:%d f64 against torch.autograd: %s " \
        "(bound %.1e)" % (name, T, C, ", ".join("d%s %.1e" % (n, e) for n, e in errs.items()),
                          bound)


def test_slip_is_caught():
    """c a token late"""
    x = gated_ref.example_inputs("gdn", H=H, T=64, d=d, dv=dv, seed=6)
    c = COT[-1]
    ref = torch_grads("gdn", x, c, 16)
    ours = vlastab.grad(x["q"], x["k"], x["v"], np.roll(c, 1, axis=1), model="gdn",
                        beta=x["beta"], logdecay=x["logdecay"], form="chunk:16")
    e = gated_ref.relerr(ours["dq"], ref["q"])
    bound = 4 * np.sqrt(d * 64) * U64
    assert e > 1e3 * bound, "a c_t a token late in dq: %.1e, not beyond %.1e" % (e, 1e3 * bound)


def test_rwkv7_chunk_backward_refused():
    r = gated_ref.example_inputs("rwkv7", H=H, T=64, d=d, dv=dv, seed=6)
    with pytest.raises(ValueError, match=r"for .*rwkv7.*: --form seq"):
        vlastab.grad(r["q"], r["k"], r["v"], COT[-1], model="rwkv7", logdecay=r["logdecay"],
                     a=r["a"], b=r["b"], form="chunk:16")
