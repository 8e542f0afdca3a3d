"""vla_pytest.py: the pytest plugin of the project's own Python tests, what they share:
tools/python and tests/ on the path, the programs under test, and a run whose every test skipped
(numpy or torch absent, libvlastab not built) ending with exit 77 and the reason, which make test
counts as a skip; and refused() and warned(), the checks of an error and of a warning. Run each
test file under pytest with it, from the repository root, as tests/test_python.c does; by hand:
PYTHONPATH=tests python3 -m pytest -p vla_pytest FILE. A plugin named on the command line, not a
conftest.py, so that pytest runs of files in the tree that test the installed package
(examples/ci) do not pick it up."""
import os
import sys
import warnings

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(ROOT, "tools", "python"), os.path.join(ROOT, "tests")]
sys.dont_write_bytecode = True
# the folder of the programs under test: VLA_BIN_DIR (make test sets it to this build's; a
# sanitized build's programs are sanitized too), else bin; judge() finds vla-check through it
os.environ["VLA_BIN_DIR"] = os.path.abspath(os.environ.get("VLA_BIN_DIR", "bin"))
try:
    import numpy  # noqa: F401 (the binding needs it)
except ImportError:
    NO_LIB = "numpy is absent from %s (Debian: apt-get install python3-numpy)" % sys.executable
else:
    try:  # a binding that does not import (no _abi.py) is an error, not a skip
        import vlastab  # noqa: F401 (loads libvlastab.so)
        NO_LIB = None
    except OSError as e:
        NO_LIB = "%s (make builds build/libvlastab.so)" % e


@pytest.fixture(scope="session")
def bin_dir():
    """the folder of the programs under test (an absolute path)"""
    return os.environ["VLA_BIN_DIR"]


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """a test file that cannot import the binding (no numpy, no library) is skipped, saying why"""
    rep = (yield).get_result()
    if NO_LIB and rep.failed and isinstance(collector, pytest.Module):
        rep.outcome, rep.longrepr = "skipped", (str(collector.path), 0, "Skipped: " + NO_LIB)


def pytest_sessionfinish(session, exitstatus):
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    stats = reporter.stats if reporter else {}
    skipped = stats.get("skipped", [])
    if exitstatus in (0, 5) and skipped and not stats.get("passed"):
        rep = skipped[0]
        why = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
        print("\nskip: %s" % why.replace("Skipped: ", "", 1))
        session.exitstatus = 77


def refused(what, f, exc, *words):
    """f() raises exc (not a crash, not a result) with every word in its message; the message"""
    try:
        f()
    except exc as e:
        assert all(w in str(e) for w in words), "%s: %s: %s, expected every one of %s" % (
            what, type(e).__name__, e, words)
        return str(e)
    raise AssertionError("%s: no error, expected %s with %s" % (what, exc.__name__, words))


def warned(what, f, *words):
    """f() runs and warns with every word in one message; its result"""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        res = f()
    assert any(all(x in str(m.message) for x in words) for m in w), \
        "%s: no warning with %s (%s)" % (what, words, [str(m.message) for m in w])
    return res
