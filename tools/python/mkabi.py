"""mkabi.py: the Python binding's structures and constants, read from lib/vlastab.h, so that the
header is their one source. Writes vlastab/_abi.py (every enum constant and integer #define of the
header and its lists, and a ctypes.Structure per struct of STRUCTS, field for field) and a C file
that the library compiles: a _Static_assert on the offset, size and type of every field, the size
of every struct and the value of every constant, as ctypes lays them out here, so that a reading
the compiler does not share stops the build; and vla_abi_digest(), the digest of that layout, which
the binding compares with its own at import (a _abi.py made from another header is refused).
The header is read through the C preprocessor (CC -E -dD), which expands vlalists.h's X-tables and
drops the comments; what this reader does not know (a bit-field, a nested struct, a function
pointer, an unknown type) is an error naming the declaration.
usage: mkabi.py [--cc CC] HEADER OUT_PY OUT_C
"""
import ctypes
import os
import re
import shlex
import subprocess
import sys

# the structures the binding passes to the library, by their C names
STRUCTS = ("vla_error", "vla_config", "vla_input", "vla_counts", "vla_grads", "vla_arrays",
           "vla_trajectory")
BASE = {"int": "c_int", "unsigned": "c_uint", "unsigned int": "c_uint", "long": "c_long",
        "unsigned long": "c_ulong", "char": "c_char", "unsigned char": "c_ubyte",
        "double": "c_double", "float": "c_float", "size_t": "c_size_t", "uint64_t": "c_uint64",
        "int64_t": "c_int64", "uint32_t": "c_uint32", "int32_t": "c_int32", "uint16_t": "c_uint16"}
# the digest of a layout: computed the same way here and, at import, in _abi.py (its source is
# written there as it stands here)
DIGEST_SRC = '''
def digest():
    """the layout of STRUCTS (each field's offset, size and ctypes type) and the constants, as
    ctypes lays them out in this interpreter: what the library's vla_abi_digest() holds"""
    import hashlib
    g = globals()
    text = ["%s %d" % (n, g[n]) for n in CONSTANTS]
    for s in STRUCTS:
        t = g[s]
        text.append("%s %d %d" % (s, ctypes.sizeof(t), ctypes.alignment(t)))
        text += ["  %s %d %d %s" % (f, getattr(t, f).offset, getattr(t, f).size, ty.__name__)
                 for f, ty in t._fields_]
    return hashlib.sha256("\\n".join(text).encode()).hexdigest()[:32]
'''


def fail(why):
    sys.exit("mkabi: %s" % why)


def preprocess(cc, header):
    """the text of HEADER and of the headers beside it (vlalists.h), preprocessed, #defines kept"""
    here = os.path.dirname(os.path.abspath(header))
    cmd = shlex.split(cc) + ["-E", "-dD", "-I", here, "-x", "c", header]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, universal_newlines=True)
    if r.returncode:
        fail("%s failed (exit %d)" % (" ".join(cmd), r.returncode))
    out, ours = [], False
    for line in r.stdout.splitlines():
        m = re.match(r'# \d+ "(.*)"', line)
        if m:
            ours = not m.group(1).startswith("<") and \
                os.path.dirname(os.path.abspath(m.group(1))) == here
        elif ours:
            out.append(line)
    return "\n".join(out)


def value(expr, known, what):
    """an enum value or #define: an integer, a constant named before, - + | << and parentheses"""
    e = re.sub(r"\b(0x[0-9a-fA-F]+|[0-9]+)[uUlL]+\b", r"\1", expr.strip())
    if not re.fullmatch(r"[\w\s()|+\-<>]+", e) or not e:
        fail("%s = %s: not an integer this reader evaluates" % (what, expr))
    try:
        return int(eval(e, {"__builtins__": {}}, dict(known)))  # noqa: S307 (checked above)
    except Exception:  # noqa: BLE001
        fail("%s = %s: not an integer this reader evaluates" % (what, expr))


def constants(text):
    """every enum constant and integer object-like #define, in the header's order"""
    known = {}
    code = "\n".join(l for l in text.splitlines() if not l.startswith("#"))
    for m in re.finditer(r"^#define (VLA_\w+) (.+)$", text, re.M):
        if re.fullmatch(r"\(?-?(0x[0-9a-fA-F]+|[0-9]+)[uUlL]*\)?", m.group(2).strip()):
            known[m.group(1)] = value(m.group(2), known, m.group(1))
    enums = {}
    for m in re.finditer(r"(typedef\s+)?\benum\s*(\w*)\s*\{([^}]*)\}\s*(\w*)\s*;", code):
        nxt = 0
        for item in filter(None, (i.strip() for i in m.group(3).split(","))):
            name, _, expr = (p.strip() for p in item.partition("="))
            if not re.fullmatch(r"\w+", name):
                fail("enum %s: %r is not an enumerator" % (m.group(4) or m.group(2), item))
            nxt = value(expr, known, name) if expr else nxt
            known[name] = nxt
            nxt += 1
        if m.group(1) and m.group(4):
            enums[m.group(4)] = True
    return known, enums


def struct_body(code, name):
    m = re.search(r"typedef\s+struct\s*\w*\s*\{([^{}]*)\}\s*%s\s*;" % name, code)
    if not m:
        fail("typedef struct { ... } %s; not found (or it nests braces, which this reader does not "
             "read)" % name)
    return m.group(1)


def fields(name, body, enums, known):
    """(field, ctypes type expression, C type of &field) for each field of the struct, in order"""
    out = []
    for decl in filter(None, (d.strip() for d in body.split(";"))):
        decl = " ".join(decl.split())
        m = re.fullmatch(r"((?:const |volatile )*)((?:unsigned |signed )?\w+) (.+)", decl)
        if not m or ":" in decl or "(" in decl or m.group(2) in ("struct", "union", "enum"):
            fail("%s: '%s;' is no declaration this reader knows (a bit-field, a function pointer "
                 "or a nested struct)" % (name, decl))
        qual, base = m.group(1), m.group(2)
        if base in BASE:
            ct = "ctypes." + BASE[base]
        elif base in enums:
            ct = "ctypes.c_int"  # an enum's constants are ints (the C type's size is checked)
        elif base in STRUCTS:
            ct = base
        elif base == "void":
            ct = None  # void *: c_void_p below
        else:
            fail("%s: '%s;': type %s unknown to this reader (mkabi.py BASE)" % (name, decl, base))
        for dcl in m.group(3).split(","):
            d = re.fullmatch(r"\s*(\**)\s*(\w+)\s*(?:\[\s*(\w+)\s*\])?\s*", dcl)
            if not d:
                fail("%s: '%s' in '%s;' is no declarator this reader knows" % (name, dcl, decl))
            stars, field, n = d.groups()
            t = ct
            if len(stars) > 1 or (ct is None and len(stars) != 1):
                fail("%s: '%s;': a pointer to a pointer, or void, which this reader does not read"
                     % (name, decl))
            if stars:
                t = "ctypes.c_void_p" if ct is None else "ctypes.POINTER(%s)" % t
            if n is not None:
                if not n.isdigit() and n not in known:
                    fail("%s: '%s;': %s is no constant of the header" % (name, decl, n))
                t = "(%s * %d)" % (t, int(n) if n.isdigit() else known[n])
                cty = "%s%s (*)[%s]" % (qual, base, n)
            else:
                cty = "%s%s %s*" % (qual, base, stars)
            out.append((field, t, cty))
    return out


# the C file's head: one assertion per field, naming the field and what _abi.py says of it
C_HEAD = r"""/* abi.c: made by tools/python/mkabi.py from vlastab.h by make; not edited.
 * The layout of tools/python/vlastab/_abi.py as ctypes lays it out, checked by the compiler
 * field by field; vla_abi_digest() is its digest, which the binding checks at import. */
#include <stddef.h>
#include "vlastab.h"

#define VLA_ABI_FIELD(S, f, ty, off, size)                                         \
    _Static_assert(offsetof(S, f) == (off) && sizeof(((S *)0)->f) == (size) &&     \
                   _Generic(&((S *)0)->f, ty: 1, default: 0),                      \
                   #S "." #f ": not at offset " #off ", of size " #size            \
                   " and type " #ty " (_abi.py)")"""


def module_text(known, layout):
    """_abi.py: the constants, a ctypes.Structure per struct, digest()"""
    py = ['"""_abi.py: made by tools/python/mkabi.py from vlastab.h at build time (make); not',
          "edited. The header's constants and the structures the binding passes to the library;",
          'the library\'s vla_abi_digest() is digest() of the layout its compiler checked."""',
          "import ctypes", "", "CONSTANTS = %r" % (tuple(known),), "STRUCTS = %r" % (STRUCTS,), ""]
    py += ["%s = %d" % (k, v) for k, v in known.items()]
    for s in STRUCTS:
        py += ["", "", "class %s(ctypes.Structure):" % s,
               "    _fields_ = [%s]" % ",\n                ".join(
                   '("%s", %s)' % (f, t) for f, t, _ in layout[s])]
    return "\n".join(py) + "\n" + DIGEST_SRC


def check_text(known, layout, mod):
    """abi.c: the assertions of mod's layout (the module made of module_text) and its digest"""
    c = [C_HEAD]
    for s in STRUCTS:
        t = mod[s]
        size, align = ctypes.sizeof(t), ctypes.alignment(t)
        c.append('_Static_assert(sizeof(%s) == %d && _Alignof(%s) == %d, "%s: not %d bytes aligned '
                 'at %d (_abi.py)");' % (s, size, s, align, s, size, align))
        c += ["VLA_ABI_FIELD(%s, %s, %s, %d, %d);" % (s, f, cty, getattr(t, f).offset,
                                                      getattr(t, f).size)
              for f, _, cty in layout[s]]
    for k, v in known.items():
        c.append('_Static_assert(%s == %d%s, "%s is not %d (_abi.py)");' % (
            k, v, "ull" if v >= 2 ** 63 else "ll" if abs(v) >= 2 ** 31 else "", k, v))
    c += ["", 'const char *vla_abi_digest(void) { return "%s"; }' % mod["digest"](), ""]
    return "\n".join(c)


def write(path, text):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def main(argv):
    cc = "cc"
    if len(argv) > 1 and argv[0] == "--cc":
        cc, argv = argv[1], argv[2:]
    if len(argv) != 3:
        fail("usage: mkabi.py [--cc CC] HEADER OUT_PY OUT_C")
    header, out_py, out_c = argv
    text = preprocess(cc, header)
    known, enums = constants(text)
    code = "\n".join(l for l in text.splitlines() if not l.startswith("#"))
    layout = {s: fields(s, struct_body(code, s), enums, known) for s in STRUCTS}
    py = module_text(known, layout)
    mod = {}
    exec(compile(py, out_py, "exec"), mod)  # noqa: S102 (the module just made)
    write(out_py, py)
    write(out_c, check_text(known, layout, mod))


if __name__ == "__main__":
    main(sys.argv[1:])
