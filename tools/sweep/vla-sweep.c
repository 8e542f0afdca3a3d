/* vla-sweep: parameter sweeps of the experiment programs (a sweep file, sweeps/NAME.sweep, names
 * the grid) run on this machine with N workers, under mpirun with rank 0 handing the cases out, or
 * as a Slurm job array: one table per case under one output tree, and a manifest. Its own program:
 * it never parses the experiments' options, only appends --out to each command (help_format). */
#include "sweep.h"

#include <string.h>

/* ---- the help text, also the man page: one source, so that the two agree word for word ---- */

static const char help_summary[] =
    "Runs a parameter sweep: the sweep FILE names a program, fixed options and axes to cross;\n"
    "each point of the grid is a case with a stable name and its own table NAME.dat under one\n"
    "output tree, beside a manifest. A case whose table exists is complete (the programs write\n"
    "their tables atomically) and is skipped, so running a sweep again resumes it. A failing\n"
    "case is reported with its command and the last line of its error, and the others go on.\n"
    "Three ways to run the same cases, with the same results bit for bit: locally with N\n"
    "workers (the default), under mpirun (--mpi: rank 0 hands the cases out one at a time, each\n"
    "rank runs them, one GPU per rank where there are GPUs), or as a Slurm job array (--slurm\n"
    "writes a script to submit unchanged).";

static const vla_doc_item opts[] = {
    {"jobs", "N", "parallel workers (-j N for short; default: the number of cores)"},
    {"out", "DIR", "the output tree (default: the file's out line, else data/NAME)"},
    {"dry-run", NULL, "list the cases and their commands (run or complete, and alone for a case of an alone section); run nothing"},
    {"mpi", NULL, "under mpirun -np N: rank 0 hands the cases out, every rank runs them"},
    {"slurm", NULL, "write a Slurm job-array script (OUT/NAME.sbatch) and run nothing"},
    {"chunk", "K", "cases per Slurm array task (default: the file's chunk line, else 1)"},
    {"script", "FILE", "where --slurm writes the script (- for stdout; replaces only a regular file)"},
    {"quiet", NULL, "say nothing of the cases that succeed"},
    {"help", NULL, "this text"},
    {"version", NULL, "the version"},
    {NULL, NULL, NULL},
};

static const char help_format[] =
    "Sweep file: one directive a line; # starts a comment; words are separated by blanks, and\n"
    "'...' or \"...\" quote a word with blanks in it.\n"
    "  out DIR            the output tree (relative to the directory vla-sweep runs in)\n"
    "  slurm WORDS        a line #SBATCH WORDS in the Slurm script (repeatable)\n"
    "  chunk K            cases per Slurm array task\n"
    "  program NAME       starts a section: the program, found beside vla-sweep, else on PATH\n"
    "                     (a NAME with a / is a path)\n"
    "  fixed WORDS        options given to every case of the section (repeatable)\n"
    "  axis --OPT V1 V2   an axis: each case takes --OPT with one of the values; the axes of a\n"
    "                     section are crossed, the first one outermost. V@LABEL names a value\n"
    "                     in case names (default: the value, with characters other than\n"
    "                     letters, digits and . _ + - turned into _)\n"
    "  name TEMPLATE      the case name: {OPT} is the label of axis --OPT, {N} that of the\n"
    "                     N-th axis, / makes a subfolder (default: PROGRAM-{1}-{2}..., without\n"
    "                     the vla- of the program's name)\n"
    "  resume             the program takes --resume: a case with a checkpoint (NAME.dat.ckpt)\n"
    "                     continues from it\n"
    "  alone              each case runs with no other case beside it, after the others, with\n"
    "                     every core (a program that measures time; under Slurm each is an\n"
    "                     array task of its own: add slurm --exclusive)\n"
    "A case runs PROGRAM FIXED... --OPT1 V1 --OPT2 V2 ... --out OUT/NAME.dat, in the directory\n"
    "vla-sweep runs in, without a shell; its standard output and error go to OUT/NAME.log (kept\n"
    "when it failed or said something); what a case that ran found (its program's summary on\n"
    "stderr: a non-finite state, a read-out exactly 0, an error past 1) is said in its line and\n"
    "again at the end (found: CASE: ...). Each worker's cases see CUDA_VISIBLE_DEVICES set to one\n"
    "GPU (worker or node-local rank modulo the GPUs: those CUDA_VISIBLE_DEVICES lists, else\n"
    "/dev/nvidiaN, or VLA_SWEEP_GPUS=N) and, unless it is set, OMP_NUM_THREADS = cores/workers.";

static const char help_columns[] =
    "The manifest (OUT/NAME.manifest.tsv for NAME.sweep, rewritten atomically as cases end) has\n"
    "tab-separated columns:";
static const vla_doc_item help_cols[] = {
    {"case", NULL, "the case name (its table is OUT/case.dat)"},
    {"command", NULL, "the command, as a POSIX shell reads it back"},
    {"status", NULL, "ok (its table exists), failed or pending (not run: interrupted)"},
    {"seconds", NULL, "wall time of the run that wrote the table (- when not known)"},
    {"message", NULL, "for a failure: exit N or signal N, and the last line of its error output"},
    {NULL, NULL, NULL},
};

static const vla_doc_item help_exit[] = {
    {"0", NULL, "every case is complete (--dry-run, --slurm: the listing or the script was "
                "written)"},
    {"1", NULL, "a case failed (the manifest and the case's log say why); the others went on; "
                "the listing, the script (--script -) or the sbatch line could not be written to "
                "standard output, or the script to its file"},
    {"2", NULL, "a usage error, a bad sweep file (the message names the line), or another "
                "vla-sweep running on the output tree"},
    {"3", NULL, "interrupted by SIGINT or SIGTERM: the running cases were stopped (each writes "
                "its checkpoints), the manifest says pending; running the sweep again resumes"},
    {NULL, NULL, NULL},
};

static const vla_doc_item help_env[] = {
    {"OMP_NUM_THREADS", NULL, "given to each case; unset, vla-sweep sets it to cores / workers"},
    {"CUDA_VISIBLE_DEVICES", NULL, "the GPUs the workers share out, one each"},
    {"VLA_SWEEP_GPUS", NULL, "N: the number of GPUs when neither CUDA_VISIBLE_DEVICES nor "
                             "/dev/nvidiaN says"},
    {"PATH", NULL, "where a program is found when it is not beside vla-sweep"},
    {NULL, NULL, NULL},
};

static const vla_doc_item help_files[] = {
    {"FILE", NULL, "the sweep file, read (a regular file of at most 1 MiB)"},
    {"OUT/CASE.dat", NULL, "each case's table, written by its program"},
    {"OUT/CASE.log", NULL, "each case's standard output and error, kept when it failed or said "
                           "something"},
    {"OUT/NAME.manifest.tsv", NULL, "the manifest"},
    {"OUT/vla-sweep.lock", NULL, "locked (flock) while a sweep and its cases run on OUT, with "
                                 "the sweep's pid: a second sweep on the tree is refused"},
    {"OUT/NAME.sbatch", NULL, "--slurm: the job-array script (--script FILE: elsewhere); only a "
                              "regular file is replaced"},
    {NULL, NULL, NULL},
};

static const char help_example[] =
    "bin/vla-sweep -j 8 sweeps/paper.sweep\n"
    "mpirun -np 16 bin/vla-sweep --mpi sweeps/paper.sweep\n"
    "bin/vla-sweep --slurm sweeps/paper.sweep && sbatch data/paper.sbatch";

static void doc(int man)
{
    const vla_doc d = {
        .prog = PROG,
        .phrase = "parameter sweeps of the experiment programs",
        .synopsis = "[OPTION]... FILE",
        .summary = help_summary,
        .version = VLA_VERSION,
        .opts = {opts, NULL, NULL},
        .sections = {{"Sweep file", NULL, NULL, help_format, 1, NULL},
                     {"Columns", help_columns, help_cols, NULL, 0, NULL},
                     {NULL, NULL, NULL, NULL, 0, NULL}},
        .exit = help_exit,
        .env = help_env,
        .files = help_files,
        .examples = help_example,
    };
    if (man)
        vla_doc_man(&d);
    vla_doc_help(&d);
}

/* ---- main ---- */

static void free_cases(case_t *cs, int n)
{
    for (int i = 0; i < n; i++) {
        free(cs[i].name);
        free(cs[i].argv); /* its words belong to the sweep, but for out */
        free(cs[i].out);
        free(cs[i].log);
        free(cs[i].command);
    }
    free(cs);
}

static void free_sweep(sweep_t *sw)
{
    for (int i = 0; i < sw->nsec; i++) {
        section_t *s = &sw->sec[i];
        if (s->path != s->prog) /* display is one of the two */
            free(s->path);
        free(s->prog);
        for (int k = 0; k < s->nfixed; k++)
            free(s->fixed[k]);
        free(s->fixed);
        for (int a = 0; a < s->naxes; a++) {
            for (int k = 0; k < s->axes[a].n; k++) {
                free(s->axes[a].val[k]);
                free(s->axes[a].label[k]);
            }
            free(s->axes[a].val);
            free(s->axes[a].label);
            free(s->axes[a].opt);
        }
        free(s->axes);
        free(s->tpl);
    }
    free(sw->sec);
    for (int i = 0; i < sw->nslurm; i++)
        free(sw->slurm[i]);
    free(sw->slurm);
    free(sw->out);
    free(sw->name);
}

int main(int argc, char **argv)
{
    vla_file_limits(); /* past ulimit -f, a write fails (EFBIG, said) instead of killing */
    const char *file = NULL, *out = NULL, *script = NULL;
    int jobs = 0, dry = 0, mpi = 0, slurm = 0, chunk = 0, quiet = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
        if ((!strcmp(a, "--out") || !strcmp(a, "--script")) && has && !argv[i + 1][0])
            usage_exit("%s: an empty value", a); /* not the default, nor files in / */
        if (!strcmp(a, "--help"))
            doc(0);
        else if (!strcmp(a, "--man"))
            doc(1);
        else if (!strcmp(a, "--version")) {
            printf(PROG " (vlastab) %s\n", VLA_VERSION);
            return 0;
        } else if ((!strcmp(a, "--jobs") || !strcmp(a, "-j") || !strcmp(a, "--chunk")) && has) {
            char *end;
            long k = strtol(argv[++i], &end, 10);
            if (*end || end == argv[i] || k < 1 || k > 100000)
                usage_exit("%s: '%s' is not a number in 1..100000", a, argv[i]);
            if (!strcmp(a, "--chunk"))
                chunk = (int)k;
            else
                jobs = (int)k;
        } else if (!strcmp(a, "--out") && has)
            out = argv[++i];
        else if (!strcmp(a, "--script") && has)
            script = argv[++i];
        else if (!strcmp(a, "--dry-run"))
            dry = 1;
        else if (!strcmp(a, "--mpi"))
            mpi = 1;
        else if (!strcmp(a, "--slurm"))
            slurm = 1;
        else if (!strcmp(a, "--quiet"))
            quiet = 1;
        else if (!strcmp(a, "--jobs") || !strcmp(a, "-j") || !strcmp(a, "--chunk") ||
                 !strcmp(a, "--out") || !strcmp(a, "--script"))
            usage_exit("%s needs a value", a);
        else if (a[0] == '-' && a[1])
            usage_exit("unknown option '%s'", a);
        else if (file)
            usage_exit("one sweep file, not '%s' and '%s'", file, a);
        else
            file = a;
    }
    if (!file)
        usage_exit("no sweep file");
    if (dry + mpi + slurm > 1)
        usage_exit("--dry-run, --mpi and --slurm: one of them");
    if (jobs && (mpi || slurm))
        usage_exit("--jobs is for a local run (under MPI a rank runs one case at a time)");
    if ((chunk || script) && !slurm)
        usage_exit("--chunk and --script go with --slurm");
    if (mpi && !sweep_has_mpi)
        die(2, "--mpi: this build has no MPI (mpicc was not found when it was built: make deps, "
               "then make)");

    sweep_t sw;
    parse_sweep(&sw, file);
    char *tree;
    if (out)
        tree = xstrdup(out);
    else if (sw.out)
        tree = xstrdup(sw.out);
    else
        tree = xprintf("data/%s", sw.name);
    while (strlen(tree) > 1 && tree[strlen(tree) - 1] == '/')
        tree[strlen(tree) - 1] = 0;
    for (int i = 0; i < sw.nsec; i++)
        resolve(&sw.sec[i], argv[0], &sw, !dry);
    int n;
    case_t *cs = expand(&sw, tree, &n);

    if (slurm) {
        char *def = xprintf("%s/%s.sbatch", tree, sw.name);
        int status = write_slurm(&sw, cs, n, tree, chunk, script ? script : def);
        free(def);
        free_cases(cs, n);
        free_sweep(&sw);
        free(tree);
        return out_status(status);
    }

    int *todo = xmalloc(n * sizeof *todo), ntodo = 0, nalone = 0;
    for (int i = 0; i < n; i++)
        cs[i].state = exists(cs[i].out) ? C_COMPLETE : C_TODO;
    for (int pass = 0; pass < 2; pass++) /* the cases that run alone last */
        for (int i = 0; i < n; i++)
            if (cs[i].state == C_TODO && sw.sec[cs[i].sec].alone == pass) {
                todo[ntodo++] = i;
                nalone += pass;
            }
    if (dry) {
        printf("# %d cases of %s into %s/: %d to run, %d complete\n", n, file, tree, ntodo, n - ntodo);
        for (int i = 0; i < n; i++)
            printf("%s\t%s%s\t%s\n", cs[i].name, cs[i].state == C_COMPLETE ? "complete" : "run",
                   sw.sec[cs[i].sec].alone ? " alone" : "", cs[i].command);
        free(todo);
        free_cases(cs, n);
        free_sweep(&sw);
        free(tree);
        return out_status(0);
    }
    report_t r = {.sw = &sw, .cs = cs, .n = n, .ntodo = ntodo, .quiet = quiet,
                  .manifest = xprintf("%s/%s.manifest.tsv", tree, sw.name)};
    if (mpi)
        sweep_mpi(&sw, &r, todo, ntodo, nalone, tree, &argc, &argv);
    if (mkdirs(r.manifest))
        die(1, "cannot make %s: %s", tree, strerror(errno));
    free(replaceable(r.manifest));
    char *why = lock_tree(tree);
    if (why)
        die(2, "%s", why);
    carry_all(&sw, tree, r.manifest, cs, n);
    save(&r, 1);
    run_local(&sw, &r, todo, ntodo - nalone, jobs ? jobs : ncores());
    if (!stop_sig)
        run_local(&sw, &r, todo + ntodo - nalone, nalone, 1);
    int status = summary(&r);
    free(r.manifest);
    free(todo);
    free_cases(cs, n);
    free_sweep(&sw);
    free(tree);
    return status;
}
