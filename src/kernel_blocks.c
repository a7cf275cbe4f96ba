/* Gram blocks of the Euclidean kernels, fused on the tile in cache.
 *
 *   k(x_i, y_j) = f(max(0, |xc_i|^2 + |yc_j|^2 - 2 xc_i . yc_j))
 *
 * for the Gaussian, f(v) = exp(s v), and the Matern kernels of smoothness 1/2, 3/2 and 5/2,
 * f(v) = poly(z) exp(-z), z = s sqrt(v).  x and y are centred at the column means of y (of x
 * when y is NULL: kernels.c explains why), so the cancellation in the difference stays small.
 * Each output tile (KB_ROWS x KB_COLS) is the product xc %*% (-2 t(yc)) on the package's
 * kernel (gemm.c), then, while the tile is still in cache, the row norms, the clamp at 0 and
 * f with the vectorised exp (fastmath.c): the output is written once, not once per pass.
 * Every entry is the same chain of operations whatever tile or thread computes it, so
 * results are identical for any thread count and any row blocking of x.  With y NULL only
 * the tiles on and above the diagonal are computed, then mirrored, with exact ones on the
 * diagonal. */
#include "bochner.h"
#include <math.h>
#include <string.h>

#define KB_ROWS 480            /* a multiple of the 24- and 12-row kernels */
#define KB_COLS 64             /* a tile of 480 x 64 doubles (240 KB) stays in L2 */
#define KB_TILES_PER_CHECK 128   /* per thread: about 5-10 ms between interrupt checks */

/* Centre x (and y) and return the row norms.  The centre is the column
 * means of y when y is given, else of x: k(x, y) is then computed the same
 * way whatever other rows x comes with, so a Gram matrix against fixed
 * points y (as when predicting new rows x against training points y) is
 * identical row by row, whether the rows of x come all at once or in
 * chunks. */
void bochner_centre_and_norms(const double *x, R_xlen_t nx, const double *y, R_xlen_t ny,
                              int d, double *xc, double *yc, double *xn, double *yn)
{
    for (int k = 0; k < d; k++) {
        const double *xk = x + (R_xlen_t) k * nx;
        const double *ck = y ? y + (R_xlen_t) k * ny : xk;
        R_xlen_t nc = y ? ny : nx;
        double m = 0.0;
        for (R_xlen_t i = 0; i < nc; i++) m += ck[i];
        m /= (double) nc;
        for (R_xlen_t i = 0; i < nx; i++) xc[i + (R_xlen_t) k * nx] = xk[i] - m;
        if (y) {
            const double *yk = y + (R_xlen_t) k * ny;
            for (R_xlen_t j = 0; j < ny; j++)
                yc[j + (R_xlen_t) k * ny] = yk[j] - m;
        }
    }
    memset(xn, 0, sizeof(double) * (size_t) nx);
    for (int k = 0; k < d; k++)
        for (R_xlen_t i = 0; i < nx; i++) {
            double v = xc[i + (R_xlen_t) k * nx];
            xn[i] += v * v;
        }
    if (y) {
        memset(yn, 0, sizeof(double) * (size_t) ny);
        for (int k = 0; k < d; k++)
            for (R_xlen_t j = 0; j < ny; j++) {
                double v = yc[j + (R_xlen_t) k * ny];
                yn[j] += v * v;
            }
    }
}

typedef struct {
    int kind;
    double s;
    const double *xc, *bt, *xn, *yn;   /* bt = -2 t(yc), d x ny */
    R_xlen_t nx, ny;
    R_xlen_t ldo;                       /* leading dimension of out */
    int d;
    double *out;
    R_xlen_t tm;                        /* tiles down */
    const R_xlen_t *tiles;              /* NULL: every tile; else the list (upper tiles) */
} kb_job;

/* f of one column segment: v holds the clamped squared distances (overwritten) */
static void finish(int kind, double s, double *col, double *v, int n)
{
    if (kind == BOCHNER_BLOCK_GAUSSIAN) {
        bochner_exp_scaled(col, v, n, s);
        return;
    }
    for (int i = 0; i < n; i++) v[i] = sqrt(v[i]) * s;          /* z */
    bochner_exp_scaled(col, v, n, -1.0);                         /* exp(-z) */
    if (kind == BOCHNER_BLOCK_MATERN15)
        for (int i = 0; i < n; i++) col[i] = (1.0 + v[i]) * col[i];
    else if (kind == BOCHNER_BLOCK_MATERN25)
        for (int i = 0; i < n; i++) col[i] = (1.0 + v[i] + v[i] * v[i] / 3.0) * col[i];
}

static void kb_tile(void *ctx, R_xlen_t t, int thread)
{
    (void) thread;
    const kb_job *p = (const kb_job *) ctx;
    R_xlen_t id = p->tiles ? p->tiles[t] : t;
    R_xlen_t i0 = (id % p->tm) * KB_ROWS, j0 = (id / p->tm) * KB_COLS;
    int mr = (int) (p->nx - i0 < KB_ROWS ? p->nx - i0 : KB_ROWS);
    int nc = (int) (p->ny - j0 < KB_COLS ? p->ny - j0 : KB_COLS);
    double *o = p->out + i0 + j0 * p->ldo;
    bochner_gemm(p->xc + i0, p->nx, p->bt + j0 * p->d, p->d, mr, nc, p->d, o, p->ldo, 0);
    double v[KB_ROWS];
    const double *xn = p->xn + i0;
    for (int j = 0; j < nc; j++) {
        double *col = o + (R_xlen_t) j * p->ldo, ynj = p->yn[j0 + j];
        if (p->kind == BOCHNER_BLOCK_GAUSSIAN) {
            bochner_exp_distances(col, v, xn, mr, ynj, p->s);   /* one vector loop */
            continue;
        }
        for (int i = 0; i < mr; i++) {
            double u = col[i] + xn[i] + ynj;
            v[i] = u > 0.0 ? u : 0.0;
        }
        finish(p->kind, p->s, col, v, mr);
    }
}

/* The side of fixed points y (ny x d) of the blocks k(x, y) for any rows x, computed
 * once (falkon's passes evaluate k(X_b, C) for block after block against the same
 * centres C): their column means (the centre), bt = -2 t(y - centre) (d x ny) and the
 * squared norms yn of the centred rows.  The same numbers as
 * bochner_centre_and_norms() gives, so blocks from it equal the whole matrix's. */
void bochner_dk_prepare(const double *y, R_xlen_t ny, int d, double *centre, double *bt,
                        double *yn)
{
    memset(yn, 0, sizeof(double) * (size_t) ny);
    for (int k = 0; k < d; k++) {
        const double *yk = y + (R_xlen_t) k * ny;
        double m = 0.0;
        for (R_xlen_t j = 0; j < ny; j++) m += yk[j];
        m /= (double) ny;
        centre[k] = m;
        for (R_xlen_t j = 0; j < ny; j++) {
            double v = yk[j] - m;
            yn[j] += v * v;
            bt[k + (R_xlen_t) j * d] = -2.0 * v;
        }
    }
}

static void run_tiles(kb_job *p, int self, int nthreads)
{
    R_xlen_t nx = p->nx, ny = p->ny;
    R_xlen_t tn = (ny + KB_COLS - 1) / KB_COLS, ntiles = p->tm * tn;
    if (self) {
        /* tiles holding an entry on or above the diagonal: i0 < j0 + KB_COLS */
        R_xlen_t *list = (R_xlen_t *) R_alloc((size_t) ntiles, sizeof(R_xlen_t)), q = 0;
        for (R_xlen_t bj = 0; bj < tn; bj++)
            for (R_xlen_t bi = 0; bi < p->tm && bi * KB_ROWS < (bj + 1) * KB_COLS; bi++)
                list[q++] = bi + bj * p->tm;
        p->tiles = list;
        ntiles = q;
    }
    double work = (double) nx * (double) ny * (2.0 * p->d + 20.0) / (self ? 2.0 : 1.0);
    bochner_parallel_blocks(ntiles, bochner_threads_for(nthreads, work), KB_TILES_PER_CHECK,
                            kb_tile, p);
}

/* The job of the rows of x (nx rows, leading dimension ldx) against prepared points: the
 * rows centred at 'centre' into xc (nx x d) and their squared norms into xn. */
static kb_job rows_job(int kind, double s, const double *centre, const double *bt,
                       const double *yn, R_xlen_t ny, int d, const double *x, R_xlen_t ldx,
                       R_xlen_t nx, double *out, R_xlen_t ldo, double *xc, double *xn)
{
    memset(xn, 0, sizeof(double) * (size_t) nx);
    for (int k = 0; k < d; k++) {
        const double *xk = x + (R_xlen_t) k * ldx;
        double *ck = xc + (R_xlen_t) k * nx, m = centre[k];
        for (R_xlen_t i = 0; i < nx; i++) {
            double v = xk[i] - m;
            ck[i] = v;
            xn[i] += v * v;
        }
    }
    kb_job p = {kind, s, xc, bt, xn, yn, nx, ny, ldo, d, out, (nx + KB_ROWS - 1) / KB_ROWS,
                NULL};
    return p;
}

/* out (nx x ny, leading dimension ldo >= nx) = the kernel of the rows of x and the
 * points bochner_dk_prepare() was given (centre, bt, yn); kind and s as for
 * bochner_distance_kernel_blocks().  Written by the threads' tiles, straight into out
 * (a block of a larger matrix, as falkon's K_nm cache: no copy, and the first touch of
 * fresh pages is spread over the threads). */
void bochner_dk_rows(int kind, double s, const double *centre, const double *bt,
                     const double *yn, R_xlen_t ny, int d, const double *x, R_xlen_t nx,
                     double *out, R_xlen_t ldo, int nthreads)
{
    if (nx == 0 || ny == 0) return;
    double *xc = (double *) R_alloc((size_t) nx * (size_t) (d > 0 ? d : 1), sizeof(double));
    double *xn = (double *) R_alloc((size_t) nx, sizeof(double));
    kb_job p = rows_job(kind, s, centre, bt, yn, ny, d, x, nx, nx, out, ldo, xc, xn);
    run_tiles(&p, 0, nthreads);
}

/* The same block for rows i0 .. i0 + nx - 1 of x (n x d), on the calling thread alone and
 * in the caller's scratch xc (nx x d) and xn (nx): no R API, so a thread can evaluate its
 * own block (falkon's passes, a group of rows per thread).  The same doubles as
 * bochner_dk_rows(): the same centring and norms, the same tiles. */
void bochner_dk_rows_serial(int kind, double s, const double *centre, const double *bt,
                            const double *yn, R_xlen_t ny, int d, const double *x, R_xlen_t n,
                            R_xlen_t i0, int nx, double *out, R_xlen_t ldo, double *xc,
                            double *xn)
{
    if (nx == 0 || ny == 0) return;
    kb_job p = rows_job(kind, s, centre, bt, yn, ny, d, x + i0, n, nx, out, ldo, xc, xn);
    R_xlen_t ntiles = p.tm * ((ny + KB_COLS - 1) / KB_COLS);
    for (R_xlen_t t = 0; t < ntiles; t++) kb_tile(&p, t, 0);
}

/* out (nx x ny) = the kernel of the rows of x and y (y NULL: of x with itself); kind a
 * BOCHNER_BLOCK_* code, s its scale: -1/(2 sigma^2) for the Gaussian, sqrt(2 nu)/sigma for
 * the Matern kernels. */
void bochner_distance_kernel_blocks(int kind, double s, const double *x, R_xlen_t nx,
                                    const double *y, R_xlen_t ny, int d, double *out,
                                    int nthreads)
{
    if (nx == 0 || ny == 0) return;
    size_t dd = (size_t) (d > 0 ? d : 1);
    if (y) {
        double *centre = (double *) R_alloc(dd, sizeof(double));
        double *bt = (double *) R_alloc((size_t) ny * dd, sizeof(double));
        double *yn = (double *) R_alloc((size_t) ny, sizeof(double));
        bochner_dk_prepare(y, ny, d, centre, bt, yn);
        bochner_dk_rows(kind, s, centre, bt, yn, ny, d, x, nx, out, nx, nthreads);
        return;
    }
    double *xc = (double *) R_alloc((size_t) nx * dd, sizeof(double));
    double *xn = (double *) R_alloc((size_t) nx, sizeof(double));
    bochner_centre_and_norms(x, nx, NULL, ny, d, xc, NULL, xn, NULL);
    /* bt = -2 t(xc): d x nx, so that a tile is xc %*% bt */
    double *bt = (double *) R_alloc((size_t) ny * dd, sizeof(double));
    if (d > 0) bochner_transpose(xc, nx, (int) nx, d, bt, d);
    for (R_xlen_t i = 0; i < (R_xlen_t) d * ny; i++) bt[i] *= -2.0;
    kb_job p = {kind, s, xc, bt, xn, xn, nx, ny, nx, d, out, (nx + KB_ROWS - 1) / KB_ROWS,
                NULL};
    run_tiles(&p, 1, nthreads);
    bochner_mirror_upper(out, nx, nthreads);
    for (R_xlen_t j = 0; j < nx; j++) out[j + j * nx] = 1.0;
}
