/* each.h: every format of lib/vlalists.h's VLA_FORMATS, its rounding in one arithmetic. A format
 * is its row and one file, lib/formats/<tok>.h (docs/adding.md), which holds how each arithmetic
 * rounds to it, a part for each, chosen by VLA_FMT_PART:
 *     VLA_PART_SCALAR   lib/fmt.h: VLA_RND_<ID>(x), the native arithmetic's rounding of a C
 *                       number (lib's policies, the comp way's double words, the kernels' host
 *                       side), and SR_RND_<ID>(x), the sr way's stochastic rounding
 *     VLA_PART_AVX512   lanes/lanes.c: LDBL_<ID>, the lanes' container (1: binary64 vectors,
 *                       0: binary32), and LRND_<ID>(x), the rounding of an AVX-512 vector
 *     VLA_PART_AVX2     lanes/lanes.c: LRND2_<ID>(x), of an AVX2 vector
 *     VLA_PART_KERNEL   kernels/kpolicy.h: krnd_<tok>(x), the CUDA device's rounding (under
 *                       __CUDACC__) and its host emulation's
 * lib/policy.h and kpolicy.h make each policy's RO, RS and RI from them. The lanes and the host
 * side of the kernel include fmt.h, so their parts may take the scalar part's functions (the
 * host's krnd_f16 is vla_rnd_f16; a new format's lanes may round lane by lane, as
 * tests/test_lists.c's e5m2 does, until they have vector code). The includer sets
 * VLA_FMT_PART, has included tables.h, and includes this file, which includes each row's file
 * once, in the order of the rows, and undefines VLA_FMT_PART. A row without its file stops the
 * build here ("e5m2.h: No such file or directory"); a file without a part, where that part is
 * used (an undeclared VLA_RND_E5M2, LRND_E5M2, krnd_e5m2). The file is named by the row's tok,
 * so a tok must not be a macro's name. */
#ifndef VLA_FORMATS_EACH_H
#define VLA_FORMATS_EACH_H
#define VLA_PART_SCALAR 1
#define VLA_PART_AVX512 2
#define VLA_PART_AVX2 3
#define VLA_PART_KERNEL 4
/* the file of row i of VLA_FORMATS: "<tok>.h", beside this one */
#define VLA_FCOL_TOK_(ID, tok, ...) tok,
#define VLA_FMT_FILE_STR_(x) #x
#define VLA_FMT_FILE_(tok) VLA_FMT_FILE_STR_(tok.h)
#define VLA_FMT_FILE__(tok) VLA_FMT_FILE_(tok)
#define VLA_FMT_FILE(i) VLA_FMT_FILE__(VLA_NTH(i, VLA_FORMATS(VLA_FCOL_TOK_)))
#if (0 VLA_FORMATS(VLA_PONE_)) > 16
#error "formats/each.h: more than 16 rows in VLA_FORMATS: extend VLA_NTH and the loop below"
#endif
#endif

#ifndef VLA_FMT_ROW /* the loop */
#if !defined(VLA_FMT_PART) || !(VLA_FMT_PART >= VLA_PART_SCALAR && VLA_FMT_PART <= VLA_PART_KERNEL)
#error "formats/each.h: define VLA_FMT_PART, the part of each format's file to take"
#endif
#define VLA_FMT_ROW 0
#include "each.h"
#undef VLA_FMT_ROW
#define VLA_FMT_ROW 1
#include "each.h"
#undef VLA_FMT_ROW
#define VLA_FMT_ROW 2
#include "each.h"
#undef VLA_FMT_ROW
#define VLA_FMT_ROW 3
#include "each.h"
#undef VLA_FMT_ROW
#define VLA_FMT_ROW 4
#include "each.h"
#undef VLA_FMT_ROW
#define VLA_FMT_ROW 5
#include "each.h"
#undef VLA_FMT_ROW
#define VLA_FMT_ROW 6
#include "each.h"
#undef VLA_FMT_ROW
#define VLA_FMT_ROW 7
#include "each.h"
#undef VLA_FMT_ROW
#define VLA_FMT_ROW 8
#include "each.h"
#undef VLA_FMT_ROW
#define VLA_FMT_ROW 9
#include "each.h"
#undef VLA_FMT_ROW
#define VLA_FMT_ROW 10
#include "each.h"
#undef VLA_FMT_ROW
#define VLA_FMT_ROW 11
#include "each.h"
#undef VLA_FMT_ROW
#define VLA_FMT_ROW 12
#include "each.h"
#undef VLA_FMT_ROW
#define VLA_FMT_ROW 13
#include "each.h"
#undef VLA_FMT_ROW
#define VLA_FMT_ROW 14
#include "each.h"
#undef VLA_FMT_ROW
#define VLA_FMT_ROW 15
#include "each.h"
#undef VLA_FMT_ROW
#undef VLA_FMT_PART

#elif VLA_FMT_ROW < (0 VLA_FORMATS(VLA_PONE_)) /* one row */
#include VLA_FMT_FILE(VLA_FMT_ROW)
#endif
