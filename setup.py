"""setup.py: the build step of `pip install .` and `pip wheel .` (pyproject.toml holds the metadata).
It runs the project's own make (`make pip-build`: a no-op where build/ and bin/ are current, so a
built tree is shipped as it is) for libvlastab.so, the programs and vlastab/_abi.py (the binding's
structures and constants, made from lib/vlastab.h, packed with the package's other modules), and
copies the library and the programs into the package, vlastab/_lib/libvlastab.so.0 and
vlastab/_bin/vla-*, where the binding and judge() look first (vlastab/__init__.py,
vlastab/programs.py); each program gets a console script of its name. The copies lose their debug
sections (strip --strip-debug; the code is the same bytes), unless VLASTAB_STRIP=0. The wheel is
for this platform (the programs are native code).

Make runs with SAN=0, CUDA as the tree was built (the kernels' stamp in build/kernels/), else
CUDA=0 (no nvcc run: minutes less), and -jN for N processors; $CUDA and $VLASTAB_MAKEFLAGS (e.g.
"-j1 CC=clang") override. The setuptools files go to build/python/, beside make's.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

ROOT = os.path.dirname(os.path.abspath(__file__))
PYBUILD = os.path.join("build", "python")


def version():
    with open(os.path.join(ROOT, "lib", "vlastab.h")) as f:
        return re.search(r'^#define VLA_VERSION "([^"]+)"', f.read(), re.M).group(1)


def make_args():
    cuda = os.environ.get("CUDA")
    if not cuda:
        stamps = os.path.join(ROOT, "build", "kernels")
        cuda = "auto" if os.path.exists(os.path.join(stamps, "config.cuda")) else "0"
    jobs = "-j%d" % (os.cpu_count() or 1)
    return ["make", "-C", ROOT, "--no-print-directory", "SAN=0", "CUDA=" + cuda] + \
        shlex.split(os.environ.get("VLASTAB_MAKEFLAGS", jobs))


def make(target, quiet=False):
    """make TARGET in the tree, without the MAKEFLAGS of a make that runs pip (SAN=1 would send the
    build to build-san/); its stdout when quiet"""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    cmd = make_args() + [target]
    try:
        if quiet:
            return subprocess.run(cmd, env=env, check=True, stdout=subprocess.PIPE,
                                  universal_newlines=True).stdout
        print(" ".join(shlex.quote(c) for c in cmd), flush=True)
        subprocess.run(cmd, env=env, check=True)
    except FileNotFoundError:
        sys.exit("vlastab: make not found: the build needs make and a C compiler "
                 "(Debian: make deps, or apt-get install build-essential)")
    except subprocess.CalledProcessError as e:
        sys.exit("vlastab: %s failed (exit %d)" % (" ".join(cmd), e.returncode))


_SHIPS = []


def shipped():
    """(library, programs) that make pip-build makes, from make pip-names: paths in the tree"""
    if not _SHIPS:
        for line in make("pip-names", quiet=True).splitlines():
            if line.startswith("pip-ships: "):
                _SHIPS.extend(line.split()[1:])
        if len(_SHIPS) < 2:
            sys.exit("vlastab: make pip-names named no library and programs")
    return _SHIPS[0], _SHIPS[1:]


class BuildPy(build_py):
    """make pip-build, then build_py (which finds the _abi.py it made) and the library and programs
    copied into the package"""

    def run(self):
        make("pip-build")
        super().run()
        lib, progs = shipped()
        pkg = os.path.join(self.build_lib, "vlastab")
        strip = shutil.which("strip") if os.environ.get("VLASTAB_STRIP", "1") != "0" else None
        self._extra = []
        for src, dst in [(lib, os.path.join(pkg, "_lib", "libvlastab.so.0"))] + \
                [(p, os.path.join(pkg, "_bin", os.path.basename(p))) for p in progs]:
            src = os.path.join(ROOT, src)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            if os.path.exists(dst):
                os.unlink(dst)
            if strip:
                subprocess.run([strip, "--strip-debug", "-o", dst, src], check=True)
            else:
                shutil.copyfile(src, dst)
            os.chmod(dst, 0o755)
            self._extra.append(dst)

    def get_outputs(self, include_bytecode=1):
        return super().get_outputs(include_bytecode) + getattr(self, "_extra", [])


class BinaryDistribution(Distribution):
    """native code inside: a wheel for this platform, not py3-none-any"""

    def has_ext_modules(self):
        return True


def scripts():
    _, progs = shipped()
    return ["%s = vlastab.programs:%s" % (n, n.replace("-", "_"))
            for n in map(os.path.basename, progs)]


os.makedirs(os.path.join(ROOT, PYBUILD), exist_ok=True)
setup(
    version=version(),
    package_dir={"": "tools/python"},
    packages=["vlastab"],
    zip_safe=False,
    entry_points={"console_scripts": scripts()},
    cmdclass={"build_py": BuildPy},
    distclass=BinaryDistribution,
    options={"build": {"build_base": PYBUILD}, "egg_info": {"egg_base": PYBUILD}},
)
