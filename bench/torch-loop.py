#!/usr/bin/python3
"""torch-loop.py: the field's oracle timed, for `make bench`'s production case (bench/README.md):
a float64 PyTorch loop over the tokens of a trace (docs/trace.md), every head at once as a batch,
of the recurrence its model.txt names, written from the published equations (docs/math.md
sections 2.5 and 2.6; fla's fused_recurrent_gated_delta_rule for gdn), not from lib/recur.h:

  gdn   k' = k / sqrt(k.k + 1e-6), q' likewise; S' = a_t S; e = beta_t (v - S' k');
        S = S' + e k'^T; o = S (q' / sqrt(d))                  (a_t = exp(logdecay_t))
  vla3  u' = unit(u) / sqrt(d); z = A u'; delta = max(1 + u'.z, 1e-4); A -= z z^T / delta;
        A += 1e-3 I every 20 steps; k' = unit(phi(k)); alpha = unit(A k');
        S += (v - S k') alpha^T; n += phi(k); o = S phi(q) / max(n.phi(q), 1e-4)
        (A_0 = 10 I, phi = elu + 1, u = k: the trace has no u.npy)

Prints one line: model, heads, d, steps timed, threads, seconds, head-steps per second; with
--check also the relative Frobenius distance of its read-outs from vlastab's binary64 run of the
same tokens (tools/python/vlastab, libvlastab.so): a few units of 1e-16 when both compute the
same recurrence.
Usage: bench/torch-loop.py DIR THREADS [STEPS] [--check]   (STEPS: the first tokens; default all)"""
import os
import sys
import time

import numpy as np
import torch


def model_of(path):
    with open(os.path.join(path, "model.txt")) as f:
        for line in f:
            w = line.split()
            if w and w[0] == "model":
                return w[1]
    sys.exit("%s/model.txt names no model" % path)


def gdn(x, T):
    q, k, v, beta, g = x["q"], x["k"], x["v"], x["beta"], x["logdecay"]
    H, _, d = q.shape
    q = q / torch.sqrt((q * q).sum(-1, keepdim=True) + 1e-6) * d ** -0.5
    k = k / torch.sqrt((k * k).sum(-1, keepdim=True) + 1e-6)
    a = torch.exp(g)
    S = torch.zeros(H, v.shape[2], d, dtype=torch.float64)
    o = torch.empty(H, T, v.shape[2], dtype=torch.float64)
    for t in range(T):
        S = a[:, t, None, None] * S
        e = beta[:, t, None] * (v[:, t] - torch.einsum("hij,hj->hi", S, k[:, t]))
        S = S + e[:, :, None] * k[:, t, None, :]
        o[:, t] = torch.einsum("hij,hj->hi", S, q[:, t])
    return o


def vla3(x, T):
    q, k, v = x["q"], x["k"], x["v"]
    H, _, d = q.shape
    phi = lambda z: torch.where(z > 0, z + 1, torch.exp(z))  # noqa: E731
    unit = lambda z: z / torch.linalg.norm(z, dim=-1, keepdim=True)  # noqa: E731
    A = 10 * torch.eye(d, dtype=torch.float64).repeat(H, 1, 1)
    S = torch.zeros(H, v.shape[2], d, dtype=torch.float64)
    n = torch.zeros(H, d, dtype=torch.float64)
    I = torch.eye(d, dtype=torch.float64)  # noqa: E741
    o = torch.empty(H, T, v.shape[2], dtype=torch.float64)
    for t in range(T):
        u = unit(k[:, t]) / d ** 0.5
        z = torch.einsum("hij,hj->hi", A, u)
        delta = torch.clamp(1 + (u * z).sum(-1), min=1e-4)
        A = A - z[:, :, None] * z[:, None, :] / delta[:, None, None]
        if (t + 1) % 20 == 0:
            A = A + 1e-3 * I
        pk = phi(k[:, t])
        kp = unit(pk)
        alpha = unit(torch.einsum("hij,hj->hi", A, kp))
        S = S + (v[:, t] - torch.einsum("hij,hj->hi", S, kp))[:, :, None] * alpha[:, None, :]
        n = n + pk
        pq = phi(q[:, t])
        o[:, t] = torch.einsum("hij,hj->hi", S, pq) / torch.clamp((n * pq).sum(-1), min=1e-4)[:, None]
    return o


def check(model, x, o):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools",
                                    "python"))
    import vlastab
    a = {n: t.numpy() for n, t in x.items()}
    kw = dict(beta=a["beta"], logdecay=a["logdecay"]) if model == "gdn" else {}
    ref = vlastab.run(a["q"], a["k"], a["v"], model=model, precision="f64", reference=False,
                      **kw)["o"]
    return np.linalg.norm((o.numpy() - ref).ravel()) / np.linalg.norm(ref.ravel())


def main(path, threads, steps=None, with_check=False):
    model = model_of(path)
    if model not in ("gdn", "vla3"):
        sys.exit("%s: model %s: this loop has gdn and vla3" % (path, model))
    torch.set_num_threads(threads)
    names = ["q", "k", "v"] + (["beta", "logdecay"] if model == "gdn" else [])
    T = np.load(os.path.join(path, "q.npy"), mmap_mode="r").shape[1]
    T = min(T, steps) if steps else T
    x = {n: torch.from_numpy(np.array(np.load(os.path.join(path, n + ".npy"), mmap_mode="r")[:, :T],
                                      dtype=np.float64)) for n in names}
    H, _, d = x["q"].shape
    t0 = time.perf_counter()
    o = (gdn if model == "gdn" else vla3)(x, T)
    sec = time.perf_counter() - t0
    if not torch.isfinite(o).all():
        sys.exit("%s: the loop's read-outs are not all finite" % path)
    print("torch-f64-loop %s heads %d d %d steps %d threads %d seconds %.3f head_steps_per_s %.1f"
          % (model, H, d, T, threads, sec, H * T / sec)
          + (" vs_vlastab_f64 %.3g" % check(model, x, o) if with_check else ""))


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--check"]
    if len(args) not in (2, 3):
        sys.exit(__doc__)
    main(args[0], int(args[1]), int(args[2]) if len(args) == 3 else None, "--check" in sys.argv)
