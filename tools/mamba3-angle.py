#!/usr/bin/python3
"""mamba3-angle.py: a float32 Mamba-3 SISO kernel written as state-spaces/mamba's step reference
computes it (the angle Theta summed in binary32, its cos and sin, the state and every product in
binary32), on tools/mamba3-1017.py's inputs, as a trace and outputs for vla-check --outputs:
DIR/trace, DIR/out-th32 (the angle's sum in binary32) and DIR/out-th64 (the same kernel with the
angle's sum in binary64). Usage: mamba3-angle.py DIR T [DT] (DT: every dt set to DT and every
log-decay to -0.02, for large angles; default the issue's dt in [1e-3, 0.1])"""
import sys, os
import numpy as np
sys.path[:0] = ["tools", "tools/python"]
from vlastab.torch_trace import _write  # a link at a file's place is replaced, not followed
issue_inputs = __import__("mamba3-1017").issue_inputs
f = np.float32


def rot(x, c, s):
    """each pair (2p, 2p + 1) of x turned by (c_p, s_p); the pairs past c's length as they are"""
    y, n = x.copy(), c.size
    y[0:2 * n:2] = c * x[0:2 * n:2] - s * x[1:2 * n:2]
    y[1:2 * n:2] = s * x[0:2 * n:2] + c * x[1:2 * n:2]
    return y


def kernel(x, theta_dtype):
    """h_t = a h_{t-1} + (1 - lambda) dt a x_{t-1} k~_{t-1}^T + lambda dt x_t k~_t^T, y = h q~, in
    binary32; Theta_t = Theta_{t-1} + theta_t dt_t summed in theta_dtype"""
    H, T, d = x["q"].shape
    o = np.zeros((H, T, x["v"].shape[2]), f)
    for h in range(H):
        S = np.zeros((x["v"].shape[2], d), f)
        kx, vx, Th = np.zeros(d, f), np.zeros(x["v"].shape[2], f), np.zeros(d // 2, theta_dtype)
        for t in range(T):
            lam, dt, a = f(x["beta"][h, t]), f(x["decay"][h, t]), np.exp(f(x["logdecay"][h, t]))
            Th = (Th + x["u"][h, t, : d // 2].astype(theta_dtype) * theta_dtype(dt)).astype(theta_dtype)
            c, s = np.cos(Th).astype(f), np.sin(Th).astype(f)
            k, q, v = (x[n][h, t].astype(f) for n in ("k", "q", "v"))
            kr, qr = rot(k, c, s), rot(q, c, s)
            S = a * S + ((f(1) - lam) * dt * a) * np.outer(vx, kx) + (lam * dt) * np.outer(v, kr)
            o[h, t] = S @ qr
            kx, vx = kr, v
    return o


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        print("usage: mamba3-angle.py DIR T [DT]", file=sys.stderr)
        sys.exit(2)
    D, T = sys.argv[1], int(sys.argv[2])
    x = issue_inputs(T=T)
    if len(sys.argv) == 4:
        x["decay"][:] = float(sys.argv[3])
        x["logdecay"] = np.full_like(x["decay"], -0.02)
    x = {k: np.asarray(v, f).astype(np.float64) for k, v in x.items()}  # the kernel's binary32 inputs
    if os.path.lexists(D):
        print("mamba3-angle.py: %s exists: name a new folder" % D, file=sys.stderr)
        sys.exit(2)
    os.makedirs(D + "/trace")
    for key, val in x.items():
        _write(D + "/trace/" + key + ".npy", val)
    _write(D + "/trace/model.txt", b"model mamba3\n")
    for name, td in (("th32", np.float32), ("th64", np.float64)):
        os.makedirs(D + "/out-" + name)
        _write(D + "/out-" + name + "/o.npy", kernel(x, td))
    print("written", D)
