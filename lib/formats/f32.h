/* f32.h: binary32, the format of VLA_FORMATS's row F32, in each arithmetic (lib/formats/each.h
 * says which part goes where). The hardware's own format: the C conversion, and in the lanes the
 * conversion instruction, round binary64 to it correctly. */
#if VLA_FMT_PART == VLA_PART_SCALAR
#define VLA_RND_F32(x) ((float)(x))
/* no stochastic rounding into binary32: only its own container takes it */
#define SR_RND_F32(x) _Generic((x), float: (x))

#elif VLA_FMT_PART == VLA_PART_AVX512
#define LDBL_F32 0
/* binary32 of binary64 vectors by the conversion instruction (round to nearest even, subnormals
 * kept) */
#define LRND_F32(x)                                                                                \
    _Generic((x), lv16: (x), lv8: (lv8)_mm512_cvtps_pd(_mm512_cvtpd_ps((__m512d)(x))))

#elif VLA_FMT_PART == VLA_PART_AVX2
#define LRND2_F32(x)                                                                               \
    _Generic((x), lv8f: (x), lv4d: (lv4d)_mm256_cvtps_pd(_mm256_cvtpd_ps((__m256d)(x))))

#elif VLA_FMT_PART == VLA_PART_KERNEL
/* x rounded to binary32 in a wider container: by a conversion */
#define krnd_f32(x) ((float)(x))
#endif
