#!/usr/bin/python3
"""mamba3-phase.py: how much of mamba3's state error is a phase. vlastab's f32 and f64 seq runs of
mamba3 (2 heads, d = 16, dt = 1, log-decay -0.05, lambda = 1/2, theta = pi tanh(N(0, 1)) on the
d/2 pairs, q, k, v N(0, 1/d)) at t = 64, 512, 4096: S's relative error against f64; the same after
each key-channel pair's common phase (the angle of sum_i z32_i conj(z64_i), z = S[:, 2p] +
i S[:, 2p + 1]) is taken out; that largest phase; and o's error over the last 64 tokens. A
rotation's phase error turns q~ and k~ alike, so o does not see it. Prints a line per t."""
import sys
import numpy as np
sys.path[:0] = ["tools/python"]
import vlastab

if len(sys.argv) > 1:
    print("usage: mamba3-phase.py (no arguments; prints a line per t)", file=sys.stderr)
    sys.exit(2)
rng = np.random.default_rng(1)
H, T, d = 2, 4096, 16
x = {n: rng.standard_normal((H, T, d)) / np.sqrt(d) for n in ("q", "k", "v")}
u = np.zeros((H, T, d))
u[:, :, : d // 2] = np.pi * np.tanh(rng.standard_normal((H, T, d // 2)))
gates = dict(u=u, beta=np.full((H, T), 0.5), decay=np.ones((H, T)), logdecay=np.full((H, T), -0.05))


def run(t, precision):
    r = vlastab.run(x["q"][:, :t], x["k"][:, :t], x["v"][:, :t], model="mamba3", precision=precision,
                    reference=False, **{n: g[:, :t] for n, g in gates.items()})
    return r["S"], r["o"]


for t in (64, 512, 4096):
    (S32, o32), (S64, o64) = run(t, "f32"), run(t, "f64")
    z32, z64 = S32[..., 0::2] + 1j * S32[..., 1::2], S64[..., 0::2] + 1j * S64[..., 1::2]
    ph = np.angle((z32 * np.conj(z64)).sum(axis=1, keepdims=True))
    rel = lambda a, b: np.linalg.norm(a - b) / np.linalg.norm(b)
    print("t %5d: S %.2e, S without each pair's common phase %.2e (largest phase %.2e rad), "
          "o over the last 64 tokens %.2e" % (t, rel(S32, S64), rel(z32 * np.exp(-1j * ph), z64),
                                               np.abs(ph).max(), rel(o32[:, -64:], o64[:, -64:])))
