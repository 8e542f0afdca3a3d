#!/bin/sh
# The CI job of docs/ci.md after `make deps`: vlastab built and installed into a virtual
# environment (Debian's numpy and torch seen through it), a kernel's precision test run with the
# pytest plugin, a recorded layer checked by vla-check with the kernels' bf16 policy required,
# and what both wrote kept in REPORT, the folder the job uploads. Exit: pytest's or vla-check's
# status, the first that is not 0.
# usage: VLASTAB=/path/to/vlastab [REPORT=vlastab-report] [PYTHON=/usr/bin/python3]
#        [TEST=your_test.py] [RECORD=your_recorder.py] sh run.sh
# (PYTHON: Debian's, whose numpy, torch and setuptools `make deps` installs; TEST, RECORD: your
# kernel's pytest file and your layer's recorder, RECORD OUT writing a trace into OUT; default
# the examples beside this file)
set -eu
VLASTAB=$(cd "${VLASTAB:?the vlastab clone}" && pwd)
REPORT=${REPORT:-vlastab-report}
mkdir -p "$REPORT"
REPORT=$(cd "$REPORT" && pwd)
TEST=$(realpath "${TEST:-$VLASTAB/examples/ci/test_precision.py}")
RECORD=$(realpath "${RECORD:-$VLASTAB/examples/ci/record_layer.py}")
venv=$REPORT/../.venv-vlastab
"${PYTHON:-/usr/bin/python3}" -m venv --system-site-packages "$venv"
"$venv/bin/pip" install --quiet --no-build-isolation --no-index "$VLASTAB"
cd "$REPORT"  # the installed package, not the clone's tree
"$venv/bin/python" -m pytest -q -p vlastab.pytest_plugin --vlastab-keep "$REPORT/judge" \
    "$TEST"
"$venv/bin/python" "$RECORD" "$REPORT/trace"
"$venv/bin/vla-check" "trace:$REPORT/trace" --forms seq,chunk:64 --require bf16-kern \
    --report "$REPORT/layer" --out "$REPORT/layer.dat"
echo "report: $REPORT (judge/*/report.md, layer.md)"
