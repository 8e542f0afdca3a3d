"""vlastab from Python and notebooks: a ctypes binding over libvlastab.so (numpy in and out) and a
reader of the programs' .dat tables. run() steps a model over arrays of shape (heads, T, dim) in a
chosen precision, beside a binary64 run of the same rounded inputs, and returns the trajectories
and the measures; read_dat() gives each run (head) of a table its own arrays. The recorder of a
PyTorch model's inputs is vlastab.torch_trace. The math is docs/math.md; the layout docs/trace.md.
Bad input is a TypeError or ValueError naming the input and what it must be, as the programs
refuse it; a run that went to Inf or NaN says so (the result's nonfinite, and a warning).
"""
import ctypes
import numbers
import os
import stat
import warnings

import numpy as np

__all__ = ["run", "Model", "read_dat", "round_to", "models", "precisions", "tracks", "library",
           "judge", "Verdict"]


def judge(fn, q, k, v, **kw):
    """Your own PyTorch kernel fn judged on its inputs against the exact reference, with causality
    and chunk-boundary checks: vlastab.verdict.judge (torch is imported only here)"""
    from .verdict import judge as _judge
    return _judge(fn, q, k, v, **kw)


def __getattr__(name):  # vlastab.Verdict without importing torch at import vlastab
    if name == "Verdict":
        from .verdict import Verdict
        return Verdict
    raise AttributeError("module 'vlastab' has no attribute %r" % name)

# make install writes the library's folder here; in the source tree the build folder is used
_LIBDIR = "@LIBDIR@"


def _load():
    """libvlastab: $VLASTAB_LIB, the package's own _lib (pip install), make install's folder, the
    source tree's build/, then the loader's search"""
    here = os.path.dirname(os.path.abspath(__file__))
    cands = [os.environ.get("VLASTAB_LIB", ""), os.path.join(here, "_lib", "libvlastab.so.0")]
    if not _LIBDIR.startswith("@"):
        cands.append(os.path.join(_LIBDIR, "libvlastab.so.0"))
    cands.append(os.path.join(here, "..", "..", "..", "build", "libvlastab.so"))
    cands.append("libvlastab.so.0")  # the loader's own search (ldconfig, LD_LIBRARY_PATH)
    errs = []
    for c in cands:
        if not c:
            continue
        try:
            return ctypes.CDLL(c)
        except OSError as e:
            errs.append(str(e))
    raise OSError("libvlastab.so not found (set VLASTAB_LIB; make, pip install . or make install): "
                  + "; ".join(errs))


library = _load()
_L = library
_D = ctypes.POINTER(ctypes.c_double)


# the structures and constants of lib/vlastab.h, as make generated them from it (_abi.py, by
# tools/python/mkabi.py); the library's compiler checked that layout, and vla_abi_digest() is its
# digest: a library built from another header is refused here, before any structure is passed
try:
    from . import _abi
except ImportError as e:
    raise ImportError("vlastab: %s: vlastab/_abi.py is made from lib/vlastab.h by make (or pip "
                      "install .)" % e) from None
_lib_abi = getattr(_L, "vla_abi_digest", None)  # None: a library that does not export it
if _lib_abi is not None:
    _lib_abi.restype = ctypes.c_char_p
    _lib_abi = _lib_abi().decode()
if _lib_abi != _abi.digest():
    raise ImportError("vlastab: %s was built from another lib/vlastab.h than this binding's "
                      "vlastab/_abi.py (layout digest %s, here %s): rebuild both (make), or set "
                      "VLASTAB_LIB to the library built with this binding" % (
                          library._name, _lib_abi or "none", _abi.digest()))
_Config, _Input, _Error = _abi.vla_config, _abi.vla_input, _abi.vla_error
_Counts, _Grads = _abi.vla_counts, _abi.vla_grads
_Arrays, _Trajectory = _abi.vla_arrays, _abi.vla_trajectory
_L.vla_strerror.restype = ctypes.c_char_p
_L.vla_error_msg.restype = ctypes.c_char_p
_L.vla_error_msg.argtypes = [ctypes.POINTER(_Error)]
_L.vla_names.restype = ctypes.c_char_p
_L.vla_round_fmt.restype = ctypes.c_double
_L.vla_round_fmt.argtypes = [ctypes.c_int, ctypes.c_double]
_L.vla_prec_storage.restype = ctypes.c_int
_L.vla_prec_io.restype = ctypes.c_int
_L.vla_fmt_max.restype = ctypes.c_double
_L.vla_fro.restype = ctypes.c_double
_L.vla_fro.argtypes = [_D, ctypes.c_long]
_L.vla_fro_diff.restype = ctypes.c_double
_L.vla_fro_diff.argtypes = [_D, _D, ctypes.c_long]
_L.vla_fmt_unit_roundoff.restype = ctypes.c_double
_L.vla_trajectory_run.argtypes = [ctypes.POINTER(_Config), ctypes.c_int, ctypes.c_long,
                                  ctypes.POINTER(_Arrays), ctypes.POINTER(_Trajectory),
                                  ctypes.POINTER(_Error)]
_L.vla_model_reads.restype = ctypes.c_uint
_L.vla_model_reads.argtypes = [ctypes.POINTER(_Config)]
_L.vla_model_gate.argtypes = [ctypes.c_int]
_L.vla_form_parse.argtypes = [ctypes.POINTER(_Config), ctypes.c_char_p]
_L.vla_form_check.argtypes = [ctypes.POINTER(_Config), ctypes.POINTER(_Error)]
_L.vla_config_set_why.argtypes = [ctypes.POINTER(_Config), ctypes.c_char_p, ctypes.c_char_p,
                                  ctypes.POINTER(_Error)]
_L.vla_config_check_why.argtypes = [ctypes.POINTER(_Config), ctypes.POINTER(_Error)]
_L.vla_track_set.argtypes = [ctypes.POINTER(_Config), ctypes.c_char_p]
_L.vla_track_check.argtypes = [ctypes.POINTER(_Config), ctypes.POINTER(_Error)]
_L.vla_model_name.restype = ctypes.c_char_p


def _names(which):
    return _L.vla_names(which).decode().split(", ")


def models():
    """the library's models, in its list's order"""
    return _names(_abi.VLA_LIST_MODEL)


def precisions():
    return _names(_abi.VLA_LIST_PREC)


def tracks():
    return _names(_abi.VLA_LIST_TRACK)


def _text(s, what):
    """s as the C string the library reads: a str, and no NUL in it (C would stop reading there:
    'vla3\\x00junk' would be vla3)"""
    if not isinstance(s, str):
        raise TypeError("%s: %r is not a string" % (what, s))
    if "\0" in s:
        raise ValueError("%s: %r holds a NUL character" % (what, s))
    return s.encode("utf-8", "backslashreplace")


def _parse(fn, name, kind):
    out = ctypes.c_int()
    if getattr(_L, fn)(_text(name, kind), ctypes.byref(out)):
        raise ValueError("unknown %s %r (%s)" % (kind, name, ", ".join(
            {"model": models, "precision": precisions, "track": tracks}[kind]())))
    return out.value


def round_to(x, precision):
    """x rounded once to the input format of a precision policy, as the programs round inputs
    (the storage format; 16 bits in f16-kern and bf16-kern). x must be finite; a number beyond
    the format's largest rounds to +-Inf, as IEEE rounding does."""
    fmt = _L.vla_prec_io(_parse("vla_prec_parse", precision, "precision"))
    x = _real(x, "x")
    _values(x, "x")
    with np.errstate(over="ignore"):
        return np.vectorize(lambda y: _L.vla_round_fmt(fmt, y), otypes=[np.float64])(x)


def _real(a, name):
    """a as a float64 numpy array, or TypeError naming the input: floats of at most 64 bits, or
    integers that binary64 holds exactly (|x| <= 2^53); not bool, complex, text or objects"""
    try:
        a = np.asarray(a)
    except (TypeError, ValueError, RuntimeError) as e:
        raise TypeError("%s: not an array of numbers (%s)" % (name, e))
    kind = a.dtype.kind
    if not (kind in "iu" or (kind == "f" and a.dtype.itemsize <= 8)):
        raise TypeError("%s: dtype %s, expected real numbers (float16, float32, float64 or "
                        "integers)" % (name, a.dtype))
    if kind in "iu" and a.size and (a.max() > 2 ** 53 or a.min() < -2 ** 53):
        raise ValueError("%s: an integer beyond 2^53, which binary64 does not hold exactly" % name)
    return np.ascontiguousarray(a, dtype=np.float64)


def _at(i):
    return "[%s]" % ", ".join(str(int(j)) for j in i)


def _values(a, name, lo=-np.inf, hi=np.inf):
    """the trace loader's rule (lib/stream.c) and its message: every value finite, in [lo, hi]"""
    with np.errstate(invalid="ignore"):
        bad = ~(np.isfinite(a) & (a >= lo) & (a <= hi))
    if bad.any():
        i = np.unravel_index(np.argmax(bad), a.shape)
        x, at = a[i], " at " + _at(i) if i else ""
        if not np.isfinite(x):
            raise ValueError("%s: %s%s" % (name, "NaN" if np.isnan(x) else "Inf", at))
        raise ValueError("%s: %.17g%s is outside [%g, %g]" % (name, x, at, lo, hi))


def _heads(a, name, H=None, T=None, dim=None, lo=-np.inf, hi=np.inf, scalar=False,
           many_heads=False):
    """an input of shape (heads, T, dim) checked as the trace loader checks a file, its messages
    naming the argument for the file; scalar: one number per head and step, (heads, T) or
    (heads, T, 1), returned as (heads, T, 1)"""
    a = _real(a, name)
    if scalar:
        dim = 1
    if not (a.ndim == 3 or (scalar and a.ndim == 2)):
        raise ValueError("%s: shape %s, expected %s" % (name, a.shape, "(heads, T) or (heads, T, 1)"
                                                        if scalar else "(heads, T, %s)" % (
                                                            "d" if dim is None else dim)))
    if H is None and (a.shape[0] < 1 or a.shape[1] < 1):
        raise ValueError("%s: shape %s has no steps or heads" % (name, a.shape))
    if H is None and a.shape[0] > 64 and a.shape[1] < a.shape[0] and not many_heads:
        raise ValueError("%s: shape %s would be %d heads of %d steps: run() takes (heads, T, "
                         "dim); a (T, heads, dim) array is x.transpose(1, 0, 2) (many_heads=True "
                         "runs more than 64 heads of fewer steps)" % (
                             name, a.shape, a.shape[0], a.shape[1]))
    swapped = " (a (T, heads, ...) array? run() takes (heads, T, ...))" if H is not None and \
        a.shape[:2] == (T, H) and T != H else ""
    if H is not None and a.shape[0] != H:
        raise ValueError("%s: shape %s, expected %d heads (as q)%s" % (name, a.shape, H, swapped))
    if H is not None and a.shape[1] != T:
        raise ValueError("%s: shape %s, expected %d steps (as q)%s" % (name, a.shape, T, swapped))
    if dim is not None and a.ndim == 3 and a.shape[2] != dim:
        raise ValueError("%s: shape %s, expected dim %d" % (name, a.shape, dim))
    _values(a, name, lo, hi)
    return a.reshape(a.shape[0], a.shape[1], -1) if a.ndim == 2 else a


def _fro(x):
    """||x||_F as the programs compute it (lib's vla_fro: its squares neither overflow nor
    underflow)"""
    return _L.vla_fro(x.ctypes.data_as(_D), x.size)


def _relerr(x, y):
    """||x - y|| / ||y|| as vla-check computes it: 0 when equal, Inf for a zero y and a
    difference"""
    diff = _L.vla_fro_diff(x.ctypes.data_as(_D), y.ctypes.data_as(_D), x.size)
    return 0.0 if diff == 0 else diff / _fro(y)


def _trajectory(cfg, arrs):
    """one configuration over every head, by the library's engine (vla_trajectory_run: its steps,
    its chunk ends and its last, partial chunk): the read-outs and the norms after every step, the
    final state, the counts, and the first step at which S, A or o was not finite (0: never)"""
    q, k, v, u, g, beta, decay, logdecay, a, b = (
        None if x is None else np.ascontiguousarray(x, dtype=np.float64) for x in arrs)
    per_channel = logdecay is not None and logdecay.shape[2] > 1
    H, T, d = q.shape
    dv = v.shape[2]
    o, s_fro, a_fro = np.empty((H, T, dv)), np.empty((H, T)), np.empty((H, T))
    S = np.empty((H, dv, d))
    counts = (_Counts * H)()
    bad = np.zeros(H, dtype=np.dtype(ctypes.c_long))
    pd = lambda x: None if x is None else x.ctypes.data_as(_D)
    x = _Arrays(q=pd(q), k=pd(k), v=pd(v), u=pd(u), g=pd(g), beta=pd(beta), decay=pd(decay),
                lgs=None if per_channel else pd(logdecay), lg=pd(logdecay) if per_channel else None,
                a=pd(a), b=pd(b))
    out = _Trajectory(o=pd(o), s_fro=pd(s_fro), a_fro=pd(a_fro), S=pd(S),
                      counts=ctypes.cast(counts, ctypes.POINTER(_Counts)),
                      nonfinite=bad.ctypes.data_as(ctypes.POINTER(ctypes.c_long)))
    why = _Error()
    if _L.vla_trajectory_run(ctypes.byref(cfg), H, T, ctypes.byref(x), ctypes.byref(out),
                             ctypes.byref(why)):
        raise ValueError(_L.vla_error_msg(ctypes.byref(why)).decode())
    return o, s_fro, a_fro, S, [{n: getattr(c, n) for n, _ in _Counts._fields_}
                                for c in counts], bad


def _flag(x, name):
    if isinstance(x, (bool, np.bool_)) or (isinstance(x, numbers.Integral) and x in (0, 1)):
        return bool(x)
    raise TypeError("%s: %r is not True or False" % (name, x))


def _setting_text(name, val):
    """a constant's value as --set NAME=VALUE spells it"""
    if isinstance(val, (bool, np.bool_)):
        return "on" if val else "off"
    if isinstance(val, numbers.Integral):
        return str(int(val))
    if isinstance(val, numbers.Real):
        return repr(float(val))  # every digit: float32(0.1) is not 0.1
    if isinstance(val, str):
        return val
    raise TypeError("%s=%r: a constant is a number, a string or a bool" % (name, val))


def _configure(model, precision, track, strict, d, dv, constants):
    """the vla_config of run()'s arguments, refused as the programs refuse --set and --track"""
    cfg = _Config()
    _L.vla_config_default(ctypes.byref(cfg), _parse("vla_model_parse", model, "model"), d)
    cfg.dv = dv
    cfg.prec = _parse("vla_prec_parse", precision, "precision")
    cfg.mode = _abi.VLA_STRICT if _flag(strict, "strict") else _abi.VLA_FAST
    r = _L.vla_track_set(ctypes.byref(cfg), _text(track, "track"))
    if r == _abi.VLA_ERANGE:
        raise ValueError("track %s: K is an integer in 1..%d (cg also takes a tolerance in "
                         "(0, 1))" % (track, _abi.VLA_SOLVE_KMAX))
    if r:
        raise ValueError("track: unknown way %r (%s; cg:K, cg:TOL, cheb:K)" % (
            track, ", ".join(tracks())))
    for name, val in constants.items():
        text = _setting_text(name, val)
        why = _Error()
        r = _L.vla_config_set_why(ctypes.byref(cfg), _text(name, "constant"),
                                  _text(text, name), ctypes.byref(why))
        if r:
            raise ValueError("%s=%s: '%s' %s" % (name, text, name if r == _abi.VLA_EINVAL else text,
                                                 _L.vla_error_msg(ctypes.byref(why)).decode()))
        if name == "gamma" and not 0 < cfg.gamma <= 1:
            raise ValueError("%s=%s: gamma, the forgetting factor of M, is in (0, 1]" % (
                name, text))
    why = _Error()
    if _L.vla_config_check_why(ctypes.byref(cfg), ctypes.byref(why)):
        why = _L.vla_error_msg(ctypes.byref(why)).decode()
        raise ValueError("the model configuration is not valid: %s%s" % (
            why, " (d from q, dv from v)" if why.startswith("d = ") else ""))
    if cfg.gamma != 1 and not _L.vla_model_has_A(cfg.model):
        raise ValueError("gamma=%g: %s has no A, so no M = A^-1 to forget in (%s)" % (
            cfg.gamma, model, ", ".join(m for m in models() if _L.vla_model_has_A(
                _parse("vla_model_parse", m, "model")))))
    w = _Error()
    if _L.vla_track_check(ctypes.byref(cfg), ctypes.byref(w)):
        raise ValueError("track %s: %s" % (track, _L.vla_error_msg(ctypes.byref(w)).decode()))
    return cfg


def _set_form(cfg, form):
    """cfg's form and chunk of form as --form spells it (vla_form_parse), or ValueError"""
    if _L.vla_form_parse(ctypes.byref(cfg), _text(form, "form")):
        raise ValueError("form: %r is not a form (seq, chunk:C with C a power of two in 1..%d, "
                         "scan)" % (form, _abi.VLA_CHUNK_MAX))


def _refuse_unread_settings(cfg, constants):
    """a constant that the model, form and way of tracking do not read is refused, as the programs
    refuse such a --set (vla_setting_read: tri= in the seq form, scale= for la, ...)"""
    for name, val in constants.items():
        why = _Error()
        if _L.vla_setting_read(ctypes.byref(cfg), _text(name, "constant"), ctypes.byref(why)):
            raise ValueError("%s=%s: %s" % (name, _setting_text(name, val),
                                            _L.vla_error_msg(ctypes.byref(why)).decode()))


def _warn_unread(cfg, has_u, g, beta, decay, logdecay=None, a=None, b=None):
    """an input the model does not read is a warning, as the programs warn of a trace's file (the
    model's reads column of lib/vlalists.h, through vla_model_reads)"""
    name = _L.vla_model_name(cfg.model).decode()
    delta = name == "delta"
    dec = delta and cfg.delta_form == _abi.VLA_DELTA_DECAY
    reads = _L.vla_model_reads(ctypes.byref(cfg))
    def readers(bit):  # "vla1 and vla3", "delta, gdn and kda"
        who = [m for m in models() if _reads(m, bit)]
        return ", ".join(who[:-1]) + " and " + who[-1] if len(who) > 1 else "".join(who)
    lgbit = _abi.VLA_IN_LOGDECAY_D if logdecay is not None and logdecay.shape[2] > 1 else \
        _abi.VLA_IN_LOGDECAY
    for given, arg, bit in ((has_u, "u", _abi.VLA_IN_U), (g is not None, "g", _abi.VLA_IN_G),
                            (beta is not None, "beta", _abi.VLA_IN_BETA),
                            (decay is not None, "decay", _abi.VLA_IN_DECAY),
                            (logdecay is not None, "logdecay", lgbit),
                            (a is not None, "a", _abi.VLA_IN_A),
                            (b is not None, "b", _abi.VLA_IN_B)):
        if given and not reads & bit:
            warnings.warn("vlastab.run: %s is not read by model=%s%s (only by %s)" % (
                arg, name, " with delta_form=" + ("decay" if dec else "gated") if delta else "",
                readers(bit)), stacklevel=3)


def _reads(model, bit):
    """whether model reads the input of VLA_IN_* bit under some delta_form"""
    c = _Config()
    _L.vla_config_default(ctypes.byref(c), _parse("vla_model_parse", model, "model"), 4)
    r = _L.vla_model_reads(ctypes.byref(c))
    c.delta_form = _abi.VLA_DELTA_DECAY
    return bool((r | _L.vla_model_reads(ctypes.byref(c))) & bit)


def _warn_nonfinite(bad, what, key):
    """a run that went to Inf or NaN says so, as the programs do (docs/trace.md)"""
    if bad.any():
        h = int(np.argmin(np.where(bad > 0, bad, np.iinfo(bad.dtype).max)))
        warnings.warn("vlastab.run: %s is not finite (Inf or NaN) in %d of %d heads, first in head "
                      "%d at step %d; its arrays carry inf or nan from there on (the result's %s: "
                      "each head's first such step, 0 for none)" % (
                          what, np.count_nonzero(bad), len(bad), h, bad[h], key),
                      RuntimeWarning, stacklevel=3)


def run(q, k, v, model="vla3", precision="f32", u=None, g=None, beta=None, decay=None,
        logdecay=None, a=None, b=None, track="sm", form="seq", strict=True, reference=True,
        many_heads=False, **constants):
    """Runs MODEL in PRECISION over every head of arrays shaped (heads, T, d) (v, g: dv; beta,
    decay: (heads, T) or (heads, T, 1)), raw projections as in docs/trace.md (u absent: u = k).
    The gated family's inputs: logdecay, the log-decays <= 0 as the kernels take them, (heads, T)
    for a scalar per token (gdn, mamba2) or (heads, T, d) per key channel (kda, gla, rwkv7's w);
    a and b (heads, T, d), rwkv7's low rank. form: seq, chunk:C or scan (docs/forms.md).
    A q of more than 64 heads and fewer steps than heads is refused as a (T, heads, d) array
    passed for (heads, T, d) (many_heads=True takes it as it is), and an input whose first two
    axes are q's swapped is named so. form is passed to the library as --form spells it (the
    config's form and chunk fields, vla_form_parse).
    track: a way of tracking A as --track spells it (sm, cg:8, ...). constants: any --set
    NAME=VALUE (lambda0=0.1, nudge="off" or False, ...); a single number as beta is the constant
    beta. With reference, a binary64 run of the same inputs rounded to the policy's input format
    runs beside it (the programs' --ref f64, and vla-check's reference for every row but f64's:
    o_relerr is bit for bit vla-check's o_max, in every form); reference="raw" runs it on the
    inputs as given instead, so that the errors include the inputs' rounding (for bf16-kern a
    bfloat16 rounding, u = 2^-8: 0.0033 in the median on tools/python/test_judge.py's gdn trace,
    where the rounded inputs' reference gives 4.1e-7; that is the input budget, not the policy's
    error).

    Returns a dict of numpy arrays: o (heads, T, dv), s_fro, a_fro (heads, T; a_fro nan for la
    and delta), S (heads, dv, d) at the end, counts (a dict per head), nonfinite (heads,): the
    first step (1..T) at which S, A or o held Inf or NaN, 0 where none did, and unit_roundoff of
    the policy's storage format; with reference also o_ref, o_relerr (every step), s_relerr (the
    end) against binary64, and nonfinite_ref. A run that went to Inf or NaN is also a
    RuntimeWarning, and an input the model does not read (u for la, ...) a UserWarning.

    Refused as the programs refuse a trace's files and options, each with a message naming the
    input: TypeError for what is not an array of real numbers or not a string (bool, complex,
    text, float128; names holding a NUL); ValueError for a shape that does not match q's, no
    heads or steps, d or dv outside 1..256, NaN or Inf in an input, g or decay outside [0, 1],
    beta < 0, an unknown name or a constant out of its range, a way of tracking that the model
    or policy does not have, and, with reference, an input that overflows the policy's input
    format (the reference cannot run; reference=False runs without it)."""
    if beta is not None and np.ndim(beta) == 0:  # one number: the constant beta
        constants["beta"], beta = beta, None
    q = _heads(q, "q", many_heads=_flag(many_heads, "many_heads"))
    H, T, d = q.shape
    k = _heads(k, "k", H, T, d)
    v = _heads(v, "v", H, T)
    dv = v.shape[2]
    has_u = u is not None
    u = k if u is None else _heads(u, "u", H, T, d)
    g = None if g is None else _heads(g, "g", H, T, dv, 0, 1)
    beta = None if beta is None else _heads(beta, "beta", H, T, lo=0, scalar=True)
    decay = None if decay is None else _heads(decay, "decay", H, T, lo=0, hi=1, scalar=True)
    # gate_map=sigmoid takes raw logits (g = gate_lb sigmoid(x)), of either sign
    lhi = np.inf if str(constants.get("gate_map")) == "sigmoid" else 0
    if logdecay is not None and np.ndim(logdecay) == 3 and np.shape(logdecay)[2] != 1:
        logdecay = _heads(logdecay, "logdecay", H, T, d, hi=lhi)
    elif logdecay is not None:
        logdecay = _heads(logdecay, "logdecay", H, T, hi=lhi, scalar=True)
    a = None if a is None else _heads(a, "a", H, T, d)
    b = None if b is None else _heads(b, "b", H, T, d)
    cfg = _configure(model, precision, track, strict, d, dv, constants)
    _set_form(cfg, form)
    why = _Error()
    if _L.vla_form_check(ctypes.byref(cfg), ctypes.byref(why)):
        why = _L.vla_error_msg(ctypes.byref(why)).decode()
        raise ValueError("form %s with model %s: %s" % (form, model, why))
    _refuse_unread_settings(cfg, constants)
    if logdecay is not None and logdecay.shape[2] > 1 and _L.vla_model_gate(cfg.model) == 1:
        raise ValueError("logdecay: shape %s holds one log-decay per key channel; %s takes a "
                         "scalar per token, (heads, T)" % (logdecay.shape, model))
    _warn_unread(cfg, has_u, g, beta, decay, logdecay, a, b)
    arrs = [q, k, v, u, g, beta, decay, logdecay, a, b]
    raw_ref = isinstance(reference, str) and reference == "raw"
    if isinstance(reference, str) and not raw_ref:
        raise ValueError("reference=%r: True (binary64 on the inputs rounded as the run rounds "
                         "them: vla-check's reference), 'raw' (binary64 on the inputs as given: "
                         "the inputs' rounding counted in the error) or False" % reference)
    reference = raw_ref or _flag(reference, "reference")
    if raw_ref:
        rarrs = arrs
    elif reference:  # the run's inputs rounded to its input format, up front
        fmt = _L.vla_prec_io(cfg.prec)
        rarrs = [None if a is None else round_to(a, precision) for a in arrs]
        for x, r, n in zip(arrs, rarrs, ("q", "k", "v", "u", "g", "beta", "decay", "logdecay",
                                         "a", "b")):
            if r is not None and not np.isfinite(r).all():
                i = np.unravel_index(np.argmax(~np.isfinite(r)), r.shape)
                raise ValueError("%s: %.17g at %s overflows %s's input format (largest %g), so "
                                 "no binary64 reference of the rounded inputs can run "
                                 "(reference=False runs without one)" % (
                                     n, x[i], _at(i), precision, _L.vla_fmt_max(fmt)))
    o, s_fro, a_fro, S, counts, bad = _trajectory(cfg, arrs)
    out = {"o": o, "s_fro": s_fro, "a_fro": a_fro, "S": S, "counts": counts, "nonfinite": bad,
           "unit_roundoff": _L.vla_fmt_unit_roundoff(_L.vla_prec_storage(cfg.prec))}
    _warn_nonfinite(bad, "the state or read-out of %s in %s" % (model, precision), "nonfinite")
    if reference:
        ref = _Config.from_buffer_copy(cfg)  # the reference of the programs (vla_cli_ref_spec)
        ref.prec = _parse("vla_prec_parse", "f64", "precision")
        ref.mode = _abi.VLA_STRICT
        ref.form, ref.chunk = _abi.VLA_FORM_SEQ, 0
        # without decoding's 16-bit roundings
        ref.cache, ref.cache_rows, ref.cache_round = _abi.VLA_CACHE_OFF, 0, _abi.VLA_CROUND_RN
        ref.decay_bf16, ref.beta_bf16 = 0, 0
        way = lambda n: _parse("vla_track_parse", n, "track")
        if ref.track in (way("cg"), way("cheb")):  # the exact solve that the iteration approximates
            ref.track = way("solve")
        if ref.track in (way("sr"), way("comp")):  # no binary64 twin: the textbook update
            ref.track = way("sm")
        ro, _, _, rS, _, rbad = _trajectory(ref, rarrs)
        _warn_nonfinite(rbad, "the binary64 reference's state or read-out", "nonfinite_ref")
        out["o_relerr"] = np.array([[_relerr(o[h, t], ro[h, t]) for t in range(T)]
                                    for h in range(H)])
        out["s_relerr"] = np.array([_relerr(S[h], rS[h]) for h in range(H)])
        out["o_ref"] = ro
        out["nonfinite_ref"] = rbad
    return out


_L.vla_blocks_new.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(_Config),
                              ctypes.c_long, ctypes.POINTER(_Error)]
_L.vla_blocks_advance.argtypes = [ctypes.c_void_p, ctypes.c_long, ctypes.POINTER(_Arrays), _D,
                                  ctypes.POINTER(_Error)]
_L.vla_blocks_get.argtypes = [ctypes.c_void_p, ctypes.c_int, _D]
_L.vla_blocks_free.argtypes = [ctypes.c_void_p]


class Model:
    """One model whose state lives between calls, for runs driven a block at a time from Python
    (several configurations in lockstep on one stream, a state read between blocks). Its
    arguments are run()'s: model, precision, track, strict, form and the constants (--set
    NAME=VALUE), with d and dv (default d) given; form seq or scan (a chunk's state exists at its
    end only: run() takes the chunk form). step() advances it over the rows of arrays of one
    sequence, q, k, u, a, b (T, d), v, g (T, dv), beta, decay (T,), logdecay (T,) for a scalar
    per token or (T, d) per key channel, by the library's engine (vla_blocks_advance, block steps
    a call), and returns the read-out after each step (T, dv); state() is S (dv, d) now."""

    def __init__(self, model, precision, d, dv=None, track="sm", strict=True, form="seq",
                 block=4096, **constants):
        self.cfg = _configure(model, precision, track, strict, d, d if dv is None else dv,
                              constants)
        _set_form(self.cfg, form)
        why = _Error()
        if _L.vla_form_check(ctypes.byref(self.cfg), ctypes.byref(why)):
            raise ValueError("form %s with model %s: %s" % (
                form, model, _L.vla_error_msg(ctypes.byref(why)).decode()))
        _refuse_unread_settings(self.cfg, constants)
        self._m, self.block = ctypes.c_void_p(), int(block)
        if _L.vla_blocks_new(ctypes.byref(self._m), ctypes.byref(self.cfg), self.block,
                             ctypes.byref(why)):
            raise ValueError(_L.vla_error_msg(ctypes.byref(why)).decode())

    def __del__(self):
        if getattr(self, "_m", None):
            _L.vla_blocks_free(self._m)
            self._m = None

    def step(self, q, k, v, u=None, g=None, beta=None, decay=None, logdecay=None, a=None,
             b=None):
        d, dv = self.cfg.d, self.cfg.dv
        if np.ndim(q) != 2 or np.shape(q)[0] < 1:
            raise ValueError("q: shape %s, expected (T, %d) with T >= 1" % (np.shape(q), d))
        T = np.shape(q)[0]
        one = lambda x, n, dim, **kw: None if x is None else _heads(
            _real(x, n)[None], n, 1, T, dim, **kw)[0]
        q, k, v, u, a, b = one(q, "q", d), one(k, "k", d), one(v, "v", dv), one(u, "u", d), \
            one(a, "a", d), one(b, "b", d)
        g = one(g, "g", dv, lo=0, hi=1)
        beta = one(beta, "beta", None, lo=0, scalar=True)
        decay = one(decay, "decay", None, lo=0, hi=1, scalar=True)
        # gate_map=sigmoid takes raw logits, of either sign (as run())
        lhi = np.inf if self.cfg.gate_map == _abi.VLA_GATE_SIGMOID else 0
        per_channel = logdecay is not None and np.ndim(logdecay) == 2 and np.shape(logdecay)[1] > 1
        lg = one(logdecay, "logdecay", d, hi=lhi) if per_channel else None
        lgs = None if logdecay is None or per_channel else one(logdecay, "logdecay", None, hi=lhi,
                                                               scalar=True)
        o = np.empty((T, dv))
        for s in range(0, T, self.block):  # rows s .. s + n - 1, a block of the engine's steps
            n = min(self.block, T - s)
            pd = lambda x: None if x is None else x[s:s + n].ctypes.data_as(_D)
            x = _Arrays(q=pd(q), k=pd(k), v=pd(v), u=pd(u), g=pd(g), beta=pd(beta),
                        decay=pd(decay), lgs=pd(lgs), lg=pd(lg), a=pd(a), b=pd(b))
            why = _Error()
            if _L.vla_blocks_advance(self._m, n, ctypes.byref(x), pd(o), ctypes.byref(why)):
                raise ValueError(_L.vla_error_msg(ctypes.byref(why)).decode())
        return o

    def state(self):
        S = np.empty((self.cfg.dv, self.cfg.d))
        _L.vla_blocks_get(self._m, _abi.VLA_Q_S, S.ctypes.data_as(_D))
        return S


_GradInput = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_long,
                              ctypes.POINTER(_Input))
_L.vla_grad.argtypes = [ctypes.POINTER(_Config), ctypes.c_long, _GradInput, ctypes.c_void_p, _D,
                        ctypes.POINTER(_Grads)]
_L.vla_grad_check.argtypes = [ctypes.POINTER(_Config), ctypes.POINTER(_Error)]
_L.vla_setting_read.argtypes = [ctypes.POINTER(_Config), ctypes.c_char_p, ctypes.POINTER(_Error)]
_L.vla_model_phi.restype = ctypes.c_uint
_L.vla_model_phi.argtypes = [ctypes.c_int]


def grad(q, k, v, c, model="gdn", precision="f64", beta=None, logdecay=None, a=None, b=None,
         u=None, decay=None, track="sm", form="seq", **constants):
    """The gradients of L = sum_t c_t . o_t (c of v's shape, (heads, T, dv)) with respect to every
    input of every head, the raw inputs as run() takes them, by the library's backward pass
    (vla_grad, docs/math.md section 11) in PRECISION: a dict of numpy arrays dq, dk (heads, T, d),
    dv (heads, T, dv), dbeta (heads, T), dg ((heads, T) for a scalar log-decay, (heads, T, d) per
    key channel), for rwkv7 da, db (heads, T, d), and du (heads, T, d) where u is given (zeros for
    a model that does not read u). Without u, u = k as in run(), and k's part through u is in dk
    (vla1, vla3: dk is then the whole dL/dk).
    The library's dq and dk are with respect to phi(q) and phi(k) where the model's feature map
    takes them (features=own: la, vla3 both, delta q; the column phi of VLA_MODELS); here they are
    multiplied by phi'(x) (1 for x > 0, e^x otherwise; x the input rounded to the policy's input
    format, where the forward takes phi) in binary64, so that every gradient is that of the input
    as given (tools/python/test_grad_fd.py checks each model against finite differences of run()).
    A gradient that is not finite (Inf or NaN) is a RuntimeWarning, as run() warns, and the
    result's nonfinite (heads,) says for each head the latest step (1..T; the backward runs from T
    down, so it is the first met) at which some gradient is not finite, 0 for none.
    The inputs as run() takes them (decay in [0, 1], absent 1: mamba3's dt_t, with no gradient
    of its own); form seq or chunk:C (the chunk backward of the models whose
    gradchunk column is 1 in lib/vlalists.h, lib/recur_gradchunk.h); a model or form without a
    backward is a ValueError with the library's reason."""
    if beta is not None and np.ndim(beta) == 0:
        constants["beta"], beta = beta, None
    q = _heads(q, "q")
    H, T, d = q.shape
    k = _heads(k, "k", H, T, d)
    v = _heads(v, "v", H, T)
    dv = v.shape[2]
    c = _heads(c, "c", H, T, dv)
    beta = None if beta is None else _heads(beta, "beta", H, T, lo=0, scalar=True)
    per_channel = logdecay is not None and np.ndim(logdecay) == 3 and np.shape(logdecay)[2] != 1
    if per_channel:
        logdecay = _heads(logdecay, "logdecay", H, T, d, hi=0)
    elif logdecay is not None:
        logdecay = _heads(logdecay, "logdecay", H, T, hi=0, scalar=True)
    a = None if a is None else _heads(a, "a", H, T, d)
    b = None if b is None else _heads(b, "b", H, T, d)
    decay = None if decay is None else _heads(decay, "decay", H, T, lo=0, hi=1, scalar=True)
    has_u = u is not None
    u = k if u is None else _heads(u, "u", H, T, d)
    cfg = _configure(model, precision, track, True, d, dv, constants)
    _set_form(cfg, form)
    why = _Error()
    if _L.vla_grad_check(ctypes.byref(cfg), ctypes.byref(why)):
        raise ValueError("model %s: %s" % (model, _L.vla_error_msg(ctypes.byref(why)).decode()))
    _refuse_unread_settings(cfg, constants)
    ng = d if per_channel else 1
    out = {"dq": np.zeros((H, T, d)), "dk": np.zeros((H, T, d)), "dv": np.zeros((H, T, dv)),
           "dbeta": np.zeros((H, T)), "dg": np.zeros((H, T, ng)), "du": np.zeros((H, T, d))}
    lr = a is not None or b is not None
    if lr:
        out["da"], out["db"] = np.zeros((H, T, d)), np.zeros((H, T, d))
    pd = lambda x: x.ctypes.data_as(_D)
    for h in range(H):
        keep = []

        def get(ctx, t, inp, h=h):
            x = _Input(q=pd(q[h, t]), k=pd(k[h, t]), v=pd(v[h, t]), u=pd(u[h, t]), g=None,
                       beta=beta[h, t, 0] if beta is not None else np.nan,
                       decay=decay[h, t, 0] if decay is not None else np.nan,
                       lg=pd(logdecay[h, t]) if per_channel else None,
                       a=pd(a[h, t]) if a is not None else None,
                       b=pd(b[h, t]) if b is not None else None,
                       lgs=logdecay[h, t, 0] if logdecay is not None and not per_channel
                       else 0.0)
            keep.append(x)
            inp[0] = x
            return 0
        gr = _Grads(dq=pd(out["dq"][h]), dk=pd(out["dk"][h]), dv=pd(out["dv"][h]),
                    dbeta=pd(out["dbeta"][h]), dg=pd(out["dg"][h]),
                    da=pd(out["da"][h]) if lr else None, db=pd(out["db"][h]) if lr else None,
                    dS_zero=None, du=pd(out["du"][h]))
        ch = np.ascontiguousarray(c[h], dtype=np.float64)
        r = _L.vla_grad(ctypes.byref(cfg), T, _GradInput(get), None, pd(ch), ctypes.byref(gr))
        if r:
            raise ValueError("head %d: vla_grad: %s" % (h, _L.vla_strerror(r).decode()))
    # the chain rule through phi (docs/math.md section 11: the library's dq, dk are of phi(q),
    # phi(k)), phi' at the input as the forward takes it, rounded to the policy's input format
    phi = _L.vla_model_phi(cfg.model) if cfg.features == _abi.VLA_FEAT_OWN else 0
    for bit, x, key in ((_abi.VLA_PHI_Q, q, "dq"), (_abi.VLA_PHI_K, k, "dk")):
        if phi & bit:
            xr = x if _L.vla_prec_io(cfg.prec) == _abi.VLA_FMT_F64 else round_to(x, precision)
            with np.errstate(over="ignore", invalid="ignore"):
                out[key] = out[key] * np.where(xr > 0, 1.0, np.exp(np.minimum(xr, 0)))
    if not has_u:  # u = k: k's part through u joins dk (du is 0 where the model reads no u)
        out["dk"] = out["dk"] + out.pop("du")
    if not per_channel:
        out["dg"] = out["dg"][:, :, 0]
    bad = np.zeros(H, dtype=int)
    names = []
    for key, g in out.items():
        fin = np.isfinite(g.reshape(H, T, -1)).all(axis=2)
        if not fin.all():
            names.append(key)
            last = np.where(fin.all(axis=1), 0, T - np.argmin(fin[:, ::-1], axis=1))
            bad = np.maximum(bad, last)
    out["nonfinite"] = bad
    if names:
        hh = int(np.argmax(bad))
        warnings.warn("vlastab.grad: %s %s not finite (Inf or NaN) in %d of %d heads, first met in "
                      "head %d at step %d (the backward runs from step T down); the arrays carry "
                      "inf or nan there (the result's nonfinite: each head's latest such step, 0 "
                      "for none)" % (", ".join(names), "is" if len(names) == 1 else "are",
                                     np.count_nonzero(bad), H, hh, bad[hh]),
                      RuntimeWarning, stacklevel=2)
    return out


def read_dat(path):
    """A vlastab table: {"meta": {key: value or [values]}, "columns": [...], "runs": [one dict per
    block (run, head): column -> numpy array]}. A column of names ("vla3", "never") stays a list
    of strings; every other column is float (nan as nan). What is not a table as the programs
    write it is a ValueError naming the file and the line: no '# columns:' line or a second one,
    a column named twice, a row before the columns line or with another number of cells than
    there are columns, a byte-order mark, a NUL, text that is not UTF-8; and a path that is not
    a regular file (a FIFO, a device, a folder), which is not read at all."""
    path = os.fspath(path)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # a FIFO does not block
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ValueError("%s: not a regular file (a FIFO, a device or a folder)" %
                         os.fsdecode(path))
    with os.fdopen(fd, "rb") as f:
        data = f.read()
    name = os.fsdecode(path)
    meta, columns, col_line, blocks, cur, blank = {}, None, 0, [], [], 0
    for n, raw in enumerate(data.split(b"\n"), 1):
        where = "%s: line %d" % (name, n)
        try:
            line = raw.decode("utf-8").rstrip("\r")
        except UnicodeDecodeError as e:
            raise ValueError("%s: not UTF-8 text (%s)" % (where, e.reason))
        if "\ufeff" in line or "\0" in line:
            raise ValueError("%s: %s (a table holds neither: save it without)" % (
                where, "a NUL character" if "\0" in line else "a byte-order mark (U+FEFF)"))
        if line.startswith("#"):
            body = line[1:].strip()
            key, sep, val = body.partition(": ")
            if body.partition(":")[0] == "columns":
                if columns is not None:
                    raise ValueError("%s: a second '# columns:' line (the first is line %d)" % (
                        where, col_line))
                columns, col_line = body.partition(":")[2].split(), n
                if not columns:
                    raise ValueError("%s: '# columns:' names no column" % where)
                for j, c in enumerate(columns):
                    if columns.index(c) != j:
                        raise ValueError("%s: column %r is named twice (columns %d and %d)" % (
                            where, c, columns.index(c) + 1, j + 1))
            elif sep:
                meta[key] = meta[key] + [val] if isinstance(meta.get(key), list) else (
                    [meta[key], val] if key in meta else val)
            continue
        if not line.strip():
            blank += 1
            if blank == 2 and cur:  # two blank lines end a block (gnuplot's index)
                blocks.append(cur)
                cur = []
            continue
        blank = 0
        cells = line.split()
        if columns is None:
            raise ValueError("%s: a row before the '# columns:' line" % where)
        if len(cells) != len(columns):
            raise ValueError("%s: %d cells, expected %d (the columns of line %d)" % (
                where, len(cells), len(columns), col_line))
        cur.append(cells)
    if columns is None:
        raise ValueError("%s: no '# columns:' line (not a vlastab table?)" % name)
    if cur:
        blocks.append(cur)
    runs = []
    for b in blocks:
        run = {}
        for j, c in enumerate(columns):
            cells = [row[j] for row in b]
            try:
                run[c] = np.array([float(x) for x in cells])
            except ValueError:
                run[c] = cells
        runs.append(run)
    return {"meta": meta, "columns": columns, "runs": runs}
