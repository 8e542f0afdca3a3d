"""The C programs (vla-check, vla-statenorm, ...) as the Python package finds and runs them. A wheel
(`pip install .`) ships them inside the package, in vlastab/_bin; `make install` writes their folder
here; in the source tree they are bin/. path(name) is where a program is, run(name) replaces this
process with it; every program has a console script (the wheel's bin/vla-check, ...) that calls
run(), and `python -m vlastab.check ARGS` is vla-check ARGS.
"""
import os
import sys

_BINDIR = "@BINDIR@"  # make install writes the programs' folder here
_HERE = os.path.dirname(os.path.abspath(__file__))


def _is_program(p, script_ok=False):
    """an executable file, and not a script unless script_ok ($VLA_BIN_DIR's, which may be a stand-
    in): PATH and a venv's bin/ hold the console scripts that call run(), which must not find
    themselves"""
    if not (os.path.isfile(p) and os.access(p, os.X_OK)):
        return False
    if script_ok:  # but not the console script running now
        return os.path.realpath(p) != os.path.realpath(sys.argv[0] or ".")
    try:
        with open(p, "rb") as f:
            return f.read(2) != b"#!"
    except OSError:
        return False


def folders():
    """the folders looked in, in order: $VLA_BIN_DIR, the package's own _bin (a pip install), the
    installed programs' folder (make install), the source tree's bin/"""
    cands = [os.environ.get("VLA_BIN_DIR", ""), os.path.join(_HERE, "_bin")]
    if not _BINDIR.startswith("@"):
        cands.append(_BINDIR)
    cands.append(os.path.normpath(os.path.join(_HERE, "..", "..", "..", "bin")))
    return [c for c in cands if c]


def path(name):
    """the absolute path of program `name` (e.g. "vla-check"): the first of folders() that has it,
    else PATH. FileNotFoundError naming where it looked."""
    env = os.environ.get("VLA_BIN_DIR", "")
    for c in folders():
        p = os.path.join(c, name)
        if _is_program(p, script_ok=bool(env) and c == env):
            return os.path.abspath(p)
    for d in os.environ.get("PATH", "").split(os.pathsep):
        p = os.path.join(d or ".", name)
        if _is_program(p):
            return os.path.abspath(p)
    raise FileNotFoundError("%s not found (set VLA_BIN_DIR to the programs' folder, make, pip "
                            "install . or make install); looked in %s and PATH"
                            % (name, ", ".join(folders())))


def run(name, args=None):
    """replaces this process with program `name` and args (default: this command's arguments); its
    argv[0] is its full path, which its tables record and vla-sweep finds its siblings by"""
    try:
        exe = path(name)
    except FileNotFoundError as e:
        sys.stderr.write("%s\n" % e)
        sys.exit(1)
    args = sys.argv[1:] if args is None else list(args)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execv(exe, [exe] + args)
    except OSError as e:
        sys.stderr.write("%s: cannot run %s: %s\n" % (name, exe, e.strerror or e))
        sys.exit(1)


def shipped():
    """the programs in the package's _bin (those of a pip install; empty in the source tree)"""
    d = os.path.join(_HERE, "_bin")
    return sorted(f for f in os.listdir(d) if _is_program(os.path.join(d, f))) \
        if os.path.isdir(d) else []


def _entry(name):
    def main():
        run(name)
    main.__name__ = name.replace("-", "_")
    main.__doc__ = "the console script %s: runs the program with this command's arguments" % name
    return main


def __getattr__(attr):
    """vla_check, vla_statenorm, ...: the console scripts' entry points (setup.py names one per
    program the wheel ships)"""
    if attr.startswith("vla_"):
        return _entry(attr.replace("_", "-"))
    raise AttributeError("module 'vlastab.programs' has no attribute %r" % attr)
