"""Record a PyTorch model's attention inputs as a vlastab trace (docs/trace.md): forward hooks on
the submodules that produce q, k, v (and optionally u, g, beta, decay) keep one sequence's outputs,
and save() writes them per layer as (heads, T, dim) float32 .npy files, raw, before any feature
map, in C order: the folder `vla-check trace:DIR` reads.

    from vlastab.torch_trace import TraceRecorder
    rec = TraceRecorder(model, heads=4, layers={
        "layer0": {"q": "blocks.0.attn.q_proj", "k": "blocks.0.attn.k_proj",
                   "v": "blocks.0.attn.v_proj", "beta": "blocks.0.attn.b_proj"}})
    with rec:
        model(tokens)            # one sequence (a batch: its first, or batch_index)
    rec.save("mytrace")          # mytrace/layer0/q.npy, ...; then: vla-check trace:mytrace/layer0

A projection's output of shape (B, T, H dim) or (T, H dim) becomes (H, T, dim); beta and decay,
one number per head and step, (B, T, H) or (T, H), become (H, T). gates and rates are taken as
the module gives them: pass the submodule whose output is after the sigmoid.

save() checks every array as the trace loader will (every value finite, g and decay in [0, 1],
beta >= 0, the shapes of one trace) before it writes anything, and refuses a folder that holds a
trace file this recorder did not record (the programs would read it beside the new ones). It
never writes through a symbolic link: each file is written to a temporary beside it and renamed
over it, so a link in its place (tools/decay-trace.py once linked q, k, v to another trace) is
replaced, not its target; a layer's folder that is a link is refused. A layer name is one folder
name: not empty, . or .., and without '/', NUL or control characters.
"""
import os
import secrets
import warnings

import numpy as np

ROLES = ("q", "k", "v", "u", "g", "beta", "decay")
SCALAR = ("beta", "decay")  # one number per head and step
RANGE = {"g": (0, 1), "beta": (0, np.inf), "decay": (0, 1)}  # the trace loader's, lib/stream.c


def _check_layer(layer):
    if not isinstance(layer, str):
        raise TypeError("layer %r: a layer name is a string" % (layer,))
    if layer in ("", ".", "..") or "/" in layer or any(ord(c) < 32 or ord(c) == 127 for c in layer):
        raise ValueError("layer %r: a layer name is one folder name under save()'s folder: not "
                         "empty, . or .., without '/', NUL or control characters" % layer)


def _write(path, arr):
    """np.save to PATH without following a link there: a temporary beside it, renamed over it"""
    d, base = os.path.split(path)
    tmp = os.path.join(d, ".%s.%s.tmp" % (base, secrets.token_hex(6)))
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            np.save(f, arr)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)  # replaces a link itself, never its target
    except BaseException:
        os.unlink(tmp)
        raise


class TraceRecorder:
    def __init__(self, model, heads, layers, batch_index=0):
        if isinstance(heads, bool) or not isinstance(heads, int):
            raise TypeError("heads=%r: the number of heads is an integer >= 1" % (heads,))
        if heads < 1:
            raise ValueError("heads=%r: the number of heads is an integer >= 1" % (heads,))
        if isinstance(batch_index, bool) or not isinstance(batch_index, int):
            raise TypeError("batch_index=%r: an integer" % (batch_index,))
        if not isinstance(layers, dict) or not layers:
            raise ValueError("layers: a dict of at least one layer {name: {role: submodule}}")
        for layer, roles in layers.items():
            _check_layer(layer)
            if not isinstance(roles, dict):
                raise TypeError("layer %s: roles are a dict {role: submodule name}" % layer)
            missing = [r for r in ("q", "k", "v") if r not in roles]
            unknown = [r for r in roles if r not in ROLES]
            if missing or unknown:
                raise ValueError("layer %s: %s" % (layer, "needs q, k and v" if missing else
                                                   "unknown role %s (%s)" % (unknown[0],
                                                                             ", ".join(ROLES))))
            for role, name in roles.items():
                if not isinstance(name, str):
                    raise TypeError("%s/%s: %r is not a submodule name" % (layer, role, name))
        self.model, self.heads, self.layers, self.batch = model, heads, layers, batch_index
        self.data, self.handles = {}, []

    def _hook(self, layer, role):
        def hook(module, args, output):
            x = output[0] if isinstance(output, tuple) else output
            if not hasattr(x, "detach") or x.is_complex():
                raise TypeError("%s/%s: the module's output is a %s, not a real tensor" % (
                    layer, role, getattr(x, "dtype", type(x).__name__)))
            shape = tuple(x.shape)
            x = x.detach().to("cpu").float().numpy()
            if x.ndim == 3:  # (B, T, features)
                if not -x.shape[0] <= self.batch < x.shape[0]:
                    raise ValueError("%s/%s: batch_index %d is outside the batch of %d" % (
                        layer, role, self.batch, x.shape[0]))
                x = x[self.batch]
            if x.ndim != 2:
                raise ValueError("%s/%s: output of shape %s, expected (B, T, features) or "
                                 "(T, features)" % (layer, role, shape))
            T, F = x.shape
            if F % self.heads:
                raise ValueError("%s/%s: %d features do not split into %d heads" % (
                    layer, role, F, self.heads))
            x = x.reshape(T, self.heads, F // self.heads).transpose(1, 0, 2)
            if role in SCALAR:
                if x.shape[2] != 1:
                    raise ValueError("%s/%s: %d numbers per head and step, expected 1" % (
                        layer, role, x.shape[2]))
                x = x[:, :, 0]
            if (layer, role) in self.data:
                warnings.warn("%s/%s: the module ran again; its latest output replaces the one "
                              "recorded (a recorder keeps one sequence)" % (layer, role))
            self.data[(layer, role)] = np.ascontiguousarray(x, dtype=np.float32)
        return hook

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
        return self

    def __exit__(self, *exc):
        for h in self.handles:
            h.remove()
        self.handles = []
        return False

    def _check(self, layer, roles, d):
        """the layer's arrays as the trace loader will read them from folder d"""
        for role in roles:
            if (layer, role) not in self.data:
                raise RuntimeError("%s/%s: no output recorded (run the model inside the "
                                   "recorder's with block)" % (layer, role))
        q, v = self.data[(layer, "q")], self.data[(layer, "v")]
        for role in roles:
            a, path = self.data[(layer, role)], os.path.join(d, role + ".npy")
            want = q.shape[:2] + ((v.shape[2],) if role in ("v", "g") else () if role in SCALAR
                                  else (q.shape[2],))
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
        for role in ROLES:
            path = os.path.join(d, role + ".npy")
            if role not in roles and os.path.lexists(path):
                raise ValueError("%s: a trace file this recorder did not record (the programs "
                                 "would read it with the new ones): remove it, or save elsewhere"
                                 % path)

    def save(self, folder):
        """one folder per layer under FOLDER (FOLDER itself with one layer); returns the folders.
        Checks everything before it writes anything; writes no file through a link."""
        folder = os.fspath(folder)
        dirs = {layer: folder if len(self.layers) == 1 else os.path.join(folder, layer)
                for layer in self.layers}
        for layer, roles in self.layers.items():
            if os.path.islink(dirs[layer]) and dirs[layer] != folder:
                raise ValueError("%s: a symbolic link (to %s): save() writes no file through a "
                                 "link; remove it, or save elsewhere" % (
                                     dirs[layer], os.readlink(dirs[layer])))
            self._check(layer, roles, dirs[layer])
        for layer, roles in self.layers.items():
            os.makedirs(dirs[layer], exist_ok=True)
            for role in roles:
                _write(os.path.join(dirs[layer], role + ".npy"), self.data[(layer, role)])
        return list(dirs.values())
