#!/usr/bin/python3
"""fla issue 640 in vlastab: tests/ops/test_gated_delta.py::test_chunk of fla at the issue's time
(commit f0de028b, 2025-11-01), case B2-T1500-H4-D128-scale0.1-gate_logit_normalizer10-mask_p0-
use_qk_l2norm_in_kernelFalse-float16, with vlastab's gdn backward in the kernel's place.

The test (read from fla's git history; docs/gated.md, "fla issue 640 in vlastab"):
  torch.manual_seed(42) (CPU generator; the inputs are drawn on the CPU, then moved)
  q, k, v = torch.rand(B, T, H, D, fp16)            uniform [0, 1): positive, NOT N(0, 1)
  beta = torch.rand(B, T, H, fp16).sigmoid()        in [0.5, 0.73]
  g = F.logsigmoid(torch.rand(B, T, H, fp32)) / 10  in [-0.069, -0.031]
  h0 = zeros(B, H, D, D, fp32) (requires grad), output_final_state=True
  kernel inputs F.normalize(q), F.normalize(k) in fp16 (outside the kernel: l2norm_in_kernel off)
  do = randn_like(v) (fp16, drawn on the device), dht = randn_like(h0) (fp32)
  loss = (o . do).sum() + (ht . dht).sum()
  reference: recurrent_gated_delta_rule_ref, an fp32 token recurrence on the SAME fp16
  F.normalize(q), F.normalize(k), v, beta, g (cast to fp32); gradients to the fp16 leaves, so
  dq and dk pass fp16's F.normalize backward in the reference as in the kernel's path.
  ratio = RMS(ref - tri) / RMS(ref); dk fails at >= 0.008.

vlastab has no initial state, no final-state cotangent and takes the keys as given with
qknorm=0. dht is emulated exactly: 36 null tokens (q = k = v = c = 0, beta = 0, g = 0) close
the last real chunk as fla's tail masking does, then 128 tokens q_j = e_j, beta = 0, g = 0,
c_j = dht[j, :] / scale read the final state without changing it: sum_j c_j . o_j = <dht, S_T>.
The normalize backward is applied here, in emulated fp16 (each torch op's result rounded to
binary16, as torch's CUDA fp16 ops store them; sums accumulated in fp32).

usage: PYTHONPATH=tools/python /usr/bin/python3 tools/fla_test_chunk_gdn.py [heads]
       (about 3 min, 2 cores)
"""
import sys
import time
import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, "tools/python")
import vlastab  # noqa: E402

B, T, H, D, SCALE, NORM = 2, 1500, 4, 128, 0.1, 10
NH = int(sys.argv[1]) if len(sys.argv) > 1 else B * H
r16 = lambda x: x.half().float()


def normalize_fwd(x16):
    """F.normalize(x, dim=-1) of an fp16 tensor as CUDA stores it: the norm and the quotient
    rounded to fp16 (eps 1e-12 never binds here)"""
    n = r16(x16.float().norm(dim=-1, keepdim=True))
    return r16(x16.float() / n), n


def normalize_bwd(x16, n, gy16):
    """autograd's backward of x / norm(x).clamp_min(eps).expand_as(x) in fp16: DivBackward's
    grad / n and -grad * x / (n * n) (fp16 each), the latter summed over the expanded dim (fp32
    accumulate, fp16 result), NormBackward's x * (grad_n / n), the two paths added in fp16"""
    x = x16.float()
    ga = r16(gy16 / n)
    gn = r16((r16(-gy16 * x / r16(n * n))).sum(-1, keepdim=True))
    gb = r16(x * r16(gn / n))
    return r16(ga + gb)


def normalize_bwd64(x, gy):
    """the exact backward of x / |x| in binary64"""
    x = x.double()
    n = x.norm(dim=-1, keepdim=True)
    gy = gy.double()
    return gy / n - x * (gy * x).sum(-1, keepdim=True) / n ** 3


def ratio(ref, tri):
    ref, tri = ref.double(), tri.double()
    return ((ref - tri).square().mean().sqrt() / (ref.square().mean().sqrt() + 1e-8)).item()


def ratio16(ref, tri):
    """fla.utils.get_err_ratio as the test runs it on fp16 tensors (dq, dk, dv, dbeta): the
    difference, its square, the mean (fp32 accumulate) and the sqrt each stored in fp16, so a
    squared difference below 2^-25 (|diff| < 1.7e-4) counts as 0"""
    err = r16(r16(r16(r16(ref) - r16(tri)) ** 2).double().mean().float()).sqrt()
    base = r16(r16(r16(ref) ** 2).double().mean().float()).sqrt()
    return (r16(err) / (r16(base) + 1e-8)).item()


def test_line(ref, tri, names):
    """the test's log line: max |diff| and its ratio (in fp16 for the fp16 gradients)"""
    return "  ".join("%s %.6f/%.6f" % (n, (sel(ref[n], n) - sel(tri[n], n)).abs().max().item(),
                                       (ratio16 if n != "dg" else ratio)(sel(ref[n], n),
                                                                         sel(tri[n], n)))
                     for n in names)


torch.manual_seed(42)
q = torch.rand(B, T, H, D, dtype=torch.float16)
k = torch.rand(B, T, H, D, dtype=torch.float16)
v = torch.rand(B, T, H, D, dtype=torch.float16)
beta = r16(torch.rand(B, T, H, dtype=torch.float16).float().sigmoid())  # fp16 sigmoid, emulated
g = F.logsigmoid(torch.rand(B, T, H, dtype=torch.float32)) / NORM
g = g * (torch.rand_like(g) > 0)          # mask_p = 0: draws as the test does, masks nothing
do = torch.randn(B, T, H, D).half()       # the test draws it on the device: same law, other values
dht = torch.randn(B, H, D, D)
qn, nq = normalize_fwd(q)
kn, nk = normalize_fwd(k)


def ref_recurrence(b):
    """the test's recurrent_gated_delta_rule_ref (fp32) for batch b, its gradients w.r.t. its
    fp32 inputs (q, k after F.normalize), h0 = 0"""
    Q, K, V, BE, G = [x[b].transpose(0, 1).float().clone().requires_grad_()
                      for x in (qn, kn, v, beta.float(), g)]
    h = torch.zeros(H, D, D)
    o = torch.zeros(H, T, D)
    Qs = Q * SCALE
    for i in range(T):
        h = h.clone() * G[:, i].exp()[..., None, None]
        b_v = V[:, i] - (h.clone() * K[:, i, :, None]).sum(-2)
        b_v = b_v * BE[:, i, None]
        h = h.clone() + K[:, i, :, None] * b_v[:, None, :]
        o[:, i] = torch.einsum('hd,hdm->hm', Qs[:, i], h)
    loss = (o * do[b].transpose(0, 1).float()).sum() + (h * dht[b]).sum()
    loss.backward()
    return {n: x.grad.detach() for n, x in zip(("dq", "dk", "dv", "dbeta", "dg"), (Q, K, V, BE, G))}


def vla_inputs(b, hh):
    """one head's inputs in vlastab's layout, with the null tail and the 128 dht readers"""
    P = (-T) % 64
    tq = np.zeros((T + P + D, D)); tk = np.zeros_like(tq); tv = np.zeros_like(tq); tc = np.zeros_like(tq)
    tb = np.zeros(T + P + D); tg = np.zeros(T + P + D)
    tq[:T] = qn[b, :, hh].numpy(); tk[:T] = kn[b, :, hh].numpy(); tv[:T] = v[b, :, hh].float().numpy()
    tc[:T] = do[b, :, hh].float().numpy()
    tb[:T] = beta[b, :, hh].float().numpy(); tg[:T] = g[b, :, hh].numpy()
    tq[T + P:] = np.eye(D)
    tc[T + P:] = dht[b, hh].numpy() / SCALE
    tk[T + P:, 0] = 1.0
    return tq[None], tk[None], tv[None], tc[None], tb[None], tg[None]


def vla(prec, form):
    out = {n: np.zeros((B, H, T) + ((D,) if n in ("dq", "dk", "dv") else ())) for n in
           ("dq", "dk", "dv", "dbeta", "dg")}
    for i in range(NH):
        b, hh = divmod(i, H)
        tq, tk, tv, tc, tb, tg = vla_inputs(b, hh)
        r = vlastab.grad(tq, tk, tv, tc, model="gdn", precision=prec, beta=tb, logdecay=tg,
                         scale=SCALE, qknorm=0, form=form)
        for n in out:
            out[n][b, hh] = r[n][0, :T]
    return {n: torch.from_numpy(x) for n, x in out.items()}


def leaf_grads(gr, fp16_path):
    """gradients w.r.t. the test's leaves: dq, dk through F.normalize's backward (fp16 as the
    test runs it, or exact binary64); the kernel's outputs are fp16"""
    out = {}
    for n, x, nrm in (("dq", q, nq), ("dk", k, nk)):
        gy = gr[n].float()
        gy = gy.permute(0, 2, 1, 3)
        if fp16_path:
            out[n] = normalize_bwd(x, nrm, r16(gy))
        else:
            out[n] = normalize_bwd64(x, gy)
    for n in ("dv", "dbeta"):
        y = gr[n]
        out[n] = r16(y.float()) if fp16_path else y.double()
    out["dg"] = gr["dg"].float() if fp16_path else gr["dg"].double()
    # keep the vlastab layout (B, H, T, ...) for dv, dbeta, dg; dq, dk in the test's (B, T, H, D)
    return out


def sel(x, n):
    """the first NH heads of a (B, T, H, D) or (B, H, T, ...) tensor, as (B*H, T, ...)"""
    if n in ("dq", "dk"):
        x = x.permute(0, 2, 1, 3)
    return x.reshape((B * H,) + tuple(x.shape[2:]))[:NH]


t0 = time.time()
refs = [ref_recurrence(b) for b in range((NH + H - 1) // H)]
ref = {}
for n in refs[0]:
    ref[n] = torch.stack([r[n] for r in refs] + [torch.zeros_like(refs[0][n])] * (B - len(refs)))
# ref[n] is (B, H, T, ...): the test's reference w.r.t. normalized q, k; to the leaves in fp16
ref_leaf = leaf_grads(ref, True)
print("reference recurrence (fp32, the test's) %.0f s" % (time.time() - t0), flush=True)

truth_raw = vla("f64", "seq")
truth = leaf_grads(truth_raw, False)
names = ("dq", "dk", "dv", "dbeta", "dg")
print("check, the test's reference against binary64 (the reference's own error), heads %d:" % NH)
print("  before F.normalize's backward: " + "  ".join(
    "%s %.2e" % (n, ratio(sel(truth_raw[n], "x"), sel(ref[n], "x"))) for n in names))
print("  to the leaves (fp16 normalize bwd): " + "  ".join(
    "%s %.2e" % (n, ratio(sel(truth[n], n), sel(ref_leaf[n], n))) for n in names))
for n in ("dq", "dk"):
    a = sel(truth_raw[n], "x").double(); l = sel(truth[n], n).double()
    rad = (a.norm(dim=-1) / (l * sel(nq if n == "dq" else nk, n).double()).norm(dim=-1))
    rad = rad.median().item()
    print("  %s: RMS before normalize bwd %.3e, after %.3e; median per-token |dx_n| / "
          "(|x| |dx|) = %.1f" % (n, a.square().mean().sqrt().item(),
                                  l.square().mean().sqrt().item(), rad))

for form in ("seq", "chunk:64"):
    for prec in ("f32", "f16-kern", "f16"):
        t0 = time.time()
        raw = vla(prec, form)
        lf = leaf_grads(raw, True)
        print("%-8s %-8s (%.0f s)" % (form, prec, time.time() - t0), flush=True)
        print("   vs test ref, leaves (the test's ratio): " + "  ".join(
            "%s %.2e" % (n, ratio(sel(ref_leaf[n], n), sel(lf[n], n))) for n in names))
        print("   the test's own log (diff/ratio):        " + test_line(ref_leaf, lf, names))
        print("   vs binary64, before normalize bwd:      " + "  ".join(
            "%s %.2e" % (n, ratio(sel(truth_raw[n], "x"), sel(raw[n], "x"))) for n in names),
            flush=True)
