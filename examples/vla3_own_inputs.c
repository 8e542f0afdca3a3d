/* vla3_own_inputs.c: vla3 on inputs of your own, through an installed libvlastab; a starting point
 * for calling the library from other code (make install puts a copy in share/doc/vlastab/examples).
 *
 *     cc -o vla3_own_inputs vla3_own_inputs.c $(pkg-config --cflags --libs vlastab)
 *
 * Inputs: a text file, one step per line: q (d numbers), k (d), v (dv), u (d), separated by blanks;
 * '#' starts a comment. Without a file, -n steps of one of the library's input streams, which -w
 * writes out in that format, a template to edit. Prints ||S_T||_F after the last step. */
#define _POSIX_C_SOURCE 200809L /* getline, getopt */
#include <vlastab.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f, "Usage: vla3_own_inputs [-d D] [-v DV] [-p PREC] [-n STEPS] [-s STREAM] [-S SEED]\n"
               "                       [-w FILE] [INPUT]\n"
               "Runs vla3 (the constants of docs/math.md section 2) in precision PREC (default\n"
               "f32) over the steps of INPUT, a text file with one step per line: q (D numbers),\n"
               "k (D), v (DV), u (D);\n"
               "or, without INPUT, over STEPS (default 1000) steps of a library stream (default\n"
               "lmlike; gauss, subspace:R,NOISE, ...), which -w writes out as an INPUT file.\n"
               "D defaults to 8, DV to D. Prints ||S_T||_F and the guard and nudge counts.\n");
}

/* A line's step into b; 0 for a blank or comment line, 1 for a step, -1 with *why. */
static int parse_step(char *line, vla_step_buf *b, int d, int dv, const char **why)
{
    double *dst[4] = {b->q, b->k, b->v, b->u};
    int len[4] = {d, d, dv, d}, n = 0;
    char *p = line, *end;
    line[strcspn(line, "#")] = 0;
    for (int part = 0; part < 4; part++)
        for (int i = 0; i < len[part]; i++, n++) {
            dst[part][i] = strtod(p, &end);
            if (end == p) {
                p += strspn(p, " \t\r\n");
                *why = *p ? "not a number" : "too few numbers (a step is q, k, v, u: 3d + dv)";
                return n == 0 && !*p ? 0 : -1;
            }
            p = end;
        }
    p += strspn(p, " \t\r\n");
    if (*p) {
        *why = "more numbers than a step's 3d + dv";
        return -1;
    }
    return 1;
}

static void write_step(FILE *f, const vla_step_buf *b, int d, int dv)
{
    const double *src[4] = {b->q, b->k, b->v, b->u};
    int len[4] = {d, d, dv, d};
    for (int part = 0; part < 4; part++)
        for (int i = 0; i < len[part]; i++)
            fprintf(f, "%s%.17g", part || i ? " " : "", src[part][i]); /* %.17g: read back exactly */
    fputc('\n', f);
}

int main(int argc, char **argv)
{
    int d = 8, dv = 0, opt;
    long steps = 1000;
    unsigned long long seed = 1;
    const char *prec = "f32", *spec = "lmlike", *dump = NULL;
    while ((opt = getopt(argc, argv, "d:v:p:n:s:S:w:h")) != -1) {
        switch (opt) {
        case 'd': d = atoi(optarg); break;
        case 'v': dv = atoi(optarg); break;
        case 'p': prec = optarg; break;
        case 'n': steps = atol(optarg); break;
        case 's': spec = optarg; break;
        case 'S': seed = strtoull(optarg, NULL, 10); break;
        case 'w': dump = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (argc - optind > 1 || steps < 1) {
        usage(stderr);
        return 2;
    }
    const char *input = optind < argc ? argv[optind] : NULL;

    /* The library checks every argument; its codes and vla_strerror make the messages. */
    vla_config cfg;
    vla_config_default(&cfg, VLA_VLA3, d);
    cfg.dv = dv ? dv : d;
    if (vla_prec_parse(prec, &cfg.prec)) {
        fprintf(stderr, "vla3_own_inputs: -p: unknown precision '%s'\n", prec);
        return 2;
    }
    int e = vla_config_check(&cfg);
    if (e) {
        fprintf(stderr, "vla3_own_inputs: d=%d dv=%d: %s\n", cfg.d, cfg.dv, vla_strerror(e));
        return 2;
    }
    dv = cfg.dv;

    vla_model *m = NULL;
    vla_stream *s = NULL;
    vla_step_buf b = {0};
    FILE *in = NULL, *out = NULL;
    char err[256] = "", *line = NULL;
    double *S = NULL;
    size_t cap = 0;
    long t = 0, lineno = 0;
    if ((e = vla_model_new(&m, &cfg)) || (e = vla_step_buf_alloc(&b, d, dv))) {
        snprintf(err, sizeof err, "%s", vla_strerror(e));
        goto done;
    }
    if (input) {
        if (!(in = strcmp(input, "-") ? fopen(input, "r") : stdin)) {
            snprintf(err, sizeof err, "%s: cannot open", input);
            e = VLA_EIO;
            goto done;
        }
        while (getline(&line, &cap, in) > 0) {
            const char *why = NULL;
            int r = parse_step(line, &b, d, dv, &why);
            lineno++;
            if (r < 0) {
                snprintf(err, sizeof err, "%s:%ld: %s", input, lineno, why);
                e = VLA_EFORMAT;
                goto done;
            }
            /* no gate; NaN beta and decay: the defaults (vla3 uses neither) */
            vla_input x = {.q = b.q, .k = b.k, .v = b.v, .u = b.u, .beta = NAN, .decay = NAN};
            if (r && (e = vla_model_step(m, &x))) {
                snprintf(err, sizeof err, "%s:%ld: %s", input, lineno, vla_strerror(e));
                goto done;
            }
            t += r;
        }
        if (ferror(in)) { /* getline's -1 is also the end of the file */
            snprintf(err, sizeof err, "%s: read error", input);
            e = VLA_EIO;
            goto done;
        }
    } else {
        vla_error ve;
        if ((e = vla_stream_open(&s, spec, d, dv, seed, &ve))) {
            snprintf(err, sizeof err, "%s", vla_error_msg(&ve));
            goto done;
        }
        if (vla_stream_length(s) > 0 && steps > vla_stream_length(s))
            steps = vla_stream_length(s);
        if (dump && !(out = fopen(dump, "w"))) {
            snprintf(err, sizeof err, "%s: cannot write", dump);
            e = VLA_EIO;
            goto done;
        }
        for (t = 1; t <= steps; t++) { /* streams count steps from 1; this is head 0 */
            if ((e = vla_stream_get(s, 0, t, &b))) {
                snprintf(err, sizeof err, "stream %s, step %ld: %s", spec, t, vla_strerror(e));
                goto done;
            }
            vla_input x = vla_input_of(&b);
            if (out) /* a file has no read-only steps: mqar's queries come back as writes */
                write_step(out, &b, d, dv);
            e = b.is_read ? vla_model_read(m, b.q) : vla_model_step(m, &x);
            if (e) {
                snprintf(err, sizeof err, "step %ld: %s", t, vla_strerror(e));
                goto done;
            }
        }
        t = steps;
        if (out && fclose(out)) { /* a full disk shows here, not at fprintf */
            out = NULL;
            snprintf(err, sizeof err, "%s: write failed", dump);
            e = VLA_EIO;
            goto done;
        }
        out = NULL;
    }

    /* the measure: ||S_T||_F of the dv x d state, copied out exactly as binary64 */
    if (!(S = malloc((size_t)dv * d * sizeof *S))) {
        e = VLA_ENOMEM;
        goto done;
    }
    if ((e = vla_model_get(m, VLA_Q_S, S)))
        goto done;
    const vla_counts *c = vla_model_counts(m);
    printf("vla3 prec=%s d=%d dv=%d steps=%ld s_fro=%.17g guard=%ld nudge=%ld\n",
           vla_prec_name(cfg.prec), d, dv, t, vla_fro(S, (long)dv * d), c->guard, c->nudge);

done:
    if (e)
        fprintf(stderr, "vla3_own_inputs: %s\n", err[0] ? err : vla_strerror(e));
    if (in && in != stdin)
        fclose(in);
    if (out)
        fclose(out);
    free(line);
    free(S);
    vla_stream_close(s);
    vla_step_buf_free(&b);
    vla_model_free(m);
    return e ? 1 : 0;
}
