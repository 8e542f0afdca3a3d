#!/usr/bin/env python3
"""decay-trace.py: a delta trace with a scalar decay per token (decay.npy, for --set
delta_form=decay) made from a trace's row gates: a_t = exp(mean_i log g_t,i), the geometric mean
of the step's gates; and the range of the cumulative log-decay gamma within chunks of C tokens,
where exp(-gamma) (the factorization q exp(gamma), k exp(-gamma) some kernels use) overflows
binary16 (gamma < -ln 65504 = -11.09). Standard library only (docs/forms.md, docs/forms-findings.md).
DST_DIR/model.txt names the model that reads the result, delta with delta_form=decay, so that the
programs run it without --set (docs/trace.md).
q, k, v (and beta, when SRC_DIR has one) are copied, not linked: a later writer into DST_DIR
(vlastab's TraceRecorder.save, np.save) must not rewrite the source trace through a link. Every
file is written to a temporary beside it and renamed over it, so a link left in DST_DIR by an
older version is replaced, not written through. DST_DIR may not be SRC_DIR, nor hold a u.npy,
g.npy or beta.npy of its own (the programs would read it with the new files).

Usage: tools/decay-trace.py SRC_DIR DST_DIR [C...]   (q, k, v copied from SRC_DIR; C: 16 64)"""
import ast
import math
import os
import secrets
import struct
import sys


def read(path):
    try:
        with open(path, 'rb') as f:
            return f.read()
    except OSError as e:
        sys.exit(f'{path}: cannot read: {e.strerror}')


def load(path):
    """a little-endian float64 C-order .npy of shape (heads, T, dim): (shape, values)"""
    b = read(path)
    if b[:6] != b'\x93NUMPY' or len(b) < 10 or b[6] != 1:
        sys.exit(f'{path}: not a .npy file of format 1.0')
    hl = struct.unpack('<H', b[8:10])[0]
    try:
        h = ast.literal_eval(b[10:10 + hl].decode())
        descr, fortran, shape = h['descr'], h['fortran_order'], tuple(h['shape'])
    except (ValueError, SyntaxError, UnicodeDecodeError, KeyError, TypeError):
        sys.exit(f'{path}: a .npy header that is not a dict of descr, fortran_order and shape')
    if descr != '<f8' or fortran:
        sys.exit(f'{path}: {descr}{", fortran_order True" if fortran else ""}: float64 in C order '
                 'only')
    if len(shape) != 3 or min(shape) < 1:
        sys.exit(f'{path}: shape {shape}, expected (heads, T, dim), each >= 1')
    n = math.prod(shape)
    if len(b) - 10 - hl < 8 * n:
        sys.exit(f'{path}: truncated data: {8 * n} bytes expected, {len(b) - 10 - hl} present')
    return shape, struct.unpack(f'<{n}d', b[10 + hl:10 + hl + 8 * n])


def write(path, data):
    """data to PATH without following a link there: a temporary beside it, renamed over it"""
    d, base = os.path.split(path)
    tmp = os.path.join(d, f'.{base}.{secrets.token_hex(6)}.tmp')
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    try:
        with os.fdopen(fd, 'wb') as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)  # replaces a link itself, never its target
    except BaseException:
        os.unlink(tmp)
        raise


def save(path, shape, values):
    hdr = "{'descr': '<f8', 'fortran_order': False, 'shape': (%s), }" % ''.join(
        f'{x}, ' for x in shape).rstrip(' ')
    hdr += ' ' * (63 - (10 + len(hdr)) % 64) + '\n'
    write(path, b'\x93NUMPY\x01\x00' + struct.pack('<H', len(hdr)) + hdr.encode() +
          struct.pack(f'<{len(values)}d', *values))


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__.split('\n\n')[1])
    src, dst = sys.argv[1], sys.argv[2]
    try:
        Cs = [int(c) for c in sys.argv[3:]] or [16, 64]
    except ValueError:
        sys.exit(f'C: {" ".join(sys.argv[3:])}: chunk sizes are integers >= 1')
    (H, T, D), g = load(os.path.join(src, 'g.npy'))
    bad = [i for i, x in enumerate(g) if not 0 < x <= 1]  # NaN too
    if bad:
        i = bad[0]
        sys.exit(f'{src}/g.npy: {g[i]!r} at [{i // D // T}, {i // D % T}, {i % D}]: gates must be '
                 'in (0, 1]')
    if min(Cs) < 1 or max(Cs) > T:
        sys.exit(f'C: {" ".join(map(str, Cs))}: chunk sizes are integers in 1..{T} (the steps)')
    if os.path.isdir(dst) and os.path.samefile(src, dst):
        sys.exit(f'{dst}: the source trace itself: write the decay trace to another folder')
    files = ['q.npy', 'k.npy', 'v.npy'] + (['beta.npy'] if os.path.exists(
        os.path.join(src, 'beta.npy')) else [])
    for f in ('u.npy', 'g.npy', 'beta.npy'):
        if f not in files and os.path.lexists(os.path.join(dst, f)):
            sys.exit(f'{dst}/{f}: a trace file of another trace (the programs would read it with '
                     'the new files): remove it, or write elsewhere')
    data = {f: read(os.path.join(src, f)) for f in files}
    lg = [sum(math.log(x) for x in g[i * D:(i + 1) * D]) / D for i in range(H * T)]
    dec = [math.exp(x) for x in lg]
    f = ''
    try:
        os.makedirs(dst, exist_ok=True)
        for f in files:
            write(os.path.join(dst, f), data[f])
        f = 'decay.npy'
        save(os.path.join(dst, f), (H, T), dec)
        f = 'model.txt'
        write(os.path.join(dst, f), b'# written by tools/decay-trace.py (docs/trace.md)\n'
              b'model delta\nset delta_form=decay\n')
    except OSError as e:
        sys.exit(f'{os.path.join(dst, f)}: cannot write: {e.strerror}')
    print(f'# {dst}/decay.npy: {H} heads x {T} steps, a_t in [{min(dec):.4f}, {max(dec):.4f}], '
          f'mean {sum(dec) / len(dec):.4f}')
    lim = -math.log(65504)
    print(f'# C  gamma_C min  max  mean (binary64)  chunks with gamma_C < {lim:.2f}')
    for C in Cs:
        ends = [sum(lg[h * T + c:h * T + c + C]) for h in range(H) for c in range(0, T - C + 1, C)]
        below = sum(e < lim for e in ends)
        print(f'{C} {min(ends):.2f} {max(ends):.2f} {sum(ends) / len(ends):.2f} '
              f'{below} of {len(ends)}')


main()
