"""The CI recipe of docs/ci.md run end to end (tests/test_python.c runs it under pytest with
Debian's /usr/bin/python3): examples/ci/run.sh in a scratch folder, with this tree as the vlastab
clone (its make is a no-op on a built tree), must exit 0 having installed the package into a fresh
virtual environment, passed the example kernel's pytest test (forward and gradients judged ok, in
report.json), recorded the layer, and passed vla-check's --require bf16-kern on it, leaving in
the report folder what the job uploads: the judge's trace, outputs and reports, the layer's table
(16 rows: 8 policies x seq and chunk:64) and report. Run under pytest; skipped without numpy,
torch or venv."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

pytest.importorskip("torch")
pytest.importorskip("venv")

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def test_ci_recipe_end_to_end():
    tmp = tempfile.mkdtemp(prefix="vla-ci-")  # removed after: it holds a virtual environment
    try:
        ci_recipe(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def ci_recipe(tmp):
    rep = os.path.join(tmp, "vlastab-report")
    env = dict(os.environ, VLASTAB=ROOT, REPORT=rep, PYTHON=sys.executable)
    for var in ("PYTHONPATH", "VLA_BIN_DIR", "VLASTAB_LIB"):  # the installed package alone
        env.pop(var, None)
    job = subprocess.run(["sh", os.path.join(ROOT, "examples", "ci", "run.sh")], cwd=tmp,
                         env=env, capture_output=True, text=True, timeout=900)
    out = job.stdout + job.stderr
    assert job.returncode == 0 and "1 passed" in out and "bf16-kern passed" in out, \
        "run.sh: exit %d:\n%s" % (job.returncode, out[-3000:])
    kept = os.path.join(rep, "judge", "test_my_kernel")
    with open(os.path.join(kept, "report.json")) as f:
        r = json.load(f)
    assert r.get("verdict") == "ok" and len(r.get("heads", [])) == 2 and \
        len(r.get("grads", [])) == 10, "the kept report: verdict %s, %d heads, %d gradients" % (
            r.get("verdict"), len(r.get("heads", [])), len(r.get("grads", [])))
    missing = [f for f in ("trace/q.npy", "outputs/o.npy", "outputs/dq.npy", "report.md")
               if not os.path.isfile(os.path.join(kept, f))]
    assert not missing, "not kept: %s" % missing
    with open(os.path.join(rep, "layer.dat")) as f:
        rows = [line for line in f if line.strip() and not line.startswith("#")]
    assert len(rows) == 16 and os.path.isfile(os.path.join(rep, "layer.md")), \
        "the layer's table: %d rows, layer.md %s" % (
            len(rows), "there" if os.path.isfile(os.path.join(rep, "layer.md")) else "missing")
