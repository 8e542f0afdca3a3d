"""Record a PyTorch model's attention inputs as a vlastab trace (docs/trace.md): forward hooks on
the submodules that produce q, k, v (and optionally u, g, beta, decay, logdecay, a, b) keep one
sequence's outputs, capture() keeps values a layer computes inline, and save() writes them per
layer as (heads, T, dim) float32 .npy files, raw, before any feature map, in C order, with the
model that made them in model.txt: the folder `vla-check trace:DIR` reads.

    from vlastab.torch_trace import TraceRecorder
    rec = TraceRecorder(model, heads=4, layers={
        "layer0": {"q": "blocks.0.attn.q_proj", "k": "blocks.0.attn.k_proj",
                   "v": "blocks.0.attn.v_proj", "beta": "blocks.0.attn.b_proj"}})
    with rec:
        model(tokens)            # one sequence (a batch: its first, or batch_index)
    rec.save("mytrace", model="delta")   # mytrace/layer0/q.npy, ..., model.txt

A projection's output of shape (B, T, H dim) or (T, H dim) becomes (H, T, dim); beta and decay,
one number per head and step, (B, T, H) or (T, H), become (H, T); a logdecay of H numbers a step
is one per head (H, T), of H d numbers one per key channel (H, T, d). Gates and rates are taken as
the module gives them: pass the submodule whose output is after the sigmoid.

A value that a layer computes functionally (a decay from its parameters, a rate after a sigmoid)
has no submodule to hook: the layer's forward calls capture(role, tensor) on it, which records it
for every recorder inside its with block (and does nothing outside one) and returns the tensor:

    from vlastab.torch_trace import capture
    beta = capture("beta", self.b_proj(x).sigmoid())         # (B, T, H)
    capture("logdecay", -self.A_log.exp() * F.softplus(self.a_proj(x) + self.dt_bias))

capture() takes the heads split off, as fla's kernels take them: (B, T, H, dim) for a vector per
head and step, (B, T, H) for one number (beta, decay, a scalar logdecay); layer= names the layer
when the recorder has several. A layer's q, k and v may come from hooks, capture() or both mixed,
but each role from one of them.

save() checks every array as the trace loader will (every value finite, g and decay in [0, 1],
beta >= 0, logdecay <= 0, the shapes of one trace) and the model and its settings as the programs
check --model and --set, before it writes anything, and refuses a folder that holds a trace file
this recorder did not record (the programs would read it beside the new ones; a model.txt too
when no model is given). It never writes through a symbolic link: each file is written to a
temporary beside it and renamed over it, so a link in its place (tools/decay-trace.py once linked
q, k, v to another trace) is replaced, not its target; a layer's folder that is a link is refused.
A layer name is one folder name: not empty, . or .., and without '/', NUL or control characters.
"""
import os
import re
import secrets
import warnings

import numpy as np

ROLES = ("q", "k", "v", "u", "g", "beta", "decay", "logdecay", "a", "b")
SCALAR = ("beta", "decay")  # one number per head and step (logdecay: one, or one per channel)
RANGE = {"g": (0, 1), "beta": (0, np.inf), "decay": (0, 1),
         "logdecay": (-np.inf, 0)}  # the trace loader's, lib/stream.c
_active = []  # the recorders inside their with block: capture() records into them


def capture(role, tensor, layer=None):
    """Records tensor as ROLE (q, k, v, u, g, beta, decay, logdecay, a, b) of the layer into every
    TraceRecorder inside its with block, and returns tensor unchanged; nothing outside one.
    tensor: (B, T, H, dim), or (B, T, H) for one number per head and step."""
    for rec in _active:
        rec.capture(role, tensor, layer)
    return tensor


def _check_layer(layer):
    if not isinstance(layer, str):
        raise TypeError("layer %r: a layer name is a string" % (layer,))
    if layer in ("", ".", "..") or "/" in layer or any(ord(c) < 32 or ord(c) == 127 for c in layer):
        raise ValueError("layer %r: a layer name is one folder name under save()'s folder: not "
                         "empty, . or .., without '/', NUL or control characters" % layer)


def _write(path, data):
    """data (an array, or bytes) to PATH without following a link there: a temporary beside it,
    renamed over it"""
    d, base = os.path.split(path)
    tmp = os.path.join(d, ".%s.%s.tmp" % (base, secrets.token_hex(6)))
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            if isinstance(data, bytes):
                f.write(data)
            else:
                np.save(f, data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)  # replaces a link itself, never its target
    except BaseException:
        os.unlink(tmp)
        raise


def _numpy(x, what):
    if not hasattr(x, "detach") or x.is_complex():
        raise TypeError("%s: a %s, not a real tensor" % (what, getattr(x, "dtype",
                                                                       type(x).__name__)))
    return x.detach().to("cpu").float().numpy()


class TraceRecorder:
    def __init__(self, model=None, heads=None, layers=None, batch_index=0):
        if isinstance(heads, bool) or not isinstance(heads, int):
            raise TypeError("heads=%r: the number of heads is an integer >= 1" % (heads,))
        if heads < 1:
            raise ValueError("heads=%r: the number of heads is an integer >= 1" % (heads,))
        if isinstance(batch_index, bool) or not isinstance(batch_index, int):
            raise TypeError("batch_index=%r: an integer" % (batch_index,))
        if layers is None:  # one layer, every role from capture()
            layers = {"layer0": {}}
        if not isinstance(layers, dict) or not layers:
            raise ValueError("layers: a dict of at least one layer {name: {role: submodule}}")
        for layer, roles in layers.items():
            _check_layer(layer)
            if not isinstance(roles, dict):
                raise TypeError("layer %s: roles are a dict {role: submodule name}" % layer)
            unknown = [r for r in roles if r not in ROLES]
            if unknown:
                raise ValueError("layer %s: unknown role %s (%s)" % (layer, unknown[0],
                                                                     ", ".join(ROLES)))
            for role, name in roles.items():
                if not isinstance(name, str):
                    raise TypeError("%s/%s: %r is not a submodule name" % (layer, role, name))
            if roles and model is None:
                raise ValueError("layer %s: hooks on submodules need the model" % layer)
        self.model, self.heads, self.layers, self.batch = model, heads, layers, batch_index
        self.data, self.handles = {}, []

    def _keep(self, layer, role, x, how):
        if (layer, role) in self.data:
            warnings.warn("%s/%s: the %s again; the latest replaces the one recorded (a "
                          "recorder keeps one sequence)" % (layer, role, how))
        self.data[(layer, role)] = np.ascontiguousarray(x, dtype=np.float32)

    def _batch(self, x, what):
        if not -x.shape[0] <= self.batch < x.shape[0]:
            raise ValueError("%s: batch_index %d is outside the batch of %d" % (
                what, self.batch, x.shape[0]))
        return x[self.batch]

    def _hook(self, layer, role):
        def hook(module, args, output):
            what = "%s/%s" % (layer, role)
            x = _numpy(output[0] if isinstance(output, tuple) else output,
                       what + ": the module's output")
            shape = x.shape
            if x.ndim == 3:  # (B, T, features)
                x = self._batch(x, what)
            if x.ndim != 2:
                raise ValueError("%s: output of shape %s, expected (B, T, features) or "
                                 "(T, features)" % (what, shape))
            T, F = x.shape
            if F % self.heads:
                raise ValueError("%s: %d features do not split into %d heads" % (
                    what, F, self.heads))
            x = x.reshape(T, self.heads, F // self.heads).transpose(1, 0, 2)
            if role in SCALAR or (role == "logdecay" and x.shape[2] == 1):
                if x.shape[2] != 1:
                    raise ValueError("%s: %d numbers per head and step, expected 1" % (
                        what, x.shape[2]))
                x = x[:, :, 0]
            self._keep(layer, role, x, "module ran")
        return hook

    def capture(self, role, tensor, layer=None):
        """Records tensor as ROLE of LAYER (the recorder's one layer by default): (B, T, H, dim),
        or (B, T, H) for one number per head and step; returns tensor."""
        if layer is None:
            if len(self.layers) > 1:
                raise ValueError("capture(%r): the recorder has layers %s: say which (layer=...)"
                                 % (role, ", ".join(self.layers)))
            layer = next(iter(self.layers))
        if layer not in self.layers:
            raise ValueError("capture(%r, layer=%r): no such layer (%s)" % (
                role, layer, ", ".join(self.layers)))
        what = "%s/%s" % (layer, role)
        if role not in ROLES:
            raise ValueError("%s: unknown role %s (%s)" % (what, role, ", ".join(ROLES)))
        if role in self.layers[layer]:
            raise ValueError("%s: recorded by the hook on %s already: one source a role" % (
                what, self.layers[layer][role]))
        x = _numpy(tensor, "capture " + what)
        one = role in SCALAR or (role == "logdecay" and x.ndim == 3)
        if x.ndim != (3 if one else 4) or x.shape[2] != self.heads:
            raise ValueError("capture %s: shape %s, expected %s: the heads split off, (B, T, "
                             "H, dim) for a vector, (B, T, H) for one number per head and step"
                             % (what, tuple(x.shape), "(B, T, %d)" % self.heads if role in SCALAR
                                else "(B, T, %d, dim)" % self.heads if role != "logdecay" else
                                "(B, T, %d) or (B, T, %d, d)" % (self.heads, self.heads)))
        x = self._batch(x, "capture " + what)
        self._keep(layer, role, x.swapaxes(0, 1), "value was captured")
        return tensor

    def __enter__(self):
        for layer, roles in self.layers.items():
            for role, name in roles.items():
                try:
                    mod = self.model.get_submodule(name)
                except AttributeError as e:
                    self.__exit__()
                    raise ValueError("%s/%s: no submodule %r in the model (%s)" % (
                        layer, role, name, e))
                self.handles.append(mod.register_forward_hook(self._hook(layer, role)))
        _active.append(self)
        return self

    def __exit__(self, *exc):
        for h in self.handles:
            h.remove()
        self.handles = []
        if self in _active:
            _active.remove(self)
        return False

    def _roles(self, layer):
        """the layer's roles: its hooks' and what was captured"""
        return list(self.layers[layer]) + [r for r in ROLES if (layer, r) in self.data and
                                           r not in self.layers[layer]]

    def _check(self, layer, d, model, s0=False, cu=False):
        """the layer's arrays as the trace loader will read them from folder d (s0: with S0.npy,
        cu: with cu_seqlens.npy)"""
        roles = self._roles(layer)
        for role in roles:
            if (layer, role) not in self.data:
                raise RuntimeError("%s/%s: no output recorded (run the model inside the "
                                   "recorder's with block)" % (layer, role))
        missing = [r for r in ("q", "k", "v") if r not in roles]
        if missing:
            raise RuntimeError("%s: no %s recorded (a trace needs q, k and v: from hooks or "
                               "capture())" % (layer, ", ".join(missing)))
        q, v = self.data[(layer, "q")], self.data[(layer, "v")]
        for role in roles:
            a, path = self.data[(layer, role)], os.path.join(d, role + ".npy")
            want = q.shape[:2] + ((v.shape[2],) if role in ("v", "g") else () if role in SCALAR
                                  or (role == "logdecay" and a.ndim == 2) else (q.shape[2],))
            if 0 in a.shape:
                raise ValueError("%s: shape %s has no steps or no features" % (path, a.shape))
            if a.shape != want:
                raise ValueError("%s: shape %s, expected %s (as q.npy and v.npy)" % (
                    path, a.shape, want))
            lo, hi = RANGE.get(role, (-np.inf, np.inf))
            bad = ~(np.isfinite(a) & (a >= lo) & (a <= hi))
            if bad.any():
                i = np.unravel_index(np.argmax(bad), a.shape)
                x, at = a[i], "[%s]" % ", ".join(str(int(j)) for j in i)
                if np.isnan(x):
                    raise ValueError("%s: NaN at %s" % (path, at))
                if np.isinf(x):
                    raise ValueError("%s: Inf at %s (in the module's output, or beyond float32's "
                                     "largest, 3.4e38)" % (path, at))
                raise ValueError("%s: %.17g at %s is outside [%g, %g]" % (path, x, at, lo, hi))
        for name in [r + ".npy" for r in ROLES] + ["model.txt", "S0.npy", "cu_seqlens.npy"]:
            path = os.path.join(d, name)
            if name[:-4] not in roles and (name != "model.txt" or model is None) and \
                    (name != "S0.npy" or not s0) and (name != "cu_seqlens.npy" or not cu) and \
                    os.path.lexists(path):
                raise ValueError("%s: a trace file this recorder did not record (the programs "
                                 "would read it with the new ones): remove it, or save elsewhere"
                                 % path)
        return q.shape[2], v.shape[2]

    def _model_txt(self, model, settings, d, dv):
        """model.txt's text (docs/trace.md), its model and settings checked as the programs check
        --model and --set"""
        from . import _configure, _setting_text  # (the library, loaded by vlastab)
        if settings is not None and not isinstance(settings, dict):
            raise TypeError("settings=%r: a dict {name: value}" % (settings,))
        lines = ["# the model that made this trace and its settings (vlastab, docs/trace.md)",
                 "model %s" % model]
        for name, val in (settings or {}).items():
            text = _setting_text(name, val)
            if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_]+", name) or \
                    re.search(r"[\s\x00-\x1f\x7f]", text):
                raise ValueError("settings: %r=%r: a name of letters, digits and _, a value "
                                 "without blanks, line breaks or control characters (model.txt "
                                 "holds one setting a line)" % (name, text))
            lines.append("set %s=%s" % (name, text))
        _configure(model, "f64", "sm", True, d, dv, dict(settings or {}))
        return ("\n".join(lines) + "\n").encode()

    def save(self, folder, model=None, settings=None, initial_state=None, state_layout="kv",
             cu_seqlens=None):
        """One folder per layer under FOLDER (FOLDER itself with one layer); returns the folders.
        model: the vlastab model that the layer computes (gdn, mamba2, ...), written with
        settings ({"scale": 0.125, "qknorm": False}: --set NAME=VALUE) into each folder's
        model.txt, which the programs take the model from. initial_state (one layer): each head's
        state before the first token, written as S0.npy (heads, dv, d): fla's initial_state
        (heads, d, dv), or (1, heads, d, dv), with state_layout "kv"; (heads, dv, d) with "vk".
        cu_seqlens (one layer): the recorded T steps are N sequences packed, fla's varlen call
        (0 = c_0 < c_1 < ... < c_N = T), written as cu_seqlens.npy (int64); initial_state is then
        each sequence's, (N, heads, d, dv) ("kv") or (N, heads, dv, d) ("vk"), written as S0.npy
        (N, heads, dv, d). Checks everything before it writes anything; writes no file through a
        link."""
        folder = os.fspath(folder)
        if model is None and settings:
            raise ValueError("settings=%r without model=: they are a model's" % (settings,))
        if initial_state is not None and len(self.layers) != 1:
            raise ValueError("initial_state: one layer's (this recorder has %d)" % len(self.layers))
        if cu_seqlens is not None and len(self.layers) != 1:
            raise ValueError("cu_seqlens: one layer's (this recorder has %d)" % len(self.layers))
        dirs = {layer: folder if len(self.layers) == 1 else os.path.join(folder, layer)
                for layer in self.layers}
        text = {}
        for layer in self.layers:
            if os.path.islink(dirs[layer]) and dirs[layer] != folder:
                raise ValueError("%s: a symbolic link (to %s): save() writes no file through a "
                                 "link; remove it, or save elsewhere" % (
                                     dirs[layer], os.readlink(dirs[layer])))
            d, dv = self._check(layer, dirs[layer], model, initial_state is not None,
                                cu_seqlens is not None)
            if model is not None:
                text[layer] = self._model_txt(model, settings, d, dv)
            cu = None if cu_seqlens is None else self._cu_seqlens(cu_seqlens, layer)
            if initial_state is not None:
                s0 = self._initial_state(initial_state, state_layout, layer, d, dv,
                                         1 if cu is None else len(cu) - 1)
        for layer in self.layers:
            os.makedirs(dirs[layer], exist_ok=True)
            for role in self._roles(layer):
                _write(os.path.join(dirs[layer], role + ".npy"), self.data[(layer, role)])
            if model is not None:
                _write(os.path.join(dirs[layer], "model.txt"), text[layer])
            if initial_state is not None:
                _write(os.path.join(dirs[layer], "S0.npy"), s0)
            if cu is not None:
                _write(os.path.join(dirs[layer], "cu_seqlens.npy"), cu)
        return list(dirs.values())

    def _cu_seqlens(self, cu, layer):
        """cu_seqlens.npy's array (int64) from fla's cu_seqlens (a tensor or a sequence of
        integers): 0, then each sequence's end, strictly increasing, the last the recorded T"""
        a = cu.detach().cpu().numpy() if hasattr(cu, "detach") else np.asarray(cu)
        T = self.data[(layer, "q")].shape[1]
        if a.ndim != 1 or a.size < 2 or not (np.issubdtype(a.dtype, np.integer) or (
                np.issubdtype(a.dtype, np.floating) and np.all(a == np.round(a)))):
            raise ValueError("cu_seqlens: %s %s, expected N + 1 integers: 0, then each packed "
                             "sequence's end (fla's cu_seqlens)" % (a.dtype, tuple(a.shape)))
        a = a.astype(np.int64)
        if a[0] != 0 or (np.diff(a) <= 0).any() or a[-1] != T:
            raise ValueError("cu_seqlens=%s: 0, then each sequence's end, strictly increasing, "
                             "the last the %d steps recorded" % (a.tolist(), T))
        return np.ascontiguousarray(a)

    def _initial_state(self, h0, layout, layer, d, dv, nseq=1):
        """S0.npy's array (heads, dv, d) from h0 in layout "kv" ((heads, d, dv), or with a batch
        of 1 before) or "vk" ((heads, dv, d)); float64 from float64, float32 otherwise (bfloat16 and
        float16 exactly). nseq > 1 packed sequences: (nseq, heads, dv, d), a row each"""
        if layout not in ("kv", "vk"):
            raise ValueError("state_layout=%r: 'kv' (fla's h, (heads, d, dv)) or 'vk' ((heads, dv, "
                             "d))" % (layout,))
        heads = self.data[(layer, "q")].shape[0]
        a = h0.detach().cpu() if hasattr(h0, "detach") else h0
        a = (a.double() if str(a.dtype) == "torch.float64" else a.float()).numpy() \
            if hasattr(a, "numpy") and not isinstance(a, np.ndarray) else np.asarray(a)
        if a.ndim == 4 and a.shape[0] == 1 and nseq == 1:
            a = a[0]
        want = ((nseq,) if nseq > 1 else ()) + ((heads, d, dv) if layout == "kv" else
                                                (heads, dv, d))
        if a.shape != want:
            raise ValueError("initial_state: shape %s, expected %s for state_layout=%r ((%sheads, "
                             "%s) of this trace's %d heads)" % (
                                 tuple(a.shape), want, layout, "N, " if nseq > 1 else "",
                                 "d, dv" if layout == "kv" else "dv, d", heads))
        a = a.astype(np.float64 if a.dtype == np.float64 else np.float32)
        if not np.isfinite(a).all():
            i = np.unravel_index(np.argmax(~np.isfinite(a)), a.shape)
            raise ValueError("initial_state: %s at [%s]" % (
                "NaN" if np.isnan(a[i]) else "Inf", ", ".join(str(int(j)) for j in i)))
        return np.ascontiguousarray(np.swapaxes(a, -1, -2) if layout == "kv" else a)
