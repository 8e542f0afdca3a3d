#!/usr/bin/env python3
# make-seeds.py: writes the fuzzers' seed corpora into tests/fuzz/seeds/<target>/: real .npy files
# and deliberately broken ones, stream specs, command lines, model settings. Deterministic; run it
# again after changing it (the seeds are committed so that `make fuzz` needs no Python).
import os, struct, math

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "seeds")


def npy(shape, vals=None, descr="<f8", version=1, order="False", header=None):
    """bytes of a .npy file; vals default to 0.5, 1.5, ... in the dtype"""
    n = 1
    for s in shape:
        n *= s
    if vals is None:
        vals = [0.5 + i for i in range(n)]
    if header is None:
        dims = "".join("%d, " % s for s in shape)
        dims = dims[:-2] if len(shape) > 1 else dims.rstrip(" ")
        header = "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }" % (descr, order, dims)
    pre = 10 if version == 1 else 12
    total = (pre + len(header) + 1 + 63) // 64 * 64
    header = header + " " * (total - pre - len(header) - 1) + "\n"
    h = header.encode("latin1")
    head = b"\x93NUMPY" + bytes([version, 0])
    head += struct.pack("<H", len(h)) if version == 1 else struct.pack("<I", len(h))
    code = {"f2": "e", "f4": "f", "f8": "d"}.get(descr[1:], "d")
    end = ">" if descr[0] == ">" else "<"
    body = b"".join(struct.pack(end + code, v) for v in vals)
    return head + h + body


def write(target, name, data):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def npy_seeds():
    for t in ("f2", "f4", "f8"):
        write("npy", "%s-1d" % t, npy((5,), descr="<" + t))
        write("npy", "%s-3d" % t, npy((2, 3, 4), descr="<" + t))
    write("npy", "f8-0d", npy(()))
    write("npy", "f8-empty", npy((0,)))
    write("npy", "f8-empty-3d", npy((2, 0, 4)))
    write("npy", "f8-v2", npy((2, 2), version=2))
    write("npy", "f8-v3", npy((2, 2), version=3))
    write("npy", "f8-nan-inf", npy((4,), [math.nan, math.inf, -math.inf, 1.0]))
    write("npy", "f8-subnormal", npy((3,), [5e-324, -2.2e-308, 1e-310]))
    write("npy", "f2-subnormal", npy((2,), [6e-8, -3e-5], descr="<f2"))
    write("npy", "native-order", npy((3,), descr="=f8"))
    write("npy", "dquotes", npy((3,), header='{"descr": "<f8", "fortran_order": False, "shape": (3,)}'))
    write("npy", "key-order", npy((3,), header="{'shape': (3,), 'fortran_order': False, 'descr': '<f8'}"))
    write("npy", "py2-long", npy((3,), header="{'descr': '<f8', 'fortran_order': False, 'shape': (3L,), }"))
    full = npy((2, 3, 4))
    write("npy", "trunc-data", full[:-5])
    write("npy", "trunc-header", full[:40])
    write("npy", "trunc-magic", full[:5])
    write("npy", "empty-file", b"")
    write("npy", "bad-magic", b"\x93NUMPZ" + full[6:])
    write("npy", "bad-version", full[:6] + b"\x07\x00" + full[8:])
    write("npy", "fortran", npy((2, 2), order="True"))
    write("npy", "big-endian", npy((2,), descr=">f8"))
    write("npy", "int-dtype", npy((2,), [1, 2], descr="<i8"))
    write("npy", "struct-dtype", npy((1,), header="{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (1,), }"))
    write("npy", "nine-dims", npy((1,) * 9))
    write("npy", "huge-shape", npy((1,), header="{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4), }"))
    write("npy", "overflow-dim", npy((1,), header="{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,), }"))
    write("npy", "int-not-tuple", npy((1,), header="{'descr': '<f8', 'fortran_order': False, 'shape': (5), }"))
    write("npy", "missing-shape", npy((1,), header="{'descr': '<f8', 'fortran_order': False}"))
    write("npy", "extra-key", npy((1,), header="{'descr': '<f8', 'fortran_order': False, 'shape': (1,), 'x': 1}"))
    write("npy", "header-len-lies", full[:8] + b"\xff\xff" + full[10:])
    # fuzz_npy's finding: a repeated key (now a format error)
    write("npy", "regress-repeated-shape", npy((5,), descr="<f4", header="{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 3), 'shape': (5,), }"))


def trace_seeds():
    def files(d, dv, heads=2, T=3, u=False, g=False, beta=None, **bad):
        f = npy((heads, T, d)) + npy((heads, T, d)) + npy((heads, bad.get("vT", T), dv))
        if u:
            f += npy((heads, T, d))
        if g:
            f += npy((heads, T, dv), [0.5] * (heads * T * dv))
        if beta == 2:
            f += npy((heads, T), [0.5] * (heads * T))
        elif beta == 3:
            f += npy((heads, T, 1), [0.5] * (heads * T))
        opt = (1 if u else 0) | (2 if g else 0) | (4 if beta else 0)
        return bytes([d - 1, dv - 1, opt]) + f

    write("trace", "qkv", files(2, 3))
    write("trace", "qkvu", files(2, 2, u=True))
    write("trace", "qkv-g-beta2", files(2, 2, g=True, beta=2))
    write("trace", "all-beta3", files(3, 2, u=True, g=True, beta=3))
    write("trace", "one-head-one-step", files(1, 1, heads=1, T=1))
    write("trace", "mismatched-T", files(2, 2, vT=4))
    nan = npy((1, 2, 2), [1.0, math.nan, 0.0, 0.0])
    write("trace", "nan", bytes([1, 1, 0]) + nan + nan + nan)
    write("trace", "f2-files", bytes([1, 1, 0]) + npy((1, 2, 2), descr="<f2") * 3)
    write("trace", "empty-T", bytes([1, 1, 0]) + npy((1, 0, 2)) * 3)
    # rates out of range (now range errors): a gate above 1, a negative beta
    write("trace", "gate-above-1", bytes([1, 1, 2]) + npy((1, 2, 2)) * 3 + npy((1, 2, 2), [0.5, 1.5, 0.5, 0.5]))
    write("trace", "beta-negative", bytes([1, 1, 4]) + npy((1, 2, 2)) * 3 + npy((1, 2), [0.5, -1.0]))


def stream_seeds():
    specs = ["gauss", "gauss:0.5", "gauss:1e-3", "lmlike", "lmlike:0.23", "subspace:4,0.01",
             "subspace:1,0", "repeat:7", "repeat:1", "mqar:8,4", "mqar:1,0", "trace:/nonexistent",
             "trace:", "gauss:", "gauss:x", "subspace:4", "mqar:8,4,2", "bogus:1", "repeat:-1",
             "gauss:1e400", "gauss:nan", "subspace:99,0.1", "mqar:9223372036854775807,0"]
    for i, s in enumerate(specs):
        write("stream", "%02d" % i, bytes([8, 8, 1]) + s.encode())
    write("stream", "d256-subspace", bytes([0, 0, 1]) + b"subspace:256,0.5")
    write("stream", "d0", bytes([0, 8, 1]) + b"gauss")


def cli_seeds():
    cmds = [
        "--model vla3 --stream lmlike --d 32 --steps 1000 --runs 4",
        "--model la --precision f16 --steps 1e4 --checkpoints 5",
        "--model vla1 --track sm-sym --set clip=5 --set nudge=off",
        "--model rls --track chol --set nudge=off --ref f64",
        "--precision bf16-f32 --track sr --set sr_seed=7",
        "--stream mqar:8,4 --d 16 --dv 8 --steps 100",
        "--stream subspace:4,0.01 --seed 9 --mode fast",
        "--out x.dat --resume",
        "--resume",
        "--help",
        "--version",
        "--alpha 0.5 --flag",
        "--alpha 2",
        "--d 0",
        "--d 300",
        "--steps 1e30",
        "--steps nan",
        "--runs -1",
        "--set lambda0",
        "--set =1",
        "--set period=0",
        "--model bogus",
        "--stream trace:/nonexistent",
        "--ref exact --ref-bits 64",
        "--backend cuda",
        "--bogus",
        "stray",
        "--model",
    ]
    for i, c in enumerate(cmds):
        write("cli", "%02d" % i, "\0".join(c.split(" ")))


def config_seeds():
    sets = [
        "lambda0=0.1", "eps_g=1e-6\0guard=off", "period=20\0per_eps=1e-3", "clip=5\0clamp=100",
        "renorm=10", "beta=0.5\0delta_form=decay", "features=id\0normalize=on", "sr_seed=12345",
        "nudge=off\0clamp_on=off", "period=1e10", "lambda0=nan", "beta=2", "bogus=1", "lambda0",
        "eps_o=0", "stab_eps=1e-300", "clamp_eps=1e308\0clamp=1e-308",
    ]
    for i, s in enumerate(sets):
        write("config", "%02d" % i, bytes([i % 5, i % 4, i % 36]) + s.encode())


npy_seeds()
trace_seeds()
stream_seeds()
cli_seeds()
config_seeds()
