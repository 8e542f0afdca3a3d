#!/usr/bin/python3
"""Scores vlastab's kernel judge and the field's rules on the kernels of kernels.py (correct
variants and mutants), side by side, forward and gradients, in bf16 and float32 inputs.

    VLA_BIN_DIR=/work/judge-stable/bin PYTHONPATH=/work/judge-stable/python \\
        nice /usr/bin/python3 bench/mutants/score.py --out RUNDIR [--jobs 2]

Per kernel, dtype, gate law and seed:
  judge   vlastab.judge(fn, q, k, v, g=, beta=, model=, dtype=, form="chunk:C", grad=False) on the
          forward inputs (verdict.ok; the heads, causality and the chunk split apart), then
          judge(..., grad=True) on the gradient inputs (the rows of Verdict.grads); an exception
          or "gradients not judged" fails the gate, its reason recorded.
  fla     fla's tests' assert_close: get_err_ratio = rms(ref - tri) / (rms(ref) + 1e-8) against a
          ratio per tensor (skipped, i.e. passed, when max |ref - tri| <= 1e-6), the reference a
          float32 token recurrence on the same rounded inputs, with fla's h0 / dht (README).
  torch   torch.testing.assert_close(tri, ref.to(tri.dtype)) at the dtype's defaults.
  cos     cosine similarity of the flattened tensors >= 0.99.
  pearson Pearson correlation of the flattened tensors >= 0.99.
Writes RUNDIR/results.json (every number), RUNDIR/results.md (the tables), RUNDIR/verdicts/
(the judge's text per call). Nothing is cached across runs: rerun it with the newest judge.
"""
import argparse
import json
import math
import os
import platform
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# fla's ratios (tests/ops/test_gdn.py::test_chunk and tests/ops/test_kda.py::test_chunk at
# fla-org/flash-linear-attention bc3b101; the same numbers in both); mamba2 held to gdn's
FLA_RATIO = {"o": 0.005, "ht": 0.005, "dq": 0.008, "dk": 0.008, "dv": 0.008, "dg": 0.02,
             "dbeta": 0.02, "dh0": 0.008}
COS_MIN = 0.99
PEARSON_MIN = 0.99
RULES = ("judge", "fla", "torch", "cos", "pearson")


def _sizes(s):
    v = tuple(int(x) for x in s.split(","))
    if len(v) != 4:
        raise argparse.ArgumentTypeError("B,T,H,d")
    return v


def parse(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, help="the run's folder (created; its files replaced)")
    p.add_argument("--bin-dir", default=os.environ.get("VLA_BIN_DIR"),
                   help="vla-check's folder (default $VLA_BIN_DIR)")
    p.add_argument("--lib", default=None, help="libvlastab.so for `import vlastab` (default "
                   "$VLASTAB_LIB, else BIN_DIR/../build, ../lib, the repository's build/); "
                   "judge() itself runs only vla-check")
    p.add_argument("--seed", type=int, nargs="+", default=[0], help="input seeds (default 0)")
    p.add_argument("--gates", choices=("mild", "strong", "both"), default="mild")
    p.add_argument("--dtypes", default="bf16,f32", help="bf16, f32 or both (default)")
    p.add_argument("--only", nargs="+", default=None, help="kernel names (kernels.py) or "
                   "prefixes ending in '.' (gdn.)")
    p.add_argument("--no-grad", action="store_true", help="forward only")
    p.add_argument("--no-judge", action="store_true", help="the field's rules only")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--fwd-size", type=_sizes, default=(1, 1024, 2, 64), metavar="B,T,H,d")
    p.add_argument("--grad-size", type=_sizes, default=(1, 256, 2, 32), metavar="B,T,H,d")
    p.add_argument("--judge-from", default=None, metavar="JSON", help="with --no-judge: take "
                   "the judge's results from an earlier run's results.json (same kernels, "
                   "dtypes, gates, seeds, sizes), the field's rules recomputed")
    p.add_argument("--from-json", action="store_true", help="rewrite OUT/results.md from "
                   "OUT/results.json without running anything")
    p.add_argument("--compare", default=None, metavar="JSON", help="compare OUT/results.json "
                   "with an earlier results.json, task by task (verdicts, and every field JSON "
                   "holds to 4 significant digits), without running anything; exit 1 when any "
                   "differs")
    p.add_argument("--timeout", type=float, default=900, help="per vla-check call, seconds")
    return p.parse_args(argv)


def _setup_env(a):
    if a.bin_dir:
        os.environ["VLA_BIN_DIR"] = os.path.abspath(a.bin_dir)
    lib = a.lib or os.environ.get("VLASTAB_LIB")
    if not lib:
        cands = []
        if a.bin_dir:
            cands += [os.path.join(a.bin_dir, "..", d, "libvlastab.so") for d in ("build", "lib")]
        cands.append(os.path.join(HERE, "..", "..", "build", "libvlastab.so"))
        cands.append(os.path.join(HERE, "..", "..", "..", "main", "build", "libvlastab.so"))
        lib = next((c for c in cands if os.path.exists(c)), None)
    if lib:
        os.environ["VLASTAB_LIB"] = os.path.abspath(lib)


# ---------------------------------------------------------------------------------- inputs

def make_inputs(model, size, gates, seed):
    """standard normal q, k, v; beta = sigmoid(N); g mild: -0.1 softplus(N); strong: the odd heads
    -4 softplus(N) (a chunk of 64 decays by about e^-180), the even heads mild; kda's g per key
    channel. S0 and dht standard normal (fla's h0, dht), do standard normal. float32."""
    import torch
    B, T, H, d = size
    gen = torch.Generator().manual_seed(1000 * seed + {"gdn": 1, "kda": 2, "mamba2": 3}[model])
    r = lambda *s: torch.randn(*s, generator=gen)
    q, k, v = r(B, T, H, d), r(B, T, H, d), r(B, T, H, d)
    gs = (B, T, H, d) if model == "kda" else (B, T, H)
    g = -0.1 * torch.nn.functional.softplus(r(*gs))
    if gates == "strong":
        gs_ = -4.0 * torch.nn.functional.softplus(r(*gs))
        odd = (torch.arange(H) % 2 == 1).view((1, 1, H) + (1,) * (len(gs) - 3))
        g = torch.where(odd, gs_, g)
    beta = None if model == "mamba2" else torch.sigmoid(r(B, T, H))
    S0 = r(B, H, d, d)
    do = r(B, T, H, d)
    dht = r(B, H, d, d)
    return dict(q=q, k=k, v=v, g=g, beta=beta, S0=S0, do=do, dht=dht)


# ---------------------------------------------------------------------------------- measures

def _f64(x):
    return x.detach().double().reshape(-1)


def measures(tri, ref, name):
    """the field's numbers for one tensor: fla's ratio and max |diff|, torch's assert_close, cos,
    Pearson"""
    import torch
    t, r = _f64(tri), _f64(ref)
    finite = bool(torch.isfinite(t).all())
    out = {"finite": finite}
    diff = t - r
    absmax = float(diff.abs().max()) if finite else math.inf
    rms_r = float(r.square().mean().sqrt())
    ratio = float(diff.square().mean().sqrt()) / (rms_r + 1e-8) if finite else math.inf
    thr = FLA_RATIO[name]
    out["fla_ratio"] = ratio
    out["fla_absmax"] = absmax
    out["fla_threshold"] = thr
    out["fla_ok"] = bool(finite and (absmax <= 1e-6 or ratio < thr))
    try:
        torch.testing.assert_close(tri.detach(), ref.detach().to(tri.dtype))
        out["torch_ok"] = True
    except AssertionError:
        out["torch_ok"] = False
    rtol, atol = {torch.bfloat16: (1.6e-2, 1e-5), torch.float16: (1e-3, 1e-5),
                  torch.float32: (1.3e-6, 1e-5), torch.float64: (1e-7, 1e-7)}[tri.dtype]
    rr = _f64(ref.detach().to(tri.dtype))
    bad = ~((t - rr).abs() <= atol + rtol * rr.abs()) if finite else torch.ones_like(t, dtype=bool)
    out["torch_mismatch_frac"] = float(bad.double().mean())
    if finite and float(t.norm()) > 0 and float(r.norm()) > 0:
        cos = float(t @ r / (t.norm() * r.norm()))
        tc, rc = t - t.mean(), r - r.mean()
        pear = float(tc @ rc / (tc.norm() * rc.norm()))
    else:
        cos = pear = float("nan")
    out["cos"] = cos
    out["pearson"] = pear
    out["cos_ok"] = bool(cos >= COS_MIN)
    out["pearson_ok"] = bool(pear >= PEARSON_MIN)
    return out


def _relnorm(a, b):
    import torch
    a, b = _f64(a), _f64(b)
    if not bool(torch.isfinite(a).all()):
        return math.inf
    return float((a - b).norm() / b.norm())


def _reference(model, x, dtype, what):
    """the float32 token recurrence on the inputs rounded to dtype (fla's tests' reference) and,
    for the forward, the float64 one (computed per task: nothing is cached)"""
    import torch
    from kernels import reference
    xr = {n: (None if x[n] is None else x[n].detach().to(dtype)) for n in ("q", "k", "v", "g",
                                                                          "beta")}
    if what == "fwd":
        args = {n: (None if xr[n] is None else xr[n].float()) for n in xr}
        with torch.no_grad():
            o32, S32 = reference(model, args["q"], args["k"], args["v"], g=args["g"],
                                 beta=args["beta"], initial_state=x["S0"],
                                 output_final_state=True, dtype=torch.float32)
            o64, S64 = reference(model, args["q"], args["k"], args["v"], g=args["g"],
                                 beta=args["beta"], initial_state=x["S0"],
                                 output_final_state=True, dtype=torch.float64)
        res = {"o": o32, "ht": S32, "o64": o64, "ht64": S64}
    else:
        lv = {n: (None if xr[n] is None else xr[n].detach().float().clone().requires_grad_(True))
              for n in xr}
        h0 = x["S0"].clone().requires_grad_(True)
        o, S = reference(model, lv["q"], lv["k"], lv["v"], g=lv["g"], beta=lv["beta"],
                         initial_state=h0, output_final_state=True, dtype=torch.float32)
        ((o * x["do"].to(dtype).float()).sum() + (S * x["dht"]).sum()).backward()
        res = {"d" + n: lv[n].grad for n in lv if lv[n] is not None}
        res["dh0"] = h0.grad
    return res


def field_fwd(kn, x, dtype):
    import torch
    xr = {n: (None if x[n] is None else x[n].to(dtype)) for n in ("q", "k", "v", "g", "beta")}
    kw = {"g": xr["g"]} if xr["beta"] is None else {"g": xr["g"], "beta": xr["beta"]}
    with torch.no_grad():
        o, S = kn.fn(xr["q"], xr["k"], xr["v"], initial_state=x["S0"].clone(),
                     output_final_state=True, **kw)
    ref = _reference(kn.model, x, dtype, "fwd")
    res = {"o": measures(o, ref["o"], "o"), "ht": measures(S, ref["ht"], "ht")}
    res["o"]["err_vs_f64"] = _relnorm(o, ref["o64"])
    res["ht"]["err_vs_f64"] = _relnorm(S, ref["ht64"])
    res["o"]["ref32_err_vs_f64"] = _relnorm(ref["o"], ref["o64"])
    return res


def field_grad(kn, x, dtype):
    import torch
    # leaves of their own (.to(float32) of a float32 tensor is the tensor itself: without the
    # clone the kernel's and the reference's gradients would accumulate in the same .grad)
    xr = {n: (None if x[n] is None else x[n].detach().to(dtype).clone().requires_grad_(True))
          for n in ("q", "k", "v", "g", "beta")}
    h0 = x["S0"].clone().requires_grad_(True)
    kw = {"g": xr["g"]} if xr["beta"] is None else {"g": xr["g"], "beta": xr["beta"]}
    o, S = kn.fn(xr["q"], xr["k"], xr["v"], initial_state=h0, output_final_state=True, **kw)
    ((o * x["do"].to(dtype)).sum() + (S * x["dht"]).sum()).backward()
    ref = _reference(kn.model, x, dtype, "grad")
    res = {}
    for n, leaf in list(xr.items()) + [("h0", h0)]:
        if leaf is None:
            continue
        gr = leaf.grad if leaf.grad is not None else torch.zeros_like(leaf)
        res["d" + n] = measures(gr, ref["d" + n], "d" + n)
    return res


# ---------------------------------------------------------------------------------- the judge

def judge_fwd(kn, x, dtype, folder, timeout):
    import vlastab
    xr = {n: x[n] for n in ("q", "k", "v", "g", "beta")}
    out = {"ok": False}
    try:
        v = vlastab.judge(kn.fn, xr["q"], xr["k"], xr["v"], g=xr["g"], beta=xr["beta"],
                          model=kn.model, dtype=dtype, form="chunk:%d" % kn.chunk, grad=False,
                          timeout=timeout)
    except Exception as e:  # noqa: BLE001: an exception fails the gate, its reason kept
        out["error"] = "%s: %s" % (type(e).__name__, str(e).split("\n")[0][:300])
        _write(folder, out["error"] + "\n" + traceback.format_exc())
        return out
    _write(folder, str(v))
    out["ok"] = bool(v.ok)
    out["heads_ok"] = bool(v.judged_ok)
    # a newer judge: the float32 "logic" rerun of fn (16-bit dtypes), gradients that failed
    out["logic_ok"] = None if getattr(v, "logic", None) is None else bool(v.logic_ok)
    if getattr(v, "logic", None):
        lv = v.logic.get("verdict") or {}
        out["logic_heads"] = [{k: h.get(k) for k in ("head", "verdict", "max_rel_window",
                                                      "budget", "attainable_form")}
                              for h in lv.get("heads", [])]
    out["causality_ok"] = all(c["ok"] for c in v.causality)
    out["split_ok"] = None if v.chunk_split is None else bool(v.chunk_split["ok"])
    out["split_diff"] = None if v.chunk_split is None else v.chunk_split["diff_max"]
    out["split_state_rel"] = None if v.chunk_split is None else v.chunk_split.get("state_rel")
    out["causality"] = [{k: c[k] for k in ("P", "moved", "first_t", "ulps_max", "ok")}
                        for c in v.causality]
    out["heads"] = [{k: h.get(k) for k in ("head", "verdict", "rel_rms", "max_rel_window",
                                            "attainable_seq", "attainable_form", "budget",
                                            "bits_lost", "first_t_nonfinite")} for h in v.heads]
    out["summary"] = v.json.get("summary")
    return out


def judge_grad(kn, x, dtype, folder, timeout):
    import vlastab
    out = {"ok": False}
    try:
        v = vlastab.judge(kn.fn, x["q"], x["k"], x["v"], g=x["g"], beta=x["beta"],
                          model=kn.model, dtype=dtype, form="chunk:%d" % kn.chunk, grad=True,
                          timeout=timeout)
    except Exception as e:  # noqa: BLE001
        out["error"] = "%s: %s" % (type(e).__name__, str(e).split("\n")[0][:300])
        _write(folder, out["error"] + "\n" + traceback.format_exc())
        return out
    _write(folder, str(v))
    out["fwd_ok"] = all(h.get("verdict") == "ok" for h in v.heads)
    out["verdict_ok"] = bool(v.ok)
    lg = getattr(v, "logic", None)
    out["logic_ok"] = None if lg is None else bool(v.logic_ok)
    lgrads = ((lg or {}).get("verdict") or {}).get("grads") or []
    out["logic_grads_ok"] = None if not lgrads else all(g.get("verdict") == "ok" for g in lgrads)
    out["logic_rows"] = [{k: g.get(k) for k in ("grad", "head", "verdict", "max_rel_window",
                                                 "budget")} for g in lgrads]
    if getattr(v, "grads_failed", None):
        out["error"] = "gradients failed: %s" % v.grads_failed
        return out
    if not v.grads:
        out["error"] = "gradients not judged: %s" % v.grads_skipped
        return out
    rows = [{k: gr.get(k) for k in ("grad", "head", "verdict", "rel_rms", "max_rel_window",
                                     "attainable_seq", "attainable_form", "input_budget",
                                     "budget", "first_t_nonfinite")}
            for gr in v.grads]
    out["rows"] = rows
    # the gradients pass when every row of Verdict.grads is ok and, with a judge that has it,
    # the float32 logic rerun's gradients too
    out["ok"] = all(r["verdict"] == "ok" for r in rows) and out["logic_grads_ok"] is not False
    out["beyond"] = sorted({r["grad"] for r in rows if r["verdict"] != "ok"})
    out["worst_over_budget"] = max(
        ((r["max_rel_window"] or math.inf) / r["budget"] if r["budget"] else math.inf)
        if r["first_t_nonfinite"] is None else math.inf for r in rows)
    return out


def _write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text + "\n")


# ---------------------------------------------------------------------------------- one task

def run_task(task):
    import torch
    torch.set_num_threads(1)
    from kernels import KERNELS
    name, dts, gates, seed, a = task
    kn = KERNELS[name]
    dtype = {"bf16": torch.bfloat16, "f32": torch.float32}[dts]
    res = {"kernel": name, "model": kn.model, "kind": kn.kind, "where": kn.where,
           "dtype": dts, "gates": gates, "seed": seed, "chunk": kn.chunk}
    t0 = time.time()
    tag = "%s.%s.%s.s%d" % (name, dts, gates, seed)
    xf = make_inputs(kn.model, a.fwd_size, gates, seed)
    try:
        res["field_fwd"] = field_fwd(kn, xf, dtype)
    except Exception as e:  # noqa: BLE001
        res["field_fwd_error"] = "%s: %s" % (type(e).__name__, str(e)[:300])
    if not a.no_judge:
        res["judge_fwd"] = judge_fwd(kn, xf, dtype, os.path.join(a.out, "verdicts",
                                                                  tag + ".fwd.txt"), a.timeout)
    if not a.no_grad:
        xg = make_inputs(kn.model, a.grad_size, gates, seed)
        try:
            res["field_grad"] = field_grad(kn, xg, dtype)
        except Exception as e:  # noqa: BLE001
            res["field_grad_error"] = "%s: %s" % (type(e).__name__, str(e)[:300])
        if not a.no_judge:
            res["judge_grad"] = judge_grad(kn, xg, dtype, os.path.join(a.out, "verdicts",
                                                                        tag + ".grad.txt"),
                                           a.timeout)
    res["seconds"] = time.time() - t0
    return res


# ---------------------------------------------------------------------------------- verdicts

def verdicts(r):
    """{rule: {"fwd": pass?, "grad": pass?}} (None: not run); pass = the rule accepts the kernel"""
    out = {}
    ff, fg = r.get("field_fwd"), r.get("field_grad")
    for rule in ("fla", "torch", "cos", "pearson"):
        key = rule + "_ok"
        out[rule] = {
            "fwd": None if ff is None and "field_fwd_error" not in r else
            (False if ff is None else all(m[key] for m in ff.values())),
            "grad": None if fg is None and "field_grad_error" not in r else
            (False if fg is None else all(m[key] for m in fg.values()))}
    jf, jg = r.get("judge_fwd"), r.get("judge_grad")
    out["judge"] = {"fwd": None if jf is None else jf["ok"],
                    "grad": None if jg is None else jg["ok"]}
    return out


def summarize(results, a, wall, info):
    from kernels import KERNELS
    lines = []
    w = lines.append
    w("# Mutation benchmark of vlastab.judge and the field's rules\n")
    w("Made by `%s` (%s)." % (info["command"], info["date"]))
    w("Machine: %s, %s cores; wall time %.0f s (%.1f min) with --jobs %d; judge: %s "
      "(vla-check of %s, sha256 %s...).\n" % (
          info["cpu"], info["ncpu"], wall, wall / 60, a.jobs, info["bin_dir"],
          info.get("vla_check_mtime", "?"), (info.get("vla_check_sha256") or "?")[:16]))
    if info.get("judge_from"):
        w("The judge's results are those of %s (a run of %.0f s, the same inputs); the field's "
          "rules were recomputed by this run (--no-judge --judge-from).\n" % (
              info["judge_from"], info.get("judge_wall_s") or 0))
    w("Forward inputs (B, T, H, d) = %s, gradient inputs %s; gates %s; seeds %s. "
      "The field's rules use a float32 token recurrence on the same rounded inputs, with "
      "fla's h0 and dht (the final state ht and dh0 are judged by them); the judge gets no "
      "initial state (its chunk-split check carries one).\n" % (
          a.fwd_size, a.grad_size if not a.no_grad else "-", a.gates, a.seed))
    nk = {k: sum(1 for kn in KERNELS.values() if kn.kind == k and _selected(kn.name, a))
          for k in ("correct", "mutant")}
    w("%d correct kernels, %d mutants (%d of them pure-precision bugs).\n" % (
        nk["correct"], nk["mutant"], sum(1 for kn in KERNELS.values() if _selected(kn.name, a)
                                         and kn.where == "precision")))
    w("## Summary: mutants caught and correct kernels failed, per rule\n")
    w("A mutant is *caught* when the rule fails it; 'fwd' counts the forward check "
      "(o and, for the field's rules, ht; the judge: heads, causality, chunk split), 'grad' the "
      "gradients (the judge's forward at the gradient size is not counted there), 'any' either. "
      "Exact-arithmetic mutants (fwd, state, bwd) and pure-precision ones (prec) apart; "
      "'bwd' counts the forward-correct, gradient-wrong mutants caught by the gradients.\n")
    groups = {}
    for r in results:
        groups.setdefault((r["gates"], r["seed"], r["dtype"]), []).append(r)
    w("| gates | seed | dtype | rule | correct failed fwd | correct failed grad | "
      "mutants caught fwd | caught grad | caught any | bwd caught (grad) | prec caught (any) |")
    w("|---|---|---|---|---|---|---|---|---|---|---|")
    for (gates, seed, dts), rs in sorted(groups.items()):
        cor = [r for r in rs if r["kind"] == "correct"]
        mut = [r for r in rs if r["kind"] == "mutant" and r["where"] != "precision"]
        bwd = [r for r in mut if r["where"] == "bwd"]
        pre = [r for r in rs if r["where"] == "precision"]
        for rule in RULES:
            V = {r["kernel"]: verdicts(r)[rule] for r in rs}

            def cnt(lst, stage, want):
                xs = [V[r["kernel"]][stage] for r in lst]
                xs = [x for x in xs if x is not None]
                return "%d/%d" % (sum(1 for x in xs if x is want), len(xs)) if xs else "-"

            def any_(lst):
                xs = [(V[r["kernel"]]["fwd"], V[r["kernel"]]["grad"]) for r in lst]
                xs = [x for x in xs if x != (None, None)]
                return "%d/%d" % (sum(1 for f, g in xs if f is False or g is False), len(xs))
            w("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                gates, seed, dts, rule, cnt(cor, "fwd", False), cnt(cor, "grad", False),
                cnt(mut, "fwd", False), cnt(mut, "grad", False), any_(mut),
                cnt(bwd, "grad", False), any_(pre)))
    w("")
    w("## Per kernel\n")
    w("Cells: forward / gradients; `.` passes, `X` fails (for a mutant: caught), `-` not run. "
      "judge: the letters say what failed: h heads, c causality, s split, l the float32 logic "
      "rerun, e exception; gradients: the gradients beyond (l: the logic rerun's gradients). fla: the worst ratio over its threshold (o, ht; dq .. "
      "dh0). err64: o's norm-wise error against the float64 recurrence.\n")
    for (gates, seed, dts), rs in sorted(groups.items()):
        w("### gates %s, seed %d, %s\n" % (gates, seed, dts))
        w("| kernel | kind | judge fwd | judge grad | fla fwd | fla grad | torch | cos | "
          "pearson | err64 o | fla ratio/thr fwd | fla ratio/thr grad | s |")
        w("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for r in sorted(rs, key=lambda r: (r["kind"] != "correct", r["kernel"])):
            V = verdicts(r)
            m = lambda b: "-" if b is None else ("." if b else "X")
            jf, jg = r.get("judge_fwd"), r.get("judge_grad")
            jfs = "-" if jf is None else ("." if jf["ok"] else "X " + "".join(
                c for c, k in (("h", "heads_ok"), ("c", "causality_ok"), ("s", "split_ok"),
                               ("l", "logic_ok")) if jf.get(k) is False) +
                ("e" if "error" in jf else ""))
            jgs = "-" if jg is None else ("." if jg["ok"] else "X " + (
                ",".join(jg.get("beyond", [])) if "rows" in jg else "e") +
                (" l" if jg.get("logic_grads_ok") is False else ""))
            ff, fg = r.get("field_fwd"), r.get("field_grad")
            worst = lambda d: "-" if not d else "%.3g" % max(
                (x["fla_ratio"] / x["fla_threshold"]) for x in d.values())
            e64 = "-" if not ff else "%.2g" % ff["o"]["err_vs_f64"]
            w("| %s | %s | %s | %s | %s | %s | %s/%s | %s/%s | %s/%s | %s | %s | %s | %.0f |" % (
                r["kernel"], r["kind"] if r["kind"] == "correct" else r["where"], jfs, jgs,
                m(V["fla"]["fwd"]), m(V["fla"]["grad"]), m(V["torch"]["fwd"]),
                m(V["torch"]["grad"]), m(V["cos"]["fwd"]), m(V["cos"]["grad"]),
                m(V["pearson"]["fwd"]), m(V["pearson"]["grad"]), e64, worst(ff), worst(fg),
                r["seconds"]))
        w("")
    w("## Findings, generated\n")
    for (gates, seed, dts), rs in sorted(groups.items()):
        mut = [r for r in rs if r["kind"] == "mutant"]
        none = [r["kernel"] for r in mut if not any(
            v[s] is False for rule, v in verdicts(r).items() if rule != "torch"
            for s in ("fwd", "grad"))]
        w("- gates %s, seed %d, %s: mutants no rule but torch's assert_close catches (%d): %s" % (
            gates, seed, dts, len(none), ", ".join("`%s`" % n for n in none) or "none"))
        for rule in RULES:
            miss = [r["kernel"] for r in mut if not any(verdicts(r)[rule][s] is False
                                                         for s in ("fwd", "grad"))]
            w("  - %s misses (%d): %s" % (rule, len(miss), ", ".join("`%s`" % n for n in miss)
                                          or "none"))
        onlyj = [r["kernel"] for r in mut if any(verdicts(r)["judge"][s] is False for s in
                                                  ("fwd", "grad")) and not any(
            verdicts(r)[rule][s] is False for rule in RULES if rule != "judge"
            for s in ("fwd", "grad"))]
        w("- gates %s, seed %d, %s: mutants only the judge catches (%d): %s" % (
            gates, seed, dts, len(onlyj), ", ".join("`%s`" % n for n in onlyj) or "none"))
        for r in rs:
            if r["kind"] != "correct":
                continue
            V = verdicts(r)
            bad = ["%s %s" % (rule, s) for rule in RULES for s in ("fwd", "grad")
                   if V[rule][s] is False and rule != "torch"]
            if bad:
                w("- gates %s, seed %d, %s: correct `%s` failed by %s%s" % (
                    gates, seed, dts, r["kernel"], ", ".join(bad), _why(r)))
    bykey = {}
    for r in results:
        bykey.setdefault((r["gates"], r["seed"], r["kernel"]), {})[r["dtype"]] = r
    for rule in RULES:
        only32 = []
        for (gates, seed, name), d in sorted(bykey.items()):
            if "bf16" not in d or "f32" not in d or d["f32"]["kind"] != "mutant":
                continue
            cb = any(verdicts(d["bf16"])[rule][s] is False for s in ("fwd", "grad"))
            cf = any(verdicts(d["f32"])[rule][s] is False for s in ("fwd", "grad"))
            if cf and not cb:
                only32.append("%s (%s)" % (name, gates))
        w("- %s: mutants caught in float32 but not in bf16 (%d): %s" % (
            rule, len(only32), ", ".join("`%s`" % n for n in only32) or "none"))
    w("")
    w("## Kernels\n")
    for kn in KERNELS.values():
        if _selected(kn.name, a):
            w("- `%s` (%s%s, chunk %d): %s" % (kn.name, kn.kind, "" if kn.kind == "correct"
                                                else ", " + kn.where, kn.chunk, kn.desc))
    return "\n".join(lines) + "\n"


def _why(r):
    """the judge's numbers for a failed correct kernel"""
    out = []
    jf, jg = r.get("judge_fwd"), r.get("judge_grad")
    if jf and not jf["ok"]:
        if "error" in jf:
            out.append("judge fwd: " + jf["error"])
        else:
            hb = [h for h in jf.get("heads", []) if h.get("verdict") != "ok"]
            out += ["judge head %s: %.3g > budget %.3g" % (h["head"], h["max_rel_window"] or
                                                           math.inf, h["budget"]) for h in hb]
            if jf.get("split_ok") is False:
                out.append("split %.3g" % jf["split_diff"])
            if jf.get("causality_ok") is False:
                out.append("causality moved")
            if jf.get("logic_ok") is False:
                out += ["float32 logic rerun head %s: %.3g > budget %.3g" % (
                    h["head"], h["max_rel_window"] or math.inf, h["budget"])
                    for h in jf.get("logic_heads", []) if h.get("verdict") != "ok"]
    if jg and not jg["ok"]:
        if "rows" in jg:
            out += ["judge %s head %s: %.3g > budget %.3g (%.2fx; attainable seq %.3g)" % (
                x["grad"], x["head"], x["max_rel_window"] or math.inf, x["budget"],
                (x["max_rel_window"] or math.inf) / x["budget"], x["attainable_seq"])
                for x in jg["rows"] if x["verdict"] != "ok"]
            out += ["float32 logic rerun %s head %s: %.3g > budget %.3g" % (
                x["grad"], x["head"], x["max_rel_window"] or math.inf, x["budget"])
                for x in jg.get("logic_rows", []) if x.get("verdict") != "ok"]
        else:
            out.append("judge grad: " + jg.get("error", "?"))
    return (": " + "; ".join(out)) if out else ""


def _differences(old, new, path=""):
    """the fields of old (a results.json's, maybe rounded to 4 significant digits, empty fields
    dropped) that new lacks or holds otherwise, and new's non-empty fields that old lacks"""
    if isinstance(old, dict) and isinstance(new, dict):
        out = [d for k in old if k != "seconds" for d in
               (_differences(old[k], new[k], path + "." + k) if k in new else
                [(path + "." + k, old[k], "missing")])]
        return out + [(path + "." + k, "missing", new[k]) for k in new
                      if k not in old and k != "seconds" and new[k] not in (None, [], {}, "")]
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [d for i, (x, y) in enumerate(zip(old, new))
                for d in _differences(x, y, "%s[%d]" % (path, i))]
    if (isinstance(old, float) and isinstance(new, (int, float)) and not isinstance(new, bool)
            and (math.isnan(old) and math.isnan(new) or "%.4g" % old == "%.4g" % new)):
        return []
    return [] if old == new and type(old) == type(new) else [(path, old, new)]


def compare(a):
    try:
        with open(os.path.join(a.out, "results.json")) as f:
            new = json.load(f)["results"]
        with open(a.compare) as f:
            old = {(r["kernel"], r["dtype"], r["gates"], r["seed"]): r
                   for r in json.load(f)["results"]}
    except (OSError, ValueError, KeyError, TypeError) as e:
        print("score.py: --compare needs two results.json: %s: %s" % (type(e).__name__, e),
              file=sys.stderr)
        sys.exit(2)
    nv = nf = 0
    for r in new:
        key = (r["kernel"], r["dtype"], r["gates"], r["seed"])
        if key not in old:
            sys.exit("score.py: %s has no task %s" % (a.compare, "/".join(map(str, key))))
        diff = _differences(old[key], r)
        nv += old[key]["verdicts"] != r["verdicts"]
        nf += bool(diff)
        for path, x, y in diff:
            print("%s %s %s s%d %s: %.200s -> %.200s" % (r["kernel"], r["dtype"], r["gates"],
                                                       r["seed"], path[1:], x, y))
    print("score.py: %d tasks compared with %s: verdicts differ in %d, some field in %d"
          % (len(new), a.compare, nv, nf))
    sys.exit(1 if nf else 0)


def _selected(name, a):
    if not a.only:
        return True
    return any(name == o or (o.endswith(".") and name.startswith(o)) for o in a.only)


def main(argv=None):
    a = parse(argv)
    if a.compare:
        compare(a)
    if a.from_json:
        with open(os.path.join(a.out, "results.json")) as f:
            d = json.load(f)
        for k in ("fwd_size", "grad_size"):
            setattr(a, k, tuple(d["info"][k]) if d["info"][k] else None)
        gl = sorted({r["gates"] for r in d["results"]})
        a.gates = gl[0] if len(gl) == 1 else "both"
        a.seed = sorted({r["seed"] for r in d["results"]})
        a.no_grad = d["info"]["grad_size"] is None
        a.jobs = d["info"].get("jobs", a.jobs)
        only = sorted({r["kernel"] for r in d["results"]})
        from kernels import KERNELS
        a.only = None if len(only) == len(KERNELS) else only
        with open(os.path.join(a.out, "results.md"), "w") as f:
            f.write(summarize(d["results"], a, d["info"]["wall_s"], d["info"]))
        print("score.py: %s/results.md rewritten from results.json" % a.out)
        return
    _setup_env(a)
    import torch
    from kernels import KERNELS
    names = [n for n in KERNELS if _selected(n, a)]
    if not names:
        sys.exit("score.py: --only %s selects no kernel (%s)" % (a.only, ", ".join(KERNELS)))
    if not a.no_judge:
        import vlastab  # noqa: F401: fail early without vla-check or the library
        from vlastab.verdict import vla_check_path
        exe = vla_check_path()
    else:
        exe = None
    os.makedirs(a.out, exist_ok=True)
    dts = [d for d in a.dtypes.split(",") if d]
    gates = ["mild", "strong"] if a.gates == "both" else [a.gates]
    tasks = [(n, d, gt, s, a) for gt in gates for s in a.seed for d in dts for n in names]
    t0 = time.time()
    results = []
    print("score.py: %d kernels x %d dtypes x %d gate laws x %d seeds = %d tasks, %d jobs; "
          "vla-check %s" % (len(names), len(dts), len(gates), len(a.seed), len(tasks), a.jobs,
                            exe), flush=True)
    if a.jobs > 1:
        import multiprocessing as mp
        with mp.get_context("fork").Pool(a.jobs) as pool:
            for i, r in enumerate(pool.imap_unordered(run_task, tasks)):
                results.append(r)
                _progress(i, len(tasks), r, t0)
    else:
        for i, t in enumerate(tasks):
            r = run_task(t)
            results.append(r)
            _progress(i, len(tasks), r, t0)
    wall = time.time() - t0
    try:
        cpu = [l.split(":", 1)[1].strip() for l in subprocess.run(
            ["lscpu"], capture_output=True, text=True).stdout.splitlines()
            if l.startswith("Model name")][0]
    except (OSError, IndexError):
        cpu = platform.processor()
    info = {"command": " ".join([os.path.relpath(sys.argv[0])] + sys.argv[1:]),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "cpu": cpu,
            "ncpu": os.cpu_count(), "bin_dir": os.path.dirname(exe) if exe else "-",
            "vla_check": exe, "wall_s": wall, "torch": torch.__version__,
            "fwd_size": a.fwd_size, "grad_size": None if a.no_grad else a.grad_size,
            "jobs": a.jobs, "fla_ratio": FLA_RATIO, "cos_min": COS_MIN, "pearson_min": PEARSON_MIN}
    if a.judge_from:
        with open(a.judge_from) as f:
            old = json.load(f)
        o_info = old["info"]
        if tuple(o_info["fwd_size"]) != tuple(a.fwd_size) or (
                o_info["grad_size"] and tuple(o_info["grad_size"]) != tuple(a.grad_size)):
            sys.exit("score.py: --judge-from %s has other sizes" % a.judge_from)
        idx = {(r["kernel"], r["dtype"], r["gates"], r["seed"]): r for r in old["results"]}
        for r in results:
            o = idx.get((r["kernel"], r["dtype"], r["gates"], r["seed"]))
            for k in ("judge_fwd", "judge_grad"):
                if o and k in o:
                    r[k] = o[k]
        info["judge_from"] = a.judge_from
        info["bin_dir"] = o_info.get("bin_dir")
        info["judge_wall_s"] = o_info.get("wall_s")
    if exe:  # which judge gave the numbers (the judge is being improved in parallel)
        import hashlib
        with open(exe, "rb") as f:
            info["vla_check_sha256"] = hashlib.sha256(f.read()).hexdigest()
        info["vla_check_mtime"] = time.strftime("%Y-%m-%d %H:%M:%S UTC",
                                                time.gmtime(os.path.getmtime(exe)))
        info["vlastab_python"] = os.path.dirname(sys.modules["vlastab"].__file__)
    results.sort(key=lambda r: (r["gates"], r["seed"], r["dtype"], r["kernel"]))
    for r in results:
        r["verdicts"] = verdicts(r)
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump({"info": info, "results": results}, f, indent=1, default=str)
    with open(os.path.join(a.out, "results.md"), "w") as f:
        f.write(summarize(results, a, wall, info))
    print("score.py: %d tasks in %.0f s; %s/results.md, results.json" % (len(tasks), wall, a.out))


def _progress(i, n, r, t0):
    V = verdicts(r)
    s = " ".join("%s %s%s" % (k, "-" if v["fwd"] is None else ".X"[not v["fwd"]],
                               "-" if v["grad"] is None else ".X"[not v["grad"]])
                 for k, v in V.items())
    print("[%3d/%d %5.0fs] %-26s %-4s %-6s s%d %-9s %s (%.0f s)" % (
        i + 1, n, time.time() - t0, r["kernel"], r["dtype"], r["gates"], r["seed"],
        r["kind"] if r["kind"] == "correct" else r["where"], s, r["seconds"]), flush=True)


if __name__ == "__main__":
    main()
