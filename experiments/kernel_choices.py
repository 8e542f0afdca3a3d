#!/usr/bin/python3
"""kernel_choices.py: the kernels' 16-bit choices (the triangular inverse, the 16-bit state)
reproduced on the reports' inputs (docs/gated.md, "The 16-bit knobs against the reports"),
through the ctypes binding (tools/python/vlastab): each part prints a table and writes
data/kernel-choices/<part>.dat for plots/half-decode.gp.

    /usr/bin/python3 experiments/kernel_choices.py [PART...]   (default: every part; PART one of
        megagdn, entries, stage, vmlx, sglang, trtmc, flashkda, decode, spark; trace464
        writes sweeps/traces/ag464, the input of the sweep's half-stage-* tables)

Decoding runs (vmlx ... spark) step the library a block of tokens at a time (vlastab.Model: the
steps in C, up to each checkpoint): the run under test in binary32 (the f32 policy; trtmc also
f16) with the knobs, the others beside it on the same inputs, and a binary64 run without the
knobs as the reference (the programs' --ref f64). Inputs are rounded to binary32 first, so every
run reads the same numbers."""
import ctypes
import os
import sys
import time
import warnings

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tests"))
sys.path.insert(0, os.path.join(here, "..", "tools", "python"))
import gated_ref  # noqa: E402
import vlastab  # noqa: E402

L_ = vlastab.library
_D = ctypes.POINTER(ctypes.c_double)
L_.vla_ut_inverse.argtypes = [ctypes.c_int, ctypes.c_int, _D, ctypes.c_int, _D]
OUT = os.path.join(here, "..", "data", "kernel-choices")
os.makedirs(OUT, exist_ok=True)
TRI = {"blocked": 0, "forward": 1, "neumann": 2}
pd = lambda x: x.ctypes.data_as(_D)
sig = lambda x: 1.0 / (1.0 + np.exp(-x))


def ut(precision, tri, L):
    p = ctypes.c_int()
    L_.vla_prec_parse(precision.encode(), ctypes.byref(p))
    n = L.shape[0]
    T = np.zeros((n, n))
    assert L_.vla_ut_inverse(p.value, TRI[tri], pd(np.ascontiguousarray(L)), n, pd(T)) == 0
    return T


class Run:
    """one model stepped by the library a block of steps at a time; o its last read-out"""
    def __init__(self, model, precision, d, **knobs):
        self.m = vlastab.Model(model, precision, d, **knobs)

    def step(self, x):
        self.o = self.m.step(x["q"], x["k"], x["v"], beta=x.get("beta"), logdecay=x["lg"],
                             a=x.get("a"), b=x.get("b"))[-1]

    def state(self):
        return self.m.state()


def rel(x, y):
    n = np.linalg.norm(y)
    return np.linalg.norm(x - y) / n if n > 0 else np.nan


def gates(model, rng, n, d, kind):
    """n steps of inputs in the published layers' ranges (gated_ref.example_inputs), binary32.
    kind 'layer': gdn/kda -exp(A_log) softplus(N - 3), A in U(1, 16) (A fixed per run: rng's
    first draw); 'slow': softplus(N - 8) (decays 0.995..0.9999, "decays near 1");
    ('const', g): every log-gate g."""
    x = {"q": rng.standard_normal((n, d)), "k": rng.standard_normal((n, d)),
         "v": rng.standard_normal((n, d))}
    if isinstance(kind, tuple):
        lg = np.full((n, d), kind[1])
    elif model in ("gdn", "kda", "mamba2"):
        pre = rng.standard_normal((n, d) if model == "kda" else (n, 1)) - (8 if kind == "slow" else 3)
        lg = -gates.A * np.log1p(np.exp(pre)) * np.ones((1, d))
    elif model == "gla":
        lg = -np.log1p(np.exp(-rng.standard_normal((n, d)))) / 16.0
    else:  # rwkv7
        lg = -np.exp(-0.5) * sig(rng.standard_normal((n, d)))
    x["lg"] = lg
    if model in ("gdn", "kda"):
        x["beta"] = sig(rng.standard_normal(n))
    if model == "rwkv7":
        kk = gated_ref.l2norm(rng.standard_normal((n, d)), 0.0)
        x["a"], x["b"] = -kk, kk * sig(rng.standard_normal((n, d)))
    return {key: val.astype(np.float32).astype(np.float64) for key, val in x.items()}


gates.A = 4.0


def decode(model, d, T, runs, kind, seed=1, cks=None, ref_knobs=None):
    """runs: {name: (precision, knobs)}; every run beside the binary64 reference: the relative
    error of S and of o at the checkpoints; returns {name: [(t, eS, eo)]}, seconds"""
    rng = np.random.default_rng(seed)
    gates.A = rng.uniform(1, 16)
    ref = Run(model, "f64", d, **(ref_knobs or {}))
    rs = {n: Run(model, p, d, **k) for n, (p, k) in runs.items()}
    cks = set(cks or np.unique(np.round(np.logspace(0, np.log10(T), 40)).astype(int)))
    out = {n: [] for n in runs}
    t0 = time.time()
    B = 4096
    for s in range(0, T, B):
        n = min(B, T - s)
        x = gates(model, rng, n, d, kind)
        if model in ("gdn", "mamba2"):  # a scalar log-decay per token
            x["lg"] = np.ascontiguousarray(x["lg"][:, 0])
        i0 = 0
        for i1 in sorted(t - s for t in cks if s < t < s + n) + [n]:  # spans to each checkpoint
            span = {key: val[i0:i1] for key, val in x.items()}
            ref.step(span)
            for r in rs.values():
                r.step(span)
            if s + i1 in cks:
                Sr = ref.state()
                for name, r in rs.items():
                    out[name].append((s + i1, rel(r.state(), Sr), rel(r.o, ref.o)))
            i0 = i1
    return out, time.time() - t0


def write(name, header, rows):
    with open(os.path.join(OUT, name + ".dat"), "w") as f:
        f.write("# " + header + "\n")
        for r in rows:
            f.write(" ".join("%.6g" % v if isinstance(v, float) else str(v) for v in r) + "\n")


def part_megagdn():
    """megagdn-pto PR 74: gdn chunk:128 f16-kern, one head, d = 128, T = 512, correlated unit
    keys (k_t = unit(k0 + s n_t)), beta = 0.99, gates 0 (decay 1): ||L||_inf near 37"""
    print("\n## megagdn-pto PR 74: gdn chunk:128 f16-kern, d = 128, T = 512")
    rng = np.random.default_rng(74)
    d, T, C = 128, 512, 128
    k0 = rng.standard_normal(d)
    k = k0 + 1.69 * rng.standard_normal((T, d))
    ku = gated_ref.l2norm(k, 0.0)
    beta = np.full(T, 0.99)
    L = np.tril(beta[:C, None] * (ku[:C] @ ku[:C].T), -1)
    Linf = np.abs(L).sum(1).max()
    P, mx = L.copy(), []
    for j in range(7):
        mx.append(np.abs(P).max())
        P = P @ P
    q, v = rng.standard_normal((1, T, d)), rng.standard_normal((1, T, d))
    print("||L||_inf of the first chunk %.1f; max |L^(2^j)|, j = 0..6: %s" % (
        Linf, " ".join("%.2g" % m for m in mx)))
    rows = []
    for p in ("f16-kern", "bf16-kern", "f32"):
        for tri in ("forward", "blocked", "neumann"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = vlastab.run(q, k[None], v, model="gdn", precision=p, form="chunk:128",
                                beta=beta[None], logdecay=np.zeros((1, T)), tri=tri)
            nf = int((~np.isfinite(r["o"])).sum())
            e = np.nanmax(r["o_relerr"]) if nf < r["o"].size else np.nan
            rows.append((p, tri, nf, r["o"].size, int(r["nonfinite"][0]), float(e)))
            print("| %s | %s | %d of %d | %d | %.2g |" % rows[-1])
    Tf = ut("f16-kern", "neumann", L)
    print("vla_ut_inverse f16-kern on the first chunk's L: neumann %d of %d entries non-finite, "
          "forward %d, blocked %d" % ((~np.isfinite(Tf)).sum(), C * C,
                                      (~np.isfinite(ut("f16-kern", "forward", L))).sum(),
                                      (~np.isfinite(ut("f16-kern", "blocked", L))).sum()))
    write("megagdn", "precision tri nonfinite_o of first_nonfinite_step o_relerr_max", rows)


def part_entries():
    """FlashKDA's claim (c): max |T_ij| of kda's (I + L)^-1, vla_ut_inverse in binary64"""
    print("\n## FlashKDA (c): max |T_ij|, kda's L, gates U(-5, 0) on half the tokens")
    rows = []
    for C, d in ((16, 2), (16, 16), (16, 128), (64, 16), (64, 128)):
        cells = []
        for keys, blo, bhi, n in (("unit", 0, 1, 200), ("unit", 0, 2, 200), ("unit", 2, 2, 200),
                                  ("raw", 0, 1, 30)):
            rng = np.random.default_rng(C * 1000 + d)
            mx = 0
            for _ in range(n):
                k = rng.standard_normal((C, d))
                if keys == "unit":
                    k = gated_ref.l2norm(k, 0.0)
                b = rng.uniform(blo, bhi, C)
                g = np.where(rng.random((C, 1)) < 0.5, rng.uniform(-5, 0, (C, d)), 0.0)
                G = np.cumsum(g, 0)
                L = np.zeros((C, C))
                for r in range(1, C):
                    L[r, :r] = b[r] * ((k[r] * np.exp(G[r] - G[:r])) * k[:r]).sum(1)
                mx = max(mx, np.abs(ut("f64", "forward", L)).max())
            cells.append(mx)
        rows.append((C, d) + tuple(cells))
        print("| %d, %d | %.3g | %.3g | %.3g | %.2g |" % rows[-1])
    write("entries", "C d unit_beta01 unit_beta02 unit_beta2 raw_beta01", rows)


def stage_inputs():
    """attention-gym PR 464's input: d = 4, T = 128, four orthonormal keys (Hadamard rows / 2)
    with v = 32768 in channel 0, beta 1, then beta 0, no decay: S_00 = 65536 at t = 64"""
    d, T = 4, 128
    H4 = np.array([[1, 1, 1, 1], [1, -1, 1, -1], [1, 1, -1, -1], [1, -1, -1, 1]]) / 2.0
    k = np.tile(H4, (T // 4, 1))[None]
    v = np.zeros((1, T, d))
    v[0, :4, 0] = 32768 * H4[:, 0] * 2
    beta = np.zeros((1, T))
    beta[0, :4] = 1
    q = np.random.default_rng(464).standard_normal((1, T, d))
    return q, k, v, beta


def part_trace464():
    """writes stage_inputs() as the trace sweeps/traces/ag464 (binary32 .npy, every value exact),
    which sweeps/paper.sweep's half-stage-* tables replay (claim 9d)"""
    out = os.path.join(here, "..", "sweeps", "traces", "ag464")
    os.makedirs(out, exist_ok=True)
    for n, a in zip(("q", "k", "v", "beta"), stage_inputs()):
        np.save(os.path.join(out, n + ".npy"), a.astype(np.float32))


def part_stage():
    """attention-gym PR 464: gdn chunk:64, a state entry of 65536 at a chunk's start"""
    print("\n## attention-gym PR 464: an S entry of 65536 staged at chunk 2's start")
    q, k, v, beta = stage_inputs()
    T = k.shape[1]
    rows = []
    for p, st in (("f16-kern", "io"), ("bf16-kern", "io"), ("f16-kern", "bf16"),
                  ("f16-kern", "off"), ("f32", "io")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = vlastab.run(q, k, v, model="gdn", precision=p, form="chunk:64", beta=beta,
                            logdecay=np.zeros((1, T)), stage=st)
        nf = int((~np.isfinite(r["o"])).sum())
        rows.append((p, st, float(np.abs(r["S"]).max()), nf, int(r["nonfinite"][0])))
        print("| %s | stage=%s | max |S| %.6g | non-finite o %d | first at t = %d |" % rows[-1])
    write("stage", "precision stage max_abs_S nonfinite_o first_nonfinite", rows)


def show(title, res, secs, names):
    print("%s (%.0f s)" % (title, secs))
    for n in names:
        t, eS, eo = res[n][-1]
        print("|  %s | t = %d | S %.2g | o %.2g |" % (n, t, eS, eo))


def part_vmlx():
    """vmlx-swift PR 433: kda decoding, every decay exp(g) = 0.99992, d = 128, T = 4096"""
    print("\n## vmlx-swift PR 433: kda seq f32, decays 0.99992, d = 128, T = 4096")
    g = float(np.log(0.99992))
    res, s = decode("kda", 128, 4096, {"fp32 decays": ("f32", {}),
                                       "bf16 decays": ("f32", {"decay_bf16": True})},
                    ("const", g), cks=[1024, 2048, 4096])
    show("kda", res, s, ["fp32 decays", "bf16 decays"])
    write("vmlx", "run t eS eo", [(n,) + r for n in res for r in res[n]])


def part_sglang():
    """SGLang 38975: gdn decoding with beta rounded to bf16 each step, d = 64, T = 10^5"""
    print("\n## SGLang 38975: gdn seq f32, beta through bf16, d = 64")
    for kind in ("layer", "slow"):
        res, s = decode("gdn", 64, 100000, {"fp32 beta": ("f32", {}),
                                            "bf16 beta": ("f32", {"beta_bf16": True})}, kind)
        show("gates %s" % kind, res, s, ["fp32 beta", "bf16 beta"])
        for n in res:
            print("   %s: S at t = 10^2, 10^3, 10^4, 10^5: %s" % (n, " ".join(
                "%.2g" % e for (t, e, _) in res[n] if t in (100, 1000, 10000, 100000))))
        write("sglang-" + kind, "run t eS eo", [(n,) + r for n in res for r in res[n]])


def part_trtmc():
    """TensorRT-Model-Connect PR 725: gdn decoding with the state (and the update) in fp16"""
    print("\n## TensorRT-Model-Connect PR 725: gdn seq, d = 128, T = 10^5")
    res, s = decode("gdn", 128, 100000, {"f32": ("f32", {}),
                                         "fp16 state": ("f32", {"cache": "f16"}),
                                         "f16 (update too)": ("f16", {})}, "layer")
    show("gdn", res, s, ["f32", "fp16 state", "f16 (update too)"])
    for n in res:
        print("   %s: S at t = 4096, 10^5: %s" % (n, " ".join(
            "%.2g" % e for (t, e, _) in res[n] if t in (4096, 100000))))
    write("trtmc", "run t eS eo", [(n,) + r for n in res for r in res[n]])


def part_flashkda():
    """FlashKDA (b): kda decoding, S in bf16 between binary32 updates, gates lb sigmoid(N) with
    lb = -5, d = 128, T = 4096 and 10^5"""
    print("\n## FlashKDA (b): kda seq, lb = -5, d = 128")
    res, s = decode("kda", 128, 100000, {"f32": ("f32", {}),
                                         "bf16 state": ("f32", {"cache": "bf16"})},
                    "lb5", cks=[4096, 100000])
    show("kda", res, s, ["f32", "bf16 state"])
    write("flashkda", "run t eS eo", [(n,) + r for n in res for r in res[n]])


def part_decode():
    """the figure: every gated model's decoding, S in f16, bf16, binary32, d = 64, T = 10^5"""
    print("\n## decode: S in 16 bits, every gated model, d = 64, T = 10^5, layer gates")
    rows = []
    for model in ("gdn", "kda", "gla", "mamba2", "rwkv7"):
        res, s = decode(model, 64, 100000, {"f32": ("f32", {}),
                                            "f16": ("f32", {"cache": "f16"}),
                                            "bf16": ("f32", {"cache": "bf16"})}, "layer")
        show(model, res, s, ["f32", "f16", "bf16"])
        for n in res:
            rows += [(model, n) + r for r in res[n]]
    write("decode", "model state t eS eo", rows)


def part_spark():
    """sparkinfer PR 244: gdn and kda decoding with S in bf16 to 10^6 steps, decays near 1"""
    print("\n## sparkinfer 244: S in bf16, slow gates (decays near 1), d = 64, 10^6 steps")
    rows = []
    for model in ("gdn", "kda"):
        res, s = decode(model, 64, 1000000, {"f32": ("f32", {}),
                                             "bf16": ("f32", {"cache": "bf16"})}, "slow")
        show(model, res, s, ["f32", "bf16"])
        for n in res:
            print("   %s %s: S at t = 10^3 .. 10^6: %s" % (model, n, " ".join(
                "%.2g" % e for (t, e, _) in res[n] if t in (1000, 10000, 100000, 1000000))))
            rows += [(model, n) + r for r in res[n]]
    write("spark", "model state t eS eo", rows)


_orig = gates


def gates(model, rng, n, d, kind):  # noqa: F811  (FlashKDA's lower-bounded gate)
    if kind == "lb5":
        x = _orig(model, rng, n, d, "layer")
        x["lg"] = (-5 * sig(rng.standard_normal((n, d)))).astype(np.float32).astype(np.float64)
        return x
    return _orig(model, rng, n, d, kind)


gates.A = 4.0
_orig.A = gates.A

if __name__ == "__main__":
    parts = sys.argv[1:] or ["megagdn", "entries", "stage", "vmlx", "sglang", "trtmc", "flashkda",
                             "decode", "spark"]
    print("# %s, %s" % (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                        open("/proc/cpuinfo").read().split("model name")[1].split("\n")[0][3:]))
    for p in parts:
        globals()["part_" + p]()
