"""The Python side's test (tests/test_python.c runs it with Debian's /usr/bin/python3): the
binding against the programs (the same library, the same bits), its errors against bounds from
the unit roundoff, the .dat reader, and the PyTorch recorder on a tiny random module. Run under
pytest (tests/vla_pytest.py) with the programs of $VLA_BIN_DIR."""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import pytest

import vlastab
from vla_pytest import refused, warned

BIN = os.environ["VLA_BIN_DIR"]
HERE = os.path.dirname(os.path.abspath(__file__))
H, T, d = 2, 300, 8
# the inputs as a trace's float32 files hold them
_rng = np.random.default_rng(3)
x = {n: (0.5 * _rng.standard_normal((H, T, d))).astype(np.float32).astype(np.float64)
     for n in ("q", "k", "v")}


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    """a folder with x's q, k, v.npy (float32)"""
    tmp = str(tmp_path_factory.mktemp("trace"))
    for n, a in x.items():
        np.save(os.path.join(tmp, n + ".npy"), a.astype(np.float32))
    return tmp


def statenorm(trace, precision, out):
    subprocess.run([os.path.join(BIN, "vla-statenorm"), "--model", "vla3", "--precision",
                    precision, "--stream", "trace:" + trace, "--d", str(d), "--ref", "f64",
                    "--out", out], check=True, stderr=subprocess.DEVNULL)
    return vlastab.read_dat(out)


# the binding and the program run the same library on the same inputs: the same bits of ||o||
def test_binding_gives_the_programs_bits(trace):
    tab = statenorm(trace, "f16", os.path.join(trace, "sn.dat"))
    assert len(tab["runs"]) == H and tab["meta"]["runs"] == str(H), "read_dat: a block per head"
    r = vlastab.run(x["q"], x["k"], x["v"], model="vla3", precision="f16")
    for h in range(H):
        run = tab["runs"][h]
        t = run["t"].astype(int)
        mine = np.linalg.norm(r["o"][h, t - 1], axis=1)
        assert np.array_equal(mine, run["o_norm"]), \
            ("head %d: ||o|| differs from vla-statenorm's: %s vs %s"
              % (h, mine[-3:], run["o_norm"][-3:]))
        # the same runs; the norms of their difference summed in another order (numpy's)
        assert np.array_equal(r["o_relerr"][h, t - 1], run["o_relerr"]), \
            "head %d: o_relerr differs from vla-statenorm's" % h
        assert r["s_fro"][h, -1] == run["s_fro"][-1], "head %d: ||S_T|| differs" % h


def test_errors_against_unit_roundoff():
    r = vlastab.run(x["q"], x["k"], x["v"], model="vla3", precision="f16")
    # a binary32 run stays within c d t u of binary64 (c = 10); binary16 is not closer than a
    # quarter of its own unit roundoff (its inputs are rounded)
    r32 = vlastab.run(x["q"], x["k"], x["v"], model="delta", precision="f32")
    bound = 10 * d * T * 2.0 ** -24
    assert r32["o_relerr"].max() < bound and r32["s_relerr"].max() < bound, \
        "f32 errors %g, %g above c d t u = %g" % (r32["o_relerr"].max(), r32["s_relerr"].max(),
                                                  bound)
    assert r["o_relerr"].max() > 2.0 ** -11 / 4, "f16 error %g below u/4" % r["o_relerr"].max()
    assert r["unit_roundoff"] == 2.0 ** -11 and r32["unit_roundoff"] == 2.0 ** -24, "unit roundoffs"


@pytest.mark.parametrize("bad", [dict(model="nosuch"), dict(precision="f8")])
def test_unknown_names(bad):
    with pytest.raises(ValueError, match="unknown"):
        vlastab.run(x["q"], x["k"], x["v"], **bad)


def test_models_are_the_tables():
    # the binding's list is the library's, read from the rows of lib/vlalists.h's model table
    _hdr = open(os.path.join(HERE, "..", "..", "lib", "vlalists.h")).read()
    table = _hdr[_hdr.index("#define VLA_MODELS(X)"):_hdr.index("#define VLA_TRACKS(X)")]
    _rows = re.findall(r"^\s+X\([A-Z0-9_]+, (\w+),", table, re.M)
    assert len(_rows) >= 10 and vlastab.models() == _rows, \
        "the library's list of models: %s, lib/vlalists.h's rows %s" % (vlastab.models(), _rows)


def test_f16_kern_reference_takes_the_rounded_inputs(trace):
    # f16-kern rounds its inputs to binary16 (its storage is binary32): the reference takes the same
    # rounded inputs as the program's, so the errors are the program's bits
    tab = statenorm(trace, "f16-kern", os.path.join(trace, "sn.dat"))
    r = vlastab.run(x["q"], x["k"], x["v"], model="vla3", precision="f16-kern")
    for h in range(H):
        t = tab["runs"][h]["t"].astype(int)
        assert np.array_equal(r["o_relerr"][h, t - 1], tab["runs"][h]["o_relerr"]), \
            "f16-kern head %d: o_relerr differs from vla-statenorm's" % h
    assert vlastab.round_to(1 + 2.0 ** -12, "f16-kern") == 1, "round_to f16-kern: not binary16"


# run()'s inputs are checked as the trace loader checks a trace's files, with its messages naming
# the argument for the file; its names and constants as the programs check --set and --track
RNG5 = np.random.default_rng(5)  # tools/decay-trace.py's test draws on after these
q5, k5, v5 = (RNG5.standard_normal((2, 6, 4)) for _ in range(3))


def run5(**kw):
    a = {"q": q5, "k": k5, "v": v5}
    a.update(kw)
    return vlastab.run(a.pop("q"), a.pop("k"), a.pop("v"), **a)


beta5, g5, dec5 = np.full((2, 6), 0.5), np.full((2, 6, 4), 0.5), np.full((2, 6), 0.5)
beta5[1, 2] = -0.5
g5[0, 5, 1] = 3
kn = k5.copy()
kn[0, 3, 1] = np.nan
vi = v5.copy()
vi[1, 4, 2] = -np.inf


@pytest.mark.parametrize("what, kw, exc, words", [

    ("T = 0", dict(q=q5[:, :0], k=k5[:, :0], v=v5[:, :0]), ValueError,
     ["q: shape (2, 0, 4) has no steps or heads"]),
    ("no heads", dict(q=q5[:0], k=k5[:0], v=v5[:0]), ValueError, ["has no steps or heads"]),
    ("d = 0", dict(q=q5[:, :, :0], k=k5[:, :, :0]), ValueError, ["d = 0", "1..256"]),
    ("d = 300", dict(q=np.ones((1, 2, 300)), k=np.ones((1, 2, 300)), v=np.ones((1, 2, 3))),
     ValueError, ["d = 300", "1..256"]),
    ("beta < 0", dict(model="delta", beta=beta5), ValueError,
     ["beta: -0.5 at [1, 2] is outside [0, inf]"]),
    ("beta (heads, T, 1) < 0", dict(model="delta", beta=beta5[:, :, None]), ValueError,
     ["beta: -0.5 at [1, 2, 0] is outside [0, inf]"]),
    ("g > 1", dict(model="delta", g=g5), ValueError, ["g: 3 at [0, 5, 1] is outside [0, 1]"]),
    ("g < 0", dict(model="delta", g=-g5), ValueError,
     ["g: -0.5 at [0, 0, 0] is outside [0, 1]"]),
    ("decay > 1", dict(model="delta", delta_form="decay", decay=dec5 + 1), ValueError,
     ["decay: 1.5 at [0, 0] is outside [0, 1]"]),
    ("decay < 0", dict(model="delta", delta_form="decay", decay=-dec5), ValueError,
     ["decay: -0.5 at [0, 0] is outside [0, 1]"]),
    ("NaN in k", dict(k=kn), ValueError, ["k: NaN at [0, 3, 1]"]),
    ("Inf in v", dict(v=vi), ValueError, ["v: Inf at [1, 4, 2]"]),
    ("NaN in beta", dict(model="delta", beta=dec5 * np.nan), ValueError,
     ["beta: NaN at [0, 0]"]),
    ("k of other heads", dict(k=k5[:1]), ValueError,
     ["k: shape (1, 6, 4), expected 2 heads (as q)"]),
    ("k of other steps", dict(k=k5[:, :5]), ValueError, ["expected 6 steps (as q)"]),
    ("k of another dim", dict(k=k5[:, :, :3]), ValueError,
     ["k: shape (2, 6, 3), expected dim 4"]),
    ("k 2-dimensional", dict(k=k5[0]), ValueError, ["k: shape (6, 4), expected (heads, T, 4)"]),
    ("g of another dim", dict(model="delta", g=g5[:, :, :3] * 0), ValueError,
     ["expected dim 4"]),
    ("beta (heads, T, 2)", dict(model="delta", beta=np.ones((2, 6, 2))), ValueError,
     ["beta: shape (2, 6, 2), expected dim 1"]),
    ("beta 1-dimensional", dict(model="delta", beta=np.ones(6)), ValueError,
     ["expected (heads, T) or (heads, T, 1)"]),
    ("complex q", dict(q=q5 + 1j), TypeError, ["q: dtype complex128"]),
    ("text q", dict(q=np.full((2, 6, 4), "1")), TypeError, ["q: dtype <U1"]),
    ("bool v", dict(v=v5 > 0), TypeError, ["v: dtype bool"]),
    ("ragged k", dict(k=[[[1.0]], [[1.0, 2.0]]]), TypeError, ["k: not an array of numbers"]),
    ("float128 q", dict(q=q5.astype(np.longdouble)), TypeError, ["q: dtype float128"]),
    ("an integer beyond 2^53", dict(v=np.full((2, 6, 4), 2 ** 53 + 1)), ValueError,
     ["v: ", "2^53"]),
    ("a number as model", dict(model=3), TypeError, ["model: 3 is not a string"]),
    ("'vla3\\0junk'", dict(model="vla3\0junk"), ValueError, ["model", "NUL"]),
    ("'f32\\0junk'", dict(precision="f32\0junk"), ValueError, ["precision", "NUL"]),
    ("'sm\\0junk'", dict(track="sm\0junk"), ValueError, ["track", "NUL"]),
    ("lambda0='1\\0junk'", dict(lambda0="1\0junk"), ValueError, ["lambda0", "NUL"]),
    ("'nudge\\0x'=1", {"nudge\0x": 1}, ValueError, ["constant", "NUL"]),
    ("lambda0='1junk'", dict(lambda0="1junk"), ValueError,
     ["lambda0=1junk: '1junk' is not a number"]),
    ("lambda0=nan", dict(lambda0=float("nan")), ValueError, ["'nan' is not finite"]),
    ("lambda0=None", dict(lambda0=None), TypeError, ["lambda0=None"]),
    ("an unknown constant", dict(nosuch=1), ValueError, ["'nosuch' is not a constant"]),
    ("period=0", dict(period=0), ValueError, ["'0' is not an integer in 1..1e9"]),
    ("beta=3 (the constant)", dict(model="delta", beta=3), ValueError,
     ["beta = 3: it must be finite and in (0, 2)"]),
    ("gamma=0", dict(gamma=0), ValueError, ["gamma, the forgetting factor of M, is in (0, 1]"]),
    ("gamma with la", dict(model="la", gamma=0.5), ValueError, ["la has no A"]),
    ("chol with the nudge", dict(track="chol"), ValueError, ["set nudge=off"]),
    ("sr in f32", dict(track="sr"), ValueError, ["f16-f32, bf16-f32"]),
    ("cg:0", dict(track="cg:0"), ValueError, ["K is an integer in 1..1000"]),
    ("an unknown way", dict(track="nosuch"), ValueError, ["unknown way 'nosuch'"]),
    # a setting that the model, form and way do not read (vla_setting_read)
    ("tri in the seq form", dict(model="gdn", tri="neumann"), ValueError,
     ["tri=neumann: gdn in --form seq", "tri is read only by the chunk form"]),
    ("stage in the scan form", dict(model="gdn", form="scan", stage="off"), ValueError,
     ["stage is read only by the chunk form"]),
    ("anchor in la's chunk", dict(model="la", form="chunk:2", anchor="first"), ValueError,
     ["anchor is read only by the chunk form (chunk:C, C > 1) of the models with decays"]),
    ("scale for la", dict(model="la", scale=0.5), ValueError, ["the gated family, gdn"]),
    ("chol for gdn", dict(model="gdn", track="chol"), ValueError,
     ["gdn has no A, and chol changes only how A is tracked"]),
    ("strict='no'", dict(strict="no"), TypeError, ["strict"]),
    ("reference=2", dict(reference=2), TypeError, ["reference"]),
    ("an input that overflows f16", dict(k=k5 * 1e5, precision="f16"), ValueError,
     ["k: ", "overflows f16's input format (largest 65504)", "reference=False"])],
    ids=lambda v: v if isinstance(v, str) else "")
def test_run_refuses(what, kw, exc, words):
    refused("run(): " + what, lambda: run5(**kw), exc, *words)


def test_round_to_refuses():
    for what, arg, exc, words in (("NaN", [1.0, np.nan], ValueError, ["x: NaN at [1]"]),
                                  ("'f16\\0x'", 1.0, ValueError, ["precision", "NUL"]),
                                  ("text", "1", TypeError, ["x: dtype <U1"])):
        refused("round_to: " + what, lambda: vlastab.round_to(
            arg, "f16\0x" if "0x" in what else "f16"), exc, *words)


def test_run_accepts():
    # accepted as the programs accept them
    assert run5(q=np.round(q5).astype(int))["o"].shape == (2, 6, 4), "integer q refused"
    assert run5(model="delta", beta=1.5)["o"].shape == (2, 6, 4), "the constant beta=1.5 refused"
    assert run5(model="gdn", form="chunk:2", tri="neumann",
                anchor="first")["o"].shape == (2, 6, 4), \
        "tri and anchor refused in gdn's chunk form, which reads them"
    assert run5(model="vla3", track="cg:8", nudge=False)["o"].shape == (2, 6, 4), "cg:8 refused"
    assert run5(model="delta", g=g5.clip(0, 1), beta=beta5.clip(0))["o"].shape == (2, 6, 4), \
        "g and beta at the ends of their ranges refused"


def test_unread_inputs_warn():
    # an input the model does not read is a warning, as the programs warn of a trace's file
    # ... naming every model that reads u (the model table's reads column)
    readers = [m for m in vlastab.models() if vlastab._reads(m, vlastab._abi.VLA_IN_U)]
    warned("u with la", lambda: run5(model="la", u=k5), "u is not read by model=la (only by ",
           *readers)
    warned("decay with gated delta", lambda: run5(model="delta", decay=dec5),
           "decay is not read by model=delta with delta_form=gated")
    warned("g with decay delta", lambda: run5(model="delta", delta_form="decay", g=g5 * 0),
           "g is not read by model=delta with delta_form=decay")
    warned("beta with vla3", lambda: run5(model="vla3", beta=dec5),
           "beta is not read by model=vla3")


def test_nonfinite_runs_say_so():
    # a run that goes to Inf says so: a field and a warning (la's S = sum v phi(k)^T overflows f16)
    r = warned("la f16 to Inf", lambda: run5(model="la", precision="f16", k=k5 * 1e4, v=v5 * 1e4),
               "la in f16 is not finite (Inf or NaN) in 2 of 2 heads")
    b = r["nonfinite"]
    assert (b.shape == (2,) and b.min() >= 1 and all(np.isfinite(r["o"][h, :b[h] - 1]).all() and
                                                      not np.isfinite(r["s_fro"][h, b[h] - 1])
                                                      for h in range(2))), \
        "nonfinite %s is not the first step of inf or nan" % b
    assert (r["nonfinite_ref"] == 0).all(), "the reference is finite"
    r = run5()
    assert (r["nonfinite"] == 0).all() and (r["nonfinite_ref"] == 0).all(), "a finite run flagged"


def test_nonfinite_read_out_inside_a_chunk():
    # a read-out inside a chunk counts at its own step, not at the chunk's end, nor missed when the
    # chunk's last read-out and the state are finite (one huge query at step 2 of chunk:4: o_2 = S
    # q_2 overflows binary16, o_4 and S do not)
    rngb = np.random.default_rng(1)
    qb, kb, vb = (rngb.standard_normal((2, 8, 4)) for _ in range(3))
    qb[:, 1] *= 1e6
    for mdl in ("delta", "gdn"):
        r = warned("%s f16 chunk:4 read-out to Inf" % mdl,
                   lambda: vlastab.run(qb, kb, vb,
                                       model=mdl, precision="f16", form="chunk:4", reference=False),
                   "%s in f16 is not finite (Inf or NaN) in 2 of 2 heads" % mdl)
        fin = np.isfinite(r["o"]).all(axis=2)
        assert list(r["nonfinite"]) == [2, 2] and not fin[:, 1].any() and fin[:, 3].all(), \
            "%s chunk:4: nonfinite %s, finite read-outs %s" % (mdl, r["nonfinite"], fin)


def test_norms_and_zero_errors():
    # norms neither underflow nor overflow (the library's, as the programs'): a state of 1e-170
    assert run5(model="la", precision="f64", v=v5 * 1e-170)["s_fro"].min() > 1e-171, \
        "s_fro underflows to 0"
    # errors against a zero reference: 0 for equal (a zero state), not nan
    r = run5(model="la", v=v5 * 0)
    assert (r["s_relerr"] == 0).all() and (r["o_relerr"] == 0).all(), "relerr of zero against zero"


def test_read_dat_refuses_what_is_not_a_table(tmp_path):
    tmp = str(tmp_path)
    # read_dat: what is not a table as the programs write it is a ValueError naming the file, the
    # line and the problem, never a padded, cut or overwritten column
    good = "# program: x\n# columns: t a b\n1 2 3\n2 4 nan\n\n\n1 5 6\n"
    for what, text, words in (
            ("a short row", good.replace("2 4 nan", "2 4"),
             ["bad.dat: line 4: 2 cells, expected 3"]),
            ("a long row", good.replace("2 4 nan", "2 4 nan 7"), ["line 4: 4 cells, expected 3"]),
            ("an empty column name list", good.replace("t a b", ""),
             ["line 2: '# columns:' names no"]),
            ("a column named twice", good.replace("t a b", "t a a"),
             ["line 2: column 'a' is named twice (columns 2 and 3)"]),
            ("a byte-order mark", "\ufeff" + good, ["line 1: a byte-order mark"]),
            ("a NUL", good.replace("2 4 nan", "2 4\0 nan"), ["line 4: a NUL"]),
            ("no columns line", good.replace("# columns: t a b\n", ""), ["line 2: a row before"]),
            ("no columns line and no rows", "# program: x\n", ["bad.dat: no '# columns:' line"]),
            ("an empty file", "", ["no '# columns:' line"]),
            ("a second columns line", good + "# columns: t a b\n", ["line 8: a second '# columns:' "
                                                                    "line (the first is line 2)"]),
            ("Latin-1 text", good.replace("# program: x", "# program: \xe9"),
             ["line 1: not UTF-8"])):
        bad = os.path.join(tmp, "bad.dat")
        with open(bad, "wb") as f:
            f.write(text.encode("latin-1" if "Latin" in what else "utf-8"))
        refused("read_dat: " + what, lambda: vlastab.read_dat(bad), ValueError, *words)
    with open(os.path.join(tmp, "crlf.dat"), "wb") as f:
        f.write(good.replace("\n", "\r\n").encode())
    tab = vlastab.read_dat(os.path.join(tmp, "crlf.dat"))
    assert (tab["meta"]["program"] == "x" and tab["columns"] == ["t", "a", "b"] and
            len(tab["runs"]) == 2
          and tab["runs"][0]["a"].tolist() == [2, 4]), "read_dat of CRLF lines: %s" % tab
    os.mkfifo(os.path.join(tmp, "fifo.dat"))
    for what, path, exc in (("a FIFO", os.path.join(tmp, "fifo.dat"), ValueError),
                            ("a device", "/dev/zero", ValueError), ("a folder", tmp, ValueError),
                            ("a file descriptor", 0, TypeError)):
        refused("read_dat: " + what, lambda: vlastab.read_dat(path), exc,
                *(["not a regular file"] if exc is ValueError else []))


# the PyTorch recorder: a tiny random attention-like module; its trace is the projections
try:
    import torch
    from vlastab.torch_trace import TraceRecorder, capture
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch is absent from %s (Debian: apt-get "
                                 "install python3-torch): the recorder is not tested" %
                                 sys.executable)
if torch is not None:
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


Hh, dh, Tt = 2, 4, 50
LAYERS = {"layer%d" % i: {"q": "blocks.%d.q_proj" % i, "k": "blocks.%d.k_proj" % i,
                          "v": "blocks.%d.v_proj" % i, "beta": "blocks.%d.b_proj" % i}
          for i in range(2)}
one = {"layer0": LAYERS["layer0"]}


def rig():
    """the module and its input, the same numbers every call"""
    torch.manual_seed(0)
    net = Net(Hh * dh, Hh)
    return net, torch.randn(1, Tt, Hh * dh)


@needs_torch
def test_recorder_writes_the_projections_and_refuses_bad_traces(tmp_path):
    tmp = str(tmp_path)
    net, xin = rig()
    layers = LAYERS
    with TraceRecorder(net, heads=Hh, layers=layers) as rec, torch.no_grad():
        net(xin)
    dirs = rec.save(os.path.join(tmp, "torch"))
    q = np.load(os.path.join(dirs[0], "q.npy"))
    want = net.blocks[0].q_proj(xin)[0].detach().numpy().reshape(Tt, Hh, dh).transpose(1, 0, 2)
    assert q.shape == (Hh, Tt, dh) and np.array_equal(q, want.astype(np.float32)), \
        "layer0 q.npy is not the projection per head"
    beta = np.load(os.path.join(dirs[1], "beta.npy"))
    assert beta.shape == (Hh, Tt) and beta.min() >= 0 and beta.max() <= 1, "beta.npy shape/range"
    p = subprocess.run([os.path.join(BIN, "vla-statenorm"), "--model", "delta", "--stream",
                        "trace:" + dirs[1], "--d", str(dh), "--ref", "f64"],
                       capture_output=True, text=True)
    assert (p.returncode == 0 and "# runs: %d" % Hh in p.stdout and "# steps: %d" % Tt in p.stdout
          and "beta.npy" in p.stdout), ("vla-statenorm on the recorded trace: %d %s" % (
              p.returncode, p.stderr))

    # save() never writes through a link: a folder whose q, k, v link to another trace (as
    # tools/decay-trace.py made them) gets files of its own, and the other trace is untouched
    one = {"layer0": layers["layer0"]}
    with TraceRecorder(net, heads=Hh, layers=one) as rec1, torch.no_grad():
        net(xin)
    src, dst = os.path.join(tmp, "src"), os.path.join(tmp, "dst")
    os.makedirs(src)
    os.makedirs(dst)
    before = {}
    for n in ("q", "k", "v"):
        np.save(os.path.join(src, n + ".npy"), np.zeros((1, 3, 2)))
        before[n] = open(os.path.join(src, n + ".npy"), "rb").read()
        os.symlink(os.path.join(src, n + ".npy"), os.path.join(dst, n + ".npy"))
    rec1.save(dst)
    assert all(open(os.path.join(src, n + ".npy"), "rb").read() == before[n] for n in before), \
        "save() wrote through a link into the source trace"
    assert (not any(os.path.islink(os.path.join(dst, n + ".npy")) for n in before) and
          np.array_equal(np.load(os.path.join(dst, "q.npy")), q)), "save() left a link or no data"
    assert not [f for f in os.listdir(dst) if f.endswith(".tmp")], "save() left a temporary"
    # a layer's folder that is a link is refused, the layer names that leave the folder too
    two = os.path.join(tmp, "two")
    os.makedirs(two)
    os.symlink(src, os.path.join(two, "layer0"))
    refused("save() into a linked layer folder", lambda: rec.save(two), ValueError,
            "layer0: a symbolic link")
    assert (all(open(os.path.join(src, n + ".npy"), "rb").read() == before[n] for n in before) and
          not os.path.exists(os.path.join(two, "layer1"))), "a refused save() wrote something"
    for name in ("../../x", "/tmp/x", "a/b", "a\0b", "", "..", ".", "a\nb"):
        refused("layer name %r" % name, lambda: TraceRecorder(net, Hh, {name: one["layer0"]}),
                ValueError, "a layer name is one folder name")
    refused("layer name 5", lambda: TraceRecorder(net, Hh, {5: one["layer0"]}), TypeError,
            "layer 5")
    for what, kw, exc, word in (("heads=0", dict(heads=0), ValueError, "heads=0"),
                                ("heads=2.0", dict(heads=2.0), TypeError, "heads=2.0"),
                                ("no layers", dict(layers={}), ValueError, "layers"),
                                ("a role of no submodule", dict(layers={"l": dict(
                                    one["layer0"], q="blocks.9.q_proj")}), ValueError,
                                 "l/q: no submodule 'blocks.9.q_proj'")):
        def make(kw=kw):
            a = dict(heads=Hh, layers=one)
            a.update(kw)
            with TraceRecorder(net, **a), torch.no_grad():
                net(xin)
        refused("TraceRecorder: " + what, make, exc, word)
    refused("batch_index beyond the batch", lambda: make(dict(batch_index=3)), ValueError,
            "batch_index 3 is outside the batch of 1")
    # what the trace loader would refuse is refused before anything is written: NaN, a beta < 0,
    # a number beyond float32, a stale trace file beside the new ones
    def record(mod, out):
        with TraceRecorder(net, heads=Hh, layers=one) as r, torch.no_grad():
            net(xin)
        r.data[("layer0", mod)] = out
        return r
    qn = q.copy()
    qn[1, 4, 2] = np.nan
    for what, role, arr, words in (
            ("NaN", "q", qn, ["q.npy: NaN at [1, 4, 2]"]),
            ("beta < 0", "beta", beta - 2, ["beta.npy: ", "at [0, 0] is outside [0, inf]"]),
            ("Inf", "k", np.full(q.shape, np.inf, np.float32), ["k.npy: Inf at [0, 0, 0]"]),
            ("k of other steps", "k", q[:, :3], ["k.npy: shape (2, 3, 4), expected (2, 50, 4)"])):
        r1 = record(role, arr)
        out1 = os.path.join(tmp, "bad-" + role)
        refused("save() of " + what, lambda: r1.save(out1), ValueError, *words)
        assert not os.path.exists(out1), "a refused save() made %s" % out1
    os.makedirs(os.path.join(tmp, "stale"))
    np.save(os.path.join(tmp, "stale", "g.npy"), np.ones((2, 50, 4)))
    refused("save() beside a stale g.npy", lambda: rec1.save(os.path.join(tmp, "stale")),
            ValueError, "stale/g.npy: a trace file this recorder did not record")
    with TraceRecorder(net, heads=Hh, layers=one), torch.no_grad():
        warned("a module that runs twice", lambda: (net(xin), net(xin)),
               "layer0/q: the module ran again")
    for what, x3, exc, word in (
            ("a 4-dimensional output", torch.zeros(1, 1, 5, 8), ValueError, "l/q: output of shape"),
            ("an output that is no tensor", [1], TypeError, "l/q: "),
            ("a complex output", torch.zeros(1, 5, 8, dtype=torch.complex64), TypeError, "l/q: "),
            ("an output of no steps", torch.zeros(1, 0, 8), ValueError, "q.npy: shape (2, 0, 4)"),
            ("an output of no features", torch.zeros(1, 5, 0), ValueError,
             "q.npy: shape (2, 5, 0)")):
        class Odd(torch.nn.Module):
            def forward(self, x, out=x3):
                return out

        def odd_save(odd=torch.nn.Sequential(Odd())):
            with TraceRecorder(odd, 2, {"l": {"q": "0", "k": "0", "v": "0"}}) as r:
                odd(xin)
            r.save(os.path.join(tmp, "odd"))
        refused("TraceRecorder: " + what, odd_save, exc, word)
        assert not os.path.exists(os.path.join(tmp, "odd")), "%s: a folder was made" % what

    # save(model=) writes model.txt, which the programs take the model and its settings from;
    # a model or setting the programs would refuse is refused before anything is written
    mdir = os.path.join(tmp, "withmodel")
    rec1.save(mdir, model="delta", settings={"beta": 0.5, "keynorm": False})
    txt = open(os.path.join(mdir, "model.txt")).read()
    assert (txt.splitlines()[1:] == ["model delta", "set beta=0.5", "set keynorm=off"] and
          txt.startswith("#")), "model.txt: %r" % txt
    p = subprocess.run([os.path.join(BIN, "vla-statenorm"), "--stream", "trace:" + mdir],
                       capture_output=True, text=True)
    assert (p.returncode == 0 and "# model: delta (from %s/model.txt" % mdir in p.stdout and
          " beta=0.5 " in p.stdout), ("vla-statenorm on save(model=): %d %s" % (p.returncode,
                                                                            p.stderr))
    for what, kw, exc, words in (
            ("an unknown model", dict(model="nosuch"), ValueError, ["unknown model 'nosuch'"]),
            ("a bad setting", dict(model="gdn", settings={"scale": -1}), ValueError,
             ["scale = -1"]),
            ("an unknown setting", dict(model="gdn", settings={"nosuch": 1}), ValueError,
             ["'nosuch' is not a constant"]),
            ("a line break in a value", dict(model="gdn", settings={"features": "id\nmodel la"}),
             ValueError, ["line breaks"]),
            ("a line break in a name", dict(model="gdn", settings={"scale\nx": 1}), ValueError,
             ["line breaks"]),
            ("a line break in the model", dict(model="gdn\nset scale=1"), ValueError,
             ["unknown model"]),
            ("settings without a model", dict(settings={"scale": 1}), ValueError,
             ["without model="])):
        out1 = os.path.join(tmp, "badmodel")
        refused("save() with " + what, lambda: rec1.save(out1, **kw), exc, *words)
        assert not os.path.exists(out1), "save() with %s made %s" % (what, out1)
    refused("save() beside a stale model.txt", lambda: rec1.save(mdir), ValueError,
            "withmodel/model.txt: a trace file this recorder did not record")


@needs_torch
def test_capture(tmp_path):
    tmp = str(tmp_path)
    net, xin = rig()
    # capture(): values a layer computes inline, the heads split off; nothing outside a recorder

    class Inline(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.p = torch.nn.Linear(Hh * dh, 3 * Hh * dh + Hh)

        def forward(self, x):
            B, T, _ = x.shape
            q, k, v, g = self.p(x).split([Hh * dh] * 3 + [Hh], -1)
            for n, t in (("q", q), ("k", k), ("v", v)):
                capture(n, t.view(B, T, Hh, dh))
            return capture("logdecay", -torch.nn.functional.softplus(g))  # (B, T, H)

    inl = Inline()
    with torch.no_grad():
        inl(xin)  # no recorder: nothing happens
        with TraceRecorder(heads=Hh) as rec2:
            lg = inl(xin)
    idir = os.path.join(tmp, "inline")
    rec2.save(idir, model="mamba2")
    assert (np.array_equal(np.load(os.path.join(idir, "logdecay.npy")), lg[0].numpy().T) and
          np.load(os.path.join(idir, "q.npy")).shape == (Hh, Tt, dh)), "captured logdecay.npy"
    p = subprocess.run([os.path.join(BIN, "vla-check"), "trace:" + idir, "--precisions", "f32",
                        "--forms", "seq", "--report", "none"], capture_output=True, text=True)
    assert (p.returncode == 0 and "# model: mamba2 (from " in p.stdout and "\nmamba2 f32 sm seq "
          in p.stdout and "\nla " not in p.stdout), ("vla-check of a captured trace: %d %s" % (
              p.returncode, p.stderr))
    def cap(t, role="q", layer=None, layers=None):
        with TraceRecorder(net, heads=Hh, layers=layers) as r:
            capture(role, t, layer=layer)
        return r
    two = {"a": {}, "b": {}}
    for what, f, exc, word in (
            ("capture of (B, T, H d)", lambda: cap(torch.zeros(1, 5, Hh * dh)), ValueError,
             "layer0/q: shape (1, 5, 8), expected (B, T, 2, dim)"),
            ("capture of a scalar as 4-D", lambda: cap(torch.zeros(1, 5, Hh, 2), "beta"),
             ValueError, "expected (B, T, 2)"),
            ("capture of an unknown role", lambda: cap(torch.zeros(1, 5, Hh, 2), "w"), ValueError,
             "unknown role w"),
            ("capture without layer=", lambda: cap(torch.zeros(1, 5, Hh, 2), layers=two),
             ValueError, "say which (layer=...)"),
            ("capture of a hooked role", lambda: cap(torch.zeros(1, 5, Hh, 2), layers=one),
             ValueError, "recorded by the hook on blocks.0.q_proj"),
            ("capture of no tensor", lambda: cap([1.0]), TypeError, "not a real tensor"),
            ("hooks without the model", lambda: TraceRecorder(heads=Hh, layers=one), ValueError,
             "hooks on submodules need the model"),
            ("save() of no q, k, v", lambda: cap(torch.zeros(1, 5, Hh, 2)).save(
                os.path.join(tmp, "nokv")), RuntimeError, "no k, v recorded")):
        refused(what, f, exc, word)


@needs_torch
def test_trace_md_worked_examples(tmp_path):
    tmp = str(tmp_path)
    # docs/trace.md's worked examples of the gated family, run as written there: vlastab's binary64
    # run of each module's trace gives the module's own read-out o within d T u (u = 2^-24: the
    # module computes in float32; a wrong mapping, scale or normalization is off by order 1), and
    # the documented vla-check command checks model.txt's model and no other
    doc = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs",
                            "trace.md")).read()
    ran = []
    for m in re.finditer(r"```python\n(.*?)```\n", doc, re.S):
        code = m.group(1)
        saved = re.search(r'rec\.save\("([\w-]+)", model="(\w+)"\)', code)
        if not saved:
            continue
        name, model = saved.groups()
        cmd = re.search(r"\n    \$ python3 (\w+\.py) && vla-check trace:%s([^\n]*)\n" % name,
                        doc[m.end():])
        ex = tempfile.mkdtemp(prefix="doc-", dir=tmp)
        here = os.getcwd()
        os.chdir(ex)
        try:
            ns = {"__name__": "__main__"}
            exec(compile(code, cmd.group(1) if cmd else name, "exec"), ns)
        finally:
            os.chdir(here)
        tdir = os.path.join(ex, name)
        arrs = {n: np.load(os.path.join(tdir, n + ".npy")).astype(np.float64)
                for n in ("q", "k", "v", "u", "beta", "decay", "logdecay", "a", "b")
                if os.path.exists(os.path.join(tdir, n + ".npy"))}
        H_, T_, d_ = arrs["q"].shape
        r = vlastab.run(arrs.pop("q"), arrs.pop("k"), arrs.pop("v"), model=model,
                        precision="f64", reference=False, **arrs)
        o = ns["o"][0].numpy().astype(np.float64).transpose(1, 0, 2)  # (B, T, H, dv) -> (H, T, dv)
        err = np.linalg.norm(r["o"] - o) / np.linalg.norm(o)
        assert err < d_ * T_ * 2.0 ** -24, ("docs/trace.md, %s: vlastab's o differs from the "
              "module's by %g (bound d T u = %g)" % (model, err, d_ * T_ * 2.0 ** -24))
        p = subprocess.run([os.path.join(BIN, "vla-check"), "trace:" + tdir, "--report", "none"] +
                           (cmd.group(2).split() if cmd else []), capture_output=True, text=True)
        rows = [l.split()[0] for l in p.stdout.splitlines() if l.strip() and l[0] != "#"]
        assert (cmd and p.returncode == 0 and "\n# model: %s (from %s/model.txt)\n" % (model, tdir)
              in p.stdout and rows and set(rows) == {model}), ("docs/trace.md, %s: vla-check %s: "
              "exit %d, rows of %s: %s" % (model, cmd.group(2) if cmd else "(no command)",
                                           p.returncode, sorted(set(rows)), p.stderr[-300:]))
        ran.append(model)
    # every model of the gated family (the model table's gate column) has one, and no other
    gated = [m for m in vlastab.models() if vlastab._L.vla_model_gate(
        vlastab._parse("vla_model_parse", m, "model"))]
    assert sorted(ran) == sorted(gated), ("docs/trace.md's worked examples: %s, the gated family "
          "(the model table's gate column): %s" % (ran, gated))


def decay_trace(*args):
    return subprocess.run([sys.executable, os.path.join(HERE, "..", "decay-trace.py")] +
                          list(args), capture_output=True, text=True)


def test_decay_trace_copies_and_refuses(tmp_path):
    tmp = str(tmp_path)
    with open(os.path.join(tmp, "bad.dat"), "w") as f:  # a file where a folder is named
        f.write("x")
    # tools/decay-trace.py copies q, k, v (and beta), never links them: a later writer into its
    # folder cannot reach the source; a link an older version left there is replaced, not followed
    dsrc, ddst = os.path.join(tmp, "dsrc"), os.path.join(tmp, "ddst")
    os.makedirs(dsrc)
    os.makedirs(ddst)
    gd = RNG5.uniform(0.3, 0.9, (2, 8, 4))
    for n, a in (("q", x5 := RNG5.standard_normal((2, 8, 4))), ("k", x5), ("v", x5), ("g", gd),
                 ("beta", gd[:, :, 0])):
        np.save(os.path.join(dsrc, n + ".npy"), a)
    src_bytes = {n: open(os.path.join(dsrc, n), "rb").read() for n in os.listdir(dsrc)}
    os.symlink(os.path.join(dsrc, "q.npy"), os.path.join(ddst, "q.npy"))  # an older version's link

    p = decay_trace(dsrc, ddst, "2", "4")
    assert p.returncode == 0 and "decay.npy: 2 heads x 8 steps" in p.stdout, \
        "decay-trace: %s" % p.stderr
    assert (all(not os.path.islink(os.path.join(ddst, n)) and
              open(os.path.join(ddst, n), "rb").read() == src_bytes[n]
              for n in ("q.npy", "k.npy", "v.npy", "beta.npy"))), \
        "decay-trace: not copies of the source"
    assert np.allclose(np.load(os.path.join(ddst, "decay.npy")), np.exp(np.log(gd).mean(axis=2))), \
        "decay-trace: decay.npy is not the geometric mean of the gates"
    p = subprocess.run([os.path.join(BIN, "vla-statenorm"), "--stream", "trace:" + ddst],
                       capture_output=True, text=True)  # model.txt: delta with delta_form=decay
    assert (p.returncode == 0 and "# model: delta (from %s/model.txt" % ddst in p.stdout and
            " delta_form=decay " in p.stdout and "warning" not in p.stderr), \
        "decay-trace's model.txt: %d %s" % (p.returncode, p.stderr)
    for n in ("q", "k", "v", "beta"):  # a later writer into that folder
        np.save(os.path.join(ddst, n + ".npy"), np.ones(3))
    assert {n: open(os.path.join(dsrc, n), "rb").read() for n in os.listdir(dsrc)} == src_bytes, \
        "a writer into decay-trace's folder rewrote the source trace"
    gn = gd.copy()
    gn[1, 2, 3] = np.nan
    os.makedirs(os.path.join(tmp, "dnan"))
    for n in ("q", "k", "v"):
        os.link(os.path.join(dsrc, n + ".npy"), os.path.join(tmp, "dnan", n + ".npy"))
    np.save(os.path.join(tmp, "dnan", "g.npy"), gn)
    with open(os.path.join(tmp, "dcut.npy"), "wb") as f:
        f.write(open(os.path.join(dsrc, "g.npy"), "rb").read()[:200])
    os.makedirs(os.path.join(tmp, "dcut"))
    os.replace(os.path.join(tmp, "dcut.npy"), os.path.join(tmp, "dcut", "g.npy"))
    os.makedirs(os.path.join(tmp, "dstale"))
    np.save(os.path.join(tmp, "dstale", "u.npy"), x5)
    for what, args, words in (
            ("a NaN gate", [os.path.join(tmp, "dnan"), os.path.join(tmp, "o1")],
             ["g.npy: nan at [1, 2, 3]: gates must be in (0, 1]"]),
            ("a truncated g.npy", [os.path.join(tmp, "dcut"), os.path.join(tmp, "o2")],
             ["g.npy: truncated data"]),
            ("C = 0", [dsrc, os.path.join(tmp, "o3"), "0"], ["chunk sizes are integers in 1..8"]),
            ("C beyond T", [dsrc, os.path.join(tmp, "o4"), "9"],
             ["chunk sizes are integers in 1..8"]),
            ("C = x", [dsrc, os.path.join(tmp, "o5"), "x"], ["C: x: chunk sizes are integers"]),
            ("DST = SRC", [dsrc, dsrc, "2"], ["the source trace itself"]),
            ("a stale u.npy in DST", [dsrc, os.path.join(tmp, "dstale"), "2"],
             ["dstale/u.npy: a trace file of another trace"]),
            ("no g.npy", [ddst, os.path.join(tmp, "o6")], ["g.npy: cannot read"]),
            ("DST a file", [dsrc, os.path.join(tmp, "bad.dat"), "2"], ["bad.dat/: cannot write"])):
        p = decay_trace(*args)
        assert (p.returncode != 0 and "Traceback" not in p.stderr and
                all(w in p.stderr for w in words) and
                not [f for f in os.listdir(tmp) if f[0] == "o"]), \
            "decay-trace, %s: exit %d, %s" % (what, p.returncode, p.stderr.strip()[-300:])
    assert {n: open(os.path.join(dsrc, n), "rb").read() for n in os.listdir(dsrc)} == src_bytes, \
        "a refused decay-trace wrote into the source"


def test_last_partial_chunk():
    # A last chunk of T mod C tokens (vla_model_finish: the kernels mask the rows past T): gdn in
    # binary64 against Gated DeltaNet written here from its equations (L2-normalized q and k, S_t =
    # a_t S_{t-1} (I - beta k k^T) + beta v k^T, o = d^-1/2 S q), T = 45: chunk:16 ends with 13
    # tokens, chunk:64 is one chunk of 45. Every token within d T u of the float64 loop (the two
    # round differently, each within about d t u of the exact).
    rng5 = np.random.default_rng(3)
    H5, T5, d5 = 2, 45, 8
    q5, k5, v5 = (rng5.standard_normal((H5, T5, d5)) for _ in range(3))
    b5 = 1 / (1 + np.exp(-rng5.standard_normal((H5, T5))))
    g5 = -0.2 * np.abs(rng5.standard_normal((H5, T5)))
    want = np.zeros((H5, T5, d5))
    for h in range(H5):
        S = np.zeros((d5, d5))
        for t in range(T5):
            kk = k5[h, t] / np.sqrt(k5[h, t] @ k5[h, t] + 1e-6)
            qq = q5[h, t] / np.sqrt(q5[h, t] @ q5[h, t] + 1e-6)
            S = np.exp(g5[h, t]) * S @ (np.eye(d5) - b5[h, t] * np.outer(kk, kk)) \
                + b5[h, t] * np.outer(v5[h, t], kk)
            want[h, t] = S @ qq / np.sqrt(d5)
    for form in ("seq", "chunk:16", "chunk:64"):
        got = vlastab.run(q5, k5, v5, model="gdn", precision="f64", beta=b5, logdecay=g5, form=form,
                          reference=False)["o"]
        err = np.abs(got - want).max() / np.abs(want).max()
        assert err <= d5 * T5 * 2.0 ** -53, \
            ("gdn %s, T = 45: every token within d T u of the loop: %.3g"
              % (form, err))
