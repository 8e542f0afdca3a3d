/* fuzz_config.c: libFuzzer target for vla_config_set and what a configuration it accepts feeds:
 * vla_config_check, vla_track_check, vla_config_describe and a few model steps. Input: a model byte,
 * a precision byte, then NAME=VALUE settings separated by NUL bytes. */
#include "vlastab.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3 || size > 2048)
        return 0;
    vla_config cfg;
    vla_config_default(&cfg, (vla_model_kind)(data[0] % VLA_NMODEL), data[1] % 4 + 1);
    cfg.prec = (vla_prec)(data[2] % VLA_NPREC);
    cfg.track = (vla_track)(data[2] / VLA_NPREC % VLA_NTRACK);
    char *buf = malloc(size - 2);
    if (!buf)
        return 0;
    memcpy(buf, data + 3, size - 3);
    buf[size - 3] = 0;
    for (char *p = buf; p < buf + size - 3; p += strlen(p) + 1) {
        char *eq = strchr(p, '=');
        if (!eq) {
            if (vla_config_set(&cfg, p, NULL) != VLA_EINVAL)
                abort();
            continue;
        }
        *eq = 0;
        vla_config before = cfg;
        int rc = vla_config_set(&cfg, p, eq + 1);
        if (rc && memcmp(&before, &cfg, sizeof cfg)) /* a refused value changes nothing */
            abort();
        *eq = '=';
    }
    char desc[1024];
    vla_config_describe(&cfg, desc, sizeof desc);
    if (strlen(desc) >= sizeof desc || strchr(desc, '\n'))
        abort();
    if (vla_config_check(&cfg) || vla_track_check(&cfg, NULL)) {
        free(buf);
        return 0;
    }
    vla_model *m;
    if (vla_model_new(&m, &cfg))
        abort();
    double q[4], k[4], v[4], u[4], S[16];
    for (long t = 1; t <= 64; t++) {
        for (int i = 0; i < 4; i++) {
            q[i] = vla_gauss(7, VLA_VAR_Q, 0, t, i);
            k[i] = vla_gauss(7, VLA_VAR_K, 0, t, i);
            v[i] = vla_gauss(7, VLA_VAR_V, 0, t, i);
            u[i] = vla_gauss(7, VLA_VAR_U, 0, t, i);
        }
        vla_input in = {.q = q, .k = k, .v = v, .u = u, .beta = NAN, .decay = NAN};
        if (vla_model_step(m, &in))
            abort();
    }
    if (vla_model_get(m, VLA_Q_S, S))
        abort();
    vla_model_free(m);
    free(buf);
    return 0;
}
