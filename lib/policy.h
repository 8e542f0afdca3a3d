/* policy.h: every precision policy of lib/vlalists.h's VLA_PRECS instantiated from its row, for
 * the files that instantiate recur.h for all the policies in one translation unit (native_all.h:
 * lib/'s CPU models; model_comp.c: the comp way; lanes/lanes.c: the vector lanes;
 * kernels/kpolicy.h does the same for the one policy of a kernel object). The one place where a
 * row's storage, compute and io formats become an arithmetic's roundings. Each format of
 * VLA_FORMATS says, in its file lib/formats/<tok>.h, how each arithmetic rounds a number of its
 * container to that format: a macro <prefix><ID>(x), ID the format's first column (VLA_RND_F16
 * for the native arithmetic, the default, from fmt.h; LRND_F16 for the lanes, from lanes.c;
 * lib/formats/each.h), the identity where the container is the format, and one that a container
 * it cannot take does not compile. The includer sets
 *     VLA_EACH       the file to include once per row ("native_inst.h")
 *     VLA_EACH_RND   the prefix of its roundings (default VLA_RND_)
 *     VLA_EACH_IF    the rows it takes: an #if expression in the columns below (default all)
 *     VLA_EACH_SFX   the suffix of their names (default: the file's own, e.g. TAG(POL))
 * then includes this file, which includes VLA_EACH once per row it takes, each time with
 *     POL                    the row's suffix (f16f32), which TAG and tables.h's *_OF(POL) take
 *     POL_S, POL_C, POL_IO   the IDs of its storage, compute and io formats (F16, F32, F16)
 *     POL_MIXED, POL_KERN    its columns, 0 or 1
 *     RO(x)   x rounded to the compute format: every operation's result
 *     RS(x)   x rounded to the storage format where it is not compute's, else x: every store
 *     RI(x)   x rounded to the io format where it is not storage's (the kernels' policies:
 *             inputs and chunk intermediates), else RS(x)
 *     SFX     VLA_EACH_SFX, where set
 * recur_end.h undefines POL, SFX, RO, RS and RI at the end of each instantiation, this file the
 * rest and, after the last row, the includer's VLA_EACH*. A format without its rounding is an
 * undeclared name; a row the loop did not take, an undeclared name in its includer's dispatch
 * table: no policy maps silently to another's arithmetic. docs/adding.md shows a new policy. */
#ifndef VLA_POLICY_H
#define VLA_POLICY_H
#include "tables.h"
/* a column of row i of VLA_PRECS, and the number of rows, for the preprocessor */
#define VLA_PCOL_SFX_(ID, name, sfx, S, C, IO, mixed, kern) sfx,
#define VLA_PCOL_S_(ID, name, sfx, S, C, IO, mixed, kern) S,
#define VLA_PCOL_C_(ID, name, sfx, S, C, IO, mixed, kern) C,
#define VLA_PCOL_IO_(ID, name, sfx, S, C, IO, mixed, kern) IO,
#define VLA_PCOL_MIXED_(ID, name, sfx, S, C, IO, mixed, kern) mixed,
#define VLA_PCOL_KERN_(ID, name, sfx, S, C, IO, mixed, kern) kern,
#define VLA_PCOL(i, col) VLA_NTH(i, VLA_PRECS(VLA_PCOL_##col##_))
#if (0 VLA_PRECS(VLA_PONE_)) > 16
#error "policy.h: more than 16 rows in VLA_PRECS: extend VLA_NTH and the loop below"
#endif
#endif

#ifndef VLA_EACH_ROW /* the loop */
#ifndef VLA_EACH
#error "policy.h: define VLA_EACH, the file to include once per policy"
#endif
#define VLA_EACH_ROW 0
#include "policy.h"
#undef VLA_EACH_ROW
#define VLA_EACH_ROW 1
#include "policy.h"
#undef VLA_EACH_ROW
#define VLA_EACH_ROW 2
#include "policy.h"
#undef VLA_EACH_ROW
#define VLA_EACH_ROW 3
#include "policy.h"
#undef VLA_EACH_ROW
#define VLA_EACH_ROW 4
#include "policy.h"
#undef VLA_EACH_ROW
#define VLA_EACH_ROW 5
#include "policy.h"
#undef VLA_EACH_ROW
#define VLA_EACH_ROW 6
#include "policy.h"
#undef VLA_EACH_ROW
#define VLA_EACH_ROW 7
#include "policy.h"
#undef VLA_EACH_ROW
#define VLA_EACH_ROW 8
#include "policy.h"
#undef VLA_EACH_ROW
#define VLA_EACH_ROW 9
#include "policy.h"
#undef VLA_EACH_ROW
#define VLA_EACH_ROW 10
#include "policy.h"
#undef VLA_EACH_ROW
#define VLA_EACH_ROW 11
#include "policy.h"
#undef VLA_EACH_ROW
#define VLA_EACH_ROW 12
#include "policy.h"
#undef VLA_EACH_ROW
#define VLA_EACH_ROW 13
#include "policy.h"
#undef VLA_EACH_ROW
#define VLA_EACH_ROW 14
#include "policy.h"
#undef VLA_EACH_ROW
#define VLA_EACH_ROW 15
#include "policy.h"
#undef VLA_EACH_ROW
#undef VLA_EACH
#undef VLA_EACH_RND
#undef VLA_EACH_IF
#undef VLA_EACH_SFX

#elif VLA_EACH_ROW < (0 VLA_PRECS(VLA_PONE_)) /* one row */
#define POL VLA_PCOL(VLA_EACH_ROW, SFX)
#define POL_S VLA_PCOL(VLA_EACH_ROW, S)
#define POL_C VLA_PCOL(VLA_EACH_ROW, C)
#define POL_IO VLA_PCOL(VLA_EACH_ROW, IO)
#define POL_MIXED VLA_PCOL(VLA_EACH_ROW, MIXED)
#define POL_KERN VLA_PCOL(VLA_EACH_ROW, KERN)
#ifndef VLA_EACH_IF
#define VLA_EACH_IF 1
#endif
#ifndef VLA_EACH_RND
#define VLA_EACH_RND VLA_RND_
#endif
#if VLA_EACH_IF
#define RO(x) VLA_JOIN(VLA_EACH_RND, POL_C)(x)
#define RS(x) (VLA_FMTS_OF(POL) != VLA_FMTC_OF(POL) ? VLA_JOIN(VLA_EACH_RND, POL_S)(x) : (x))
#define RI(x) (VLA_FMTI_OF(POL) != VLA_FMTS_OF(POL) ? VLA_JOIN(VLA_EACH_RND, POL_IO)(x) : RS(x))
#ifdef VLA_EACH_SFX
#define SFX VLA_EACH_SFX
#endif
#include VLA_EACH
#endif
#undef POL
#undef POL_S
#undef POL_C
#undef POL_IO
#undef POL_MIXED
#undef POL_KERN
#undef RO
#undef RS
#undef RI
#undef SFX
#endif
