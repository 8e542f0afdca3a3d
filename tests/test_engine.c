/* test_engine.c: the engine (vlastab.h, "engines"), the one place where runs advance. The cpu
 * backend against vla_model stepped by hand (the definition), every kernel backend here (the
 * lanes, the GPU's kernels emulated on host threads; the GPU where there is one) against the cpu
 * backend bit for bit, the per-step taps, save and load across backends, prepared inputs, the
 * rounding of the reference's inputs, the stop flag, the errors, and vla_trajectory_run (the
 * engine over given arrays) against models stepped by hand. */
#include "check.h"
#include "vlacuda.h"
#include "vlaref.h"
#include "vlastab.h"
#include <stdlib.h>
#include <string.h>


/* the number of differing entries of the state (S, A where there is one, o, kp, alpha, n) and the
 * counters of run r in engines a and b */
static long diff_state(vla_engine *a, int ra, vla_engine *b, int rb, char *what, size_t len)
{
    const vla_config *cfg = vla_engine_config(a);
    int d = cfg->d, dv = cfg->dv;
    size_t nmax = (size_t)d * (d > dv ? d : dv);
    double *x = malloc(nmax * sizeof *x), *y = malloc(nmax * sizeof *y);
    const struct {
        vla_quantity q;
        size_t n;
        const char *name;
    } qs[] = {{VLA_Q_S, (size_t)dv * d, "S"}, {VLA_Q_A, vla_model_has_A(cfg->model) ? (size_t)d * d : 0, "A"},
              {VLA_Q_N, (size_t)d, "n"},      {VLA_Q_O, (size_t)dv, "o"},
              {VLA_Q_KP, (size_t)d, "kp"},    {VLA_Q_ALPHA, (size_t)d, "alpha"}};
    long bad = 0;
    for (size_t k = 0; k < sizeof qs / sizeof qs[0]; k++) {
        if (!qs[k].n)
            continue;
        if (vla_engine_get(a, ra, qs[k].q, x) || vla_engine_get(b, rb, qs[k].q, y)) {
            snprintf(what, len, "get %s failed", qs[k].name);
            bad++;
            continue;
        }
        for (size_t i = 0; i < qs[k].n; i++)
            if (!vla_test_same(x[i], y[i]) && bad++ == 0)
                snprintf(what, len, "%s[%zu]: %a vs %a", qs[k].name, i, x[i], y[i]);
    }
    vla_counts ca, cb;
    vla_engine_counts(a, ra, &ca);
    vla_engine_counts(b, rb, &cb);
    if (memcmp(&ca, &cb, sizeof ca) && bad++ == 0)
        snprintf(what, len, "counters differ (guard %ld vs %ld, steps %ld vs %ld)", ca.guard,
                 cb.guard, ca.steps, cb.steps);
    if (vla_engine_t(a, ra) != vla_engine_t(b, rb) && bad++ == 0)
        snprintf(what, len, "t %ld vs %ld", vla_engine_t(a, ra), vla_engine_t(b, rb));
    free(x);
    free(y);
    return bad;
}

static void spec_of(vla_engine_spec *sp, vla_model_kind mk, vla_track tr, vla_prec p, int d,
                    const char *stream, int runs)
{
    memset(sp, 0, sizeof *sp);
    vla_config_default(&sp->cfg, mk, d);
    sp->cfg.prec = p;
    if (vla_model_has_A(mk))
        sp->cfg.track = tr;
    if (vla_track_holds(tr) != VLA_HOLDS_A) /* chol and the ways that keep M: no nudge, clamp */
        sp->cfg.nudge = sp->cfg.clamp_on = 0;
    sp->stream = stream;
    sp->seed = 7;
    sp->runs = runs;
    sp->round_inputs = VLA_FMT_F64;
}

/* the cpu backend is vla_model stepped by hand on the stream: the definition of a run */
TEST(engine_cpu_is_the_model)
{
    static const struct {
        vla_model_kind mk;
        vla_track tr;
        vla_prec p;
        const char *stream;
    } cs[] = {{VLA_VLA3, VLA_TRACK_SM, VLA_F16, "lmlike"},   {VLA_RLS, VLA_TRACK_JOSEPH, VLA_F32, "gauss"},
              {VLA_DELTA, VLA_TRACK_SM, VLA_BF16, "mqar:6,3"}, {VLA_VLA1, VLA_TRACK_CHOL, VLA_F64, "gauss"},
              {VLA_LA, VLA_TRACK_SM, VLA_F16_F32, "lmlike"}, {VLA_VLA3, VLA_TRACK_COMP, VLA_F16, "gauss"}};
    for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
        vla_engine_spec sp;
        spec_of(&sp, cs[c].mk, cs[c].tr, cs[c].p, 8, cs[c].stream, 3);
        vla_engine *e;
        char what[200] = "";
        vla_error err = {0};
        int r = vla_engine_new(&e, &sp, &err);
        CHECK_MSG(r == 0, "case %zu: %s", c, err.msg);
        if (r)
            continue;
        long T = !strncmp(cs[c].stream, "mqar", 4) ? 15 : 300;
        CHECK_EQ_INT(vla_engine_advance(e, T / 3), 0);
        CHECK_EQ_INT(vla_engine_advance(e, T), 0);
        for (int run = 0; run < 3; run++) {
            vla_engine_spec one = sp; /* run `run` alone: its own head, stepped by hand */
            one.runs = 1;
            one.first_head = run;
            vla_engine *h;
            CHECK(vla_engine_new(&h, &one, &err) == 0);
            vla_model *m;
            vla_stream *s;
            vla_step_buf b;
            CHECK(vla_model_new(&m, &sp.cfg) == 0);
            CHECK(vla_stream_open(&s, sp.stream, 8, 8, sp.seed, &err) == 0);
            vla_step_buf_alloc(&b, 8, 8);
            for (long t = 1; t <= T; t++) {
                vla_stream_get(s, (uint32_t)run, t, &b);
                vla_input in = vla_input_of(&b);
                CHECK_EQ_INT(b.is_read ? vla_model_read(m, b.q) : vla_model_step(m, &in), 0);
            }
            /* the hand-stepped model as an engine of one run: load it into h */
            FILE *f = tmpfile();
            CHECK(vla_model_save(m, f) == 0);
            rewind(f);
            CHECK_EQ_INT(vla_engine_load(h, 0, f), 0);
            fclose(f);
            long bad = diff_state(e, run, h, 0, what, sizeof what);
            CHECK_MSG(bad == 0, "case %zu run %d: %ld entries differ from the model stepped by hand, "
                                "first %s", c, run, bad, what);
            vla_model_free(m);
            vla_stream_close(s);
            vla_step_buf_free(&b);
            vla_engine_free(h);
        }
        vla_engine_free(e);
    }
}

/* Every kernel backend that runs here against the cpu backend: same bits, same counters, same
 * taps after every step. */
typedef struct {
    double *o, *kp, *al;
    long *moved;
    long T;
    int d, dv;
} taprec;

/* a tap that is not there (not asked for; o inside a chunk) is recorded as -1s */
static void record_one(double *dst, const double *src, int n)
{
    for (int j = 0; j < n; j++)
        dst[j] = src ? src[j] : -1;
}

static int record(void *ctx, const vla_step_view *v)
{
    taprec *tr = ctx;
    size_t i = (size_t)v->run * tr->T + (v->t - 1);
    record_one(tr->o + i * tr->dv, v->o, tr->dv);
    record_one(tr->kp + i * tr->d, v->kp, tr->d);
    record_one(tr->al + i * tr->d, v->alpha, tr->d);
    tr->moved[2 * i] = v->a_moved;
    tr->moved[2 * i + 1] = v->a_moved_diag;
    return 0;
}

static void taprec_init(taprec *tr, int runs, long T, int d, int dv)
{
    tr->T = T;
    tr->d = d;
    tr->dv = dv;
    tr->o = calloc((size_t)runs * T * dv, sizeof(double));
    tr->kp = calloc((size_t)runs * T * d, sizeof(double));
    tr->al = calloc((size_t)runs * T * d, sizeof(double));
    tr->moved = calloc(2 * (size_t)runs * T, sizeof(long)); /* all, then the diagonal's */
}

static void taprec_free(taprec *tr)
{
    free(tr->o);
    free(tr->kp);
    free(tr->al);
    free(tr->moved);
}

static long taprec_diff(const taprec *a, const taprec *b, int runs, char *what, size_t len)
{
    long bad = 0;
    size_t n = (size_t)runs * a->T;
    for (size_t i = 0; i < n; i++) {
        int ok = a->moved[2 * i] == b->moved[2 * i] && a->moved[2 * i + 1] == b->moved[2 * i + 1];
        for (int j = 0; j < a->dv; j++)
            ok &= vla_test_same(a->o[i * a->dv + j], b->o[i * a->dv + j]);
        for (int j = 0; j < a->d; j++)
            ok &= vla_test_same(a->kp[i * a->d + j], b->kp[i * a->d + j]) &&
                  vla_test_same(a->al[i * a->d + j], b->al[i * a->d + j]);
        if (!ok && bad++ == 0)
            snprintf(what, len, "run %zu step %zu (moved %ld vs %ld)", i / a->T, i % a->T + 1,
                     a->moved[2 * i], b->moved[2 * i]);
    }
    return bad;
}

static void backend_vs_cpu(const vla_backend *kb, const char *name)
{
    static vla_error why; /* the skip's reason outlives the call */
    if (!vla_cuda_probe_target(kb == vla_backend_lanes() ? VLA_CUDA_LANES
                               : kb == vla_backend_emu() ? VLA_CUDA_EMULATE
                                                          : VLA_CUDA_GPU,
                               &why)) {
        vla_test_skip(why.msg);
        return;
    }
    const int emu = kb == vla_backend_emu();
    /* the forms too (docs/forms.md): a chunk form's taps are its read-outs at chunk ends */
    static const struct {
        vla_model_kind mk;
        vla_track tr;
        vla_prec p;
        const char *stream;
        int d;
        const char *form;
        int decay; /* delta's decay (vla_test_decay's), in prepared inputs */
        const char *set; /* the chunk forms' settings, NAME=VALUE,... (docs/forms.md) */
    } cs[] = {{VLA_VLA3, VLA_TRACK_SM, VLA_F16, "lmlike", 8, "seq", 0, NULL},
              {VLA_VLA3, VLA_TRACK_SMSYM, VLA_F32, "gauss", 5, "seq", 0, NULL},
              {VLA_RLS, VLA_TRACK_SM, VLA_BF16_F32, "subspace:2,0.01", 8, "seq", 0, NULL},
              {VLA_VLA1, VLA_TRACK_SM, VLA_F64, "gauss:10", 4, "seq", 0, NULL},
              {VLA_DELTA, VLA_TRACK_SM, VLA_F16, "mqar:5,2", 8, "seq", 0, NULL},
              {VLA_LA, VLA_TRACK_SM, VLA_BF16, "lmlike", 6, "seq", 0, NULL},
              {VLA_VLA3, VLA_TRACK_JOSEPH, VLA_F32, "lmlike", 8, "seq", 0, NULL},
              {VLA_RLS, VLA_TRACK_CHOL, VLA_F16_F32, "gauss", 8, "seq", 0, NULL},
              {VLA_VLA3, VLA_TRACK_SM, VLA_F16_F32, "lmlike", 8, "chunk:4", 0, NULL},
              {VLA_DELTA, VLA_TRACK_SM, VLA_F16_KERN, "gauss", 6, "chunk:8", 0, NULL},
              {VLA_LA, VLA_TRACK_SM, VLA_BF16_KERN, "mqar:12,4", 5, "chunk:16", 0, NULL},
              {VLA_RLS, VLA_TRACK_SM, VLA_F32, "gauss", 4, "chunk:4", 0, NULL},
              {VLA_VLA1, VLA_TRACK_SM, VLA_F64, "gauss:10", 4, "chunk:2", 0, NULL},
              {VLA_VLA3, VLA_TRACK_CG, VLA_BF16_F32, "lmlike", 8, "chunk:4", 0, NULL},
              {VLA_RLS, VLA_TRACK_CG, VLA_F16_KERN, "gauss", 6, "chunk:16", 0, NULL},
              {VLA_VLA1, VLA_TRACK_CG, VLA_F32, "gauss:10", 5, "chunk:8", 0, NULL},
              {VLA_VLA3, VLA_TRACK_SMSYM, VLA_BF16, "lmlike", 6, "scan", 0, NULL},
              {VLA_LA, VLA_TRACK_SM, VLA_F16, "lmlike", 5, "scan", 0, NULL},
              {VLA_DELTA, VLA_TRACK_SM, VLA_BF16_KERN, "gauss", 6, "chunk:8", 1, NULL},
              {VLA_DELTA, VLA_TRACK_SM, VLA_F32, "lmlike", 5, "chunk:4", 1, NULL},
              {VLA_DELTA, VLA_TRACK_SM, VLA_F16, "lmlike", 7, "scan", 1, NULL},
              {VLA_RWKV7, VLA_TRACK_SM, VLA_BF16_KERN, "lmlike", 8, "chunk:16", 0, NULL},
              {VLA_RWKV7, VLA_TRACK_SM, VLA_F16_KERN, "lmlike", 5, "chunk:4", 0, NULL},
              /* the gated family with the chunk forms' settings: the kernels run recur.h's text, so
               * every setting reaches them (the GPU refuses a gated chunk: its exp is not lib's) */
              {VLA_GDN, VLA_TRACK_SM, VLA_BF16_KERN, "lmlike", 8, "chunk:16", 0,
               "tri=neumann,stage=bf16,cumsum=tree"},
              {VLA_KDA, VLA_TRACK_SM, VLA_F16_KERN, "lmlike", 6, "chunk:8", 0,
               "tri=forward,anchor=mid,base=2,gate_lb=-5"},
              {VLA_GLA, VLA_TRACK_SM, VLA_BF16_KERN, "lmlike", 5, "chunk:4", 0,
               "cumsum_fmt=io,anchor=first,stage=f16"},
              {VLA_MAMBA2, VLA_TRACK_SM, VLA_F32, "lmlike", 6, "chunk:8", 0,
               "gate_clamp=1,cumsum=tree,tri=neumann"},
              {VLA_GDN, VLA_TRACK_SM, VLA_BF16_KERN, "lmlike", 8, "seq", 0,
               "cache=bf16,decay_bf16=1,beta_bf16=1"},
              {VLA_KDA, VLA_TRACK_SM, VLA_F32, "lmlike", 6, "seq", 0, "cache=f16"}};
    for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
        if ((kb != vla_backend_lanes()) && cs[c].tr != VLA_TRACK_SM && cs[c].tr != VLA_TRACK_SMSYM)
            continue; /* the CUDA kernels track A by sm or sm-sym */
        const int runs = 3, d = cs[c].d;
        long n, G, T = sscanf(cs[c].stream, "mqar:%ld,%ld", &n, &G) == 2 ? 2 * n + G : emu ? 60 : 400;
        vla_engine_spec sp;
        spec_of(&sp, cs[c].mk, cs[c].tr, cs[c].p, d, cs[c].stream, runs);
        CHECK(vla_form_parse(&sp.cfg, cs[c].form) == 0);
        char set[200];
        snprintf(set, sizeof set, "%s", cs[c].set ? cs[c].set : "");
        for (char *kv = strtok(set, ","); kv; kv = strtok(NULL, ",")) {
            char *eq = strchr(kv, '=');
            vla_error why = {0};
            *eq = 0;
            CHECK_MSG(vla_config_set_why(&sp.cfg, kv, eq + 1, &why) == 0, "case %zu: %s=%s: %s", c,
                      kv, eq + 1, vla_error_msg(&why));
        }
        int chunk = vla_form_pending(&sp.cfg, 1) != 0;
        if (kb == vla_backend_cuda() && chunk && vla_model_gate(cs[c].mk))
            continue; /* the GPU's exp is not lib's: refused (rwkv7's chunk, as delta's decay) */
        vla_inputs x = {0};
        if (cs[c].decay) {
            vla_error e = {0};
            CHECK_MSG(vla_inputs_draw(&x, cs[c].stream, 7, d, d, runs, T, 0, &e) == 0, "%s", e.msg);
            for (long i = 0; i < runs * T; i++)
                x.in[i].decay = vla_test_decay(i % T + 1 + i / T);
            sp.cfg.delta_form = VLA_DELTA_DECAY;
            sp.stream = NULL, sp.in = x.in, sp.T = T;
            if (kb == vla_backend_cuda() && chunk) { /* the GPU's exp is not lib's: refused */
                vla_inputs_free(&x);
                continue;
            }
        }
        if (chunk) /* the devices that fit a chunk */
            sp.cfg.period = 32, sp.cfg.clamp_on = sp.cfg.guard = cs[c].mk == VLA_VLA3;
        if (vla_track_holds(cs[c].tr) == VLA_HOLDS_M)
            sp.cfg.nudge = sp.cfg.clamp_on = 0;
        sp.taps = VLA_TAP_O | VLA_TAP_MOVED | (chunk ? 0 : VLA_TAP_KP | VLA_TAP_ALPHA);
        sp.on_step = record;
        taprec ta, tb;
        taprec_init(&ta, runs, T, d, d);
        taprec_init(&tb, runs, T, d, d);
        vla_engine *a, *b;
        vla_error err;
        char what[200] = "";
        sp.ctx = &ta;
        CHECK_MSG(vla_engine_new(&a, &sp, &err) == 0, "%s case %zu: %s", name, c, err.msg);
        sp.backend = kb;
        sp.ctx = &tb;
        int r = vla_engine_new(&b, &sp, &err);
        CHECK_MSG(r == 0, "%s case %zu: %s", name, c, err.msg);
        if (r) {
            vla_engine_free(a);
            continue;
        }
        /* in uneven strides, so that chunks and checkpoints fall anywhere */
        for (long t = 7; t < T + 7; t += 7 + t / 3) {
            long to = t < T ? t : T;
            CHECK_EQ_INT(vla_engine_advance(a, to), 0);
            CHECK_MSG(vla_engine_advance(b, to) == 0, "%s: %s", name, vla_error_msg(vla_engine_error(b)));
            for (int run = 0; run < runs; run++) {
                long bad = diff_state(a, run, b, run, what, sizeof what);
                CHECK_MSG(bad == 0, "%s case %zu run %d t %ld: %ld differ from the cpu, first %s",
                          name, c, run, to, bad, what);
            }
        }
        if (chunk) /* no read-out inside a chunk, its read-out at its end */
            CHECK_MSG(ta.o[0] == -1 && ta.o[(size_t)(sp.cfg.chunk - 1) * d] != -1,
                      "case %zu: o taps %g at step 1, %g at step C", c, ta.o[0],
                      ta.o[(size_t)(sp.cfg.chunk - 1) * d]);
        long bad = taprec_diff(&ta, &tb, runs, what, sizeof what);
        CHECK_MSG(bad == 0, "%s case %zu: %ld steps' taps differ from the cpu's, first %s", name, c,
                  bad, what);
        if (cs[c].set) { /* the settings matter here: without them the cpu's read-outs differ */
            vla_engine *z;
            taprec tz;
            taprec_init(&tz, runs, T, d, d);
            vla_config_default(&sp.cfg, cs[c].mk, d);
            sp.cfg.prec = cs[c].p;
            CHECK(vla_form_parse(&sp.cfg, cs[c].form) == 0);
            sp.backend = vla_backend_cpu(), sp.ctx = &tz;
            CHECK_MSG(vla_engine_new(&z, &sp, &err) == 0, "case %zu: %s", c, err.msg);
            CHECK_EQ_INT(vla_engine_advance(z, T), 0);
            CHECK_MSG(taprec_diff(&ta, &tz, runs, what, sizeof what) > 0,
                      "case %zu: %s moved no read-out", c, cs[c].set);
            vla_engine_free(z);
            taprec_free(&tz);
        }
        /* the moved count means something: some A entries move early on, none on a read */
        if (vla_model_has_A(cs[c].mk) && cs[c].tr != VLA_TRACK_CHOL && !chunk)
            CHECK_MSG(ta.moved[0] > 0 && ta.moved[1] > 0 && ta.moved[1] <= ta.moved[0] &&
                          ta.moved[1] <= cs[c].d,
                      "case %zu: a_moved at step 1 is %ld, on the diagonal %ld", c, ta.moved[0],
                      ta.moved[1]);
        taprec_free(&ta);
        taprec_free(&tb);
        vla_engine_free(a);
        vla_engine_free(b);
        vla_inputs_free(&x);
    }
}

TEST(engine_lanes_bits_equal_cpu) { backend_vs_cpu(vla_backend_lanes(), "lanes"); }
TEST(engine_emu_bits_equal_cpu) { backend_vs_cpu(vla_backend_emu(), "emu"); }
TEST(engine_cuda_bits_equal_cpu) { backend_vs_cpu(vla_backend_cuda(), "cuda"); }

/* the kernel backend that runs here: the lanes where the CPU has them, else the emulation */
static const vla_backend *kernel_backend(void)
{
    vla_error why;
    return vla_cuda_probe_target(VLA_CUDA_LANES, &why) ? vla_backend_lanes()
                                                                   : vla_backend_emu();
}

/* every run of `from` saved and loaded into `to` */
static void hand_over(vla_engine *from, vla_engine *to, int runs)
{
    for (int run = 0; run < runs; run++) {
        FILE *f = tmpfile();
        CHECK(vla_engine_save(from, run, f) == 0);
        rewind(f);
        CHECK_MSG(vla_engine_load(to, run, f) == 0, "%s", vla_error_msg(vla_engine_error(to)));
        fclose(f);
    }
}

/* a run saved on one backend continues on another with the same bits */
TEST(engine_save_load_across_backends)
{
    vla_error err;
    char what[200] = "";
    const vla_backend *kb = kernel_backend();
    vla_engine_spec sp;
    spec_of(&sp, VLA_VLA3, VLA_TRACK_SM, VLA_F16, 8, "lmlike", 2);
    vla_engine *a, *b, *c;
    CHECK(vla_engine_new(&a, &sp, &err) == 0);
    CHECK(vla_engine_new(&c, &sp, &err) == 0);
    sp.backend = kb;
    CHECK_MSG(vla_engine_new(&b, &sp, &err) == 0, "%s", err.msg);
    CHECK_EQ_INT(vla_engine_advance(a, 100), 0);
    CHECK_EQ_INT(vla_engine_advance(c, 250), 0);
    hand_over(a, b, 2); /* cpu at 100 -> kernel */
    CHECK_EQ_INT(vla_engine_t(b, 1), 100);
    CHECK_EQ_INT(vla_engine_advance(b, 180), 0);
    hand_over(b, a, 2); /* kernel at 180 -> cpu, on to 250 */
    CHECK_EQ_INT(vla_engine_advance(a, 250), 0);
    for (int run = 0; run < 2; run++) {
        long bad = diff_state(a, run, c, run, what, sizeof what);
        CHECK_MSG(bad == 0, "run %d: %ld differ from the run never stopped, first %s", run, bad, what);
    }
    /* another configuration's state is refused */
    vla_engine_spec other;
    spec_of(&other, VLA_VLA3, VLA_TRACK_SM, VLA_F32, 8, "lmlike", 1);
    vla_engine *x;
    CHECK(vla_engine_new(&x, &other, &err) == 0);
    FILE *f = tmpfile();
    vla_engine_save(a, 0, f);
    rewind(f);
    CHECK_EQ_INT(vla_engine_load(x, 0, f), VLA_EFORMAT);
    fclose(f);
    vla_engine_free(x);
    vla_engine_free(a);
    vla_engine_free(b);
    vla_engine_free(c);
}

/* a chunk form saved inside a chunk (its buffered inputs are state) continues on another
 * backend with the same bits; a read inside a chunk and per-step k' taps are refused */
TEST(engine_forms_save_inside_chunk_and_refusals)
{
    vla_error err;
    char what[200] = "";
    const vla_backend *kb = kernel_backend();
    vla_engine_spec sp;
    spec_of(&sp, VLA_VLA3, VLA_TRACK_SM, VLA_F16_KERN, 8, "lmlike", 2);
    CHECK(vla_form_parse(&sp.cfg, "chunk:8") == 0);
    sp.cfg.period = 16;
    vla_engine *a, *b, *c;
    CHECK(vla_engine_new(&a, &sp, &err) == 0);
    CHECK(vla_engine_new(&c, &sp, &err) == 0);
    sp.backend = kb;
    CHECK_MSG(vla_engine_new(&b, &sp, &err) == 0, "%s", err.msg);
    CHECK_EQ_INT(vla_engine_advance(a, 13), 0);
    CHECK_EQ_INT(vla_engine_advance(c, 40), 0);
    hand_over(a, b, 2);
    CHECK_EQ_INT(vla_engine_advance(b, 40), 0);
    for (int run = 0; run < 2; run++) {
        long bad = diff_state(b, run, c, run, what, sizeof what);
        CHECK_MSG(bad == 0, "run %d: %ld differ from the run never stopped, first %s", run, bad, what);
    }
    vla_engine_free(a);
    vla_engine_free(b);
    vla_engine_free(c);
    /* mqar:5,2 reads after 7 writes: inside a chunk of 4, on every backend */
    const vla_backend *bs[] = {vla_backend_cpu(), kb};
    for (int i = 0; i < 2; i++) {
        spec_of(&sp, VLA_DELTA, VLA_TRACK_SM, VLA_F32, 8, "mqar:5,2", 1);
        sp.backend = bs[i];
        CHECK(vla_form_parse(&sp.cfg, "chunk:4") == 0);
        CHECK(vla_engine_new(&a, &sp, &err) == 0);
        CHECK_EQ_INT(vla_engine_advance(a, 12), VLA_ENOTSUP);
        CHECK_MSG(strstr(vla_error_msg(vla_engine_error(a)), "step 8: a read inside a chunk (3 of its 4"), "%s",
                  vla_error_msg(vla_engine_error(a)));
        vla_engine_free(a);
    }
    sp.taps = VLA_TAP_KP;
    sp.on_step = record;
    CHECK_EQ_INT(vla_engine_new(&a, &sp, &err), VLA_ENOTSUP);
    CHECK_MSG(strstr(err.msg, "no per-step k' and alpha taps in the chunk form"), "%s", err.msg);
}

/* prepared inputs give the stream's bits; shared and cycled inputs are what benchmarks use */
TEST(engine_prepared_inputs)
{
    const int d = 8, runs = 2;
    const long T = 50;
    char what[200] = "";
    vla_error err = {0};
    vla_stream *s;
    CHECK(vla_stream_open(&s, "gauss", d, d, 7, &err) == 0);
    double *store = malloc((size_t)runs * T * 5 * d * sizeof *store);
    vla_input *in = malloc((size_t)runs * T * sizeof *in);
    vla_step_buf b;
    vla_step_buf_alloc(&b, d, d);
    for (int h = 0; h < runs; h++)
        for (long t = 1; t <= T; t++) {
            size_t i = (size_t)h * T + t - 1;
            double *p = store + i * 5 * d;
            vla_stream_get(s, (uint32_t)h, t, &b);
            memcpy(p, b.q, d * sizeof *p);
            memcpy(p + d, b.k, d * sizeof *p);
            memcpy(p + 2 * d, b.v, d * sizeof *p);
            memcpy(p + 3 * d, b.u, d * sizeof *p);
            in[i] = (vla_input){.q = p, .k = p + d, .v = p + 2 * d, .u = p + 3 * d, .beta = NAN, .decay = NAN};
        }
    vla_engine_spec sp;
    spec_of(&sp, VLA_VLA3, VLA_TRACK_SM, VLA_BF16, d, "gauss", runs);
    vla_engine *a, *p, *c;
    CHECK(vla_engine_new(&a, &sp, &err) == 0);
    sp.stream = NULL;
    sp.in = in;
    sp.T = T;
    CHECK(vla_engine_new(&p, &sp, &err) == 0);
    CHECK_EQ_INT(vla_engine_advance(a, T), 0);
    CHECK_EQ_INT(vla_engine_advance(p, T), 0);
    for (int run = 0; run < runs; run++)
        CHECK_MSG(diff_state(a, run, p, run, what, sizeof what) == 0, "run %d: %s", run, what);
    CHECK(vla_engine_advance(p, T + 1) == VLA_ERANGE); /* beyond the inputs, without cycle */
    CHECK_MSG(strstr(vla_error_msg(vla_engine_error(p)), "inputs end at step 50") != NULL, "%s", vla_error_msg(vla_engine_error(p)));
    /* shared and cycled: every run takes head 0's T steps again and again */
    sp.shared = sp.cycle = 1;
    CHECK(vla_engine_new(&c, &sp, &err) == 0);
    CHECK_EQ_INT(vla_engine_advance(c, 3 * T), 0);
    CHECK_MSG(diff_state(c, 0, c, 1, what, sizeof what) == 0, "shared inputs: %s", what);
    CHECK_EQ_INT(vla_engine_t(c, 1), 3 * T);
    vla_engine_free(a);
    vla_engine_free(p);
    vla_engine_free(c);
    vla_stream_close(s);
    vla_step_buf_free(&b);
    free(store);
    free(in);
}

/* a window of a stream's steps (vla_inputs_open, _fill), refilled between advances: engines fed
 * from it take the bits of engines that read the stream themselves (vla-check's groups read a
 * trace once this way), gates and mqar's reads included, on the cpu and in the lanes */
TEST(engine_window_inputs)
{
    const struct {
        vla_model_kind mk;
        vla_prec p;
        const char *stream, *form;
    } cs[] = {{VLA_GDN, VLA_BF16, "lmlike", "chunk:8"}, {VLA_LA, VLA_F32, "mqar:12,4", "seq"},
              {VLA_VLA3, VLA_F16, "gauss", "seq"}, {VLA_RWKV7, VLA_F32, "lmlike", "seq"}};
    const vla_backend *bs[2] = {vla_backend_cpu(), vla_backend_lanes()};
    const int d = 8, runs = 3;
    const long W = 16, T = 28;
    char what[200] = "";
    vla_error err = {0};
    for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++)
        for (int k = 0; k < 2; k++) {
            vla_engine_spec sp;
            spec_of(&sp, cs[c].mk, VLA_TRACK_SM, cs[c].p, d, cs[c].stream, runs);
            CHECK(vla_form_parse(&sp.cfg, cs[c].form) == 0);
            sp.backend = bs[k];
            vla_inputs x;
            CHECK_MSG(vla_inputs_open(&x, cs[c].stream, 7, d, d, runs, W, T,
                                      vla_model_reads(&sp.cfg), &err) == 0, "%s", err.msg);
            vla_engine *a, *b;
            CHECK_MSG(vla_engine_new(&a, &sp, &err) == 0, "%s", err.msg);
            sp.stream = NULL, sp.in = x.in, sp.is_read = x.is_read, sp.T = x.T, sp.cycle = 1;
            CHECK_MSG(vla_engine_new(&b, &sp, &err) == 0, "%s", err.msg);
            for (long t = 0, to; t < T; t = to) {
                to = t + 3 + t % W < T ? t + 3 + t % W : T; /* uneven strides, at most W */
                CHECK_MSG(vla_inputs_fill(&x, t, to, &err) == 0, "%s", err.msg);
                CHECK_EQ_INT(vla_engine_advance(a, to), 0);
                CHECK_MSG(vla_engine_advance(b, to) == 0, "%s", vla_error_msg(vla_engine_error(b)));
                for (int run = 0; run < runs && !vla_form_pending(&sp.cfg, to); run++)
                    CHECK_MSG(diff_state(a, run, b, run, what, sizeof what) == 0,
                              "case %zu on %s, run %d, t %ld: %s", c, vla_backend_name(bs[k]),
                              run, to, what);
            }
            CHECK_EQ_INT(vla_engine_t(b, runs - 1), T);
            /* more steps than the window holds: refused, nothing overwritten */
            CHECK(vla_inputs_fill(&x, 0, W + 1, &err) == VLA_ERANGE);
            vla_engine_free(a);
            vla_engine_free(b);
            vla_inputs_free(&x);
        }
    /* a window longer than a finite stream is cut to its length: engines take x.T */
    vla_inputs x;
    CHECK(vla_inputs_open(&x, "mqar:3,2", 7, d, d, runs, W, W, 0, &err) == 0);
    CHECK_EQ_INT(x.T, 8);
    vla_inputs_free(&x);
}

/* vla_inputs_draw_part (vla-check's judge of gradients, a head at a time): heads h0 .. h0 + n - 1
 * drawn alone are those heads of vla_inputs_draw, bit for bit, the gated family's inputs too */
TEST(inputs_draw_part_is_the_heads_of_draw)
{
    const int d = 8, dv = 4, H = 3;
    const long T = 20;
    const unsigned want = VLA_IN_LOGDECAY_D | VLA_IN_A | VLA_IN_B;
    const char *streams[] = {"lmlike", "gauss:1,sigmoid"};
    vla_error err = {0};
    for (int c = 0; c < 2; c++) {
        vla_inputs all, part;
        CHECK_MSG(vla_inputs_draw(&all, streams[c], 7, d, dv, H, T, want, &err) == 0,
                  "%s", err.msg);
        CHECK_MSG(vla_inputs_draw_part(&part, streams[c], 7, d, dv, 1, 2, T, want, &err) == 0,
                  "%s", err.msg);
        for (long i = 0; i < 2 * T; i++) {
            const vla_input *a = &all.in[T + i], *b = &part.in[i];
            const double *va[] = {a->q, a->k, a->u, a->lg, a->a, a->b, a->v, &a->beta, &a->lgs};
            const double *vb[] = {b->q, b->k, b->u, b->lg, b->a, b->b, b->v, &b->beta, &b->lgs};
            const int len[] = {d, d, d, d, d, d, dv, 1, 1};
            for (int j = 0; j < 9; j++)
                CHECK_MSG(!va[j] == !vb[j] &&
                              (!va[j] || !memcmp(va[j], vb[j], len[j] * sizeof(double))),
                          "%s: head %ld, step %ld: input %d differs", streams[c], 1 + i / T,
                          i % T + 1, j);
        }
        vla_inputs_free(&all);
        vla_inputs_free(&part);
    }
}

/* round_inputs: the binary64 reference of an f16 run takes the f16-rounded inputs */
TEST(engine_round_inputs)
{
    char what[200] = "";
    vla_error err = {0};
    vla_engine_spec sp;
    spec_of(&sp, VLA_VLA3, VLA_TRACK_SM, VLA_F64, 8, "lmlike", 1);
    sp.round_inputs = VLA_FMT_F16;
    vla_engine *e, *h;
    CHECK(vla_engine_new(&e, &sp, &err) == 0);
    CHECK_EQ_INT(vla_engine_advance(e, 200), 0);
    vla_model *m;
    vla_stream *s;
    vla_step_buf b;
    CHECK(vla_model_new(&m, &sp.cfg) == 0);
    vla_stream_open(&s, "lmlike", 8, 8, 7, &err);
    vla_step_buf_alloc(&b, 8, 8);
    for (long t = 1; t <= 200; t++) {
        vla_stream_get(s, 0, t, &b);
        for (int i = 0; i < 8; i++) {
            b.q[i] = vla_round_fmt(VLA_FMT_F16, b.q[i]);
            b.k[i] = vla_round_fmt(VLA_FMT_F16, b.k[i]);
            b.v[i] = vla_round_fmt(VLA_FMT_F16, b.v[i]);
            b.u[i] = vla_round_fmt(VLA_FMT_F16, b.u[i]);
        }
        vla_input in = {.q = b.q, .k = b.k, .v = b.v, .u = b.u, .beta = b.beta, .decay = b.decay};
        vla_model_step(m, &in);
    }
    sp.round_inputs = VLA_FMT_F64;
    CHECK(vla_engine_new(&h, &sp, &err) == 0);
    FILE *f = tmpfile();
    vla_model_save(m, f);
    rewind(f);
    CHECK(vla_engine_load(h, 0, f) == 0);
    fclose(f);
    CHECK_MSG(diff_state(e, 0, h, 0, what, sizeof what) == 0, "%s", what);
    /* and it is not the unrounded run (the check can fail) */
    vla_engine *u;
    CHECK(vla_engine_new(&u, &sp, &err) == 0);
    CHECK_EQ_INT(vla_engine_advance(u, 200), 0);
    CHECK(diff_state(e, 0, u, 0, what, sizeof what) > 0);
    vla_engine_free(u);
    vla_engine_free(e);
    vla_engine_free(h);
    vla_model_free(m);
    vla_stream_close(s);
    vla_step_buf_free(&b);
}

/* the stop flag: an advance stops within the step after it is set, and continues to the bits of a
 * run never stopped */
static volatile sig_atomic_t stop_flag;
static int stop_once; /* the first run at step 60 sets the flag, once */
static int stop_at_60(void *ctx, const vla_step_view *v)
{
    (void)ctx;
    if (v->t == 60 && __atomic_exchange_n(&stop_once, 0, __ATOMIC_SEQ_CST))
        stop_flag = 1;
    return 0;
}

TEST(engine_stop_flag)
{
    vla_error why, err;
    char what[200] = "";
    const vla_backend *bs[] = {vla_backend_cpu(), vla_backend_lanes()};
    for (int k = 0; k < 2; k++) {
        if (k == 1 && !vla_cuda_probe_target(VLA_CUDA_LANES, &why))
            break;
        vla_engine_spec sp;
        spec_of(&sp, VLA_RLS, VLA_TRACK_SM, VLA_F32, 8, "gauss", 2);
        vla_engine *ref, *e;
        CHECK(vla_engine_new(&ref, &sp, &err) == 0);
        sp.backend = bs[k];
        sp.on_step = stop_at_60;
        sp.stop = &stop_flag;
        stop_flag = 0;
        stop_once = 1;
        CHECK(vla_engine_new(&e, &sp, &err) == 0);
        CHECK_EQ_INT(vla_engine_advance(e, 5000), VLA_EINTR);
        /* cpu: each run stops at its next step (one not yet started, at 0); the kernels at the end
         * of their chunk, every run at the same step */
        long most = 0;
        for (int run = 0; run < 2; run++) {
            long t = vla_engine_t(e, run);
            most = t > most ? t : most;
            CHECK_MSG(t >= 0 && t < 5000, "%s run %d stopped at %ld", vla_backend_name(bs[k]), run, t);
        }
        CHECK_MSG(most >= 60, "no run reached step 60 (%ld)", most);
        stop_flag = 0;
        CHECK_EQ_INT(vla_engine_advance(e, 5000), 0);
        CHECK_EQ_INT(vla_engine_advance(ref, 5000), 0);
        for (int run = 0; run < 2; run++)
            CHECK_MSG(diff_state(e, run, ref, run, what, sizeof what) == 0, "%s: %s",
                      vla_backend_name(bs[k]), what);
        vla_engine_free(e);
        vla_engine_free(ref);
    }
}

TEST(engine_errors)
{
    vla_error err;
    vla_engine *e;
    vla_engine_spec sp;
    spec_of(&sp, VLA_VLA3, VLA_TRACK_SM, VLA_F32, 8, "gauss", 1);
    vla_error why;
    if (vla_cuda_probe(&why) <= 0) { /* no GPU: the message names the emulation */
        sp.backend = vla_backend_cuda();
        CHECK(vla_engine_new(&e, &sp, &err) == VLA_ENOTSUP);
        CHECK_MSG(strstr(err.msg, "--backend emu") != NULL, "%s", err.msg);
    }
    sp.backend = vla_backend_lanes();
    sp.cfg.track = VLA_TRACK_COMP;
    if (vla_cuda_probe_target(VLA_CUDA_LANES, &why)) {
        CHECK(vla_engine_new(&e, &sp, &err) == VLA_ENOTSUP);
        CHECK_MSG(strstr(err.msg, "comp") != NULL, "%s", err.msg);
    }
    spec_of(&sp, VLA_VLA3, VLA_TRACK_SM, VLA_F32, 8, NULL, 1);
    CHECK(vla_engine_new(&e, &sp, &err) == VLA_EINVAL); /* no inputs */
    spec_of(&sp, VLA_VLA3, VLA_TRACK_SM, VLA_F32, 8, "nonesuch", 1);
    CHECK(vla_engine_new(&e, &sp, &err) == 0); /* the stream opens on first use */
    CHECK(vla_engine_advance(e, 3) != 0);
    CHECK_MSG(strstr(vla_error_msg(vla_engine_error(e)), "--stream") != NULL, "%s", vla_error_msg(vla_engine_error(e)));
    CHECK(vla_engine_advance(e, 3) != 0); /* a failed engine stays failed */
    vla_engine_free(e);
    /* a NaN in prepared inputs names the head and the step */
    double x[8] = {0}, nan8[8] = {NAN};
    vla_input in[2] = {{.q = x, .k = x, .v = x, .u = x, .beta = NAN, .decay = NAN},
                       {.q = nan8, .k = x, .v = x, .u = x, .beta = NAN, .decay = NAN}};
    spec_of(&sp, VLA_LA, VLA_TRACK_SM, VLA_F32, 8, NULL, 1);
    sp.in = in;
    sp.T = 2;
    CHECK(vla_engine_new(&e, &sp, &err) == 0);
    CHECK_EQ_INT(vla_engine_advance(e, 2), VLA_ENONFINITE);
    CHECK_MSG(strstr(vla_error_msg(vla_engine_error(e)), "head 0, step 2") != NULL, "%s", vla_error_msg(vla_engine_error(e)));
    CHECK_EQ_INT(vla_engine_t(e, 0), 1);
    vla_engine_free(e);
}

/* The backends' table (VLA_BACKENDS) and what each says it runs: every backend is found by its
 * name, and on a grid of configurations (every model, way of tracking, policy and form; d from 16
 * to the lanes' 256) vla_backend_supports says yes exactly where vla_engine_new opens an engine,
 * and names the same reason where it refuses: the abilities are written once (the kernels'
 * vla_cuda_supports). A backend not available here is asked, not opened. */
TEST(engine_backends_table_supports_is_what_opens)
{
    char names[100];
    vla_error why, err;
    vla_backend_names(names, sizeof names);
    CHECK_MSG(!strcmp(names, "cpu, cuda, emu or lanes"), "%s", names);
    CHECK(vla_backend_at(VLA_NBACKEND) == NULL && vla_backend_named("gpu") == NULL);
    static const char *const forms[] = {"seq", "chunk:16", "chunk:64", "scan"};
    static const int ds[] = {16, 64, 128, 256};
    for (int b = 0; b < VLA_NBACKEND; b++) {
        const vla_backend *be = vla_backend_at(b);
        CHECK(vla_backend_named(vla_backend_name(be)) == be);
        const int here = vla_backend_available(be, &why);
        CHECK_MSG(here || (why.code && why.msg[0]), "%s: not available and no reason",
                  vla_backend_name(be));
        long yes = 0, no = 0, opened = 0;
        for (int m = 0; m < VLA_NMODEL; m++)
            for (int tr = 0; tr < VLA_NTRACK; tr++)
                for (int p = 0; p < VLA_NPREC; p++)
                    for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++)
                        for (size_t k = 0; k < sizeof ds / sizeof ds[0]; k++) {
                            vla_engine_spec sp;
                            spec_of(&sp, (vla_model_kind)m, (vla_track)tr, (vla_prec)p, ds[k],
                                    "gauss", 1);
                            if ((tr && !vla_model_has_A((vla_model_kind)m)) ||
                                vla_form_parse(&sp.cfg, forms[f]) ||
                                vla_track_check(&sp.cfg, NULL) || vla_form_check(&sp.cfg, NULL))
                                continue; /* lib's own refusals, the same on every backend */
                            sp.backend = be;
                            const int s = vla_backend_supports(be, &sp.cfg, &why);
                            yes += s, no += !s;
                            CHECK_MSG(s || (why.code && why.msg[0]), "%s refuses without a reason",
                                      vla_backend_name(be));
                            /* opening the emulation allocates its blocks: one d per form */
                            if (!here || (b == VLA_BACKEND_EMU && ds[k] != 16 && s))
                                continue;
                            vla_engine *e = NULL;
                            const int r = vla_engine_new(&e, &sp, &err);
                            opened += !r;
                            CHECK_MSG((r == 0) == s, "%s %s %s %s %s d %d: supports %d, opens %d (%s)",
                                      vla_backend_name(be), vla_model_name(sp.cfg.model),
                                      vla_track_name(sp.cfg.track), vla_prec_name(sp.cfg.prec),
                                      forms[f], ds[k], s, !r, r ? err.msg : "");
                            if (r && !s) /* the same code and the same words */
                                CHECK_MSG(err.code == why.code && !strcmp(err.msg, why.msg),
                                          "%s: %d '%s' vs %d '%s'", vla_backend_name(be),
                                          err.code, err.msg, why.code, why.msg);
                            vla_engine_free(e);
                        }
        /* the cpu runs all; each kernel backend refuses some and runs some */
        CHECK_MSG(yes > 0 && (b == VLA_BACKEND_CPU ? no == 0 : no > 0), "%s: %ld yes, %ld no",
                  vla_backend_name(be), yes, no);
        CHECK(!here || opened > 0);
    }
}

/* the exact backend runs MPFR models: an f32 run and its 256-bit reference differ by about u */
TEST(engine_exact_backend)
{
    vla_error err;
    vla_engine_spec sp;
    spec_of(&sp, VLA_VLA3, VLA_TRACK_SM, VLA_F32, 8, "lmlike", 2);
    vla_engine *e, *x;
    CHECK(vla_engine_new(&e, &sp, &err) == 0);
    sp.backend = vref_backend_exact();
    CHECK_MSG(vla_engine_new(&x, &sp, &err) == 0, "%s", err.msg);
    CHECK_EQ_INT(vla_engine_advance(e, 100), 0);
    CHECK_EQ_INT(vla_engine_advance(x, 100), 0);
    double S[64], R[64];
    vla_engine_get(e, 1, VLA_Q_S, S);
    vla_engine_get(x, 1, VLA_Q_S, R);
    double rel = vla_fro_diff(S, R, 64) / vla_fro(R, 64);
    /* f32 after 100 steps at d = 8: a few hundred roundings of about 2^-24 each, a few of them
     * amplified by the normalizations; well above 0, well below 1e-4 */
    CHECK_MSG(rel > 0 && rel < 1e-4, "relative error %g", rel);
    vla_engine_free(e);
    vla_engine_free(x);
}

/* S (dv x d) of every run of e at its t into S, runs x dv x d */
static void states_of(vla_engine *e, int runs, double *S)
{
    const vla_config *c = vla_engine_config(e);
    for (int r = 0; r < runs; r++)
        CHECK_EQ_INT(vla_engine_get(e, r, VLA_Q_S, S + (size_t)r * c->dv * c->d), 0);
}

/* ||x - y||_F / ||y||_F over n numbers */
static double rel_fro(const double *x, const double *y, size_t n)
{
    double e = 0, s = 0;
    for (size_t i = 0; i < n; i++)
        e += (x[i] - y[i]) * (x[i] - y[i]), s += y[i] * y[i];
    return sqrt(e / s);
}

/* An initial state S_0 (spec.S0): a run of T1 + T2 steps from 0, its state at T1 taken as S_0 for
 * the last T2 steps, gives the same bits at T1 + T2 in every precision, in the seq form and in a
 * chunk form whose chunks T1 keeps aligned (the models that take S_0 read S alone, and S at T1 is
 * a number of the storage format, which S_0's rounding leaves as it is), on the cpu, on the
 * kernels' backend here (lanes or emulation) and on the GPU where there is one. The scan form sums in another tree from S_0 (its blocks
 * start at step 1, not T1 + 1): binary64 within 4 d T2 u of the seq form. The references: the
 * double-double one and MPFR's from the same S_0 agree to 1e-20, the cpu's binary64 run within 4 d
 * T2 u of them (each step's d-term sums, relative error d u each, over T2 contracting steps), while
 * the run from 0 is off by 10^6 times that at least (0.003 to O(1): the gates forget S_0 in part),
 * what a backend that ignored S_0 would give. A model that takes no
 * S_0 is refused by vla_engine_new, naming why. */
TEST(engine_initial_state)
{
    const int d = 8, runs = 2;
    const long T1 = 32, T2 = 32, T = T1 + T2;
    const size_t n = (size_t)d * d;
    static const vla_model_kind models[] = {VLA_LA, VLA_DELTA, VLA_GDN, VLA_KDA, VLA_GLA,
                                            VLA_MAMBA2, VLA_RWKV7};
    static const vla_prec precs[] = {VLA_F64, VLA_F32, VLA_F16, VLA_BF16_KERN};
    const vla_backend *kb = kernel_backend();
    double *S0 = malloc(runs * n * sizeof *S0), *Sa = malloc(runs * n * sizeof *Sa),
           *Sb = malloc(runs * n * sizeof *Sb), *Sx = malloc(runs * n * sizeof *Sx);
    vla_input *tail = malloc((size_t)runs * T2 * sizeof *tail);
    char what[200] = "";
    for (size_t mi = 0; mi < sizeof models / sizeof models[0]; mi++) {
        vla_engine_spec sp;
        spec_of(&sp, models[mi], VLA_TRACK_SM, VLA_F64, d, "gauss", runs);
        sp.cfg.normalize = 0; /* la: S alone */
        vla_inputs x;
        vla_error err = {0};
        if (vla_inputs_draw(&x, "gauss", 7, d, d, runs, T, vla_model_reads(&sp.cfg), &err)) {
            CHECK_MSG(0, "%s", err.msg);
            continue;
        }
        for (int r = 0; r < runs; r++)
            memcpy(tail + (size_t)r * T2, x.in + (size_t)r * T + T1, T2 * sizeof *tail);
        sp.stream = NULL;
        for (size_t pi = 0; pi < sizeof precs / sizeof precs[0]; pi++)
            for (int form = 0; form < 3; form++) {
                sp.cfg.prec = precs[pi];
                sp.cfg.form = form == 0 ? VLA_FORM_SEQ : form == 1 ? VLA_FORM_CHUNK : VLA_FORM_SCAN;
                sp.cfg.chunk = form == 1 ? 16 : 0;
                if (vla_form_check(&sp.cfg, NULL) || (form == 2 && precs[pi] != VLA_F64))
                    continue;
                const char *name = vla_model_name(models[mi]);
                const vla_backend *bs[3] = {vla_backend_cpu(), kb, vla_backend_cuda()};
                for (int k = 0; k < 3; k++) {
                    sp.backend = bs[k];
                    if (!vla_backend_available(bs[k], NULL) ||
                        !vla_backend_supports(bs[k], &sp.cfg, NULL))
                        continue;
                    vla_engine *whole, *from;
                    sp.in = x.in, sp.T = T, sp.S0 = NULL;
                    if (vla_engine_new(&whole, &sp, &err)) {
                        CHECK_MSG(0, "%s: %s", name, err.msg);
                        continue;
                    }
                    CHECK_EQ_INT(vla_engine_advance(whole, T1), 0);
                    states_of(whole, runs, S0);
                    CHECK_EQ_INT(vla_engine_advance(whole, T), 0);
                    states_of(whole, runs, Sa);
                    sp.in = tail, sp.T = T2, sp.S0 = S0;
                    if (vla_engine_new(&from, &sp, &err) == 0) {
                        CHECK_EQ_INT(vla_engine_advance(from, T2), 0);
                        states_of(from, runs, Sb);
                        if (form < 2) {
                            long bad = 0;
                            for (size_t i = 0; i < runs * n; i++)
                                if (!vla_test_same(Sa[i], Sb[i]) && bad++ == 0)
                                    snprintf(what, sizeof what, "S[%zu]: %a vs %a", i, Sb[i], Sa[i]);
                            CHECK_MSG(bad == 0, "%s %s form %d on %s: %ld entries differ, %s", name,
                                      vla_prec_name(precs[pi]), form, vla_backend_name(sp.backend),
                                      bad, what);
                        } else if (k == 0) {
                            memcpy(Sx, Sb, runs * n * sizeof *Sx); /* the scan from S_0, on the cpu */
                        } else {
                            CHECK_MSG(!memcmp(Sx, Sb, runs * n * sizeof *Sx), "%s scan from S_0: "
                                      "%s differs from the cpu", name, vla_backend_name(bs[k]));
                        }
                        vla_engine_free(from);
                    } else
                        CHECK_MSG(0, "%s from S_0: %s", name, err.msg);
                    vla_engine_free(whole);
                }
                if (form == 2) { /* the scan against the seq form, both from S_0 */
                    sp.backend = vla_backend_cpu();
                    sp.cfg.form = VLA_FORM_SEQ;
                    vla_engine *seq;
                    if (vla_engine_new(&seq, &sp, &err) == 0) {
                        vla_engine_advance(seq, T2);
                        states_of(seq, runs, Sb);
                        double e = rel_fro(Sx, Sb, runs * n);
                        CHECK_MSG(e <= 4.0 * d * T2 * 0x1p-53, "%s scan from S_0: %.3g from seq",
                                  name, e);
                        vla_engine_free(seq);
                    }
                }
            }
        /* the references from S_0 (the binary64 one's at T1) */
        sp.cfg.prec = VLA_F64;
        sp.cfg.form = VLA_FORM_SEQ;
        sp.cfg.chunk = 0;
        sp.in = tail, sp.T = T2;
        double *out[3] = {Sa, Sb, Sx};
        const vla_backend *refs[3] = {vla_backend_cpu(), vref_backend_dd(), vref_backend_exact()};
        for (int k = 0; k < 3; k++) {
            vla_engine *e;
            sp.backend = refs[k];
            sp.S0 = S0;
            if (vla_engine_new(&e, &sp, &err) == 0) {
                vla_engine_advance(e, T2);
                states_of(e, runs, out[k]);
                vla_engine_free(e);
            } else
                CHECK_MSG(0, "%s on %s: %s", vla_model_name(models[mi]), vla_backend_name(refs[k]),
                          err.msg);
        }
        const char *name = vla_model_name(models[mi]);
        double e_dd = rel_fro(Sb, Sx, runs * n), e_64 = rel_fro(Sa, Sx, runs * n);
        CHECK_MSG(e_dd <= 1e-20, "%s: dd from S_0 %.3g from MPFR's", name, e_dd);
        CHECK_MSG(e_64 <= 4.0 * d * T2 * 0x1p-53, "%s: f64 from S_0 %.3g from MPFR's", name, e_64);
        vla_engine *zero;
        sp.backend = vref_backend_exact();
        sp.S0 = NULL;
        if (vla_engine_new(&zero, &sp, &err) == 0) {
            vla_engine_advance(zero, T2);
            states_of(zero, runs, Sa);
            double e0 = rel_fro(Sa, Sx, runs * n);
            CHECK_MSG(e0 > 1e6 * 4.0 * d * T2 * 0x1p-53, "%s: the run from 0 is only %.3g from "
                      "the run from S_0", name, e0);
            vla_engine_free(zero);
        }
        vla_inputs_free(&x);
    }
    /* refused: a model with A, la's normalizer, loglinear's levels, mamba3's carried token and angles */
    static const struct {
        vla_model_kind m;
        int normalize;
        const char *why;
    } no[] = {{VLA_VLA3, 1, "vla3 keeps A and a normalizer n beside S"},
              {VLA_RLS, 0, "rls keeps A beside S"},
              {VLA_LA, 1, "la with normalize=on divides by a normalizer n"},
              {VLA_LOGLINEAR, 0, "loglinear keeps its prefix as Fenwick levels"},
              {VLA_MAMBA3, 0, "mamba3 carries the last token's rotated key and value"}};
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        vla_engine_spec sp;
        vla_engine *e = NULL;
        vla_error err = {0};
        spec_of(&sp, no[i].m, VLA_TRACK_SM, VLA_F32, d, "gauss", runs);
        sp.cfg.normalize = no[i].normalize;
        sp.S0 = S0;
        CHECK_EQ_INT(vla_engine_new(&e, &sp, &err), VLA_ENOTSUP);
        CHECK_MSG(e == NULL && strstr(err.msg, no[i].why), "%s", err.msg);
    }
    free(S0);
    free(Sa);
    free(Sb);
    free(Sx);
    free(tail);
}

/* vla_trajectory_run against the definition, a model per head stepped by hand: gdn in chunk:4
 * over T = 11 (a last chunk of 3 tokens, computed by vla_model_finish) and vla3 in seq, every
 * read-out, ||S_t||_F, ||A_t||_F, the final state and the counts bit for bit; a step refused is
 * "head H, step T: reason" */
TEST(engine_trajectory_is_the_model)
{
    const int d = 8, H = 2;
    const long T = 11;
    const struct {
        vla_model_kind mk;
        const char *form;
    } cs[] = {{VLA_GDN, "chunk:4"}, {VLA_VLA3, "seq"}};
    for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
        vla_config cfg;
        vla_error err;
        vla_inputs x;
        vla_config_default(&cfg, cs[c].mk, d);
        cfg.prec = VLA_BF16;
        CHECK(vla_form_parse(&cfg, cs[c].form) == 0);
        CHECK(vla_inputs_draw(&x, "gauss", 7, d, d, H, T, vla_model_reads(&cfg), &err) == 0);
        const size_t n = (size_t)H * T;
        double *q = malloc(n * 4 * d * sizeof *q), *k = q + n * d, *v = k + n * d, *u = v + n * d;
        double *beta = malloc(n * 2 * sizeof *beta), *lgs = beta + n;
        for (size_t i = 0; i < n; i++) {
            memcpy(q + i * d, x.in[i].q, d * sizeof *q);
            memcpy(k + i * d, x.in[i].k, d * sizeof *q);
            memcpy(v + i * d, x.in[i].v, d * sizeof *q);
            memcpy(u + i * d, x.in[i].u, d * sizeof *q);
            beta[i] = x.in[i].beta;
            lgs[i] = x.in[i].lgs;
        }
        vla_arrays in = {.q = q, .k = k, .v = v, .u = u, .beta = beta, .lgs = lgs};
        double *o = malloc(n * d * sizeof *o), *sf = malloc(n * sizeof *sf),
               *af = malloc(n * sizeof *af), *S = malloc((size_t)H * d * d * sizeof *S);
        vla_counts cn[2];
        long bad[2];
        vla_trajectory out = {o, sf, af, S, cn, bad};
        CHECK_EQ_INT(vla_trajectory_run(&cfg, H, T, &in, &out, &err), 0);
        const int C = cfg.form == VLA_FORM_CHUNK ? cfg.chunk : 1, hasA = vla_model_has_A(cfg.model);
        double *mo = malloc((size_t)T * d * sizeof *mo), *ms = malloc((size_t)d * d * sizeof *ms);
        for (int h = 0; h < H; h++) {
            vla_model *m;
            CHECK(vla_model_new(&m, &cfg) == 0);
            for (long t = 1; t <= T; t++) {
                CHECK_EQ_INT(vla_model_step(m, &x.in[(size_t)h * T + t - 1]), 0);
                const long tail = t == T ? t % C : 0;
                if (tail)
                    CHECK_EQ_INT(vla_model_finish(m), 0);
                if (C == 1)
                    vla_model_get(m, VLA_Q_O, mo + (t - 1) * d);
                else if (t % C == 0 || tail)
                    vla_model_get(m, VLA_Q_CO, mo + (t - (tail ? tail : C)) * d);
                vla_model_get(m, VLA_Q_S, ms);
                const double s = vla_fro(ms, (long)d * d), *got = sf + (size_t)h * T + t - 1;
                CHECK_MSG(vla_test_same(*got, s), "%s h %d t %ld: s_fro %a, by hand %a",
                          cs[c].form, h, t, *got, s);
                if (hasA)
                    vla_model_get(m, VLA_Q_A, ms);
                const double a = hasA ? vla_fro(ms, (long)d * d) : NAN;
                CHECK_MSG(vla_test_same(af[(size_t)h * T + t - 1], a), "%s h %d t %ld: a_fro",
                          cs[c].form, h, t);
            }
            vla_model_get(m, VLA_Q_S, ms);
            const long at = vla_test_diff_at(o + (size_t)h * T * d, mo, T * d),
                       as = vla_test_diff_at(S + (size_t)h * d * d, ms, (long)d * d);
            CHECK_MSG(at < 0 && as < 0, "%s h %d: o differs at %ld, S at %ld", cs[c].form, h, at,
                      as);
            CHECK(!memcmp(&cn[h], vla_model_counts(m), sizeof cn[h]) && bad[h] == 0);
            vla_model_free(m);
        }
        vla_inputs_free(&x);
        free(q), free(beta), free(o), free(sf), free(af), free(S), free(mo), free(ms);
    }
    /* a step the form refuses: delta's row gates in a chunk */
    vla_config cfg;
    vla_error err;
    vla_config_default(&cfg, VLA_DELTA, 4);
    CHECK(vla_form_parse(&cfg, "chunk:4") == 0);
    double one[8] = {1, 1, 1, 1, 1, 1, 1, 1}, o[8], sf[2], af[2], S[16];
    vla_counts cn;
    long bad;
    vla_arrays in = {.q = one, .k = one, .v = one, .g = one};
    vla_trajectory out = {o, sf, af, S, &cn, &bad};
    CHECK_EQ_INT(vla_trajectory_run(&cfg, 1, 2, &in, &out, &err), VLA_ENOTSUP);
    CHECK_MSG(strstr(err.msg, "head 0, step 1: ") == err.msg && strstr(err.msg, "row gates"), "%s",
              err.msg);
    CHECK_EQ_INT(vla_trajectory_run(&cfg, 0, 2, &in, &out, &err), VLA_EINVAL);
}
