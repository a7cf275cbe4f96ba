/*
 * gemm.c -- tile product for the random Fourier feature hot path.
 *
 *   c (nr x nj, ldc = nr) = x (nr x d, leading dim ldx) %*% w (d x nj, leading dim d)
 *
 * Three code paths, chosen at run time:
 *   0  BLAS dgemm (portable; the only path on non-x86-64 platforms)
 *   1  AVX2+FMA micro-kernel, 12 rows (3 ymm) x 4 columns
 *   2  AVX-512F micro-kernel, 24 rows (3 zmm) x 8 columns
 * The SIMD kernels are compiled through gcc/clang function attributes, so no
 * -mavx/-march flags are needed; they are only called when the CPU (and OS)
 * supports the instructions (__builtin_cpu_supports).
 *
 * The environment variable BOCHNER_MAX_ISA (read once, when the package is
 * loaded) caps the paths the dispatcher will use, here and in fastmath.c:
 *   BOCHNER_MAX_ISA=0  portable code only (BLAS here, SSE2 cosines there)
 *   BOCHNER_MAX_ISA=1  at most AVX2 (+FMA)
 *   unset or 2         whatever the CPU supports
 * For tools that emulate the CPU without every instruction set, e.g.
 * valgrind (3.19 hides AVX-512 from CPUID, but older releases did not), and
 * to exercise the portable path on a machine that has the others.
 *
 * Determinism (paths 1 and 2): every C(i,j) is computed as the single FMA chain
 *     acc = 0;  for l = 0 .. d-1:  acc = fma(x[i,l], w[l,j], acc)
 * in exactly that order, whatever nr, nj, ldx, the position of row i inside the tile
 * or of column j inside the tile (row/column tails use the same kernels with masked
 * stores and zero-padded packed rows; K-blocking stores/reloads the exact double
 * accumulator, which does not change the chain).  Hence results are bit-identical
 * across tilings, and also bit-identical between the AVX2 and the AVX-512 paths.
 * Path 0 (reference BLAS) computes a different (mul + add) chain, also independent
 * of the tiling for the reference BLAS, but that depends on the BLAS R is linked to.
 */

#define USE_FC_LEN_T
#include <stddef.h>
#include <string.h>
#include <stdlib.h>
#include <R.h>
#include <Rinternals.h>
#include <R_ext/BLAS.h>
#ifndef FCONE
# define FCONE
#endif

#include "bochner.h"

/* x86 SIMD paths: gcc/clang on x86-64 only (i386 is deliberately left to BLAS: only
 * 8 vector registers there, the register-blocked kernels would spill). */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(_WIN32)
# define BOCHNER_X86 1
# include <immintrin.h>
#else
# define BOCHNER_X86 0
#endif

/* K-blocking: the packed X micro-panel is MR x KC doubles on the stack (24*256*8 = 48 KB). */
#ifndef BOCHNER_KC
# define BOCHNER_KC 256
#endif

/* ------------------------------------------------------------------------- */
/* Portable path: BLAS                                                        */
/* ------------------------------------------------------------------------- */

static void tile_blas(const double *x, int ldx, const double *w, int d,
                      int nr, int nj, double *c)
{
    const double one = 1.0, zero = 0.0;
    F77_CALL(dgemm)("N", "N", &nr, &nj, &d, &one, x, &ldx, w, &d, &zero, c, &nr
                    FCONE FCONE);
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
B512_INLINE void kern512(const int MV, const int NR,
                         const double *xp, const double *w, ptrdiff_t ldw, int kc,
                         double *c, ptrdiff_t ldc,
                         __mmask8 m0, __mmask8 m1, __mmask8 m2, int acc)
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
    const ptrdiff_t xs = 8 * MV;
    for (int l = 0; l < kc; l++) {
        const double *xl = xp + l * xs;
        const __m512d x0 = _mm512_loadu_pd(xl);
        const __m512d x1 = (MV > 1) ? _mm512_loadu_pd(xl + 8) : x0;
        const __m512d x2 = (MV > 2) ? _mm512_loadu_pd(xl + 16) : x0;
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

/* one row block (8*MV rows, packed) times all nj columns */
B512_INLINE void rows512(const int MV, const double *xp, const double *w, ptrdiff_t ldw,
                         int kc, int nj, double *c, ptrdiff_t ldc,
                         __mmask8 m0, __mmask8 m1, __mmask8 m2, int acc)
{
    int j0 = 0;
    for (; j0 + 8 <= nj; j0 += 8)
        kern512(MV, 8, xp, w + j0 * ldw, ldw, kc, c + j0 * ldc, ldc, m0, m1, m2, acc);
    const double *wj = w + j0 * ldw;
    double *cj = c + j0 * ldc;
    switch (nj - j0) {
    case 7: kern512(MV, 7, xp, wj, ldw, kc, cj, ldc, m0, m1, m2, acc); break;
    case 6: kern512(MV, 6, xp, wj, ldw, kc, cj, ldc, m0, m1, m2, acc); break;
    case 5: kern512(MV, 5, xp, wj, ldw, kc, cj, ldc, m0, m1, m2, acc); break;
    case 4: kern512(MV, 4, xp, wj, ldw, kc, cj, ldc, m0, m1, m2, acc); break;
    case 3: kern512(MV, 3, xp, wj, ldw, kc, cj, ldc, m0, m1, m2, acc); break;
    case 2: kern512(MV, 2, xp, wj, ldw, kc, cj, ldc, m0, m1, m2, acc); break;
    case 1: kern512(MV, 1, xp, wj, ldw, kc, cj, ldc, m0, m1, m2, acc); break;
    default: break;
    }
}

__attribute__((target("avx512f"), noinline))
static void tile512(const double *x, ptrdiff_t ldx, const double *w, ptrdiff_t d,
                    int nr, int nj, double *c)
{
    double xp[24 * BOCHNER_KC] __attribute__((aligned(64)));
    const ptrdiff_t ldc = nr;
    for (ptrdiff_t pc = 0; pc < d; pc += BOCHNER_KC) {
        const int kc = (int) (d - pc < BOCHNER_KC ? d - pc : BOCHNER_KC);
        const int acc = pc > 0;
        for (int i0 = 0; i0 < nr; i0 += 24) {
            const int mr = nr - i0 < 24 ? nr - i0 : 24;
            const int mv = (mr + 7) / 8;
            const __mmask8 m0 = lanes8(mr), m1 = lanes8(mr - 8), m2 = lanes8(mr - 16);
            /* pack X[i0:i0+mr, pc:pc+kc] into 8*mv-row panel, zero padded */
            const double *src = x + pc * ldx + i0;
            double *dst = xp;
            for (int l = 0; l < kc; l++, src += ldx, dst += 8 * mv) {
                _mm512_storeu_pd(dst, _mm512_maskz_loadu_pd(m0, src));
                if (mv > 1) _mm512_storeu_pd(dst + 8, _mm512_maskz_loadu_pd(m1, src + 8));
                if (mv > 2) _mm512_storeu_pd(dst + 16, _mm512_maskz_loadu_pd(m2, src + 16));
            }
            const double *wp = w + pc;
            double *ci = c + i0;
            if (mv == 3)      rows512(3, xp, wp, d, kc, nj, ci, ldc, m0, m1, m2, acc);
            else if (mv == 2) rows512(2, xp, wp, d, kc, nj, ci, ldc, m0, m1, m2, acc);
            else              rows512(1, xp, wp, d, kc, nj, ci, ldc, m0, m1, m2, acc);
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

B256_INLINE void kern256(const int MV, const int NR,
                         const double *xp, const double *w, ptrdiff_t ldw, int kc,
                         double *c, ptrdiff_t ldc,
                         __m256i m0, __m256i m1, __m256i m2, int acc)
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
    const ptrdiff_t xs = 4 * MV;
    for (int l = 0; l < kc; l++) {
        const double *xl = xp + l * xs;
        const __m256d x0 = _mm256_loadu_pd(xl);
        const __m256d x1 = (MV > 1) ? _mm256_loadu_pd(xl + 4) : x0;
        const __m256d x2 = (MV > 2) ? _mm256_loadu_pd(xl + 8) : x0;
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

B256_INLINE void rows256(const int MV, const double *xp, const double *w, ptrdiff_t ldw,
                         int kc, int nj, double *c, ptrdiff_t ldc,
                         __m256i m0, __m256i m1, __m256i m2, int acc)
{
    int j0 = 0;
    for (; j0 + 4 <= nj; j0 += 4)
        kern256(MV, 4, xp, w + j0 * ldw, ldw, kc, c + j0 * ldc, ldc, m0, m1, m2, acc);
    const double *wj = w + j0 * ldw;
    double *cj = c + j0 * ldc;
    switch (nj - j0) {
    case 3: kern256(MV, 3, xp, wj, ldw, kc, cj, ldc, m0, m1, m2, acc); break;
    case 2: kern256(MV, 2, xp, wj, ldw, kc, cj, ldc, m0, m1, m2, acc); break;
    case 1: kern256(MV, 1, xp, wj, ldw, kc, cj, ldc, m0, m1, m2, acc); break;
    default: break;
    }
}

__attribute__((target("avx2,fma"), noinline))
static void tile256(const double *x, ptrdiff_t ldx, const double *w, ptrdiff_t d,
                    int nr, int nj, double *c)
{
    double xp[12 * BOCHNER_KC] __attribute__((aligned(32)));
    const ptrdiff_t ldc = nr;
    for (ptrdiff_t pc = 0; pc < d; pc += BOCHNER_KC) {
        const int kc = (int) (d - pc < BOCHNER_KC ? d - pc : BOCHNER_KC);
        const int acc = pc > 0;
        for (int i0 = 0; i0 < nr; i0 += 12) {
            const int mr = nr - i0 < 12 ? nr - i0 : 12;
            const int mv = (mr + 3) / 4;
            const __m256i m0 = lanes4(mr), m1 = lanes4(mr - 4), m2 = lanes4(mr - 8);
            const double *src = x + pc * ldx + i0;
            double *dst = xp;
            if (mr == 12) {
                for (int l = 0; l < kc; l++, src += ldx, dst += 12) {
                    _mm256_storeu_pd(dst, _mm256_loadu_pd(src));
                    _mm256_storeu_pd(dst + 4, _mm256_loadu_pd(src + 4));
                    _mm256_storeu_pd(dst + 8, _mm256_loadu_pd(src + 8));
                }
            } else {
                for (int l = 0; l < kc; l++, src += ldx, dst += 4 * mv) {
                    _mm256_storeu_pd(dst, _mm256_maskload_pd(src, m0));
                    if (mv > 1) _mm256_storeu_pd(dst + 4, _mm256_maskload_pd(src + 4, m1));
                    if (mv > 2) _mm256_storeu_pd(dst + 8, _mm256_maskload_pd(src + 8, m2));
                }
            }
            const double *wp = w + pc;
            double *ci = c + i0;
            if (mv == 3)      rows256(3, xp, wp, d, kc, nj, ci, ldc, m0, m1, m2, acc);
            else if (mv == 2) rows256(2, xp, wp, d, kc, nj, ci, ldc, m0, m1, m2, acc);
            else              rows256(1, xp, wp, d, kc, nj, ci, ldc, m0, m1, m2, acc);
        }
    }
}

/* ------------------------------------------------------------------------- */
/* Dispatch (x86-64)                                                          */
/* ------------------------------------------------------------------------- */

/* Only mutable state: the detected hardware level and the selected path.
 * Accessed atomically (relaxed); detection is idempotent. */
static int hw_isa = -1;
static int cur_isa = -1;

static int detect_hw(void)
{
    int hw = __atomic_load_n(&hw_isa, __ATOMIC_RELAXED);
    if (hw >= 0) return hw;
    hw = 0;
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        hw = 1;
        if (__builtin_cpu_supports("avx512f")) hw = 2;
    }
    int cap = bochner_isa_cap();
    if (hw > cap) hw = cap;
    __atomic_store_n(&hw_isa, hw, __ATOMIC_RELAXED);
    return hw;
}

static int current_isa(void)
{
    int isa = __atomic_load_n(&cur_isa, __ATOMIC_RELAXED);
    if (isa >= 0) return isa;
    int expected = -1, hw = detect_hw();
    if (__atomic_compare_exchange_n(&cur_isa, &expected, hw, 0,
                                    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        return hw;
    return expected;
}

void bochner_product_init(void)
{
    (void) current_isa();
}

int bochner_product_isa(void)
{
    return current_isa();
}

void bochner_set_product_isa(int isa)
{
    int hw = detect_hw();
    if (isa < 0 || isa > hw) isa = hw;
    __atomic_store_n(&cur_isa, isa, __ATOMIC_RELAXED);
}

#endif

/* BOCHNER_MAX_ISA as 0, 1 or 2 (2, no cap, when unset or not one of those). */
int bochner_isa_cap(void)
{
    static int cap = -1;
    int c = __atomic_load_n(&cap, __ATOMIC_RELAXED);
    if (c >= 0) return c;
    const char *v = getenv("BOCHNER_MAX_ISA");
    c = 2;
    if (v && (v[0] == '0' || v[0] == '1') && v[1] == '\0') c = v[0] - '0';
    __atomic_store_n(&cap, c, __ATOMIC_RELAXED);
    return c;
}

#if !BOCHNER_X86

void bochner_product_init(void) { }
int bochner_product_isa(void) { return 0; }
void bochner_set_product_isa(int isa) { (void) isa; }

#endif

/* ------------------------------------------------------------------------- */
/* Public entry                                                               */
/* ------------------------------------------------------------------------- */

void bochner_tile_product(const double *x, int ldx, const double *w, int d,
                          int nr, int nj, double *c)
{
    if (nr <= 0 || nj <= 0 || ldx < nr) return;
    if (d <= 0) {
        memset(c, 0, (size_t) nr * (size_t) nj * sizeof(double));
        return;
    }
#if BOCHNER_X86
    switch (current_isa()) {
    case 2: tile512(x, ldx, w, d, nr, nj, c); return;
    case 1: tile256(x, ldx, w, d, nr, nj, c); return;
    default: break;
    }
#endif
    tile_blas(x, ldx, w, d, nr, nj, c);
}

/* ------------------------------------------------------------------------- */
/* R entry point for tests: .Call(C_tile_product, x, w, isa)                 */
/* ------------------------------------------------------------------------- */

/* Returns x %*% w (computed in 256 x 256 tiles) using code path 'isa' (-1 = automatic;
 * clamped to what the CPU supports; the previous choice is restored before returning).
 * Query: isa = -2L returns the best path supported here (integer 0/1/2); x, w are ignored. */
SEXP bochner_tile_product_call(SEXP x, SEXP w, SEXP isa)
{
    if (TYPEOF(isa) != INTSXP || XLENGTH(isa) != 1 || INTEGER(isa)[0] == NA_INTEGER)
        error("'isa' must be a single non-NA integer");
    if (INTEGER(isa)[0] == -2) {
        const int prev = bochner_product_isa();
        bochner_set_product_isa(-1);
        const int best = bochner_product_isa();
        bochner_set_product_isa(prev);
        return ScalarInteger(best);
    }
    if (TYPEOF(x) != REALSXP || !isMatrix(x))
        error("'x' must be a double matrix");
    if (TYPEOF(w) != REALSXP || !isMatrix(w))
        error("'w' must be a double matrix");
    const int n = nrows(x), d = ncols(x), m = ncols(w);
    if (nrows(w) != d)
        error("non-conformable arguments: ncol(x) = %d, nrow(w) = %d", d, nrows(w));
    SEXP ans = PROTECT(allocMatrix(REALSXP, n, m));
    double *a = REAL(ans);
    if (n == 0 || m == 0) { UNPROTECT(1); return ans; }
    if (d == 0) {
        memset(a, 0, (size_t) n * (size_t) m * sizeof(double));
        UNPROTECT(1);
        return ans;
    }
    enum { TILE = 256 };
    double *buf = (double *) R_alloc(TILE * TILE, sizeof(double));
    const double *xx = REAL(x), *ww = REAL(w);
    /* no R API calls (hence no longjmp) between here and the restore below */
    const int prev = bochner_product_isa();
    bochner_set_product_isa(INTEGER(isa)[0]);
    for (int j0 = 0; j0 < m; j0 += TILE) {
        const int nj = m - j0 < TILE ? m - j0 : TILE;
        for (int r0 = 0; r0 < n; r0 += TILE) {
            const int nr = n - r0 < TILE ? n - r0 : TILE;
            bochner_tile_product(xx + r0, n, ww + (ptrdiff_t) j0 * d, d, nr, nj, buf);
            for (int jj = 0; jj < nj; jj++)
                memcpy(a + (ptrdiff_t) (j0 + jj) * n + r0, buf + (ptrdiff_t) jj * nr,
                       (size_t) nr * sizeof(double));
        }
    }
    bochner_set_product_isa(prev);
    UNPROTECT(1);
    return ans;
}
