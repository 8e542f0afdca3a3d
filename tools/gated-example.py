#!/usr/bin/python3
"""gated-example.py: one real-sized synthetic trace per gated model (docs/gated.md, "One example
per model"): 4 heads, T tokens (default 4096), head size d (default 64), with the published
layers' gate maps, so that vla-check runs each model as a layer would feed it:

  gdn     g = -exp(A_log) softplus(z + dt_bias), A_log = log U(1, 16) per head, dt_bias =
          softplus^-1(dt), dt = exp(U(log 1e-3, log 1e-1)) per head (Mamba's and fla's
          initialization); beta = sigmoid(N(0, 1))
  kda     the same gate per key channel (dt_bias per channel)
  gla     g = logsigmoid(z) / 16 per key channel (GLA's gate normalizer 16)
  mamba2  log a = dt A, dt = softplus(z + dt_bias), A = -exp(A_log); k = B dt, q = C, v = x
  rwkv7   log w = -e^(-1/2) sigmoid(z) per key channel, kk = unit(k), a = -kk, b = kk sigmoid(N)

z is N(0, 1.5^2) per token (per channel where the gate has one): decays near 1 with a heavy tail
toward 0. q, k, v are projections of one AR(1) hidden stream (rho 0.95, width 4 d), so that
successive tokens are correlated as a language model's are, plus N(0, 1) noise.
Usage: tools/gated-example.py OUTDIR [T] [d]  (writes OUTDIR/MODEL/*.npy and model.txt)"""
import io
import os
import secrets
import sys

import numpy as np

H = 4


def write(path, data):
    """data (bytes) to PATH without following a link there (lib/file.h's rule): a temporary
    created anew beside it, renamed over it, so a link at PATH is replaced, not its target"""
    d, base = os.path.split(path)
    tmp = os.path.join(d, ".%s.%s.tmp" % (base, secrets.token_hex(6)))
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)  # replaces a link itself, never its target
    except BaseException:
        os.unlink(tmp)
        raise


def npy_bytes(x):
    b = io.BytesIO()
    np.save(b, x)
    return b.getvalue()


def softplus(x):
    return np.logaddexp(0.0, x)


def main(out, T=4096, d=64, seed=1):
    rng = np.random.default_rng(seed)
    m = 4 * d
    h = np.zeros((H, T, m))
    e = rng.standard_normal((H, T, m))
    h[:, 0] = e[:, 0]
    for t in range(1, T):
        h[:, t] = 0.95 * h[:, t - 1] + np.sqrt(1 - 0.95 ** 2) * e[:, t]

    def proj(n):
        W = rng.standard_normal((H, m, n)) / np.sqrt(m)
        return np.einsum("htm,hmn->htn", h, W) + rng.standard_normal((H, T, n))

    q, k, v = proj(d), proj(d), proj(d)
    z = lambda *shape: 1.5 * rng.standard_normal(shape)  # noqa: E731
    A = np.exp(np.log(rng.uniform(1, 16, H)))[:, None]
    dt = np.exp(rng.uniform(np.log(1e-3), np.log(1e-1), H))[:, None]
    dt_bias = dt + np.log(-np.expm1(-dt))  # softplus^-1(dt)
    dtc = np.exp(rng.uniform(np.log(1e-3), np.log(1e-1), (H, 1, d)))
    dtc_bias = dtc + np.log(-np.expm1(-dtc))
    beta = 1 / (1 + np.exp(-rng.standard_normal((H, T))))
    traces = {
        "gdn": dict(q=q, k=k, v=v, beta=beta, logdecay=-A * softplus(z(H, T) + dt_bias)),
        "kda": dict(q=q, k=k, v=v, beta=beta,
                    logdecay=-A[:, :, None] * softplus(z(H, T, d) + dtc_bias)),
        "gla": dict(q=q, k=k, v=v, logdecay=-softplus(-z(H, T, d)) / 16),
    }
    dts = softplus(z(H, T) + dt_bias)
    traces["mamba2"] = dict(q=q, k=k * dts[:, :, None], v=v, logdecay=-A * dts)
    kk = k / np.linalg.norm(k, axis=-1, keepdims=True)
    iclr = 1 / (1 + np.exp(-rng.standard_normal((H, T, 1))))
    traces["rwkv7"] = dict(q=q, k=k, v=v, logdecay=-np.exp(-0.5) / (1 + np.exp(-z(H, T, d))),
                           a=-kk, b=kk * iclr)
    for name, arrays in traces.items():
        folder = os.path.join(out, name)
        os.makedirs(folder, exist_ok=True)
        for key, x in arrays.items():
            write(os.path.join(folder, key + ".npy"),
                  npy_bytes(np.ascontiguousarray(x, dtype=np.float32)))
        write(os.path.join(folder, "model.txt"),
              ("# tools/gated-example.py %d %d\nmodel %s\n" % (T, d, name)).encode())
        g = arrays["logdecay"]
        print("%-6s %s: decays exp(logdecay) median %.4f, 1%% %.3g, min %.3g" % (
            name, folder, np.median(np.exp(g)), np.percentile(np.exp(g), 1), np.exp(g).min()))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1], *(int(a) for a in sys.argv[2:4]))
