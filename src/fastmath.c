/* fastmath.c - vectorisable cos/sin for random Fourier features, and exp for kernel blocks.
 *
 * Method (|t| <= FM_LIMIT):
 *   k = nearest integer to t/pi   (magic-number rounding: plain adds, which
 *                                  vectorise with SSE2, unlike rint/floor)
 *   r = (t - k*PI1) - k*PI2       (Cody-Waite; PI1 has 33 significant bits so
 *                                  k*PI1 is exact for |k| < 2^20 and the
 *                                  subtraction is exact by Sterbenz)
 *   cos t = (-1)^k cos r,  sin t = (-1)^k sin r,  |r| <= pi/2
 * cos r and sin r are minimax polynomials (degree 16 and 17, absolute
 * approximation error 4e-18 and 3e-19 on [0, pi/2]; minimax fits by
 * the Remez exchange algorithm).  Reducing by pi rather than pi/2 costs a longer
 * polynomial but removes all quadrant selection: the sign (-1)^k is bit 0 of
 * k, which sits in the last mantissa bit of t/pi + MAGIC, so one 64-bit
 * shift and one xor into `scale` apply it.  Everything is add/mul/xor/shift
 * on 64-bit lanes, which SSE2 has.
 *
 * Accuracy: reduction error <= ulp(pi/2)/2 + 3e-22, evaluation error a few
 * 1e-17 -> measured max abs error vs libm about 3e-16 (tests/testthat/
 * test-fastmath.R checks 1e-15).
 *
 * Elements with !(|t| <= FM_LIMIT) (large, Inf, NaN) get garbage from the
 * vector loop; it sets a flag and a scalar pass then recomputes those with
 * libm, so they equal libm exactly.  Work is done in L1-sized blocks so the
 * fix-up pass stays local and in-place calls can go through a small buffer.
 *
 * Floating-point contraction into fma (e.g. under -march=native, or on
 * arm64) is harmless: t - k*PI1 stays exact, the magic rounding still yields
 * an integer, and the polynomials only get more accurate.  -ffast-math
 * would break the magic-number rounding and the NaN test, so under it (or
 * on a platform with excess precision) everything goes to libm.
 */

/*
 * exp (bochner_exp_scaled, y = exp(scale * x)), same scheme:
 *   k = nearest integer to t/ln2 (magic-number rounding), r = (t - k*LN2_HI) - k*LN2_LO
 *   (LN2_HI has 32 significant bits: k*LN2_HI exact for |k| < 2^21), |r| <= ln2/2 + tiny,
 *   exp t = 2^k * P(r), P the degree-13 Taylor polynomial (truncation 4e-18 relative),
 *   2^k built in the exponent bits from the low bits of t/ln2 + MAGIC.
 * Valid for t in [-708, 709] (2^k normal); other t (underflow to subnormals or 0,
 * overflow, NaN) take the libm fix-up like cos.  exp(0) = 1 exactly.  Measured max error
 * against libm about 2 ulp (tests/testthat/test-fastmath.R).
 */

/*
 * Single precision (issue 38: float kernel blocks and features), bochner_*_f below:
 * double arguments (the double results of the float product, sgemm.c), float results.
 * exp: the same reduction in double, then the degree-8 Taylor polynomial instead of 13
 * (truncation 2e-10 relative on |r| <= 0.35).  cos and sin: reduced by pi/2 (quadrant by
 * bit masks, fm_reduce2), so that every zero of the result falls at r = 0, then Taylor
 * polynomials through r^10 and r^11 on |r| <= pi/4 (truncation 1.1e-10 and 9e-12
 * relative): each about half the double one's work, rounded to float once.  Bound relied
 * on and tested (tests/testthat/test-fastmath-single.R, against R's exp, cos and sin of
 * the same doubles): within 1 ulp of float, the double computation adding at most 1e-3
 * of a float ulp to the final rounding's half ulp (relative error 1.1e-10 plus the
 * reduction's 2^-53 relative); for cos and sin results below 1e-13 (arguments within
 * 1e-13 of a multiple of pi/2) 1e-20 absolute instead: the reduction carries pi/2 to 86
 * bits, 3e-22 absolute at |x| = 1e5, as for the double ones.
 * Arguments the reductions do not cover (exp beyond [-708, 709], cos and sin beyond 1e5,
 * Inf, NaN) take libm, as for the double ones.
 */

#include <math.h>
#include <float.h>
#include <stdint.h>
#include <string.h>
#include <R.h>
#include <Rinternals.h>
#include "bochner.h"

/* The fast path needs IEEE doubles evaluated in double precision (not x87
 * long double: FLT_EVAL_METHOD 2).  0 and 1 are C99; 16/32/64 are the
 * TS 18661-3 values gcc reports when _Float16 is enabled (e.g. AVX512-FP16
 * under -march=native), all of which keep double in double. */
#if !defined(__FAST_MATH__) && DBL_MANT_DIG == 53 && \
    defined(FLT_EVAL_METHOD) && \
    (FLT_EVAL_METHOD == 0 || FLT_EVAL_METHOD == 1 || FLT_EVAL_METHOD == 16 || \
     FLT_EVAL_METHOD == 32 || FLT_EVAL_METHOD == 64)
# define FM_FAST 1
#else
# define FM_FAST 0
#endif

/* `omp simd` makes gcc vectorise at -O2 (it overrides the very-cheap cost
 * model); needs $(SHLIB_OPENMP_CFLAGS).  Without OpenMP the loops are plain
 * scalar C, still correct. */
#if defined(_OPENMP) && _OPENMP >= 201307
# define FM_PRAGMA(x) _Pragma(#x)
# define FM_SIMD_OR(v) FM_PRAGMA(omp simd reduction(|:v))
# define FM_SIMD FM_PRAGMA(omp simd)
#else
# define FM_SIMD_OR(v)
# define FM_SIMD
#endif

#define FM_BLOCK 512          /* 4 KiB per array: stays in L1 */
#define FM_LIMIT 1e5          /* |k| <= 31831 < 2^15: reduction exact */

/* memcpy type punning: well-defined C, compiles to nothing */
static inline uint64_t fm_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static inline double fm_double(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static inline int fm_out_of_range(double t)
{
    return !(fabs(t) <= FM_LIMIT);    /* true for NaN too */
}

/* Same test on the bit patterns, for the vector loops (gcc 12 will not
 * vectorise a double compare turned into an integer flag under SSE2):
 * non-negative doubles, NaN and Inf included, order like their bits, so
 * bits(LIMIT) - bits(|t|) wraps (sets bit 63) iff |t| > LIMIT or NaN. */
static inline uint64_t fm_bad_bits(double t)
{
    return fm_bits(FM_LIMIT) - (fm_bits(t) & 0x7fffffffffffffffULL);
}

#if FM_FAST

static const double FM_MAGIC  = 0x1.8p52;              /* 1.5 * 2^52 */
static const double FM_INV_PI = 0x1.45f306dc9c883p-2;  /* 1/pi */
static const double FM_PI1    = 0x1.921fb544p+1;       /* pi, top 33 bits */
static const double FM_PI2    = 0x1.0b4611a626331p-33; /* pi - FM_PI1 */

/* cos r ~ 1 + z*(C1 + z*(C2 + ... z*C8)), z = r^2, |r| <= pi/2 */
static const double FM_C1 = -0x1.ffffffffffffdp-2;
static const double FM_C2 =  0x1.5555555555413p-5;
static const double FM_C3 = -0x1.6c16c16c0b51cp-10;
static const double FM_C4 =  0x1.a01a0199d97a5p-16;
static const double FM_C5 = -0x1.27e4f9946ec45p-22;
static const double FM_C6 =  0x1.1eece52e5586ep-29;
static const double FM_C7 = -0x1.9352053825debp-37;
static const double FM_C8 =  0x1.9f455d7d26708p-45;

/* sin r ~ r + r*z*(S1 + z*(S2 + ... z*S8)) */
static const double FM_S1 = -0x1.5555555555555p-3;
static const double FM_S2 =  0x1.11111111110c2p-7;
static const double FM_S3 = -0x1.a01a01a014682p-13;
static const double FM_S4 =  0x1.71de3a526f377p-19;
static const double FM_S5 = -0x1.ae6454be3bdefp-26;
static const double FM_S6 =  0x1.6123c7acf15f9p-33;
static const double FM_S7 = -0x1.ae4231f31a505p-41;
static const double FM_S8 =  0x1.8810f4eaa13ddp-49;

static inline double fm_cos_poly(double z)
{
    double p = FM_C8;
    p = p * z + FM_C7;
    p = p * z + FM_C6;
    p = p * z + FM_C5;
    p = p * z + FM_C4;
    p = p * z + FM_C3;
    p = p * z + FM_C2;
    p = p * z + FM_C1;
    return 1.0 + z * p;
}

static inline double fm_sin_poly(double r, double z)
{
    double p = FM_S8;
    p = p * z + FM_S7;
    p = p * z + FM_S6;
    p = p * z + FM_S5;
    p = p * z + FM_S4;
    p = p * z + FM_S3;
    p = p * z + FM_S2;
    p = p * z + FM_S1;
    /* "+ 0.0" turns z*p = -0 into +0 so that sin(-0) = -0 (kept by the
     * compiler: signed zeros are honoured without -ffast-math) */
    return r + r * (z * p + 0.0);
}

/* Reduction shared by both kernels: returns r, and in *sgn the bit pattern
 * of (-1)^k as a sign bit. */
static inline double fm_reduce(double t, uint64_t *sgn)
{
    double v = t * FM_INV_PI + FM_MAGIC;
    double k = v - FM_MAGIC;
    *sgn = fm_bits(v) << 63;          /* parity of k -> sign bit */
    return (t - k * FM_PI1) - k * FM_PI2;
}

static const double FM_LOG2E  = 0x1.71547652b82fep+0;   /* 1/ln 2 */
static const double FM_LN2_HI = 0x1.62e42fefa0000p-1;   /* ln 2, top 32 bits */
static const double FM_LN2_LO = 0x1.cf79abc9e3b3ap-40;  /* ln 2 - FM_LN2_HI */

/* exp r ~ sum_{n=0}^{13} r^n / n!, |r| <= 0.35 */
static inline double fm_exp_poly(double r)
{
    double p = 1.0 / 6227020800.0;        /* 1/13! */
    p = p * r + 1.0 / 479001600.0;
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    return p * r + 1.0;
}

/* bad bits for exp: |t - 0.5| > 708.5 (t outside [-708, 709]) or NaN, as in fm_bad_bits */
static inline uint64_t fm_exp_bad_bits(double t)
{
    return fm_bits(708.5) - (fm_bits(t - 0.5) & 0x7fffffffffffffffULL);
}

static inline double fm_exp(double t)
{
    double v = t * FM_LOG2E + FM_MAGIC;
    double k = v - FM_MAGIC;
    double r = (t - k * FM_LN2_HI) - k * FM_LN2_LO;
    /* the low bits of v hold k (two's complement): k + 1023 into the exponent field */
    double two_k = fm_double((fm_bits(v) + 1023u) << 52);
    return fm_exp_poly(r) * two_k;
}

/* exp r for a float result: degree 8, |r| <= 0.35 (truncation 2e-10 relative) */
static inline double fm_exp_poly8(double r)
{
    double p = 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    return p * r + 1.0;
}

/* exp t for a float result, t in [-708, 709] (others: the libm fix-up) */
static inline double fm_exp8(double t)
{
    double v = t * FM_LOG2E + FM_MAGIC;
    double k = v - FM_MAGIC;
    double r = (t - k * FM_LN2_HI) - k * FM_LN2_LO;
    double two_k = fm_double((fm_bits(v) + 1023u) << 52);
    return fm_exp_poly8(r) * two_k;
}

/* Float cos and sin reduce by pi/2, not pi: the zeros of the result then fall at r = 0,
 * where the polynomials are accurate relative to it (reducing by pi puts cos's zeros at
 * the interval's ends, where a short polynomial's absolute error is thousands of float
 * ulps of a small result).  r = (t - k PIO2_1) - k PIO2_2 as fm_reduce (PIO2_1 has 33
 * bits: k PIO2_1 exact for |k| < 2^20), |r| <= pi/4; the quadrant k mod 4 (the low bits
 * of t 2/pi + MAGIC) picks cos r or sin r and the sign, by bit masks (vectorised). */
static const double FM_2_PI   = 0x1.45f306dc9c883p-1;   /* 2/pi */
static const double FM_PIO2_1 = 0x1.921fb544p+0;        /* pi/2, top 33 bits */
static const double FM_PIO2_2 = 0x1.0b4611a626331p-34;  /* pi/2 - FM_PIO2_1 */

static inline double fm_reduce2(double t, uint64_t *q)
{
    double v = t * FM_2_PI + FM_MAGIC;
    double k = v - FM_MAGIC;
    *q = fm_bits(v) & 3u;             /* k mod 4, k negative too */
    return (t - k * FM_PIO2_1) - k * FM_PIO2_2;
}

/* cos r, |r| <= pi/4: Taylor through r^10 (truncation 1.1e-10 relative) */
static inline double fm_cos_poly5(double z)
{
    double p = -1.0 / 3628800.0;
    p = p * z + 1.0 / 40320.0;
    p = p * z - 1.0 / 720.0;
    p = p * z + 1.0 / 24.0;
    p = p * z - 0.5;
    return 1.0 + z * p;
}

/* sin r, |r| <= pi/4: Taylor through r^11 (truncation 9e-12 relative) */
static inline double fm_sin_poly5(double r, double z)
{
    double p = -1.0 / 39916800.0;
    p = p * z + 1.0 / 362880.0;
    p = p * z - 1.0 / 5040.0;
    p = p * z + 1.0 / 120.0;
    p = p * z - 1.0 / 6.0;
    return r + r * (z * p + 0.0);     /* sin(-0) = -0, as fm_sin_poly */
}

/* cos t and sin t from the quadrant q and r: cos t = C, -S, -C, S and sin t = S, C, -S, -C
 * for q = 0 .. 3 (C = cos r, S = sin r), times the scale (its bits in sc) */
static inline double fm_quad_cos(uint64_t q, double cr, double sr, uint64_t sc)
{
    uint64_t swap = 0 - (q & 1u);
    uint64_t v = (fm_bits(sr) & swap) | (fm_bits(cr) & ~swap);
    return fm_double(sc ^ (((q + 1u) & 2u) << 62)) * fm_double(v);
}

static inline double fm_quad_sin(uint64_t q, double cr, double sr, uint64_t sc)
{
    uint64_t swap = 0 - (q & 1u);
    uint64_t v = (fm_bits(cr) & swap) | (fm_bits(sr) & ~swap);
    return fm_double(sc ^ ((q & 2u) << 62)) * fm_double(v);
}

#define FM_DEFINE_KERNELS_F(SUF, ATTR)                                      \
static ATTR int fm_exp_block_f##SUF(float *restrict y,                      \
                                    const double *restrict x, int n,        \
                                    double scale)                           \
{                                                                           \
    uint64_t bad = 0;                                                       \
    FM_SIMD_OR(bad)                                                         \
    for (int i = 0; i < n; i++) {                                           \
        double t = x[i] * scale;                                            \
        bad |= fm_exp_bad_bits(t);                                          \
        y[i] = (float) fm_exp8(t);                                          \
    }                                                                       \
    return (int) (bad >> 63);                                               \
}                                                                           \
static ATTR int fm_cos_block_f##SUF(float *restrict y,                      \
                                    const double *restrict x, int n,        \
                                    double shift, double scale)             \
{                                                                           \
    uint64_t bad = 0, sc = fm_bits(scale);                                  \
    FM_SIMD_OR(bad)                                                         \
    for (int i = 0; i < n; i++) {                                           \
        double t = x[i] + shift;                                            \
        uint64_t q;                                                         \
        bad |= fm_bad_bits(t);                                              \
        double r = fm_reduce2(t, &q);                                       \
        double z = r * r;                                                   \
        y[i] = (float) fm_quad_cos(q, fm_cos_poly5(z), fm_sin_poly5(r, z), sc); \
    }                                                                       \
    return (int) (bad >> 63);                                               \
}                                                                           \
static ATTR int fm_sincos_block_f##SUF(float *restrict c, float *restrict s,\
                                       const double *restrict x, int n,     \
                                       double scale)                        \
{                                                                           \
    uint64_t bad = 0, sc = fm_bits(scale);                                  \
    FM_SIMD_OR(bad)                                                         \
    for (int i = 0; i < n; i++) {                                           \
        double t = x[i];                                                    \
        uint64_t q;                                                         \
        bad |= fm_bad_bits(t);                                              \
        double r = fm_reduce2(t, &q);                                       \
        double z = r * r;                                                   \
        double cr = fm_cos_poly5(z), sr = fm_sin_poly5(r, z);               \
        c[i] = (float) fm_quad_cos(q, cr, sr, sc);                          \
        s[i] = (float) fm_quad_sin(q, cr, sr, sc);                          \
    }                                                                       \
    return (int) (bad >> 63);                                               \
}

/* Vector loops, returning nonzero if some element needs the libm fix-up.
 * Written as a macro so the same source can be compiled twice: for the
 * baseline ISA and, on x86-64, for AVX2 (see dispatch below). */
#define FM_DEFINE_KERNELS(SUF, ATTR)                                        \
static ATTR int fm_cos_block##SUF(double *restrict y,                       \
                                  const double *restrict x, int n,          \
                                  double shift, double scale)               \
{                                                                           \
    uint64_t bad = 0, sc = fm_bits(scale);                                  \
    FM_SIMD_OR(bad)                                                         \
    for (int i = 0; i < n; i++) {                                           \
        double t = x[i] + shift;     /* rounded once, as R's x + b */       \
        uint64_t sgn;                                                       \
        bad |= fm_bad_bits(t);                                              \
        double r = fm_reduce(t, &sgn);                                      \
        y[i] = fm_double(sc ^ sgn) * fm_cos_poly(r * r);                    \
    }                                                                       \
    return (int) (bad >> 63);                                               \
}                                                                           \
static ATTR int fm_sincos_block##SUF(double *restrict c, double *restrict s,\
                                     const double *restrict x, int n,       \
                                     double scale)                          \
{                                                                           \
    uint64_t bad = 0, sc = fm_bits(scale);                                  \
    FM_SIMD_OR(bad)                                                         \
    for (int i = 0; i < n; i++) {                                           \
        double t = x[i];                                                    \
        uint64_t sgn;                                                       \
        bad |= fm_bad_bits(t);                                              \
        double r = fm_reduce(t, &sgn);                                      \
        double z = r * r;                                                   \
        double f = fm_double(sc ^ sgn);                                     \
        c[i] = f * fm_cos_poly(z);                                          \
        s[i] = f * fm_sin_poly(r, z);                                       \
    }                                                                       \
    return (int) (bad >> 63);                                               \
}                                                                           \
static ATTR int fm_exp_block##SUF(double *restrict y,                       \
                                  const double *restrict x, int n,          \
                                  double shift, double scale)               \
{                                                                           \
    uint64_t bad = 0;                                                       \
    (void) shift;                   /* the signature of fm_cos_block */     \
    FM_SIMD_OR(bad)                                                         \
    for (int i = 0; i < n; i++) {                                           \
        double t = x[i] * scale;                                            \
        bad |= fm_exp_bad_bits(t);                                          \
        y[i] = fm_exp(t);                                                   \
    }                                                                       \
    return (int) (bad >> 63);                                               \
}                                                                           \
static ATTR int fm_exp_dist_block##SUF(double *restrict col,                \
                                       double *restrict v,                  \
                                       const double *restrict xn, int n,    \
                                       double ynj, double scale)            \
{                                                                           \
    uint64_t bad = 0;                                                       \
    FM_SIMD_OR(bad)                                                         \
    for (int i = 0; i < n; i++) {                                           \
        double u = col[i] + xn[i] + ynj;                                    \
        double c = u > 0.0 ? u : 0.0;                                       \
        double t = c * scale;                                               \
        v[i] = c;                                                           \
        bad |= fm_exp_bad_bits(t);                                          \
        col[i] = fm_exp(t);                                                 \
    }                                                                       \
    return (int) (bad >> 63);                                               \
}

FM_DEFINE_KERNELS(_base, )
FM_DEFINE_KERNELS_F(_base, )

/* Runtime dispatch to AVX2 and AVX-512 builds of the same loops (4 and 8
 * lanes instead of 2; 512-bit vectors asked for explicitly, since gcc's
 * generic tuning would otherwise stay at 256).  This needs no compiler
 * flags (the target attribute is per function), so R CMD check is happy.
 * The AVX2 build deliberately leaves out fma, so it performs exactly the
 * IEEE operations of the SSE2 code: bit-identical results.  avx512f implies
 * fma, and gcc contracts the polynomials into fused multiply-adds there:
 * 0.62 against 1.07 ns per cosine without them on this machine; results
 * differ from the other paths in the last bit (at most 4.2e-16 measured,
 * inside the 1e-15 bound), and never between thread counts, since every
 * thread runs the same path.  Skipped on Windows (gcc there cannot align
 * 32-byte stack spills) and when the whole file is already built for AVX2.  -DFM_NO_DISPATCH forces the baseline
 * path; BOCHNER_MAX_ISA=0 does the same at run time. */
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__) && \
    !defined(__AVX2__) && !defined(_WIN32) && !defined(FM_NO_DISPATCH)
# define FM_DISPATCH 1
FM_DEFINE_KERNELS(_avx2, __attribute__((target("avx2"))))
FM_DEFINE_KERNELS(_avx512, __attribute__((target("avx512f,prefer-vector-width=512"))))
FM_DEFINE_KERNELS_F(_avx2, __attribute__((target("avx2"))))
FM_DEFINE_KERNELS_F(_avx512, __attribute__((target("avx512f,prefer-vector-width=512"))))
/* the level detected once at load (cpu.c) */
# define FM_HAVE_AVX512() (bochner_cpu_isa() >= 2)
# define FM_HAVE_AVX2() (bochner_cpu_isa() >= 1)
#else
# define FM_DISPATCH 0
#endif

#else  /* !FM_FAST: plain libm */

# define FM_DISPATCH 0
static int fm_cos_block_base(double *restrict y, const double *restrict x,
                             int n, double shift, double scale)
{
    for (int i = 0; i < n; i++) y[i] = scale * cos(x[i] + shift);
    return 0;
}

static int fm_sincos_block_base(double *restrict c, double *restrict s,
                                const double *restrict x, int n,
                                double scale)
{
    for (int i = 0; i < n; i++) {
        c[i] = scale * cos(x[i]);
        s[i] = scale * sin(x[i]);
    }
    return 0;
}

static int fm_exp_block_base(double *restrict y, const double *restrict x, int n,
                             double shift, double scale)
{
    (void) shift;
    for (int i = 0; i < n; i++) y[i] = exp(x[i] * scale);
    return 0;
}

static int fm_exp_dist_block_base(double *restrict col, double *restrict v,
                                  const double *restrict xn, int n, double ynj, double scale)
{
    for (int i = 0; i < n; i++) {
        double u = col[i] + xn[i] + ynj;
        v[i] = u > 0.0 ? u : 0.0;
        col[i] = exp(v[i] * scale);
    }
    return 0;
}

static int fm_exp_block_f_base(float *restrict y, const double *restrict x, int n,
                               double scale)
{
    for (int i = 0; i < n; i++) y[i] = (float) exp(x[i] * scale);
    return 0;
}

static int fm_cos_block_f_base(float *restrict y, const double *restrict x, int n,
                               double shift, double scale)
{
    for (int i = 0; i < n; i++) y[i] = (float) (scale * cos(x[i] + shift));
    return 0;
}

static int fm_sincos_block_f_base(float *restrict c, float *restrict s,
                                  const double *restrict x, int n, double scale)
{
    for (int i = 0; i < n; i++) {
        c[i] = (float) (scale * cos(x[i]));
        s[i] = (float) (scale * sin(x[i]));
    }
    return 0;
}

#endif

/* Scalar fix-up: libm for the elements the fast path cannot handle. */
static int fm_cos_fixup(double *restrict y, const double *restrict x,
                        int n, double shift, double scale)
{
    for (int i = 0; i < n; i++) {
        double t = x[i] + shift;
        if (fm_out_of_range(t)) y[i] = scale * cos(t);
    }
    return 0;
}

static void fm_sincos_fixup(double *restrict c, double *restrict s,
                            const double *restrict x, int n, double scale)
{
    /* two separate loops: with cos(t) and sin(t) side by side gcc emits a
     * call to sincos(), which libm need not round like cos() and sin() */
    for (int i = 0; i < n; i++)
        if (fm_out_of_range(x[i])) c[i] = scale * cos(x[i]);
    for (int i = 0; i < n; i++)
        if (fm_out_of_range(x[i])) s[i] = scale * sin(x[i]);
}

static int fm_exp_fixup(double *restrict y, const double *restrict x, int n, double shift,
                        double scale)
{
    (void) shift;
    for (int i = 0; i < n; i++) {
        double t = x[i] * scale;
        if (!(t >= -708.0 && t <= 709.0)) y[i] = exp(t);
    }
    return 0;
}

typedef int (*fm_cos_fn)(double *restrict, const double *restrict, int,
                         double, double);
typedef int (*fm_exp_dist_fn)(double *restrict, double *restrict, const double *restrict,
                              int, double, double);
typedef int (*fm_sincos_fn)(double *restrict, double *restrict,
                            const double *restrict, int, double);

/* y = f(x) block by block with the vector kernel, then the libm fix-up where it asks */
static void fm_apply(fm_cos_fn kern, fm_cos_fn fixup, double *y, const double *x, ptrdiff_t n,
                     double shift, double scale)
{
    double buf[FM_BLOCK];   /* in place: the fix-up still needs x */
    for (ptrdiff_t i0 = 0; i0 < n; i0 += FM_BLOCK) {
        int m = (n - i0 < FM_BLOCK) ? (int) (n - i0) : FM_BLOCK;
        const double *xb = x + i0;
        double *out = (y == x) ? buf : y + i0;
        if (kern(out, xb, m, shift, scale))
            fixup(out, xb, m, shift, scale);
        if (out == buf) memcpy(y + i0, buf, (size_t) m * sizeof(double));
    }
}

void bochner_cos_affine(double *y, const double *x, ptrdiff_t n,
                        double shift, double scale)
{
    fm_cos_fn kern = fm_cos_block_base;
#if FM_DISPATCH
    if (FM_HAVE_AVX512()) kern = fm_cos_block_avx512;
    else if (FM_HAVE_AVX2()) kern = fm_cos_block_avx2;
#endif
    fm_apply(kern, fm_cos_fixup, y, x, n, shift, scale);
}

void bochner_sincos_scaled(double *c, double *s, const double *x,
                           ptrdiff_t n, double scale)
{
    fm_sincos_fn kern = fm_sincos_block_base;
#if FM_DISPATCH
    if (FM_HAVE_AVX512()) kern = fm_sincos_block_avx512;
    else if (FM_HAVE_AVX2()) kern = fm_sincos_block_avx2;
#endif
    double bufc[FM_BLOCK], bufs[FM_BLOCK];
    int inplace = (c == x || s == x);
    for (ptrdiff_t i0 = 0; i0 < n; i0 += FM_BLOCK) {
        int m = (n - i0 < FM_BLOCK) ? (int) (n - i0) : FM_BLOCK;
        const double *xb = x + i0;
        double *oc = inplace ? bufc : c + i0;
        double *os = inplace ? bufs : s + i0;
        if (kern(oc, os, xb, m, scale))
            fm_sincos_fixup(oc, os, xb, m, scale);
        if (inplace) {
            memcpy(c + i0, bufc, (size_t) m * sizeof(double));
            memcpy(s + i0, bufs, (size_t) m * sizeof(double));
        }
    }
}

/* y[i] = exp(scale * x[i]) (y may be x) */
void bochner_exp_scaled(double *y, const double *x, ptrdiff_t n, double scale)
{
    fm_cos_fn kern = fm_exp_block_base;
#if FM_DISPATCH
    if (FM_HAVE_AVX512()) kern = fm_exp_block_avx512;
    else if (FM_HAVE_AVX2()) kern = fm_exp_block_avx2;
#endif
    fm_apply(kern, fm_exp_fixup, y, x, n, 0.0, scale);
}

/* col[i] = exp(scale * max(0, col[i] + xn[i] + ynj)), i < n: a column of a Gaussian
 * Gram tile from its cross products and the norms (kernel_blocks.c), in one
 * vector loop; v (n doubles) receives the clamped squared distances.  The same
 * operations as the clamp followed by bochner_exp_scaled(), so the same doubles. */
void bochner_exp_distances(double *col, double *v, const double *xn, int n, double ynj,
                           double scale)
{
    fm_exp_dist_fn kern = fm_exp_dist_block_base;
#if FM_DISPATCH
    if (FM_HAVE_AVX512()) kern = fm_exp_dist_block_avx512;
    else if (FM_HAVE_AVX2()) kern = fm_exp_dist_block_avx2;
#endif
    if (kern(col, v, xn, n, ynj, scale)) fm_exp_fixup(col, v, n, 0.0, scale);
}

/* ---- single precision: double arguments, float results (header above) ---- */

/* y[i] = (float) exp(scale * x[i]) */
void bochner_exp_scaled_f(float *y, const double *x, ptrdiff_t n, double scale)
{
    int (*kern)(float *restrict, const double *restrict, int, double) = fm_exp_block_f_base;
#if FM_DISPATCH
    if (FM_HAVE_AVX512()) kern = fm_exp_block_f_avx512;
    else if (FM_HAVE_AVX2()) kern = fm_exp_block_f_avx2;
#endif
    for (ptrdiff_t i0 = 0; i0 < n; i0 += FM_BLOCK) {
        int m = n - i0 < FM_BLOCK ? (int) (n - i0) : FM_BLOCK;
        if (kern(y + i0, x + i0, m, scale))
            for (int i = 0; i < m; i++) {
                double t = x[i0 + i] * scale;
                if (!(t >= -708.0 && t <= 709.0)) y[i0 + i] = (float) exp(t);
            }
    }
}

/* y[i] = (float) (scale * cos(x[i] + shift)) */
void bochner_cos_affine_f(float *y, const double *x, ptrdiff_t n, double shift, double scale)
{
    int (*kern)(float *restrict, const double *restrict, int, double, double) =
        fm_cos_block_f_base;
#if FM_DISPATCH
    if (FM_HAVE_AVX512()) kern = fm_cos_block_f_avx512;
    else if (FM_HAVE_AVX2()) kern = fm_cos_block_f_avx2;
#endif
    for (ptrdiff_t i0 = 0; i0 < n; i0 += FM_BLOCK) {
        int m = n - i0 < FM_BLOCK ? (int) (n - i0) : FM_BLOCK;
        if (kern(y + i0, x + i0, m, shift, scale))
            for (int i = 0; i < m; i++) {
                double t = x[i0 + i] + shift;
                if (fm_out_of_range(t)) y[i0 + i] = (float) (scale * cos(t));
            }
    }
}

/* c[i] = (float) (scale * cos(x[i])), s[i] = (float) (scale * sin(x[i])) */
void bochner_sincos_scaled_f(float *c, float *s, const double *x, ptrdiff_t n, double scale)
{
    int (*kern)(float *restrict, float *restrict, const double *restrict, int, double) =
        fm_sincos_block_f_base;
#if FM_DISPATCH
    if (FM_HAVE_AVX512()) kern = fm_sincos_block_f_avx512;
    else if (FM_HAVE_AVX2()) kern = fm_sincos_block_f_avx2;
#endif
    for (ptrdiff_t i0 = 0; i0 < n; i0 += FM_BLOCK) {
        int m = n - i0 < FM_BLOCK ? (int) (n - i0) : FM_BLOCK;
        if (kern(c + i0, s + i0, x + i0, m, scale)) {
            /* two loops, as fm_sincos_fixup: no sincos() call */
            for (int i = 0; i < m; i++)
                if (fm_out_of_range(x[i0 + i])) c[i0 + i] = (float) (scale * cos(x[i0 + i]));
            for (int i = 0; i < m; i++)
                if (fm_out_of_range(x[i0 + i])) s[i0 + i] = (float) (scale * sin(x[i0 + i]));
        }
    }
}
