/* slurm.c: the Slurm scheduler (--slurm): a job-array script to submit unchanged. */
#include "sweep.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- Slurm: a job-array script ---- */

static void sh_quote(FILE *f, const char *a, int exact)
{
    char *b = xmalloc(4 * strlen(a) + 8);
    size_t n = 0, cap = 4 * strlen(a) + 8;
    b[0] = 0;
    quote_into(&b, &n, &cap, a, exact);
    fputs(b, f);
    free(b);
}

/* a value shown in a comment or a message: quoted, on one line */
static char *shown(const char *s) { return quote_argv((char *[]){(char *)s, NULL}); }

/* The script's shell function that runs a case and records it in the task's part of the manifest,
 * and the start of the task list */
static const char case_sh[] =
    ": >\"$part.tmp.$$\" || exit 1\n"
    "failed=0\n"
    "# case NAME 'COMMAND' RESUME ARGV...: the table is the last word of ARGV (--out\n"
    "# OUT/NAME.dat); RESUME 1: the program takes --resume, given when there are checkpoints\n"
    "case_() {\n"
    "    name=$1 cmd=$2 resume=$3\n"
    "    shift 3\n"
    "    out=${!#} log=${out%.dat}.log\n"
    "    if [ -e \"$out\" ]; then\n"
    "        printf '%s\\t%s\\tok\\t-\\t\\n' \"$name\" \"$cmd\" >>\"$part.tmp.$$\"\n"
    "        return\n"
    "    fi\n"
    "    mkdir -p \"$(dirname \"$out\")\"\n"
    "    [ \"$resume\" = 0 ] || [ ! -e \"$out.ckpt\" ] || set -- \"$@\" --resume\n"
    "    t0=$(date +%s.%N)\n"
    "    \"$@\" </dev/null >\"$log\" 2>&1\n"
    "    rc=$?\n"
    "    secs=$(awk -v a=\"$t0\" -v b=\"$(date +%s.%N)\" 'BEGIN { printf \"%.3f\", b - a }')\n"
    "    if [ $rc = 0 ] && [ -e \"$out\" ]; then\n"
    "        [ -s \"$log\" ] || rm -f \"$log\"\n"
    "        printf '%s\\t%s\\tok\\t%s\\t\\n' \"$name\" \"$cmd\" \"$secs\" >>\"$part.tmp.$$\"\n"
    "    else\n"
    "        msg=\"exit $rc: $(tr '\\r\\t' '\\n ' <\"$log\" | awk 'NF { l = $0 } END { print l }')\"\n"
    "        failed=$((failed + 1))\n"
    "        echo \"vla-sweep: FAILED $name: $msg\" >&2\n"
    "        echo \"vla-sweep:     command: $cmd\" >&2\n"
    "        printf '%s\\t%s\\tfailed\\t%s\\t%s\\n' \"$name\" \"$cmd\" \"$secs\" \"$msg\" >>\"$part.tmp.$$\"\n"
    "    fi\n"
    "}\n"
    "case $task in\n";

/* The cases in array-task order: the others in chunks of `chunk` (the sweep's, else 1, fewer tasks
 * than SLURM_MAX_TASKS), then those that run alone, one a task */
typedef struct {
    int *order, nalone, nrest, chunk, nchunks;
} slurm_tasks;

static slurm_tasks tasks_of(const sweep_t *sw, const case_t *cs, int n, int chunk)
{
    slurm_tasks tk = {xmalloc(n * sizeof(int)), 0, 0, chunk, 0};
    if (tk.chunk <= 0)
        tk.chunk = sw->chunk > 0 ? sw->chunk : 1;
    int k = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n; i++)
            if (sw->sec[cs[i].sec].alone == pass) {
                tk.order[k++] = i;
                tk.nalone += pass;
            }
    tk.nrest = n - tk.nalone;
    if (tk.nalone >= SLURM_MAX_TASKS)
        die(2, "--slurm: %d cases run alone, one array task each: more than %d tasks", tk.nalone,
            SLURM_MAX_TASKS - 1);
    if ((tk.nrest + tk.chunk - 1) / tk.chunk + tk.nalone > SLURM_MAX_TASKS)
        tk.chunk = (tk.nrest + SLURM_MAX_TASKS - tk.nalone - 1) / (SLURM_MAX_TASKS - tk.nalone);
    tk.nchunks = (tk.nrest + tk.chunk - 1) / tk.chunk;
    return tk;
}

/* the script's task list: each task's cases, a case_ line each, every word quoted */
static void task_cases(FILE *f, const sweep_t *sw, const case_t *cs, const slurm_tasks *tk)
{
    for (int t = 0; t < tk->nchunks + tk->nalone; t++) {
        fprintf(f, "%d)\n", t);
        int from = t < tk->nchunks ? t * tk->chunk : tk->nrest + t - tk->nchunks;
        int to = t < tk->nchunks ? (from + tk->chunk < tk->nrest ? from + tk->chunk : tk->nrest)
                                 : from + 1;
        for (int j = from; j < to; j++) {
            const case_t *c = &cs[tk->order[j]];
            fprintf(f, "    case_ ");
            sh_quote(f, c->name, 1);
            fputc(' ', f);
            sh_quote(f, c->command, 1);
            fprintf(f, " %d", sw->sec[c->sec].resume);
            /* the program by the path vla-sweep found: a compute node's PATH may differ */
            for (int k = 0; k < c->argc; k++) {
                fputc(' ', f);
                sh_quote(f, k == 0 ? sw->sec[c->sec].path : c->argv[k], 1);
            }
            fputc('\n', f);
        }
        fprintf(f, "    ;;\n");
    }
}

/* the script written in tmp made durable and executable, then put in target's place (script as
 * the user named it); dies (1, or 2 when target became a special file) */
static void slurm_commit(FILE *f, const char *tmp, const char *target, const char *script)
{
    const char *kind;
    int ok = fflush(f) == 0 && fsync(fileno(f)) == 0;
    ok = fclose(f) == 0 && ok;
    int e = ok && chmod(tmp, 0755) == 0 ? vla_file_replace(tmp, target, &kind) : VLA_EIO;
    if (e) {
        int errnum = errno;
        unlink(tmp);
        if (e == VLA_EINVAL) /* it became a special file since the check */
            die(2, "%s: %s, not a regular file: left as it is", script, kind);
        die(1, "cannot write %s: %s", script, strerror(errnum));
    }
}

/* The script quotes every value it runs for bash (exactly: single quotes keep any byte), its
 * comments show them on one line ('?' for a control character), and its #SBATCH lines quote
 * them for sbatch, which reads those lines itself. */
int write_slurm(const sweep_t *sw, const case_t *cs, int n, const char *out, int chunk,
                const char *script)
{
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        die(1, "getcwd: %s", strerror(errno));
    slurm_tasks tk = tasks_of(sw, cs, n, chunk);
    const int ntasks = tk.nchunks + tk.nalone;
    chunk = tk.chunk;
    /* no quoting carries a line break through an #SBATCH line, and Slurm's --output patterns
     * drop a backslash (the tree and the name make the log's path) */
    const struct {
        const char *what, *s;
        int output;
    } sb[] = {{"the working directory", cwd, 0}, {"the output tree", out, 1},
              {"the sweep's name", sw->name, 1}};
    for (size_t i = 0; i < sizeof sb / sizeof sb[0]; i++)
        if (has_control(sb[i].s) || (sb[i].output && strchr(sb[i].s, '\\')))
            die(2, "--slurm: %s %s has a %s, which an #SBATCH line cannot carry", sb[i].what,
                shown(sb[i].s), has_control(sb[i].s) ? "line break or control character" : "backslash");
    int to_stdout = !strcmp(script, "-");
    char *target = to_stdout ? NULL : replaceable(script);
    char *logdir = xprintf("%s/slurm/", out);
    if (mkdirs(logdir))
        die(1, "cannot make %s: %s", logdir, strerror(errno));
    free(logdir);
    char *tmp = to_stdout ? NULL : xprintf("%s.tmp.%ld", target, (long)getpid());
    if (!to_stdout)
        vla_file_remove_stale(target);
    FILE *f = to_stdout ? stdout : vla_file_create(tmp);
    if (!f)
        die(1, "cannot write %s: %s", tmp, strerror(errno));
    char *part = xprintf("%s/slurm/%s.manifest-", out, sw->name),
         *manifest = xprintf("%s/%s.manifest.tsv", out, sw->name),
         *parts = xprintf("%sTASK.tsv", part), *q[5] = {shown(sw->file), shown(script), shown(parts),
                                                        shown(manifest), NULL};
    fprintf(f, "#!/bin/bash\n"
               "# Written by vla-sweep %s --slurm from %s: %d case%s, %d per array task.\n"
               "# Submit it unchanged: sbatch %s\n"
               "# Each array task runs its cases one after another and skips those whose table\n"
               "# exists, so submitting again resumes the sweep. A task leaves its part of the\n"
               "# manifest in %s; once the array is done,\n"
               "# bin/vla-sweep %s writes %s (and reruns what failed).\n",
            VLA_VERSION, q[0], n, n == 1 ? "" : "s", chunk, to_stdout ? "SCRIPT" : q[1], q[2], q[0],
            q[3]);
    char *name = xprintf("vla-sweep-%s", sw->name), *log = xprintf("%s/slurm/%s-", out, sw->name);
    char *sbw[3] = {sbatch_word(name, 0), sbatch_word(cwd, 0), sbatch_word(log, 1)};
    fprintf(f, "#SBATCH --job-name=%s\n", sbw[0]);
    fprintf(f, "#SBATCH --array=0-%d\n#SBATCH --ntasks=1\n", ntasks - 1);
    fprintf(f, "#SBATCH --chdir=%s\n", sbw[1]);
    fprintf(f, "#SBATCH --output=%s%%A_%%a.log\n", sbw[2]);
    for (int i = 0; i < sw->nslurm; i++)
        fprintf(f, "#SBATCH %s\n", sw->slurm[i]);
    fprintf(f, "set -u\ncd ");
    sh_quote(f, cwd, 1);
    fprintf(f, " || exit 1\n"
               "task=${SLURM_ARRAY_TASK_ID:?run this script with sbatch (or set SLURM_ARRAY_TASK_ID)}\n"
               "[ -z \"${SLURM_CPUS_PER_TASK:-}\" ] || export OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK\n"
               "part=");
    sh_quote(f, part, 1);
    fputs("$task.tsv\n", f);
    fputs(case_sh, f);
    task_cases(f, sw, cs, &tk);
    fprintf(f, "*)\n    echo \"vla-sweep: no array task $task (0-%d)\" >&2\n    exit 2\n    ;;\n"
               "esac\n"
               "mv -f \"$part.tmp.$$\" \"$part\"\n"
               "[ $failed = 0 ]\n", ntasks - 1);
    free(tk.order);
    free(part);
    free(manifest);
    free(parts);
    free(name);
    free(log);
    for (int i = 0; i < 3; i++)
        free(sbw[i]);
    if (to_stdout) {
        for (int i = 0; q[i]; i++)
            free(q[i]);
        return 0; /* (main says a failed write: out_status) */
    }
    slurm_commit(f, tmp, target, script);
    fprintf(stderr, PROG ": %d cases in %d array task%s: submit with\n", n, ntasks,
            ntasks == 1 ? "" : "s");
    printf("sbatch %s\n", q[1]);
    for (int i = 0; q[i]; i++)
        free(q[i]);
    free(target);
    free(tmp);
    return 0;
}
