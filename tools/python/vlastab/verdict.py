"""vlastab.judge(): your own PyTorch kernel (or a wrapper around a Triton or CUDA call) judged
against the exact reference on its own inputs. The inputs, in flash-linear-attention's (fla) layout
and dtype, are recorded as a trace (torch_trace's writer), your function's read-outs saved beside
them, and `vla-check trace:DIR --outputs DIR2` (the C judge) says per head how far they are from
the exact recurrence, beside what vlastab's own emulation of the same policy attains and what the
inputs' rounding alone costs; its JSON becomes a Verdict. Two checks run here, in Python, on your
function alone: causality (outputs before P must not move, bit for bit, when the inputs after P
change) and, where fn takes fla's initial_state and output_final_state, chunk-boundary invariance
(two calls with the state carried give the outputs of one, within the verdict's budget).
When fn's outputs require grad (fn built of autograd operations, or a torch.autograd.Function
with its own backward), judge() also calls the backward with a drawn upstream gradient do and
vla-check judges the gradients dq, dk, dv, dg, dbeta the same way, per head, against the exact
backward (Verdict.grads; docs/trace.md).

    import vlastab
    verdict = vlastab.judge(my_gdn, q, k, v, g=g, beta=beta, dtype=torch.bfloat16,
                            form="chunk:64")
    print(verdict)          # a table per head and the checks
    verdict.assert_ok()     # AssertionError with the verdict's text (pytest)

Causality asks for the same bits, so a kernel that is not deterministic run to run (atomics in a
reduction) shows as moved outputs: judge it in its deterministic mode.
"""
import functools
import inspect
import json
import os
import shutil
import subprocess
import tempfile
import warnings

import numpy as np

from . import programs
from .torch_trace import _write

# judge()'s inputs beside q, k, v: (its keyword, the trace's file, the VLA_IN_* bit of the model
# table's reads column, lib/vlalists.h). g is a log-decay (<= 0), the trace's logdecay.npy.
_INPUTS = (("g", "logdecay", "VLA_IN_LOGDECAY"), ("beta", "beta", "VLA_IN_BETA"),
           ("u", "u", "VLA_IN_U"), ("decay", "decay", "VLA_IN_DECAY"))
_ARGS = tuple(n for n, _, _ in _INPUTS)
# a kernel's io dtype -> the precision policy whose emulation is its attainable error
_POLICY = {"bfloat16": "bf16-kern", "float16": "f16-kern", "float32": "f32", "float64": "f64"}


@functools.lru_cache(maxsize=None)
def _model_table():
    """{model: (the inputs of _ARGS it reads with its defaults, its gate: 0, 1 a log-decay per
    token, 2 per key channel; why judge() refuses it, None where it judges it)}, every model of
    the library's table (lib/vlalists.h's VLA_MODELS) in its order"""
    import ctypes
    from . import _L, _Config, _abi, _parse, models
    table = {}
    for m in models():
        mk = _parse("vla_model_parse", m, "model")
        c = _Config()
        _L.vla_config_default(ctypes.byref(c), mk, 4)
        reads = _L.vla_model_reads(ctypes.byref(c))
        why = None
        if _L.vla_model_has_A(mk):
            why = ("it tracks A (M = A^-1 beside S), which judge() does not take from fn (a "
                   "kernel of S alone, fla's); judge its read-outs with vla-check trace:DIR "
                   "--outputs DIR2 (docs/trace.md)")
        elif reads & (_abi.VLA_IN_A | _abi.VLA_IN_B):
            why = ("it reads a and b (J_t's low-rank term), which judge() does not take; judge "
                   "its kernel with vla-check trace:DIR --outputs DIR2 and a trace holding a.npy "
                   "and b.npy (docs/trace.md)")
        table[m] = (tuple(n for n, _, bit in _INPUTS if reads & getattr(_abi, bit)),
                    _L.vla_model_gate(mk), why)
    return table


@functools.lru_cache(maxsize=None)
def _qknorm(model):
    """whether the library's model L2-normalizes q and k by default (VLA_MODELS' qknorm column)"""
    import ctypes
    from . import _L, _Config, _parse
    c = _Config()
    _L.vla_config_default(ctypes.byref(c), _parse("vla_model_parse", model, "model"), 4)
    return bool(c.qknorm)


def _judged():
    """the models judge() judges, in the table's order"""
    return tuple(m for m, (_, _, why) in _model_table().items() if why is None)


def _reads(model, n):
    """whether model reads judge()'s input n (q, k, v: always)"""
    return n in ("q", "k", "v") or n in _model_table()[model][0]


def _readers(n):
    return ", ".join(m for m in _judged() if _reads(m, n))


def _library_refuses(model, settings, form, d, dv, grad, h0):
    """the library's reason (vla_form_check, vla_grad_check, vla_config_h0) why model with its
    settings cannot be judged in form (with its backward where grad, from an initial state where
    h0), or None"""
    import ctypes
    from . import _L, _Error, _configure, _set_form
    cfg = _configure(model, "f64", "sm", True, d, dv, dict(settings or {}))
    _set_form(cfg, form)
    checks = [("form %s" % form, _L.vla_form_check, "")]
    if grad:
        checks.append(("gradients", _L.vla_grad_check, " (grad=False judges the forward alone)"))
    if h0:
        checks.append(("an initial state", _L.vla_config_h0, ""))
    for what, check, hint in checks:
        why = _Error()
        if check(ctypes.byref(cfg), ctypes.byref(why)):
            return "model %s, %s: %s%s" % (model, what, _L.vla_error_msg(
                ctypes.byref(why)).decode(), hint)
    return None


def _torch():
    import torch
    return torch


def vla_check_path():
    """vla-check as the binding finds the library: $VLA_BIN_DIR, the package's own _bin (pip
    install), the installed programs' folder (make install), the source tree's bin/, then PATH
    (vlastab.programs)"""
    return programs.path("vla-check")


def _tensor(x, name):
    torch = _torch()
    if isinstance(x, np.ndarray):
        x = torch.from_numpy(x)
    if not isinstance(x, torch.Tensor):
        raise TypeError("%s: a torch tensor in fla's layout, not %s" % (name, type(x).__name__))
    if x.is_complex() or not x.is_floating_point():
        raise TypeError("%s: dtype %s, expected a real floating-point tensor" % (name, x.dtype))
    return x.detach()


def _check_layout(q, k, v, extra, model):
    """fla's layout (B, T, H, d), refused with the input named where it is detectably another"""
    if q.dim() != 4:
        raise ValueError("q: shape %s, expected fla's (batch, T, heads, d)%s" % (
            tuple(q.shape), "; a (heads, T, d) array is vlastab.run's layout: q[None]."
            "transpose(1, 2)" if q.dim() == 3 else ""))
    B, T, H, d = q.shape
    if 0 in q.shape:
        raise ValueError("q: shape %s has no batch, steps, heads or features" % (tuple(q.shape),))
    if H > 64 and T < H:
        raise ValueError("q: shape %s would be %d heads of %d steps: judge() takes fla's (batch, "
                         "T, heads, d); a head-first (batch, heads, T, d) tensor is "
                         "x.transpose(1, 2)" % (tuple(q.shape), H, T))
    if d > 256:
        raise ValueError("q: d = %d, expected 1..256" % d)
    if tuple(k.shape) != tuple(q.shape):
        raise ValueError("k: shape %s, expected (batch, T, heads, d) = %s as q%s" % (
            tuple(k.shape), tuple(q.shape), " (k is head-first? x.transpose(1, 2))"
            if tuple(k.shape) == (B, H, T, d) else ""))
    if v.dim() != 4 or tuple(v.shape[:2]) != (B, T) or v.shape[2] % H:
        raise ValueError("v: shape %s, expected (batch, T, heads, dv) = (%d, %d, %d, dv) as q, or "
                         "a multiple of q's %d heads (grouped: fla's num_v_heads, Mamba-2's "
                         "ngroups)" % (tuple(v.shape), B, T, H, H))
    H = v.shape[2]  # the heads judged: v's; q and k's shared by groups of H / q's heads
    if not 1 <= v.shape[3] <= 256:
        raise ValueError("v: dv = %d, expected 1..256" % v.shape[3])
    for n, a in extra.items():
        if a is not None and not _reads(model, n):
            raise ValueError("%s: model %s takes no %s (only %s)" % (
                n, model, "log-decay" if n == "g" else n, _readers(n)))
    g, beta, u, decay = (extra.get(n) for n in _ARGS)
    if g is not None:
        chan = _model_table()[model][1] == 2
        ok = tuple(g.shape) == (B, T, H) or (chan and tuple(g.shape) == (B, T, H, d))
        if not ok:
            raise ValueError("g: shape %s, expected the log-decays (batch, T, heads) = %s%s" % (
                tuple(g.shape), (B, T, H), " or per key channel (batch, T, heads, d)" if chan
                else ""))
        _range(g, "g", hi=0, what="a log-decay, log a_t <= 0")
    for a, n, lo, hi, what in ((beta, "beta", 0, np.inf, "a rate, beta >= 0"),
                               (decay, "decay", 0, 1, "a step or decay in [0, 1]")):
        if a is not None:
            if tuple(a.shape) != (B, T, H):
                raise ValueError("%s: shape %s, expected (batch, T, heads) = %s" % (
                    n, tuple(a.shape), (B, T, H)))
            _range(a, n, lo=lo, hi=hi, what=what)
    if u is not None:
        if tuple(u.shape) != (B, T, H, d):
            raise ValueError("u: shape %s, expected (batch, T, heads, d) = %s" % (
                tuple(u.shape), (B, T, H, d)))
        _range(u, "u")
    for x, n in ((q, "q"), (k, "k"), (v, "v")):
        _range(x, n)
    return B, T, H, d, v.shape[3]


def _range(x, name, lo=-np.inf, hi=np.inf, what="finite"):
    a = (x.float() if x.dtype != _torch().float64 else x).cpu().numpy()
    with np.errstate(invalid="ignore"):
        bad = ~(np.isfinite(a) & (a >= lo) & (a <= hi))
    if bad.any():
        i = np.unravel_index(np.argmax(bad), a.shape)
        raise ValueError("%s: %r at %s is outside [%g, %g] (%s)" % (
            name, float(a[i]), list(int(j) for j in i), lo, hi, what))


def _heads(x):
    """(B, T, H, ...) -> (B H, T, ...): head b H + h"""
    B, T, H = x.shape[:3]
    return x.transpose(1, 2).reshape((B * H, T) + tuple(x.shape[3:]))


def _takes_state(fn):
    try:
        ps = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return "initial_state" in ps and "output_final_state" in ps


class InputWritten(ValueError):
    """fn wrote into an input it was handed (a kernel must leave its inputs as they were)"""


def _copies(x):
    return {n: (None if a is None else a.clone()) for n, a in x.items()}


def _unwritten(x, given, when):
    """InputWritten when fn changed one of the copies `given` of x (bit for bit)"""
    for n, a in x.items():
        if a is not None and not _torch().equal(a.reshape(-1), given[n].detach().reshape(-1)):
            raise InputWritten("fn wrote into its input %s (%s): a kernel must leave its inputs "
                               "as they were; judged on copies, the caller's tensors are untouched"
                               % (n, when))


def _call(fn, x, state, **kw):
    """fn on copies of the inputs x (a dict), o (and fla's final state) back; fla's functions
    return (o, state) even without the state. InputWritten when fn wrote into a copy."""
    given = _copies(x)
    args = {n: given[n] for n in _ARGS if given.get(n) is not None}
    args.update(kw)
    if state:
        args["output_final_state"] = True
    torch = _torch()
    with torch.no_grad():
        out = fn(given["q"], given["k"], given["v"], **args)
    _unwritten(x, given, "in its forward")
    S = None
    if isinstance(out, (tuple, list)):
        out, S = out[0], (out[1] if len(out) > 1 else None)
    if not isinstance(out, torch.Tensor):
        raise TypeError("fn returned %s, expected o, a tensor (batch, T, heads, dv), or (o, "
                        "final_state)" % type(out).__name__)
    # o to the host for the measures; the state stays where fn keeps it (it goes back to fn)
    return out.detach().cpu(), (S.detach() if isinstance(S, torch.Tensor) else None)


def _bits(o):
    """an ordered integer per value of o in its own dtype: adjacent floats differ by 1 (+0 and
    -0 by 0), so that |a - b| counts ulps"""
    torch = _torch()
    n = o.element_size() * 8
    it = {16: torch.int16, 32: torch.int32, 64: torch.int64}[n]
    i = o.contiguous().view(it).numpy().astype(np.int64)
    if n == 64:
        mag = i & np.int64(0x7FFFFFFFFFFFFFFF)
    else:
        mag = i & ((1 << (n - 1)) - 1)
    return np.where(i < 0, -mag, mag), i


def _causality(fn, x, o_one, P, state):
    """the inputs after P (0-based steps P..T-1) replaced by half their time reversal (exact in
    binary formats, every range kept: g <= 0, beta >= 0); outputs before P must keep their bits"""
    y = {}
    for n, a in x.items():
        if a is None:
            y[n] = None
            continue
        b = a.clone()
        b[:, P:] = 0.5 * a[:, P:].flip(1)
        y[n] = b
    o2, _ = _call(fn, y, state)
    if tuple(o2.shape) != tuple(o_one.shape):
        raise ValueError("fn: o of shape %s on the perturbed inputs, %s before" % (
            tuple(o2.shape), tuple(o_one.shape)))
    a, ra = _bits(o_one[:, :P])
    b, rb = _bits(o2[:, :P])
    moved = ra != rb  # bit for bit (a NaN that keeps its bits has not moved)
    res = {"P": P, "moved": int(moved.sum()), "first_t": None, "head": None, "ulps_max": 0.0,
           "ok": not moved.any()}
    if moved.any():
        B, Pp, H, dv = moved.shape
        idx = np.argwhere(moved)
        first = idx[np.argmin(idx[:, 1])]
        fa = np.isfinite(o_one[:, :P].float().numpy()) & np.isfinite(o2[:, :P].float().numpy())
        ul = np.where(moved & fa, np.abs(a - b), np.where(moved, np.inf, 0))
        res.update(first_t=int(first[1]) + 1, head=int(first[0] * H + first[2]),
                   ulps_max=float(ul.max()))
    return res


def _normwise(diff, ref, window):
    """per head: the largest over windows of `window` steps of sqrt(mean ||diff_t||^2) over the
    head's RMS read-out sqrt(mean_t ||ref_t||^2) (a norm-wise error: a read-out near 0 weighs as
    little as it is)"""
    with np.errstate(over="ignore", invalid="ignore"):
        d2 = (diff.astype(np.float64) ** 2).sum(-1)  # (heads, T)
    r2 = (ref.astype(np.float64) ** 2).sum(-1)
    rms = np.sqrt(r2.mean(1))
    T = d2.shape[1]
    w = max(1, min(int(window), T))
    c = np.concatenate([np.zeros((d2.shape[0], 1)), np.cumsum(d2, 1)], 1)
    with np.errstate(invalid="ignore"):
        win = np.sqrt((c[:, w:] - c[:, :-w]) / w)
    with np.errstate(divide="ignore", invalid="ignore"):
        e = np.where(rms > 0, win.max(1) / rms, np.where(win.max(1) > 0, np.inf, 0.0))
    return np.where(np.isfinite(d2).all(1) & ~np.isnan(e), e, np.inf)


class Verdict:
    """vla-check's verdict on your kernel's outputs (.json: its JSON, whole; .heads: its heads;
    .grads: its gradients' rows) and the checks run in Python (.causality: one dict per P,
    .chunk_split: a dict, or None with .chunk_split_skipped saying why; .logic: the float32 run's
    check, a dict with its JSON under "verdict" or why it could not run). ok: every head and
    gradient within its budget, the gradients asked for had (.grads_failed says why not), no
    output moved by later inputs, the split calls within the budget, the logic check passed.
    .headline: the first line of str(verdict), what failed first and its likely cause."""

    def __init__(self, data, causality=(), chunk_split=None, chunk_split_skipped=None,
                 nonfinite=None, folder=None, grads_skipped=None, grads_failed=None, logic=None,
                 hint=None, arranged=None, packing=None, rollback=None, decode=None):
        if not isinstance(data, dict) or "verdict" not in data or "heads" not in data:
            raise ValueError("vla-check's JSON: no verdict or heads (%s)" % (
                sorted(data) if isinstance(data, dict) else type(data).__name__))
        self.json = data
        self.heads = list(data["heads"])
        self.grads = list(data.get("grads") or [])  # one dict per (gradient, head)
        self.grads_skipped = grads_skipped
        self.grads_failed = grads_failed
        self.logic = logic
        self.hint = hint  # a likely cause found by judging again with another setting
        self.arranged = arranged  # the settings judge() chose for the form (fla's arrangement)
        self.causality = list(causality)
        self.chunk_split = chunk_split
        self.chunk_split_skipped = chunk_split_skipped
        self.packing = packing  # cu_seqlens: each sequence alone against its place in the pack
        self.rollback = rollback  # states_fn: per-token states against the j-token calls' states
        self.decode = decode  # decode_fn: fn's prefill, then decode_fn token by token, against one call
        self.nonfinite = nonfinite
        self.folder = folder
        self.judged_ok = data["verdict"] == "ok"
        self.logic_ok = logic is None or logic.get("skipped") or \
            (logic.get("verdict") or {}).get("verdict") == "ok"
        self.ok = bool(self.judged_ok and all(c["ok"] for c in self.causality) and
                       (chunk_split is None or chunk_split["ok"]) and not grads_failed and
                       self.logic_ok and (packing is None or packing["ok"]) and
                       (rollback is None or rollback["ok"]) and (decode is None or decode["ok"]))

    @classmethod
    def from_file(cls, path, **kw):
        with open(path) as f:
            return cls(json.load(f), **kw)

    def as_dict(self):
        """every number the table shows, and the checks': vla-check's JSON with the Python
        checks beside it (json.dumps-able)"""
        return {"ok": self.ok, "headline": self.headline, "vla_check": self.json,
                "causality": self.causality, "chunk_split": None if self.chunk_split is None else
                {k: v for k, v in self.chunk_split.items()}, "chunk_split_skipped":
                self.chunk_split_skipped, "grads_failed": self.grads_failed,
                "grads_skipped": self.grads_skipped, "logic": self.logic,
                "nonfinite": self.nonfinite, "hint": self.hint, "arranged": self.arranged,
                "packing": self.packing, "rollback": self.rollback, "decode": self.decode}

    @property
    def headline(self):
        """what failed first, and its likely cause, in one line (or what passed)"""
        j = self.json
        if self.ok:
            extra = "" if not self.logic or not self.logic.get("skipped") else \
                "; the float32 logic check was not run (logic=False)"
            return "vlastab.judge: ok: model %s, %s, form %s: every head%s within its budget, " \
                "causal, %s%s" % (j.get("model"), j.get("precision"), j.get("form"),
                                  " and gradient" if self.grads else "",
                                  "the split calls agree" if self.chunk_split else
                                  "no split check (%s)" % self.chunk_split_skipped, extra)
        why = []
        if self.nonfinite:
            why.append("non-finite read-outs from t = %d (head %d): an overflow or a NaN" % (
                self.nonfinite[1], self.nonfinite[0]))
        lv = (self.logic or {}).get("verdict")
        if self.logic and not self.logic_ok:
            if lv is None:
                why.append("the float32 logic check could not run: %s (logic=False skips it)" %
                           self.logic.get("why"))
            else:
                bad = [h for h in lv["heads"] if h.get("verdict") != "ok"]
                gbad = [g for g in lv.get("grads") or [] if g.get("verdict") != "ok"]
                if bad:
                    h = max(bad, key=lambda h: _ratio(h))
                    why.append("with float32 inputs the read-outs are %s off in head %s (budget "
                               "%s): an error that does not shrink with the precision is the "
                               "algorithm's, not the rounding's%s" % (
                                   _fmt(h.get("max_rel_window")), h.get("head"),
                                   _fmt(h.get("budget")), _cause(h)))
                if gbad:
                    g = max(gbad, key=lambda g: _ratio(g))
                    why.append("with float32 inputs gradient %s of head %s is %s off (budget %s): "
                               "the backward's algorithm%s" % (
                                   g.get("grad"), g.get("head"), _fmt(g.get("max_rel_window")),
                                   _fmt(g.get("budget")), _cause(g)))
        if any(not c["ok"] for c in self.causality):
            why.append("acausal: outputs moved when later inputs changed")
        if any(h.get("verdict") != "ok" for h in self.heads):
            h = max((h for h in self.heads if h.get("verdict") != "ok"), key=lambda h: _ratio(h))
            why.append("in %s the read-outs of head %s are %s off, beyond the budget %s (what "
                       "vlastab's own %s run attains: %s x %s)%s" % (
                           j.get("precision"), h.get("head"), _fmt(h.get("max_rel_window")),
                           _fmt(h.get("budget")), j.get("precision"), _fmt(j.get("slack")),
                           _fmt(max(x for x in (h.get("attainable_seq"), h.get("attainable_form"),
                                                h.get("input_budget"), 0) if x is not None)),
                           _cause(h)))
        if self.chunk_split is not None and not self.chunk_split["ok"]:
            why.append("the split calls differ from one call (%s): the state carried between "
                       "calls (initial_state, the final state)" % _fmt(self.chunk_split["diff_max"]))
        if self.packing is not None and not self.packing["ok"]:
            why.append("sequence %d packed (cu_seqlens) differs from it alone by %s, beyond its "
                       "budget %s: a state carried across a sequence boundary, or the boundary "
                       "misplaced" % (self.packing["worst_seq"], _fmt(self.packing["diff_max"]),
                                      _fmt(self.packing["budget"])))
        if self.decode is not None and not self.decode["ok"]:
            why.append("prefill of %d tokens then decode token by token differs from one call (%s "
                       "in head %d, beyond its budget %s): the state handed from prefill to decode "
                       "(a padded last chunk, a layout, a format)" % (
                           self.decode["split"], _fmt(self.decode["diff_max"]),
                           self.decode["worst_head"], _fmt(self.decode["budget"])))
        if self.rollback is not None and not self.rollback["ok"]:
            why.append("the state kept after token %d (states_fn) differs from the state of a call "
                       "on the first %d tokens by %s, beyond the budget %s: a rollback to it "
                       "restores another state (a rejected token left in, or one missing)" % (
                           self.rollback["worst_t"], self.rollback["worst_t"],
                           _fmt(self.rollback["rel"]), _fmt(self.rollback["budget"])))
        if self.grads_failed:
            why.append("gradients asked for but not had: %s" % self.grads_failed)
        gb = [g for g in self.grads if g.get("verdict") != "ok"]
        if gb:
            g = max(gb, key=lambda g: _ratio(g))
            why.append("gradient %s of head %s is %s off, beyond its budget %s%s" % (
                g.get("grad"), g.get("head"), _fmt(g.get("max_rel_window")), _fmt(g.get("budget")),
                _cause(g)))
        if not why:
            why.append(j.get("summary", "beyond"))
        if self.hint:
            why.insert(0, self.hint)
        return "vlastab.judge: FAIL: " + "; ".join(why)

    @property
    def summary(self):
        # (vla-check's summary starts with its own verdict, "ok: " or "beyond: ")
        lines = ["%s; vla-check: %s" % ("ok" if self.ok else "FAIL", self.json.get("summary", ""))]
        if self.nonfinite:
            lines.append("non-finite outputs (overflow or NaN): head %d from t = %d" %
                         self.nonfinite)
        for h in self.heads:
            if h.get("first_t_nonfinite") is not None:
                lines.append("head %s: non-finite (overflow or NaN) from t = %s" % (
                    h.get("head"), h["first_t_nonfinite"]))
        for c in self.causality:
            if not c["ok"]:
                lines.append("acausal outputs: %d outputs before P = %d moved when the inputs "
                             "after it changed, first at t = %d (head %d), up to %g ulps" % (
                                 c["moved"], c["P"], c["first_t"], c["head"], c["ulps_max"]))
        for g in self.grads:
            if g.get("first_t_nonfinite") is not None:
                lines.append("gradient %s of head %s: non-finite from t = %s" % (
                    g.get("grad"), g.get("head"), g["first_t_nonfinite"]))
            elif g.get("verdict") != "ok":
                lines.append("gradient %s of head %s beyond: %s at t = %s, budget %s (attainable "
                             "%s seq, %s in the form)" % (
                                 g.get("grad"), g.get("head"), _fmt(g.get("max_rel_window")),
                                 g.get("t_max_rel_window"), _fmt(g.get("budget")),
                                 _fmt(g.get("attainable_seq")), _fmt(g.get("attainable_form"))))
        if self.grads_failed:
            lines.append("gradients: FAIL, not had: %s" % self.grads_failed)
        if self.logic and not self.logic_ok:
            lv = self.logic.get("verdict")
            lines.append("logic check (float32 inputs): FAIL: %s" % (
                lv.get("summary") if lv else self.logic.get("why")))
        if self.chunk_split is not None and not self.chunk_split["ok"]:
            s = self.chunk_split
            lines.append("chunk-boundary invariance: split at t = %d, the outputs of head %d differ "
                         "from one call's by %.3g (norm-wise), beyond its budget %s" % (
                             s["split"], s["worst_head"], s["diff_max"], _fmt(s["budget"])))
        return "\n".join(lines)

    def __bool__(self):
        return self.ok

    def __str__(self):
        # the JSON's keys, and their headings (the window error decides; docs/trace.md)
        cols = (("head", "head"), ("verdict", "verdict"), ("rel_rms", "rel_rms"),
                ("max_rel_window", "window_err"), ("t_max_rel_window", "at_t"),
                ("bits_lost", "bits_lost"), ("attainable_seq", "attain_seq"),
                ("attainable_form", "attain_form"), ("input_budget", "input_budget"),
                ("budget", "budget"), ("first_t_nonfinite", "nonfinite_t"))
        gc = (("grad", "grad"),) + cols
        out = [self.headline]

        def table(title, data):
            out.append(title)
            out.append(" ".join("%-12s" % c[1] for c in cols).rstrip())
            for h in data["heads"]:
                out.append(" ".join("%-12s" % _fmt(h.get(c[0])) for c in cols).rstrip())
            if data.get("grads"):
                out.append(" ".join("%-12s" % c[1] for c in gc).rstrip())
                for g in data["grads"]:
                    out.append(" ".join("%-12s" % _fmt(g.get(c[0])) for c in gc).rstrip())

        table("model %s, precision %s, form %s%s: %s" % (
            self.json.get("model"), self.json.get("precision"), self.json.get("form"),
            " in fla's arrangement (%s)" % ", ".join("%s=%s" % kv for kv in self.arranged.items())
            if self.arranged else "", "ok" if self.judged_ok and not self.grads_failed else "FAIL"),
            self.json)
        if self.grads_failed:
            out.append("gradients: FAIL, not had: %s" % self.grads_failed)
        elif self.grads_skipped:
            out.append("gradients: not judged (%s)" % self.grads_skipped)
        if self.logic:
            lv = self.logic.get("verdict")
            if lv:
                table("logic check, the same inputs in float32 (policy f32): %s" % (
                    "ok" if self.logic_ok else "FAIL"), lv)
            else:
                out.append("logic check, the same inputs in float32: %s (%s)" % (
                    "not run" if self.logic.get("skipped") else "FAIL", self.logic.get("why")))
        for c in self.causality:
            out.append("causality P = %d: %s" % (c["P"], "ok (bit for bit)" if c["ok"] else
                                                 "%d outputs moved, first t = %d (head %d), up to "
                                                 "%g ulps" % (c["moved"], c["first_t"], c["head"],
                                                              c["ulps_max"])))
        if self.chunk_split is not None:
            s = self.chunk_split
            out.append("chunk split at t = %d: norm-wise difference %.3g in head %d (its budget "
                       "%s)%s, final state %s" % (s["split"], s["diff_max"], s["worst_head"],
                                                 _fmt(s["budget"]), "" if s["ok"] else " FAIL",
                                                 _fmt(s.get("state_rel"))))
        elif self.chunk_split_skipped:
            out.append("chunk split: skipped (%s)" % self.chunk_split_skipped)
        if self.packing is not None:
            pk = self.packing
            out.append("packing (cu_seqlens, %d sequences): each alone against the pack: %s; "
                       "norm-wise difference %.3g in sequence %d (its budget %s)%s" % (
                           pk["sequences"], "bit for bit" if pk["bitwise"] else
                           "%d outputs differ" % pk["moved"], pk["diff_max"], pk["worst_seq"],
                           _fmt(pk["budget"]), "" if pk["ok"] else " FAIL"))
        if self.decode is not None:
            dc = self.decode
            out.append("prefill of %d tokens, then decode_fn token by token: norm-wise difference "
                       "%.3g in head %d (its budget %s)%s, final state %s" % (
                           dc["split"], dc["diff_max"], dc["worst_head"], _fmt(dc["budget"]),
                           "" if dc["ok"] else " FAIL", _fmt(dc.get("state_rel"))))
        if self.rollback is not None:
            rb = self.rollback
            out.append("rollback (states_fn, t = %s): %d of %d states kept exactly as the calls on "
                       "the first t tokens end; the largest difference %.3g at t = %d (budget %s)%s"
                       % (", ".join(str(t) for t in rb["positions"]), rb["exact"],
                          len(rb["positions"]), rb["rel"], rb["worst_t"], _fmt(rb["budget"]),
                          "" if rb["ok"] else " FAIL"))
        out.append(self.summary)
        return "\n".join(out)

    def assert_ok(self):
        if not self.ok:
            raise AssertionError(str(self))
        return self


def _ratio(h):
    """how far beyond its budget a row is (inf: not finite, or no budget)"""
    e, b = h.get("max_rel_window"), h.get("budget")
    if e is None or b is None or not b > 0:
        return float("inf")
    return e / b


def _cause(h):
    """the row's error named where its shape says what it is: a constant ratio to the reference
    (vla-check's scale column) is a scale or a normalization"""
    r, after = h.get("scale"), h.get("rel_after_scale")
    if r is not None and after is not None and h.get("budget") is not None and \
            after <= h["budget"] and abs(r - 1) > 2 * (h.get("max_rel_window") or 0) / 3:
        return "; the read-outs are the reference's times %.6g (within the budget once scaled: "\
            "%s): a scale or a normalization" % (r, _fmt(after))
    return ""


def _fmt(x):
    if x is None:
        return "-"
    if isinstance(x, float):
        return "%.3g" % x
    return str(x)


def _save_o(o, folder, name="o"):
    """o (B, T, H, ...) as DIR2/NAME.npy (B H, T, ...) in its own format: bfloat16 as its raw
    uint16 bits with dtype.txt saying bfloat16"""
    torch = _torch()
    oh = _heads(o.detach().cpu()).contiguous()
    if oh.dtype == torch.bfloat16:
        _write(os.path.join(folder, name + ".npy"), oh.view(torch.int16).numpy().view(np.uint16))
        _write(os.path.join(folder, "dtype.txt"), b"bfloat16\n")
    elif oh.dtype in (torch.float16, torch.float32, torch.float64):
        _write(os.path.join(folder, name + ".npy"), oh.numpy())
    else:
        raise TypeError("fn returned %s of dtype %s: vla-check reads float16, bfloat16, float32, "
                        "float64" % (name, oh.dtype))


# the gradients' files: fla's argument -> vla-check's file (docs/trace.md)
_GRADS = (("q", "dq"), ("k", "dk"), ("v", "dv"), ("g", "dg"), ("beta", "dbeta"), ("u", "du"))


def _randn(shape, seed):
    """standard normals of shape in float64 from torch's generator seeded with seed: do"""
    torch = _torch()
    return torch.randn(tuple(shape), generator=torch.Generator().manual_seed(seed),
                       dtype=torch.float64)


def _group(x):
    """how many heads of v share a head of q and k (1: none shared)"""
    return x["v"].shape[2] // x["q"].shape[2]


def _expand(x, n):
    """input n with one head per head of v: q and k repeated over their group (fla's
    '... h d -> ... (h g) d'), head h of v reading head h // group of q and k"""
    a = x[n]
    return a.repeat_interleave(_group(x), dim=2) if n in ("q", "k") and a is not None else a


def _backward(fn, x, o_shape, seed, do=None):
    """fn called with autograd on leaf copies of x, then its backward with do (drawn where None:
    standard normals of seed + 1, in o's dtype; else do cast to o's dtype): (do, {file:
    gradient}, each with one head per head of v), or (None, why) when no gradient could be had:
    fn's outputs do not require grad, fn or its backward raised, or its backward gives no
    gradient for an input it takes (a path detached). Every one of these fails the verdict:
    gradients asked for are judged or failed. With grouped heads (_group > 1) the backward runs
    once per member r of a group, with do zero but on the heads h = r mod group: fn's dq and dk
    of a shared head are then member r's alone, the gradient of the head of v that the exact
    backward computes; dv, dg, dbeta of head h are taken from the run of its member."""
    torch = _torch()
    if do is None:
        do = _randn(o_shape, seed + 1)
    G = _group(x)
    if G > 1:
        full = {}
        for r in range(G):
            mask = torch.zeros(o_shape[2], dtype=torch.bool)
            mask[r::G] = True
            dr, gr = _backward_one(fn, x, torch.where(mask[:, None], do.double(), 0.0))
            if dr is None:
                return None, gr
            for f, a in gr.items():
                if f not in full:
                    full[f] = torch.zeros(tuple(a.shape[:2]) + (o_shape[2],) + tuple(a.shape[3:]),
                                          dtype=a.dtype, device=a.device)
                full[f][:, :, r::G] = a if f in ("dq", "dk") else a[:, :, r::G]
        return do.to(dr.dtype), full
    return _backward_one(fn, x, do)


def _backward_one(fn, x, do):
    """_backward's one call of fn and its backward with do (cast to o's dtype)"""
    torch = _torch()
    leaf = {n: (None if a is None else a.detach().clone().requires_grad_(n in dict(_GRADS)))
            for n, a in x.items()}
    args = {n: leaf[n] for n in _ARGS if leaf.get(n) is not None}
    with torch.enable_grad():
        try:
            out = fn(leaf["q"], leaf["k"], leaf["v"], **args)
        except RuntimeError as e:  # an in-place write into a leaf, a kernel without autograd
            return None, "fn raised with inputs that require grad: %s" % str(e).split("\n")[0]
        o = out[0] if isinstance(out, (tuple, list)) else out
        if not isinstance(o, torch.Tensor) or not o.requires_grad:
            return None, ("fn's outputs do not require grad: fn has no backward (pass grad=False "
                          "to judge its forward alone)")
        do = do.to(o.dtype)
        try:
            o.backward(do.to(o.device))
        except RuntimeError as e:  # a forward-only kernel's in-place writes
            return None, "fn's backward raised: %s" % str(e).split("\n")[0]
    missing = [n for n, f in _GRADS if leaf.get(n) is not None and leaf[n].grad is None]
    if missing:
        return None, ("fn's backward gives no gradient for %s (a path detached from the graph, or "
                      "an input fn does not read)" % ", ".join(missing))
    _unwritten(x, leaf, "in its backward")
    return do, {f: leaf[n].grad for n, f in _GRADS if leaf.get(n) is not None}


def _takes(fn, name):
    """whether fn takes the keyword argument name (by name or through **kwargs)"""
    try:
        ps = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return name in ps or any(p.kind == p.VAR_KEYWORD for p in ps.values())


def _with_scale(fn, scale, settings):
    """fn with scale= bound, and the settings with the model's scale"""
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not \
            0 < float(scale) < float("inf"):
        raise ValueError("scale=%r: a number > 0 (fla's default: d ** -0.5)" % (scale,))
    if not _takes(fn, "scale"):
        raise ValueError("scale=%r: fn takes no scale= argument to hand it to (set the model's "
                         "scale alone with settings={'scale': %r})" % (scale, scale))
    if settings and "scale" in settings and float(settings["scale"]) != float(scale):
        raise ValueError("scale=%r and settings={'scale': %r}: two different scales" % (
            scale, settings["scale"]))
    return functools.partial(fn, scale=float(scale)), dict(settings or {}, scale=float(scale))


def _varlen(fn, x, shape, cu_seqlens):
    """judge()'s cu_seqlens (fla's varlen call: N sequences packed into one of batch 1): fn as a
    function of the N sequences as a batch (N, longest, heads, .), each padded after its end with
    null tokens (q = k = v = 0, g = 0, beta = 0: an exact no-op of every judged model, in the
    reference and in any arithmetic, whose read-outs are 0), packing them for fn with cu_seqlens
    and its outputs back into the batch; x padded likewise. Returns (fn_b, x_b, shape_b, info)."""
    torch = _torch()
    B, T, H, d, dv = shape
    cu = [int(c) for c in (cu_seqlens.tolist() if hasattr(cu_seqlens, "tolist") else cu_seqlens)]
    if B != 1:
        raise ValueError("cu_seqlens: the sequences packed as fla's varlen call takes them, batch 1 "
                         "(q of shape (1, total T, heads, d)), not batch %d" % B)
    if len(cu) < 2 or cu[0] != 0 or cu[-1] != T or any(b <= a for a, b in zip(cu, cu[1:])):
        raise ValueError("cu_seqlens=%s: 0, then each sequence's end, strictly increasing, the last "
                         "the total T = %d" % (cu, T))
    if not _takes(fn, "cu_seqlens"):
        raise ValueError("cu_seqlens: fn takes no cu_seqlens= argument (fla's varlen call)")
    lens = [b - a for a, b in zip(cu, cu[1:])]
    N, Tm = len(lens), max(lens)
    cu_t = torch.tensor(cu, dtype=torch.long)
    takes_state = _takes_state(fn)

    def pad(a):
        out = a.new_zeros((N, Tm) + tuple(a.shape[2:]))
        for i in range(N):
            out[i, :lens[i]] = a[0, cu[i]:cu[i + 1]]
        return out

    def pack(a):
        return None if a is None else torch.cat([a[i, :lens[i]] for i in range(N)], 0)[None]

    def fn_b(q, k, v, initial_state=None, output_final_state=False, **extra):
        if q.shape[1] != Tm:
            raise ValueError("cu_seqlens: the packed call takes whole sequences (%d steps), not %d"
                             % (Tm, q.shape[1]))
        kw = {n: pack(a) for n, a in extra.items() if a is not None}
        kw["cu_seqlens"] = cu_t.to(q.device)
        if takes_state:
            kw.update(initial_state=initial_state, output_final_state=output_final_state)
        out = fn(pack(q), pack(k), pack(v), **kw)
        o = out[0] if isinstance(out, (tuple, list)) else out
        if not isinstance(o, torch.Tensor) or tuple(o.shape[:2]) != (1, T):
            raise ValueError("fn(..., cu_seqlens=) returned o of shape %s, expected the packed "
                             "(1, total T = %d, heads, dv)" % (
                                 tuple(getattr(o, "shape", ())), T))
        ob = torch.stack([torch.cat([o[0, cu[i]:cu[i + 1]], o.new_zeros(
            (Tm - lens[i],) + tuple(o.shape[2:]))], 0) for i in range(N)])
        return (ob,) + tuple(out[1:]) if isinstance(out, (tuple, list)) else ob

    if not takes_state:
        P = inspect.Parameter
        fn_b.__signature__ = inspect.Signature(
            [P(n, P.POSITIONAL_OR_KEYWORD) for n in ("q", "k", "v")] +
            [P(n, P.POSITIONAL_OR_KEYWORD, default=None) for n in _ARGS])
    xb = {n: None if a is None else pad(a) for n, a in x.items()}
    return fn_b, xb, (N, Tm, H, d, dv), {"fn": fn, "x": x, "cu": cu, "lens": lens}


def _from_h0(fn, h0, bhdv, layout, varlen):
    """fn handed h0 as its initial_state (a call's own initial_state= wins), h0 checked: a tensor
    of (batch, heads, d, dv) (layout "vk": (batch, heads, dv, d)), finite; with cu_seqlens row i
    is sequence i's, which the packing's check hands to sequence i alone"""
    torch = _torch()
    B, H, d, dv = bhdv
    want = (B, H, d, dv) if layout == "kv" else (B, H, dv, d)
    if not isinstance(h0, torch.Tensor) or tuple(h0.shape) != want:
        raise ValueError("initial_state: %s %s, expected a tensor of shape %s for state_layout=%r "
                         "((batch%s, heads, %s))" % (
                             type(h0).__name__, tuple(getattr(h0, "shape", ())), want, layout,
                             " = the sequences of cu_seqlens" if varlen else "",
                             "d, dv" if layout == "kv" else "dv, d"))
    if not torch.isfinite(h0).all():
        raise ValueError("initial_state: NaN or Inf at %s" % (
            [int(i) for i in torch.nonzero(~torch.isfinite(h0))[0]],))
    if varlen is not None:
        varlen["h0"] = h0
    return functools.partial(fn, initial_state=h0)


def _packing(vl, o_b, window, budgets):
    """each sequence alone (fn without cu_seqlens, batch 1) against its place in the packed call
    (o_b: the packed call's outputs as the batch of _varlen): the outputs whose bits differ, and
    per head the norm-wise difference over windows against the head's budget (a state that
    crosses a boundary, a boundary misplaced); the worst sequence the one furthest past it"""
    cu, H = vl["cu"], o_b.shape[2]
    worst, moved = (-1.0, 0, 0.0, None), 0
    for i in range(len(cu) - 1):
        xi = {n: None if a is None else a[:, cu[i]:cu[i + 1]] for n, a in vl["x"].items()}
        oi, _ = _call(vl["fn"], xi, False, **({} if vl.get("h0") is None else
                                                {"initial_state": vl["h0"][i:i + 1]}))
        op = o_b[i:i + 1, :cu[i + 1] - cu[i]]
        if tuple(oi.shape) != tuple(op.shape):
            raise ValueError("fn on sequence %d alone returned o of shape %s, expected %s" % (
                i, tuple(oi.shape), tuple(op.shape)))
        moved += int((_bits(oi)[1] != _bits(op)[1]).sum())
        ref = _heads(op).double().numpy()
        nw = _normwise(np.nan_to_num(_heads(oi).double().numpy() - ref, nan=np.inf), ref, window)
        for h in range(H):
            b = budgets[min(i * H + h, len(budgets) - 1)] if budgets else None
            r = nw[h] / b if b else (np.inf if nw[h] > 0 else 0.0)
            if r > worst[0]:
                worst = (r, i, float(nw[h]), b)
    return {"sequences": len(cu) - 1, "moved": moved, "bitwise": moved == 0,
            "worst_seq": worst[1], "diff_max": worst[2], "budget": worst[3],
            "ok": bool(worst[0] <= 1)}


def _rollback(states_fn, fn, x, T, seed, budget, state_layout):
    """speculative decoding's rollback: states_fn(q, k, v, g=, beta=) -> (o, states), states
    (batch, T, heads, d, dv) (state_layout "vk": (..., dv, d)) the state after each token, the
    one a serving engine restores when it accepts t tokens of a draft; each against the final
    state of fn on the first t tokens (t = 1, 2, T/2, T - 1, T and three drawn with seed): kept
    exactly (the same bits), or within the budget (the read-outs' largest), else failed"""
    torch = _torch()
    rng = np.random.default_rng(seed + 2)
    ts = sorted({t for t in [1, 2, T // 2, T - 1, T] + [int(t) for t in rng.integers(1, T + 1, 3)]
                 if 1 <= t <= T})
    given = _copies(x)
    args = {n: given[n] for n in _ARGS if given.get(n) is not None}
    with torch.no_grad():
        out = states_fn(given["q"], given["k"], given["v"], **args)
    states = out[1] if isinstance(out, (tuple, list)) and len(out) > 1 else None
    B, H, d, dv = x["q"].shape[0], x["v"].shape[2], x["q"].shape[3], x["v"].shape[3]
    want = (B, T, H, d, dv) if state_layout == "kv" else (B, T, H, dv, d)
    if not isinstance(states, torch.Tensor) or tuple(states.shape) != want:
        raise ValueError("states_fn returned states of shape %s, expected (o, states) with states "
                         "(batch, T, heads, %s) = %s: the state after each token" % (
                             tuple(getattr(states, "shape", ())),
                             "d, dv" if state_layout == "kv" else "dv, d", want))
    exact, worst = 0, (-1.0, ts[0])
    for t in ts:
        _, St = _call(fn, {n: None if a is None else a[:, :t] for n, a in x.items()}, True)
        kept = states[:, t - 1].detach()
        if St is None or tuple(St.shape) != tuple(kept.shape):
            raise ValueError("fn on %d tokens returned a final state of shape %s, states_fn's is "
                             "%s" % (t, tuple(getattr(St, "shape", ())), tuple(kept.shape)))
        exact += bool(torch.equal(kept.cpu(), St.cpu()))
        ref = St.cpu().double()
        den = float(torch.linalg.norm(ref))
        diff = float(torch.linalg.norm(kept.cpu().double() - ref))
        rel = diff / den if den else (0.0 if diff == 0 else np.inf)
        rel = rel if np.isfinite(rel) else np.inf
        if rel > worst[0]:
            worst = (rel, t)
    return {"positions": ts, "exact": exact, "rel": worst[0], "worst_t": worst[1],
            "budget": budget, "ok": exact == len(ts) or bool(budget and worst[0] <= budget)}


_ROLES = (("q", "q"), ("k", "k"), ("v", "v")) + tuple((n, f) for n, f, _ in _INPUTS)


def _prepare(q, k, v, extra, model, dtype):
    """the inputs as fn and the trace see them (a dict in dtype) and their shapes, checked;
    extra: judge()'s inputs of _ARGS (g, beta, u, decay), None where not given"""
    table = _model_table()
    if model not in table:
        raise ValueError("model %r: judge() takes %s (fn(q, k, v, g=, beta=, u=, decay=), the "
                         "inputs each model reads)" % (model, ", ".join(_judged())))
    if table[model][2]:
        raise ValueError("model %s: %s" % (model, table[model][2]))
    q, k, v = _tensor(q, "q"), _tensor(k, "k"), _tensor(v, "v")
    dtype = _torch().bfloat16 if dtype is None else dtype
    if str(dtype).replace("torch.", "") not in _POLICY:
        raise ValueError("dtype %s: bfloat16, float16, float32 or float64" % dtype)
    x = {"q": q.to(dtype), "k": k.to(dtype), "v": v.to(dtype)}
    x.update((n, None if extra.get(n) is None else _tensor(extra[n], n).to(dtype)) for n in _ARGS)
    return x, _check_layout(x["q"], x["k"], x["v"], {n: x[n] for n in _ARGS}, model), dtype


def _first_call(fn, x, shape):
    B, T, H, d, dv = shape
    state = _takes_state(fn)
    o, S = _call(fn, x, state)
    if tuple(o.shape) != (B, T, H, dv):
        raise ValueError("fn returned o of shape %s, expected fla's (batch, T, heads, dv) = %s%s" % (
            tuple(o.shape), (B, T, H, dv), " (head-first? o.transpose(1, 2))"
            if tuple(o.shape) == (B, H, T, dv) else ""))
    return o, S, state


def _causality_all(fn, x, o, state, T, seed):
    rng = np.random.default_rng(seed)
    Ps = [T // 2] + ([2 * int(rng.integers(0, (T - 1) // 2)) + 1] if T > 2 else [])
    return [_causality(fn, x, o, P, state) for P in dict.fromkeys(P for P in Ps if 0 < P < T)]


def _split(fn, x, o, S, T, chunk_split, decode_fn=None):
    """two calls with the state carried (decode_fn: the second part one call of decode_fn a
    token, each from the state the last left): the per-head difference from one call's outputs
    (its norm-wise measure is taken against the budget once vla-check has said it)"""
    torch = _torch()
    c = chunk_split if chunk_split is not None else min(T // 2 + 1, T - 1)
    if isinstance(c, bool) or not isinstance(c, int) or not 0 < c < T:
        raise ValueError("chunk_split=%r: a step in 1..T-1 = 1..%d" % (c, T - 1))
    first = {n: (None if a is None else a[:, :c]) for n, a in x.items()}
    o1, S1 = _call(fn, first, True)
    if S1 is None:
        raise ValueError("fn(..., output_final_state=True) returned no final state")
    steps = [(c, T)] if decode_fn is None else [(t, t + 1) for t in range(c, T)]
    o2, S2 = [], S1
    for a0, a1 in steps:
        part = {n: (None if a is None else a[:, a0:a1]) for n, a in x.items()}
        ot, S2 = _call(decode_fn or fn, part, True, initial_state=S2)
        if S2 is None:
            raise ValueError("%s(..., output_final_state=True) returned no final state" % (
                "decode_fn" if decode_fn else "fn"))
        o2.append(ot)
    o2 = torch.cat(o2, 1)
    diff = _heads(torch.cat([o1, o2], 1)).double().numpy() - _heads(o).double().numpy()
    srel = None
    if S is not None and S2 is not None:
        S, S2 = S.cpu().double(), S2.cpu().double()
        den = float(torch.linalg.norm(S))
        srel = float(torch.linalg.norm(S2 - S)) / den if den else None
    return {"split": c, "diff": np.nan_to_num(diff, nan=np.inf), "state_rel": srel}


def checks(fn, q, k, v, *, model="gdn", g=None, beta=None, u=None, decay=None, dtype=None,
           chunk_split=None, seed=0, window=1, budget=None):
    """The checks of judge() that need no vla-check, on fn alone: (causality, chunk_split) as
    Verdict.causality and Verdict.chunk_split hold them (chunk_split None when fn takes no
    state); the split's difference is measured over windows of `window` steps and held against
    `budget` (None: reported, not judged)."""
    x, shape, _ = _prepare(q, k, v, dict(g=g, beta=beta, u=u, decay=decay), model, dtype)
    o, S, state = _first_call(fn, x, shape)
    caus = _causality_all(fn, x, o, state, shape[1], seed)
    sp = _split(fn, x, o, S, shape[1], chunk_split) if state else None
    return caus, (None if sp is None else _split_verdict(sp, o, window, [budget]))


def _split_verdict(sp, o, window, budgets):
    """the split's per-head norm-wise differences, each against its head's budget: the worst head
    is the one furthest past (or nearest) its own budget"""
    nw = _normwise(sp["diff"], _heads(o).double().numpy(), window)
    b = [budgets[min(i, len(budgets) - 1)] if budgets else None for i in range(len(nw))]
    ratio = [nw[i] / bi if bi else (np.inf if nw[i] > 0 else 0.0) for i, bi in enumerate(b)]
    w = int(np.argmax(ratio)) if any(bi is not None for bi in b) else int(np.argmax(nw))
    return {"split": sp["split"], "diff_max": float(nw[w]), "worst_head": w,
            "per_head": nw.tolist(), "budget": b[w],
            "ok": bool(all(bi is None or nw[i] <= bi for i, bi in enumerate(b))),
            "state_rel": sp["state_rel"]}


def _outputs(folder, name, o, S, B, H, d, dv, do=None, grads=None, layout="kv"):
    """DIR2 (folder/name) written anew: o, and S in vlastab's (heads, dv, d), do and the gradients.
    A link at the folder's name is refused: judge() never writes through a link it did not make."""
    odir = os.path.join(folder, name)
    if os.path.islink(odir):
        raise ValueError("keep: %s is a symbolic link; judge() writes only into folders it makes "
                         "or finds as folders" % odir)
    os.makedirs(odir, exist_ok=True)
    for f in ("o.npy", "dtype.txt", "S.npy", "do.npy") + tuple(f + ".npy" for _, f in _GRADS):
        if os.path.lexists(os.path.join(odir, f)):  # a kept folder: this call's files only
            os.unlink(os.path.join(odir, f))
    _save_o(o, odir)
    if do is not None:
        _save_o(do, odir, "do")
        for f, gr in grads.items():
            _save_o(gr, odir, f)
    if S is not None:  # fla's h (K, V) = S^T, or (V, K) = S -> vlastab's (heads, dv, d)
        want = (B, H, d, dv) if layout == "kv" else (B, H, dv, d)
        if tuple(S.shape) != want:
            raise ValueError("fn returned a final state of shape %s, expected %s for "
                             "state_layout=%r ((batch, heads, %s))" % (
                                 tuple(S.shape), want, layout,
                                 "d, dv" if layout == "kv" else "dv, d"))
        S = S.cpu() if layout == "vk" else S.cpu().transpose(-1, -2)
        _write(os.path.join(odir, "S.npy"),  # C order: a one-head transpose stays a view
               np.ascontiguousarray(S.reshape(B * H, dv, d).double().numpy()))
    return odir


def _vla_check(exe, tdir, odir, precision, form, prefix, slack, window, ref, timeout, extra=()):
    """vla-check --outputs on one DIR2: its JSON (a report left by an earlier call is removed
    first: a stale one is never read)"""
    for ext in (".json", ".md"):
        if os.path.lexists(prefix + ext):
            os.unlink(prefix + ext)
    cmd = [exe, "trace:" + tdir, "--outputs", odir, "--precision", precision, "--form", form,
           "--report", prefix]
    for opt, val in (("--slack", slack), ("--window", window), ("--ref", ref)):
        if val is not None:
            cmd += [opt, str(val)]
    cmd += list(extra)
    rc, stderr = _run_streaming(cmd, timeout)
    if rc == 2:
        raise ValueError("vla-check refused the judgement (exit 2): %s\n  command: %s" % (
            stderr.strip(), " ".join(cmd)))
    if rc not in (0, 1) or not os.path.exists(prefix + ".json"):
        raise RuntimeError("vla-check: exit %d, no %s.json: %s\n  command: %s" % (
            rc, prefix, stderr.strip()[-2000:], " ".join(cmd)))
    with open(prefix + ".json") as f:
        data = json.load(f)
    if (data.get("verdict") == "ok") != (rc == 0):
        raise RuntimeError("vla-check: exit %d with a %s verdict in %s.json: %s" % (
            rc, data.get("verdict"), prefix, stderr.strip()[-2000:]))
    return data


def _run_streaming(cmd, timeout):
    """cmd run with its progress lines ("vla-check: progress: ...", every VLA_PROGRESS_SECONDS,
    default 30) passed on to this process's stderr as they come, so that a long judgement in a CI
    log says it is alive; (exit status, the rest of its stderr)"""
    import sys
    import threading
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    rest = []

    def pump():
        for line in p.stderr:
            if ": progress: " in line:
                sys.stderr.write(line)
                sys.stderr.flush()
            else:
                rest.append(line)

    th = threading.Thread(target=pump, daemon=True)
    th.start()
    try:
        rc = p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        raise
    finally:
        th.join()
    return rc, "".join(rest)


def _logic(fn, x, shape, state, do, grad, exe, tdir, folder, form, slack, window, ref, timeout,
           layout, model, settings):
    """The logic check: fn on the same inputs in float32 (exact: every value of a 16-bit format
    is a float32), judged against the same exact reference with the f32 policy's attainable
    error, where rounding costs little and an error of the algorithm costs as much as at the
    kernel's dtype (in fla's arrangement where judge() chose it). A dict: verdict (vla-check's
    JSON) or why (fn could not run in float32)."""
    torch = _torch()
    B, T, H, d, dv = shape
    x32 = {n: (None if a is None else a.to(torch.float32)) for n, a in x.items()}
    try:
        o, S = _call(fn, x32, state)
    except InputWritten:
        raise
    except Exception as e:  # noqa: BLE001 (any failure of fn at float32 is the check's)
        return {"dtype": "float32", "why": "fn raised with float32 inputs: %s: %s" % (
            type(e).__name__, str(e).split("\n")[0])}
    if o.dtype != torch.float32:
        return {"dtype": "float32", "why": "fn returned o of dtype %s for float32 inputs (the "
                "check needs fn to compute in its inputs' dtype)" % str(o.dtype).replace(
                    "torch.", "")}
    dg, grads = None, None
    if grad:
        dg, grads = _backward(fn, x32, o.shape, 0, do=do.to(torch.float32))
        if dg is None:
            return {"dtype": "float32", "why": "gradients at float32: " + grads}
    odir = _outputs(folder, "outputs-f32", o, S, B, H, d, dv, dg, grads, layout)
    data = _vla_check(exe, tdir, odir, "f32", form, os.path.join(folder, "report-f32"), slack,
                      window, ref, timeout)
    return {"dtype": "float32", "verdict": data}


def judge(fn, q, k, v, *, model="gdn", g=None, beta=None, u=None, decay=None, settings=None,
          dtype=None,
          form="seq", precision=None, chunk_split=None, causality=True, seed=0, keep=None,
          timeout=None, grad=True, logic=True, slack=None, window=None, ref=None,
          state_layout="kv", scale=None, cu_seqlens=None, states_fn=None, decode_fn=None,
          initial_state=None):
    """Judges fn, your kernel: fn(q, k, v, g=g, beta=beta) -> o (batch, T, heads, dv), or fla's
    (o, final_state), with the state convention fn(..., initial_state=S0, output_final_state=True)
    -> (o, S), S (batch, heads, d, dv), when fn takes those two arguments. fn is handed those of
    g, beta, u, decay that were given.

    q, k (batch, T, heads, d), v (batch, T, heads, dv) torch tensors in fla's layout; g the
    log-decays (batch, T, heads) (kda, gla: or (batch, T, heads, d)); beta (batch, T, heads); u
    (batch, T, heads, d) and decay (batch, T, heads), in [0, 1], as vlastab.run takes them
    (loglinear's level weights lambda in u; mamba3's lambda in beta, dt in decay, A dt in g, the
    angles theta in u: docs/gated.md). Each model takes the inputs the library's model table says
    it reads (lib/vlalists.h); another is refused, naming the models that read it.
    deltaproduct's inputs are its stream of T n_h steps (docs/gated.md), with settings=
    {"householder": n_h}.
    Grouped heads (fla's num_v_heads > num_heads, Mamba-2's ngroups): v, g and beta may have a
    multiple of q and k's heads, head h of v reading head h // (its heads / q's) of q and k
    (fla's repeat '... h d -> ... (h g) d'); fn gets them as given, the trace holds q and k
    repeated, and the backward runs once per member of a group (do zero on the other members'
    heads), so that dq and dk of a shared head are judged per head of v. A batch is judged as
    batch x heads heads (head b heads + h, heads v's). dtype: what the inputs are cast
    to before fn and the trace see them (default torch.bfloat16); model: vlastab's model that fn
    computes (every model of the library's table that keeps S alone and reads no a, b: rwkv7
    and the models that track A are refused saying why; likewise a
    form, a backward (grad) or an initial state (initial_state, cu_seqlens) that the library
    does not have for the model, with its reason: loglinear and mamba3 no scan, loglinear no
    initial state); settings: its --set (e.g. {"qknorm": False,
    "scale": 0.25}), written to model.txt. precision: the policy whose emulation is the attainable
    error (default from dtype: bfloat16 bf16-kern, float16 f16-kern, float32 f32); form: the form
    your kernel computes (seq, chunk:C, scan). chunk_split: the step at which the sequence is cut
    into two calls (default T/2 + 1, inside a chunk). causality: P = T/2 and a random odd P
    (seeded by seed; odd: inside every chunk). keep: a folder to keep the trace, the outputs and
    the reports in (default: a temporary, removed). grad: fn's backward is called (the inputs
    handed to it as leaves that require grad) with do drawn from seed (standard normals in o's
    dtype) and the gradients of q, k, v, g, beta are judged too (Verdict.grads); gradients that
    cannot be had (fn without a backward, a backward that raises or gives no gradient for an
    input) fail the verdict: grad=False judges the forward alone. logic: where dtype is a 16-bit
    format, fn runs again on the same inputs in float32 and is judged with the f32 policy's
    budget (Verdict.logic): an error of the algorithm does not shrink with the precision, the
    rounding's does; a kernel that cannot compute in float32 (or computes in TF32 or 16 bits
    whatever its inputs) fails it: logic=False skips it, said in the verdict. slack, window, ref:
    vla-check's --slack (the budget's factor over the attainable error), --window (tokens per
    window of the norm-wise error) and --ref (exact or f64); None: vla-check's defaults.
    state_layout: the final state's layout, "kv" (fla's h, (batch, heads, d, dv), the default) or
    "vk" (fla's state_v_first, FlashInfer's: (batch, heads, dv, d)); a state of another shape is
    refused, never passed over. scale: fla's scale= (o_t = scale S_t q_t; fla's default, and
    vlastab's, d^-1/2), handed to fn as scale= and to the model as its setting scale; a fn that
    takes no scale= is refused. cu_seqlens: fla's varlen call, N sequences packed into q, k, v of
    batch 1, sequence i the steps cu_seqlens[i] to cu_seqlens[i + 1] - 1, fn(..., cu_seqlens=)
    computing each from a zero state (or initial_state's row i); judged as a batch of N
    sequences, each padded after its end with null tokens (q = k = v = 0, g = 0, beta = 0: exact
    no-ops whose read-outs are 0) and the packed outputs placed likewise, with do 0 there; and
    each sequence alone (fn without cu_seqlens) against its place in the pack
    (Verdict.packing: bit for bit or not, and within the budget or not). The chunk split is not
    run: the packing cuts the sequences itself. states_fn: a kernel of speculative decoding's
    verify step, states_fn(q, k, v, g=, beta=) -> (o, states), states (batch, T, heads, d, dv)
    (state_layout's order) the state after each token, the one an engine restores when it
    accepts t tokens of a draft: at t = 1, 2, T/2, T - 1, T and three drawn from seed, against
    the final state of fn on the first t tokens (fn must take initial_state and
    output_final_state), kept exactly or within the budget (Verdict.rollback). decode_fn: a
    serving engine's decode kernel, decode_fn(q, k, v, g=, beta=, initial_state=,
    output_final_state=True) -> (o, state) on one token: fn's prefill of the first chunk_split
    tokens (default T/2 + 1), then decode_fn token by token from the state it left, against one
    call of fn, within the budget (Verdict.decode). initial_state: each sequence's state before
    its first token, (batch, heads, d, dv) (state_layout "vk": (batch, heads, dv, d)); with
    cu_seqlens row i is sequence i's: handed to every call of fn as initial_state= (a call that
    goes on from a state of its own, the chunk split's second, takes that one instead), and
    written to the trace as S0.npy, from which vla-check's references start. fn must take
    initial_state=, and grad must be False: vlastab's backward starts from a zero state and gives
    no dS0, so gradients from another state are not judged.

    Returns a Verdict. Raises ValueError naming the input for a layout or range it can detect
    wrong (and InputWritten, a ValueError, when fn writes into its inputs), FileNotFoundError
    without vla-check, RuntimeError when vla-check fails to judge."""
    x, shape, dtype = _prepare(q, k, v, dict(g=g, beta=beta, u=u, decay=decay), model, dtype)
    why = _library_refuses(model, settings, form, shape[3], shape[4], grad,
                           initial_state is not None or cu_seqlens is not None)
    if why:
        raise ValueError(why)
    if scale is not None:
        fn, settings = _with_scale(fn, scale, settings)
    varlen = None
    if cu_seqlens is not None and states_fn is not None:
        raise ValueError("states_fn with cu_seqlens: the rollback check takes one sequence a batch "
                         "row, not packed sequences")
    if initial_state is not None and grad:
        raise ValueError("initial_state with grad=True: vlastab's backward starts from S_0 = 0 and "
                         "gives no dS0, so fn's gradients would be judged against another run's: "
                         "judge the forward with grad=False")
    if initial_state is not None and not _takes(fn, "initial_state"):
        raise ValueError("initial_state: fn takes no initial_state= argument to hand it to")
    if cu_seqlens is not None:
        fn, x, shape, varlen = _varlen(fn, x, shape, cu_seqlens)
    B, T, H, d, dv = shape
    if initial_state is not None:
        fn = _from_h0(fn, initial_state, (B, H, d, dv), state_layout, varlen)
    arranged = None
    if _reads(model, "g") and form.startswith("chunk:") and not \
            {"base", "cumsum"} & set(settings or {}):
        # the gated family's chunk form as fla's kernels arrange it: exp2 of differences of a
        # tree-ordered cumulative sum of the log-gates. With strongly negative gates that
        # cancellation is most of a correct fla-style kernel's float32 error (vlastab's default
        # arrangement attains 2.3 to 4.4 times less there: bench/mutants/README.md)
        arranged = {"base": 2, "cumsum": "tree"}
        settings = dict(settings or {}, **arranged)
    if state_layout not in ("kv", "vk"):
        raise ValueError("state_layout=%r: 'kv' (fla's h, (batch, heads, d, dv)) or 'vk' "
                         "((batch, heads, dv, d))" % (state_layout,))
    dname = str(dtype).replace("torch.", "")
    precision = precision or _POLICY[dname]
    exe = vla_check_path()
    o, S, state = _first_call(fn, x, shape)
    caus = _causality_all(fn, x, o, state, T, seed) if causality else []
    sp = _split(fn, x, o, S, T, chunk_split) if state and varlen is None else None
    if states_fn is not None and not state:
        raise ValueError("states_fn: fn must take initial_state and output_final_state, whose "
                         "final states the kept ones are checked against")
    if decode_fn is not None and (not state or varlen is not None):
        raise ValueError("decode_fn: fn must take initial_state and output_final_state (its prefill "
                         "hands decode_fn its state), without cu_seqlens")
    dc = _split(fn, x, o, S, T, chunk_split, decode_fn) if decode_fn is not None else None
    if keep is not None:
        for sub in ("trace", "outputs", "outputs-f32"):
            if os.path.islink(os.path.join(keep, sub)):
                raise ValueError("keep: %s is a symbolic link; judge() writes only into folders "
                                 "it makes or finds as folders" % os.path.join(keep, sub))
    folder = keep or tempfile.mkdtemp(prefix="vla-judge-")
    try:
        os.makedirs(folder, exist_ok=True)
        tdir = os.path.join(folder, "trace")
        os.makedirs(tdir, exist_ok=True)
        for f in ("q.npy", "k.npy", "v.npy", "model.txt", "S0.npy") + tuple(
                f + ".npy" for _, f, _ in _INPUTS):
            if os.path.lexists(os.path.join(tdir, f)):  # a kept folder: this call's files only
                os.unlink(os.path.join(tdir, f))
        from .torch_trace import TraceRecorder
        rec = TraceRecorder(heads=B * H)
        with rec:
            for n, role in _ROLES:
                if x[n] is not None:  # (B, T, H, .) -> one sequence of B H heads
                    a = _expand(x, n)
                    a = a.transpose(0, 1).reshape((1, T, B * H) + tuple(a.shape[3:]))
                    rec.capture(role, a)
        h0 = None if initial_state is None else initial_state.reshape(
            (B * H,) + tuple(initial_state.shape[2:]))  # the trace's heads, b H + h
        rec.save(tdir, model=model, settings=settings, initial_state=h0, state_layout=state_layout)
        if dtype == _torch().float64:  # the recorder keeps float32: the kernel's own numbers instead
            for n, role in _ROLES:
                if x[n] is not None:
                    _write(os.path.join(tdir, role + ".npy"),
                            np.ascontiguousarray(_heads(_expand(x, n)).cpu().numpy()))
        do, grads, gfail = None, None, None
        if grad:
            if varlen is not None:  # do 0 on the null tokens: a loss of the sequences alone
                do = _randn(o.shape, seed + 1)
                for i, n in enumerate(varlen["lens"]):
                    do[i, n:] = 0
            do, grads = _backward(fn, x, o.shape, seed, do=do)
            if do is None:
                gfail, grads = grads, None
        odir = _outputs(folder, "outputs", o, S, B, H, d, dv, do, grads, state_layout)
        of = o.float().numpy()
        nonfinite = None
        if not np.isfinite(of).all():
            idx = np.argwhere(~np.isfinite(of))
            first = idx[np.argmin(idx[:, 1])]
            nonfinite = (int(first[0] * H + first[2]), int(first[1]) + 1)
        data = _vla_check(exe, tdir, odir, precision, form, os.path.join(folder, "report"), slack,
                          window, ref, timeout)
        lg = None
        if not logic:
            lg = {"dtype": "float32", "why": "not asked (logic=False)", "skipped": True}
        elif dname in ("bfloat16", "float16"):
            if do is None and grad:  # the gradients already failed: the forward's logic alone
                lg = _logic(fn, x, shape, state, None, False, exe, tdir, folder, form, slack,
                            window, ref, timeout, state_layout, model, settings)
            else:
                lg = _logic(fn, x, shape, state, do, grad, exe, tdir, folder, form, slack,
                            window, ref, timeout, state_layout, model, settings)
        hint = None
        if data["verdict"] != "ok" and _qknorm(model) and "qknorm" not in (settings or {}) \
                and any(h.get("verdict") != "ok" for h in data["heads"]):
            # fla's use_qk_l2norm_in_kernel defaults to False, vlastab's gdn and kda to the norm:
            # the read-outs judged again without it say whether that is the difference
            hdir = _outputs(folder, "outputs-qknorm-off", o, None, B, H, d, dv)
            alt = _vla_check(exe, tdir, hdir, precision, form, os.path.join(
                folder, "report-qknorm-off"), slack, window, ref, timeout, ("--set", "qknorm=off"))
            if all(h.get("verdict") == "ok" for h in alt["heads"]):
                hint = ("your kernel's read-outs are within the budget of %s without the L2 norm of "
                        "q and k (fla's use_qk_l2norm_in_kernel=False, its default): judge it with "
                        "settings={'qknorm': False}" % model)
        split = None if sp is None else _split_verdict(
            sp, o, data.get("window") or 1, [h.get("budget") for h in data.get("heads", [])])
        skipped = "cu_seqlens: the packing cuts the sequences itself" if varlen else \
            None if state else \
            "fn does not take initial_state and output_final_state (fla's convention)"
        packing = None if varlen is None else _packing(
            varlen, o, data.get("window") or 1, [h.get("budget") for h in data.get("heads", [])])
        decode = None if dc is None else _split_verdict(
            dc, o, data.get("window") or 1, [h.get("budget") for h in data.get("heads", [])])
        rollback = None
        if states_fn is not None:
            budgets = [h.get("budget") for h in data.get("heads", []) if h.get("budget")]
            rollback = _rollback(states_fn, fn, x, T, seed, max(budgets) if budgets else None,
                                 state_layout)
        return Verdict(data, caus, split, skipped, nonfinite, folder if keep else None,
                       "grad=False" if not grad else None, grads_failed=gfail, logic=lg, hint=hint,
                       arranged=arranged, packing=packing, rollback=rollback, decode=decode)
    finally:
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)
