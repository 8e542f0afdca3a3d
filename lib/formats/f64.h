/* f64.h: binary64, the format of VLA_FORMATS's row F64, in each arithmetic (lib/formats/each.h
 * says which part goes where). Held in its own container everywhere: each rounding is the
 * identity, or the C conversion to double. */
#if VLA_FMT_PART == VLA_PART_SCALAR
#define VLA_RND_F64(x) ((double)(x))
/* no stochastic rounding into binary64: only its own container takes it */
#define SR_RND_F64(x) _Generic((x), double: (x))

#elif VLA_FMT_PART == VLA_PART_AVX512
#define LDBL_F64 1
#define LRND_F64(x) _Generic((x), lv8: (x))

#elif VLA_FMT_PART == VLA_PART_AVX2
#define LRND2_F64(x) _Generic((x), lv4d: (x))

#elif VLA_FMT_PART == VLA_PART_KERNEL
/* x rounded to binary64 in a wider container: by a conversion */
#define krnd_f64(x) ((double)(x))
#endif
