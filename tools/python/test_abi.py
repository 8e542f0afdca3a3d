"""test_abi.py: the binding's structures and constants are lib/vlastab.h's, and a change in C that
the binding was not made from fails loudly. Every function the binding declares the arguments
of takes them in the header's prototype, type for type. Every ctypes structure the binding
passes is vlastab/_abi.py's, which tools/python/mkabi.py made from the header; every field's
offset and size and every constant's value agree with what the C compiler says of the header;
_abi.py is what the generator makes of the header now. Then the header changed in a copy (a
field added in the middle of vla_config, a constant's value changed): the build's check of the
old reading no longer compiles, naming the field and the constant, and a binding made from the
changed header refuses the library built from the old one at import; a declaration the
generator cannot read is an error naming it. Run under pytest by tests/test_python.c from the repository root (CC: the C
compiler, default cc).
"""
import ctypes
import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest

import vlastab
from vlastab import _abi

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
HEADER = os.path.join(REPO, "lib", "vlastab.h")
MKABI = os.path.join(HERE, "mkabi.py")
CC = shlex.split(os.environ.get("CC", "cc"))


def sh(args, **kw):
    return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, **kw)


def errors(out):
    """a compiler's error lines"""
    return "\n".join(l for l in out.splitlines() if "error" in l)[-800:]


def mkabi(header, where):
    """mkabi.py on header into where/_abi.py and where/abi.c; the process"""
    os.makedirs(where, exist_ok=True)
    return sh([sys.executable, MKABI, "--cc", " ".join(CC), header,
               os.path.join(where, "_abi.py"), os.path.join(where, "abi.c")])


def after(anchor, text):
    """an edit of the header: text inserted after anchor's first place"""
    return lambda s: s.replace(anchor, anchor + text, 1)


# a field added in the middle of vla_config, into the padding before a double (the size stays)
ADD_FIELD = after("    int d, dv;\n", "    int added;\n")


def header_copy(tmp, name, edit):
    """lib/vlastab.h and vlalists.h copied into tmp/name, vlastab.h through edit (text -> text,
    which must change it); the copy's path"""
    d = os.path.join(tmp, name)
    os.makedirs(d)
    for f in ("vlastab.h", "vlalists.h"):
        shutil.copy(os.path.join(REPO, "lib", f), d)
    with open(HEADER) as f:
        text = f.read()
    new = edit(text)
    assert new != text, "%s: the edit changed nothing" % name
    with open(os.path.join(d, "vlastab.h"), "w") as f:
        f.write(new)
    return os.path.join(d, "vlastab.h")


def test_structures_are_abi_py_s():
    """every structure the binding declares is _abi.py's (none written by hand beside it)"""
    own = {n: t for n, t in vars(vlastab).items()
           if isinstance(t, type) and issubclass(t, ctypes.Structure)}
    assert own and all(t.__module__ == "vlastab._abi" for t in own.values()), \
        "structures of the binding not from vlastab/_abi.py: %s" % sorted(
            n for n, t in own.items() if t.__module__ != "vlastab._abi")
    assert set(_abi.STRUCTS) >= {"vla_config", "vla_input", "vla_error", "vla_counts",
                                 "vla_grads"}, "_abi.py's structures: %s" % (_abi.STRUCTS,)


def test_layout_and_constants_as_the_compiler_says(tmp_path):
    """every field's offset and size, every struct's size and every constant"""
    lines = ["#include <stdio.h>", "#include <stddef.h>", '#include "vlastab.h"', "int main(void)",
             "{"]
    want = []
    for s in _abi.STRUCTS:
        t = getattr(_abi, s)
        lines.append('    printf("%s %%zu\\n", sizeof(%s));' % (s, s))
        want.append("%s %d" % (s, ctypes.sizeof(t)))
        for f, _ in t._fields_:
            lines.append('    printf("%s.%s %%zu %%zu\\n", offsetof(%s, %s), '
                         'sizeof(((%s *)0)->%s));' % (s, f, s, f, s, f))
            want.append("%s.%s %d %d" % (s, f, getattr(t, f).offset, getattr(t, f).size))
    for n in _abi.CONSTANTS:
        lines.append('    printf("%s %%lld\\n", (long long)%s);' % (n, n))
        v = getattr(_abi, n)
        want.append("%s %d" % (n, v - 2 ** 64 if v >= 2 ** 63 else v))
    lines += ["    return 0;", "}"]
    src, exe = str(tmp_path / "layout.c"), str(tmp_path / "layout")
    with open(src, "w") as f:
        f.write("\n".join(lines) + "\n")
    r = sh(CC + ["-std=gnu11", "-I", os.path.join(REPO, "lib"), "-o", exe, src])
    assert r.returncode == 0, "the layout program does not compile: %s" % errors(r.stdout)
    got = sh([exe]).stdout.split("\n")[:-1]
    diff = [(w, g) for w, g in zip(want, got) if w != g]
    assert len(got) == len(want) and not diff, "the binding's layout and constants differ from " \
        "the C compiler's (binding, C): %s" % (diff[:5] or "%d lines, %d" % (len(want), len(got)))


@pytest.fixture(scope="module")
def now(tmp_path_factory):
    """what mkabi.py makes of lib/vlastab.h now, and its check compiled against it"""
    d = str(tmp_path_factory.mktemp("abi") / "now")
    r = mkabi(HEADER, d)
    assert r.returncode == 0, "mkabi.py on lib/vlastab.h: %s" % r.stdout
    return d


def test_abi_py_is_made_from_the_header_now(now):
    """the binding's _abi.py is what the generator makes of lib/vlastab.h now (make keeps it
    so), and the check it makes compiles against the header"""
    with open(os.path.join(now, "_abi.py")) as f, open(_abi.__file__) as g:
        assert f.read() == g.read(), "%s is not what mkabi.py makes of lib/vlastab.h now (make " \
            "remakes it)" % _abi.__file__
    r = sh(CC + ["-std=gnu11", "-Wall", "-Wextra", "-Werror", "-I", os.path.join(REPO, "lib"),
                 "-c", os.path.join(now, "abi.c"), "-o", os.path.join(now, "abi.o")])
    assert r.returncode == 0, "the check of lib/vlastab.h's reading does not compile against " \
        "it: %s" % errors(r.stdout)


# in a copy of the header, a field added to vla_config, a constant's value changed, a field
# added at vla_input's end: the old reading's check stops the build, naming what moved
@pytest.mark.parametrize("name, edit, words", [
    ("field", ADD_FIELD, ["vla_config.features: not at offset"]),
    ("constant", lambda s: s.replace("VLA_ERANGE = -2,", "VLA_ERANGE = -9,", 1),
     ["VLA_ERANGE is not -2"]),
    ("input", after("    double lgs", ", scale"), ["vla_input: not 88 bytes"])])
def test_a_changed_header_stops_the_build(now, tmp_path, name, edit, words):
    h = header_copy(str(tmp_path), name, edit)
    r = sh(CC + ["-std=gnu11", "-I", os.path.dirname(h), "-c", os.path.join(now, "abi.c"),
                 "-o", str(tmp_path / (name + ".o"))])
    assert r.returncode != 0 and all(w in r.stdout for w in words), \
        "%s changed in the header: the build's check of the old reading compiled (exit %d) " \
        "or did not say %s: %s" % (name, r.returncode, words, errors(r.stdout))


def test_a_binding_of_a_changed_header_is_refused_at_import(tmp_path):
    """a binding made from the changed header (vla_config with the added field) against the
    library built from this one: refused at import, naming both digests"""
    tmp = str(tmp_path)
    h = header_copy(tmp, "bound", ADD_FIELD)
    pkg = os.path.join(tmp, "pkg")
    shutil.copytree(os.path.dirname(vlastab.__file__), os.path.join(pkg, "vlastab"),
                    ignore=shutil.ignore_patterns("__pycache__", "_lib", "_bin"))
    r = mkabi(h, os.path.join(tmp, "bound-gen"))
    assert r.returncode == 0, "mkabi.py on the header with the field: %s" % r.stdout
    shutil.copy(os.path.join(tmp, "bound-gen", "_abi.py"), os.path.join(pkg, "vlastab"))
    with open(os.path.join(pkg, "vlastab", "_abi.py")) as f:
        assert '("added", ctypes.c_int)' in f.read(), \
            "the changed header's _abi.py has no field added"
    env = dict(os.environ, PYTHONPATH=pkg, VLASTAB_LIB=vlastab.library._name,
               PYTHONDONTWRITEBYTECODE="1")
    r = sh([sys.executable, "-c", "import vlastab"], env=env, cwd=tmp)
    assert r.returncode != 0 and "ImportError" in r.stdout and \
        "was built from another lib/vlastab.h" in r.stdout, \
        "a binding made from a changed header imported against the old library (exit %d): %s" % (
            r.returncode, r.stdout[-600:])


# what the generator does not read is an error naming the declaration, never a guess
@pytest.mark.parametrize("name, field, words", [
    ("bitfield", "int bits : 3;", ["int bits : 3;", "bit-field"]),
    ("fnptr", "void (*cb)(void);", ["(*cb)", "function pointer"]),
    ("type", "off_t where;", ["off_t where;", "type off_t unknown"])])
def test_the_generator_refuses_what_it_does_not_read(tmp_path, name, field, words):
    r = mkabi(header_copy(str(tmp_path), name, after("    long den_inf_t;", "\n    " + field)),
              str(tmp_path / (name + "-gen")))
    assert r.returncode != 0 and all(w in r.stdout for w in ["vla_counts"] + words), \
        "mkabi.py on a header with %s: exit %d, expected a refusal saying %s: %s" % (
            name, r.returncode, words, r.stdout[-400:])


def _c_param_type(param, enums, opaque):
    """the ctypes type a parameter of the header's prototype takes ("const vla_config *cfg")"""
    text = re.sub(r"\bconst\b", "", param).strip()
    m = re.match(r"^([A-Za-z_][A-Za-z_0-9 ]*?)\s*(\**)\s*([A-Za-z_][A-Za-z_0-9]*)?$", text)
    assert m, "a parameter this test does not read: %r" % param
    base, stars = m.group(1).strip(), len(m.group(2))
    scalars = {"int": ctypes.c_int, "long": ctypes.c_long, "unsigned": ctypes.c_uint,
               "double": ctypes.c_double, "size_t": ctypes.c_size_t}
    if stars == 0 and base in scalars:
        return scalars[base]
    if stars == 0 and base in enums:
        return ctypes.c_int
    if stars == 0 and base == "vla_grad_input":  # a callback: the binding's CFUNCTYPE
        return "callback"
    if stars == 1 and base in _abi.STRUCTS:
        return ctypes.POINTER(getattr(_abi, base))
    if stars == 1 and base == "double":
        return ctypes.POINTER(ctypes.c_double)
    if stars == 1 and base == "char":
        return ctypes.c_char_p
    if (stars == 1 and (base == "void" or base in opaque)) or (stars == 2 and base in opaque):
        return ctypes.c_void_p if stars == 1 else ctypes.POINTER(ctypes.c_void_p)
    raise AssertionError("a parameter this test does not read: %r" % param)


def test_the_binding_s_calls_are_the_header_s_prototypes():
    """every library function whose arguments the binding declares (argtypes), vla_blocks_*'s
    among them, takes in the header the types the binding passes, parameter for parameter: a
    changed prototype (a parameter added, a long for an int, another structure) fails here"""
    with open(HEADER) as f:
        text = re.sub(r"/\*.*?\*/", " ", f.read(), flags=re.S)
    enums = set(re.findall(r"typedef\s+enum\s*\{[^}]*\}\s*([A-Za-z_0-9]+)\s*;", text))
    opaque = set(re.findall(r"typedef\s+struct\s+([A-Za-z_0-9]+)\s+\1\s*;", text))
    calls = {n: f for n, f in vars(vlastab.library).items()
             if not n.startswith("_") and getattr(f, "argtypes", None) is not None}
    assert {"vla_blocks_new", "vla_blocks_advance", "vla_blocks_get", "vla_blocks_free",
            "vla_trajectory_run"} <= set(calls), "the binding declares %s" % sorted(calls)
    for name, f in sorted(calls.items()):
        m = re.search(r"[\s*]%s\s*\(([^)]*)\)\s*;" % name, text)
        assert m, "%s: the binding calls it; the header has no prototype" % name
        params = [p for p in (s.strip() for s in m.group(1).split(",")) if p and p != "void"]
        want = [_c_param_type(p, enums, opaque) for p in params]
        got = list(f.argtypes)
        assert len(got) == len(want), "%s: the binding passes %d arguments, the header takes " \
            "%d (%s)" % (name, len(got), len(want), ", ".join(params))
        for p, w, g in zip(params, want, got):
            ok = issubclass(g, ctypes._CFuncPtr) if w == "callback" else g == w
            assert ok, "%s: the binding passes %s for the header's %r (%s)" % (
                name, g.__name__, p, getattr(w, "__name__", w))
