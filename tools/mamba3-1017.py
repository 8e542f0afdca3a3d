#!/usr/bin/python3
"""mamba3-1017.py: state-spaces/mamba issue 1017's setting (Mamba-3 SISO, the 'plain' case: no D,
no Z, no input states): batch 4 as 4 heads, T = 256, d = dv = 64, inputs as create_mamba3_siso_inputs draws them.
Measures vlastab's policies (seq, and the kernel's chunk:64) against binary64, and formula slips,
by fla's rel_rms and by the Mamba-3 test's own metric (95th percentile of |o - ref| / |ref| over
|ref| >= 1e-2, rtol 0.1).
usage: mamba3-1017.py [--out FILE]   FILE: the same rows as a table (docs/math.md section 9:
'#' header, whitespace columns, the case names without spaces), claim 10e's (make figures)"""
import io, sys, os, warnings
import numpy as np
sys.path[:0] = ["tests", "tools/python"]
import vlastab, test_mamba3 as m3

def issue_inputs(H=4, T=256, d=64, dv=64, seed=0):
    rng = np.random.default_rng(seed)
    rms = lambda x: x / np.sqrt((x ** 2).mean(-1, keepdims=True))
    dt = np.exp(rng.uniform(np.log(1e-3), np.log(0.1), (H, T)))
    A = -rng.uniform(1, 16, (H, T))
    th = np.zeros((H, T, d)); th[:, :, : d // 4] = np.pi * np.tanh(rng.standard_normal((H, T, d // 4)))
    qb, kb = rng.standard_normal((H, 1, d)), rng.standard_normal((H, 1, d))
    return {"q": rms(rng.standard_normal((H, T, d))) + qb, "k": rms(rng.standard_normal((H, T, d))) + kb,
            "v": rng.standard_normal((H, T, dv)), "logdecay": A * dt,
            "beta": 1 / (1 + np.exp(-rng.uniform(0, 1, (H, T)))), "decay": dt, "u": th}

def rel_rms(o, r): return float(np.sqrt(((o - r) ** 2).sum() / (r ** 2).sum()))
def p95(o, r):
    m = np.abs(r) >= 1e-2
    return float(np.quantile(np.abs(o - r)[m] / (np.abs(r)[m] + 1e-6), 0.95))
def allclose_frac(o, r, rtol=0.1, atol=0.0):
    return float(np.mean(np.abs(o - r) > atol + rtol * np.abs(r)))

def bf16(a):
    u = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return u.astype(np.uint32).view(np.float32).astype(np.float64)
f32 = lambda a: np.asarray(a, np.float32).astype(np.float64)

if __name__ == '__main__':
    out = sys.argv[2] if sys.argv[1:2] == ["--out"] and len(sys.argv) == 3 else None
    if sys.argv[1:] and out is None:
        print("usage: mamba3-1017.py [--out FILE]", file=sys.stderr)
        sys.exit(2)
    x = issue_inputs()
    o_ref, _ = m3.mamba3_seq(**x)
    rows = []
    print("case                         rel_rms   p95_rel   max_abs   frac(|e|>0.1|ref|)")
    def row(name, o):
        r = (rel_rms(o, o_ref), p95(o, o_ref), np.abs(o - o_ref).max(), allclose_frac(o, o_ref))
        rows.append((name, r))
        print("%-28s %.2e  %.2e  %.2e  %.4f" % ((name,) + r))
    for p, form in (("f64", "seq"), ("f32", "seq"), ("bf16-kern", "seq"), ("bf16", "seq"),
                    ("f64", "chunk:64"), ("f32", "chunk:64"), ("bf16-kern", "chunk:64")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = vlastab.run(x["q"], x["k"], x["v"], model="mamba3", precision=p, u=x["u"], beta=x["beta"],
                            decay=x["decay"], logdecay=x["logdecay"], reference=False, form=form)
        o = r["o"]
        if p.startswith("bf16"):  # the kernel's output tensor is bfloat16
            o = bf16(o)
        row("vlastab " + p + ("" if form == "seq" else " " + form), o)
    for slip in ("late", "euler", "undecayed"):
        o, _ = m3.mamba3_seq(**x, slip=slip)
        row("numpy slip " + slip, o)

    y = dict(x)
    for key in ("q", "k", "v"):
        y[key] = bf16(x[key])
    y["beta"] = bf16(x["beta"])  # Trap is bf16; sigmoid in fp32 (rounded here after: a bound from below)
    for key in ("logdecay", "decay", "u"):
        y[key] = f32(x[key])
    o_in, _ = m3.mamba3_seq(**y)
    row("exact, kernel's input dtypes", o_in)
    row("... and o rounded to bf16", bf16(o_in))
    for key in ("logdecay", "decay", "u"):
        z = dict(x); z[key] = bf16(x[key])
        o_z, _ = m3.mamba3_seq(**z)
        row("exact, only %s in bf16" % key, o_z)
    if out:
        H, T, d = x["q"].shape
        import datetime, subprocess
        git = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True,
                             text=True).stdout.strip() or "unknown"
        from vlastab.torch_trace import _write  # a link at out is replaced, not followed
        f = io.StringIO()
        f.write("# date: %s\n# git: %s\n" % (datetime.datetime.now(datetime.timezone.utc)
                                             .strftime("%Y-%m-%dT%H:%M:%SZ"), git))
        f.write("# program: tools/mamba3-1017.py\n# command: %s tools/mamba3-1017.py "
                "--out %s\n# setting: state-spaces/mamba issue 1017, %d heads, T = %d, d = dv = %d, "
                "against the binary64 recurrence (tests/test_mamba3.py)\n" % (sys.executable, out, H, T, d))
        f.write("# columns: case rel_rms p95_rel max_abs frac_rtol0.1\n")
        for name, r in rows:
            key = name.replace("... and o rounded to bf16", "exact, kernel's input dtypes, o bf16")
            key = key.replace("'", "").replace(", ", "-").replace(" ", "-")
            f.write("%s %.17g %.17g %.17g %.17g\n" % ((key,) + r))
        _write(out, f.getvalue().encode())
