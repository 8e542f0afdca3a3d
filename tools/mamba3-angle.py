#!/usr/bin/python3
"""mamba3-angle.py: float32 Mamba-3 SISO kernels on tools/mamba3-1017.py's inputs, the state and
every product in binary32, as a trace and outputs for vla-check --outputs, differing only in how
they keep the angle Theta: DIR/trace, and DIR/out-step (Theta summed in binary32 and reduced mod
2 pi at every step, 2 pi in binary32: state-spaces/mamba's mamba3_siso_step_ref), DIR/out-chunk64
(the Triton angle_dt kernel's way: a binary32 running sum within each 64-token chunk plus the
carried angle, reduced where taken, the carried angle reduced at each chunk's end; the kernel's
tree scan taken as a running sum), DIR/out-cumsum (a binary32 running sum over the whole sequence,
reduced only where taken: mamba3_siso_fwd_ref's torch.cumsum) and DIR/out-th64 (the sum in
binary64). Usage: mamba3-angle.py DIR T [DT] (DT: every dt set to DT and every log-decay to
-0.02, for large angles; default the issue's dt in [1e-3, 0.1])"""
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


def reduce2pi(th):
    """th - 2 pi floor(th / 2 pi) in th's format, 2 pi rounded to it (the references' TWO_PI)"""
    tp = th.dtype.type(2 * np.pi)
    return th - tp * np.floor(th / tp)


def kernel(x, way):
    """h_t = a h_{t-1} + (1 - lambda) dt a x_{t-1} k~_{t-1}^T + lambda dt x_t k~_t^T, y = h q~, in
    binary32; Theta_t = Theta_{t-1} + theta_t dt_t kept as way says (the module's docstring)"""
    H, T, d = x["q"].shape
    o = np.zeros((H, T, x["v"].shape[2]), f)
    for h in range(H):
        S = np.zeros((x["v"].shape[2], d), f)
        td = np.float64 if way == "th64" else f
        kx, vx, Th = np.zeros(d, f), np.zeros(x["v"].shape[2], f), np.zeros(d // 2, td)
        carry = np.zeros(d // 2, f)  # chunk64: the angle carried into the chunk
        for t in range(T):
            lam, dt, a = f(x["beta"][h, t]), f(x["decay"][h, t]), np.exp(f(x["logdecay"][h, t]))
            if way == "chunk64" and t % 64 == 0:
                carry, Th = reduce2pi(carry + Th), np.zeros(d // 2, f)
            Th = Th + x["u"][h, t, : d // 2].astype(td) * td(dt)
            if way == "step":
                Th = reduce2pi(Th)
            ang = Th if way == "step" else reduce2pi(Th + carry)
            c, s = np.cos(ang).astype(f), np.sin(ang).astype(f)
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
    D = sys.argv[1]
    try:
        T = int(sys.argv[2])
        DT = float(sys.argv[3]) if len(sys.argv) == 4 else None
    except ValueError:
        T = DT = -1
    if T < 1 or (DT is not None and not 0 < DT < float("inf")):
        print("mamba3-angle.py: T must be a positive integer and DT a positive finite number",
              file=sys.stderr)
        sys.exit(2)
    x = issue_inputs(T=T)
    if DT is not None:
        x["decay"][:] = DT
        x["logdecay"] = np.full_like(x["decay"], -0.02)
    x = {k: np.asarray(v, f).astype(np.float64) for k, v in x.items()}  # the kernel's binary32 inputs
    if os.path.lexists(D):
        print("mamba3-angle.py: %s exists: name a new folder" % D, file=sys.stderr)
        sys.exit(2)
    os.makedirs(D + "/trace")
    for key, val in x.items():
        _write(D + "/trace/" + key + ".npy", val)
    _write(D + "/trace/model.txt", b"model mamba3\n")
    for way in ("step", "chunk64", "cumsum", "th64"):
        os.makedirs(D + "/out-" + way)
        _write(D + "/out-" + way + "/o.npy", kernel(x, way))
    print("written", D)
