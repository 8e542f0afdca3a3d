"""The Python tests' checks (test_vlastab.py, test_judge.py): a failed check is counted in
`fails` and printed, never raised, so that one run of a script reports every failure."""
import sys
import warnings

fails = 0


def check(cond, what):
    global fails
    if not cond:
        fails += 1
        print("FAIL:", what)


def refused(what, f, exc, *words):
    """f() raises exc (not a crash, not a result) with every word in its message"""
    try:
        f()
        got = "no error"
    except exc as e:
        got = None if all(w in str(e) for w in words) else "%s: %s" % (type(e).__name__, e)
    except Exception as e:  # noqa: BLE001 (another class is a failure, not a crash of the test)
        got = "%s: %s" % (type(e).__name__, e)
    check(got is None, "%s: expected %s with %s, got %s" % (what, exc.__name__, words, got))


def warned(what, f, *words):
    """f() runs and warns with every word in one message; returns its result"""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            res = f()
        except Exception as e:  # noqa: BLE001
            check(False, "%s: %s: %s" % (what, type(e).__name__, e))
            return None
    check(any(all(x in str(m.message) for x in words) for m in w),
          "%s: no warning with %s (%s)" % (what, words, [str(m.message) for m in w]))
    return res


def vlastab_or_skip():
    """the binding, or exit 77 (a skip, with the reason) where its library is not built"""
    try:
        import vlastab
    except OSError as e:
        print("skip: %s (make builds build/libvlastab.so)" % e)
        sys.exit(77)
    return vlastab
