/* Gaussian processes on random Fourier features (sparse-spectrum GP).
 *
 * Features of the pair map, column 2j = a_j cos(w_j.x), 2j+1 = a_j sin(w_j.x)
 * (amplitudes a_j: sqrt(1/D) times the signal scale, or a spectral mixture
 * component's sqrt(w_q / D_q)).  With m = 2D columns and A = Z'Z + lambda I:
 *   gp_stats:    Z'Z (m x m) and Z'y, one pass over row blocks whose
 *                features are computed on the fly (never the n x m matrix);
 *   gp_gradient: with C = Z Z' + s2 I, u = C^-1 y = (y - Z alpha) / s2 (n,
 *                computed per block) and alpha = A^-1 Z'y, the matrix
 *                G = u alpha' - Z A^-1 is such that dL/dZ_ik = G_ik for the
 *                log marginal likelihood L; one more pass returns
 *                M = X' (Zc o Gs - Zs o Gc) (d x D), so that
 *                dL/dtheta = sum_jp (d w_jp / d theta) M_pj, and the column
 *                sums of Z o G (for the amplitudes).
 *   gp_chol:     the upper Cholesky factor R of a symmetric positive definite
 *                matrix and its inverse (A^-1 = R^-1 R^-T), on the package's
 *                Cholesky (cholesky.c).
 * With case weights (sw = their square roots, else NULL) every row of Z is
 * scaled by sw_i and y is passed already scaled: the model of noise
 * variance s_n^2 / w_i is then the unweighted one on the scaled rows.
 * Products run on the package's kernel (products.c, gemm.c) with its
 * threads: Z'Z is only its upper triangle, read straight from the block's
 * columns (gemm.c's transposed-A path), then mirrored once.
 * Single precision (gp_stats' single, rff_gp(control = list(precision))):
 * each block's features are rounded to float (relative error <= 2^-24 an
 * entry) and Z'Z is the float product summed in double (sgemm.c), Z'y the
 * rounded features times y in double.  The bound relied on: a product of two
 * floats is exact in double, so rounding Z costs <= 2^-23 |Z|'|Z| an entry,
 * and the float sums inside sgemm.c's K-blocks of 256 rows add at most
 * 1.6e-5 |Z|'|Z| (sgemm.c's header; about 1e-6 on average); the sums across
 * K-blocks and blocks are double.  The Cholesky, the solves and the
 * likelihood stay double (R/fit-gp-optim.R).  Blocks are GP_ROWS_SINGLE rows,
 * a multiple of 256, so the K-blocks fall at multiples of 256 rows whatever
 * the thread count and the block length (and for chunks of multiples of 256
 * rows), and Z'Z takes them in the same order: the same sums.  The cost at
 * n = 1e6, D = 1024 is the n (2D)^2 / 2 multiply-adds of that triangle
 * (bench/gp.md: the kernel runs near the core's peak).  The blocks do not
 * depend on the thread count, so neither do the results. */
#include "bochner.h"
#include <string.h>
#include <math.h>

#define GP_ROWS 1024          /* rows per block of features */
/* rows per call of single precision's float product (its features still made GP_ROWS
 * at a time): each call packs its panels and adds its K-blocks' float sums into the whole
 * of Z'Z (16 MB of double at D = 1024), so longer calls spend less of the pass on both;
 * with 4096 rows the 2-thread pass at n = 1e5, D = 1024 took 2.54-2.57 s against
 * 2.65-2.77 s (alternating runs; bench/investigations/feature-precision.md) */
#define GP_ROWS_SINGLE 4096
/* Each block's transform and products take their scratch with R_alloc; the loops
 * release it per block (vmaxget / vmaxset), else it stayed until the .Call returned:
 * 0.54 GB at n = 1e6, D = 512 on one thread and 1.05 GB on two (Rprofmem). */

/* zb (nr x 2D): the pair map of the block (cos and sin of each argument
 * computed together, features.c), columns scaled by amp and, with case
 * weights, rows by sw (the square roots of the weights of the block); the
 * scaling is left to the caller when scale is 0 (single precision does it
 * in its rounding pass, the same products) */
typedef struct {
    double *zb;
    const double *amp, *sw;
    int nr;
} scale_job;

static void scale_pair(void *ctx, R_xlen_t j, int thread)
{
    (void) thread;
    const scale_job *p = (const scale_job *) ctx;
    const int nr = p->nr;
    const double a = p->amp[j], *sw = p->sw;
    double *c = p->zb + (R_xlen_t) (2 * j) * nr, *s = c + nr;
    if (sw) {
        for (int i = 0; i < nr; i++) {
            c[i] *= a * sw[i];
            s[i] *= a * sw[i];
        }
    } else {
        for (int i = 0; i < nr; i++) {
            c[i] *= a;
            s[i] *= a;
        }
    }
}

static void block_features(const double *xb, int nr, int d, const double *w, int D,
                           const double *amp, const double *sw, double *zb, int scale,
                           int nthreads)
{
    bochner_fourier_transform(xb, nr, d, w, D, NULL, 1.0, zb, nthreads);
    if (!scale) return;
    scale_job sj = {zb, amp, sw, nr};
    bochner_parallel_blocks(D, bochner_threads_for(nthreads, 2.0 * (double) nr * D), D,
                            scale_pair, &sj);
}

/* Single precision: zf = zb scaled (as scale_pair) and rounded to float, and zy += t(zf) y
 * in double (each float product exact), one column per task: one read of zb, threaded,
 * each column's sum in row order whatever the thread count. */
typedef struct {
    const double *zb, *y, *amp, *sw;
    float *zf;                  /* the block's rows of the float block, leading dimension ldf */
    double *zy;
    int nr, ldf;
} round_job;

static void round_column(void *ctx, R_xlen_t k, int thread)
{
    (void) thread;
    const round_job *p = (const round_job *) ctx;
    const double *z = p->zb + k * p->nr, a = p->amp[k / 2], *sw = p->sw;
    float *f = p->zf + k * p->ldf;
    double s = 0.0;
    if (sw) {
        for (int i = 0; i < p->nr; i++) {
            f[i] = (float) (z[i] * (a * sw[i]));
            s += (double) f[i] * p->y[i];
        }
    } else {
        for (int i = 0; i < p->nr; i++) {
            f[i] = (float) (z[i] * a);
            s += (double) f[i] * p->y[i];
        }
    }
    p->zy[k] += s;
}

/* zf (nr x m, nr <= GP_ROWS_SINGLE): the float features of rows r0 .. r0 + nr, made
 * GP_ROWS rows at a time into zb, so that each double block (16 MB at D = 1024) is
 * rounded while it is still in cache; zy += t(zf) y */
static void single_block(const double *x, R_xlen_t n, int d, R_xlen_t r0, int nr,
                         const double *w, int D, const double *amp, const double *y,
                         const double *sw, double *xb, double *zb, float *zf, double *zy,
                         int nthreads)
{
    int m = 2 * D;
    for (int s0 = 0; s0 < nr; s0 += GP_ROWS) {
        int ns = nr - s0 < GP_ROWS ? nr - s0 : GP_ROWS;
        bochner_copy_rows(x, n, d, r0 + s0, ns, xb);
        block_features(xb, ns, d, w, D, amp, NULL, zb, 0, nthreads);
        round_job rj = {zb, y + r0 + s0, amp, sw ? sw + r0 + s0 : NULL, zf + s0, zy, ns, nr};
        /* one parallel region a block (the block's loop checks for interrupts): on
         * a loaded machine each region's join can wait for a time slice */
        bochner_parallel_blocks(m, bochner_threads_for(nthreads, 2.0 * (double) ns * m), m,
                                round_column, &rj);
    }
}

int bochner_gp_stats(const double *x, R_xlen_t n, int d, const double *w, int D,
                     const double *amp, const double *y, const double *sw, int single,
                     double *zz, double *zy, int nthreads)
{
    int m = 2 * D;
    int rows = n < GP_ROWS ? (int) n : GP_ROWS;
    int srows = n < GP_ROWS_SINGLE ? (int) n : GP_ROWS_SINGLE;
    double *xb = (double *) R_alloc((size_t) rows * (size_t) d, sizeof(double));
    double *zb = (double *) R_alloc((size_t) rows * (size_t) m, sizeof(double));
    float *zf = single ? (float *) R_alloc((size_t) srows * (size_t) m, sizeof(float)) : NULL;
    memset(zz, 0, sizeof(double) * (size_t) m * (size_t) m);
    memset(zy, 0, sizeof(double) * (size_t) m);
    if (single) {
        /* Z'y from the same float values as Z'Z (one perturbed Z for both); the upper
         * triangle of Z'Z read straight from zf's columns */
        for (R_xlen_t r0 = 0; r0 < n; r0 += srows) {
            int nr = n - r0 < srows ? (int) (n - r0) : srows;
            const void *vmax = vmaxget();
            single_block(x, n, d, r0, nr, w, D, amp, y, sw, xb, zb, zf, zy, nthreads);
            bochner_sproduct(1, zf, nr, zf, nr, m, m, nr, zz, m, 1, 1, nthreads);
            vmaxset(vmax);
            R_CheckUserInterrupt();
        }
        bochner_mirror_upper(zz, m, nthreads);
        return BOCHNER_OK;
    }
    for (R_xlen_t r0 = 0; r0 < n; r0 += rows) {
        int nr = n - r0 < rows ? (int) (n - r0) : rows;
        const void *vmax = vmaxget();
        bochner_copy_rows(x, n, d, r0, nr, xb);
        block_features(xb, nr, d, w, D, amp, sw ? sw + r0 : NULL, zb, 1, nthreads);
        for (int k = 0; k < m; k++) {
            const double *zk = zb + (R_xlen_t) k * nr, *yb = y + r0;
            double s = 0.0;
            for (int i = 0; i < nr; i++) s += zk[i] * yb[i];
            zy[k] += s;
        }
        /* the upper triangle only, t(zb) %*% zb read straight from zb's columns (no
         * transposed copy) */
        bochner_crossproduct(zb, nr, zb, nr, m, m, nr, zz, m, 1, 1, nthreads);
        vmaxset(vmax);
        R_CheckUserInterrupt();
    }
    bochner_mirror_upper(zz, m, nthreads);
    return BOCHNER_OK;
}

int bochner_gp_gradient(const double *x, R_xlen_t n, int d, const double *w, int D,
                        const double *amp, const double *y, const double *sw,
                        const double *alpha, const double *ainv, double s2, double *M,
                        double *csum, int nthreads)
{
    int m = 2 * D;
    int rows = n < GP_ROWS ? (int) n : GP_ROWS;
    double *xb = (double *) R_alloc((size_t) rows * (size_t) d, sizeof(double));
    double *xt = (double *) R_alloc((size_t) rows * (size_t) d, sizeof(double));
    double *zb = (double *) R_alloc((size_t) rows * (size_t) m, sizeof(double));
    double *pb = (double *) R_alloc((size_t) rows * (size_t) m, sizeof(double));
    double *hb = (double *) R_alloc((size_t) rows * (size_t) D, sizeof(double));
    double *ub = (double *) R_alloc((size_t) rows, sizeof(double));
    memset(M, 0, sizeof(double) * (size_t) d * (size_t) D);
    memset(csum, 0, sizeof(double) * (size_t) m);
    for (R_xlen_t r0 = 0; r0 < n; r0 += rows) {
        int nr = n - r0 < rows ? (int) (n - r0) : rows;
        const void *vmax = vmaxget();
        bochner_copy_rows(x, n, d, r0, nr, xb);
        block_features(xb, nr, d, w, D, amp, sw ? sw + r0 : NULL, zb, 1, nthreads);
        /* pb = Z A^-1, then G = u alpha' - pb in place */
        bochner_product(zb, nr, ainv, m, nr, m, m, pb, nr, 0, 0, nthreads);
        /* u = (y - Z alpha) / s2 on the block */
        for (int i = 0; i < nr; i++) ub[i] = y[r0 + i];
        for (int k = 0; k < m; k++) {
            const double *z = zb + (R_xlen_t) k * nr;
            double ak = alpha[k];
            for (int i = 0; i < nr; i++) ub[i] -= z[i] * ak;
        }
        for (int i = 0; i < nr; i++) ub[i] /= s2;
        for (int k = 0; k < m; k++) {
            double *g = pb + (R_xlen_t) k * nr, ak = alpha[k], s = 0.0;
            const double *z = zb + (R_xlen_t) k * nr;
            for (int i = 0; i < nr; i++) {
                g[i] = ub[i] * ak - g[i];
                s += z[i] * g[i];
            }
            csum[k] += s;
        }
        for (int j = 0; j < D; j++) {
            const double *zc = zb + (R_xlen_t) (2 * j) * nr, *zs = zc + nr;
            const double *gc = pb + (R_xlen_t) (2 * j) * nr, *gs = gc + nr;
            double *h = hb + (R_xlen_t) j * nr;
            for (int i = 0; i < nr; i++) h[i] = zc[i] * gs[i] - zs[i] * gc[i];
        }
        /* M += t(xb) hb */
        bochner_transpose(xb, nr, nr, d, xt, d);
        bochner_product(xt, d, hb, nr, d, D, nr, M, d, 1, 0, nthreads);
        vmaxset(vmax);
        R_CheckUserInterrupt();
    }
    return BOCHNER_OK;
}

/* Columns of the inverse of the upper factor R (n x n): column j of R^-1 has
 * entries 0..j, by back substitution that reads R by columns. */
typedef struct {
    const double *r;
    double *ri;
    int n;
} inv_job;

static void inverse_column(void *ctx, R_xlen_t blk, int thread)
{
    (void) thread;
    const inv_job *p = (const inv_job *) ctx;
    int n = p->n, j = (int) blk;
    double *x = p->ri + (R_xlen_t) j * n;
    memset(x, 0, sizeof(double) * (size_t) n);
    x[j] = 1.0;
    for (int l = j; l >= 0; l--) {
        const double *rl = p->r + (R_xlen_t) l * n;
        double xl = x[l] / rl[l];
        x[l] = xl;
        for (int i = 0; i < l; i++) x[i] -= rl[i] * xl;
    }
}

/* r (n x n, upper Cholesky factor of a) and ri = r^-1; 0 or the failing pivot */
int bochner_gp_chol(const double *a, int n, double *r, double *ri, int nthreads)
{
    memcpy(r, a, sizeof(double) * (size_t) n * (size_t) n);
    int bad = bochner_cholesky(r, n, nthreads);
    if (bad) return bad;
    inv_job p = {r, ri, n};
    bochner_parallel_blocks(n, bochner_threads_for(nthreads, (double) n * n * n / 3.0), 16,
                            inverse_column, &p);
    return 0;
}
