/* vla-regress: has any precision got worse? A fixed suite of cases (model, way of tracking A,
 * precision, stream; on every backend built) run against the exact MPFR reference, the error of
 * A, S and o in bits lost, compared with the reviewed baseline tests/regress/baseline.tsv.
 * This file is its help and main; the suite and its measures are regress.c's (regress.h). */
#include "regress.h"
#include "doc.h"
#include "file.h"
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static void usage_exit(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void usage_exit(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "vla-regress: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (try --help)\n");
    va_end(ap);
    exit(2);
}

/* ---- the help text, also the man page: one source, so that the two agree word for word (as
 * cli.c does for the programs it parses for, and vla-sweep for itself). This program does not use
 * cli.c: the Makefile links it with planted faults and without cli.o (see test_regress.c). ---- */

#define RG_STR_(x) #x
#define RG_STR(x) RG_STR_(x)

static const char rg_help_summary[] =
    "Has any precision got worse? Runs a fixed suite -- every model, way of tracking A and\n"
    "precision that the library admits, on the streams gauss, lmlike, subspace:4,0.001 and\n"
    "the real trace lmtrace-seed7/vla3 -- on every backend available (cpu; cuda when built\n"
    "and a GPU is present), measures the relative error of A, S and o against the exact\n"
    "reference (MPFR, " RG_STR(RG_REF_BITS) " bits) at log-spaced checkpoints, in bits lost: "
    "log2(error / u)\n"
    "with u the unit roundoff of the precision's storage format, averaged over " RG_STR(RG_HEADS)
    " heads\n"
    "and the checkpoints t >= T/10, and compares each case with its row of the baseline.\n"
    "A case fails when it lost more than the margin in A, S or o, turned non-finite,\n"
    "failed to run or has no baseline row (with --bits, also when any of its bits changed).\n"
    "Kernel cases (cuda, emu, lanes) compare with the CPU's rows (strict mode promises\n"
    "the CPU's bits).";

/* the page (doc.h): the options, the columns, the exit codes, the environment, the files */
typedef vla_doc_item rg_doc_item;

static const rg_doc_item rg_help_opts[] = {
    {"only", "PATTERNS", "run the cases whose name (model/track/precision/stream) matches one of "
                         "these comma-separated shell patterns, e.g. 'vla3/*/f16-f32/*,rls/sm/f32/gauss'"},
    {"backend", "LIST", "cpu, cuda, emu (the CUDA kernels on host threads; slow), lanes "
                        "(the CPU's vector lanes, the heads side by side), comma-separated "
                        "(default: every available one but emu)"},
    {"baseline", "FILE", "the baseline to compare with, and that --update writes (default "
                         "tests/regress/baseline.tsv, relative to the working directory)"},
    {"margin", "BITS", "the loss in bits, 0..64, that fails a case (default " RG_STR(RG_MARGIN) ")"},
    {"form", "F", "the form the suite runs in: seq (the default), chunk:C (C a power of two, "
                  "1.." RG_STR(VLA_CHUNK_MAX) "; checkpoints rounded down to multiples of C, a "
                  "nudge every max(C, 64) steps, no clamp, vla3's floor as the only guard) or scan "
                  "(docs/forms.md); its cases are named model/track/precision/stream@F, against "
                  "the exact seq recurrence; the baseline keeps each form's rows"},
    {"bits", NULL, "any change of a case's bits fails, better or worse (a refactoring that claims "
                   "to change no number)"},
    {"update", NULL, "write this run's CPU numbers into the baseline (keeping the rows of cases not "
                     "run) and exit 0, or 1 when a case failed to run (the baseline is then left as "
                     "it was): `make regress-update`"},
    {"trace", "DIR", "the trace (default: $VLA_SHARED/data/lmtrace-seed7/vla3, else found beside "
                     "the repository; its cases are skipped, with a note, if absent)"},
    {"changed", NULL, "print only the rows whose verdict is not 'same'"},
    {"list", NULL, "list the selected cases (backend:name, one a line) and exit"},
    {"help", NULL, "this text"},
    {"version", NULL, "the version"},
    {NULL, NULL, NULL},
};

static const char rg_help_output[] =
    "Output: the report, on standard output: '#' lines (the reference, the measure, the\n"
    "suite, the baseline and the margin, notes on what was not run), then a row per case,\n"
    "with base, now and change once each for A, S and o. Columns:";
static const rg_doc_item rg_help_cols[] = {
    {"case", NULL, "backend:model/track/precision/stream"},
    {"base", NULL, "the baseline's bits lost (?: no row; -: the model has no A; inf: non-finite)"},
    {"now", NULL, "this run's bits lost (?: the case did not run)"},
    {"change", NULL, "now - base (!: finite on one side only)"},
    {"verdict", NULL, "same; changed (other bits, within the margin); better; NEW (no baseline "
                      "row); WORSE (lost more than the margin); NONFINITE (finite in the baseline, "
                      "not now); ERROR (the case could not run: the reason follows). The upper-case "
                      "ones fail; with --bits, changed and better fail too, marked (--bits)"},
    {NULL, NULL, NULL},
};
static const char rg_help_output_end[] =
    "A last '#' line counts the verdicts; '# PASS: ...' or '# FAIL: N cases: ...' closes it.";

static const rg_doc_item rg_help_exit[] = {
    {"0", NULL, "every case passed; --update wrote the baseline; --list, --help, --version"},
    {"1", NULL, "a case failed; the baseline is missing or was made by another suite; --update "
                "found a case that failed to run or could not write the file (left as it was); the "
                "report or the list could not be written to standard output"},
    {"2", NULL, "a usage error; a backend unknown or not available here; --trace DIR without "
                "q.npy; no case matching --only; a malformed baseline, one over 1 MiB, or one that "
                "is not a regular file (a device, a FIFO: never replaced)"},
    {NULL, NULL, NULL},
};

static const rg_doc_item rg_help_files[] = {
    {"tests/regress/baseline.tsv", NULL,
     "the baseline (--baseline), read; written only by --update, to FILE.tmp.PID then renamed over "
     "FILE. '#' lines, then a row per case, tab-separated: case a_bits s_bits o_bits fingerprint "
     "(16 hex digits: the bits of every checkpointed state). Its suite line must be this "
     "program's, printed below"},
    {"$VLA_SHARED/data/lmtrace-seed7/vla3/", NULL,
     "the trace (--trace DIR): q.npy, k.npy, v.npy, and u.npy, g.npy, beta.npy when there; read. "
     "Without VLA_SHARED: shared/ beside the repository, else ../shared"},
    {NULL, NULL, NULL},
};
static const rg_doc_item rg_help_env[] = {
    {"VLA_SHARED", NULL, "the folder that holds data/lmtrace-seed7 (the trace; see --trace)"},
    {"OMP_NUM_THREADS", NULL, "the threads the cases are spread over (the numbers do not depend "
                              "on it)"},
    {NULL, NULL, NULL},
};

static const char rg_help_example[] =
    "bin/vla-regress\n"
    "bin/vla-regress --only 'vla3/*/f16-f32/*' --changed\n"
    "bin/vla-regress --update     (make regress-update: then review the baseline's diff)";

/* --help and --man (doc.c): the files' closing paragraph carries the suite line */
static void rg_doc(int man)
{
    static char files_end[400];
    char suite[300];
    rg_suite_line(suite, sizeof suite);
    snprintf(files_end, sizeof files_end, "It reads these files, and with --update writes the "
             "baseline; nothing else is written. The suite:\n%s", suite);
    const vla_doc d = {
        .prog = "vla-regress",
        .phrase = "has any precision got worse",
        .synopsis = "[OPTION]...",
        .summary = rg_help_summary,
        .version = VLA_VERSION,
        .opts = {rg_help_opts, NULL, NULL},
        .sections = {{"Columns", rg_help_output, rg_help_cols, NULL, 0, rg_help_output_end},
                     {NULL, NULL, NULL, NULL, 0, NULL}},
        .exit = rg_help_exit,
        .env = rg_help_env,
        .files = rg_help_files,
        .files_end = files_end,
        .examples = rg_help_example,
    };
    if (man)
        vla_doc_man(&d);
    vla_doc_help(&d);
}

/* status, or 1 (said) when standard output, the report or the list, was not written whole */
static int out_status(int status)
{
    if (fflush(stdout) == 0 && !ferror(stdout))
        return status;
    fprintf(stderr, "vla-regress: cannot write standard output: %s\n", strerror(errno ? errno : EIO));
    return 1;
}

int main(int argc, char **argv)
{
    vla_file_limits(); /* past ulimit -f, a write fails (EFBIG, said) instead of killing */
    rg_opts o = {.baseline = "tests/regress/baseline.tsv", .margin = RG_MARGIN};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
        int valued = !strcmp(a, "--only") || !strcmp(a, "--baseline") || !strcmp(a, "--trace") ||
                     !strcmp(a, "--margin") || !strcmp(a, "--backend") || !strcmp(a, "--form");
        if (valued && has && !argv[i + 1][0]) /* '' is no value, not the default nor 0 */
            usage_exit("%s: an empty value", a);
        if (!strcmp(a, "--help"))
            rg_doc(0);
        else if (!strcmp(a, "--man"))
            rg_doc(1);
        else if (!strcmp(a, "--version")) {
            printf("vla-regress (vlastab) %s\n", VLA_VERSION);
            return 0;
        } else if (!strcmp(a, "--only") && has)
            o.only = argv[++i];
        else if (!strcmp(a, "--baseline") && has)
            o.baseline = argv[++i];
        else if (!strcmp(a, "--trace") && has)
            o.trace = argv[++i];
        else if (!strcmp(a, "--margin") && has) {
            char *end;
            o.margin = strtod(argv[++i], &end);
            if (*end || end == argv[i] || !(o.margin >= 0) || o.margin > 64)
                usage_exit("--margin: '%s' is not a number of bits in 0..64", argv[i]);
        } else if (!strcmp(a, "--backend") && has) {
            char buf[256], names[100];
            snprintf(buf, sizeof buf, "%s", argv[++i]);
            vla_backend_names(names, sizeof names);
            if (!buf[strspn(buf, ",")])
                usage_exit("--backend: '%s' names no backend (%s)", buf, names);
            for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
                int b = 0;
                while (b < VLA_NBACKEND && strcmp(t, vla_backend_name(vla_backend_at(b))))
                    b++;
                if (b == VLA_NBACKEND)
                    usage_exit("--backend: unknown '%s' (%s)", t, names);
                o.backends |= 1u << b;
            }
        } else if (!strcmp(a, "--form") && has) {
            int e = vla_form_parse(&o.form, argv[++i]);
            if (e == VLA_ERANGE)
                usage_exit("--form %s: C must be a power of two in 1..%d", argv[i], VLA_CHUNK_MAX);
            if (e)
                usage_exit("--form: '%s' is not seq, chunk:C or scan", argv[i]);
            if (o.form.chunk > RG_T)
                usage_exit("--form %s: C exceeds the suite's %d steps", argv[i], RG_T);
        } else if (!strcmp(a, "--update"))
            o.update = 1;
        else if (!strcmp(a, "--bits"))
            o.bits = 1;
        else if (!strcmp(a, "--changed"))
            o.changed_only = 1;
        else if (!strcmp(a, "--list"))
            o.list = 1;
        else if (valued && !has)
            usage_exit("%s needs a value", a);
        else
            usage_exit("unknown argument '%s'", a);
    }
    if (o.update && o.backends && !(o.backends >> VLA_BACKEND_CPU & 1))
        usage_exit("--update writes the CPU's numbers: include --backend cpu");
    /* before the run, not minutes into it: the baseline is read whole and --update renames over
     * it, so it must be a regular file (or, for --update, nothing yet) */
    char *target;
    const char *kind;
    int e = vla_file_target(o.baseline, &target, &kind);
    if (e == VLA_EINVAL) {
        fprintf(stderr, "vla-regress: --baseline %s: %s, not a regular file%s\n", o.baseline, kind,
                o.update ? ": left as it is" : "");
        return 2;
    }
    free(target);

    rg_run run;
    e = rg_execute(&o, &run);
    if (e)
        return e == VLA_ENOTSUP || e == VLA_EIO ? 2 : 1;
    if (o.list) {
        for (int i = 0; i < run.n; i++)
            printf("%s:%s\n", vla_backend_name(vla_backend_at(run.cases[i].backend)), run.cases[i].name);
        rg_run_free(&run);
        return out_status(0);
    }
    if (run.n == 0) {
        fprintf(stderr, "vla-regress: no case matches --only '%s'\n", o.only ? o.only : "");
        rg_run_free(&run);
        return 2;
    }

    rg_baseline base;
    char suite[300];
    vla_error err;
    rg_suite_line(suite, sizeof suite);
    e = rg_baseline_read(&base, o.baseline, &err);
    if (e == VLA_EFORMAT || (e && !o.update)) {
        fprintf(stderr, "vla-regress: %s%s\n", vla_error_msg(&err),
                e == VLA_EIO ? " (no baseline yet? `make regress-update` writes one)" : "");
        rg_run_free(&run);
        return e == VLA_EFORMAT ? 2 : 1;
    }
    if (!e && strcmp(base.suite, suite) && !o.update) {
        fprintf(stderr, "vla-regress: %s was made by another suite:\n  it says   %s\n  this is   %s\n"
                        "run `make regress-update` and review the diff\n",
                o.baseline, base.suite[0] ? base.suite : "(no suite line)", suite);
        rg_run_free(&run);
        free(base.rows);
        return 1;
    }
    if (!e && strcmp(base.suite, suite)) { /* another suite's rows mean nothing here */
        free(base.rows);
        memset(&base, 0, sizeof base);
    }
    int fails = rg_report(stdout, &o, &run, &base);
    int status = fails ? 1 : 0;
    if (o.update) {
        int errors = 0;
        for (int i = 0; i < run.n; i++)
            errors += !run.res[i].ran;
        if (errors) {
            fprintf(stderr, "vla-regress: %d cases failed to run: the baseline is left as it was\n",
                    errors);
            status = 1;
        } else if ((e = rg_baseline_write(o.baseline, &run, &base))) {
            fprintf(stderr, "vla-regress: cannot write %s: %s\n", o.baseline, strerror(errno));
            status = 1;
        } else {
            printf("# wrote %s\n", o.baseline);
            status = 0;
        }
    }
    free(base.rows);
    rg_run_free(&run);
    return out_status(status);
}
