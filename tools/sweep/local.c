/* local.c: the local scheduler: N workers on this machine, each running one case at a time. */
#include "sweep.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/wait.h>

/* ---- local: N workers ---- */

void run_local(const sweep_t *sw, report_t *r, const int *todo, int ntodo, int jobs)
{
    char **gpus;
    int ngpu = gpu_ids(&gpus);
    int threads = ncores() / jobs > 1 ? ncores() / jobs : 1;
    pid_t *pid = xcalloc(jobs, sizeof *pid);
    int *which = xcalloc(jobs, sizeof *which);
    double *t0 = xcalloc(jobs, sizeof *t0);
    char ***env = xcalloc(jobs, sizeof *env);
    for (int w = 0; w < jobs; w++)
        env[w] = worker_env(ngpu ? gpus[w % ngpu] : NULL, threads);
    sigset_t set;
    block_signals(&set);
    int next = 0, running = 0, forwarded = 0;
    for (;;) {
        for (int w = 0; w < jobs && !stop_sig && next < ntodo; w++)
            if (!pid[w]) {
                case_t *c = &r->cs[todo[next++]];
                t0[w] = now();
                pid[w] = spawn(sw, c, env[w]);
                if (pid[w] < 0) {
                    pid[w] = 0;
                    c->state = C_FAILED;
                    report(r, c);
                    continue;
                }
                which[w] = (int)(c - r->cs);
                running++;
            }
        if (!running)
            break;
        if (stop_sig && !forwarded) {
            for (int w = 0; w < jobs; w++)
                if (pid[w])
                    kill(pid[w], SIGTERM);
            forwarded = 1;
        }
        int status;
        pid_t p;
        while ((p = waitpid(-1, &status, WNOHANG)) > 0)
            for (int w = 0; w < jobs; w++)
                if (pid[w] == p) {
                    pid[w] = 0;
                    running--;
                    case_t *c = &r->cs[which[w]];
                    finish(c, status, now() - t0[w]);
                    report(r, c);
                }
        if (running)
            wait_signal(&set, 0.5);
    }
    for (int w = 0; w < jobs; w++)
        free_env(env[w]);
    free(env);
    free(pid);
    free(which);
    free(t0);
}
