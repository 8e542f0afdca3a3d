#!/usr/bin/python3
"""judge-grad.py: the gradient judge timed (bench/README.md, "The gradient judge"): a chunked Gated
DeltaNet (vlastab.examples.gdn_chunk, chunk 64) of shape (1, T, H, d) judged by vlastab.judge with
grad=True once, its folder kept; then, interleaved REPEATS times, vla-check --outputs on that
folder under /usr/bin/time -v (the judgement of the read-outs and the gradients: wall seconds and
peak RSS) for each vla-check given, and a float64 PyTorch autograd of the same recurrence, a loop
over the tokens written from the published equations (Yang et al., ICLR 2025; q, k L2-normalized,
S' = exp(g) S, S = S' + beta (v - S' k) k^T, o = S q d^-1/2), forward and backward with the same
do. Prints one line per repeat and the medians.
Usage: bench/judge-grad.py DIR REPEATS VLA_CHECK... [--shape T H d] [--dtype bfloat16|float32]
       [--no-torch]"""
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np
import torch

import vlastab
from vlastab.examples import gdn_chunk


def inputs(T, H, d, dtype):
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, T, H, d, dtype=torch.float64) for _ in range(3))
    beta = torch.randn(1, T, H, dtype=torch.float64).sigmoid()
    g = -0.1 * torch.nn.functional.softplus(torch.randn(1, T, H, dtype=torch.float64))
    return [x.to(dtype) for x in (q, k, v, g, beta)]


def gdn_loop(q, k, v, g, beta):
    """float64, every head at once: (1, T, H, .) in fla's layout"""
    B, T, H, d = q.shape
    q = q / (q * q).sum(-1, keepdim=True).add(1e-6).sqrt()
    k = k / (k * k).sum(-1, keepdim=True).add(1e-6).sqrt()
    S, o = q.new_zeros(B, H, v.shape[-1], d), []
    for t in range(T):
        S = S * g[:, t, :, None, None].exp()
        e = beta[:, t, :, None] * (v[:, t] - torch.einsum("bhvk,bhk->bhv", S, k[:, t]))
        S = S + torch.einsum("bhv,bhk->bhvk", e, k[:, t])
        o.append(torch.einsum("bhvk,bhk->bhv", S, q[:, t]) * d ** -0.5)
    return torch.stack(o, 1)


def torch_autograd(x, do):
    leaf = [a.double().detach().requires_grad_(True) for a in x]
    t0 = time.perf_counter()
    o = gdn_loop(*leaf)
    o.backward(do)
    return time.perf_counter() - t0


def timed(cmd):
    """wall seconds, CPU seconds (user + system) and peak RSS (MB) of cmd by /usr/bin/time -v, and
    its exit status"""
    p = subprocess.run(["/usr/bin/time", "-v"] + cmd, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", p.stderr)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
    cpu = sum(float(re.search(r"%s time \(seconds\): ([\d.]+)" % w, p.stderr).group(1))
              for w in ("User", "System"))
    h, m, s = wall.groups()
    return (int(h or 0) * 3600 + int(m) * 60 + float(s), cpu, int(rss.group(1)) / 1024,
            p.returncode, p.stderr)


def main():
    a = sys.argv[1:]
    shape, dtype = (2048, 4, 64), torch.bfloat16
    if "--shape" in a:
        i = a.index("--shape")
        shape = tuple(int(x) for x in a[i + 1:i + 4])
        del a[i:i + 4]
    if "--dtype" in a:
        i = a.index("--dtype")
        dtype = getattr(torch, a[i + 1])
        del a[i:i + 2]
    no_torch = "--no-torch" in a
    if no_torch:
        a.remove("--no-torch")
    if len(a) < 3:
        sys.exit(__doc__)
    folder, reps, exes = a[0], int(a[1]), a[2:]
    torch.set_num_threads(2)
    T, H, d = shape
    x = inputs(T, H, d, dtype)
    if not os.path.exists(os.path.join(folder, "outputs", "do.npy")):  # (else: made before)
        t0 = time.perf_counter()
        ver = vlastab.judge(gdn_chunk, *x[:3], g=x[3], beta=x[4], dtype=dtype, form="chunk:64",
                            causality=False, logic=False, keep=folder)
        print("judge() with vla-check of $VLA_BIN_DIR: %.1f s, %s" % (
            time.perf_counter() - t0, "ok" if ver.ok else "beyond"))
    do = np.load(os.path.join(folder, "outputs", "do.npy"))
    if do.dtype == np.uint16:  # bfloat16's bits (dtype.txt)
        do = (do.astype(np.uint32) << 16).view(np.float32)
    do = torch.from_numpy(do.astype(np.float64)).reshape(H, T, d).transpose(0, 1)[None]
    prec = {"bfloat16": "bf16-kern", "float16": "f16-kern", "float32": "f32"}[
        str(dtype).replace("torch.", "")]
    res = {e: [] for e in exes}
    res["torch"] = []
    for r in range(reps):
        for e in exes:
            cmd = [e, "trace:" + os.path.join(folder, "trace"), "--outputs",
                   os.path.join(folder, "outputs"), "--precision", prec, "--form", "chunk:64",
                   "--report", os.path.join(folder, "report-bench"), "--out",
                   os.path.join(folder, "bench-%d.dat" % exes.index(e))]
            w, c, m, rc, err = timed(cmd)
            if rc not in (0, 1):
                sys.exit("%s: exit %d: %s" % (" ".join(cmd), rc, err[-2000:]))
            res[e].append((w, c, m))
            print("repeat %d  %-32s wall %7.2f s  cpu %7.2f s  %6.1f MB  exit %d  load %.1f" % (
                r, e, w, c, m, rc, os.getloadavg()[0]), flush=True)
        if no_torch:
            continue
        t0 = time.process_time()
        w = torch_autograd(x, do)
        res["torch"].append((w, time.process_time() - t0, 0))
        print("repeat %d  %-32s wall %7.2f s  cpu %7.2f s" % (r, "torch float64 autograd loop", w,
                                                              res["torch"][-1][1]), flush=True)
    for e in (list(exes) + ([] if no_torch else ["torch"])) if reps else []:
        print("median  %-32s wall %7.2f s  cpu %7.2f s  %6.1f MB" % tuple(
            [e] + [statistics.median(x[i] for x in res[e]) for i in range(3)]))


if __name__ == "__main__":
    main()
