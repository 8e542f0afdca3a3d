#!/usr/bin/python3
"""gates_repro.py: the reproductions of the gate-range reports (docs/forms.md, "The exponent
range of the chunk forms"), through the binding: the bisections of the gate's lower bound for each
anchor, cudnn-frontend PR 1017's lb sweep, mamba PR 713's cumulative sum order. Prints the tables
that docs/forms.md quotes. Run: /usr/bin/python3 tools/python/gates_repro.py (about a minute)."""
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vlastab  # noqa: E402

warnings.simplefilter("ignore")  # a non-finite run is what is measured here
rng = np.random.default_rng(35)


def inputs(H, T, d, gates_per_channel=True):
    q, k, v = (rng.standard_normal((H, T, d)) for _ in range(3))
    g = -np.abs(rng.standard_normal((H, T, d) if gates_per_channel else (H, T)))
    return q, k, v, g


def run(model, prec, form, x, **sets):
    q, k, v, g = x
    beta = np.ones(q.shape[:2]) if model in ("gdn", "kda") else None
    r = vlastab.run(q, k, v, model=model, precision=prec, form=form, logdecay=g, beta=beta,
                    reference=False, **sets)
    # the first step whose read-out or state is non-finite (the binding's nonfinite looks at the
    # state points only: a chunk's inner read-outs are read here), 0 for none
    bad = ~np.isfinite(r["o"]).all(axis=(0, 2))
    first = [int(np.argmax(bad)) + 1] if bad.any() else []
    first += [int(x) for x in r["nonfinite"] if x > 0]
    return r["o"], min(first) if first else 0


def relerr(o, ref):
    return float(np.linalg.norm((o - ref).ravel()) / np.linalg.norm(ref.ravel()))


def bisect(model, prec, form, x, lo, hi, **sets):
    """the least |lb| (to 1e-3) at which some value turns non-finite, every gate pinned at lb"""
    def bad(a):
        return run(model, prec, form, x, gate_lb=-a, gate_map="pin", **sets)[1] > 0
    assert not bad(lo) and bad(hi), (lo, hi, sets)
    while hi - lo > 1e-3:
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if bad(mid) else (mid, hi)
    return hi


x = inputs(1, 64, 16)
print("bisections: kda, d = 16, T = 64, every log-gate pinned at lb; the least |lb| non-finite")
print("%-44s %-9s %-8s %s" % ("anchor", "prec", "found", "closed form 88.72 / span"))
for label, form, sets, span in (
        ("start, blocks of 16 (FlashKDA, PR 701)", "chunk:16", dict(anchor="start"), 16),
        ("first, sub-chunks of 16 (attention-gym 337)", "chunk:64",
         dict(anchor="first", anchor_block=16, base="2"), 15),
        ("mid, sub-chunks of 16 (fla safe_gate)", "chunk:64",
         dict(anchor="mid", anchor_block=16, base="2"), 8),
        ("mid, one per chunk of 64 (dplr's; PR 1069)", "chunk:64",
         dict(anchor="mid", base="2"), 32)):
    for prec in ("f32", "bf16-kern"):
        found = bisect("kda", prec, form, x, 0.5, 40, **sets)
        print("%-44s %-9s %-8.3f %.3f" % (label, prec, found, 88.7228 / span))

print("\ncudnn-frontend PR 1017: kda, C = 64, one mid anchor per chunk, base 2, bf16-kern, d = 128,"
      " 2 heads, T = 256, g = lb sigmoid(N(0,1)); error of o against the f64 sequential")
x = inputs(2, 256, 128)
x = x[:3] + (rng.standard_normal(x[3].shape),)  # raw logits of either sign
ref, _ = run("kda", "f64", "seq", x, gate_lb=-1, gate_map="sigmoid")
print("%-6s %-12s %-12s %-12s %s" % ("lb", "mid: first", "mid: relerr", "direct C=16",
                                     "direct relerr"))
for lb in np.arange(-1.0, -5.01, -0.5):
    ref, _ = run("kda", "f64", "seq", x, gate_lb=lb, gate_map="sigmoid")
    o, nf = run("kda", "bf16-kern", "chunk:64", x, gate_lb=lb, gate_map="sigmoid", anchor="mid",
                base="2")
    o16, nf16 = run("kda", "bf16-kern", "chunk:16", x, gate_lb=lb, gate_map="sigmoid", base="2")
    fin = np.isfinite(o).all(axis=-1)
    e = relerr(o[fin], ref[fin]) if fin.any() else float("nan")
    print("%-6.2f %-12d %-12.3g %-12d %.3g  (mid: %.0f%% of the read-outs non-finite)" % (
        lb, nf, e, nf16, relerr(o16, ref), 100 * (1 - fin.mean())))

print("\nmamba PR 713: mamba2, f32, chunk:256, d = 16, T = 256; one token in ten with |dt A| in "
      "[X, 2X), the rest in (-1e-4, 0]")
T = 256
q, k, v, _ = inputs(1, T, 16)
for X in (1e3, 1e6, 1e8, 1e9):
    g = np.where(np.arange(T) % 10 == 3, -X * (1 + rng.random(T)), -1e-4 * rng.random(T))[None]
    ref, _ = run("mamba2", "f64", "seq", (q, k, v, g))
    row = []
    for sets in (dict(), dict(cumsum="tree"), dict(cumsum="tree", gate_clamp="on")):
        o, nf = run("mamba2", "f32", "chunk:256", (q, k, v, g), **sets)
        row.append("%s %s" % ("first non-finite %d" % nf if nf else "finite",
                              "relerr %.2g" % relerr(o, ref) if not nf else ""))
    print("X = %-6g run: %-28s tree: %-28s tree+clamp: %s" % (X, row[0], row[1], row[2]))
