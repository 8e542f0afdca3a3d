#!/usr/bin/python3
"""mamba3-1017-trace.py: state-spaces/mamba issue 1017's inputs (tools/mamba3-1017.py) as a
vlastab trace (/tmp/m3/trace) and kernels' outputs for vla-check --outputs (/tmp/m3/out-*): a correct
one in bfloat16 (the exact recurrence on the kernel's input dtypes: q, k, v, lambda in bfloat16,
dt, A dt and the angles in binary32; o rounded to bfloat16), the same in binary32, and one whose
rotation is a token late (binary32 and bfloat16)"""
import sys, os
import numpy as np
sys.path[:0] = ["tests", "tools/python", "tools"]
from vlastab.torch_trace import _write  # a link at a file's place is replaced, not followed
import test_mamba3 as m3
mamba3_1017 = __import__("mamba3-1017")
issue_inputs, bf16, f32 = mamba3_1017.issue_inputs, mamba3_1017.bf16, mamba3_1017.f32
x = issue_inputs()
T = "/tmp/m3/trace"
def folder(D):
    """D made (its parents too), refused where it is a link: the files go into no other folder"""
    if os.path.islink(D) or os.path.islink(os.path.dirname(D)):
        sys.exit("mamba3-1017-trace.py: %s is a link: remove it" % D)
    os.makedirs(D, exist_ok=True)
folder(T)
for key in ("q", "k", "v", "beta", "decay", "logdecay", "u"):
    _write(os.path.join(T, key + ".npy"), x[key])
_write(os.path.join(T, "model.txt"), b"model mamba3\n")
y = dict(x)
for key in ("q", "k", "v", "beta"):
    y[key] = bf16(x[key])
for key in ("logdecay", "decay", "u"):
    y[key] = f32(x[key])
def save(name, o, bits):
    D = "/tmp/m3/out-" + name
    folder(D)
    if bits:
        b = np.asarray(bf16(o), np.float32).view(np.uint32) >> 16
        _write(os.path.join(D, "o.npy"), b.astype("<u2"))
        _write(os.path.join(D, "dtype.txt"), b"bfloat16\n")
    else:
        _write(os.path.join(D, "o.npy"), np.asarray(o, np.float32))
o_ok, _ = m3.mamba3_seq(**y)
o_late, _ = m3.mamba3_seq(**y, slip="late")
save("ok-bf16", o_ok, 1); save("late-bf16", o_late, 1)
o_ok32, _ = m3.mamba3_seq(**x)
o_late32, _ = m3.mamba3_seq(**x, slip="late")
save("ok-f32", o_ok32, 0); save("late-f32", o_late32, 0)
print("written")
