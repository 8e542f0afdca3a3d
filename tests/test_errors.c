/* test_errors.c: the one error channel (lib/vlastab.h's vla_error): vla_fail writes a code and the
 * reason of the place that knows, vla_error_msg reads it, the same way for every function; and a
 * failure deep inside (a malformed .npy under a trace, an unknown constant, a refused form)
 * arrives at the caller with its code and the words of the place that found it. */
#include "check.h"
#include "proc.h"
#include "vlacuda.h"
#include "vlastab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TEST(errors_fail_and_msg)
{
    /* NULL: the code alone */
    CHECK_EQ_INT(vla_fail(NULL, VLA_ERANGE, "d = %d", 7), VLA_ERANGE);
    vla_error e;
    memset(&e, 'x', sizeof e);
    CHECK_EQ_INT(vla_fail(&e, VLA_ERANGE, "d = %d: out of %s", 300, "1..256"), VLA_ERANGE);
    CHECK_EQ_INT(e.code, VLA_ERANGE);
    CHECK_MSG(!strcmp(vla_error_msg(&e), "d = 300: out of 1..256"), "'%s'", vla_error_msg(&e));
    /* no reason written: vla_strerror's words for the code */
    CHECK_EQ_INT(vla_fail(&e, VLA_ENOMEM, NULL), VLA_ENOMEM);
    CHECK_EQ_INT(e.code, VLA_ENOMEM);
    CHECK_MSG(!strcmp(vla_error_msg(&e), vla_strerror(VLA_ENOMEM)), "'%s'", vla_error_msg(&e));
    CHECK_EQ_INT(vla_fail(&e, VLA_EIO, "%s", ""), VLA_EIO);
    CHECK_MSG(!strcmp(vla_error_msg(&e), vla_strerror(VLA_EIO)), "'%s'", vla_error_msg(&e));
    /* a caller prefixes the reason it got (its own msg among the arguments) */
    vla_fail(&e, VLA_EFORMAT, "truncated header");
    CHECK_EQ_INT(vla_fail(&e, e.code, "q.npy: %s", e.msg), VLA_EFORMAT);
    CHECK_MSG(!strcmp(e.msg, "q.npy: truncated header"), "'%s'", e.msg);
    /* one line, always */
    vla_fail(&e, VLA_EINVAL, "stream 'a\nb': unknown");
    CHECK_MSG(!strcmp(e.msg, "stream 'a b': unknown"), "'%s'", e.msg);
    /* a long reason is cut to the struct, NUL-terminated, its start intact */
    const size_t n = 3 * sizeof e.msg;
    char *longer = malloc(n + 1);
    if (!longer)
        return;
    for (size_t i = 0; i < n; i++)
        longer[i] = (char)('a' + i % 26);
    longer[n] = 0;
    CHECK_EQ_INT(vla_fail(&e, VLA_ERANGE, "%s", longer), VLA_ERANGE);
    CHECK_EQ_INT(e.code, VLA_ERANGE);
    CHECK_EQ_INT(strlen(e.msg), sizeof e.msg - 1);
    CHECK(!strncmp(e.msg, longer, sizeof e.msg - 1));
    free(longer);
    CHECK_MSG(!strcmp(vla_error_msg(NULL), vla_strerror(VLA_OK)), "'%s'", vla_error_msg(NULL));
}

/* the words of the place that knows, with its code, through the layers above it */
TEST(errors_arrive_from_deep_inside)
{
    char dir[300], path[400], spec[420];
    if (!make_tmpdir(dir, sizeof dir)) {
        CHECK_MSG(0, "no temporary directory");
        return;
    }
    /* a .npy whose magic is wrong: npy.c's reason, prefixed by the path */
    snprintf(path, sizeof path, "%s/q.npy", dir);
    write_bytes(path, "\x93NUMPX\x01\x00\x10\x00{'descr': '<f8'}     \n", 26);
    vla_npy a;
    vla_error e = {0};
    char want[500];
    snprintf(want, sizeof want, "%s: not a .npy file (bad magic)", path);
    CHECK_EQ_INT(vla_npy_read(path, &a, &e), VLA_EFORMAT);
    CHECK_EQ_INT(e.code, VLA_EFORMAT);
    CHECK_MSG(!strcmp(e.msg, want), "'%s' vs '%s'", e.msg, want);
    CHECK_EQ_INT(vla_npy_read(path, &a, NULL), VLA_EFORMAT); /* the code alone */
    /* the same file as a trace's q: the stream hands npy's reason up, code and words */
    snprintf(spec, sizeof spec, "trace:%s", dir);
    vla_stream *s = NULL;
    memset(&e, 0, sizeof e);
    CHECK_EQ_INT(vla_stream_open(&s, spec, 8, 8, 1, &e), VLA_EFORMAT);
    CHECK_EQ_INT(e.code, VLA_EFORMAT);
    CHECK_MSG(!strcmp(e.msg, want), "'%s' vs '%s'", e.msg, want);
    CHECK(s == NULL);
    /* and one level up again, the inputs of an engine */
    vla_inputs x;
    memset(&e, 0, sizeof e);
    CHECK_EQ_INT(vla_inputs_draw(&x, spec, 1, 8, 8, 1, 10, 0, &e), VLA_EFORMAT);
    CHECK_MSG(e.code == VLA_EFORMAT && !strcmp(e.msg, want), "%d '%s'", e.code, e.msg);
    remove_tree(dir);
    /* an unknown constant: the config's list of names, VLA_EINVAL; a bad value: VLA_ERANGE with
     * vla_parse_real's words */
    vla_config c;
    vla_config_default(&c, VLA_VLA3, 8);
    memset(&e, 0, sizeof e);
    CHECK_EQ_INT(vla_config_set_why(&c, "lambda", "1", &e), VLA_EINVAL);
    CHECK_MSG(e.code == VLA_EINVAL && !strncmp(e.msg, "is not a constant (lambda0, ", 28),
              "%d '%s'", e.code, e.msg);
    CHECK_EQ_INT(vla_config_set_why(&c, "lambda0", "1e999", &e), VLA_ERANGE);
    CHECK_MSG(e.code == VLA_ERANGE && !strcmp(e.msg, "overflows binary64"), "%d '%s'", e.code,
              e.msg);
    /* a form the model does not have: vla_form_check's reason, VLA_ENOTSUP */
    vla_config_default(&c, VLA_VLA1, 8);
    CHECK_EQ_INT(vla_form_parse(&c, "scan"), 0);
    CHECK_EQ_INT(vla_form_check(&c, &e), VLA_ENOTSUP);
    CHECK_MSG(e.code == VLA_ENOTSUP && strstr(e.msg, "vla1 clips its error"), "%d '%s'", e.code,
              e.msg);
}

/* The engine and its backends on the same channel: a refusal made deep inside (the kernels'
 * vla_cuda_supports under the lanes' open, the CUDA runtime's probe under the GPU's) arrives in
 * vla_engine_new's vla_error with its code and the words of the place that knows, the same that
 * vla_backend_supports and vla_backend_available give; a failure met while advancing is kept by
 * the engine (vla_engine_error) with its code; and vla_recall_run hands the engine's refusal up
 * unchanged. */
TEST(errors_arrive_from_the_engine)
{
    vla_engine_spec sp;
    memset(&sp, 0, sizeof sp);
    vla_config_default(&sp.cfg, VLA_VLA3, 8);
    sp.cfg.prec = VLA_F32;
    sp.cfg.track = VLA_TRACK_COMP;
    sp.stream = "gauss";
    sp.seed = 7;
    sp.runs = 1;
    sp.round_inputs = VLA_FMT_F64;
    sp.backend = vla_backend_lanes();
    /* a configuration the lanes do not run: the kernels' words (kernels/host.c), VLA_ENOTSUP */
    static const char lanes_comp[] = "track=comp: the lanes run sm, sm-sym, joseph and chol (comp "
                                     "and sr have an arithmetic of their own)";
    vla_error e = {0}, why = {0};
    vla_engine *eng = NULL;
    CHECK_EQ_INT(vla_engine_new(&eng, &sp, &e), VLA_ENOTSUP);
    CHECK_MSG(e.code == VLA_ENOTSUP && !strcmp(e.msg, lanes_comp), "%d '%s'", e.code, e.msg);
    CHECK_EQ_INT(vla_engine_new(&eng, &sp, NULL), VLA_ENOTSUP); /* the code alone */
    CHECK_EQ_INT(vla_backend_supports(vla_backend_lanes(), &sp.cfg, &why), 0);
    CHECK_MSG(why.code == VLA_ENOTSUP && !strcmp(why.msg, lanes_comp), "%d '%s'", why.code,
              why.msg);
    CHECK_EQ_INT(vla_backend_supports(vla_backend_cpu(), &sp.cfg, &why), 1);
    CHECK_MSG(why.code == VLA_OK && !why.msg[0], "%d '%s'", why.code, why.msg);
    /* ... and through vla_recall_run, which opens the engines itself */
    vla_recall res;
    memset(&e, 0, sizeof e);
    CHECK_EQ_INT(vla_recall_run(&sp, 4, 0, &res, &e), VLA_ENOTSUP);
    CHECK_MSG(e.code == VLA_ENOTSUP && !strcmp(e.msg, lanes_comp), "%d '%s'", e.code, e.msg);
    /* a state too large for a block's shared memory: VLA_ERANGE, the kernels' words */
    vla_config_default(&sp.cfg, VLA_VLA3, 200);
    sp.cfg.prec = VLA_F32;
    sp.backend = vla_backend_emu();
    CHECK_EQ_INT(vla_engine_new(&eng, &sp, &e), VLA_ERANGE);
    CHECK_MSG(e.code == VLA_ERANGE && !strcmp(e.msg, "d = 200, dv = 200: the CUDA kernels keep A "
                                                     "and S in shared memory up to d = 128 in f32"),
              "%d '%s'", e.code, e.msg);
    /* a backend this machine lacks: the probe's reason inside the engine's sentence */
    vla_config_default(&sp.cfg, VLA_VLA3, 8);
    sp.backend = vla_backend_cuda();
    if (vla_cuda_probe(&why) <= 0) {
        char want[sizeof why.msg + 100];
        CHECK_EQ_INT(why.code, VLA_ENOTSUP);
        snprintf(want, sizeof want, "no CUDA device (%s); --backend emu runs the same kernels on "
                 "host threads", why.msg);
        CHECK_EQ_INT(vla_engine_new(&eng, &sp, &e), VLA_ENOTSUP);
        CHECK_MSG(e.code == VLA_ENOTSUP && !strcmp(e.msg, want), "%d '%s'", e.code, e.msg);
        vla_error avail = {0};
        CHECK_EQ_INT(vla_backend_available(vla_backend_cuda(), &avail), 0);
        CHECK_MSG(avail.code == VLA_ENOTSUP && !strcmp(avail.msg, why.msg), "%d '%s'",
                  avail.code, avail.msg);
    }
    /* a failure while advancing: kept by the engine with its code, the run and the step */
    double x[8] = {0}, nan8[8] = {NAN};
    vla_input in[2] = {{.q = x, .k = x, .v = x, .u = x, .beta = NAN, .decay = NAN},
                       {.q = nan8, .k = x, .v = x, .u = x, .beta = NAN, .decay = NAN}};
    memset(&sp, 0, sizeof sp);
    vla_config_default(&sp.cfg, VLA_LA, 8);
    sp.runs = 1;
    sp.in = in;
    sp.T = 2;
    sp.round_inputs = VLA_FMT_F64;
    CHECK_EQ_INT(vla_engine_new(&eng, &sp, &e), 0);
    if (eng) {
        CHECK_MSG(vla_engine_error(eng)->code == 0, "a fresh engine: %d",
                  vla_engine_error(eng)->code);
        CHECK_EQ_INT(vla_engine_advance(eng, 2), VLA_ENONFINITE);
        const vla_error *f = vla_engine_error(eng);
        CHECK_MSG(f->code == VLA_ENONFINITE && !strncmp(f->msg, "head 0, step 2: ", 16), "%d '%s'",
                  f->code, f->msg);
        vla_engine_free(eng);
    }
    const vla_error *none = vla_engine_error(NULL);
    CHECK_MSG(none->code == VLA_EINVAL && !strcmp(vla_error_msg(none), "no engine"), "%d '%s'",
              none->code, none->msg);
}
