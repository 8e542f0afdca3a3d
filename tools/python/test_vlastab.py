"""The Python side's test (tests/test_python.c runs it with Debian's /usr/bin/python3): the
binding against the programs (the same library, the same bits), its errors against bounds from
the unit roundoff, the .dat reader, and the PyTorch recorder on a tiny random module. Exit 0:
passed; 77: skipped (no numpy), with the reason; anything else: failed.
usage: test_vlastab.py BIN_DIR"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    print("skip: numpy is absent from %s (Debian: apt-get install python3-numpy)" % sys.executable)
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import vlastab  # noqa: E402
except OSError as e:
    print("skip: %s (make builds build/libvlastab.so)" % e)
    sys.exit(77)

BIN = sys.argv[1]
fails = 0


def check(cond, what):
    global fails
    if not cond:
        fails += 1
        print("FAIL:", what)


H, T, d = 2, 300, 8
rng = np.random.default_rng(3)
tmp = tempfile.mkdtemp(prefix="vla-py-")
x = {n: 0.5 * rng.standard_normal((H, T, d)) for n in ("q", "k", "v")}
for n, a in x.items():
    np.save(os.path.join(tmp, n + ".npy"), a.astype(np.float32))
x = {n: np.load(os.path.join(tmp, n + ".npy")).astype(np.float64) for n in x}

# the binding and the program run the same library on the same inputs: the same bits of ||o||
out = os.path.join(tmp, "sn.dat")
subprocess.run([os.path.join(BIN, "vla-statenorm"), "--model", "vla3", "--precision", "f16",
                "--stream", "trace:" + tmp, "--d", str(d), "--ref", "f64", "--out", out],
               check=True, stderr=subprocess.DEVNULL)
tab = vlastab.read_dat(out)
check(len(tab["runs"]) == H and tab["meta"]["runs"] == str(H), "read_dat: a block per head")
r = vlastab.run(x["q"], x["k"], x["v"], model="vla3", precision="f16")
for h in range(H):
    run = tab["runs"][h]
    t = run["t"].astype(int)
    mine = np.linalg.norm(r["o"][h, t - 1], axis=1)
    check(np.array_equal(mine, run["o_norm"]), "head %d: ||o|| differs from vla-statenorm's: %s vs %s"
          % (h, mine[-3:], run["o_norm"][-3:]))
    # the same runs; the norms of their difference summed in another order (numpy's)
    check(np.allclose(r["o_relerr"][h, t - 1], run["o_relerr"], rtol=1e-12, atol=0),
          "head %d: o_relerr differs from vla-statenorm's" % h)
    check(r["s_fro"][h, -1] == run["s_fro"][-1], "head %d: ||S_T|| differs" % h)

# a binary32 run stays within c d t u of binary64 (c = 10); binary16 is not closer than a quarter
# of its own unit roundoff (its inputs are rounded)
r32 = vlastab.run(x["q"], x["k"], x["v"], model="delta", precision="f32")
bound = 10 * d * T * 2.0 ** -24
check(r32["o_relerr"].max() < bound and r32["s_relerr"].max() < bound,
      "f32 errors %g, %g above c d t u = %g" % (r32["o_relerr"].max(), r32["s_relerr"].max(), bound))
check(r["o_relerr"].max() > 2.0 ** -11 / 4, "f16 error %g below u/4" % r["o_relerr"].max())
check(r["unit_roundoff"] == 2.0 ** -11 and r32["unit_roundoff"] == 2.0 ** -24, "unit roundoffs")
for bad, what in ((dict(model="nosuch"), "unknown model"), (dict(precision="f8"), "precision")):
    try:
        vlastab.run(x["q"], x["k"], x["v"], **bad)
        check(False, what + " accepted")
    except ValueError as e:
        check("unknown" in str(e), what + ": " + str(e))
check(vlastab.models() == ["la", "delta", "rls", "vla1", "vla3"][:len(vlastab.models())] and
      "vla3" in vlastab.models(), "the library's list of models: %s" % vlastab.models())

# the PyTorch recorder: a tiny random attention-like module; its trace is the projections
try:
    import torch
except ImportError:
    torch = None
    print("note: torch is absent from %s (Debian: apt-get install python3-torch): the recorder "
          "is not tested" % sys.executable)
if torch is not None:
    from vlastab.torch_trace import TraceRecorder

    class Attn(torch.nn.Module):
        def __init__(self, dm, heads):
            super().__init__()
            self.q_proj = torch.nn.Linear(dm, dm)
            self.k_proj = torch.nn.Linear(dm, dm)
            self.v_proj = torch.nn.Linear(dm, dm)
            self.b_proj = torch.nn.Sequential(torch.nn.Linear(dm, heads), torch.nn.Sigmoid())

        def forward(self, x):
            return self.q_proj(x) + self.k_proj(x) * self.v_proj(x) + self.b_proj(x).sum()

    class Net(torch.nn.Module):
        def __init__(self, dm, heads):
            super().__init__()
            self.blocks = torch.nn.ModuleList([Attn(dm, heads), Attn(dm, heads)])

        def forward(self, x):
            for b in self.blocks:
                x = b(x)
            return x

    torch.manual_seed(0)
    Hh, dh, Tt = 2, 4, 50
    net = Net(Hh * dh, Hh)
    layers = {"layer%d" % i: {"q": "blocks.%d.q_proj" % i, "k": "blocks.%d.k_proj" % i,
                              "v": "blocks.%d.v_proj" % i, "beta": "blocks.%d.b_proj" % i}
              for i in range(2)}
    xin = torch.randn(1, Tt, Hh * dh)
    with TraceRecorder(net, heads=Hh, layers=layers) as rec, torch.no_grad():
        net(xin)
    dirs = rec.save(os.path.join(tmp, "torch"))
    q = np.load(os.path.join(dirs[0], "q.npy"))
    want = net.blocks[0].q_proj(xin)[0].detach().numpy().reshape(Tt, Hh, dh).transpose(1, 0, 2)
    check(q.shape == (Hh, Tt, dh) and np.array_equal(q, want.astype(np.float32)),
          "layer0 q.npy is not the projection per head")
    beta = np.load(os.path.join(dirs[1], "beta.npy"))
    check(beta.shape == (Hh, Tt) and beta.min() >= 0 and beta.max() <= 1, "beta.npy shape/range")
    p = subprocess.run([os.path.join(BIN, "vla-statenorm"), "--model", "delta", "--stream",
                        "trace:" + dirs[1], "--d", str(dh), "--ref", "f64"],
                       capture_output=True, text=True)
    check(p.returncode == 0 and "# runs: %d" % Hh in p.stdout and "# steps: %d" % Tt in p.stdout
          and "beta.npy" in p.stdout, "vla-statenorm on the recorded trace: %d %s" % (
              p.returncode, p.stderr))

subprocess.run(["rm", "-rf", tmp])
print("python: %s" % ("passed" if not fails else "%d failed" % fails))
sys.exit(1 if fails else 0)
