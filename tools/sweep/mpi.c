/* mpi.c: the MPI scheduler (--mpi), the one part of vla-sweep built by mpicc (-DVLA_SWEEP_MPI);
 * built by $(CC) where there is no mpicc, it holds only sweep_has_mpi = 0, and main refuses
 * --mpi. */
#include "sweep.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- MPI: rank 0 hands out one case at a time; every rank, 0 too, runs them ---- */

#ifdef VLA_SWEEP_MPI
#include <mpi.h>

const int sweep_has_mpi = 1;

enum { TAG_WORK = 1, TAG_DONE = 2 };
typedef struct {
    int idx; /* -1: ready for a first case */
    int state;
    double secs;
    char msg[MSGLEN];
    char said[MSGLEN]; /* the case's summary (what it found), read on the rank that ran it */
} result_t;

/* runs a case to its end, passing a stop signal on to it */
static void run_one(const sweep_t *sw, case_t *c, char **env, const sigset_t *set)
{
    double t0 = now();
    pid_t pid = spawn(sw, c, env);
    if (pid < 0) {
        c->state = C_FAILED;
        return;
    }
    int status, forwarded = 0;
    for (;;) {
        pid_t p = waitpid(pid, &status, WNOHANG);
        if (p == pid)
            break;
        if (stop_sig && !forwarded) {
            kill(pid, SIGTERM);
            forwarded = 1;
        }
        wait_signal(set, 0.5);
    }
    finish(c, status, now() - t0);
}

static int run_mpi(const sweep_t *sw, report_t *r, const int *todo, int ntodo, const int *alone,
                   int nalone, sigset_t *set)
{
    int rank, size, lrank, lsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* the GPU goes by the rank within the node: on a cluster, rank 17 of 8-GPU nodes is GPU 1 */
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &lrank);
    MPI_Comm_size(node, &lsize);
    MPI_Comm_free(&node);
    char **gpus;
    int ngpu = gpu_ids(&gpus);
    int threads = ncores() / lsize > 1 ? ncores() / lsize : 1;
    char **env = worker_env(ngpu ? gpus[lrank % ngpu] : NULL, threads);
    if (rank == 0 && !r->quiet)
        fprintf(stderr, PROG ": %d ranks, %d case%s to run%s\n", size, ntodo + nalone,
                ntodo + nalone == 1 ? "" : "s", ngpu ? ", one GPU per rank" : "");

    if (rank != 0) {
        result_t res = {.idx = -1};
        for (;;) {
            MPI_Send(&res, sizeof res, MPI_BYTE, 0, TAG_DONE, MPI_COMM_WORLD);
            int idx;
            MPI_Recv(&idx, 1, MPI_INT, 0, TAG_WORK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (idx < 0)
                break;
            case_t *c = &r->cs[idx];
            if (stop_sig) {
                c->state = C_PENDING;
                snprintf(c->msg, sizeof c->msg, "interrupted");
                c->secs = NAN;
            } else {
                run_one(sw, c, env, set);
            }
            res.idx = idx;
            res.state = c->state;
            res.secs = c->secs;
            memcpy(res.msg, c->msg, sizeof res.msg);
            memcpy(res.said, c->said, sizeof res.said);
        }
        free_env(env);
        return 0;
    }

    int next = 0, active = size - 1;
    pid_t own = 0;
    int own_idx = -1, forwarded = 0;
    double own_t0 = 0;
    while (active > 0 || own || (!stop_sig && next < ntodo)) {
        int busy = 0, flag;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, TAG_DONE, MPI_COMM_WORLD, &flag, &st);
        if (flag) {
            result_t res;
            MPI_Recv(&res, sizeof res, MPI_BYTE, st.MPI_SOURCE, TAG_DONE, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            if (res.idx >= 0) {
                case_t *c = &r->cs[res.idx];
                c->state = res.state;
                c->secs = res.secs;
                memcpy(c->msg, res.msg, sizeof c->msg);
                c->msg[sizeof c->msg - 1] = 0;
                memcpy(c->said, res.said, sizeof c->said);
                c->said[sizeof c->said - 1] = 0;
                if (c->state == C_PENDING) /* a rank was interrupted: the job is going down */
                    stop_sig = stop_sig ? stop_sig : SIGTERM;
                report(r, c);
            }
            int idx = !stop_sig && next < ntodo ? todo[next++] : -1;
            MPI_Send(&idx, 1, MPI_INT, st.MPI_SOURCE, TAG_WORK, MPI_COMM_WORLD);
            active -= idx < 0;
            busy = 1;
        }
        if (own) {
            int status;
            if (stop_sig && !forwarded) {
                kill(own, SIGTERM);
                forwarded = 1;
            }
            if (waitpid(own, &status, WNOHANG) == own) {
                finish(&r->cs[own_idx], status, now() - own_t0);
                report(r, &r->cs[own_idx]);
                own = 0;
                busy = 1;
            }
        }
        if (!own && !stop_sig && next < ntodo) {
            own_idx = todo[next++];
            own_t0 = now();
            own = spawn(sw, &r->cs[own_idx], env);
            if (own < 0) {
                own = 0;
                r->cs[own_idx].state = C_FAILED;
                report(r, &r->cs[own_idx]);
            }
            busy = 1;
        }
        /* the poll's pause: short, since a rank waiting for work is a rank idle */
        wait_signal(set, busy ? 0 : 0.002);
    }
    /* every other rank has stopped: the cases that must run alone, with the node's cores */
    char **env1 = worker_env(ngpu ? gpus[0] : NULL, ncores());
    for (int i = 0; i < nalone && !stop_sig; i++) {
        run_one(sw, &r->cs[alone[i]], env1, set);
        report(r, &r->cs[alone[i]]);
    }
    free_env(env);
    free_env(env1);
    return summary(r);
}

/* rank 0 locks the tree and writes the manifest; every rank then runs cases until none is left */
void sweep_mpi(const sweep_t *sw, report_t *r, const int *todo, int ntodo, int nalone,
               const char *tree, int *argc, char ***argv)
{
    sigset_t set;
    int rank = 0;
    block_signals(&set); /* before MPI's threads start, so that they inherit the mask */
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int status;
    int locked = 1;
    if (rank == 0) {
        if (mkdirs(r->manifest))
            die(1, "cannot make %s: %s", tree, strerror(errno));
        free(replaceable(r->manifest));
        char *why = lock_tree(tree);
        if (why) {
            fprintf(stderr, PROG ": %s\n", why);
            free(why);
            locked = 0;
        } else {
            carry_all(sw, tree, r->manifest, r->cs, r->n);
            save(r, 1);
        }
    }
    /* the workers wait for the tree before they write into it, and go when it is another's */
    MPI_Bcast(&locked, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!locked) {
        MPI_Finalize();
        fflush(NULL);
        _exit(2);
    }
    status = run_mpi(sw, r, todo, ntodo - nalone, todo + ntodo - nalone, nalone, &set);
    MPI_Finalize();
    /* Open MPI leaves allocations behind in components it has unloaded, which no leak
     * suppression can name: _exit skips the leak checker of a -fsanitize=address build (the
     * same code, run locally, is checked) */
    fflush(NULL);
    _exit(status);
}
#else
const int sweep_has_mpi = 0;

void sweep_mpi(const sweep_t *sw, report_t *r, const int *todo, int ntodo, int nalone,
               const char *tree, int *argc, char ***argv)
{
    abort(); /* main refuses --mpi first */
}
#endif
