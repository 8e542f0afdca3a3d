#!/usr/bin/env python3
"""decay-trace.py: a delta trace with a scalar decay per token (decay.npy, for --set
delta_form=decay) made from a trace's row gates: a_t = exp(mean_i log g_t,i), the geometric mean
of the step's gates; and the range of the cumulative log-decay gamma within chunks of C tokens,
where exp(-gamma) (the factorization q exp(gamma), k exp(-gamma) some kernels use) overflows
binary16 (gamma < -ln 65504 = -11.09). Standard library only (docs/forms.md, README.md).

Usage: tools/decay-trace.py SRC_DIR DST_DIR [C...]   (q, k, v linked from SRC_DIR; C: 16 64)"""
import ast
import math
import os
import struct
import sys


def load(path):
    """a little-endian float64 C-order .npy: (shape, values)"""
    b = open(path, 'rb').read()
    if b[:6] != b'\x93NUMPY':
        sys.exit(f'{path}: not a .npy file')
    hl = struct.unpack('<H', b[8:10])[0]
    h = ast.literal_eval(b[10:10 + hl].decode())
    if h['descr'] != '<f8' or h['fortran_order']:
        sys.exit(f'{path}: {h["descr"]}: float64 in C order only')
    n = math.prod(h['shape'])
    return h['shape'], struct.unpack(f'<{n}d', b[10 + hl:10 + hl + 8 * n])


def save(path, shape, values):
    hdr = "{'descr': '<f8', 'fortran_order': False, 'shape': (%s), }" % ''.join(
        f'{x}, ' for x in shape).rstrip(' ')
    hdr += ' ' * (63 - (10 + len(hdr)) % 64) + '\n'
    with open(path, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(hdr)) + hdr.encode())
        f.write(struct.pack(f'<{len(values)}d', *values))


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__.split('\n\n')[1])
    src, dst = sys.argv[1], sys.argv[2]
    Cs = [int(c) for c in sys.argv[3:]] or [16, 64]
    (H, T, D), g = load(os.path.join(src, 'g.npy'))
    if min(g) <= 0 or max(g) > 1:
        sys.exit(f'{src}/g.npy: gates must be in (0, 1]')
    lg = [sum(math.log(x) for x in g[i * D:(i + 1) * D]) / D for i in range(H * T)]
    os.makedirs(dst, exist_ok=True)
    for f in ('q.npy', 'k.npy', 'v.npy'):
        link = os.path.join(dst, f)
        if not os.path.lexists(link):
            os.symlink(os.path.abspath(os.path.join(src, f)), link)
    dec = [math.exp(x) for x in lg]
    save(os.path.join(dst, 'decay.npy'), (H, T), dec)
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
