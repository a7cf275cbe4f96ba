/*
 * gemm.c -- the package's own dense product, independent of R's BLAS.
 *
 *   c (m x n, ldc) = [c +] a (m x k, lda) %*% b (k x n, ldb)     (serial)
 *
 * Every heavy product of the package (the transform tile, Z'Z for ridge,
 * decision values, k-means centre distances, Gram matrices) goes through
 * here, so results do not depend on which BLAS R links, and the product can
 * run inside the package's own OpenMP regions (a BLAS must never be called
 * there: a threaded BLAS would oversubscribe the cores).
 *
 * Three code paths; the CPU's is chosen once, when the package is loaded
 * (cpu.c), and the test hook passes a path explicitly:
 *   0  portable C (SSE2 on x86-64): c = c + a * b, vectorised over rows
 *   1  AVX2+FMA micro-kernel, 12 rows (3 ymm) x 4 columns
 *   2  AVX-512F micro-kernel, 24 rows (3 zmm) x 8 columns
 * The SIMD kernels are compiled through gcc/clang function attributes, so no
 * -mavx/-march flags are needed.  The K-block (kc) comes from the CPU (cpu.c).
 *
 * bochner_gemm_tn computes t(a) %*% b with a stored by columns (Z in Z'Z): its micro-panels
 * are packed straight from a's columns, 4 x 4 blocks transposed in registers, instead of
 * from a transposed copy with one cache line per row of the panel: on Zen 4 that strided
 * packing and the copy cost Z'Z a fifth of its time.
 *
 * While a kernel multiplies one panel of x it asks for its share of the next panel's
 * cache lines (rows read in place, rows to pack, or the transposed product's columns): a
 * panel of a large x comes from memory as strided streams, one per column, which the
 * hardware prefetchers do not follow (sgemm m = 4000 on Zen 4: 0.88x -> 0.97x of OpenBLAS,
 * falkon's K' T 33 -> 38 GFLOP/s).  Prefetches change no arithmetic.
 *
 * Determinism: every c(i,j) is one chain over l = 0 .. k-1 in that order,
 *     acc = c(i,j) or 0;  for l:  acc = fma(a[i,l], b[l,j], acc)   (paths 1, 2)
 *                                 acc = acc + a[i,l] * b[l,j]       (path 0)
 * whatever m, n, the position of row i or column j inside the call, or
 * the leading dimensions (row/column tails use the same kernels with masked
 * stores and zero-padded packed rows; K-blocking stores and reloads the
 * exact double accumulator).  So a product cut into tiles, or accumulated
 * over row blocks with accumulate = 1, equals the product in one call bit
 * for bit, on any number of threads.  Paths 1 and 2 agree bit for bit; path
 * 0 rounds differently (it is only used on CPUs without AVX2+FMA, or under
 * BOCHNER_MAX_ISA=0).
 */

/* No variable tracking for this file's debug information: the location lists of the
 * unrolled kernels' many register variables were most of the object (sgemm.o 207 -> 97 KB;
 * the code is the same instructions, checked with objdump), and the installed size has to
 * stay under R CMD check's 5 MB. */
#if defined(__GNUC__) && !defined(__clang__)
# pragma GCC optimize ("no-var-tracking")
#endif
#include <stddef.h>
#include <string.h>
#include <R.h>
#include <Rinternals.h>

#include "bochner.h"

/* ------------------------------------------------------------------------- */
/* Portable path                                                              */
/* ------------------------------------------------------------------------- */

static void tile_portable(const double *x, ptrdiff_t ldx, const double *w, ptrdiff_t ldw,
                          ptrdiff_t d, int nr, int nj, double *c, ptrdiff_t ldc, int acc)
{
    for (int j = 0; j < nj; j++) {
        double *restrict cj = c + (ptrdiff_t) j * ldc;
        const double *wj = w + (ptrdiff_t) j * ldw;
        if (!acc) memset(cj, 0, sizeof(double) * (size_t) nr);
        for (ptrdiff_t l = 0; l < d; l++) {
            const double b = wj[l];
            const double *restrict xl = x + l * ldx;
            for (int i = 0; i < nr; i++) cj[i] = cj[i] + xl[i] * b;
        }
    }
}

/* the same sums for c (+)= t(x) %*% w, x (d x nr, ldx): each entry is the same chain in l */
static void tile_portable_tn(const double *x, ptrdiff_t ldx, const double *w, ptrdiff_t ldw,
                             ptrdiff_t d, int nr, int nj, double *c, ptrdiff_t ldc, int acc)
{
    for (int j = 0; j < nj; j++) {
        double *restrict cj = c + (ptrdiff_t) j * ldc;
        const double *wj = w + (ptrdiff_t) j * ldw;
        for (int i = 0; i < nr; i++) {
            const double *xi = x + (ptrdiff_t) i * ldx;
            double a = acc ? cj[i] : 0.0;
            for (ptrdiff_t l = 0; l < d; l++) a = a + xi[l] * wj[l];
            cj[i] = a;
        }
    }
}

/* x86 SIMD paths: gcc/clang on x86-64 only (i386 is deliberately left to the portable path: only
 * 8 vector registers there, the register-blocked kernels would spill). */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(_WIN32)
# define BOCHNER_X86 1
# include <immintrin.h>
#else
# define BOCHNER_X86 0
#endif

/* K-blocking: kc inner indices at a time (bochner_gemm_blocking(), cpu.c, from the CPU found at
 * load: 256 on Intel, the value the kernels were tuned with); the packed X micro-panel is
 * MR x kc doubles on the stack (at most 24*384*8 = 72 KB). */
#define GEMM_KC_MAX 384

/* x %*% w with at most this many columns reads x's rows in place instead of packing them:
 * a panel is cheaper read once per column block from L2 than copied once, when its lines
 * are prefetched (below).  Shuttle's K_b U with 14 columns, 38 600 x 1024, 2 threads:
 * 0.029 s packed, 0.018 read in place (bench/falkon-notes.md).  With 17 to 64 columns
 * (falkon's passes and preconditioner solves for Letter's 26 classes) a 2958 x 2958 x k
 * product ran 5-23 % faster read in place than packed on AMD EPYC Zen 4 (k = 26: 29 -> 36
 * GFLOP/s on one thread, 57 -> 67 on two; the AVX2 path 28 -> 34), and Letter's default
 * fit 3.40 -> 3.11 s: the threshold was 16.  The FMAs are the same either way. */
#define GEMM_DIRECT_COLS 64

/* Ask for the cache lines of rows p[0 .. r-1] of a column read in place (into L2).  A
 * product with few columns (falkon's K_b U) walks x's columns, each in a page of its own,
 * where the hardware prefetchers do not follow; the next micro-panel's lines requested one
 * panel ahead arrive before they are read (no effect on the arithmetic). */
static inline void bochner_prefetch_rows(const double *p, int r)
{
    for (int i = 0; i < r; i += 8) __builtin_prefetch(p + i, 0, 2);
    __builtin_prefetch(p + r - 1, 0, 2);
}

/* The same for a panel stored by columns (the transposed product's: column i of the
 * next panel at p + i ld, kc entries each): step l of the kernel asks for lines
 * [l r / 8, (l + 1) r / 8) of the r columns' kc / 8 each (numbered across the columns
 * first), so that the kc steps cover them all and stay inside the panel. */
static inline void bochner_prefetch_cols(const double *p, ptrdiff_t ld, int r, int l)
{
    for (int line = l * r / 8; line < (l + 1) * r / 8; line++)
        __builtin_prefetch(p + (line % r) * ld + (line / r) * 8, 0, 2);
}

#if BOCHNER_X86

/* ------------------------------------------------------------------------- */
/* AVX-512F path: 24 x 8 micro-kernel                                         */
/* ------------------------------------------------------------------------- */

#define B512_INLINE static inline __attribute__((always_inline, target("avx512f")))

B512_INLINE __mmask8 lanes8(int r)
{
    return (__mmask8) (r >= 8 ? 0xFF : (r <= 0 ? 0 : (1u << r) - 1u));
}

/* c[0:8*MV, 0:NR] (masked rows) (+)= xp (packed, 8*MV rows x kc) * w[0:kc, 0:NR] (ldw) */
B512_INLINE void kern512(const int DIRECT, const int MV, const int NR, const double *xp,
                         ptrdiff_t xs, const double *w, ptrdiff_t ldw, int kc, double *c,
                         ptrdiff_t ldc, __mmask8 m0, __mmask8 m1, __mmask8 m2, int acc,
                         const double *pf, ptrdiff_t pfs, int plo, int phi)
{
#define Z3(j) __m512d a0##j = _mm512_setzero_pd(), a1##j = a0##j, a2##j = a0##j;
    Z3(0) Z3(1) Z3(2) Z3(3) Z3(4) Z3(5) Z3(6) Z3(7)
#undef Z3
    if (acc) {
#define LD3(j) if (NR > j) { const double *cj = c + (j) * ldc;                  \
            a0##j = _mm512_maskz_loadu_pd(m0, cj);                              \
            if (MV > 1) a1##j = _mm512_maskz_loadu_pd(m1, cj + 8);              \
            if (MV > 2) a2##j = _mm512_maskz_loadu_pd(m2, cj + 16); }
        LD3(0) LD3(1) LD3(2) LD3(3) LD3(4) LD3(5) LD3(6) LD3(7)
#undef LD3
    }
    for (int l = 0; l < kc; l++) {
        const double *xl = xp + l * xs;
        if (pf && l >= plo && l < phi) {
            /* pfs < 0: the next panel is stored by columns, -pfs apart */
            if (pfs > 0) bochner_prefetch_rows(pf + l * pfs, 24);
            else bochner_prefetch_cols(pf, -pfs, 24, l);
        }
        /* DIRECT: rows of x read in place, masked (the zeros a packed panel holds) */
        const __m512d x0 = DIRECT ? _mm512_maskz_loadu_pd(m0, xl) : _mm512_load_pd(xl);
        const __m512d x1 = (MV > 1) ? (DIRECT ? _mm512_maskz_loadu_pd(m1, xl + 8)
                                              : _mm512_load_pd(xl + 8)) : x0;
        const __m512d x2 = (MV > 2) ? (DIRECT ? _mm512_maskz_loadu_pd(m2, xl + 16)
                                              : _mm512_load_pd(xl + 16)) : x0;
        const double *wl = w + l;
#define F3(j) if (NR > j) { const __m512d b = _mm512_set1_pd(wl[(j) * ldw]);   \
            a0##j = _mm512_fmadd_pd(x0, b, a0##j);                              \
            if (MV > 1) a1##j = _mm512_fmadd_pd(x1, b, a1##j);                  \
            if (MV > 2) a2##j = _mm512_fmadd_pd(x2, b, a2##j); }
        F3(0) F3(1) F3(2) F3(3) F3(4) F3(5) F3(6) F3(7)
#undef F3
    }
#define ST3(j) if (NR > j) { double *cj = c + (j) * ldc;                        \
        _mm512_mask_storeu_pd(cj, m0, a0##j);                                   \
        if (MV > 1) _mm512_mask_storeu_pd(cj + 8, m1, a1##j);                   \
        if (MV > 2) _mm512_mask_storeu_pd(cj + 16, m2, a2##j); }
    ST3(0) ST3(1) ST3(2) ST3(3) ST3(4) ST3(5) ST3(6) ST3(7)
#undef ST3
}

/* one row block (8*MV rows: packed with stride xs = 8*MV, or read in place with
 * DIRECT, xs = ldx) times all nj columns */
B512_INLINE void rows512(const int DIRECT, const int MV, const double *xp, ptrdiff_t xs,
                         const double *w, ptrdiff_t ldw, int kc, int nj, double *c,
                         ptrdiff_t ldc, __mmask8 m0, __mmask8 m1, __mmask8 m2, int acc,
                         const double *pf, ptrdiff_t pfs)
{
    /* column block g asks for its share of the next panel's lines, l in [g kc / ng,
     * (g + 1) kc / ng): spread over the whole panel's work instead of crowding the
     * first block's (a 2958 x 2958 x 26 product read in place, falkon's preconditioner
     * solves for Letter: 33 -> 37 GFLOP/s on one thread, 57-65 -> 70-72 on two, Zen 4) */
    const int ng = (nj + 7) / 8;
    int j0 = 0, g = 0;
    for (; j0 + 8 <= nj; j0 += 8, g++)
        kern512(DIRECT, MV, 8, xp, xs, w + j0 * ldw, ldw, kc, c + j0 * ldc, ldc, m0, m1, m2,
                acc, pf, pfs, g * kc / ng, (g + 1) * kc / ng);
    const double *wj = w + j0 * ldw;
    double *cj = c + j0 * ldc;
#define K512(NR) kern512(DIRECT, MV, NR, xp, xs, wj, ldw, kc, cj, ldc, m0, m1, m2, acc, \
                         pf, pfs, g * kc / ng, kc)
    switch (nj - j0) {
    case 7: K512(7); break;
    case 6: K512(6); break;
    case 5: K512(5); break;
    case 4: K512(4); break;
    case 3: K512(3); break;
    case 2: K512(2); break;
    case 1: K512(1); break;
    default: break;
    }
#undef K512
}

/* A micro-panel of rows i0 .. i0+mr of X = t(a), a (kc x m, lda) stored by columns: row i
 * of the panel is the contiguous column i of a; rows mr .. MRP-1 are zero.  4 x 4 blocks
 * transposed in registers: contiguous reads, no strided gather (a pure copy: no rounding). */
__attribute__((target("avx2"), noinline))
static void pack_at(const int MRP, const double *a, ptrdiff_t lda, int kc, int mr, double *out)
{
    const int mr4 = mr & ~3, kc4 = kc & ~3;
    for (int i = 0; i < mr4; i += 4) {
        const double *a0 = a + (ptrdiff_t) i * lda, *a1 = a0 + lda, *a2 = a1 + lda,
                     *a3 = a2 + lda;
        double *o = out + i;
        int l = 0;
        for (; l < kc4; l += 4) {
            const __m256d r0 = _mm256_loadu_pd(a0 + l), r1 = _mm256_loadu_pd(a1 + l),
                          r2 = _mm256_loadu_pd(a2 + l), r3 = _mm256_loadu_pd(a3 + l);
            const __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1),
                          t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
            _mm256_storeu_pd(o + (ptrdiff_t) l * MRP, _mm256_permute2f128_pd(t0, t2, 0x20));
            _mm256_storeu_pd(o + (ptrdiff_t) (l + 1) * MRP, _mm256_permute2f128_pd(t1, t3, 0x20));
            _mm256_storeu_pd(o + (ptrdiff_t) (l + 2) * MRP, _mm256_permute2f128_pd(t0, t2, 0x31));
            _mm256_storeu_pd(o + (ptrdiff_t) (l + 3) * MRP, _mm256_permute2f128_pd(t1, t3, 0x31));
        }
        for (; l < kc; l++) {
            double *ol = o + (ptrdiff_t) l * MRP;
            ol[0] = a0[l]; ol[1] = a1[l]; ol[2] = a2[l]; ol[3] = a3[l];
        }
    }
    for (int i = mr4; i < mr; i++) {
        const double *ai = a + (ptrdiff_t) i * lda;
        for (int l = 0; l < kc; l++) out[(ptrdiff_t) l * MRP + i] = ai[l];
    }
    for (int i = mr; i < MRP; i++)
        for (int l = 0; l < kc; l++) out[(ptrdiff_t) l * MRP + i] = 0.0;
}

/* transa = 0: c (+)= x %*% w, x (nr x d, ldx);  transa = 1: c (+)= t(x) %*% w, x (d x nr, ldx) */
__attribute__((target("avx512f"), noinline))
static void tile512(const double *x, ptrdiff_t ldx, const double *w, ptrdiff_t ldw,
                    ptrdiff_t d, int nr, int nj, double *c, ptrdiff_t ldc, int acc0,
                    int transa)
{
    double xp[24 * GEMM_KC_MAX] __attribute__((aligned(64)));
    const bochner_gemm_blocks *bl = bochner_gemm_blocking();
    const int KC = bl->kc;
    for (ptrdiff_t pc = 0; pc < d; pc += KC) {
        const int kc = (int) (d - pc < KC ? d - pc : KC);
        const int acc = acc0 || pc > 0;
        for (int i0 = 0; i0 < nr; i0 += 24) {
            const int mr = nr - i0 < 24 ? nr - i0 : 24;
            const int mv = (mr + 7) / 8;
            const __mmask8 m0 = lanes8(mr), m1 = lanes8(mr - 8), m2 = lanes8(mr - 16);
            const double *src = x + pc * ldx + i0;
            const double *wp = w + pc;
            double *ci = c + i0;
            if (!transa && nj <= GEMM_DIRECT_COLS) {
                /* one or two micro-kernel column blocks: the rows are read in place
                 * (the same FMAs on the same values; a product with few columns, as
                 * K U in falkon's passes, no longer copies all of x), the next
                 * panel's lines prefetched */
                const double *pf = i0 + 48 <= nr ? src + 24 : NULL;
                /* a last panel of fewer rows too: its masked lanes load zeros (and
                 * are not stored), one kernel instead of three */
                rows512(1, 3, src, ldx, wp, ldw, kc, nj, ci, ldc, m0, m1, m2, acc, pf, ldx);
                continue;
            }
            /* pack X[i0:i0+mr, pc:pc+kc] into an 8*mv-row panel, zero padded */
            double *dst = xp;
            if (transa) pack_at(8 * mv, x + pc + (ptrdiff_t) i0 * ldx, ldx, kc, mr, xp);
            else for (int l = 0; l < kc; l++, src += ldx, dst += 8 * mv) {
                _mm512_store_pd(dst, _mm512_maskz_loadu_pd(m0, src));
                if (mv > 1) _mm512_store_pd(dst + 8, _mm512_maskz_loadu_pd(m1, src + 8));
                if (mv > 2) _mm512_store_pd(dst + 16, _mm512_maskz_loadu_pd(m2, src + 16));
            }
            const int xs = 8 * mv;
            /* the next panel's lines (or the next K-block's first) asked for while this
             * one is multiplied: a panel of a large x comes from memory, and its
             * strided columns are streams the prefetchers do not follow */
            const ptrdiff_t next = bochner_next_panel(ldx, d, nr, i0, pc, KC, 24, transa);
            const double *pf = next < 0 ? NULL : x + next;
            if (mv == 3)      rows512(0, 3, xp, xs, wp, ldw, kc, nj, ci, ldc, m0, m1, m2, acc, pf,
                                      transa ? -ldx : ldx);
            else if (mv == 2) rows512(0, 2, xp, xs, wp, ldw, kc, nj, ci, ldc, m0, m1, m2, acc, NULL, 0);
            else              rows512(0, 1, xp, xs, wp, ldw, kc, nj, ci, ldc, m0, m1, m2, acc, NULL, 0);
        }
    }
}

/* ------------------------------------------------------------------------- */
/* AVX2+FMA path: 12 x 4 micro-kernel                                         */
/* ------------------------------------------------------------------------- */

#define B256_INLINE static inline __attribute__((always_inline, target("avx2,fma")))

B256_INLINE __m256i lanes4(int r)
{
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x(r), _mm256_set_epi64x(3, 2, 1, 0));
}

/* 4 rows of a panel: packed (DIRECT 0, aligned), read in place masked (1), or read in
 * place whole (2: plain loads, as a masked load is slow on AMD) */
B256_INLINE __m256d xload256(const int DIRECT, const double *p, __m256i mask)
{
    return DIRECT == 2 ? _mm256_loadu_pd(p) : DIRECT ? _mm256_maskload_pd(p, mask)
                                                     : _mm256_load_pd(p);
}

B256_INLINE void kern256(const int DIRECT, const int MV, const int NR, const double *xp,
                         ptrdiff_t xs, const double *w, ptrdiff_t ldw, int kc, double *c,
                         ptrdiff_t ldc, __m256i m0, __m256i m1, __m256i m2, int acc,
                         const double *pf, ptrdiff_t pfs, int plo, int phi)
{
#define Z3(j) __m256d a0##j = _mm256_setzero_pd(), a1##j = a0##j, a2##j = a0##j;
    Z3(0) Z3(1) Z3(2) Z3(3)
#undef Z3
    if (acc) {
#define LD3(j) if (NR > j) { const double *cj = c + (j) * ldc;                  \
            a0##j = _mm256_maskload_pd(cj, m0);                                 \
            if (MV > 1) a1##j = _mm256_maskload_pd(cj + 4, m1);                 \
            if (MV > 2) a2##j = _mm256_maskload_pd(cj + 8, m2); }
        LD3(0) LD3(1) LD3(2) LD3(3)
#undef LD3
    }
    for (int l = 0; l < kc; l++) {
        const double *xl = xp + l * xs;
        if (pf && l >= plo && l < phi) {
            if (pfs > 0) bochner_prefetch_rows(pf + l * pfs, 12);
            else bochner_prefetch_cols(pf, -pfs, 12, l);
        }
        const __m256d x0 = xload256(DIRECT, xl, m0);
        const __m256d x1 = (MV > 1) ? xload256(DIRECT, xl + 4, m1) : x0;
        const __m256d x2 = (MV > 2) ? xload256(DIRECT, xl + 8, m2) : x0;
        const double *wl = w + l;
#define F3(j) if (NR > j) { const __m256d b = _mm256_broadcast_sd(wl + (j) * ldw); \
            a0##j = _mm256_fmadd_pd(x0, b, a0##j);                              \
            if (MV > 1) a1##j = _mm256_fmadd_pd(x1, b, a1##j);                  \
            if (MV > 2) a2##j = _mm256_fmadd_pd(x2, b, a2##j); }
        F3(0) F3(1) F3(2) F3(3)
#undef F3
    }
#define ST3(j) if (NR > j) { double *cj = c + (j) * ldc;                        \
        _mm256_maskstore_pd(cj, m0, a0##j);                                     \
        if (MV > 1) _mm256_maskstore_pd(cj + 4, m1, a1##j);                     \
        if (MV > 2) _mm256_maskstore_pd(cj + 8, m2, a2##j); }
    ST3(0) ST3(1) ST3(2) ST3(3)
#undef ST3
}

/* one row block (4*MV rows: packed with stride xs = 4*MV, or read in place with
 * DIRECT, xs = ldx) times all nj columns */
B256_INLINE void rows256(const int DIRECT, const int MV, const double *xp, ptrdiff_t xs,
                         const double *w, ptrdiff_t ldw, int kc, int nj, double *c,
                         ptrdiff_t ldc, __m256i m0, __m256i m1, __m256i m2, int acc,
                         const double *pf, ptrdiff_t pfs)
{
    /* column block g asks for its share of the next panel's lines (rows512) */
    const int ng = (nj + 3) / 4;
    int j0 = 0, g = 0;
    for (; j0 + 4 <= nj; j0 += 4, g++)
        kern256(DIRECT, MV, 4, xp, xs, w + j0 * ldw, ldw, kc, c + j0 * ldc, ldc, m0, m1, m2,
                acc, pf, pfs, g * kc / ng, (g + 1) * kc / ng);
    const double *wj = w + j0 * ldw;
    double *cj = c + j0 * ldc;
#define K256(NR) kern256(DIRECT, MV, NR, xp, xs, wj, ldw, kc, cj, ldc, m0, m1, m2, acc, \
                         pf, pfs, g * kc / ng, kc)
    switch (nj - j0) {
    case 3: K256(3); break;
    case 2: K256(2); break;
    case 1: K256(1); break;
    default: break;
    }
#undef K256
}

__attribute__((target("avx2,fma"), noinline))
static void tile256(const double *x, ptrdiff_t ldx, const double *w, ptrdiff_t ldw,
                    ptrdiff_t d, int nr, int nj, double *c, ptrdiff_t ldc, int acc0,
                    int transa)
{
    double xp[12 * GEMM_KC_MAX] __attribute__((aligned(32)));
    const bochner_gemm_blocks *bl = bochner_gemm_blocking();
    const int KC = bl->kc;
    for (ptrdiff_t pc = 0; pc < d; pc += KC) {
        const int kc = (int) (d - pc < KC ? d - pc : KC);
        const int acc = acc0 || pc > 0;
        for (int i0 = 0; i0 < nr; i0 += 12) {
            const int mr = nr - i0 < 12 ? nr - i0 : 12;
            const int mv = (mr + 3) / 4;
            const __m256i m0 = lanes4(mr), m1 = lanes4(mr - 4), m2 = lanes4(mr - 8);
            const double *src = x + pc * ldx + i0;
            const double *wp = w + pc;
            double *ci = c + i0;
            if (!transa && nj <= GEMM_DIRECT_COLS) {
                /* few column blocks: rows read in place, as in tile512 */
                const double *pf = i0 + 24 <= nr ? src + 12 : NULL;
                /* a last panel of fewer rows: masked loads, the one masked kernel */
                if (mr == 12) rows256(2, 3, src, ldx, wp, ldw, kc, nj, ci, ldc, m0, m1, m2, acc, pf, ldx);
                else          rows256(1, 3, src, ldx, wp, ldw, kc, nj, ci, ldc, m0, m1, m2, acc, pf, ldx);
                continue;
            }
            double *dst = xp;
            if (transa) {
                pack_at(4 * mv, x + pc + (ptrdiff_t) i0 * ldx, ldx, kc, mr, xp);
            } else if (mr == 12) {
                for (int l = 0; l < kc; l++, src += ldx, dst += 12) {
                    _mm256_store_pd(dst, _mm256_loadu_pd(src));
                    _mm256_store_pd(dst + 4, _mm256_loadu_pd(src + 4));
                    _mm256_store_pd(dst + 8, _mm256_loadu_pd(src + 8));
                }
            } else {
                for (int l = 0; l < kc; l++, src += ldx, dst += 4 * mv) {
                    _mm256_store_pd(dst, _mm256_maskload_pd(src, m0));
                    if (mv > 1) _mm256_store_pd(dst + 4, _mm256_maskload_pd(src + 4, m1));
                    if (mv > 2) _mm256_store_pd(dst + 8, _mm256_maskload_pd(src + 8, m2));
                }
            }
            const int xs = 4 * mv;
            /* the next panel's lines asked for while this one is multiplied (tile512) */
            const ptrdiff_t next = bochner_next_panel(ldx, d, nr, i0, pc, KC, 12, transa);
            const double *pf = next < 0 ? NULL : x + next;
            if (mv == 3)      rows256(0, 3, xp, xs, wp, ldw, kc, nj, ci, ldc, m0, m1, m2, acc, pf,
                                      transa ? -ldx : ldx);
            else if (mv == 2) rows256(0, 2, xp, xs, wp, ldw, kc, nj, ci, ldc, m0, m1, m2, acc, NULL, 0);
            else              rows256(0, 1, xp, xs, wp, ldw, kc, nj, ci, ldc, m0, m1, m2, acc, NULL, 0);
        }
    }
}

#endif /* BOCHNER_X86 */

/* ------------------------------------------------------------------------- */
/* Dot products: t(a) %*% b for few columns of b                             */
/* ------------------------------------------------------------------------- */

/* c (m x n) = t(a) %*% b, a (k x m, lda), b (k x n, ldb): the sums
 * over many rows that a product with few columns makes (falkon's K_g' T_g over a group
 * of rows, at most 8 right-hand sides).  The packed product copies each 24-column panel
 * of a to use it n times; here a's columns are read in place, 8 rows at a time.  Its
 * own chain: each c(i,j) is 8 partial sums,
 * lane q over l = q, q + 8, q + 16, ... in order, s_q = fma(a[l,i], b[l,j], s_q) from 0
 * (path 0: s_q + a[l,i] * b[l,j]), then ((s0 + s4) + (s2 + s6)) + ((s1 + s5) + (s3 + s7)):
 * the same doubles whatever m, the position of column i or the leading dimensions, and
 * on paths 1 and 2. */
static double dot_lanes_sum(const double *s)
{
    return ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]));
}

#if BOCHNER_X86
/* JB columns of a against the n <= N columns of b (columns n .. N - 1 held at zero:
 * kernels for N = 1, 4 and 7 only, which keeps the library small) */
B512_INLINE void dot512(const int JB, const int N, const double *a, ptrdiff_t lda,
                        const double *b, ptrdiff_t ldb, int n, int k, double *c, ptrdiff_t ldc)
{
    __m512d s[8][8];
#pragma GCC unroll 8
    for (int jb = 0; jb < JB; jb++)
#pragma GCC unroll 8
        for (int j = 0; j < N; j++) s[jb][j] = _mm512_setzero_pd();
    for (int l = 0; l < k; l += 8) {
        const __mmask8 mk = lanes8(k - l);
        __m512d t[8];
#pragma GCC unroll 8
        for (int j = 0; j < N; j++)
            t[j] = _mm512_maskz_loadu_pd(j < n ? mk : 0, b + (ptrdiff_t) (j < n ? j : 0) * ldb + l);
#pragma GCC unroll 8
        for (int jb = 0; jb < JB; jb++) {
            const __m512d x = _mm512_maskz_loadu_pd(mk, a + (ptrdiff_t) jb * lda + l);
#pragma GCC unroll 8
            for (int j = 0; j < N; j++) s[jb][j] = _mm512_fmadd_pd(x, t[j], s[jb][j]);
        }
    }
    /* stores at constant indices (j < N, unrolled), so that s stays in registers */
    double lane[8 * 8] __attribute__((aligned(64)));
#pragma GCC unroll 8
    for (int jb = 0; jb < JB; jb++) {
#pragma GCC unroll 8
        for (int j = 0; j < N; j++) _mm512_store_pd(lane + 8 * j, s[jb][j]);
        for (int j = 0; j < n; j++) c[jb + (ptrdiff_t) j * ldc] = dot_lanes_sum(lane + 8 * j);
    }
}

static void dot_tn256(const double *a, ptrdiff_t lda, const double *b, ptrdiff_t ldb, int m,
                      int n, int k, double *c, ptrdiff_t ldc);

/* all m columns of a, JB at a time: JB N accumulators, the N columns of b and one of a
 * in the 32 registers, and with few columns of b many columns of a, so that enough
 * independent chains hide the FMA's latency.  The last block overlaps the one before
 * (its columns computed again, the same doubles); fewer than JB columns take path 1's
 * loop (the same chains; an AVX-512F CPU has AVX2 and FMA): no kernel for the tails. */
B512_INLINE void dot512_cols(const int JB, const int N, const double *a, ptrdiff_t lda,
                             const double *b, ptrdiff_t ldb, int m, int n, int k, double *c,
                             ptrdiff_t ldc)
{
    if (m < JB) {
        dot_tn256(a, lda, b, ldb, m, n, k, c, ldc);
        return;
    }
    for (int i = 0; i < m; i += JB) {
        const int i0 = i + JB <= m ? i : m - JB;
        /* N columns of b at a time against the same JB columns of a (in cache) */
        for (int j0 = 0; j0 < n; j0 += N)
            dot512(JB, N, a + (ptrdiff_t) i0 * lda, lda, b + (ptrdiff_t) j0 * ldb, ldb,
                   n - j0 < N ? n - j0 : N, k, c + i0 + (ptrdiff_t) j0 * ldc, ldc);
    }
}

__attribute__((target("avx512f"), noinline))
static void dot_tn512(const double *a, ptrdiff_t lda, const double *b, ptrdiff_t ldb, int m,
                      int n, int k, double *c, ptrdiff_t ldc)
{
    /* 7 columns (Shuttle's classes) in one sweep, not 4 + 3 and a column of zeros:
     * 18.4 -> 21.3 GFMA/s on Zen 4 */
    if (n == 1) dot512_cols(8, 1, a, lda, b, ldb, m, n, k, c, ldc);
    else if (n == 7) dot512_cols(3, 7, a, lda, b, ldb, m, n, k, c, ldc);
    else dot512_cols(5, 4, a, lda, b, ldb, m, n, k, c, ldc);
}

/* path 1: the same chains, lanes 0-3 and 4-7 of each in two ymm registers; JB columns of
 * a against N <= 3 columns of b (columns n .. N - 1 held at zero), 2 JB N + N + 1 of the 16
 * registers.  One entry at a time (two chains, masked loads) ran at 6.4-7.0 GFMA/s on
 * Zen 4, this at 8.4-10.5 (1024 rows, 1-8 columns of b). */
B256_INLINE void dot256(const int JB, const int N, const double *a, ptrdiff_t lda,
                        const double *b, ptrdiff_t ldb, int n, int k, double *c, ptrdiff_t ldc)
{
    __m256d s[4][3][2];
#pragma GCC unroll 4
    for (int jb = 0; jb < JB; jb++)
#pragma GCC unroll 3
        for (int j = 0; j < N; j++) s[jb][j][0] = s[jb][j][1] = _mm256_setzero_pd();
    /* plain loads on whole steps of 8 rows (a masked load is slow on AMD), masked on the
     * last: the lanes past k add fma(0, 0, s) = s */
    for (int l = 0; l < k; l += 8) {
        const int whole = l + 8 <= k;
#pragma GCC unroll 2
        for (int h = 0; h < 2; h++) {
            const __m256i mk = lanes4(k - l - 4 * h);
            __m256d t[3];
#pragma GCC unroll 3
            for (int j = 0; j < N; j++) {
                const double *bp = b + (ptrdiff_t) (j < n ? j : 0) * ldb + l + 4 * h;
                t[j] = j >= n ? _mm256_setzero_pd()
                              : whole ? _mm256_loadu_pd(bp) : _mm256_maskload_pd(bp, mk);
            }
#pragma GCC unroll 4
            for (int jb = 0; jb < JB; jb++) {
                const double *ap = a + (ptrdiff_t) jb * lda + l + 4 * h;
                const __m256d x = whole ? _mm256_loadu_pd(ap) : _mm256_maskload_pd(ap, mk);
#pragma GCC unroll 3
                for (int j = 0; j < N; j++) s[jb][j][h] = _mm256_fmadd_pd(x, t[j], s[jb][j][h]);
            }
        }
    }
    double lane[8] __attribute__((aligned(32)));
#pragma GCC unroll 4
    for (int jb = 0; jb < JB; jb++)
#pragma GCC unroll 3
        for (int j = 0; j < N; j++) {
            _mm256_store_pd(lane, s[jb][j][0]);
            _mm256_store_pd(lane + 4, s[jb][j][1]);
            if (j < n) c[jb + (ptrdiff_t) j * ldc] = dot_lanes_sum(lane);
        }
}

/* all m columns of a, JB at a time (the last block overlapping the one before: the same
 * doubles), N columns of b at a time; fewer than JB columns one by one */
B256_INLINE void dot256_cols(const int JB, const int N, const double *a, ptrdiff_t lda,
                             const double *b, ptrdiff_t ldb, int m, int n, int k, double *c,
                             ptrdiff_t ldc)
{
    for (int j0 = 0; j0 < n; j0 += N) {
        const int nj = n - j0 < N ? n - j0 : N;
        const double *bj = b + (ptrdiff_t) j0 * ldb;
        double *cj = c + (ptrdiff_t) j0 * ldc;
        if (m < JB) {
            for (int i = 0; i < m; i++)
                dot256(1, N, a + (ptrdiff_t) i * lda, lda, bj, ldb, nj, k, cj + i, ldc);
            continue;
        }
        if (nj == 1 && N > 1 && m >= 4) {
            /* a last single column: the one-column kernel, not N - 1 columns of zeros */
            for (int i = 0; i < m; i += 4) {
                const int i0 = i + 4 <= m ? i : m - 4;
                dot256(4, 1, a + (ptrdiff_t) i0 * lda, lda, bj, ldb, 1, k, cj + i0, ldc);
            }
            continue;
        }
        for (int i = 0; i < m; i += JB) {
            const int i0 = i + JB <= m ? i : m - JB;
            dot256(JB, N, a + (ptrdiff_t) i0 * lda, lda, bj, ldb, nj, k, cj + i0, ldc);
        }
    }
}

__attribute__((target("avx2,fma"), noinline))
static void dot_tn256(const double *a, ptrdiff_t lda, const double *b, ptrdiff_t ldb, int m,
                      int n, int k, double *c, ptrdiff_t ldc)
{
    if (n == 1) dot256_cols(4, 1, a, lda, b, ldb, m, n, k, c, ldc);
    else dot256_cols(2, 3, a, lda, b, ldb, m, n, k, c, ldc);
}
#endif /* BOCHNER_X86 */

static void dot_tn_portable(const double *a, ptrdiff_t lda, const double *b, ptrdiff_t ldb,
                            int m, int n, int k, double *c, ptrdiff_t ldc)
{
    for (int j = 0; j < n; j++) {
        const double *bj = b + (ptrdiff_t) j * ldb;
        for (int i = 0; i < m; i++) {
            const double *ai = a + (ptrdiff_t) i * lda;
            double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
            for (int l = 0; l < k; l++) s[l % 8] = s[l % 8] + ai[l] * bj[l];
            c[i + (ptrdiff_t) j * ldc] = dot_lanes_sum(s);
        }
    }
}

/* (callable from the threads: no R API) */
void bochner_dot_tn_path(int isa, const double *a, ptrdiff_t lda, const double *b,
                         ptrdiff_t ldb, int m, int n, int k, double *c, ptrdiff_t ldc)
{
    if (m <= 0 || n <= 0) return;
#if BOCHNER_X86
    if (isa == 2) { dot_tn512(a, lda, b, ldb, m, n, k, c, ldc); return; }
    if (isa == 1) { dot_tn256(a, lda, b, ldb, m, n, k, c, ldc); return; }
#else
    (void) isa;
#endif
    dot_tn_portable(a, lda, b, ldb, m, n, k, c, ldc);
}

void bochner_dot_tn(const double *a, ptrdiff_t lda, const double *b, ptrdiff_t ldb, int m,
                    int n, int k, double *c, ptrdiff_t ldc)
{
    bochner_dot_tn_path(bochner_cpu_isa(), a, lda, b, ldb, m, n, k, c, ldc);
}

/* ------------------------------------------------------------------------- */
/* Entry points                                                               */
/* ------------------------------------------------------------------------- */

void bochner_gemm_path(int isa, int transa, const double *a, ptrdiff_t lda, const double *b,
                       ptrdiff_t ldb, int m, int n, int k, double *c, ptrdiff_t ldc,
                       int accumulate)
{
    if (m <= 0 || n <= 0) return;
    if (k <= 0) {
        if (!accumulate)
            for (int j = 0; j < n; j++) memset(c + (ptrdiff_t) j * ldc, 0, sizeof(double) * (size_t) m);
        return;
    }
#if BOCHNER_X86
    switch (isa) {
    case 2: tile512(a, lda, b, ldb, k, m, n, c, ldc, accumulate, transa); return;
    case 1: tile256(a, lda, b, ldb, k, m, n, c, ldc, accumulate, transa); return;
    default: break;
    }
#else
    (void) isa;
#endif
    if (transa) tile_portable_tn(a, lda, b, ldb, k, m, n, c, ldc, accumulate);
    else tile_portable(a, lda, b, ldb, k, m, n, c, ldc, accumulate);
}

void bochner_gemm(const double *a, ptrdiff_t lda, const double *b, ptrdiff_t ldb,
                  int m, int n, int k, double *c, ptrdiff_t ldc, int accumulate)
{
    bochner_gemm_path(bochner_cpu_isa(), 0, a, lda, b, ldb, m, n, k, c, ldc, accumulate);
}

/* c (m x n) = [c +] t(a) %*% b for a (k x m, lda): the operand stored by columns, as Z in
 * Z'Z, is packed straight from its columns (no transposed copy) */
void bochner_gemm_tn(const double *a, ptrdiff_t lda, const double *b, ptrdiff_t ldb,
                     int m, int n, int k, double *c, ptrdiff_t ldc, int accumulate)
{
    bochner_gemm_path(bochner_cpu_isa(), 1, a, lda, b, ldb, m, n, k, c, ldc, accumulate);
}

/* ------------------------------------------------------------------------- */
/* Float operand, double arithmetic: falkon's float K_nm read in place       */
/* ------------------------------------------------------------------------- */

/* c (m x n) = [c +] a %*% b with a float (m x k, lda), b and c double, n <= GEMM_DIRECT_COLS;
 * and the dot products c (m x n) = t(a) %*% b, a float (k x m), n <= 8.  Each entry of a is
 * widened to double exactly as it is loaded, and the chains are those of the double
 * kernels above (the in-place product's FMA chain over l; the dot products' 8 lanes): the
 * same doubles as the double product of a widened copy of a, on every path, for half the
 * bytes read.  (falkon's single precision, src/falkon.c: a pass over a float cache of
 * K_nm streams 4 bytes an entry, and needs no widened copy.) */

static void tile_portable_xf(const float *x, ptrdiff_t ldx, const double *w, ptrdiff_t ldw,
                             ptrdiff_t d, int nr, int nj, double *c, ptrdiff_t ldc, int acc)
{
    for (int j = 0; j < nj; j++) {
        double *restrict cj = c + (ptrdiff_t) j * ldc;
        const double *wj = w + (ptrdiff_t) j * ldw;
        if (!acc) memset(cj, 0, sizeof(double) * (size_t) nr);
        for (ptrdiff_t l = 0; l < d; l++) {
            const double b = wj[l];
            const float *restrict xl = x + l * ldx;
            for (int i = 0; i < nr; i++) cj[i] = cj[i] + (double) xl[i] * b;
        }
    }
}

static void dot_tn_portable_xf(const float *a, ptrdiff_t lda, const double *b, ptrdiff_t ldb,
                               int m, int n, int k, double *c, ptrdiff_t ldc)
{
    for (int j = 0; j < n; j++) {
        const double *bj = b + (ptrdiff_t) j * ldb;
        for (int i = 0; i < m; i++) {
            const float *ai = a + (ptrdiff_t) i * lda;
            double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
            for (int l = 0; l < k; l++) s[l % 8] = s[l % 8] + (double) ai[l] * bj[l];
            c[i + (ptrdiff_t) j * ldc] = dot_lanes_sum(s);
        }
    }
}

#if BOCHNER_X86
/* 8 floats widened: lanes m of p (zeros elsewhere) */
B512_INLINE __m512d xfload512(const float *p, __mmask8 m)
{
    return _mm512_cvtps_pd(_mm512_castps512_ps256(_mm512_maskz_loadu_ps((__mmask16) m, p)));
}

/* kern512's in-place kernel (DIRECT, 3 registers of rows) with x float */
B512_INLINE void kern512xf(const int NR, const float *xp, ptrdiff_t xs, const double *w,
                           ptrdiff_t ldw, int kc, double *c, ptrdiff_t ldc, __mmask8 m0,
                           __mmask8 m1, __mmask8 m2, int acc, const float *pf)
{
#define Z3(j) __m512d a0##j = _mm512_setzero_pd(), a1##j = a0##j, a2##j = a0##j;
    Z3(0) Z3(1) Z3(2) Z3(3) Z3(4) Z3(5) Z3(6) Z3(7)
#undef Z3
    if (acc) {
#define LD3(j) if (NR > j) { const double *cj = c + (j) * ldc;                  \
            a0##j = _mm512_maskz_loadu_pd(m0, cj);                              \
            a1##j = _mm512_maskz_loadu_pd(m1, cj + 8);                          \
            a2##j = _mm512_maskz_loadu_pd(m2, cj + 16); }
        LD3(0) LD3(1) LD3(2) LD3(3) LD3(4) LD3(5) LD3(6) LD3(7)
#undef LD3
    }
    for (int l = 0; l < kc; l++) {
        const float *xl = xp + l * xs;
        if (pf) {
            __builtin_prefetch(pf + l * xs, 0, 2);
            __builtin_prefetch(pf + l * xs + 23, 0, 2);
        }
        const __m512d x0 = xfload512(xl, m0), x1 = xfload512(xl + 8, m1),
                      x2 = xfload512(xl + 16, m2);
        const double *wl = w + l;
#define F3(j) if (NR > j) { const __m512d b = _mm512_set1_pd(wl[(j) * ldw]);   \
            a0##j = _mm512_fmadd_pd(x0, b, a0##j);                              \
            a1##j = _mm512_fmadd_pd(x1, b, a1##j);                              \
            a2##j = _mm512_fmadd_pd(x2, b, a2##j); }
        F3(0) F3(1) F3(2) F3(3) F3(4) F3(5) F3(6) F3(7)
#undef F3
    }
#define ST3(j) if (NR > j) { double *cj = c + (j) * ldc;                        \
        _mm512_mask_storeu_pd(cj, m0, a0##j);                                   \
        _mm512_mask_storeu_pd(cj + 8, m1, a1##j);                               \
        _mm512_mask_storeu_pd(cj + 16, m2, a2##j); }
    ST3(0) ST3(1) ST3(2) ST3(3) ST3(4) ST3(5) ST3(6) ST3(7)
#undef ST3
}

__attribute__((target("avx512f"), noinline))
static void tile512xf(const float *x, ptrdiff_t ldx, const double *w, ptrdiff_t ldw,
                      ptrdiff_t d, int nr, int nj, double *c, ptrdiff_t ldc, int acc0)
{
    const int KC = bochner_gemm_blocking()->kc;
    for (ptrdiff_t pc = 0; pc < d; pc += KC) {
        const int kc = (int) (d - pc < KC ? d - pc : KC);
        const int acc = acc0 || pc > 0;
        for (int i0 = 0; i0 < nr; i0 += 24) {
            const int mr = nr - i0 < 24 ? nr - i0 : 24;
            const __mmask8 m0 = lanes8(mr), m1 = lanes8(mr - 8), m2 = lanes8(mr - 16);
            const float *src = x + pc * ldx + i0;
            const float *pf = i0 + 48 <= nr ? src + 24 : NULL;
            double *ci = c + i0;
            int j0 = 0;
            for (; j0 + 8 <= nj; j0 += 8)
                kern512xf(8, src, ldx, w + pc + j0 * ldw, ldw, kc, ci + j0 * ldc, ldc, m0, m1,
                          m2, acc, j0 ? NULL : pf);
            const double *wj = w + pc + j0 * ldw;
            double *cj = ci + j0 * ldc;
            const float *pj = j0 ? NULL : pf;
#define KX(NR) kern512xf(NR, src, ldx, wj, ldw, kc, cj, ldc, m0, m1, m2, acc, pj)
            switch (nj - j0) {
            case 7: KX(7); break;
            case 6: KX(6); break;
            case 5: KX(5); break;
            case 4: KX(4); break;
            case 3: KX(3); break;
            case 2: KX(2); break;
            case 1: KX(1); break;
            default: break;
            }
#undef KX
        }
    }
}

/* path 1: 12 rows, 3 ymm of 4 doubles, each from 4 floats (masked on a short panel) */
B256_INLINE __m256d xfload256(const float *p, int r)
{
    if (r >= 4) return _mm256_cvtps_pd(_mm_loadu_ps(p));
    const __m128i mk = _mm_cmpgt_epi32(_mm_set1_epi32(r), _mm_set_epi32(3, 2, 1, 0));
    return _mm256_cvtps_pd(_mm_maskload_ps(p, mk));
}

B256_INLINE void kern256xf(const int NR, const float *xp, ptrdiff_t xs, const double *w,
                           ptrdiff_t ldw, int kc, double *c, ptrdiff_t ldc, int mr, int acc,
                           const float *pf)
{
    const __m256i m0 = lanes4(mr), m1 = lanes4(mr - 4), m2 = lanes4(mr - 8);
#define Z3(j) __m256d a0##j = _mm256_setzero_pd(), a1##j = a0##j, a2##j = a0##j;
    Z3(0) Z3(1) Z3(2) Z3(3)
#undef Z3
    if (acc) {
#define LD3(j) if (NR > j) { const double *cj = c + (j) * ldc;                  \
            a0##j = _mm256_maskload_pd(cj, m0);                                 \
            a1##j = _mm256_maskload_pd(cj + 4, m1);                             \
            a2##j = _mm256_maskload_pd(cj + 8, m2); }
        LD3(0) LD3(1) LD3(2) LD3(3)
#undef LD3
    }
    for (int l = 0; l < kc; l++) {
        const float *xl = xp + l * xs;
        if (pf) __builtin_prefetch(pf + l * xs, 0, 2);
        const __m256d x0 = xfload256(xl, mr), x1 = xfload256(xl + 4, mr - 4),
                      x2 = xfload256(xl + 8, mr - 8);
        const double *wl = w + l;
#define F3(j) if (NR > j) { const __m256d b = _mm256_broadcast_sd(wl + (j) * ldw); \
            a0##j = _mm256_fmadd_pd(x0, b, a0##j);                              \
            a1##j = _mm256_fmadd_pd(x1, b, a1##j);                              \
            a2##j = _mm256_fmadd_pd(x2, b, a2##j); }
        F3(0) F3(1) F3(2) F3(3)
#undef F3
    }
#define ST3(j) if (NR > j) { double *cj = c + (j) * ldc;                        \
        _mm256_maskstore_pd(cj, m0, a0##j);                                     \
        _mm256_maskstore_pd(cj + 4, m1, a1##j);                                 \
        _mm256_maskstore_pd(cj + 8, m2, a2##j); }
    ST3(0) ST3(1) ST3(2) ST3(3)
#undef ST3
}

__attribute__((target("avx2,fma"), noinline))
static void tile256xf(const float *x, ptrdiff_t ldx, const double *w, ptrdiff_t ldw,
                      ptrdiff_t d, int nr, int nj, double *c, ptrdiff_t ldc, int acc0)
{
    const int KC = bochner_gemm_blocking()->kc;
    for (ptrdiff_t pc = 0; pc < d; pc += KC) {
        const int kc = (int) (d - pc < KC ? d - pc : KC);
        const int acc = acc0 || pc > 0;
        for (int i0 = 0; i0 < nr; i0 += 12) {
            const int mr = nr - i0 < 12 ? nr - i0 : 12;
            const float *src = x + pc * ldx + i0;
            const float *pf = i0 + 24 <= nr ? src + 12 : NULL;
            double *ci = c + i0;
            int j0 = 0;
            for (; j0 + 4 <= nj; j0 += 4)
                kern256xf(4, src, ldx, w + pc + j0 * ldw, ldw, kc, ci + j0 * ldc, ldc, mr, acc,
                          j0 ? NULL : pf);
            const double *wj = w + pc + j0 * ldw;
            double *cj = ci + j0 * ldc;
            const float *pj = j0 ? NULL : pf;
            switch (nj - j0) {
            case 3: kern256xf(3, src, ldx, wj, ldw, kc, cj, ldc, mr, acc, pj); break;
            case 2: kern256xf(2, src, ldx, wj, ldw, kc, cj, ldc, mr, acc, pj); break;
            case 1: kern256xf(1, src, ldx, wj, ldw, kc, cj, ldc, mr, acc, pj); break;
            default: break;
            }
        }
    }
}

/* the dot products' 8-lane chains (dot512, dot256) with a float: one column of a against
 * n <= 8 columns of b, the lanes of each in one zmm (path 2) or two ymm (path 1) */
__attribute__((target("avx512f"), noinline))
static void dot_tn512xf(const float *a, ptrdiff_t lda, const double *b, ptrdiff_t ldb, int m,
                        int n, int k, double *c, ptrdiff_t ldc)
{
    double lane[8] __attribute__((aligned(64)));
    for (int i = 0; i < m; i++) {
        const float *ai = a + (ptrdiff_t) i * lda;
        __m512d s[8];
        for (int j = 0; j < 8; j++) s[j] = _mm512_setzero_pd();
        for (int l = 0; l < k; l += 8) {
            const __mmask8 mk = lanes8(k - l);
            const __m512d x = xfload512(ai + l, mk);
#pragma GCC unroll 8
            for (int j = 0; j < 8; j++)
                if (j < n)
                    s[j] = _mm512_fmadd_pd(x, _mm512_maskz_loadu_pd(mk, b + (ptrdiff_t) j * ldb + l),
                                           s[j]);
        }
#pragma GCC unroll 8
        for (int j = 0; j < 8; j++)
            if (j < n) {
                _mm512_store_pd(lane, s[j]);
                c[i + (ptrdiff_t) j * ldc] = dot_lanes_sum(lane);
            }
    }
}

__attribute__((target("avx2,fma"), noinline))
static void dot_tn256xf(const float *a, ptrdiff_t lda, const double *b, ptrdiff_t ldb, int m,
                        int n, int k, double *c, ptrdiff_t ldc)
{
    double lane[8] __attribute__((aligned(32)));
    for (int i = 0; i < m; i++) {
        const float *ai = a + (ptrdiff_t) i * lda;
        for (int j = 0; j < n; j++) {
            const double *bj = b + (ptrdiff_t) j * ldb;
            __m256d s0 = _mm256_setzero_pd(), s1 = s0;
            for (int l = 0; l < k; l += 8) {
                const __m256i mk0 = lanes4(k - l), mk1 = lanes4(k - l - 4);
                const __m256d x0 = xfload256(ai + l, k - l), x1 = xfload256(ai + l + 4, k - l - 4);
                s0 = _mm256_fmadd_pd(x0, _mm256_maskload_pd(bj + l, mk0), s0);
                s1 = _mm256_fmadd_pd(x1, _mm256_maskload_pd(bj + l + 4, mk1), s1);
            }
            _mm256_store_pd(lane, s0);
            _mm256_store_pd(lane + 4, s1);
            c[i + (ptrdiff_t) j * ldc] = dot_lanes_sum(lane);
        }
    }
}
#endif /* BOCHNER_X86 */

/* c (m x n) = [c +] a %*% b, a float, n <= GEMM_DIRECT_COLS (callable from the threads) */
void bochner_gemm_xf(const float *a, ptrdiff_t lda, const double *b, ptrdiff_t ldb, int m,
                     int n, int k, double *c, ptrdiff_t ldc, int accumulate)
{
    if (m <= 0 || n <= 0) return;
    if (k <= 0) {
        if (!accumulate)
            for (int j = 0; j < n; j++) memset(c + (ptrdiff_t) j * ldc, 0, sizeof(double) * (size_t) m);
        return;
    }
#if BOCHNER_X86
    const int isa = bochner_cpu_isa();
    if (isa == 2) { tile512xf(a, lda, b, ldb, k, m, n, c, ldc, accumulate); return; }
    if (isa == 1) { tile256xf(a, lda, b, ldb, k, m, n, c, ldc, accumulate); return; }
#endif
    tile_portable_xf(a, lda, b, ldb, k, m, n, c, ldc, accumulate);
}

/* c (m x n) = t(a) %*% b, a float (k x m), n <= 8: bochner_dot_tn's chains */
void bochner_dot_tn_xf(const float *a, ptrdiff_t lda, const double *b, ptrdiff_t ldb, int m,
                       int n, int k, double *c, ptrdiff_t ldc)
{
    if (m <= 0 || n <= 0) return;
#if BOCHNER_X86
    const int isa = bochner_cpu_isa();
    if (isa == 2) { dot_tn512xf(a, lda, b, ldb, m, n, k, c, ldc); return; }
    if (isa == 1) { dot_tn256xf(a, lda, b, ldb, m, n, k, c, ldc); return; }
#endif
    dot_tn_portable_xf(a, lda, b, ldb, m, n, k, c, ldc);
}
