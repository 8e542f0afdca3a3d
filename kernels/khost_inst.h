/* khost_inst.h: per policy, what the host prepares for the kernel, made by lib's own native
 * instantiation of recur.h (included through NATIVE_EXTRA from lib/native_inst.h): the constants
 * and the initial state from vstate_new, and each step's inputs from load(), so the GPU starts
 * from and consumes exactly the bits the CPU model does. Policies the kernels do not run (sr)
 * get these too, unused. */

/* consts: C_NCONST numbers; state: kstate_len numbers (kabi.h) */
__attribute__((unused)) static int FN(kh_init)(const vla_config *cfg, void *consts, void *state)
{
    ST *s;
    int r = FN(vstate_new)(NULL, cfg, &s);
    if (r)
        return r;
    size_t d = cfg->d, dv = cfg->dv;
    NUM *st = state;
    memcpy(consts, s->c, C_NCONST * sizeof(NUM));
    memcpy(st, s->S, dv * d * sizeof(NUM));
    memcpy(st += dv * d, s->A, d * d * sizeof(NUM));
    memcpy(st += d * d, s->n, d * sizeof(NUM));
    memcpy(st += d, s->o, dv * sizeof(NUM));
    memcpy(st += dv, s->kp, d * sizeof(NUM));
    memcpy(st + d, s->al, d * sizeof(NUM));
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
 * on a stand-in input with k = q and v = 0, whose other fields the kernel ignores. */
__attribute__((unused)) static void FN(kh_prepare)(void *scratch, const vla_input *in, int is_read,
                                                  void *rec)
{
    static const double zeros[VLA_D_MAX];
    ST *s = scratch;
    size_t d = s->d, dv = s->dv;
    vla_input rd = {in->q, in->q, zeros, NULL, NULL, NAN, NAN};
    if (is_read)
        in = &rd;
    FN(load)(NULL, s, in);
    NUM *r = rec;
    memcpy(r, s->q, d * sizeof(NUM));
    memcpy(r += d, s->k, d * sizeof(NUM));
    memcpy(r += d, s->u, d * sizeof(NUM));
    memcpy(r += d, s->pk, d * sizeof(NUM));
    memcpy(r += d, s->pq, d * sizeof(NUM));
    memcpy(r += d, s->v, dv * sizeof(NUM));
    r += dv;
    if (in->g)
        memcpy(r, s->g, dv * sizeof(NUM));
    else
        memset(r, 0, dv * sizeof(NUM));
    memcpy(r + dv, s->beta_decay, 2 * sizeof(NUM));
}

/* chol keeps the factor L where the other ways keep A: A = M^-1 from a run's L (raw numbers of
 * the policy), computed as lib's vstate_get computes it, in the same arithmetic */
__attribute__((unused)) static int FN(kh_chol_A)(void *scratch, const void *L, double *dst)
{
    ST *s = scratch;
    memcpy(s->A, L, (size_t)s->d * s->d * sizeof(NUM));
    return FN(vstate_get)(NULL, s, VLA_Q_A, dst);
}
