"""A layer recorded as a vlastab trace, as a model's CI job would record its own: a small Gated
DeltaNet attention block (projections, beta after a sigmoid, the log-decay from its parameters,
fla's formulas) run on one random sequence inside a TraceRecorder, saved in OUT (model
gdn). Your job records your model's layer the same way (docs/trace.md, "From Python").
usage: record_layer.py OUT"""
import sys

import torch
import torch.nn.functional as F

from vlastab.torch_trace import TraceRecorder, capture

H, D, T = 2, 32, 256


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        w = H * D
        self.q_proj, self.k_proj, self.v_proj = (torch.nn.Linear(w, w, bias=False)
                                                 for _ in range(3))
        self.b_proj, self.a_proj = torch.nn.Linear(w, H), torch.nn.Linear(w, H)
        self.A_log = torch.nn.Parameter(torch.log(torch.rand(H) * 15 + 1))
        self.dt_bias = torch.nn.Parameter(torch.zeros(H))

    def forward(self, x):
        q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)
        beta = capture("beta", self.b_proj(x).sigmoid())
        capture("logdecay", -self.A_log.exp() * F.softplus(self.a_proj(x) + self.dt_bias))
        return q, k, v, beta


torch.manual_seed(0)
block = Block()
rec = TraceRecorder(block, heads=H, layers={"layer0": {"q": "q_proj", "k": "k_proj",
                                                       "v": "v_proj"}})
with rec, torch.no_grad():
    block(torch.randn(1, T, H * D))
rec.save(sys.argv[1], model="gdn")
print("recorded the layer: %d heads x %d steps x d = %d into %s" % (H, T, D, sys.argv[1]))
