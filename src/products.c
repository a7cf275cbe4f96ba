/* Dense products on the package's own kernel (gemm.c), tiled and threaded.
 *
 *   bochner_product        c = [c +] a %*% b, optionally only the tiles on
 *                          and above the diagonal (symmetric results)
 *   bochner_crossproduct   the same for t(a) %*% b, a read by its columns (gemm.c's
 *                          bochner_gemm_tn): Z'Z with no transposed copy of Z
 *   bochner_mirror_upper, bochner_transpose   threaded / cache-blocked copies
 *   moments_step / moments_finish   .Call entry points still here (Z'Z and Z'Y
 *                          folded over row blocks of features that R computes one
 *                          block at a time: Z is never held; their state is an R
 *                          list the fold updates in place); matprod and crossprod's
 *                          wrappers are in api_products.c
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

/* c (m x n) = a %*% b with a float and b double, n <= 16 (gemm.c's bochner_gemm_xf): the
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
/* .Call entry points                                                        */

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

/* Z'WZ and Z'WY of a tall Z, folded over row blocks that R computes one at
 * a time (R drives the loop; C never calls back into R):
 *   state <- NULL; for each block: state <- moments_step(state, z, y, w)
 *   moments_finish(state)
 * z an nr x D and y an nr x m double matrix (the same D and m for every
 * block, nr >= 1), w NULL or nr non-negative row weights (NULL: W = I).
 * Centred about the weighted column means of the whole of Z and Y; to keep
 * the centring from cancelling digits, the products are accumulated about
 * the (unweighted) means of the first block, s and t, and corrected at the
 * end:
 *   Zc'WZc = (Z - s)'W(Z - s) - N (zbar - s)(zbar - s)'
 *   Zc'WYc = (Z - s)'W(Y - t) - N (zbar - s)(ybar - t)'
 * with N = sum(w).  Memory: D^2 + D m plus two copies of a block; Z is
 * never held.  The state: bochner_fold_new() (checks.c), added to in place,
 * so no D x D copy per block. */
enum { MS_ZZ, MS_ZY, MS_S, MS_T, MS_ZSUM, MS_YSUM, MS_YSQ, MS_ACC, MS_LEN };

static SEXP moments_state(SEXP state, int D, int m, const double *z, const double *y, int nr)
{
    if (state != R_NilValue) {
        SEXP v = bochner_fold_vectors(state, "moments");
        if (ncols(VECTOR_ELT(v, MS_ZZ)) != D || ncols(VECTOR_ELT(v, MS_ZY)) != m)
            error("the block has %d and %d columns; the first had %d and %d", D, m,
                  ncols(VECTOR_ELT(v, MS_ZZ)), ncols(VECTOR_ELT(v, MS_ZY)));
        return state;
    }
    if (D < 1) error("the feature blocks must have at least one column");
    SEXP v = PROTECT(allocVector(VECSXP, MS_LEN));
    SEXP zz = bochner_alloc_output(D, D);
    SET_VECTOR_ELT(v, MS_ZZ, zz);
    SEXP zy = bochner_alloc_output(D, m);
    SET_VECTOR_ELT(v, MS_ZY, zy);
    memset(REAL(zz), 0, sizeof(double) * (size_t) XLENGTH(zz));
    if (m > 0) memset(REAL(zy), 0, sizeof(double) * (size_t) XLENGTH(zy));
    SET_VECTOR_ELT(v, MS_S, allocVector(REALSXP, D));
    SET_VECTOR_ELT(v, MS_ZSUM, allocVector(REALSXP, D));
    SET_VECTOR_ELT(v, MS_T, allocVector(REALSXP, m));
    SET_VECTOR_ELT(v, MS_YSUM, allocVector(REALSXP, m));
    SET_VECTOR_ELT(v, MS_YSQ, allocVector(REALSXP, m));
    SET_VECTOR_ELT(v, MS_ACC, allocVector(REALSXP, 2));   /* N, rows */
    column_means(z, nr, D, REAL(VECTOR_ELT(v, MS_S)), REAL(VECTOR_ELT(v, MS_ZSUM)));
    column_means(y, nr, m, REAL(VECTOR_ELT(v, MS_T)), REAL(VECTOR_ELT(v, MS_YSUM)));
    for (int j = 0; j < m; j++) REAL(VECTOR_ELT(v, MS_YSQ))[j] = 0.0;
    memset(REAL(VECTOR_ELT(v, MS_ACC)), 0, 2 * sizeof(double));
    SEXP ptr = bochner_fold_new("moments", v);
    UNPROTECT(1);
    return ptr;
}

SEXP bochner_moments_step_call(SEXP state, SEXP z, SEXP y, SEXP w, SEXP nthreads)
{
    if (!bochner_is_real_matrix(z) || !bochner_is_real_matrix(y) || nrows(z) != nrows(y) ||
        nrows(z) < 1)
        error("'z' and 'y' must be double matrices with the same rows, at least one");
    int nr = nrows(z), D = ncols(z), m = ncols(y);
    const double *wt = NULL;
    if (w != R_NilValue) {
        if (TYPEOF(w) != REALSXP || XLENGTH(w) != nr)
            error("'w' must be NULL or a double vector, one weight per row");
        wt = REAL(w);
        for (int i = 0; i < nr; i++)
            if (!(wt[i] >= 0.0) || !R_FINITE(wt[i]))
                error("the weights must be non-negative and finite");
    }
    int nth = bochner_nthreads(asInteger(nthreads));
    state = PROTECT(moments_state(state, D, m, REAL(z), REAL(y), nr));
    SEXP v = R_ExternalPtrProtected(state);
    double *s = REAL(VECTOR_ELT(v, MS_S)), *t = REAL(VECTOR_ELT(v, MS_T)),
           *zsum = REAL(VECTOR_ELT(v, MS_ZSUM)), *ysum = REAL(VECTOR_ELT(v, MS_YSUM)),
           *ysq = REAL(VECTOR_ELT(v, MS_YSQ)), *acc = REAL(VECTOR_ELT(v, MS_ACC));
    /* scratch for this block (R_alloc: freed when the call returns) */
    double *zc = (double *) R_alloc((size_t) nr * (size_t) D, sizeof(double));
    double *yc = (double *) R_alloc((size_t) nr * (size_t) (m > 0 ? m : 1), sizeof(double));
    double *zw = wt ? (double *) R_alloc((size_t) nr * (size_t) D, sizeof(double)) : NULL;
    shift_job sj = {REAL(z), nr, D, s, wt, zc, zw, zsum};
    bochner_parallel_blocks((D + SHIFT_COLS - 1) / SHIFT_COLS,
                            bochner_threads_for(nth, 3.0 * nr * (double) D), 64,
                            shift_block, &sj);
    shifted_copy(REAL(y), nr, m, t, wt, yc, ysum);
    for (int j = 0; j < m; j++) {
        const double *yj = yc + (ptrdiff_t) j * nr;
        double a = ysq[j];
        for (int i = 0; i < nr; i++) a += (wt ? wt[i] : 1.0) * yj[i] * yj[i];
        ysq[j] = a;
    }
    double wsum = 0.0;
    if (wt) for (int i = 0; i < nr; i++) wsum += wt[i];
    else wsum = nr;
    const double *zl = wt ? zw : zc;    /* the left factor: W Zc */
    bochner_crossproduct(zl, nr, zc, nr, D, D, nr, REAL(VECTOR_ELT(v, MS_ZZ)), D, 1, 1, nth);
    if (m > 0)
        bochner_crossproduct(zl, nr, yc, nr, D, m, nr, REAL(VECTOR_ELT(v, MS_ZY)), D, 1, 0, nth);
    acc[0] += wsum;
    acc[1] += nr;
    UNPROTECT(1);
    return state;
}

/* The fold's result: list(zz = Zc'WZc, zy = Zc'WYc, zbar, ybar, n = N,
 * yy = diag(Yc'WYc), rows); the state is finished (its accumulators become
 * the result). */
SEXP bochner_moments_finish_call(SEXP state, SEXP nthreads)
{
    if (state == R_NilValue) error("the moments fold has no blocks");
    int nth = bochner_nthreads(asInteger(nthreads));
    SEXP v = bochner_fold_vectors(state, "moments");
    SEXP zz = VECTOR_ELT(v, MS_ZZ), zy = VECTOR_ELT(v, MS_ZY);
    int D = ncols(zz), m = ncols(zy);
    const double *s = REAL(VECTOR_ELT(v, MS_S)), *t = REAL(VECTOR_ELT(v, MS_T)),
                 *zsum = REAL(VECTOR_ELT(v, MS_ZSUM)), *ysum = REAL(VECTOR_ELT(v, MS_YSUM)),
                 *ysq = REAL(VECTOR_ELT(v, MS_YSQ));
    double *acc = REAL(VECTOR_ELT(v, MS_ACC)), n = acc[0], rows = acc[1];
    if (!(n > 0.0)) error("the weights sum to zero");
    bochner_fold_finish(state);
    /* the correction for the shift, and the lower triangle */
    double *g = REAL(zz), *r = REAL(zy);
    for (int j = 0; j < D; j++) {
        double dj = zsum[j] / n;
        for (int i = 0; i <= j; i++) g[i + (ptrdiff_t) j * D] -= n * (zsum[i] / n) * dj;
    }
    for (int j = 0; j < m; j++) {
        double dj = ysum[j] / n;
        for (int i = 0; i < D; i++) r[i + (ptrdiff_t) j * D] -= n * (zsum[i] / n) * dj;
    }
    bochner_mirror_upper(g, D, nth);
    SEXP zbar = PROTECT(allocVector(REALSXP, D));
    SEXP ybar = PROTECT(allocVector(REALSXP, m));
    SEXP yy = PROTECT(allocVector(REALSXP, m));
    for (int j = 0; j < D; j++) REAL(zbar)[j] = s[j] + zsum[j] / n;
    for (int j = 0; j < m; j++) {
        REAL(ybar)[j] = t[j] + ysum[j] / n;
        double u = ysq[j] - ysum[j] * (ysum[j] / n);
        REAL(yy)[j] = u > 0.0 ? u : 0.0;
    }
    const char *names[] = {"zz", "zy", "zbar", "ybar", "n", "yy", "rows", ""};
    SEXP out = PROTECT(mkNamed(VECSXP, names));
    SET_VECTOR_ELT(out, 0, zz);
    SET_VECTOR_ELT(out, 1, zy);
    SET_VECTOR_ELT(out, 2, zbar);
    SET_VECTOR_ELT(out, 3, ybar);
    SET_VECTOR_ELT(out, 4, ScalarReal(n));
    SET_VECTOR_ELT(out, 5, yy);
    SET_VECTOR_ELT(out, 6, ScalarReal(rows));
    UNPROTECT(4);
    return out;
}
