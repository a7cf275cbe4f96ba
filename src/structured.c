/* Structured orthogonal random features (SORF; Yu et al., NeurIPS 2016).
 *
 * Inputs are padded with zeros to p = 2^k >= d (R/structured.R: p >= 32).  Block b of p frequencies
 * projects a row x as
 *     t = diag(s_b) H D1 H D2 H D3 x,
 * H the p x p Walsh-Hadamard matrix of +-1 entries (H H' = p I), D1..D3
 * diagonal +-1 sign matrices and s_b the row scales r_j / (sigma p^{3/2})
 * (R/structured.R draws the signs and the radial norms r_j; the p^{3/2}
 * normalises the three transforms).  The features are then those of the
 * Fourier maps: sqrt(2/D) cos(t + b) (phase map) or sqrt(1/D) [cos t, sin t]
 * side by side (pair map), D frequencies in all (the last block's extra rows
 * are dropped).  Cost per row O(D log p) instead of O(D d); memory O(D).
 *
 * Rows go through the transforms ROWS at a time, interleaved: element k of
 * row i of the group sits at v[k * ROWS + i].  Every butterfly then works on
 * ROWS contiguous lanes, so every stage vectorises, the short strides
 * (1, 2, 4) included, which a transform of one row at a time cannot do;
 * stages go in radix-4 passes (half the passes over the buffer), and the
 * sign flips ride along in the first pass of each transform.  After the
 * scale and phase, the values of feature k for the group's rows are
 * contiguous: one call of the vectorised cosine (fastmath.c) over the whole
 * buffer, then a copy of ROWS doubles into each column of Z.  Like
 * fastmath.c the kernel has AVX2 and AVX-512 builds chosen at run time
 * (target attributes, no compiler flags).  Each lane's arithmetic depends
 * on its row alone, and every thread runs the same build, so results do not
 * depend on the number of threads or on how the rows are split. */
#include "bochner.h"
#include <limits.h>
#include <math.h>
#include <string.h>

#define ROWS 8               /* rows per group: one AVX-512 vector */
#define TILE_GROUPS 32       /* groups per tile, at most */
#define TILE_ELEMS 65536     /* rows x p per tile buffer, at most: 512 KB */
#define TILES_PER_CHECK 16

/* The helpers must be inlined into each build of the block kernel, so that
 * they are compiled for its instruction set. */
#if defined(__GNUC__)
# define ST_INLINE static inline __attribute__((always_inline))
#else
# define ST_INLINE static inline
#endif

#if defined(_OPENMP) && _OPENMP >= 201307
# define ST_PRAGMA(x) _Pragma(#x)
# define ST_SIMD ST_PRAGMA(omp simd)
#else
# define ST_SIMD
#endif

/* One radix-2 pass (stride h) over interleaved buffers of p rows of ROWS
 * lanes, from in to out (the same buffer, or another: each lane index is
 * read before it is written), the input multiplied by the signs pre (or
 * not, when NULL).  No restrict: out may be in; `omp simd` vectorises. */
ST_INLINE void st_pass2(double *out, const double *in, int p, int h, const double *pre)
{
    const R_xlen_t hs = (R_xlen_t) h * ROWS;
    for (int base = 0; base < p; base += 2 * h)
        for (int j = base; j < base + h; j++) {
            const double *a = in + (R_xlen_t) j * ROWS, *b = a + hs;
            double *oa = out + (R_xlen_t) j * ROWS, *ob = oa + hs;
            double sa = pre ? pre[j] : 1.0, sb = pre ? pre[j + h] : 1.0;
            ST_SIMD
            for (int i = 0; i < ROWS; i++) {
                double x0 = a[i] * sa, x1 = b[i] * sb;
                oa[i] = x0 + x1;
                ob[i] = x0 - x1;
            }
        }
}

/* One radix-4 pass: strides h and 2 h at once. */
ST_INLINE void st_pass4(double *out, const double *in, int p, int h, const double *pre)
{
    const R_xlen_t hs = (R_xlen_t) h * ROWS;
    for (int base = 0; base < p; base += 4 * h)
        for (int j = base; j < base + h; j++) {
            const double *a = in + (R_xlen_t) j * ROWS, *b = a + hs, *c = b + hs, *d = c + hs;
            double *oa = out + (R_xlen_t) j * ROWS, *ob = oa + hs, *oc = ob + hs, *od = oc + hs;
            double sa = 1.0, sb = 1.0, sc = 1.0, sd = 1.0;
            if (pre) {
                sa = pre[j];
                sb = pre[j + h];
                sc = pre[j + 2 * h];
                sd = pre[j + 3 * h];
            }
            ST_SIMD
            for (int i = 0; i < ROWS; i++) {
                double x0 = a[i] * sa, x1 = b[i] * sb, x2 = c[i] * sc, x3 = d[i] * sd;
                double s0 = x0 + x1, d0 = x0 - x1, s1 = x2 + x3, d1 = x2 - x3;
                oa[i] = s0 + s1;
                ob[i] = d0 + d1;
                oc[i] = s0 - s1;
                od[i] = d0 - d1;
            }
        }
}

ST_INLINE int st_log2(int p)
{
    int lg = 0;
    while ((1 << lg) < p) lg++;
    return lg;
}

/* v <- H diag(pre) in for each of the ROWS interleaved rows (in may be v):
 * the unnormalised Walsh-Hadamard transform, H_{jk} = (-1)^{popcount(j & k)}
 * (Sylvester's construction). */
ST_INLINE void st_fwht(double *v, const double *in, int p, const double *pre)
{
    int h = 1;
    if ((st_log2(p) & 1) != 0) {   /* odd log2(p): one radix-2 pass */
        st_pass2(v, in, p, 1, pre);
        h = 2;
    } else {
        st_pass4(v, in, p, 1, pre);
        h = 4;
    }
    for (; h < p; h *= 4) st_pass4(v, v, p, h, NULL);
}

/* One block for a group of rows: v <- H D1 H D2 H D3 x (x: p x ROWS,
 * interleaved, zero-padded), then row k scaled by rs[k] and shifted by b[k]
 * (if b) on the way into dst[k * ld + i], for the first nk frequencies. */
#define ST_DEFINE_BLOCK(SFX, ATTR)                                          \
ATTR static void st_block##SFX(double *restrict v, const double *restrict x, \
                               int p, int nk, const double *restrict s1,   \
                               const double *restrict s2,                  \
                               const double *restrict s3,                  \
                               const double *restrict rs,                  \
                               const double *restrict b,                   \
                               double *restrict dst, R_xlen_t ld)          \
{                                                                           \
    st_fwht(v, x, p, s3);                                                   \
    st_fwht(v, v, p, s2);                                                   \
    st_fwht(v, v, p, s1);                                                   \
    for (int k = 0; k < nk; k++) {                                          \
        const double *restrict w = v + (R_xlen_t) k * ROWS;                 \
        double *restrict o = dst + k * ld;                                  \
        double f = rs[k], c = b ? b[k] : 0.0;                               \
        ST_SIMD                                                             \
        for (int i = 0; i < ROWS; i++) o[i] = w[i] * f + c;                 \
    }                                                                       \
}

ST_DEFINE_BLOCK(_base, )

/* As in fastmath.c: AVX2 (without fma: the same IEEE operations as the
 * SSE2 build) and AVX-512 (where gcc may fuse the final multiply-add: the
 * last bit can differ from the other builds, never between threads). */
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__) && \
    !defined(__AVX2__) && !defined(_WIN32) && !defined(FM_NO_DISPATCH)
# define ST_DISPATCH 1
ST_DEFINE_BLOCK(_avx2, __attribute__((target("avx2"))))
ST_DEFINE_BLOCK(_avx512, __attribute__((target("avx512f,prefer-vector-width=512"))))
#else
# define ST_DISPATCH 0
#endif

typedef void (*st_block_fn)(double *restrict, const double *restrict, int, int,
                            const double *restrict, const double *restrict,
                            const double *restrict, const double *restrict,
                            const double *restrict, double *restrict, R_xlen_t);

typedef struct {
    const double *x;     /* n x d, column-major */
    R_xlen_t n;
    int d, p, nblock, nfreq;
    const double *sign;  /* p x 3 x nblock: D1, D2, D3 of each block, as doubles */
    const double *rs;    /* nfreq row scales r_j / (sigma p^{3/2}) */
    const double *b;     /* nfreq phases, or NULL for the pair map */
    double scale;
    double *z;           /* n x nfeat */
    st_block_fn block;
    int groups;          /* groups of ROWS rows per tile */
    double *scratch;     /* per thread */
    R_xlen_t per_thread;
} sorf_job;

/* A tile: up to q->groups groups of ROWS rows.  Each block's projections
 * of the whole tile are collected in the buffer c, one column of the
 * tile's rows per frequency, so that the cosine writes runs of the tile's
 * rows into each column of Z (as in features.c) rather than runs of ROWS. */
static void sorf_tile(void *ctx, R_xlen_t t, int thread)
{
    const sorf_job *q = (const sorf_job *) ctx;
    const int d = q->d, p = q->p, tr = q->groups * ROWS;
    const R_xlen_t n = q->n, r0 = t * tr;
    const int nr = (int) (n - r0 < tr ? n - r0 : tr), ng = (nr + ROWS - 1) / ROWS;
    double *xb = q->scratch + (R_xlen_t) thread * q->per_thread;  /* ng x p x ROWS */
    double *v = xb + (R_xlen_t) tr * p;                            /* p x ROWS */
    double *c = v + (R_xlen_t) p * ROWS;                           /* p x tr */
    /* the tile's rows, interleaved by group and zero-padded to p; rows past
     * n are zero */
    for (int g = 0; g < ng; g++) {
        double *xg = xb + (R_xlen_t) g * p * ROWS;
        int gr = nr - g * ROWS < ROWS ? nr - g * ROWS : ROWS;
        for (int k = 0; k < d; k++) {
            const double *col = q->x + r0 + g * ROWS + (R_xlen_t) k * n;
            for (int i = 0; i < gr; i++) xg[(R_xlen_t) k * ROWS + i] = col[i];
            for (int i = gr; i < ROWS; i++) xg[(R_xlen_t) k * ROWS + i] = 0.0;
        }
        memset(xg + (R_xlen_t) d * ROWS, 0, sizeof(double) * (size_t) (p - d) * ROWS);
    }
    for (int blk = 0; blk < q->nblock; blk++) {
        const double *s1 = q->sign + (R_xlen_t) blk * 3 * p, *s2 = s1 + p, *s3 = s2 + p;
        const R_xlen_t j0 = (R_xlen_t) blk * p;
        const int nk = q->nfreq - j0 < p ? (int) (q->nfreq - j0) : p;
        for (int g = 0; g < ng; g++)
            q->block(v, xb + (R_xlen_t) g * p * ROWS, p, nk, s1, s2, s3, q->rs + j0,
                     q->b ? q->b + j0 : NULL, c + g * ROWS, tr);
        /* the cosine (and sine) of each feature's column straight into Z */
        for (int k = 0; k < nk; k++) {
            const double *ck = c + (R_xlen_t) k * tr;
            if (q->b) {
                bochner_cos_affine(q->z + r0 + (j0 + k) * n, ck, nr, 0.0, q->scale);
            } else {
                double *zc = q->z + r0 + 2 * (j0 + k) * n;
                bochner_sincos_scaled(zc, zc + n, ck, nr, q->scale);
            }
        }
    }
}

int bochner_structured_transform(const double *x, R_xlen_t n, int d, int p, int nfreq,
                                 const int *sign, const double *radial, const double *b,
                                 double scale, double *z, int nthreads)
{
    if (p < 2 || (p & (p - 1)) != 0 || d < 1 || d > p || nfreq < 1)
        return BOCHNER_BAD_ARGUMENT;
    int nblock = (int) ((nfreq + (R_xlen_t) p - 1) / p);
    R_xlen_t nsign = (R_xlen_t) 3 * p * nblock;
    double *sg = (double *) R_alloc((size_t) nsign, sizeof(double));
    for (R_xlen_t i = 0; i < nsign; i++) sg[i] = (double) sign[i];
    /* the three transforms are unnormalised: fold 1/p^{3/2} into the scales */
    double norm = 1.0 / ((double) p * sqrt((double) p));
    double *rs = (double *) R_alloc((size_t) nfreq, sizeof(double));
    for (int j = 0; j < nfreq; j++) rs[j] = radial[j] * norm;
    sorf_job q = {x, n, d, p, nblock, nfreq, sg, rs, b, scale, z, st_block_base, 1, NULL, 0};
#if ST_DISPATCH
    if (bochner_cpu_isa() >= 2) q.block = st_block_avx512;
    else if (bochner_cpu_isa() >= 1) q.block = st_block_avx2;
#endif
    /* the tiling depends on p only, never on the threads */
    q.groups = TILE_ELEMS / ((R_xlen_t) p * ROWS) < TILE_GROUPS
                   ? (int) (TILE_ELEMS / ((R_xlen_t) p * ROWS)) : TILE_GROUPS;
    if (q.groups < 1) q.groups = 1;
    const R_xlen_t tr = (R_xlen_t) q.groups * ROWS;
    q.per_thread = 2 * tr * (R_xlen_t) p + (R_xlen_t) p * ROWS;
    int lg = st_log2(p);
    double work = (double) n * nblock * p * (3.0 * lg + 30.0);
    nthreads = bochner_threads_for(nthreads, work);
    R_xlen_t ntile = (n + tr - 1) / tr;
    if (nthreads > ntile) nthreads = (int) ntile;
    q.scratch = (double *) R_alloc((size_t) nthreads * (size_t) q.per_thread, sizeof(double));
    bochner_parallel_blocks(ntile, nthreads, TILES_PER_CHECK, sorf_tile, &q);
    return BOCHNER_OK;
}

/* The unnormalised Walsh-Hadamard transform of each of the m columns of
 * xi (p rows, a power of 2, at least 2) into o: H %*% x, through the
 * interleaved transform the features use (the tests' entry point,
 * api_testing.c). */
void bochner_fwht_columns(const double *xi, int p, int m, double *o)
{
    double *v = (double *) R_alloc((size_t) p * ROWS, sizeof(double));
    /* columns ROWS at a time through the interleaved transform */
    for (int c0 = 0; c0 < m; c0 += ROWS) {
        int nc = m - c0 < ROWS ? m - c0 : ROWS;
        for (int k = 0; k < p; k++)
            for (int i = 0; i < ROWS; i++)
                v[(R_xlen_t) k * ROWS + i] = i < nc ? xi[k + (R_xlen_t) (c0 + i) * p] : 0.0;
        st_fwht(v, v, p, NULL);
        for (int k = 0; k < p; k++)
            for (int i = 0; i < nc; i++)
                o[k + (R_xlen_t) (c0 + i) * p] = v[(R_xlen_t) k * ROWS + i];
    }
}
