/* test_python.c: the Python side in make test, one test per file of Python tests, each run under
 * pytest (with tests/vla_pytest.py, what they share) by the interpreter that has numpy and torch
 * ($VLA_PYTHON: the Makefile's PYTHON, Debian's /usr/bin/python3, not the first python3 on PATH).
 * Skipped, with the reason, where that interpreter, pytest or numpy is absent. */
#include "check.h"
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <unistd.h>
#include <glob.h>

/* Runs a Python script (its arguments in args) under that interpreter: skipped with the reason
 * (its line "skip: ...", else its first line) where the interpreter is missing or the script exits
 * 77 (numpy absent); otherwise it must exit 0 and print passed. Its first line "note: ..." and
 * pytest's lines of skipped tests ("SKIPPED ...") are passed on. */
static void run_python(const char *args, const char *passed)
{
    const char *py = getenv("VLA_PYTHON") ? getenv("VLA_PYTHON") : "/usr/bin/python3";
    static char msg[300]; /* vla_test_skip keeps the pointer */
    if (access(py, X_OK)) {
        snprintf(msg, sizeof msg, "no Python interpreter at %s (set PYTHON=...)", py);
        vla_test_skip(msg);
        return;
    }
    char *out = NULL;
    int st = vla_test_sh(&out, "%s %s 2>&1", py, args);
    if (st == 77) {
        const char *why = out ? strstr(out, "skip: ") : NULL;
        snprintf(msg, sizeof msg, "%s", why ? why + 6 : out && *out ? out : "numpy absent");
        msg[strcspn(msg, "\n")] = 0;
        vla_test_skip(msg);
    } else {
        CHECK_MSG(st == 0 && out && strstr(out, passed), "exit %d: %s", st, out ? out : "");
        if (out && strstr(out, "note: "))
            printf("%.*s\n", (int)strcspn(strstr(out, "note: "), "\n"), strstr(out, "note: "));
        for (const char *l = out; l && (l = strstr(l, "\nSKIPPED ")); l++)
            printf("note: %.*s\n", (int)strcspn(l + 1, "\n"), l + 1);
    }
    free(out);
}

/* Runs pytest (with `plugins`, "-p NAME" words) on the test files `files` under that interpreter,
 * skipped, with the reason, where it has no pytest (make deps installs python3-pytest) or where
 * every test skipped (tests/vla_pytest.py, the plugin every run loads: exit 77). Tests print what
 * they measured (-s), and pytest lists the skipped tests with their reasons (-rs). */
static void run_pytest(const char *plugins, const char *files, const char *name)
{
    char script[2000], passed[100];
    snprintf(passed, sizeof passed, "%s: passed", name);
    snprintf(script, sizeof script,
             "-c \"import sys; sys.path[:0] = ['tools/python', 'tests']\n"
             "sys.dont_write_bytecode = True\n"
             "try:\n    import pytest\nexcept ImportError:\n"
             "    print('skip: no pytest in', sys.executable, '(make deps: python3-pytest)')\n"
             "    sys.exit(77)\n"
             "st = pytest.main(['-q', '-s', '-rs', '-p', 'no:cacheprovider', '-p', 'vla_pytest'%s,"
             " %s])\n"
             "print('%s' if st == 0 else '%s: exit %%d' %% st)\n"
             "sys.exit(int(st))\"", plugins, files, passed, name);
    run_python(script, passed);
}

TEST_SLOW(python_binding_reader_and_recorder)
{
    run_pytest("", "'tools/python/test_vlastab.py'", "python");
}

/* The binding's structures and constants against the C compiler's reading of lib/vlastab.h, field
 * by field, and a header changed since the binding was made failing the build's check and the
 * import (tools/python/test_abi.py) */
TEST(python_abi_from_header)
{
    run_pytest("", "'tools/python/test_abi.py'", "abi");
}

/* The gated family against tests/gated_ref.py, numpy written from the published equations
 * (tests/test_gated.py says how and within what bound) */
TEST_SLOW(python_gated_against_published_equations)
{
    run_pytest("", "'tests/test_gated.py'", "gated");
}

/* Gated DeltaProduct (f64 seq, scan, chunk; the exact reference) against numpy written from the
 * paper's equations, n_h = 1 against gdn bit for bit (tests/test_deltaproduct.py) */
TEST(python_deltaproduct_against_published_equations)
{
    run_pytest("", "'tests/test_deltaproduct.py'", "deltaproduct");
}

/* loglinear against a naive masked numpy form written from the paper's equations
 * (tests/test_loglinear.py says how and within what bound) */
TEST_SLOW(python_loglinear_against_naive_form)
{
    run_pytest("", "'tests/test_loglinear.py'", "loglinear");
}

/* Mamba-3's SISO recurrence (f64, f32; lambda = 1, dt = 1, theta = 0 against mamba2 bit for bit)
 * against numpy written from the paper's equations (tests/test_mamba3.py) */
TEST_SLOW(python_mamba3_against_published_equations)
{
    run_pytest("", "'tests/test_mamba3.py'", "mamba3");
}

/* The backward pass (vla_grad, f64) against torch.autograd float64 of tests/gated_ref.py's
 * torch_seq (tests/test_grad.py says how and within what bound) */
TEST_SLOW(python_grad_against_torch_autograd)
{
    run_pytest("", "'tests/test_grad.py'", "grad");
}

/* vlastab.grad against central differences of vlastab.run in binary64, every model of the
 * binding's list: dq and dk of the raw q and k (the chain rule through phi), k's part through u = k
 * when u is absent; a gradient that is not finite is a RuntimeWarning
 * (tools/python/test_grad_fd.py says how and within what bound) */
TEST_SLOW(python_grad_against_finite_differences)
{
    run_pytest("", "'tools/python/test_grad_fd.py'", "grad-fd");
}

/* The chunk form's backward (vla_grad with chunk:C, f64) against torch.autograd float64 of
 * tests/gated_ref.py's torch_chunk (tests/test_gradchunk.py says how and within what bound) */
TEST_SLOW(python_gradchunk_against_torch_autograd)
{
    run_pytest("", "'tests/test_gradchunk.py'", "gradchunk");
}

/* vlastab.judge: the example kernels of tools/python/vlastab/examples.py against a
 * float64 sequential gdn written in the test, the causality and chunk-split checks, the layout
 * checks, run() against vla-check on a policy's reference, and judge() end to end through
 * vla-check --outputs (tools/python/test_judge.py says how and within what bound) */
TEST_SLOW(python_judge_own_kernels)
{
    run_pytest("", "'tools/python/test_judge.py'", "judge");
}

/* vlastab.judge and vla-check --outputs with a kernel's gradients: a gdn PyTorch loop's
 * autograd in float64 within 4 sqrt(d T) u64 of the exact gradients, in float32 ok; a dropped
 * term and a float16 tape beyond, the gradients named; bad gradient files refused
 * (tools/python/test_judge_grad.py says how and within what bound) */
TEST_SLOW(python_judge_gradients)
{
    run_pytest("", "'tools/python/test_judge_grad.py'", "judge-grad");
}

/* The pytest plugin (vlastab/pytest_plugin.py): the three example kernels' tests of docs/kernel.md
 * in three lines each, under pytest, the correct one passing and the two faulty ones failing with
 * the verdict's words (tools/python/test_pytest_examples.py) */
TEST_SLOW(python_pytest_plugin_examples)
{
    run_pytest(", '-p', 'vlastab.pytest_plugin'", "'tools/python/test_pytest_examples.py'",
               "pytest-plugin");
}

/* The mutation benchmark's kernels (bench/mutants/kernels.py) against the token-by-token float64
 * recurrence written there from the published equations: every correct variant's output, state
 * and gradients within 1e-10, every mutant beyond 1e-6 where it says it differs
 * (bench/mutants/test_mutants.py says how and within what bound) */
TEST_SLOW(python_mutant_kernels_against_recurrence)
{
    run_pytest("", "'bench/mutants/test_mutants.py'", "mutants");
}

/* Decoding's state cache against numpy and torch written from the serving engines' definitions:
 * each format's rounding bit for bit with the casts, sr's rule and mean, gdn's decode step with the
 * cache teacher-forced, and error feedback's bound on la's sum (tests/test_cache.py says how and
 * within what bound) */
TEST_SLOW(python_state_cache_against_numpy)
{
    run_pytest("", "'tests/test_cache.py'", "state-cache");
}

/* The context-parallel form (vla-forms --what cp) against numpy's binary64 split, summaries both
 * ways and fold, written from the gated delta rule: within sqrt(d T) u64, R = 1 the one pass's bits,
 * the two runs' cancellation growing with the state's scale (tests/test_cp.py says how) */
TEST(python_context_parallel_against_numpy)
{
    run_pytest("", "'tests/test_cp.py'", "context-parallel");
}

/* vla-check --states against numpy written from the published Gated DeltaNet recurrence: the
 * states of a cache under their true positions agree, one under another position is named with the
 * position its content holds, and bad files are refused (tests/test_states.py says how and within
 * what bound) */
TEST_SLOW(python_prefix_states_against_numpy)
{
    run_pytest("", "'tests/test_states.py'", "prefix-states");
}

/* vla-forms --what decode's rollback settings against numpy written from the published Gated
 * DeltaNet recurrence: the state error of a decode handed a rejected draft or missing the last
 * accepted token, at every checkpoint (tests/test_decode.py says how and within what bound) */
TEST_SLOW(python_rollback_against_numpy)
{
    run_pytest("", "'tests/test_decode.py'", "rollback");
}

/* vla-check --outputs on a packed trace (cu_seqlens.npy) against numpy written from the published
 * Gated DeltaNet recurrence restarted per sequence: the restarting loop passes, one whose state
 * leaks into the next sequence and one that reads no initial state fail naming the sequence, and
 * the recorder writes cu_seqlens.npy (tests/test_varlen.py says how and within what bound) */
TEST_SLOW(python_packed_sequences_against_numpy)
{
    run_pytest("", "'tests/test_varlen.py'", "packed");
}

/* The kernels' 16-bit choices against numpy written from the kernels' algorithms
 * (tests/test_half.py): the triangular inverse in each way against the exact one and, in f16-kern
 * and bf16-kern, bit for bit against gated_ref.tri_inverse16; decoding's 16-bit state, decays and
 * beta against gated_ref's seq with the same roundings */
TEST_SLOW(python_half_knobs_against_numpy)
{
    run_pytest("", "'tests/test_half.py'", "half");
}

/* pip install --no-build-isolation --no-index of the repository into a fresh venv, and its wheel
 * into a second one, used from outside the tree: import vlastab loads the package's own
 * libvlastab with the source tree's bits, judge() and `python -m vlastab.check` find the package's
 * own vla-check, every program's console script writes bin/'s table (tools/python/test_pip.py).
 * Skipped, saying why, without python3-venv, pip, setuptools or wheel, and for a sanitized build,
 * whose programs are not those a pip build ships; the build's make is a no-op on this tree. */
TEST_SLOW(python_pip_install_into_fresh_venv)
{
    char bin[PATH_MAX], plain[PATH_MAX];
    if (!realpath(vla_test_bin_dir(), bin) || !realpath("bin", plain) || strcmp(bin, plain)) {
        vla_test_skip("the programs are not bin/'s (a sanitized build): pip ships bin/'s");
        return;
    }
    run_pytest("", "'tools/python/test_pip.py'", "pip");
}

/* The CI recipe of docs/ci.md (examples/ci/run.sh) end to end: the tree pip-installed into a
 * fresh virtual environment, the example kernel's pytest test, a recorded layer under
 * --require bf16-kern, the report folder (tools/python/test_ci_example.py). Skipped for a
 * sanitized build, whose programs are not those a pip build ships. */
TEST_SLOW(python_ci_example_end_to_end)
{
    char bin[PATH_MAX], plain[PATH_MAX];
    if (!realpath(vla_test_bin_dir(), bin) || !realpath("bin", plain) || strcmp(bin, plain)) {
        vla_test_skip("the programs are not bin/'s (a sanitized build): pip ships bin/'s");
        return;
    }
    run_pytest("", "'tools/python/test_ci_example.py'", "ci-example");
}

/* every file of Python tests is one of the tests above: a new one that no TEST runs fails here,
 * named */
TEST(python_every_test_file_is_run)
{
    static const char *const pats[] = {"tests/test_*.py", "tools/python/test_*.py",
                                       "bench/mutants/test_*.py"};
    char *self = NULL;
    CHECK(vla_test_sh(&self, "cat tests/test_python.c") == 0 && self);
    int n = 0;
    for (size_t i = 0; i < sizeof pats / sizeof pats[0]; i++) {
        glob_t g;
        if (glob(pats[i], 0, NULL, &g))
            continue;
        for (size_t j = 0; j < g.gl_pathc; j++, n++) {
            char quoted[300];
            snprintf(quoted, sizeof quoted, "'%s'", g.gl_pathv[j]);
            CHECK_MSG(self && strstr(self, quoted), "%s: no test of tests/test_python.c runs it",
                      g.gl_pathv[j]);
        }
        globfree(&g);
    }
    CHECK_MSG(n >= 10, "only %d Python test files found (run from the repository's root)", n);
    free(self);
}
