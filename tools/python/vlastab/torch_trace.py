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
"""
import os

import numpy as np

ROLES = ("q", "k", "v", "u", "g", "beta", "decay")
SCALAR = ("beta", "decay")  # one number per head and step


class TraceRecorder:
    def __init__(self, model, heads, layers, batch_index=0):
        for layer, roles in layers.items():
            missing = [r for r in ("q", "k", "v") if r not in roles]
            unknown = [r for r in roles if r not in ROLES]
            if missing or unknown:
                raise ValueError("layer %s: %s" % (layer, "needs q, k and v" if missing else
                                                   "unknown role %s (%s)" % (unknown[0],
                                                                             ", ".join(ROLES))))
        self.model, self.heads, self.layers, self.batch = model, heads, layers, batch_index
        self.data, self.handles = {}, []

    def _hook(self, layer, role):
        def hook(module, args, output):
            x = output[0] if isinstance(output, tuple) else output
            x = x.detach().to("cpu").float().numpy()
            if x.ndim == 3:  # (B, T, features)
                x = x[self.batch]
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
            self.data[(layer, role)] = np.ascontiguousarray(x, dtype=np.float32)
        return hook

    def __enter__(self):
        for layer, roles in self.layers.items():
            for role, name in roles.items():
                mod = self.model.get_submodule(name)
                self.handles.append(mod.register_forward_hook(self._hook(layer, role)))
        return self

    def __exit__(self, *exc):
        for h in self.handles:
            h.remove()
        self.handles = []
        return False

    def save(self, folder):
        """one folder per layer under FOLDER (FOLDER itself with one layer); returns the folders"""
        out = []
        for layer, roles in self.layers.items():
            d = folder if len(self.layers) == 1 else os.path.join(folder, layer)
            os.makedirs(d, exist_ok=True)
            for role in roles:
                if (layer, role) not in self.data:
                    raise RuntimeError("%s/%s: no output recorded (run the model inside the "
                                       "recorder's with block)" % (layer, role))
                np.save(os.path.join(d, role + ".npy"), self.data[(layer, role)])
            out.append(d)
        return out
