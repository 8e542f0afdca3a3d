/* test_decode.c: a prefill handed to decode (vla-forms --what decode, docs/forms.md "Prefill, then
 * decode"): a seq prefill without a cache is one pass bit for bit; zero pads are the masked chunk's
 * bits, pads that decay lose the prompt; a rollback's state (a rejected draft left in, an accepted
 * token missing) is forgotten at the rate the gates and the delta rule give; bad settings exit 2. The cache's rounding of the handed
 * state against its definition: test_conform.c's conform_state_cache_from_S0. */
#include "check.h"
#include "vlastab.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the rows of a decode table (t C prec o_one o_pd s_one s_pd max_ulps max_abs) into r, 8 numbers
 * each (prec left out); how many */
static int rows_of(const char *out, double r[][8], int max)
{
    int n = 0;
    for (const char *l = out; l && n < max; l = strchr(l, '\n'), l = l ? l + 1 : l) {
        char prec[32];
        double *x = r[n];
        if (*l != '#' && sscanf(l, "%lf %lf %31s %lf %lf %lf %lf %lf %lf", &x[0], &x[1], prec,
                                &x[2], &x[3], &x[4], &x[5], &x[6], &x[7]) == 9)
            n++;
    }
    return n;
}

#define CMD "bin/vla-forms --what decode --model gdn --d 16 --steps 256 --runs 2 --stream gauss " \
            "--ref f64 "

/* A seq-form prefill handed on in the run's own storage format is the one pass: every read-out of
 * the decode the one pass's to the bit (max_ulps 0) and both errors the same, in binary64 and
 * binary32; a bfloat16 cache from the hand-over on moves them */
TEST(decode_seq_prefill_is_one_pass)
{
    static const char *const precs[] = {"f64", "f32"};
    for (int p = 0; p < 2; p++) {
        char *out = NULL;
        double r[64][8];
        int st = vla_test_sh(&out, CMD "--prefix 100 --forms seq --precisions %s 2>/dev/null",
                             precs[p]);
        int n = out ? rows_of(out, r, 64) : 0;
        CHECK_MSG(st == 0 && n >= 4, "%s: exit %d, %d rows", precs[p], st, n);
        for (int i = 0; i < n; i++)
            CHECK_MSG(r[i][6] == 0 && r[i][2] == r[i][3] && r[i][4] == r[i][5],
                      "%s t = %g: max_ulps %g, o %g vs %g, s %g vs %g", precs[p], r[i][0],
                      r[i][6], r[i][3], r[i][2], r[i][5], r[i][4]);
        free(out);
    }
    char *out = NULL;
    double r[64][8];
    int st = vla_test_sh(&out, CMD "--prefix 100 --forms seq --precisions f32 --set cache=bf16 "
                               "2>/dev/null");
    int n = out ? rows_of(out, r, 64) : 0;
    CHECK_MSG(st == 0 && n >= 4 && r[0][6] > 0 && r[n - 1][5] > 10 * r[n - 1][4],
              "cache=bf16: exit %d, %d rows, max_ulps %g, s_pd %g against s_one %g", st, n,
              n ? r[0][6] : 0, n ? r[n - 1][5] : 0, n ? r[n - 1][4] : 0);
    free(out);
}

/* The prefill's last chunk (100 = 6 x 16 + 4 tokens) masked, or filled by 12 null tokens of
 * log-decay 0: the same bits (a null token's update and decay are exact); of log-decay -1 the
 * handed state is e^-12 of the prompt's, so the decode's state at t = 112 lacks the prompt's part,
 * S_100 times the 12 decode tokens' decays (the stream's: near 0.95, a heavy tail toward 0): off
 * by 0.23 here, 10^6 times the masked chunk's binary32 rounding */
TEST(decode_pads)
{
    char *out[3] = {NULL, NULL, NULL};
    double r[3][64][8];
    int n[3];
    static const char *const pads[] = {"", "--pad 0", "--pad -1"};
    for (int i = 0; i < 3; i++) {
        int st = vla_test_sh(&out[i], CMD "--prefix 100 --forms chunk:16 --precisions f32 %s "
                                          "2>/dev/null", pads[i]);
        n[i] = out[i] ? rows_of(out[i], r[i], 64) : 0;
        CHECK_MSG(st == 0 && n[i] >= 4, "%s: exit %d, %d rows", pads[i], st, n[i]);
    }
    CHECK_MSG(n[0] == n[1] && !memcmp(r[0], r[1], sizeof r[0][0] * n[0]),
              "--pad 0 is not the masked chunk's bits");
    CHECK_MSG(n[0] && r[0][0][5] < 1e-6 && r[2][0][5] > 0.05 && r[2][0][5] > 1e4 * r[0][0][5],
              "the first decode state's error: masked %g, pads of log-decay -1 %g",
              r[0][0][5], r[2][0][5]);
    for (int i = 0; i < 3; i++)
        free(out[i]);
}

/* A rollback's handed state in binary64, seq form: one rejected draft left in, or the last accepted
 * token missing, puts the first decoded state off by O(0.1); gdn's decays and delta rule forget it,
 * its error at t falling below 10^-12 (the last rows: the draft's part of the state times every
 * later token's decay and projection, about 0.95^t here, under binary64's rounding of S) where the
 * plain handover's is 0; la, with neither, keeps it: the state's error at the end within a factor
 * 20 of the first (its relative error shrinks only as ||S|| grows, like sqrt(t): 4.5 from t = 101
 * to 2048). The numbers
 * against numpy's recurrence written from the published equations: tests/test_decode.py. */
TEST(decode_rollback_forgotten_or_kept)
{
    static const char *const cases[][3] = {{"gdn", "--rejected 1", "forgets"},
                                           {"gdn", "--stale 1", "forgets"},
                                           {"la --set normalize=off", "--rejected 1", "keeps"}};
    for (int i = 0; i < 3; i++) {
        char *out = NULL;
        double r[64][8];
        int st = vla_test_sh(&out, "bin/vla-forms --what decode --model %s --d 16 --steps 2048 "
                                   "--runs 2 --stream gauss --ref f64 --prefix 100 --forms seq "
                                   "--precisions f64 %s 2>/dev/null", cases[i][0], cases[i][1]);
        int n = out ? rows_of(out, r, 64) : 0;
        CHECK_MSG(st == 0 && n >= 8 && r[0][5] > 1e-3, "%s %s: exit %d, %d rows, first s_pd %g",
                  cases[i][0], cases[i][1], st, n, n ? r[0][5] : 0);
        if (n >= 8 && cases[i][2][0] == 'f')
            CHECK_MSG(r[n - 1][5] < 1e-12 && r[n - 1][4] == 0, "%s %s: s_pd %g at t = %g (one "
                      "pass %g)", cases[i][0], cases[i][1], r[n - 1][5], r[n - 1][0], r[n - 1][4]);
        else if (n >= 8)
            CHECK_MSG(r[n - 1][5] > 0.05 * r[0][5], "%s %s: s_pd %g at t = %g, %g at the first "
                      "checkpoint", cases[i][0], cases[i][1], r[n - 1][5], r[n - 1][0], r[0][5]);
        free(out);
    }
}

/* bad settings: exit 2 with the reason */
TEST(decode_bad_settings_refused)
{
    static const char *const bad[][2] = {
        {"--what decode --prefix 256", "--prefix 256"},
        {"--what decode --prefix 0", "--prefix"},
        {"--what decode --prefix 10 --pad 1", "--pad"},
        {"--what decode --prefix 10 --pad nan", "--pad"},
        {"--what sweep --pad -1", "--pad"},
        {"--what decode --prefix 10 --forms scan", "scan"},
        {"--what decode --prefix 10 --ref none", "reference"},
        {"--what decode --prefix 10 --stale 10", "--stale 10"},
        {"--what decode --prefix 10 --stale 0", "--stale"},
        {"--what decode --prefix 10 --rejected 1 --stale 1", "one of the two"},
        {"--what sweep --rejected 1", "--rejected"},
        {"--what decode --prefix 10 --rejected 1 --stream trace:../shared/data/lmtrace-seed7/la "
         "--d 32 --steps 1000", "--rejected 1"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *out = NULL;
        int st = vla_test_sh(&out, "bin/vla-forms --model gdn --d 4 --steps 256 --forms seq "
                                   "--precisions f32 %s 2>&1", bad[i][0]);
        CHECK_MSG(st == 2 && out && strstr(out, bad[i][1]), "%s: exit %d: %s", bad[i][0], st,
                  out ? out : "");
        free(out);
    }
}
