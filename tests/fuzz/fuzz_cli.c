/* fuzz_cli.c: libFuzzer target for the option parser (vla_cli_parse in experiments/cli.c). The
 * parser exits on --help and on usage errors, so the Makefile compiles cli.c for this target with
 * exit renamed to vla_fuzz_exit, which jumps back here: one process, coverage kept. Input: the
 * arguments, separated by NUL bytes. */
#include "cli.h"
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static jmp_buf back;
static volatile int exit_status;

void vla_fuzz_exit(int status) __attribute__((noreturn));
void vla_fuzz_exit(int status)
{
    exit_status = status;
    longjmp(back, 1);
}

static int on_opt(void *ctx, const char *name, const char *val)
{
    (void)ctx;
    if (!strcmp(name, "alpha")) {
        char *end;
        double a = strtod(val, &end);
        return *end || !(a > 0 && a < 1);
    }
    return 0; /* --flag */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const vla_cli_opt opts[] = {
        {"alpha", "A", "a program's own option with a value"},
        {"flag", NULL, "a program's own flag"},
        {NULL, NULL, NULL},
    };
    static const vla_cli_spec spec = {
        .prog = "vla-fuzz",
        .summary = "fuzzing",
        .columns = "t x",
        .example = "vla-fuzz --steps 10",
        .default_steps = 100,
        .default_stream = "gauss",
        .default_model = VLA_VLA3,
        .default_ref = REF_NONE,
        .opts = opts,
        .on_opt = on_opt,
    };
    if (size > 4096)
        return 0;
    char *buf = malloc(size + 1);
    char *argv[130];
    int argc = 0;
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = 0;
    argv[argc++] = "vla-fuzz";
    for (char *p = buf; p < buf + size + 1 && argc < 129; p += strlen(p) + 1)
        argv[argc++] = p;
    argv[argc] = NULL;

    int asked_out = 0;
    for (int i = 1; i < argc; i++)
        asked_out |= !strcmp(argv[i], "--help") || !strcmp(argv[i], "--version") ||
                     !strcmp(argv[i], "--man"); /* --man: a hidden build aid */
    vla_cli c;
    exit_status = -1;
    if (setjmp(back) == 0) {
        vla_cli_parse(&c, &spec, argc, argv);
        /* accepted: everything the programs rely on holds */
        if (vla_config_check(&c.cfg) || vla_track_check(&c.cfg, NULL) || c.steps < 1 ||
            c.steps > 1000000000L || c.runs < 1 || c.runs > 100000 || c.per_decade < 1 ||
            c.per_decade > 1000 || !c.stream || !c.out || !c.backend ||
            (c.resume && !strcmp(c.out, "-")) || c.ref_bits < 64)
            abort();
    } else if (!(exit_status == 2 || (exit_status == 0 && asked_out))) {
        abort();
    }
    free(buf);
    return 0;
}
