#!/usr/bin/python3
"""production-trace.py: the synthetic production layer of `make bench` (bench/README.md, "The
production case"): H heads x T tokens x head size d (default 16 x 32768 x 128, a 2025-26 model's
layer), written as two traces (docs/trace.md) that share q, k, v:

  OUT/gdn/   q.npy k.npy v.npy beta.npy logdecay.npy model.txt   (model gdn)
  OUT/vla3/  q.npy k.npy v.npy (links to gdn's) model.txt        (model vla3)

The inputs are tools/gated-example.py's gdn inputs (the same distributions, drawn here one head
at a time so that memory stays one head's): q, k, v projections of an AR(1) hidden stream (rho
0.95, width 4 d) plus N(0, 1) noise; gdn's log-decay -exp(A_log) softplus(z + dt_bias) with
Mamba's and fla's initialization, beta = sigmoid(N(0, 1)). Stored as float32 (a model's
activations), 3 x 268 MB at the full size. Not committed: made by `make bench`.
Usage: bench/production-trace.py OUT [H T d]"""
import os
import sys

import numpy as np


def softplus(x):
    return np.logaddexp(0.0, x)


def main(out, H=16, T=32768, d=128, seed=1):
    rng = np.random.default_rng(seed)
    m = 4 * d
    gdn, vla3 = os.path.join(out, "gdn"), os.path.join(out, "vla3")
    os.makedirs(gdn, exist_ok=True)
    os.makedirs(vla3, exist_ok=True)
    arr = {n: np.lib.format.open_memmap(os.path.join(gdn, n + ".npy"), mode="w+",
                                        dtype=np.float32, shape=(H, T, d)) for n in "qkv"}
    beta = np.empty((H, T))
    logdecay = np.empty((H, T))
    rho = 0.95
    for h in range(H):
        e = rng.standard_normal((T, m))
        x = np.empty((T, m))
        x[0] = e[0]
        for t in range(1, T):  # the AR(1) hidden stream
            x[t] = rho * x[t - 1] + np.sqrt(1 - rho ** 2) * e[t]
        for n in "qkv":
            W = rng.standard_normal((m, d)) / np.sqrt(m)
            arr[n][h] = x @ W + rng.standard_normal((T, d))
        A = rng.uniform(1, 16)
        dt = np.exp(rng.uniform(np.log(1e-3), np.log(1e-1)))
        dt_bias = dt + np.log(-np.expm1(-dt))  # softplus^-1(dt)
        logdecay[h] = -A * softplus(1.5 * rng.standard_normal(T) + dt_bias)
        beta[h] = 1 / (1 + np.exp(-rng.standard_normal(T)))
    for a in arr.values():
        a.flush()
    np.save(os.path.join(gdn, "beta.npy"), beta.astype(np.float32))
    np.save(os.path.join(gdn, "logdecay.npy"), logdecay.astype(np.float32))
    for n in "qkv":
        link = os.path.join(vla3, n + ".npy")
        if os.path.lexists(link):
            os.remove(link)
        os.symlink(os.path.join("..", "gdn", n + ".npy"), link)
    for model, path in (("gdn", gdn), ("vla3", vla3)):
        with open(os.path.join(path, "model.txt"), "w") as f:
            f.write("# bench/production-trace.py %d %d %d\nmodel %s\n" % (H, T, d, model))
    print("%s: %d heads x %d tokens x d = %d (gdn, vla3)" % (out, H, T, d))


if __name__ == "__main__":
    if len(sys.argv) not in (2, 5):
        sys.exit(__doc__)
    main(sys.argv[1], *(int(a) for a in sys.argv[2:]))
