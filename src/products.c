/* Dense products on the package's own kernel (gemm.c), tiled and threaded.
 *
 *   bochner_product        c = [c +] a %*% b, optionally only the tiles on
 *                          and above the diagonal (symmetric results)
 *   bochner_crossproduct   the same for t(a) %*% b, a read by its columns (gemm.c's
 *                          bochner_gemm_tn): Z'Z with no transposed copy of Z
 *   bochner_mirror_upper, bochner_transpose   threaded / cache-blocked copies
 *   bochner_moments_*      Z'Z and Z'Y folded over row blocks of features that R
 *                          computes one block at a time (Z is never held); the
 *                          fold's state, an R list updated in place, and the
 *                          .Call wrappers are in api_products.c
 *
 * Threads own tiles of the output; each entry is one chain over the inner
 * dimension in order (gemm.c), so results are identical for any thread
 * count, any tiling and any row blocking, and never touch the BLAS. */
#include "bochner.h"
#include <string.h>

#define TILE 240               /* output tile: a multiple of the 24- and 12-row kernels */
#define TILES_PER_CHECK 8      /* tiles per thread between interrupt checks */
#define DIAG_STRIP 48          /* column strips of diagonal tiles: a multiple of 8 and 4 */

typedef struct {
    const double *a, *b;
    const float *fa, *fb;      /* single precision (bochner_sproduct): a, b NULL; a float
                                * times b double (bochner_product_xf): a, fb NULL */
    ptrdiff_t lda, ldb, ldc;
    int m, n, k, accumulate;
    int transa;                /* 1: c (+)= t(a) %*% b, a (k x m, lda) */
    double *c;
    R_xlen_t tm, tn;           /* tiles down and across */
    R_xlen_t *tiles;           /* NULL: all tm * tn; else the list of tile indices */
    int trows;                 /* rows per tile: TILE, or fewer for a thin result */
} product_job;

static void product_tile(void *ctx, R_xlen_t t, int thread)
{
    (void) thread;
    const product_job *p = (const product_job *) ctx;
    R_xlen_t id = p->tiles ? p->tiles[t] : t;
    R_xlen_t bi = id % p->tm, bj = id / p->tm;
    int i0 = (int) (bi * p->trows), j0 = (int) (bj * TILE);
    int mr = p->m - i0 < p->trows ? p->m - i0 : p->trows;
    int nc = p->n - j0 < TILE ? p->n - j0 : TILE;
    const ptrdiff_t aoff = p->transa ? (ptrdiff_t) i0 * p->lda : i0;
    if (p->fa && p->b) {
        /* a float, b double (bochner_product_xf): the double product's chains */
        bochner_gemm_xf(p->fa + aoff, p->lda, p->b + (ptrdiff_t) j0 * p->ldb, p->ldb, mr, nc,
                        p->k, p->c + i0 + (ptrdiff_t) j0 * p->ldc, p->ldc, p->accumulate);
        return;
    }
    if (p->fa) {
        /* float operands, double results (sgemm.c): the same tiles and strips */
        const float *ai = p->fa + aoff;
        void (*sgemm)(const float *, ptrdiff_t, const float *, ptrdiff_t, int, int, int,
                      double *, ptrdiff_t, int) = p->transa ? bochner_sgemm_tn : bochner_sgemm;
        if (p->tiles && bi == bj) {
            for (int q = 0; q < nc; q += DIAG_STRIP) {
                int w = nc - q < DIAG_STRIP ? nc - q : DIAG_STRIP;
                int rows = q + w < mr ? q + w : mr;
                sgemm(ai, p->lda, p->fb + (ptrdiff_t) (j0 + q) * p->ldb, p->ldb, rows, w, p->k,
                      p->c + i0 + (ptrdiff_t) (j0 + q) * p->ldc, p->ldc, p->accumulate);
            }
            return;
        }
        sgemm(ai, p->lda, p->fb + (ptrdiff_t) j0 * p->ldb, p->ldb, mr, nc, p->k,
              p->c + i0 + (ptrdiff_t) j0 * p->ldc, p->ldc, p->accumulate);
        return;
    }
    const double *ai = p->a + aoff;
    void (*gemm)(const double *, ptrdiff_t, const double *, ptrdiff_t, int, int, int, double *,
                 ptrdiff_t, int) = p->transa ? bochner_gemm_tn : bochner_gemm;
    if (p->tiles && bi == bj) {
        /* a diagonal tile of a symmetric result: column strips, each with
         * the rows down to its last column only (entries are the same
         * chains whatever the shapes of the calls) */
        for (int q = 0; q < nc; q += DIAG_STRIP) {
            int w = nc - q < DIAG_STRIP ? nc - q : DIAG_STRIP;
            int rows = q + w < mr ? q + w : mr;
            gemm(ai, p->lda, p->b + (ptrdiff_t) (j0 + q) * p->ldb, p->ldb, rows, w, p->k,
                 p->c + i0 + (ptrdiff_t) (j0 + q) * p->ldc, p->ldc, p->accumulate);
        }
        return;
    }
    gemm(ai, p->lda, p->b + (ptrdiff_t) j0 * p->ldb, p->ldb, mr, nc, p->k,
         p->c + i0 + (ptrdiff_t) j0 * p->ldc, p->ldc, p->accumulate);
}

static void product(int transa, const double *a, const float *fa, ptrdiff_t lda,
                    const double *b, const float *fb, ptrdiff_t ldb, int m, int n, int k,
                    double *c, ptrdiff_t ldc, int accumulate, int upper, int nthreads)
{
    if (m <= 0 || n <= 0) return;
    product_job p = {a, b, fa, fb, lda, ldb, ldc, m, n, k, accumulate, transa, c,
                     (m + TILE - 1) / TILE, (n + TILE - 1) / TILE, NULL, TILE};
    /* a float multiply-add costs about half a double one */
    double work = (double) m * (double) n * (double) (k > 0 ? k : 1) / (upper ? 2.0 : 1.0) /
                  (fb ? 2.0 : 1.0);
    const int panel = fb ? 48 : 24;    /* the widest micro-panel of the kernels */
    int nth = bochner_threads_for(nthreads, work);
    if (!upper && p.tm * p.tn < nth) {
        /* a thin result (as K_b U with one column, falkon's passes): fewer rows per
         * tile, whole 24-row micro-panels, so every thread gets some; an entry is the
         * same chain whatever its tile */
        int r = (m + nth - 1) / nth;
        p.trows = (r + panel - 1) / panel * panel;
        p.tm = (m + p.trows - 1) / p.trows;
    }
    R_xlen_t ntiles = p.tm * p.tn;
    if (upper) {
        /* tiles on and above the diagonal: rows i0 < j0 + TILE */
        p.tiles = (R_xlen_t *) R_alloc((size_t) ntiles, sizeof(R_xlen_t));
        R_xlen_t q = 0;
        for (R_xlen_t bj = 0; bj < p.tn; bj++)
            for (R_xlen_t bi = 0; bi <= bj && bi < p.tm; bi++) p.tiles[q++] = bi + bj * p.tm;
        ntiles = q;
    }
    bochner_parallel_blocks(ntiles, nth, TILES_PER_CHECK, product_tile, &p);
}

void bochner_product(const double *a, ptrdiff_t lda, const double *b, ptrdiff_t ldb,
                     int m, int n, int k, double *c, ptrdiff_t ldc, int accumulate,
                     int upper, int nthreads)
{
    product(0, a, NULL, lda, b, NULL, ldb, m, n, k, c, ldc, accumulate, upper, nthreads);
}

/* c (m x n) = [c +] t(a) %*% b, a (k x m, lda): Z'Z and Z'Y straight from Z's columns */
void bochner_crossproduct(const double *a, ptrdiff_t lda, const double *b, ptrdiff_t ldb,
                          int m, int n, int k, double *c, ptrdiff_t ldc, int accumulate,
                          int upper, int nthreads)
{
    product(1, a, NULL, lda, b, NULL, ldb, m, n, k, c, ldc, accumulate, upper, nthreads);
}

/* The same products of float operands into double results (sgemm.c: float K-blocks of 256
 * summed in double): c (m x n) = [c +] a %*% b, or t(a) %*% b with transa, a and b float.
 * Tiles, strips and threads as above, so the results are identical for any thread count. */
void bochner_sproduct(int transa, const float *a, ptrdiff_t lda, const float *b,
                      ptrdiff_t ldb, int m, int n, int k, double *c, ptrdiff_t ldc,
                      int accumulate, int upper, int nthreads)
{
    product(transa, NULL, a, lda, NULL, b, ldb, m, n, k, c, ldc, accumulate, upper, nthreads);
}

/* c (m x n) = a %*% b with a float and b double, few columns (gemm.c's bochner_gemm_xf,
 * which reads a in place; falkon's passes call it with at most 8): the
 * same doubles as bochner_product() on a widened copy of a, reading half the bytes of a */
void bochner_product_xf(const float *a, ptrdiff_t lda, const double *b, ptrdiff_t ldb, int m,
                        int n, int k, double *c, ptrdiff_t ldc, int nthreads)
{
    product(0, NULL, a, lda, b, NULL, ldb, m, n, k, c, ldc, 0, 0, nthreads);
}

/* Copy the strict upper triangle of the square matrix g (n x n) to the
 * lower: blocks of MIRROR columns of the lower triangle, threaded, each
 * copied tile by tile so that the strided reads stay in cache. */
#define MIRROR 64
typedef struct {
    double *g;
    R_xlen_t n;
} mirror_job;

static void mirror_block(void *ctx, R_xlen_t blk, int thread)
{
    (void) thread;
    const mirror_job *p = (const mirror_job *) ctx;
    R_xlen_t n = p->n, j0 = blk * MIRROR, j1 = n - j0 < MIRROR ? n : j0 + MIRROR;
    double *g = p->g;
    for (R_xlen_t i0 = j0; i0 < n; i0 += MIRROR) {
        R_xlen_t i1 = n - i0 < MIRROR ? n : i0 + MIRROR;
        for (R_xlen_t j = j0; j < j1; j++)
            for (R_xlen_t i = (i0 > j + 1 ? i0 : j + 1); i < i1; i++)
                g[i + j * n] = g[j + i * n];
    }
}

void bochner_mirror_upper(double *g, R_xlen_t n, int nthreads)
{
    mirror_job p = {g, n};
    bochner_parallel_blocks((n + MIRROR - 1) / MIRROR,
                            bochner_threads_for(nthreads, (double) n * (double) n), 4,
                            mirror_block, &p);
}

/* t (ncol x nrow, leading dimension ldt) = transpose of x (nrow x ncol,
 * leading dimension ldx), in cache blocks. */
void bochner_transpose(const double *x, ptrdiff_t ldx, int nrow, int ncol, double *t,
                       ptrdiff_t ldt)
{
    enum { B = 32 };
    for (int j0 = 0; j0 < ncol; j0 += B)
        for (int i0 = 0; i0 < nrow; i0 += B) {
            int j1 = ncol - j0 < B ? ncol : j0 + B, i1 = nrow - i0 < B ? nrow : i0 + B;
            for (int j = j0; j < j1; j++)
                for (int i = i0; i < i1; i++)
                    t[j + (ptrdiff_t) i * ldt] = x[i + (ptrdiff_t) j * ldx];
        }
}

/* ------------------------------------------------------------------------ */
/* The moments fold: Z'WZ and Z'WY of a tall Z over row blocks that R hands
 * over one at a time (R drives the loop; C never calls back into R; the
 * state lives in an R object, api_products.c).  Centred about the weighted
 * column means of the whole of Z and Y; to keep the centring from
 * cancelling digits, the products are accumulated about the (unweighted)
 * means of the first block, s and t, and corrected at the end:
 *   Zc'WZc = (Z - s)'W(Z - s) - N (zbar - s)(zbar - s)'
 *   Zc'WYc = (Z - s)'W(Y - t) - N (zbar - s)(ybar - t)'
 * with N = sum(w).  Memory: D^2 + D m plus two copies of a block; Z is
 * never held. */

/* The column means of x (nr x ncol) into mean, zeros into sum. */
static void column_means(const double *x, int nr, int ncol, double *mean, double *sum)
{
    for (int j = 0; j < ncol; j++) {
        const double *xj = x + (ptrdiff_t) j * nr;
        double a = 0.0;
        for (int i = 0; i < nr; i++) a += xj[i];
        mean[j] = a / nr;
        sum[j] = 0.0;
    }
}

/* out = x - shift (column by column), adding the columns of out (times the
 * row weights w, unless w is NULL) to sum. */
static void shifted_copy(const double *x, int nr, int ncol, const double *shift,
                         const double *w, double *out, double *sum)
{
    for (int j = 0; j < ncol; j++) {
        const double *xj = x + (ptrdiff_t) j * nr;
        double *oj = out + (ptrdiff_t) j * nr, a = sum[j];
        for (int i = 0; i < nr; i++) {
            oj[i] = xj[i] - shift[j];
            a += w ? w[i] * oj[i] : oj[i];
        }
        sum[j] = a;
    }
}

/* zc = z - shift and, when there are row weights w, zw = zc times w row by row, a block of
 * columns at a time, adding the columns of zc (weighted) to sum, each column in row order.
 * The products then read zc (or zw) by columns, as t(.) %*% . (bochner_crossproduct). */
#define SHIFT_COLS 32
typedef struct {
    const double *z;
    int nr, ncol;
    const double *shift, *w;
    double *zc, *zw, *sum;
} shift_job;

static void shift_block(void *ctx, R_xlen_t blk, int thread)
{
    (void) thread;
    const shift_job *p = (const shift_job *) ctx;
    int j0 = (int) blk * SHIFT_COLS, nc = p->ncol - j0 < SHIFT_COLS ? p->ncol - j0 : SHIFT_COLS;
    ptrdiff_t off = (ptrdiff_t) j0 * p->nr;
    shifted_copy(p->z + off, p->nr, nc, p->shift + j0, p->w, p->zc + off, p->sum + j0);
    if (p->w)
        for (int j = 0; j < nc; j++) {
            const double *cj = p->zc + off + (ptrdiff_t) j * p->nr;
            double *wj = p->zw + off + (ptrdiff_t) j * p->nr;
            for (int i = 0; i < p->nr; i++) wj[i] = cj[i] * p->w[i];
        }
}

/* The first block sets the shifts (its column means) and zeroes the sums;
 * zz, zy and ysq are zeroed by the caller. */
void bochner_moments_start(const bochner_moments *mo, const double *z, const double *y, int nr)
{
    column_means(z, nr, mo->D, mo->s, mo->zsum);
    column_means(y, nr, mo->m, mo->t, mo->ysum);
    for (int j = 0; j < mo->m; j++) mo->ysq[j] = 0.0;
    mo->acc[0] = mo->acc[1] = 0.0;
}

/* A block of nr rows: z (nr x D), y (nr x m), w NULL or nr weights.  single: the
 * shifted features (and the weighted ones) rounded to float, Z'WZ the float product summed
 * in double (sgemm.c) and Z'WY the rounded features times Yc in double: the error bound
 * of gp.c's header (2^-23 |Zc|'|Zc| for the rounding, 1.6e-5 for the float K-blocks of
 * 256 rows, which start at the block's first row), on the centred features. */
void bochner_moments_add(const bochner_moments *mo, const double *z, const double *y,
                         const double *wt, int nr, int single, int nth)
{
    int D = mo->D, m = mo->m;
    /* scratch for this block (R_alloc: freed when the call returns) */
    double *zc = (double *) R_alloc((size_t) nr * (size_t) D, sizeof(double));
    double *yc = (double *) R_alloc((size_t) nr * (size_t) (m > 0 ? m : 1), sizeof(double));
    double *zw = wt ? (double *) R_alloc((size_t) nr * (size_t) D, sizeof(double)) : NULL;
    shift_job sj = {z, nr, D, mo->s, wt, zc, zw, mo->zsum};
    bochner_parallel_blocks((D + SHIFT_COLS - 1) / SHIFT_COLS,
                            bochner_threads_for(nth, 3.0 * nr * (double) D), 64,
                            shift_block, &sj);
    shifted_copy(y, nr, m, mo->t, wt, yc, mo->ysum);
    for (int j = 0; j < m; j++) {
        const double *yj = yc + (ptrdiff_t) j * nr;
        double a = mo->ysq[j];
        for (int i = 0; i < nr; i++) a += (wt ? wt[i] : 1.0) * yj[i] * yj[i];
        mo->ysq[j] = a;
    }
    double wsum = 0.0;
    if (wt) for (int i = 0; i < nr; i++) wsum += wt[i];
    else wsum = nr;
    const double *zl = wt ? zw : zc;    /* the left factor: W Zc */
    if (single) {
        R_xlen_t len = (R_xlen_t) nr * D;
        float *fc = (float *) R_alloc((size_t) len, sizeof(float));
        float *fl = fc;
        bochner_round_float(zc, len);
        bochner_to_float(zc, len, fc);
        if (wt) {
            fl = (float *) R_alloc((size_t) len, sizeof(float));
            bochner_round_float(zw, len);
            bochner_to_float(zw, len, fl);
        }
        bochner_sproduct(1, fl, nr, fc, nr, D, D, nr, mo->zz, D, 1, 1, nth);
    } else {
        bochner_crossproduct(zl, nr, zc, nr, D, D, nr, mo->zz, D, 1, 1, nth);
    }
    if (m > 0) bochner_crossproduct(zl, nr, yc, nr, D, m, nr, mo->zy, D, 1, 0, nth);
    mo->acc[0] += wsum;
    mo->acc[1] += nr;
}

/* The end of the fold: zz and zy corrected for the shifts in place (zz
 * whole, both triangles), and zbar (D), ybar and yy = diag(Yc'WYc) (m). */
void bochner_moments_finish(const bochner_moments *mo, double *zbar, double *ybar, double *yy,
                            int nth)
{
    int D = mo->D, m = mo->m;
    double n = mo->acc[0], *g = mo->zz, *r = mo->zy;
    const double *zsum = mo->zsum, *ysum = mo->ysum;
    for (int j = 0; j < D; j++) {
        double dj = zsum[j] / n;
        for (int i = 0; i <= j; i++) g[i + (ptrdiff_t) j * D] -= n * (zsum[i] / n) * dj;
    }
    for (int j = 0; j < m; j++) {
        double dj = ysum[j] / n;
        for (int i = 0; i < D; i++) r[i + (ptrdiff_t) j * D] -= n * (zsum[i] / n) * dj;
    }
    bochner_mirror_upper(g, D, nth);
    for (int j = 0; j < D; j++) zbar[j] = mo->s[j] + zsum[j] / n;
    for (int j = 0; j < m; j++) {
        ybar[j] = mo->t[j] + ysum[j] / n;
        double u = mo->ysq[j] - ysum[j] * (ysum[j] / n);
        yy[j] = u > 0.0 ? u : 0.0;
    }
}
