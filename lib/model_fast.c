/* model_fast.c: the fast-mode instantiations: the same recur.h text, compiled with fma
 * contraction allowed (-ffp-contract=fast, see the Makefile). Results carry mode=fast. */
#define TAG(x) VLA_CAT(x, fast)
#define PRIMS 0
#define NATIVE_CREATE vla_native_create_fast
#include "native_all.h"
