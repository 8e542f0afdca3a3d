/* model_impl.h: what sits behind the opaque vla_model: a table of operations, so that the native
 * instantiations (lib/model.c) and the MPFR ones (reference/) are driven through the same calls.
 * Not installed: a backend's business, not a user's. */
#ifndef VLA_MODEL_IMPL_H
#define VLA_MODEL_IMPL_H
#include "vlastab.h"

typedef struct {
    int (*step)(void *self, const vla_input *in);
    int (*read)(void *self, const double *q);
    int (*get)(const void *self, vla_quantity q, double *dst);
    void (*destroy)(void *self);
    int (*save)(const void *self, FILE *f);
    int (*load)(void *self, FILE *f);
} vla_model_ops;

struct vla_model {
    const vla_model_ops *ops;
    void *self;
    vla_config cfg;
    const vla_counts *counts; /* owned by self */
};

/* Wraps a backend's state; on failure destroys self. */
int vla_model_wrap(vla_model **out, const vla_config *cfg, const vla_model_ops *ops, void *self,
                   const vla_counts *counts);

/* the native policies, strict (model.c) and fast (model_fast.c) */
int vla_native_create_strict(const vla_config *cfg, vla_model **out);
int vla_native_create_fast(const vla_config *cfg, vla_model **out);

/* phi(x) = elu(x) + 1 in binary64 with the C library's exp (section 5: input preparation). */
#include <math.h>
static inline double vla_phi_d(double x) { return x > 0 ? x + 1.0 : exp(x); }

/* Rejects NaN/Inf in the inputs the model uses, before any state changes. */
int vla_input_check(const vla_config *cfg, const vla_input *in);
#endif
