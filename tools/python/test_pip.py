"""test_pip.py: `pip install --no-build-isolation --no-index .` of the repository into a fresh
virtual environment (python3 -m venv --system-site-packages: numpy and torch from Debian), then
used as a user would, from outside the tree and with none of the source tree's variables: import
vlastab loads the package's own libvlastab (vlastab/_lib) and gives the source tree's bits, judge()
and `python -m vlastab.check` run the package's own vla-check (vlastab/_bin), and the programs'
console scripts run them with the bits of bin/'s. Then the wheel: `pip wheel -w DIR .`, installed
into a second fresh environment (no pip of its own: Debian's installs into it), imports, loads its
own library and finds its own vla-check. The build's make is a no-op on a built tree (make test
builds it first), so the test costs pip's work: copying, stripping, zipping, unzipping.

Run under pytest by tests/test_python.c (make test) from the repository root, the programs of
$VLA_BIN_DIR (else bin); skipped, saying why, where numpy, python3-venv, pip, setuptools or wheel
is missing. One test: every step's failure is gathered (a pip that fails to install fails every
use after it) and the test fails naming them all, its output printed on stderr.
"""
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BIN = os.path.abspath(os.environ.get("VLA_BIN_DIR", os.path.join(REPO, "bin")))
fails = []


def need():
    """the Debian packages this path needs (make deps installs them), or a skip naming them"""
    import importlib.util
    missing = [pkg for mod, pkg in (("numpy", "python3-numpy"), ("ensurepip", "python3-venv"),
                                    ("pip", "python3-pip"), ("setuptools", "python3-setuptools"),
                                    ("wheel", "python3-wheel"))
               if importlib.util.find_spec(mod) is None]
    if missing:
        pytest.skip("%s lacks %s (make deps installs %s)" % (sys.executable, ", ".join(
            m.split("-", 1)[1] for m in missing), " ".join(missing)))
    v = subprocess.run([sys.executable, "-c", "import setuptools; print(setuptools.__version__)"],
                       stdout=subprocess.PIPE, universal_newlines=True).stdout.strip()
    if tuple(int(x) for x in (v.split(".") + ["0", "0"])[:2] if x.isdigit()) < (61, 0):
        pytest.skip("setuptools %s reads no pyproject.toml [project] table (61 or newer)" % (
            v or "?"))


def check(what, ok, detail=""):
    if not ok:
        fails.append(what)
        sys.stderr.write("pip: FAIL %s\n%s" % (what, "".join("    %s\n" % l for l in
                                                            str(detail).splitlines()[-25:])))
    return ok


def env_clean():
    """the user's environment: no source tree on PYTHONPATH, no library or programs' folder named"""
    env = {k: v for k, v in os.environ.items() if k not in (
        "PYTHONPATH", "VLASTAB_LIB", "VLA_BIN_DIR", "LD_LIBRARY_PATH", "MAKEFLAGS", "MFLAGS",
        "MAKELEVEL", "PIP_REQUIRE_VIRTUALENV", "PIP_INDEX_URL", "PIP_FIND_LINKS")}
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1", PYTHONDONTWRITEBYTECODE="1")
    return env


def sh(args, cwd, **kw):
    return subprocess.run(args, cwd=cwd, env=env_clean(), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, **kw)


def venv(path, pip=True):
    """a fresh venv that sees Debian's numpy and torch; without pip of its own (pip=False) its
    python -m pip is Debian's, which installs into it all the same (3 s less)"""
    cmd = [sys.executable, "-m", "venv", "--system-site-packages"] + ([] if pip else ["--without-pip"])
    r = sh(cmd + [path], cwd=os.path.dirname(path))
    check(" ".join(cmd[1:] + [path]), r.returncode == 0, r.stdout)
    return os.path.join(path, "bin")


# in the venv, from a folder outside the tree: where vlastab and its parts are, the bits of a run
PROBE = r"""
import json, os, sys, numpy as np, vlastab
from vlastab import programs, verdict
x = np.linspace(-1, 1, 2 * 7 * 4).reshape(2, 7, 4)
r = vlastab.run(x, x[:, ::-1].copy(), x * 0.5, model="vla3", precision="f16")
print(json.dumps({"file": vlastab.__file__, "lib": vlastab.library._name,
                  "check": verdict.vla_check_path(), "shipped": programs.shipped(),
                  "o": r["o"].tolist()}))
"""


# docs/kernel.md's example, smaller: a correct kernel, judged by the package's own vla-check
JUDGE = r"""
try:
    import torch
except ImportError:
    print("no torch: judge() not run")
    raise SystemExit(0)
import vlastab
from vlastab.examples import gdn_chunk
torch.manual_seed(0)
q, k, v = (torch.randn(1, 64, 1, 16) for _ in range(3))
beta = torch.randn(1, 64, 1).sigmoid()
g = -0.1 * torch.nn.functional.softplus(torch.randn(1, 64, 1))
vd = vlastab.judge(gdn_chunk, q, k, v, g=g, beta=beta, model="gdn", dtype=torch.bfloat16,
                   form="chunk:16", grad=False)
print(vd)
vd.assert_ok()
print("judge: ok")
"""


def probe_source():
    """the same run through the source tree's binding and build/libvlastab.so"""
    r = subprocess.run([sys.executable, "-c", PROBE.replace("verdict.vla_check_path()", "''")],
                       cwd=REPO, env=dict(env_clean(), PYTHONPATH=os.path.join(REPO, "tools/python"),
                                          VLASTAB_LIB=os.path.join(REPO, "build/libvlastab.so")),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    assert r.returncode == 0, "the source tree's binding failed:\n" + r.stderr
    import json
    return json.loads(r.stdout.splitlines()[-1])


def table(lines):
    """a .dat table's numbers: its comment lines (date, host, the command) left out"""
    return [l for l in lines.splitlines() if l and not l.startswith("#")]


def use(vbin, where, src, label, full=True):
    """the installed package, used from `where` (outside the tree) with vbin/python; full: judge()
    and the programs' console scripts too"""
    import json
    py = os.path.join(vbin, "python")
    site = os.path.dirname(os.path.dirname(vbin))
    r = sh([py, "-c", PROBE], cwd=where)
    if not check("%s: import vlastab and vlastab.run in the venv, from %s" % (label, where),
                 r.returncode == 0, r.stdout):
        return
    got = json.loads(r.stdout.splitlines()[-1])
    pkg = os.path.dirname(got["file"])
    check("%s: vlastab is imported from the venv (%s), not the tree" % (label, got["file"]),
          got["file"].startswith(site + os.sep) and not got["file"].startswith(REPO + os.sep))
    check("%s: the binding loads the package's own library (%s)" % (label, got["lib"]),
          got["lib"] == os.path.join(pkg, "_lib", "libvlastab.so.0"))
    check("%s: judge() runs the package's own vla-check (%s)" % (label, got["check"]),
          got["check"] == os.path.join(pkg, "_bin", "vla-check"))
    with open(os.path.join(pkg, "_abi.py")) as f, \
            open(os.path.join(REPO, "tools", "python", "vlastab", "_abi.py")) as g:
        check("%s: the package's vlastab/_abi.py is the tree's (make's, from lib/vlastab.h)"
              % label, f.read() == g.read())
    check("%s: the package's library gives the source tree's bits (vla3, f16)" % label,
          got["o"] == src["o"], "%s\n%s" % (got["o"], src["o"]))
    progs = sorted(p for p in os.listdir(BIN) if p.startswith("vla-"))
    check("%s: the package ships every program of %s" % (label, BIN), got["shipped"] == progs,
          "shipped %s\nbuilt %s" % (got["shipped"], progs))
    for p in got["shipped"]:
        check("%s: a console script %s" % (label, p), os.access(os.path.join(vbin, p), os.X_OK))
    r = sh([py, "-m", "vlastab.check", "--help"], cwd=where)
    check("%s: python -m vlastab.check --help is vla-check's --help, exit 0" % label,
          r.returncode == 0 and r.stdout.startswith("Usage: vla-check"), r.stdout)
    if not full:
        return
    r = sh([py, "-c", JUDGE], cwd=where)
    check("%s: judge() of vlastab.examples.gdn_chunk through the package's vla-check is ok (or "
          "torch is absent)" % label, r.returncode == 0 and ("judge: ok" in r.stdout or
                                                           "no torch" in r.stdout), r.stdout)
    r = sh([py, "-m", "vlastab.check", "--no-such-option"], cwd=where)
    check("%s: python -m vlastab.check passes on vla-check's exit status (2 for a bad option)"
          % label, r.returncode == 2, r.stdout)
    ver = subprocess.run([os.path.join(BIN, "vla-check"), "--version"], stdout=subprocess.PIPE,
                         universal_newlines=True).stdout
    r = sh([os.path.join(vbin, "vla-check"), "--version"], cwd=where)
    check("%s: the console script vla-check --version says %r" % (label, ver.strip()),
          r.returncode == 0 and r.stdout == ver, r.stdout)
    # an experiment through its console script (PATH without the venv), against bin/'s own table
    args = ["--model", "vla3", "--precision", "f16", "--d", "8", "--steps", "200",
            "--checkpoints", "4"]
    mine = sh([os.path.join(vbin, "vla-statenorm")] + args, cwd=where)
    theirs = subprocess.run([os.path.join(BIN, "vla-statenorm")] + args, cwd=where,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            universal_newlines=True)
    check("%s: vla-statenorm's console script writes bin/vla-statenorm's table" % label,
          mine.returncode == 0 and table(mine.stdout) == table(theirs.stdout) != [],
          mine.stdout + theirs.stdout)


def test_pip_install_and_wheel():
    import time
    need()
    assert os.path.isfile(os.path.join(REPO, "pyproject.toml")), "no pyproject.toml in %s" % REPO
    del fails[:]
    t0 = time.time()
    src = probe_source()
    tmp = tempfile.mkdtemp(prefix="vlastab-pip.")
    took = []
    try:
        where = os.path.join(tmp, "elsewhere")
        os.makedirs(where)
        # 1. pip install . from the tree, into a fresh venv with its own pip, as a user makes one
        vbin = venv(os.path.join(tmp, "venv"))
        t = time.time()
        r = sh([os.path.join(vbin, "pip"), "install", "--no-build-isolation", "--no-index",
                "--no-cache-dir", REPO], cwd=where)
        took.append("pip install . %.1f s" % (time.time() - t))
        if check("pip install --no-build-isolation --no-index %s into a fresh venv" % REPO,
                 r.returncode == 0, r.stdout):
            use(vbin, where, src, "pip install .")
        # 2. a wheel, built into a folder and installed into a second fresh venv
        wheels = os.path.join(tmp, "wheels")
        t = time.time()
        r = sh([os.path.join(vbin, "pip"), "wheel", "--no-build-isolation", "--no-index",
                "--no-deps", "--no-cache-dir", "-w", wheels, REPO], cwd=where)
        took.append("pip wheel %.1f s" % (time.time() - t))
        whl = [f for f in os.listdir(wheels) if f.endswith(".whl")] if os.path.isdir(wheels) else []
        if check("pip wheel -w DIR %s writes one wheel for this platform (%s)" % (REPO, whl),
                 r.returncode == 0 and len(whl) == 1 and not whl[0].endswith("-none-any.whl"),
                 r.stdout):
            vbin2 = venv(os.path.join(tmp, "venv2"), pip=False)
            r = sh([os.path.join(vbin2, "python"), "-m", "pip", "install", "--no-index",
                    "--no-cache-dir", os.path.join(wheels, whl[0])], cwd=where)
            if check("pip install %s into a second fresh venv" % whl[0], r.returncode == 0,
                     r.stdout):
                use(vbin2, where, src, "the wheel", full=False)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("note: test_pip took %.1f s (%s)" % (time.time() - t0, ", ".join(took)))
    assert not fails, "%d failed (output above):\n%s" % (len(fails), "\n".join(fails))
