/* khost_inst.h: per policy, what the host prepares for the kernel, made by lib's own native
 * instantiation of recur.h (included through NATIVE_EXTRA from lib/native_inst.h): the constants
 * and the initial state from vstate_new, and each step's inputs from load(), so the GPU starts
 * from and consumes exactly the bits the CPU model does. Policies the kernels do not run (sr)
 * get these too, unused. */

/* consts: C_NCONST numbers; state: kstate_len numbers in kabi.h's layout, from S_0 = S0 (NULL: 0) */
__attribute__((unused)) static int FN(kh_init)(const vla_config *cfg, const double *S0, void *consts,
                                              void *state)
{
    ST *s;
    int r = FN(vstate_new)(NULL, cfg, &s);
    if (r)
        return r;
    if (S0)
        FN(vstate_start)(NULL, s, S0);
    const vla_dims dm = vla_dims_of(cfg);
    VLA_DIMS_LOCALS(dm);
    memcpy(consts, s->c, C_NCONST * sizeof(NUM));
#define VLA_X_(name, len)                                                                          \
    memcpy((NUM *)state + kstate_off(KA_##name, dm), s->name, (size_t)(len) * sizeof(NUM));
    VLA_STATE_SAVED(VLA_X_)
#undef VLA_X_
    FN(vstate_free)(NULL, s);
    return VLA_OK;
}

/* a state whose input arrays load() fills, one per preparing thread */
__attribute__((unused)) static int FN(kh_scratch)(const vla_config *cfg, void **out)
{
    ST *s;
    int r = FN(vstate_new)(NULL, cfg, &s);
    *out = r ? NULL : s;
    return r;
}
__attribute__((unused)) static void FN(kh_scratch_free)(void *s) { FN(vstate_free)(NULL, s); }

/* One record (kabi.h) of input in, checked by the caller. A read takes only q: load() then runs
 * on a stand-in input with k = q and v = 0, whose other fields the kernel ignores. A step
 * without a gate carries zeros in g (ignored too: the record's bytes stay a function of in). */
__attribute__((unused)) static void FN(kh_prepare)(void *scratch, const vla_input *in, int is_read,
                                                  void *rec)
{
    static const double zeros[VLA_D_MAX];
    ST *s = scratch;
    int d = s->d, dv = s->dv, ng = s->ng, nr = s->nr;
    vla_input rd = {.q = in->q, .k = in->q, .v = zeros, .beta = NAN, .decay = NAN};
    if (is_read)
        in = &rd;
    FN(load)(NULL, s, in);
    if (!in->g)
        memset(s->g, 0, (size_t)dv * sizeof(NUM));
    NUM *r = rec;
#define VLA_X_(name, len)                                                                          \
    memcpy(r, s->name, (size_t)(len) * sizeof(NUM));                                               \
    r += (len);
    VLA_STATE_INPUT(VLA_X_)
#undef VLA_X_
}

/* A quantity of a run whose state (kstate_len numbers of the policy, kabi.h's layout) the device
 * gave back, as lib's vstate_get gives it from the same bits: in the same arithmetic where it is
 * computed (chol's and the solvers' A = M^-1) */
__attribute__((unused)) static int FN(kh_get)(void *scratch, const void *state, vla_quantity q,
                                              double *dst)
{
    ST *s = scratch;
    const vla_dims dm = vla_dims_of(&s->cfg);
    VLA_DIMS_LOCALS(dm);
#define VLA_X_(name, len)                                                                          \
    memcpy(s->name, (const NUM *)state + kstate_off(KA_##name, dm), (size_t)(len) * sizeof(NUM));
    VLA_STATE_SAVED(VLA_X_)
#undef VLA_X_
    return FN(vstate_get)(NULL, s, q, dst);
}
