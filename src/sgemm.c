/*
 * sgemm.c -- the single-precision product: float operands, double results.
 *
 *   c (m x n, double) = [c +] a (m x k, float) %*% b (k x n, float)       (serial)
 *   c (m x n, double) = [c +] t(a) %*% b, a (k x m, float)                 (transa)
 *
 * Why: falkon's cached K_nm and its kernel blocks, and the feature blocks of the
 * feature solvers, are streamed from memory or made by the product kernel; in float
 * every byte carries twice the entries and an AVX-512 or AVX2 core does twice the
 * multiply-adds per instruction (issue 38).  The statistics built on these products
 * (CG's vectors, Z'Z, the preconditioner) need more than float's 24 bits, so the
 * products are float only inside a K-block and are summed in double across blocks.
 *
 * Why a file of its own beside gemm.c: the double kernels are unchanged (and so every
 * double result of the package), and the two sets of kernels, each inlined into many
 * shapes, keep their objects' debug information apart (the installed size, gemm.c).
 *
 * Code paths, as for the double product (chosen at load, cpu.c; the test hook passes one):
 *   0  portable C: s = s + a * b in float, vectorised over rows
 *   1  AVX2+FMA micro-kernel, 24 rows (3 ymm of 8 floats) x 4 columns
 *   2  AVX-512F micro-kernel, 48 rows (3 zmm of 16 floats) x 8 columns
 *
 * The chain of every entry, whatever m, n, the entry's position in the call, the
 * leading dimensions, the tiling or the thread running it:
 *     for each K-block q of SGEMM_KC = 256 consecutive inner indices (from the call's
 *     first inner index): s_q = 0 (float); for l in the block, in order:
 *         s_q = fmaf(a[i,l], b[l,j], s_q)      (paths 1, 2)
 *         s_q = s_q + a[i,l] * b[l,j]          (path 0, each operation rounded to float)
 *     c(i,j) = (accumulate or q > 0 ? c(i,j) + (double) s_q : (double) s_q)    (double)
 * SGEMM_KC is a constant, not the CPU's cache blocking (cpu.c), so paths 1 and 2 agree
 * bit for bit on any CPU; path 0 rounds differently.  A product accumulated over calls
 * (accumulate = 1, the inner dimension cut into pieces) equals the one-call product
 * when each piece but the last is a multiple of SGEMM_KC long.
 *
 * The error bound relied on (operands already float; u = 2^-24, float's unit roundoff):
 * a K-block of length L <= 256 in float has |s_q - exact_q| <= gamma_L sum_l |a_il b_lj|
 * with gamma_L = L u / (1 - L u) <= 1.53e-5 (Higham, Accuracy and Stability, 3.1; FMA
 * or not), and the sums across blocks in double add at most (k/256) 2^-53 relative.
 * So for any k
 *     |c(i,j) - sum_l a_il b_lj| <= 1.6e-5 sum_l |a_il| |b_lj|,
 * independent of k: the blocks' float errors do not compound.  For the operands of
 * float storage (K_nm's entries in (0, 1], features of size sqrt(2/D)) this is a
 * relative error of about 1e-6 on average (the rounding errors are random: sqrt(L) u
 * instead of L u) and 1.6e-5 at worst; rounding the operands themselves to float
 * adds 2u = 1.2e-7 relative per product.  tests/testthat/test-sgemm.R checks the
 * bound against a plain-R product of the float-rounded operands.
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

#define SGEMM_KC 256            /* inner indices per float K-block: fixed, see above */

/* ------------------------------------------------------------------------- */
/* Portable path                                                              */
/* ------------------------------------------------------------------------- */

#define SROWS 64                /* rows of float partial sums per sweep (on the stack) */

/* c (+)= x %*% w, x (nr x d, ldx) */
static void stile_portable(const float *x, ptrdiff_t ldx, const float *w, ptrdiff_t ldw,
                           ptrdiff_t d, int nr, int nj, double *c, ptrdiff_t ldc, int acc0)
{
    float s[SROWS];
    for (int j = 0; j < nj; j++) {
        double *cj = c + (ptrdiff_t) j * ldc;
        const float *wj = w + (ptrdiff_t) j * ldw;
        for (int i0 = 0; i0 < nr; i0 += SROWS) {
            const int r = nr - i0 < SROWS ? nr - i0 : SROWS;
            for (ptrdiff_t pc = 0; pc < d; pc += SGEMM_KC) {
                const ptrdiff_t pe = d - pc < SGEMM_KC ? d : pc + SGEMM_KC;
                for (int i = 0; i < r; i++) s[i] = 0.0f;
                for (ptrdiff_t l = pc; l < pe; l++) {
                    const float b = wj[l];
                    const float *restrict xl = x + l * ldx + i0;
                    for (int i = 0; i < r; i++) s[i] = s[i] + xl[i] * b;
                }
                const int acc = acc0 || pc > 0;
                for (int i = 0; i < r; i++)
                    cj[i0 + i] = acc ? cj[i0 + i] + (double) s[i] : (double) s[i];
            }
        }
    }
}

/* c (+)= t(x) %*% w, x (d x nr, ldx) */
static void stile_portable_tn(const float *x, ptrdiff_t ldx, const float *w, ptrdiff_t ldw,
                              ptrdiff_t d, int nr, int nj, double *c, ptrdiff_t ldc, int acc0)
{
    for (int j = 0; j < nj; j++) {
        double *cj = c + (ptrdiff_t) j * ldc;
        const float *wj = w + (ptrdiff_t) j * ldw;
        for (int i = 0; i < nr; i++) {
            const float *xi = x + (ptrdiff_t) i * ldx;
            double a = acc0 ? cj[i] : 0.0;
            for (ptrdiff_t pc = 0; pc < d; pc += SGEMM_KC) {
                const ptrdiff_t pe = d - pc < SGEMM_KC ? d : pc + SGEMM_KC;
                float s = 0.0f;
                for (ptrdiff_t l = pc; l < pe; l++) s = s + xi[l] * wj[l];
                a = (acc0 || pc > 0) ? a + (double) s : (double) s;
            }
            cj[i] = a;
        }
    }
}

#if defined(__GNUC__) && defined(__x86_64__) && !defined(_WIN32)
# define SGEMM_X86 1
# include <immintrin.h>
#else
# define SGEMM_X86 0
#endif

/* products with at most this many columns read x's rows in place (as gemm.c) */
#define SGEMM_DIRECT_COLS 16

#if SGEMM_X86

static inline void sprefetch_rows(const float *p, int r)
{
    for (int i = 0; i < r; i += 16) __builtin_prefetch(p + i, 0, 2);
    __builtin_prefetch(p + r - 1, 0, 2);
}

/* the same for a panel stored by columns, lines [l r / 16, (l + 1) r / 16) at step l
 * (gemm.c's bochner_prefetch_cols) */
static inline void sprefetch_cols(const float *p, ptrdiff_t ld, int r, int l)
{
    for (int line = l * r / 16; line < (l + 1) * r / 16; line++)
        __builtin_prefetch(p + (line % r) * ld + (line / r) * 16, 0, 2);
}

/* A micro-panel of rows i0 .. i0+mr of X = t(a), a (kc x m, lda) by columns: row i of the
 * panel is column i of a; rows mr .. MRP-1 are zero.  4 x 4 blocks transposed in SSE
 * registers (a pure copy: no rounding). */
__attribute__((noinline))
static void spack_at(const int MRP, const float *a, ptrdiff_t lda, int kc, int mr, float *out)
{
    const int mr4 = mr & ~3, kc4 = kc & ~3;
    for (int i = 0; i < mr4; i += 4) {
        const float *a0 = a + (ptrdiff_t) i * lda, *a1 = a0 + lda, *a2 = a1 + lda,
                    *a3 = a2 + lda;
        float *o = out + i;
        int l = 0;
        for (; l < kc4; l += 4) {
            __m128 r0 = _mm_loadu_ps(a0 + l), r1 = _mm_loadu_ps(a1 + l),
                   r2 = _mm_loadu_ps(a2 + l), r3 = _mm_loadu_ps(a3 + l);
            _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
            _mm_storeu_ps(o + (ptrdiff_t) l * MRP, r0);
            _mm_storeu_ps(o + (ptrdiff_t) (l + 1) * MRP, r1);
            _mm_storeu_ps(o + (ptrdiff_t) (l + 2) * MRP, r2);
            _mm_storeu_ps(o + (ptrdiff_t) (l + 3) * MRP, r3);
        }
        for (; l < kc; l++) {
            float *ol = o + (ptrdiff_t) l * MRP;
            ol[0] = a0[l]; ol[1] = a1[l]; ol[2] = a2[l]; ol[3] = a3[l];
        }
    }
    for (int i = mr4; i < mr; i++) {
        const float *ai = a + (ptrdiff_t) i * lda;
        for (int l = 0; l < kc; l++) out[(ptrdiff_t) l * MRP + i] = ai[l];
    }
    for (int i = mr; i < MRP; i++)
        for (int l = 0; l < kc; l++) out[(ptrdiff_t) l * MRP + i] = 0.0f;
}

/* ------------------------------------------------------------------------- */
/* AVX-512F path: 48 x 8 micro-kernel                                         */
/* ------------------------------------------------------------------------- */

#define S512_INLINE static inline __attribute__((always_inline, target("avx512f")))

S512_INLINE __mmask16 slanes16(int r)
{
    return (__mmask16) (r >= 16 ? 0xFFFF : (r <= 0 ? 0 : (1u << r) - 1u));
}

/* The float partial sums t (48 rows x nr, a column every 48) into c's rows (masked):
 * c = [c +] (double) t.  Not inlined into the kernels: once per K-block, and each
 * inlined copy was debug information enough to double the library's size. */
__attribute__((target("avx512f"), noinline))
static void sflush512(const float *t, int nr, double *c, ptrdiff_t ldc, __mmask16 m0,
                      __mmask16 m1, __mmask16 m2, int acc)
{
    const __mmask16 mq[3] = {m0, m1, m2};
    for (int j = 0; j < nr; j++)
        for (int q = 0; q < 3; q++) {
            const __mmask16 m = mq[q];
            if (!m) break;
            double *cj = c + j * ldc + 16 * q;
            const __m512 s = _mm512_load_ps(t + 48 * j + 16 * q);
            const __mmask8 mlo = (__mmask8) (m & 0xFF), mhi = (__mmask8) (m >> 8);
            __m512d lo = _mm512_cvtps_pd(_mm512_castps512_ps256(s));
            __m512d hi = _mm512_cvtps_pd(_mm256_castpd_ps(
                _mm512_extractf64x4_pd(_mm512_castps_pd(s), 1)));
            if (acc) {
                lo = _mm512_add_pd(_mm512_maskz_loadu_pd(mlo, cj), lo);
                hi = _mm512_add_pd(_mm512_maskz_loadu_pd(mhi, cj + 8), hi);
            }
            _mm512_mask_storeu_pd(cj, mlo, lo);
            if (mhi) _mm512_mask_storeu_pd(cj + 8, mhi, hi);
        }
}

/* c[0:16*MV, 0:NR] (masked rows) (+)= xp (16*MV rows x kc: packed, or in place with DIRECT,
 * stride xs) * w[0:kc, 0:NR] (ldw) */
S512_INLINE void skern512(const int DIRECT, const int MV, const int NR, const float *xp,
                          ptrdiff_t xs, const float *w, ptrdiff_t ldw, int kc, double *c,
                          ptrdiff_t ldc, __mmask16 m0, __mmask16 m1, __mmask16 m2, int acc,
                          const float *pf, ptrdiff_t pfs,
                          int plo, int phi, int nc)
{
#define Z3(j) __m512 a0##j = _mm512_setzero_ps(), a1##j = a0##j, a2##j = a0##j;
    Z3(0) Z3(1) Z3(2) Z3(3) Z3(4) Z3(5) Z3(6) Z3(7)
#undef Z3
    for (int l = 0; l < kc; l++) {
        const float *xl = xp + l * xs;
        if (pf && l >= plo && l < phi) {
            /* pfs < 0: the next panel is stored by columns, -pfs apart */
            if (pfs > 0) sprefetch_rows(pf + l * pfs, 48);
            else sprefetch_cols(pf, -pfs, 48, l);
        }
        const __m512 x0 = DIRECT ? _mm512_maskz_loadu_ps(m0, xl) : _mm512_load_ps(xl);
        const __m512 x1 = (MV > 1) ? (DIRECT ? _mm512_maskz_loadu_ps(m1, xl + 16)
                                             : _mm512_load_ps(xl + 16)) : x0;
        const __m512 x2 = (MV > 2) ? (DIRECT ? _mm512_maskz_loadu_ps(m2, xl + 32)
                                             : _mm512_load_ps(xl + 32)) : x0;
        const float *wl = w + l;
#define F3(j) if (NR > j) { const __m512 b = _mm512_set1_ps(wl[(j) * ldw]);      \
            a0##j = _mm512_fmadd_ps(x0, b, a0##j);                              \
            if (MV > 1) a1##j = _mm512_fmadd_ps(x1, b, a1##j);                  \
            if (MV > 2) a2##j = _mm512_fmadd_ps(x2, b, a2##j); }
        F3(0) F3(1) F3(2) F3(3) F3(4) F3(5) F3(6) F3(7)
#undef F3
    }
    float t[48 * 8] __attribute__((aligned(64)));
#define ST3(j) if (NR > j) { _mm512_store_ps(t + 48 * (j), a0##j);                  \
        if (MV > 1) _mm512_store_ps(t + 48 * (j) + 16, a1##j);                  \
        if (MV > 2) _mm512_store_ps(t + 48 * (j) + 32, a2##j); }
    ST3(0) ST3(1) ST3(2) ST3(3) ST3(4) ST3(5) ST3(6) ST3(7)
#undef ST3
    sflush512(t, nc, c, ldc, m0, MV > 1 ? m1 : 0, MV > 2 ? m2 : 0, acc);
}

/* the columns of w from j0 on, padded with zero columns to the kernel's NR (1, 2, 4 or 8):
 * kernels for 1, 2, 4 and 8 columns only (every column count had its own, and the
 * library's size with them); the padded columns are computed and not stored */
static inline int snr_pad(int r, int most)
{
    return r <= 1 ? 1 : r == 2 ? 2 : r <= 4 ? 4 : most;
}

/* wt: the last r = nj % NRMAX columns of this K-block of w, padded to snr_pad(r) columns
 * (leading dimension kc), made once per K-block by stile */
static void spad_cols(const float *w, ptrdiff_t ldw, int kc, int r, int nrp, float *wt)
{
    for (int j = 0; j < nrp; j++)
        for (int l = 0; l < kc; l++) wt[l + (ptrdiff_t) j * kc] = j < r ? w[l + j * ldw] : 0.0f;
}

S512_INLINE void srows512(const int DIRECT, const int MV, const float *xp, ptrdiff_t xs,
                          const float *w, ptrdiff_t ldw, const float *wt, int kc, int nj,
                          double *c, ptrdiff_t ldc, __mmask16 m0, __mmask16 m1, __mmask16 m2,
                          int acc, const float *pf, ptrdiff_t pfs)
{
    /* column block g asks for its share of the next panel's lines (gemm.c) */
    const int ng = (nj + 7) / 8;
    int j0 = 0, g = 0;
    for (; j0 + 8 <= nj; j0 += 8, g++)
        skern512(DIRECT, MV, 8, xp, xs, w + j0 * ldw, ldw, kc, c + j0 * ldc, ldc, m0, m1, m2,
                 acc, pf, pfs, g * kc / ng, (g + 1) * kc / ng, 8);
    const int r = nj - j0;
    if (r == 0) return;
    const int nrp = snr_pad(r, 8);
    const float *wj = r == nrp ? w + j0 * ldw : wt;
    const ptrdiff_t ldj = r == nrp ? ldw : kc;
    double *cj = c + j0 * ldc;
#define K512(NR) skern512(DIRECT, MV, NR, xp, xs, wj, ldj, kc, cj, ldc, m0, m1, m2, acc, \
                          pf, pfs, g * kc / ng, kc, r)
    switch (nrp) {
    case 8: K512(8); break;
    case 4: K512(4); break;
    case 2: K512(2); break;
    default: K512(1); break;
    }
#undef K512
}

__attribute__((target("avx512f"), noinline))
static void stile512(const float *x, ptrdiff_t ldx, const float *w, ptrdiff_t ldw,
                     ptrdiff_t d, int nr, int nj, double *c, ptrdiff_t ldc, int acc0,
                     int transa)
{
    float xp[48 * SGEMM_KC] __attribute__((aligned(64)));
    float wt[8 * SGEMM_KC];
    const int rt = nj % 8, nrt = snr_pad(rt, 8);
    for (ptrdiff_t pc = 0; pc < d; pc += SGEMM_KC) {
        const int kc = (int) (d - pc < SGEMM_KC ? d - pc : SGEMM_KC);
        const int acc = acc0 || pc > 0;
        if (rt && rt != nrt) spad_cols(w + pc + (ptrdiff_t) (nj - rt) * ldw, ldw, kc, rt, nrt, wt);
        for (int i0 = 0; i0 < nr; i0 += 48) {
            const int mr = nr - i0 < 48 ? nr - i0 : 48;
            const __mmask16 m0 = slanes16(mr), m1 = slanes16(mr - 16), m2 = slanes16(mr - 32);
            const float *src = x + pc * ldx + i0;
            const float *wp = w + pc;
            double *ci = c + i0;
            if (!transa && nj <= SGEMM_DIRECT_COLS) {
                /* few columns: the rows read in place (masked: the zeros a packed panel
                 * holds), the next panel's lines prefetched, as gemm.c */
                const float *pf = i0 + 96 <= nr ? src + 48 : NULL;
                srows512(1, 3, src, ldx, wp, ldw, wt, kc, nj, ci, ldc, m0, m1, m2, acc, pf, ldx);
                continue;
            }
            /* the panel is always 48 rows, zero padded: one kernel per column count
             * (kernels for fewer rows tripled the object's size, for at most one short
             * panel a tile) */
            float *dst = xp;
            if (transa) spack_at(48, x + pc + (ptrdiff_t) i0 * ldx, ldx, kc, mr, xp);
            else for (int l = 0; l < kc; l++, src += ldx, dst += 48) {
                _mm512_store_ps(dst, _mm512_maskz_loadu_ps(m0, src));
                _mm512_store_ps(dst + 16, _mm512_maskz_loadu_ps(m1, src + 16));
                _mm512_store_ps(dst + 32, _mm512_maskz_loadu_ps(m2, src + 32));
            }
            /* the next panel's lines (or the next K-block's first) asked for while this
             * one is multiplied */
            const ptrdiff_t next = bochner_next_panel(ldx, d, nr, i0, pc, SGEMM_KC, 48, transa);
            const float *pf = next < 0 ? NULL : x + next;
            srows512(0, 3, xp, 48, wp, ldw, wt, kc, nj, ci, ldc, m0, m1, m2, acc, pf,
                     transa ? -ldx : ldx);
        }
    }
}

/* ------------------------------------------------------------------------- */
/* AVX2+FMA path: 24 x 4 micro-kernel                                         */
/* ------------------------------------------------------------------------- */

#define S256_INLINE static inline __attribute__((always_inline, target("avx2,fma")))

S256_INLINE __m256i slanes8(int r)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(r), _mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0));
}

S256_INLINE __m256i dlanes4(int r)
{
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x(r), _mm256_set_epi64x(3, 2, 1, 0));
}

/* 8 rows of a panel: packed (DIRECT 0, aligned) or whole panels in place (2) */
S256_INLINE __m256 sxload256(const int DIRECT, const float *p)
{
    return DIRECT ? _mm256_loadu_ps(p) : _mm256_load_ps(p);
}

/* The float partial sums t (24 rows x nr, a column every 24) into c's first mr rows:
 * c = [c +] (double) t (not inlined, as sflush512) */
__attribute__((target("avx2,fma"), noinline))
static void sflush256(const float *t, int nr, double *c, ptrdiff_t ldc, int mr, int acc)
{
    for (int j = 0; j < nr; j++)
        for (int q = 0; q < 6 && 4 * q < mr; q++) {
            double *cj = c + j * ldc + 4 * q;
            __m256d v = _mm256_cvtps_pd(_mm_load_ps(t + 24 * j + 4 * q));
            if (mr >= 4 * q + 4) {
                if (acc) v = _mm256_add_pd(_mm256_loadu_pd(cj), v);
                _mm256_storeu_pd(cj, v);
            } else {
                const __m256i mk = dlanes4(mr - 4 * q);
                if (acc) v = _mm256_add_pd(_mm256_maskload_pd(cj, mk), v);
                _mm256_maskstore_pd(cj, mk, v);
            }
        }
}

S256_INLINE void skern256(const int DIRECT, const int MV, const int NR, const float *xp,
                          ptrdiff_t xs, const float *w, ptrdiff_t ldw, int kc, double *c,
                          ptrdiff_t ldc, int mr, int acc, const float *pf, ptrdiff_t pfs,
                          int plo, int phi, int nc)
{
#define Z3(j) __m256 a0##j = _mm256_setzero_ps(), a1##j = a0##j, a2##j = a0##j;
    Z3(0) Z3(1) Z3(2) Z3(3)
#undef Z3
    for (int l = 0; l < kc; l++) {
        const float *xl = xp + l * xs;
        if (pf && l >= plo && l < phi) {
            /* pfs < 0: the next panel is stored by columns, -pfs apart */
            if (pfs > 0) sprefetch_rows(pf + l * pfs, 24);
            else sprefetch_cols(pf, -pfs, 24, l);
        }
        const __m256 x0 = sxload256(DIRECT, xl);
        const __m256 x1 = (MV > 1) ? sxload256(DIRECT, xl + 8) : x0;
        const __m256 x2 = (MV > 2) ? sxload256(DIRECT, xl + 16) : x0;
        const float *wl = w + l;
#define F3(j) if (NR > j) { const __m256 b = _mm256_broadcast_ss(wl + (j) * ldw); \
            a0##j = _mm256_fmadd_ps(x0, b, a0##j);                              \
            if (MV > 1) a1##j = _mm256_fmadd_ps(x1, b, a1##j);                  \
            if (MV > 2) a2##j = _mm256_fmadd_ps(x2, b, a2##j); }
        F3(0) F3(1) F3(2) F3(3)
#undef F3
    }
    float t[24 * 4] __attribute__((aligned(32)));
#define ST3(j) if (NR > j) { _mm256_store_ps(t + 24 * (j), a0##j);                  \
        if (MV > 1) _mm256_store_ps(t + 24 * (j) + 8, a1##j);                   \
        if (MV > 2) _mm256_store_ps(t + 24 * (j) + 16, a2##j); }
    ST3(0) ST3(1) ST3(2) ST3(3)
#undef ST3
    sflush256(t, nc, c, ldc, mr < 8 * MV ? mr : 8 * MV, acc);
}

S256_INLINE void srows256(const int DIRECT, const int MV, const float *xp, ptrdiff_t xs,
                          const float *w, ptrdiff_t ldw, const float *wt, int kc, int nj,
                          double *c, ptrdiff_t ldc, int mr, int acc, const float *pf,
                          ptrdiff_t pfs)
{
    /* column block g asks for its share of the next panel's lines (gemm.c) */
    const int ng = (nj + 3) / 4;
    int j0 = 0, g = 0;
    for (; j0 + 4 <= nj; j0 += 4, g++)
        skern256(DIRECT, MV, 4, xp, xs, w + j0 * ldw, ldw, kc, c + j0 * ldc, ldc, mr, acc,
                 pf, pfs, g * kc / ng, (g + 1) * kc / ng, 4);
    const int r = nj - j0;
    if (r == 0) return;
    const int nrp = snr_pad(r, 4);
    const float *wj = r == nrp ? w + j0 * ldw : wt;
    const ptrdiff_t ldj = r == nrp ? ldw : kc;
    double *cj = c + j0 * ldc;
#define K256(NR) skern256(DIRECT, MV, NR, xp, xs, wj, ldj, kc, cj, ldc, mr, acc, \
                          pf, pfs, g * kc / ng, kc, r)
    switch (nrp) {
    case 4: K256(4); break;
    case 2: K256(2); break;
    default: K256(1); break;
    }
#undef K256
}

__attribute__((target("avx2,fma"), noinline))
static void stile256(const float *x, ptrdiff_t ldx, const float *w, ptrdiff_t ldw,
                     ptrdiff_t d, int nr, int nj, double *c, ptrdiff_t ldc, int acc0,
                     int transa)
{
    float xp[24 * SGEMM_KC] __attribute__((aligned(32)));
    float wt[4 * SGEMM_KC];
    const int rt = nj % 4, nrt = snr_pad(rt, 4);
    for (ptrdiff_t pc = 0; pc < d; pc += SGEMM_KC) {
        const int kc = (int) (d - pc < SGEMM_KC ? d - pc : SGEMM_KC);
        const int acc = acc0 || pc > 0;
        if (rt && rt != nrt) spad_cols(w + pc + (ptrdiff_t) (nj - rt) * ldw, ldw, kc, rt, nrt, wt);
        for (int i0 = 0; i0 < nr; i0 += 24) {
            const int mr = nr - i0 < 24 ? nr - i0 : 24;
            const __m256i m0 = slanes8(mr), m1 = slanes8(mr - 8), m2 = slanes8(mr - 16);
            const float *src = x + pc * ldx + i0;
            const float *wp = w + pc;
            double *ci = c + i0;
            if (!transa && nj <= SGEMM_DIRECT_COLS && mr == 24) {
                /* whole panels read in place with plain loads (a masked load is slow on
                 * AMD); a last short panel is packed */
                const float *pf = i0 + 48 <= nr ? src + 24 : NULL;
                srows256(2, 3, src, ldx, wp, ldw, wt, kc, nj, ci, ldc, mr, acc, pf, ldx);
                continue;
            }
            /* always a 24-row panel, zero padded (one kernel per column count) */
            float *dst = xp;
            if (transa) {
                spack_at(24, x + pc + (ptrdiff_t) i0 * ldx, ldx, kc, mr, xp);
            } else if (mr == 24) {
                for (int l = 0; l < kc; l++, src += ldx, dst += 24) {
                    _mm256_store_ps(dst, _mm256_loadu_ps(src));
                    _mm256_store_ps(dst + 8, _mm256_loadu_ps(src + 8));
                    _mm256_store_ps(dst + 16, _mm256_loadu_ps(src + 16));
                }
            } else {
                for (int l = 0; l < kc; l++, src += ldx, dst += 24) {
                    _mm256_store_ps(dst, _mm256_maskload_ps(src, m0));
                    _mm256_store_ps(dst + 8, _mm256_maskload_ps(src + 8, m1));
                    _mm256_store_ps(dst + 16, _mm256_maskload_ps(src + 16, m2));
                }
            }
            /* the next panel's lines asked for while this one is multiplied (stile512) */
            const ptrdiff_t next = bochner_next_panel(ldx, d, nr, i0, pc, SGEMM_KC, 24, transa);
            const float *pf = next < 0 ? NULL : x + next;
            srows256(0, 3, xp, 24, wp, ldw, wt, kc, nj, ci, ldc, mr, acc, pf,
                     transa ? -ldx : ldx);
        }
    }
}

#endif /* SGEMM_X86 */

/* ------------------------------------------------------------------------- */
/* Entry points                                                               */
/* ------------------------------------------------------------------------- */

/* (callable from the threads: no R API) */
void bochner_sgemm_path(int isa, int transa, const float *a, ptrdiff_t lda, const float *b,
                        ptrdiff_t ldb, int m, int n, int k, double *c, ptrdiff_t ldc,
                        int accumulate)
{
    if (m <= 0 || n <= 0) return;
    if (k <= 0) {
        if (!accumulate)
            for (int j = 0; j < n; j++) memset(c + (ptrdiff_t) j * ldc, 0, sizeof(double) * (size_t) m);
        return;
    }
#if SGEMM_X86
    switch (isa) {
    case 2: stile512(a, lda, b, ldb, k, m, n, c, ldc, accumulate, transa); return;
    case 1: stile256(a, lda, b, ldb, k, m, n, c, ldc, accumulate, transa); return;
    default: break;
    }
#else
    (void) isa;
#endif
    if (transa) stile_portable_tn(a, lda, b, ldb, k, m, n, c, ldc, accumulate);
    else stile_portable(a, lda, b, ldb, k, m, n, c, ldc, accumulate);
}

void bochner_sgemm(const float *a, ptrdiff_t lda, const float *b, ptrdiff_t ldb,
                   int m, int n, int k, double *c, ptrdiff_t ldc, int accumulate)
{
    bochner_sgemm_path(bochner_cpu_isa(), 0, a, lda, b, ldb, m, n, k, c, ldc, accumulate);
}

void bochner_sgemm_tn(const float *a, ptrdiff_t lda, const float *b, ptrdiff_t ldb,
                      int m, int n, int k, double *c, ptrdiff_t ldc, int accumulate)
{
    bochner_sgemm_path(bochner_cpu_isa(), 1, a, lda, b, ldb, m, n, k, c, ldc, accumulate);
}

/* y[0 .. n-1] = x rounded to the nearest float (values beyond float's range become
 * +-Inf, as a C conversion does) */
void bochner_to_float(const double *x, R_xlen_t n, float *y)
{
    for (R_xlen_t i = 0; i < n; i++) y[i] = (float) x[i];
}

/* x[i] = (double) (float) x[i]: a double block rounded to float values in place (falkon's
 * single precision: an evaluated kernel block equals the float cache's entries) */
void bochner_round_float(double *x, R_xlen_t n)
{
    for (R_xlen_t i = 0; i < n; i++) x[i] = (double) (float) x[i];
}

/* dst (rows x m, ldd) = src (rows x m float, lds) widened to double, threaded over blocks
 * of columns (a copy: no rounding, any thread count) */
typedef struct {
    const float *src;
    ptrdiff_t lds, ldd;
    int rows, m;
    double *dst;
} widen_job;

#define WIDEN_COLS 16
static void widen_block(void *ctx, R_xlen_t b, int thread)
{
    (void) thread;
    const widen_job *p = (const widen_job *) ctx;
    int j0 = (int) b * WIDEN_COLS, j1 = p->m - j0 < WIDEN_COLS ? p->m : j0 + WIDEN_COLS;
    for (int j = j0; j < j1; j++) {
        const float *s = p->src + (ptrdiff_t) j * p->lds;
        double *d = p->dst + (ptrdiff_t) j * p->ldd;
        for (int i = 0; i < p->rows; i++) d[i] = (double) s[i];
    }
}

void bochner_widen_float(const float *src, ptrdiff_t lds, int rows, int m, double *dst,
                         ptrdiff_t ldd, int nthreads)
{
    widen_job p = {src, lds, ldd, rows, m, dst};
    /* a copy runs at memory speed: a unit of work per 4 entries */
    bochner_parallel_blocks((m + WIDEN_COLS - 1) / WIDEN_COLS,
                            bochner_threads_for(nthreads, 0.25 * rows * (double) m), 1 << 20,
                            widen_block, &p);
}
