"""vlastab from Python and notebooks: a ctypes binding over libvlastab.so (numpy in and out) and a
reader of the programs' .dat tables. run() steps a model over arrays of shape (heads, T, dim) in a
chosen precision, beside a binary64 run of the same rounded inputs, and returns the trajectories
and the measures; read_dat() gives each run (head) of a table its own arrays. The recorder of a
PyTorch model's inputs is vlastab.torch_trace. The math is docs/math.md; the layout docs/trace.md.
"""
import ctypes
import os

import numpy as np

__all__ = ["run", "read_dat", "round_to", "models", "precisions", "tracks", "library"]

# make install writes the library's folder here; in the source tree the build folder is used
_LIBDIR = "@LIBDIR@"


def _load():
    cands = [os.environ.get("VLASTAB_LIB", "")]
    if not _LIBDIR.startswith("@"):
        cands.append(os.path.join(_LIBDIR, "libvlastab.so.0"))
    here = os.path.dirname(os.path.abspath(__file__))
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
    raise OSError("libvlastab.so not found (set VLASTAB_LIB, or make install): " + "; ".join(errs))


library = _load()
_L = library
_D = ctypes.POINTER(ctypes.c_double)


class _Config(ctypes.Structure):
    """vla_config of lib/vlastab.h, field for field"""
    _fields_ = [("model", ctypes.c_int), ("track", ctypes.c_int), ("prec", ctypes.c_int),
                ("mode", ctypes.c_int), ("d", ctypes.c_int), ("dv", ctypes.c_int),
                ("features", ctypes.c_int), ("lambda0", ctypes.c_double),
                ("eps_g", ctypes.c_double), ("stab_eps", ctypes.c_double),
                ("per_eps", ctypes.c_double), ("period", ctypes.c_int),
                ("eps_o", ctypes.c_double), ("clip", ctypes.c_double), ("clamp", ctypes.c_double),
                ("clamp_eps", ctypes.c_double), ("renorm", ctypes.c_double),
                ("beta", ctypes.c_double), ("delta_form", ctypes.c_int), ("nudge", ctypes.c_int),
                ("guard", ctypes.c_int), ("clamp_on", ctypes.c_int), ("normalize", ctypes.c_int),
                ("sr_seed", ctypes.c_uint64), ("keynorm", ctypes.c_int), ("form", ctypes.c_int),
                ("chunk", ctypes.c_int), ("gamma", ctypes.c_double),
                ("solve_k", ctypes.c_int), ("solve_tol", ctypes.c_double)]


class _Input(ctypes.Structure):
    _fields_ = [("q", _D), ("k", _D), ("v", _D), ("u", _D), ("g", _D), ("beta", ctypes.c_double),
                ("decay", ctypes.c_double)]


class _Counts(ctypes.Structure):
    _fields_ = [(n, ctypes.c_long) for n in
                ("guard", "clamp", "clip", "nudge", "zero_norm", "renorm", "steps", "reads",
                 "solves", "solve_iters", "solve_fail", "solve_fail_t", "den_inf", "den_inf_t")]


_L.vla_config_size.restype = ctypes.c_size_t
_L.vla_counts_size.restype = ctypes.c_size_t
for _py, _c in ((_Config, _L.vla_config_size()), (_Counts, _L.vla_counts_size())):
    if ctypes.sizeof(_py) != _c:  # a field added to lib/vlastab.h and not here
        raise ImportError("vlastab: %s is %d bytes here, %d in the library: the binding does not "
                          "match lib/vlastab.h" % (_py.__name__, ctypes.sizeof(_py), _c))
_L.vla_strerror.restype = ctypes.c_char_p
_L.vla_names.restype = ctypes.c_char_p
_L.vla_round_fmt.restype = ctypes.c_double
_L.vla_round_fmt.argtypes = [ctypes.c_int, ctypes.c_double]
_L.vla_prec_storage.restype = ctypes.c_int
_L.vla_fmt_unit_roundoff.restype = ctypes.c_double
_L.vla_model_counts.restype = ctypes.POINTER(_Counts)
_L.vla_model_new.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(_Config)]
_L.vla_model_free.argtypes = [ctypes.c_void_p]
_L.vla_model_step.argtypes = [ctypes.c_void_p, ctypes.POINTER(_Input)]
_L.vla_model_get.argtypes = [ctypes.c_void_p, ctypes.c_int, _D]
_L.vla_model_counts.argtypes = [ctypes.c_void_p]
_L.vla_config_set.argtypes = [ctypes.POINTER(_Config), ctypes.c_char_p, ctypes.c_char_p]
_Q_S, _Q_A, _Q_N, _Q_O = 0, 1, 2, 3  # vla_quantity


def _names(which):
    return _L.vla_names(which).decode().split(", ")


def models():
    """the library's models, in its list's order"""
    return _names(2)


def precisions():
    return _names(1)


def tracks():
    return _names(3)


def _parse(fn, name, kind):
    out = ctypes.c_int()
    if getattr(_L, fn)(name.encode(), ctypes.byref(out)):
        raise ValueError("unknown %s %r (%s)" % (kind, name, ", ".join(
            {"model": models, "precision": precisions, "track": tracks}[kind]())))
    return out.value


def round_to(x, precision):
    """x rounded once to the storage format of a precision policy, as the programs round inputs"""
    fmt = _L.vla_prec_storage(_parse("vla_prec_parse", precision, "precision"))
    x = np.asarray(x, dtype=np.float64)
    return np.vectorize(lambda y: _L.vla_round_fmt(fmt, y), otypes=[np.float64])(x)


def _heads(a, name, H=None, T=None, dim=None):
    a = np.ascontiguousarray(a, dtype=np.float64)
    if a.ndim == 2 and dim == 1:
        a = a[:, :, None]
    if a.ndim != 3 or (H is not None and a.shape[:2] != (H, T)) or (dim and a.shape[2] != dim):
        raise ValueError("%s: shape %s, expected (heads, T, dim)%s" % (
            name, a.shape, "" if H is None else " = (%d, %d, %s)" % (H, T, dim or "d")))
    if not np.all(np.isfinite(a)):
        raise ValueError("%s: not every value is finite" % name)
    return a


def _trajectory(cfg, arrs):
    """one configuration over every head: the read-outs and the norms after every step"""
    q, k, v, u, g, beta, decay = arrs
    H, T, d = q.shape
    dv = v.shape[2]
    o = np.empty((H, T, dv))
    s_fro = np.empty((H, T))
    a_fro = np.full((H, T), np.nan)
    S = np.empty(d * dv)
    S_all = np.empty((H, dv, d))
    counts = []
    hasA = _L.vla_model_has_A(cfg.model)
    A = np.empty(d * d)
    pd = lambda x: x.ctypes.data_as(_D)
    for h in range(H):
        m = ctypes.c_void_p()
        r = _L.vla_model_new(ctypes.byref(m), ctypes.byref(cfg))
        if r:
            raise ValueError("vla_model_new: " + _L.vla_strerror(r).decode())
        try:
            for t in range(T):  # the library steps; Python only hands it the inputs
                inp = _Input(pd(q[h, t]), pd(k[h, t]), pd(v[h, t]), pd(u[h, t]),
                             pd(g[h, t]) if g is not None else None,
                             beta[h, t, 0] if beta is not None else np.nan,
                             decay[h, t, 0] if decay is not None else np.nan)
                r = _L.vla_model_step(m, ctypes.byref(inp))
                if r:
                    raise ValueError("head %d, step %d: %s" % (h, t + 1,
                                                               _L.vla_strerror(r).decode()))
                _L.vla_model_get(m, _Q_O, pd(o[h, t]))
                _L.vla_model_get(m, _Q_S, pd(S))
                s_fro[h, t] = np.linalg.norm(S)
                if hasA:
                    _L.vla_model_get(m, _Q_A, pd(A))
                    a_fro[h, t] = np.linalg.norm(A)
            S_all[h] = S.reshape(dv, d)
            c = _L.vla_model_counts(m).contents
            counts.append({n: getattr(c, n) for n, _ in _Counts._fields_})
        finally:
            _L.vla_model_free(m)
    return o, s_fro, a_fro, S_all, counts


def run(q, k, v, model="vla3", precision="f32", u=None, g=None, beta=None, decay=None,
        track="sm", strict=True, reference=True, **constants):
    """Runs MODEL in PRECISION over every head of arrays shaped (heads, T, d) (v, g: dv; beta,
    decay: (heads, T)), raw projections as in docs/trace.md (u absent: u = k). constants: any
    --set NAME=VALUE (lambda0=0.1, nudge="off", ...). With reference, a binary64 run of the same
    inputs rounded to the policy's storage format runs beside it. Returns a dict of numpy arrays:
    o (heads, T, dv), s_fro, a_fro (heads, T; a_fro nan for la and delta), S (heads, dv, d) at the
    end, counts (a dict per head), and with reference o_relerr (every step) and s_relerr (the end)
    against binary64, and unit_roundoff of the policy's storage format."""
    q = _heads(q, "q")
    H, T, d = q.shape
    k = _heads(k, "k", H, T, d)
    v = _heads(v, "v", H, T)
    u = k if u is None else _heads(u, "u", H, T, d)
    g = None if g is None else _heads(g, "g", H, T, v.shape[2])
    beta = None if beta is None else _heads(beta, "beta", H, T, 1)
    decay = None if decay is None else _heads(decay, "decay", H, T, 1)
    cfg = _Config()
    _L.vla_config_default(ctypes.byref(cfg), _parse("vla_model_parse", model, "model"), d)
    cfg.dv = v.shape[2]
    cfg.prec = _parse("vla_prec_parse", precision, "precision")
    cfg.track = _parse("vla_track_parse", track, "track")
    cfg.mode = 0 if strict else 1
    for name, val in constants.items():
        if _L.vla_config_set(ctypes.byref(cfg), name.encode(), str(val).encode()):
            raise ValueError("unknown constant or bad value: %s=%s" % (name, val))
    r = _L.vla_config_check(ctypes.byref(cfg))
    if r:
        raise ValueError("the configuration is not valid: " + _L.vla_strerror(r).decode())
    arrs = [q, k, v, u, g, beta, decay]
    o, s_fro, a_fro, S, counts = _trajectory(cfg, arrs)
    st = _L.vla_prec_storage(cfg.prec)
    out = {"o": o, "s_fro": s_fro, "a_fro": a_fro, "S": S, "counts": counts,
           "unit_roundoff": _L.vla_fmt_unit_roundoff(st)}
    if reference:
        ref = _Config.from_buffer_copy(cfg)
        ref.prec = _parse("vla_prec_parse", "f64", "precision")
        ref.mode = 0
        if precision != "f64":
            arrs = [None if a is None else round_to(a, precision) for a in arrs]
        ro, _, _, rS, _ = _trajectory(ref, arrs)
        num = np.linalg.norm(o - ro, axis=2)
        den = np.linalg.norm(ro, axis=2)
        with np.errstate(divide="ignore", invalid="ignore"):
            out["o_relerr"] = np.where(num == 0, 0.0, num / den)
        out["s_relerr"] = np.array([np.linalg.norm(S[h] - rS[h]) / np.linalg.norm(rS[h])
                                    for h in range(H)])
        out["o_ref"] = ro
    return out


def read_dat(path):
    """A vlastab table: {"meta": {key: value or [values]}, "columns": [...], "runs": [one dict per
    block (run, head): column -> numpy array]}. A column of names ("vla3", "never") stays a list
    of strings; every other column is float (nan as nan)."""
    meta, columns, blocks, cur, blank = {}, [], [], [], 0
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("#"):
                key, sep, val = line[1:].strip().partition(": ")
                if key == "columns":
                    columns = val.split()
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
            cur.append(line.split())
    if cur:
        blocks.append(cur)
    runs = []
    for b in blocks:
        run = {}
        for j, name in enumerate(columns):
            cells = [row[j] if j < len(row) else "nan" for row in b]
            try:
                run[name] = np.array([float(c) for c in cells])
            except ValueError:
                run[name] = cells
        runs.append(run)
    return {"meta": meta, "columns": columns, "runs": runs}
