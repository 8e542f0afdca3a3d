"""bench/mutants: every correct kernel matches the float64 token-by-token recurrence in float64,
every mutant differs from it. No vla-check needed. pytest bench/mutants/test_mutants.py, or
without pytest: /usr/bin/python3 bench/mutants/test_mutants.py (the same tests, a line each).

Bound for the correct kernels (float64 inputs: the chunked code runs in float64 and rounds
nothing): each entry of o, S and the gradients is a chain of inner products of length at most
n = C + d (the Gram and q k^T products over d, the intra-chunk and state products over C tokens,
the triangular solve over C rows) per chunk, so its forward error is at most about
gamma_n = n u64 times the norms involved, u64 = 2^-53 = 1.1e-16. Through N chunks the errors add
(the decays and the projections I - beta k k^T do not amplify them), the triangular inverse and
the backward multiply by a growth kappa that is small for normalized keys and beta < 1 (|Tinv_ij|
<= 1: docs/gated.md, FlashKDA (c)); mamba2's unnormalized keys enter with |k|^2 ~ d. With
C <= 128, d = 8, N <= 2, kappa <= 100 and a factor 4 for the forward-plus-backward chain:
4 (128 + 8) u64 2 100 = 1.2e-11 relative, norm-wise; we test 1e-10, and measured 1e-15.
A mutant must differ by more than 1e-6 (relative, norm-wise) where it declares (o, the final
state, or a gradient), 10^4 times the bound: the smallest measured difference is the fp16
exponentials' 2e-4.
"""
import os
import sys

import torch

try:
    import pytest
except ImportError:  # Debian's /usr/bin/python3 may have no pytest: run this file as a script
    pytest = None


def _param(arg, values):
    """pytest's parametrize where pytest is, and the values kept for the script's own runner"""
    def deco(f):
        f.params = values
        return pytest.mark.parametrize(arg, values)(f) if pytest else f
    return deco


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kernels import KERNELS, reference  # noqa: E402

B, T, H, d = 1, 150, 2, 8
TOL_CORRECT = 1e-10
TOL_MUTANT = 1e-6
torch.set_num_threads(1)


def _inputs(model, seed=0):
    gen = torch.Generator().manual_seed(seed)
    r = lambda *s: torch.randn(*s, generator=gen, dtype=torch.float64)
    q, k, v = r(B, T, H, d), r(B, T, H, d), r(B, T, H, d)
    if model == "mamba2":
        k = k / d ** 0.5  # B dt: keeps the undamped mamba2 state at O(1)
    g = -0.1 * torch.nn.functional.softplus(r(B, T, H, d) if model == "kda" else r(B, T, H))
    beta = None if model == "mamba2" else torch.sigmoid(r(B, T, H))
    S0 = r(B, H, d, d)
    return q, k, v, g, beta, S0


def _run(f, model, xs, do, dS):
    """(o, S, [grads of q, k, v, g, beta, S0]) of f on leaf copies of xs, loss o.do + S.dS"""
    lv = [None if x is None else x.clone().requires_grad_(True) for x in xs]
    q, k, v, g, beta, S0 = lv
    kw = {"g": g} if beta is None else {"g": g, "beta": beta}
    o, S = f(q, k, v, initial_state=S0, output_final_state=True, **kw)
    ((o * do).sum() + (S * dS).sum()).backward()
    gr = [torch.zeros_like(x) if x.grad is None else x.grad for x in lv if x is not None]
    return o.detach(), S.detach(), gr


def _rel(a, b):
    return float((a - b).norm() / b.norm())


_REF = {}


def _ref(model):
    if model not in _REF:
        xs = _inputs(model)
        gen = torch.Generator().manual_seed(1)
        do = torch.randn(B, T, H, d, generator=gen, dtype=torch.float64)
        dS = torch.randn(B, H, d, d, generator=gen, dtype=torch.float64)
        f = lambda *a, **kw: reference(model, *a, **kw)
        _REF[model] = (xs, do, dS, _run(f, model, xs, do, dS))
    return _REF[model]


def _errors(kn):
    xs, do, dS, (ro, rS, rg) = _ref(kn.model)
    o, S, gr = _run(kn.fn, kn.model, xs, do, dS)
    return _rel(o, ro), _rel(S, rS), max(_rel(a, b) for a, b in zip(gr, rg))


@_param("name", [n for n, kn in KERNELS.items() if kn.kind == "correct"])
def test_correct_matches_sequential_float64(name):
    eo, eS, eg = _errors(KERNELS[name])
    assert eo < TOL_CORRECT and eS < TOL_CORRECT and eg < TOL_CORRECT, (eo, eS, eg)


@_param("name", [n for n, kn in KERNELS.items() if kn.kind == "mutant"])
def test_mutant_differs_in_float64(name):
    kn = KERNELS[name]
    eo, eS, eg = _errors(kn)
    if kn.where == "bwd":  # the forward bit for bit, a gradient wrong
        assert eo < TOL_CORRECT and eS < TOL_CORRECT and eg > TOL_MUTANT, (eo, eS, eg)
    elif kn.where == "state":  # seen through the state: S0 read, or the final state
        assert max(eo, eS) > TOL_MUTANT, (eo, eS, eg)
    else:  # fwd, precision: o or the final state
        assert max(eo, eS) > TOL_MUTANT, (eo, eS, eg)


def test_inventory():
    ks = KERNELS.values()
    assert sum(k.kind == "correct" for k in ks) >= 8
    assert len({k.name.split(".", 1)[1] for k in ks if k.kind == "mutant"}) >= 25
    assert {k.model for k in ks if k.kind == "correct"} == {"gdn", "kda", "mamba2"}


if __name__ == "__main__":
    import time
    t0, failed, n = time.time(), 0, 0
    for name, f in list(globals().items()):
        if not name.startswith("test_") or not callable(f):
            continue
        for p in getattr(f, "params", [None]):
            n += 1
            try:
                f() if p is None else f(p)
                print("ok   %s%s" % (name, "" if p is None else "[%s]" % p))
            except AssertionError as e:
                failed += 1
                print("FAIL %s%s: %s" % (name, "" if p is None else "[%s]" % p, e))
    print("%d passed, %d failed (%.1f s)" % (n - failed, failed, time.time() - t0))
    sys.exit(1 if failed else 0)
