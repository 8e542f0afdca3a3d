/* model_comp.c: the comp way of tracking A: recur.h instantiated over double-word arithmetic
 * (dw_body.h) of each uniform policy's format, so that A, S and everything computed from them
 * carry about twice the working precision. Always strict: a contracted TwoSum is no TwoSum. */
#include "fmt.h"
#include "model_impl.h"
#include "tables.h"

/* every policy of one format (vlalists.h's mixed = 0 and kern = 0), its base operations rounding
 * as fmt.h's VLA_RND_<format> say: for the 16-bit bases, binary32 results of 16-bit operands
 * rounded again; fmaf then rounding is the correctly rounded fma only where it is exact, which
 * is the one place dw_body.h uses it */
#define VLA_EACH "dw_inst.h"
#define VLA_EACH_IF (!POL_MIXED && !POL_KERN)
#include "policy.h"

/* the dispatch: a policy of one format the loop above skipped is an undeclared name */
int vla_native_create_comp(const vla_config *cfg, vla_model **out)
{
    switch (cfg->prec) {
#define VLA_X_(ID, name, sfx, S, C, IO, mixed, kern)                                              \
    VLA_IFNOT(mixed, VLA_IFNOT(kern, case VLA_##ID : return (create_##sfx##c)(cfg, out);))
        VLA_PRECS(VLA_X_)
#undef VLA_X_
    default: return VLA_ENOTSUP;
    }
}
