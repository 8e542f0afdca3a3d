"""The judge of a kernel's gradients (tests/test_python.c runs it with Debian's
/usr/bin/python3): a Gated DeltaNet written here as a PyTorch loop from the published equations
(Yang et al., ICLR 2025; its gradients are torch.autograd's, independent of vlastab's backward)
judged by vlastab.judge() through vla-check --outputs, gradients and all:
  - in float64 the loop's autograd gradients agree with vla-check's exact ones within
    4 sqrt(d T) u64 (norm-wise, rel_rms: the bound of tests/test_grad.py): an independent check of
    the judge's reference gradients, and of the files' layout;
  - in float32 it passes, every gradient ok;
  - with a dropped term (the state's path through the delta rule's prediction S' k' detached:
    the forward's bits unchanged) the read-outs pass and dq with them (dq_t = S_t^T c_t needs no
    later step), while dk, dv, dbeta, dg are beyond and named;
  - with the state's cotangent dS rounded to float16 at every step (a float16 tape), beyond;
  - grouped heads (q and k shared by groups of the heads of v): in float64 within the same
    bound, in float32 ok, and a wrong head mapping beyond in exactly the heads it changes;
  - bad files, straight to vla-check: a gradient of another shape, NaN in do.npy, a gradient
    without do.npy, dbeta for mamba2, a model without a backward (exit 2, the file named); a NaN
    in dk.npy (exit 1, dk and its t named).
Run under pytest (tests/vla_pytest.py), the programs of $VLA_BIN_DIR; skipped without numpy or
torch."""
import json
import os
import shutil
import subprocess

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import vlastab  # noqa: E402

BIN = os.environ["VLA_BIN_DIR"]  # judge() finds this build's vla-check
torch.set_num_threads(2)


def gdn(q, k, v, g=None, beta=None, detach_pred=False, tape16=False):
    """Gated DeltaNet token by token in fla's layout (B, T, H, .), in q's dtype:
    S_t = a_t S_{t-1} + beta_t (v_t - a_t S_{t-1} k_t) k_t^T, a_t = exp(g_t),
    o_t = S_t q_t d^-1/2, q and k L2-normalized (x / sqrt(x.x + 1e-6)); S is (dv, d) per head.
    detach_pred: the prediction a S k taken without its gradient (a dropped term); tape16: the
    state's cotangent rounded to float16 at every step"""
    B, T, H, d = q.shape
    q = q / (q * q).sum(-1, keepdim=True).add(1e-6).sqrt()
    k = k / (k * k).sum(-1, keepdim=True).add(1e-6).sqrt()
    S, o = q.new_zeros(B, H, v.shape[-1], d), []
    for t in range(T):
        S = S * g[:, t, :, None, None].exp()
        pred = torch.einsum("bhvk,bhk->bhv", S.detach() if detach_pred else S, k[:, t])
        S = S + torch.einsum("bhv,bhk->bhvk", beta[:, t, :, None] * (v[:, t] - pred), k[:, t])
        if tape16 and S.requires_grad:
            S.register_hook(lambda gr: gr.half().to(gr.dtype))
        o.append(torch.einsum("bhvk,bhk->bhv", S, q[:, t]) * d ** -0.5)
    return torch.stack(o, 1)


B, T, H, d = 1, 48, 2, 8
torch.manual_seed(0)
q, k, v = (torch.randn(B, T, H, d, dtype=torch.float64) for _ in range(3))
beta = torch.randn(B, T, H, dtype=torch.float64).sigmoid()
g = -0.1 * torch.nn.functional.softplus(torch.randn(B, T, H, dtype=torch.float64))
NAMES = ("dq", "dk", "dv", "dg", "dbeta")
bound = 4 * np.sqrt(d * T) * 2.0 ** -53  # of (1)


def judged(fn, dtype, keep=None):
    return vlastab.judge(fn, q, k, v, g=g, beta=beta, dtype=dtype, causality=False, keep=keep)


def by_grad(ver):
    """{grad: [row of head 0, row of head 1]}"""
    out = {}
    for r in ver.grads:
        out.setdefault(r["grad"], []).append(r)
    return out


def test_float64_autograd_within_the_bound():
    # (1) float64: the loop's autograd against the exact gradients, within 4 sqrt(d T) u64
    ver = judged(gdn, torch.float64)
    rows = by_grad(ver)
    assert sorted(rows) == sorted(NAMES) and all(len(r) == B * H for r in rows.values()), \
        "f64: gradients judged %s" % {n: len(r) for n, r in rows.items()}
    worst = max((r["rel_rms"], r["grad"]) for rs in rows.values() for r in rs)
    assert worst[0] <= bound and ver.ok, \
        ("f64: autograd's %s is %.3g from the exact, bound %.3g (%s)" % (
        worst[1], worst[0], bound, ver))
    print("f64: worst gradient rel_rms %.3g (%s), bound 4 sqrt(d T) u64 = %.3g" % (
        worst[0], worst[1], bound))


def test_float32_ok():
    # (2) float32: ok, every gradient within its budget
    ver = judged(gdn, torch.float32)
    rows = by_grad(ver)
    assert (ver.ok and sorted(rows) == sorted(NAMES) and
            all(r["verdict"] == "ok" for rs in rows.values() for r in rs)), \
        "f32 correct: %s" % ver
    print("f32 correct: %s; worst window error / budget %.3g" % (
        "ok" if ver.ok else "FAIL", max(r["max_rel_window"] / r["budget"] for r in ver.grads)))


def test_a_dropped_term_is_named():
    # (3) a dropped term: the forward the same, dq ok, the others beyond and named
    ver = judged(lambda *a, **kw: gdn(*a, detach_pred=True, **kw), torch.float32)
    rows = by_grad(ver)
    bad = sorted(n for n, rs in rows.items() if any(r["verdict"] != "ok" for r in rs))
    assert (not ver.ok and all(h["verdict"] == "ok" for h in ver.heads) and
            bad == sorted(("dk", "dv", "dg", "dbeta")) and
            "gradient dk of head 0 beyond" in str(ver)), \
        "dropped term: beyond %s, read-outs %s: %s" % (bad, [h["verdict"] for h in ver.heads], ver)
    print("dropped term: beyond %s; dk head 0 %.3g against budget %.3g" % (
        bad, rows["dk"][0]["max_rel_window"], rows["dk"][0]["budget"]))


def test_a_float16_tape_is_beyond():
    # (4) a float16 tape: dS rounded to binary16 at every step
    ver = judged(lambda *a, **kw: gdn(*a, tape16=True, **kw), torch.float32)
    rows = by_grad(ver)
    bad = sorted(n for n, rs in rows.items() if any(r["verdict"] != "ok" for r in rs))
    assert not ver.ok and "dk" in bad and "dv" in bad, "float16 tape: beyond %s: %s" % (bad, ver)
    print("float16 tape: beyond %s; dv head 0 %.3g against budget %.3g" % (
        bad, rows["dv"][0]["max_rel_window"], rows["dv"][0]["budget"]))


# (5) grouped heads (fla's num_v_heads > num_heads, Mamba-2's ngroups): q and k with 2 heads
# shared by the 4 heads of v, head h reading head h // 2 of q and k (fla's repeat '(h g)'). judge()
# records q and k repeated and runs the backward once per member of a group (do zero on the
# others), so that the shared heads' dq and dk are judged per head of v: in float64 within the
# bound of (1), in float32 ok; the wrong mapping (h % 2: the heads read as '(g h)') beyond in heads
# 1 and 2, whose q and k it swaps, and ok in heads 0 and 3, which it leaves
def gdn_grouped(q, k, v, g=None, beta=None, wrong=False):
    Hq, Hv = q.shape[2], v.shape[2]
    idx = torch.arange(Hv) % Hq if wrong else torch.arange(Hv) // (Hv // Hq)
    return gdn(q[:, :, idx], k[:, :, idx], v, g=g, beta=beta)


torch.manual_seed(5)
qg, kg = (torch.randn(B, T, 2, d, dtype=torch.float64) for _ in range(2))
vg = torch.randn(B, T, 4, d, dtype=torch.float64)
bg = torch.randn(B, T, 4, dtype=torch.float64).sigmoid()
gg = -0.1 * torch.nn.functional.softplus(torch.randn(B, T, 4, dtype=torch.float64))


def judged_grouped(fn, dtype):
    return vlastab.judge(fn, qg, kg, vg, g=gg, beta=bg, dtype=dtype, causality=False)


def test_grouped_heads():
    ver = judged_grouped(gdn_grouped, torch.float64)
    rows = by_grad(ver)
    assert sorted(rows) == sorted(NAMES) and all(len(r) == 4 for r in rows.values()), \
        "grouped f64: gradients judged %s" % {n: len(r) for n, r in rows.items()}
    worst = max((r["rel_rms"], r["grad"]) for rs in rows.values() for r in rs)
    assert worst[0] <= bound and ver.ok, \
        ("grouped f64: autograd's %s is %.3g from the exact, bound %.3g "
          "(%s)" % (worst[1], worst[0], bound, ver))
    print("grouped f64: worst gradient rel_rms %.3g (%s), bound %.3g" % (worst[0], worst[1], bound))
    ver = judged_grouped(gdn_grouped, torch.float32)
    assert ver.ok and all(r["verdict"] == "ok" for r in ver.grads), "grouped f32: %s" % ver
    ver = judged_grouped(lambda *a, **kw: gdn_grouped(*a, wrong=True, **kw), torch.float32)
    beyond = [h["head"] for h in ver.heads if h["verdict"] != "ok"]
    assert not ver.ok and beyond == [1, 2], \
        "grouped, wrong mapping: heads beyond %s: %s" % (beyond, ver)
    print("grouped f32: ok; wrong mapping: heads %s beyond" % beyond)
    with pytest.raises(ValueError, match="multiple of q's 2 heads"):  # 3 heads of v on 2 of q
        vlastab.judge(gdn_grouped, qg, kg, vg[:, :, :3], g=gg[:, :, :3], beta=bg[:, :, :3])


# scale= (fla's): handed to fn and to the model; the same kernel at its own default d^-1/2 is
# beyond (a constant ratio, said as a scale); a fn without scale= is refused
def gdn_scaled(q, k, v, g=None, beta=None, scale=None):
    s = d ** -0.5 if scale is None else scale
    return gdn(q, k, v, g=g, beta=beta) * (s / d ** -0.5)


def test_scale():
    ver = vlastab.judge(gdn_scaled, q, k, v, g=g, beta=beta, dtype=torch.float32, causality=False,
                        grad=False, scale=0.125)
    assert ver.ok, "scale=0.125: %s" % ver
    ver = vlastab.judge(gdn, q, k, v, g=g, beta=beta, dtype=torch.float32, causality=False,
                        grad=False, settings={"scale": 0.125})
    assert not ver.ok and "scale" in str(ver), "the model at scale 0.125, fn at d^-1/2: %s" % ver
    with pytest.raises(ValueError, match="fn takes no scale="):  # fn without scale=
        vlastab.judge(gdn, q, k, v, g=g, beta=beta, scale=0.125)
    print("scale=: ok at 0.125; fn at d^-1/2 against the model at 0.125 beyond")


# cu_seqlens (fla's varlen call): two sequences of 20 and 28 steps packed into one of 48. The
# loop run on each sequence from a zero state is ok in float64 (gradients within the bound of
# (1)) and float32, each sequence alone the same bits as in the pack; the loop that ignores
# cu_seqlens (fla issue 1088: the first sequence's state leaks into the second) is beyond, in
# the packing check and in sequence 1's heads, and ok in sequence 0's
CU = [0, 20, 48]


def gdn_varlen(q, k, v, g=None, beta=None, cu_seqlens=None, leak=False):
    if cu_seqlens is None or leak:
        return gdn(q, k, v, g=g, beta=beta)
    c = [int(x) for x in cu_seqlens]
    return torch.cat([gdn(q[:, a:b], k[:, a:b], v[:, a:b], g=g[:, a:b], beta=beta[:, a:b])
                      for a, b in zip(c, c[1:])], 1)


def test_varlen():
    ver = vlastab.judge(gdn_varlen, q, k, v, g=g, beta=beta, dtype=torch.float64, causality=False,
                        cu_seqlens=CU)
    rows = by_grad(ver)
    worst = max((r["rel_rms"], r["grad"]) for rs in rows.values() for r in rs)
    assert ver.ok and len(ver.heads) == 2 * H and worst[0] <= bound and ver.packing["bitwise"], \
        ("varlen f64: %d heads, worst gradient %.3g (bound %.3g): %s" % (
              len(ver.heads), worst[0], bound, ver))
    ver = vlastab.judge(gdn_varlen, q, k, v, g=g, beta=beta, dtype=torch.float32, causality=False,
                        cu_seqlens=CU)
    assert ver.ok and ver.packing["ok"], "varlen f32: %s" % ver
    ver = vlastab.judge(lambda *a, **kw: gdn_varlen(*a, leak=True, **kw), q, k, v, g=g, beta=beta,
                        dtype=torch.float32, causality=False, cu_seqlens=CU, grad=False)
    beyond = [h["head"] for h in ver.heads if h["verdict"] != "ok"]
    assert (not ver.ok and not ver.packing["ok"] and ver.packing["worst_seq"] == 1 and
            beyond == [2, 3] and "a state carried across a sequence boundary" in str(ver)), \
        "varlen, leaking state: heads beyond %s, packing %s: %s" % (beyond, ver.packing, ver)
    print("varlen: ok in f64 (worst gradient %.3g) and f32; the leak beyond in heads %s, packing "
          "%.3g against %.3g" % (worst[0], beyond, ver.packing["diff_max"], ver.packing["budget"]))


# states_fn (speculative decoding's rollback): a verify kernel that keeps the state after each
# token is checked against fn's final state on the first t tokens: the loop's own states are kept
# exactly; states kept one token late (the state after t + 1 at t: a rejected draft token left in
# the restored state, SGLang issue 25587's class) fail
def gdn_state(q, k, v, g=None, beta=None, initial_state=None, output_final_state=False,
              per_token=False):
    """gdn with fla's state convention, (batch, heads, d, dv); per_token: (o, the state after
    each token (batch, T, heads, d, dv))"""
    B, T, H, d = q.shape
    qn = q / (q * q).sum(-1, keepdim=True).add(1e-6).sqrt()
    kn = k / (k * k).sum(-1, keepdim=True).add(1e-6).sqrt()
    S = q.new_zeros(B, H, v.shape[-1], d) if initial_state is None else \
        initial_state.transpose(-1, -2).to(q.dtype)
    o, states = [], []
    for t in range(T):
        S = S * g[:, t, :, None, None].exp()
        pred = torch.einsum("bhvk,bhk->bhv", S, kn[:, t])
        S = S + torch.einsum("bhv,bhk->bhvk", beta[:, t, :, None] * (v[:, t] - pred), kn[:, t])
        o.append(torch.einsum("bhvk,bhk->bhv", S, qn[:, t]) * d ** -0.5)
        states.append(S.transpose(-1, -2))
    o = torch.stack(o, 1)
    if per_token:
        return o, torch.stack(states, 1)
    return (o, states[-1] if output_final_state else None)


def kept_late(q, k, v, g=None, beta=None):
    o, st = gdn_state(q, k, v, g, beta, per_token=True)
    return o, torch.cat([st[:, 1:], st[:, -1:]], 1)


def test_rollback_states():
    ver = vlastab.judge(gdn_state, q, k, v, g=g, beta=beta, dtype=torch.float32, causality=False,
                        grad=False, states_fn=lambda *a, **kw: gdn_state(*a, per_token=True, **kw))
    rb = ver.rollback
    assert ver.ok and rb and rb["exact"] == len(rb["positions"]), "rollback, kept exactly: %s" % ver
    ver = vlastab.judge(gdn_state, q, k, v, g=g, beta=beta, dtype=torch.float32, causality=False,
                        grad=False, states_fn=kept_late)
    rb = ver.rollback
    assert not ver.ok and rb and not rb["ok"] and "a rejected token left in" in str(ver), \
        "rollback, kept a token late: %s" % ver
    print("rollback: the loop's states kept exactly at t = %s; kept a token late: %.3g against "
          "%.3g" % (rb["positions"], rb["rel"], rb["budget"]))


# decode_fn (prefill then decode): fn's prefill of 25 tokens, then one token a call from the state
# it left, against one call: the loop itself as decode_fn is ok; a prefill that pads its last
# chunk to 16 tokens whose padded positions still decay the state (g = -0.5 there, q = k = v = 0:
# transformers issue 46190's class, invisible in one call of 48 tokens) is beyond
def padded_prefill(q, k, v, g=None, beta=None, initial_state=None, output_final_state=False):
    T = q.shape[1]
    n = -T % 16

    def pad(a, val=0.0):
        return torch.cat([a, a.new_full((a.shape[0], n) + tuple(a.shape[2:]), val)], 1)
    o, S = gdn_state(pad(q), pad(k), pad(v), pad(g, -0.5), pad(beta), initial_state, True)
    return o[:, :T], (S if output_final_state else None)


def test_prefill_then_decode():
    ver = vlastab.judge(gdn_state, q, k, v, g=g, beta=beta, dtype=torch.float32, causality=False,
                        grad=False, decode_fn=gdn_state)
    assert ver.ok and ver.decode and ver.decode["ok"], "prefill then decode: %s" % ver
    ver = vlastab.judge(padded_prefill, q, k, v, g=g, beta=beta, dtype=torch.float32,
                        causality=False, grad=False, decode_fn=gdn_state)
    dc = ver.decode
    assert (all(h["verdict"] == "ok" for h in ver.heads) and dc and not dc["ok"] and
          "prefill of 25 tokens then decode" in str(ver)), "padded prefill: %s" % ver
    print("decode: the loop ok; a padded prefill's decode %.3g against %.3g (one call ok)" % (
        dc["diff_max"], dc["budget"]))


def test_bad_files_to_vla_check(tmp_path):
    # (6) bad files, straight to vla-check
    tmp = str(tmp_path)
    judged(gdn, torch.float32, keep=tmp)
    tr, od = os.path.join(tmp, "trace"), os.path.join(tmp, "outputs")
    base = os.path.join(tmp, "base")
    shutil.copytree(od, base)


    def vcheck(trace, *extra):
        p = subprocess.run([os.path.join(BIN, "vla-check"), "trace:" + trace, "--outputs", od,
                            "--report", os.path.join(tmp, "r")] + list(extra),
                           capture_output=True, text=True)
        return p.returncode, p.stderr


    def case(what, edit, code, *words, trace=None):
        shutil.rmtree(od)
        shutil.copytree(base, od)
        edit()
        rc, err = vcheck(trace or tr)
        assert rc == code and all(w in err for w in words), \
            "%s: exit %d (expected %d), stderr: %s" % (what, rc, code, err.strip())


    def save(name, x):
        np.save(os.path.join(od, name + ".npy"), x)


    dk = np.load(os.path.join(base, "dk.npy"))
    case("intact", lambda: None, 0, "gradients: 0 of 10 beyond")
    case("dq transposed", lambda: save("dq", dk.transpose(1, 0, 2).copy()), 2,
         "dq.npy: shape (48, 2, 8), expected (heads, T, d) = (2, 48, 8)")
    do = np.load(os.path.join(base, "do.npy"))
    do_nan = do.copy()
    do_nan[1, 5, 2] = np.nan
    case("NaN in do", lambda: save("do", do_nan), 2, "do.npy: NaN at [1, 5, 2]")
    case("no do", lambda: os.unlink(os.path.join(od, "do.npy")), 2, "dq.npy needs", "do.npy")
    dk_nan = dk.copy()
    dk_nan[0, 30, 1] = np.nan
    case("NaN in dk", lambda: save("dk", dk_nan), 1, "dk of head 0 not finite from t = 31")
    # a model of the trace's files without the gradient's input, and one without a backward
    rc, err = vcheck(tr, "--model", "mamba2")
    assert rc == 2 and "dbeta.npy: mamba2 has no beta" in err, "dbeta for mamba2: %d %s" % (rc, err)
    rc, err = vcheck(tr, "--model", "vla3", "--track", "joseph")
    assert rc == 2 and "vla3 in f32 has no backward" in err and "--track sm" in err, \
        "vla3 joseph: %d %s" % (rc, err)
    rc, err = vcheck(tr, "--model", "vla3")
    assert rc == 2 and "dq.npy: vla3's backward gives the gradient with respect to phi(q)" in err, \
        "vla3: %d %s" % (rc, err)
    rc, err = vcheck(tr, "--model", "la")
    assert rc == 2 and "dq.npy: la's backward gives the gradient with respect to phi(q)" in err, \
        "la: %d %s" % (rc, err)


def test_vla1_du(tmp_path):
    tmp = str(tmp_path)
    # (7) vla1's du: a trace with u.npy, the kernel's gradients vlastab's own binary64 ones (ok, du
    # judged), then du moved 1% at one step (beyond, du named)
    vt, vo = os.path.join(tmp, "vla1"), os.path.join(tmp, "vla1-out")
    os.makedirs(vt), os.makedirs(vo)
    rv = np.random.default_rng(3)
    q1, k1, v1, u1, do1 = (rv.standard_normal((2, 40, 6)) for _ in range(5))
    for n, x in (("q", q1), ("k", k1), ("v", v1), ("u", u1)):
        np.save(os.path.join(vt, n + ".npy"), x)
    with open(os.path.join(vt, "model.txt"), "w") as f:
        f.write("model vla1\n")
    g1 = vlastab.grad(q1, k1, v1, do1, model="vla1", u=u1)
    np.save(os.path.join(vo, "o.npy"), vlastab.run(q1, k1, v1, model="vla1", u=u1, precision="f64",
                                                    reference=False)["o"])
    np.save(os.path.join(vo, "do.npy"), do1)
    for n in ("dq", "dk", "dv", "du"):
        np.save(os.path.join(vo, n + ".npy"), g1[n])
    ok = subprocess.run([os.path.join(BIN, "vla-check"), "trace:" + vt, "--outputs", vo,
                         "--report", os.path.join(tmp, "v1")], capture_output=True, text=True)
    with open(os.path.join(tmp, "v1.json")) as f:
        rows = [r for r in json.load(f)["grads"] if r["grad"] == "du"] if ok.returncode == 0 else []
    assert ok.returncode == 0 and len(rows) == 2 and all(r["verdict"] == "ok" for r in rows), \
        "vla1 du: exit %d, rows %s: %s" % (ok.returncode, rows, ok.stderr.strip())
    g1["du"][1, 20] *= 1.01
    np.save(os.path.join(vo, "du.npy"), g1["du"])
    bad = subprocess.run([os.path.join(BIN, "vla-check"), "trace:" + vt, "--outputs", vo,
                          "--report", os.path.join(tmp, "v1")], capture_output=True, text=True)
    assert bad.returncode == 1 and "du of head 1" in bad.stderr, \
        "vla1 du moved: exit %d: %s" % (bad.returncode, bad.stderr.strip())
