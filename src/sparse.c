/* Random Fourier features of sparse data (Matrix's dgCMatrix / dgRMatrix).
 *
 * The same fused transform as features.c -- Z = scale * cos(X W + b), the
 * pair map, t(Z), or the decision values Z beta + intercept, in tiles of
 * rows by FREQ_BLOCK frequencies -- with the product X W taken over the
 * non-zeros only: O(nnz * D) instead of O(n d D).
 *
 * Bit-identical to the dense path.  There (gemm.c) every entry of X W is one
 * chain over the inputs l = 0 .. d-1 in order, acc = fma(x[i,l], w[l,j], acc)
 * from acc = +0 (on CPUs with FMA; acc + x * w on the portable path).  A
 * zero x[i,l] leaves acc unchanged (fma(0, w, acc) = acc for finite w, and
 * acc is never -0 since it starts at +0), so the chain over the non-zeros of
 * row i in increasing column order gives the same double.  The rows are
 * therefore walked in CSR form with sorted columns (a dgCMatrix is turned
 * into that once, O(nnz)), and W is read through its transpose so that one
 * input's frequencies are contiguous.  The products of a tile are then
 * transposed into the layout features.c hands to the vectorised cosine.
 *
 * Memory: the CSR copy (of a dgCMatrix) and t(W), d x D doubles, besides
 * the output. */
#include "bochner.h"
#include <limits.h>
#include <math.h>
#include <string.h>

#define ROW_BLOCK 1024      /* most rows per block (fewer with few rows a thread) */
#define ROW_BLOCK_MIN 256
#define FREQ_BLOCK 256
#define DECISION_ROWS 64
#define TILES_PER_CHECK 64
#define CHUNK 32              /* frequencies whose sums stay in registers */

#if defined(__GNUC__) && defined(__x86_64__) && !defined(_WIN32)
# define SPARSE_X86 1
# include <immintrin.h>
#else
# define SPARSE_X86 0
#endif

/* the CSR form (bochner.h), read from R's dgCMatrix / dgRMatrix by api_maps.c */
typedef bochner_csr csr;

/* acc[0 .. nj-1] = sum over the row's non-zeros (in order) of v * wt[l, j0 + j]
 * where wt is t(W), ld doubles per input. Portable: acc + v * w. */
static void row_product_portable(const csr *x, R_xlen_t row, const double *wt, ptrdiff_t ld,
                                 int nj, double *acc)
{
    int k0 = x->ptr[row], k1 = x->ptr[row + 1];
    memset(acc, 0, sizeof(double) * (size_t) nj);
    for (int k = k0; k < k1; k++) {
        const double v = x->val[k];
        const double *restrict w = wt + (ptrdiff_t) x->col[k] * ld;
        for (int j = 0; j < nj; j++) acc[j] = acc[j] + v * w[j];
    }
}

#if SPARSE_X86
/* The same with fused multiply-adds, as gemm.c's AVX2 and AVX-512 paths
 * (they agree bit for bit): CHUNK frequencies at a time in 8 registers. */
__attribute__((target("avx2,fma")))
static void row_product_fma(const csr *x, R_xlen_t row, const double *wt, ptrdiff_t ld,
                            int nj, double *acc)
{
    int k0 = x->ptr[row], k1 = x->ptr[row + 1];
    int j = 0;
    for (; j + CHUNK <= nj; j += CHUNK) {
        __m256d a0 = _mm256_setzero_pd(), a1 = a0, a2 = a0, a3 = a0,
                a4 = a0, a5 = a0, a6 = a0, a7 = a0;
        for (int k = k0; k < k1; k++) {
            const __m256d v = _mm256_broadcast_sd(x->val + k);
            const double *w = wt + (ptrdiff_t) x->col[k] * ld + j;
            a0 = _mm256_fmadd_pd(v, _mm256_loadu_pd(w), a0);
            a1 = _mm256_fmadd_pd(v, _mm256_loadu_pd(w + 4), a1);
            a2 = _mm256_fmadd_pd(v, _mm256_loadu_pd(w + 8), a2);
            a3 = _mm256_fmadd_pd(v, _mm256_loadu_pd(w + 12), a3);
            a4 = _mm256_fmadd_pd(v, _mm256_loadu_pd(w + 16), a4);
            a5 = _mm256_fmadd_pd(v, _mm256_loadu_pd(w + 20), a5);
            a6 = _mm256_fmadd_pd(v, _mm256_loadu_pd(w + 24), a6);
            a7 = _mm256_fmadd_pd(v, _mm256_loadu_pd(w + 28), a7);
        }
        _mm256_storeu_pd(acc + j, a0);
        _mm256_storeu_pd(acc + j + 4, a1);
        _mm256_storeu_pd(acc + j + 8, a2);
        _mm256_storeu_pd(acc + j + 12, a3);
        _mm256_storeu_pd(acc + j + 16, a4);
        _mm256_storeu_pd(acc + j + 20, a5);
        _mm256_storeu_pd(acc + j + 24, a6);
        _mm256_storeu_pd(acc + j + 28, a7);
    }
    for (; j + 4 <= nj; j += 4) {
        __m256d a = _mm256_setzero_pd();
        for (int k = k0; k < k1; k++)
            a = _mm256_fmadd_pd(_mm256_broadcast_sd(x->val + k),
                                _mm256_loadu_pd(wt + (ptrdiff_t) x->col[k] * ld + j), a);
        _mm256_storeu_pd(acc + j, a);
    }
    for (; j < nj; j++) {
        __m128d a = _mm_setzero_pd();
        for (int k = k0; k < k1; k++)
            a = _mm_fmadd_sd(_mm_load_sd(x->val + k),
                             _mm_load_sd(wt + (ptrdiff_t) x->col[k] * ld + j), a);
        acc[j] = _mm_cvtsd_f64(a);
    }
}
#endif

/* The same sums read straight from W (d x nfreq, ld = d: an input's
 * frequencies d doubles apart), for few non-zeros, where transposing the
 * frequencies would cost more than the strided reads. */
static void gather_product_portable(const csr *x, R_xlen_t row, const double *w, ptrdiff_t ld,
                                    int nj, double *acc)
{
    int k0 = x->ptr[row], k1 = x->ptr[row + 1];
    for (int j = 0; j < nj; j++) {
        const double *wj = w + (ptrdiff_t) j * ld;
        double a = 0.0;
        for (int k = k0; k < k1; k++) a = a + x->val[k] * wj[x->col[k]];
        acc[j] = a;
    }
}

#if SPARSE_X86
__attribute__((target("avx2,fma")))
static void gather_product_fma(const csr *x, R_xlen_t row, const double *w, ptrdiff_t ld,
                               int nj, double *acc)
{
    int k0 = x->ptr[row], k1 = x->ptr[row + 1];
    for (int j = 0; j < nj; j++) {
        const double *wj = w + (ptrdiff_t) j * ld;
        __m128d a = _mm_setzero_pd();
        for (int k = k0; k < k1; k++)
            a = _mm_fmadd_sd(_mm_load_sd(x->val + k), _mm_load_sd(wj + x->col[k]), a);
        acc[j] = _mm_cvtsd_f64(a);
    }
}
#endif

typedef void (*row_product_fn)(const csr *, R_xlen_t, const double *, ptrdiff_t, int,
                               double *);

/* One phase: the frequencies j0 .. j0 + nj - 1 (one FREQ_BLOCK), whose rows
 * of t(W) are in wt (nj x d), for every block of rows. */
typedef struct {
    csr x;
    const double *w;        /* W, d x nfreq */
    const double *wt;       /* t(W)[j0 + 0:(nj-1), ], ldwt apart; NULL: read W itself */
    ptrdiff_t ldwt;
    const double *b;
    int nfreq, j0, nj;
    double scale;
    int nfeat;
    double *out;
    double *scratch;
    R_xlen_t per_thread;
    const double *beta, *intercept;
    int m, last;            /* decision values: more phases to come unless last */
    int rows;               /* rows per block: ROW_BLOCK_MIN .. ROW_BLOCK */
    row_product_fn product;
} sparse_job;

/* As fourier_block in features.c: the features of rows r0 .. r0 + nr - 1 and
 * the phase's frequencies into dest (feature f at dest + (f - first) * ldd);
 * work: 2 * nr * nj doubles of scratch. */
static void sparse_block(const sparse_job *p, R_xlen_t r0, int nr, double *dest, R_xlen_t ldd,
                         double *work)
{
    int nj = p->nj, j0 = p->j0;
    double *byrow = work, *prod = work + (R_xlen_t) nr * nj;
    const double *wsrc = p->wt ? p->wt : p->w + (R_xlen_t) j0 * p->x.d;
    ptrdiff_t ld = p->wt ? p->ldwt : p->x.d;
    for (int i = 0; i < nr; i++)
        p->product(&p->x, r0 + i, wsrc, ld, nj, byrow + (R_xlen_t) i * nj);
    bochner_transpose(byrow, nj, nj, nr, prod, nr);
    bochner_fourier_finish(prod, nr, nj, p->b ? p->b + j0 : NULL, p->scale, dest, ldd);
}

static int first_feature(const sparse_job *p) { return p->b ? p->j0 : 2 * p->j0; }

static int block_rows(const sparse_job *p, R_xlen_t r0, int rows)
{
    return (int) (p->x.n - r0 < rows ? p->x.n - r0 : rows);
}

/* Z, n x nfeat */
static void sparse_tile(void *ctx, R_xlen_t t, int thread)
{
    const sparse_job *p = (const sparse_job *) ctx;
    R_xlen_t r0 = t * p->rows;
    sparse_block(p, r0, block_rows(p, r0, p->rows),
                 p->out + r0 + (R_xlen_t) first_feature(p) * p->x.n, p->x.n,
                 p->scratch + (R_xlen_t) thread * p->per_thread);
}

/* t(Z), nfeat x n */
static void sparse_tile_t(void *ctx, R_xlen_t t, int thread)
{
    const sparse_job *p = (const sparse_job *) ctx;
    R_xlen_t r0 = t * p->rows;
    int nr = block_rows(p, r0, p->rows);
    double *work = p->scratch + (R_xlen_t) thread * p->per_thread;
    double *tile = work + 2 * (R_xlen_t) p->rows * FREQ_BLOCK;
    int nf = p->b ? p->nj : 2 * p->nj;
    sparse_block(p, r0, nr, tile, nr, work);
    bochner_transpose(tile, nr, nr, nf, p->out + first_feature(p) + r0 * (R_xlen_t) p->nfeat,
                      p->nfeat);
}

/* Decision values: the phase's features times their rows of beta, added to
 * what the earlier phases left (gemm.c continues each entry's chain from the
 * stored double, so this is the one chain over all features of the dense
 * path), and the intercept after the last phase. */
static void sparse_decision_rows(void *ctx, R_xlen_t blk, int thread)
{
    const sparse_job *p = (const sparse_job *) ctx;
    R_xlen_t r0 = blk * DECISION_ROWS, n = p->x.n;
    int nr = block_rows(p, r0, DECISION_ROWS);
    double *work = p->scratch + (R_xlen_t) thread * p->per_thread;
    double *feat = work + 2 * (R_xlen_t) DECISION_ROWS * FREQ_BLOCK;
    int f0 = first_feature(p), nf = p->b ? p->nj : 2 * p->nj;
    sparse_block(p, r0, nr, feat, nr, work);
    double *dec = p->out + r0;
    bochner_gemm(feat, nr, p->beta + f0, p->nfeat, nr, p->m, nf, dec, n, f0 > 0);
    if (p->last)
        for (int c = 0; c < p->m; c++)
            for (int i = 0; i < nr; i++) dec[i + (R_xlen_t) c * n] += p->intercept[c];
}

/* The phase's rows of t(W), in blocks of inputs, threaded. */
#define TRANSPOSE_ROWS 4096
static void transpose_block(void *ctx, R_xlen_t blk, int thread)
{
    (void) thread;
    const sparse_job *p = (const sparse_job *) ctx;
    int l0 = (int) blk * TRANSPOSE_ROWS, d = p->x.d;
    int nl = d - l0 < TRANSPOSE_ROWS ? d - l0 : TRANSPOSE_ROWS;
    bochner_transpose(p->w + l0 + (R_xlen_t) p->j0 * d, d, nl, p->nj,
                      (double *) p->wt + (R_xlen_t) l0 * p->nj, p->nj);
}

/* layout: 0 Z, 1 t(Z), 2 decision values; x in CSR form.  One phase per
 * FREQ_BLOCK frequencies, so that t(W) is held one block at a time
 * (FREQ_BLOCK x d doubles, reused): the phases re-read only x. */
void bochner_sparse_run(const csr *x, const double *w, const double *wt_all, int nfreq,
                        const double *b, double scale, double *out, int layout,
                        const double *beta, const double *intercept, int m, int nthreads)
{
    R_xlen_t n = x->n;
    int d = x->d;
    double nnz = (double) x->ptr[n];
    int nj0 = nfreq < FREQ_BLOCK ? nfreq : FREQ_BLOCK;
    /* transposing costs d reads per frequency, gathering ~8 (a cache line) per
     * non-zero: few non-zeros (a handful of documents) read W directly */
    int gather = !wt_all && 8.0 * nnz < (double) d;
    /* the caller's t(W) (all of it, for many calls on one map), or one
     * block of it transposed per phase */
    double *wt = gather || wt_all ? NULL
                 : (double *) R_alloc((size_t) d * (size_t) nj0, sizeof(double));
    sparse_job p = {*x, w, wt, 0, b, nfreq, 0, 0, scale, b ? nfreq : 2 * nfreq, out, NULL, 0,
                    beta, intercept, m, 0, ROW_BLOCK,
                    gather ? gather_product_portable : row_product_portable};
#if SPARSE_X86
    if (bochner_cpu_isa() >= 1) p.product = gather ? gather_product_fma : row_product_fma;
#endif
    /* work of a phase: the non-zeros' multiply-adds and about 20 operations per cosine */
    double work = (nnz + (double) n * 20.0) * nj0;
    if (layout == 2) work += (double) n * 2 * nj0 * m;
    int nt = bochner_threads_for(nthreads, work);
    int nt_transpose = bochner_threads_for(nthreads, (double) d * nj0);
    /* tall blocks share the rows of t(W) of frequent inputs (text) while they
     * are in cache; at least 4 blocks a thread where the rows allow.  Each
     * row's features depend on that row only, so the result does not
     * depend on the blocking. */
    R_xlen_t rows = n / (4 * (R_xlen_t) nt);
    rows = rows > ROW_BLOCK ? ROW_BLOCK : rows < ROW_BLOCK_MIN ? ROW_BLOCK_MIN : rows & ~63;
    p.rows = (int) rows;
    R_xlen_t nblocks = (n + rows - 1) / rows;
    bochner_block_fn fn = sparse_tile;
    p.per_thread = 2 * rows * FREQ_BLOCK;
    if (layout == 1) {
        fn = sparse_tile_t;
        p.per_thread = 4 * rows * FREQ_BLOCK;  /* products, tile (pair: 2 x) */
    } else if (layout == 2) {
        fn = sparse_decision_rows;
        nblocks = (n + DECISION_ROWS - 1) / DECISION_ROWS;
        p.per_thread = 4 * (R_xlen_t) DECISION_ROWS * FREQ_BLOCK;   /* products, features */
    }
    p.scratch = (double *) R_alloc((size_t) nt * (size_t) p.per_thread, sizeof(double));
    for (int j0 = 0; j0 < nfreq; j0 += FREQ_BLOCK) {
        p.j0 = j0;
        p.nj = nfreq - j0 < FREQ_BLOCK ? nfreq - j0 : FREQ_BLOCK;
        p.last = j0 + p.nj >= nfreq;
        if (wt_all) {
            p.wt = wt_all + j0;
            p.ldwt = nfreq;
        } else if (!gather) {
            p.ldwt = p.nj;
            bochner_parallel_blocks((d + TRANSPOSE_ROWS - 1) / TRANSPOSE_ROWS, nt_transpose, 16,
                                    transpose_block, &p);
        }
        bochner_parallel_blocks(nblocks, nt, TILES_PER_CHECK, fn, &p);
    }
}

/* The distances between the rows of r in the order of stats::dist (column
 * by column of the lower triangle), Euclidean or (man) Manhattan, into o
 * (n (n - 1) / 2 values).  Each is dist()'s sum over the columns in order
 * with the terms where both rows are zero left out: they add exactly zero,
 * so the values are dist()'s on as.matrix(x) bit for bit. */
void bochner_sparse_dist(const csr *r, int man, double *o)
{
    R_xlen_t n = r->n, pos = 0;
    for (R_xlen_t j = 0; j < n; j++) {
        if (j % 64 == 0) R_CheckUserInterrupt();
        for (R_xlen_t i = j + 1; i < n; i++) {
            int a = r->ptr[i], a1 = r->ptr[i + 1], c = r->ptr[j], c1 = r->ptr[j + 1];
            double s = 0.0;
            while (a < a1 || c < c1) {
                double dev;
                if (c >= c1 || (a < a1 && r->col[a] < r->col[c])) dev = r->val[a++];
                else if (a >= a1 || r->col[c] < r->col[a]) dev = -r->val[c++];
                else dev = r->val[a++] - r->val[c++];
                s += man ? fabs(dev) : dev * dev;
            }
            o[pos++] = man ? s : sqrt(s);
        }
    }
}
