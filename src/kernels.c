/* Exact kernels and Gram matrices.
 *
 * Euclidean kernels (Gaussian, Matern) get squared distances from one
 * product (the package's own, products.c), |x|^2 + |y|^2 - 2 x.y on data centred at the mean of x (centring
 * leaves distances unchanged and keeps the cancellation small); the Gaussian and the Matern
 * kernels of smoothness 1/2, 3/2, 5/2 do it tile by tile with the kernel's function fused on
 * the tile in cache (kernel_blocks.c).  Coordinate-
 * wise kernels (Laplace, Cauchy, min) accumulate over coordinates with the
 * row index innermost so that the loops vectorise over a column of the
 * output.  Dot-product kernels (polynomial, exponential) apply their
 * function to one product x y'.  All loops are blocks of
 * bochner_parallel_blocks (threads.c): threads inside a group of blocks,
 * user interrupts between groups. */
#include "bochner.h"
#include <math.h>
#include <limits.h>
#include <string.h>
#include <Rmath.h>

#define COL_CHUNK 256
/* Elementwise passes over the output run in blocks of this many entries. */
#define ELEM_BLOCK ((R_xlen_t) 1 << 16)
#define ELEM_BLOCKS_PER_CHECK 64

enum elem_kind { EL_EXP, EL_MATERN05, EL_MATERN15, EL_MATERN25, EL_POWER, EL_HORNER };

typedef struct {
    double *out;
    R_xlen_t len;
    int kind;
    double s, offset;     /* scale and offset of the argument */
    int power;            /* EL_POWER */
    const double *coef;   /* EL_HORNER: c_0 .. c_l */
    int l;
} elem_job;

static inline double matern15(double z) { return (1.0 + z) * exp(-z); }
static inline double matern25(double z) { return (1.0 + z + z * z / 3.0) * exp(-z); }

static inline double horner(const double *c, int l, double t)
{
    double v = c[l];
    for (int q = l - 1; q >= 0; q--) v = v * t + c[q];
    return v;
}

static void elem_block(void *ctx, R_xlen_t blk, int thread)
{
    (void) thread;
    const elem_job *p = (const elem_job *) ctx;
    R_xlen_t i0 = blk * ELEM_BLOCK, i1 = p->len - i0 < ELEM_BLOCK ? p->len : i0 + ELEM_BLOCK;
    double *o = p->out, s = p->s;
    switch (p->kind) {
    case EL_EXP: bochner_exp_scaled(o + i0, o + i0, i1 - i0, s); break;
    case EL_MATERN05: for (R_xlen_t i = i0; i < i1; i++) o[i] = exp(-sqrt(o[i]) * s); break;
    case EL_MATERN15: for (R_xlen_t i = i0; i < i1; i++) o[i] = matern15(sqrt(o[i]) * s); break;
    case EL_MATERN25: for (R_xlen_t i = i0; i < i1; i++) o[i] = matern25(sqrt(o[i]) * s); break;
    case EL_POWER:
        for (R_xlen_t i = i0; i < i1; i++) o[i] = R_pow_di(s * o[i] + p->offset, p->power);
        break;
    default:
        for (R_xlen_t i = i0; i < i1; i++) o[i] = horner(p->coef, p->l, o[i]);
    }
}

/* out[i] = f(out[i]) for the function p describes, threaded. */
static void elementwise(elem_job p, int nthreads)
{
    R_xlen_t nb = (p.len + ELEM_BLOCK - 1) / ELEM_BLOCK;
    bochner_parallel_blocks(nb, bochner_threads_for(nthreads, 20.0 * (double) p.len),
                            ELEM_BLOCKS_PER_CHECK, elem_block, &p);
}

static void elementwise_simple(double *out, R_xlen_t len, int kind, double s, int nthreads)
{
    elem_job p = {out, len, kind, s, 0.0, 0, NULL, 0};
    elementwise(p, nthreads);
}

/* out (na x nb) = alpha * a %*% t(b) for a (na x d), b (nb x d), column-
 * major; when b is a (self), only the upper triangle (with some entries
 * below the diagonal), for the caller to mirror. */
static void outer_products(const double *a, R_xlen_t na, const double *b,
                           R_xlen_t nb, int d, double alpha, double *out,
                           int self, int nthreads)
{
    if (na == 0 || nb == 0) return;
    if (d == 0) {
        memset(out, 0, sizeof(double) * (size_t) na * (size_t) nb);
        return;
    }
    /* bt = alpha * t(b): d x nb, so that out = a %*% bt */
    double *bt = (double *) R_alloc((size_t) d * (size_t) nb, sizeof(double));
    bochner_transpose(b, nb, (int) nb, d, bt, d);
    if (alpha != 1.0)
        for (R_xlen_t i = 0; i < (R_xlen_t) d * nb; i++) bt[i] *= alpha;
    bochner_product(a, na, bt, d, (int) na, (int) nb, d, out, na, 0, self, nthreads);
}

/* out[i, j] = max(0, out[i, j] + xn[i] + yn[j]), a block of columns at a time */
typedef struct {
    double *out;
    R_xlen_t nx;
    const double *xn, *yn;
    R_xlen_t cols;       /* columns per block */
    R_xlen_t ny;
    int upper;
} norms_job;

static void add_norms(void *ctx, R_xlen_t blk, int thread)
{
    (void) thread;
    const norms_job *p = (const norms_job *) ctx;
    R_xlen_t nx = p->nx;
    R_xlen_t j0 = blk * p->cols, j1 = p->ny - j0 < p->cols ? p->ny : j0 + p->cols;
    for (R_xlen_t j = j0; j < j1; j++) {
        double *col = p->out + j * nx, ynj = p->yn[j];
        /* self: the upper triangle only (the product left the rest unset) */
        R_xlen_t rows = p->upper && j + 1 < nx ? j + 1 : nx;
        for (R_xlen_t i = 0; i < rows; i++) {
            double v = col[i] + p->xn[i] + ynj;
            col[i] = v > 0.0 ? v : 0.0;
        }
    }
}

/* Squared distances to a few points y (ny <= FEW_POINTS), summed directly
 * over the coordinates, DIRECT_ROWS rows of x per block: no copy of x and no
 * cancellation (kernel k-means++ landmarks ask for one point at a time). */
#define FEW_POINTS 4
#define DIRECT_ROWS 1024
typedef struct {
    const double *x, *y;
    R_xlen_t nx, ny;
    int d;
    double *out;
} direct_job;

static void direct_block(void *ctx, R_xlen_t blk, int thread)
{
    (void) thread;
    const direct_job *p = (const direct_job *) ctx;
    R_xlen_t i0 = blk * DIRECT_ROWS, i1 = p->nx - i0 < DIRECT_ROWS ? p->nx : i0 + DIRECT_ROWS;
    for (R_xlen_t j = 0; j < p->ny; j++) {
        double *col = p->out + j * p->nx;
        for (R_xlen_t i = i0; i < i1; i++) col[i] = 0.0;
        for (int k = 0; k < p->d; k++) {
            const double *xk = p->x + (R_xlen_t) k * p->nx;
            double yk = p->y[j + (R_xlen_t) k * p->ny];
            for (R_xlen_t i = i0; i < i1; i++) {
                double t = xk[i] - yk;
                col[i] += t * t;
            }
        }
    }
}

/* Distances to a few points are summed directly (no product to fuse) */
static int few_points(const double *y, R_xlen_t ny)
{
    return y != NULL && ny <= FEW_POINTS;
}

/* Squared Euclidean distances into out (nx x ny). */
static void squared_distances(const double *x, R_xlen_t nx, const double *y,
                              R_xlen_t ny, int d, double *out, int nthreads)
{
    int self = (y == NULL);
    if (few_points(y, ny)) {
        direct_job p = {x, y, nx, ny, d, out};
        bochner_parallel_blocks((nx + DIRECT_ROWS - 1) / DIRECT_ROWS,
                                bochner_threads_for(nthreads, 3.0 * (double) nx * ny * d),
                                ELEM_BLOCKS_PER_CHECK, direct_block, &p);
        return;
    }
    double *xc = (double *) R_alloc((size_t) nx * (size_t) (d > 0 ? d : 1), sizeof(double));
    double *xn = (double *) R_alloc((size_t) nx, sizeof(double));
    double *yc = self ? xc : (double *) R_alloc((size_t) ny * (size_t) (d > 0 ? d : 1), sizeof(double));
    double *yn = self ? xn : (double *) R_alloc((size_t) ny, sizeof(double));
    bochner_centre_and_norms(x, nx, self ? NULL : y, ny, d, xc, self ? NULL : yc, xn,
                     self ? NULL : yn);
    outer_products(xc, nx, yc, ny, d, -2.0, out, self, nthreads);
    norms_job p = {out, nx, xn, yn, (R_xlen_t) (ELEM_BLOCK / (nx > 0 ? nx : 1)) + 1, ny, self};
    bochner_parallel_blocks((ny + p.cols - 1) / p.cols,
                            bochner_threads_for(nthreads, 2.0 * (double) nx * (double) ny),
                            ELEM_BLOCKS_PER_CHECK, add_norms, &p);
    if (self) {
        /* exact symmetry (xn[i] + yn[j] rounds unlike yn[j] + xn[i]) and
         * exact zeros on the diagonal */
        bochner_mirror_upper(out, nx, nthreads);
        for (R_xlen_t j = 0; j < ny; j++) out[j + j * nx] = 0.0;
    }
}

/* Matern correlation at scaled distance z = sqrt(2 nu) r / sigma, for any
 * nu > 0: 2^(1-nu)/Gamma(nu) z^nu K_nu(z), via the exponentially scaled
 * Bessel function so that neither z^nu nor K_nu(z) over- or underflows. */
/* log(exp(z) K_nu(z)), for z so small against nu that K_nu(z) overflows a
 * double: the upward recurrence K_{m+1} = K_{m-1} + (2m / z) K_m (stable for
 * K, and the one R's bessel_k uses) from the orders nu - floor(nu) and
 * nu - floor(nu) + 1, rescaled as it goes.  Needs floor(nu) >= 1 (bk holds
 * 2 doubles then).  +Inf when even the rescaled steps overflow (z below
 * about 1e-150 * nu). */
static double log_bessel_k_scaled(double z, double nu, double *bk)
{
    const double big = 1e150, log_big = 150.0 * M_LN10;
    double mu = nu - floor(nu);
    double km = bessel_k_ex(z, mu, 2.0, bk), k = bessel_k_ex(z, mu + 1.0, 2.0, bk);
    double logscale = 0.0, order = mu + 1.0;
    if (!R_FINITE(km) || !R_FINITE(k)) return R_PosInf;
    for (double steps = floor(nu) - 1.0; steps > 0.0; steps -= 1.0) {
        double kn = km + 2.0 * order / z * k;
        if (!R_FINITE(kn)) return R_PosInf;
        km = k;
        k = kn;
        order += 1.0;
        if (k > big) {
            k /= big;
            km /= big;
            logscale += log_big;
        }
    }
    return log(k) + logscale;
}

static double matern_bessel(double z, double nu, double lognorm, double *bk)
{
    if (z <= 0.0) return 1.0;
    double ks = bessel_k_ex(z, nu, 2.0, bk);  /* exp(z) K_nu(z) */
    double v;
    if (R_FINITE(ks)) {
        v = exp(lognorm + nu * log(z) - z) * ks;
    } else {
        /* K_nu(z) overflows (for nu = 50 below z = 2e-5, for nu = 300 below
         * z = 20): it was multiplied as Inf by z^nu = 0, giving NaN.  In
         * logs instead; where even that overflows, z is so small that the
         * correlation is 1 - z^2 / (4 (nu - 1)) to double precision (and 1
         * for nu < 1, whose overflow needs z < 1e-300). */
        double lk = nu >= 1.0 ? log_bessel_k_scaled(z, nu, bk) : R_PosInf;
        if (!R_FINITE(lk)) return nu > 1.0 ? 1.0 - z * z / (4.0 * (nu - 1.0)) : 1.0;
        v = exp(lognorm + nu * log(z) - z + lk);
    }
    return v > 1.0 ? 1.0 : v;
}

static void apply_matern(double *out, R_xlen_t len, double sigma, double nu,
                         int nthreads)
{
    R_xlen_t i;
    if (nu == 0.5) {
        elementwise_simple(out, len, EL_MATERN05, 1.0 / sigma, nthreads);
    } else if (nu == 1.5) {
        elementwise_simple(out, len, EL_MATERN15, sqrt(3.0) / sigma, nthreads);
    } else if (nu == 2.5) {
        elementwise_simple(out, len, EL_MATERN25, sqrt(5.0) / sigma, nthreads);
    } else {
        /* bessel_k_ex is R's nmath code: kept serial, with interrupts */
        double s = sqrt(2.0 * nu) / sigma;
        double lognorm = (1.0 - nu) * M_LN2 - lgammafn(nu);
        double *bk = (double *) R_alloc((size_t) floor(nu) + 1, sizeof(double));
        for (i = 0; i < len; i++) {
            if ((i & 0xFFFF) == 0) R_CheckUserInterrupt();
            out[i] = matern_bessel(sqrt(out[i]) * s, nu, lognorm, bk);
        }
    }
}

/* Coordinate-wise kernels: one output column per point of y, a block of
 * columns at a time. */
typedef struct {
    int code;
    const double *par, *x, *y;
    R_xlen_t nx, ny;
    int d;
    double *out;
    R_xlen_t cols;       /* columns per block */
} coord_job;

static void coord_block(void *ctx, R_xlen_t blk, int thread)
{
    (void) thread;
    const coord_job *p = (const coord_job *) ctx;
    const R_xlen_t nx = p->nx, ny = p->ny;
    const double *x = p->x, *y = p->y;
    const int d = p->d;
    R_xlen_t j1 = (blk + 1) * p->cols < ny ? (blk + 1) * p->cols : ny;
    for (R_xlen_t j = blk * p->cols; j < j1; j++) {
        double *col = p->out + j * nx;
        if (p->code == BK_LAPLACE) {
            double s = -1.0 / p->par[0];
            for (R_xlen_t i = 0; i < nx; i++) col[i] = 0.0;
            for (int k = 0; k < d; k++) {
                const double *xk = x + (R_xlen_t) k * nx;
                double yk = y[j + (R_xlen_t) k * ny];
                for (R_xlen_t i = 0; i < nx; i++) col[i] += fabs(xk[i] - yk);
            }
            for (R_xlen_t i = 0; i < nx; i++) col[i] = exp(col[i] * s);
        } else if (p->code == BK_CAUCHY) {
            double s = 1.0 / p->par[0];
            for (R_xlen_t i = 0; i < nx; i++) col[i] = 1.0;
            for (int k = 0; k < d; k++) {
                const double *xk = x + (R_xlen_t) k * nx;
                double yk = y[j + (R_xlen_t) k * ny];
                for (R_xlen_t i = 0; i < nx; i++) {
                    double t = (xk[i] - yk) * s;
                    col[i] /= 1.0 + t * t;
                }
            }
        } else { /* BK_MIN */
            double offset = p->par[0];
            for (R_xlen_t i = 0; i < nx; i++) col[i] = offset;
            for (int k = 0; k < d; k++) {
                const double *xk = x + (R_xlen_t) k * nx;
                double yk = y[j + (R_xlen_t) k * ny];
                for (R_xlen_t i = 0; i < nx; i++)
                    col[i] += xk[i] < yk ? xk[i] : yk;
            }
        }
    }
}

static void coordinatewise(int code, const double *par, const double *x,
                           R_xlen_t nx, const double *y, R_xlen_t ny, int d,
                           double *out, int nthreads)
{
    /* about 2^20 operations per block, at most COL_CHUNK columns */
    double per_col = (double) nx * (double) (d > 0 ? d : 1);
    R_xlen_t cols = (R_xlen_t) ((double) (1 << 20) / per_col);
    if (cols > COL_CHUNK) cols = COL_CHUNK;
    if (cols < 1) cols = 1;
    coord_job p = {code, par, x, y, nx, ny, d, out, cols};
    bochner_parallel_blocks((ny + cols - 1) / cols,
                            bochner_threads_for(nthreads, per_col * (double) ny * 4.0),
                            64, coord_block, &p);
}

/* Spectral mixture (Wilson & Adams 2013): par = (Q, w_1..w_Q, mu (Q x d),
 * ell (Q x d)), column-major; k(tau) = sum_q w_q cos(2 pi tau.mu_q)
 * exp(-sum_p tau_p^2 / (2 ell_qp^2)).  One output column per point of y, a
 * block of columns at a time, with per-thread scratch for the phase and
 * the exponent of a column. */
typedef struct {
    const double *par, *x, *y;
    R_xlen_t nx, ny;
    int d, Q;
    double *out, *scratch;
    R_xlen_t cols;
} sm_job;

static void sm_block(void *ctx, R_xlen_t blk, int thread)
{
    const sm_job *p = (const sm_job *) ctx;
    const R_xlen_t nx = p->nx, ny = p->ny;
    const int d = p->d, Q = p->Q;
    const double *w = p->par + 1, *mu = w + Q, *ell = mu + (R_xlen_t) Q * d;
    double *ph = p->scratch + (R_xlen_t) thread * 2 * nx, *ex = ph + nx;
    R_xlen_t j1 = (blk + 1) * p->cols < ny ? (blk + 1) * p->cols : ny;
    for (R_xlen_t j = blk * p->cols; j < j1; j++) {
        double *col = p->out + j * nx;
        for (R_xlen_t i = 0; i < nx; i++) col[i] = 0.0;
        for (int q = 0; q < Q; q++) {
            for (R_xlen_t i = 0; i < nx; i++) ph[i] = ex[i] = 0.0;
            for (int k = 0; k < d; k++) {
                const double *xk = p->x + (R_xlen_t) k * nx;
                double yk = p->y[j + (R_xlen_t) k * ny];
                double m = 2.0 * M_PI * mu[q + (R_xlen_t) k * Q];
                double il = 1.0 / ell[q + (R_xlen_t) k * Q];
                for (R_xlen_t i = 0; i < nx; i++) {
                    double t = xk[i] - yk, s = t * il;
                    ph[i] += t * m;
                    ex[i] += s * s;
                }
            }
            for (R_xlen_t i = 0; i < nx; i++) col[i] += w[q] * cos(ph[i]) * exp(-0.5 * ex[i]);
        }
    }
}

/* 1 + Q + 2 Q d parameters, weights non-negative, length scales positive */
int bochner_sm_check(const double *par, int npar, int d)
{
    if (npar < 1 || !(par[0] >= 1.0) || par[0] > INT_MAX) return 0;
    int Q = (int) par[0];
    if ((double) npar != 1.0 + Q + 2.0 * Q * d) return 0;
    for (int i = 1; i < npar; i++) if (!R_FINITE(par[i])) return 0;
    for (int q = 0; q < Q; q++) if (par[1 + q] < 0.0) return 0;
    for (R_xlen_t i = 1 + Q + (R_xlen_t) Q * d; i < npar; i++) if (!(par[i] > 0.0)) return 0;
    return Q;
}

static void spectral_mixture(const double *par, const double *x, R_xlen_t nx, const double *y,
                             R_xlen_t ny, int d, double *out, int nthreads)
{
    int Q = (int) par[0];
    double per_col = (double) nx * (double) (d > 0 ? d : 1) * Q;
    R_xlen_t cols = (R_xlen_t) ((double) (1 << 20) / per_col);
    if (cols > COL_CHUNK) cols = COL_CHUNK;
    if (cols < 1) cols = 1;
    int nth = bochner_threads_for(nthreads, per_col * (double) ny * 8.0);
    double *scratch = (double *) R_alloc((size_t) nth * 2 * (size_t) (nx > 0 ? nx : 1),
                                         sizeof(double));
    sm_job p = {par, x, y, nx, ny, d, Q, out, scratch, cols};
    bochner_parallel_blocks((ny + cols - 1) / cols, nth, 16, sm_block, &p);
}

/* Polynomial kernel of the dot product.  par[0] == 0: (scale t + offset)^p
 * with par = (0, p, scale, offset); par[0] == 1: sum_i c_i t^i with
 * par = (1, c_0, ..., c_l), evaluated by Horner's rule. */
static void apply_polynomial(double *out, R_xlen_t len, const double *par,
                             int npar, int nthreads)
{
    if (par[0] == 0.0) {
        elem_job p = {out, len, EL_POWER, par[2], par[3], (int) par[1], NULL, 0};
        elementwise(p, nthreads);
    } else {
        elem_job p = {out, len, EL_HORNER, 0.0, 0.0, 0, par + 1, npar - 2};
        elementwise(p, nthreads);
    }
}

/* The fused Euclidean kernel (kernel_blocks.c) that computes k(., y), if any: *kind a
 * BOCHNER_BLOCK_* code and *s its scale, or *kind = -1; a status code (the parameters'
 * checks of the Gaussian and Matern kernels). */
static int fused_kind(int code, const double *par, int npar, const double *y, R_xlen_t ny,
                      int *kind, double *s)
{
    *kind = -1;
    switch (code) {
    case BK_GAUSSIAN:
        if (npar != 1 || !(par[0] > 0) || !R_FINITE(par[0])) return BOCHNER_BAD_ARGUMENT;
        *s = -0.5 / (par[0] * par[0]);
        if (!few_points(y, ny)) *kind = BOCHNER_BLOCK_GAUSSIAN;
        return BOCHNER_OK;
    case BK_MATERN:
        /* nu is capped (R/kernels.R, matern_kernel()): the Bessel
         * recursion needs floor(nu) + 1 doubles and as many steps per entry,
         * and R's bessel_k_ex indexes them with an int */
        if (npar != 2 || !(par[0] > 0) || !R_FINITE(par[0]) || !(par[1] > 0) ||
            par[1] > BOCHNER_MATERN_NU_MAX)
            return BOCHNER_BAD_ARGUMENT;
        if (!few_points(y, ny) && (par[1] == 0.5 || par[1] == 1.5 || par[1] == 2.5)) {
            *kind = par[1] == 0.5 ? BOCHNER_BLOCK_MATERN05
                  : par[1] == 1.5 ? BOCHNER_BLOCK_MATERN15 : BOCHNER_BLOCK_MATERN25;
            *s = sqrt(2.0 * par[1]) / par[0];
        }
        return BOCHNER_OK;
    default:
        return BOCHNER_OK;
    }
}

static int kernel_matrix(int code, const double *par, int npar, const double *x,
                         R_xlen_t nx, const double *y, R_xlen_t ny, int d, double *out,
                         int nthreads)
{
    R_xlen_t len = nx * ny;
    int kind;
    double s = 0.0;
    int status = fused_kind(code, par, npar, y, ny, &kind, &s);
    if (status != BOCHNER_OK) return status;
    if (kind >= 0) {
        bochner_distance_kernel_blocks(kind, s, x, nx, y, ny, d, out, nthreads);
        return BOCHNER_OK;
    }
    switch (code) {
    case BK_GAUSSIAN:
        squared_distances(x, nx, y, ny, d, out, nthreads);
        elementwise_simple(out, len, EL_EXP, s, nthreads);
        return BOCHNER_OK;
    case BK_MATERN:
        squared_distances(x, nx, y, ny, d, out, nthreads);
        apply_matern(out, len, par[0], par[1], nthreads);
        return BOCHNER_OK;
    case BK_LAPLACE:
    case BK_CAUCHY:
    case BK_MIN:
        if (npar != 1) return BOCHNER_BAD_ARGUMENT;
        coordinatewise(code, par, x, nx, y ? y : x, y ? ny : nx, d, out,
                       nthreads);
        return BOCHNER_OK;
    case BK_POLYNOMIAL:
    case BK_EXPDOT:
        if (code == BK_POLYNOMIAL && (npar < 2 || (par[0] == 0.0 && npar != 4)))
            return BOCHNER_BAD_ARGUMENT;
        /* the degree becomes an int */
        if (code == BK_POLYNOMIAL && par[0] == 0.0 && !(par[1] >= 0 && par[1] <= INT_MAX))
            return BOCHNER_BAD_ARGUMENT;
        if (code == BK_EXPDOT && (npar != 1 || !(par[0] > 0)))
            return BOCHNER_BAD_ARGUMENT;
        outer_products(x, nx, y ? y : x, ny, d, 1.0, out, y == NULL, nthreads);
        if (!y) bochner_mirror_upper(out, nx, nthreads);
        if (code == BK_POLYNOMIAL) {
            apply_polynomial(out, len, par, npar, nthreads);
        } else { /* exp(x.y / sigma^2) */
            double s = 1.0 / (par[0] * par[0]);
            elementwise_simple(out, len, EL_EXP, s, nthreads);
        }
        return BOCHNER_OK;
    case BK_SPECTRAL_MIXTURE:
        if (!bochner_sm_check(par, npar, d)) return BOCHNER_BAD_ARGUMENT;
        spectral_mixture(par, x, nx, y ? y : x, y ? ny : nx, d, out, nthreads);
        return BOCHNER_OK;
    default:
        return BOCHNER_BAD_KERNEL;
    }
}

/* The scratch of one call (R_alloc) is released when it returns, so callers may call it
 * block after block inside one .Call (falkon's row blocks) without the scratch piling up. */
int bochner_kernel_matrix(int code, const double *par, int npar,
                          const double *x, R_xlen_t nx, const double *y,
                          R_xlen_t ny, int d, double *out, int nthreads)
{
    const void *vmax = vmaxget();
    int status = kernel_matrix(code, par, npar, x, nx, y, ny, d, out, nthreads);
    vmaxset(vmax);
    return status;
}

int bochner_kernel_against_init(bochner_kernel_against *k, int code, const double *par,
                                int npar, const double *y, R_xlen_t ny, int d)
{
    bochner_kernel_against a = {code, npar, d, -1, par, y, ny, 0.0, NULL, NULL, NULL};
    int status = fused_kind(code, par, npar, y, ny, &a.kind, &a.s);
    if (status != BOCHNER_OK) return status;
    if (a.kind >= 0) {
        size_t dd = (size_t) (d > 0 ? d : 1);
        a.centre = (double *) R_alloc(dd, sizeof(double));
        a.bt = (double *) R_alloc((size_t) ny * dd, sizeof(double));
        a.yn = (double *) R_alloc((size_t) ny, sizeof(double));
        bochner_dk_prepare(y, ny, d, a.centre, a.bt, a.yn);
    }
    *k = a;
    return BOCHNER_OK;
}

/* out (nx x ny, leading dimension ldo >= nx) = k(x, y): the same doubles as
 * bochner_kernel_matrix(x, y). */
int bochner_kernel_against_rows(const bochner_kernel_against *k, const double *x,
                                R_xlen_t nx, double *out, R_xlen_t ldo, int nthreads)
{
    const void *vmax = vmaxget();
    int status = BOCHNER_OK;
    if (k->kind >= 0) {
        bochner_dk_rows(k->kind, k->s, k->centre, k->bt, k->yn, k->ny, k->d, x, nx, out, ldo,
                        nthreads);
    } else if (ldo == nx) {
        status = bochner_kernel_matrix(k->code, k->par, k->npar, x, nx, k->y, k->ny, k->d, out,
                                       nthreads);
    } else {
        double *kb = (double *) R_alloc((size_t) nx * (size_t) k->ny, sizeof(double));
        status = bochner_kernel_matrix(k->code, k->par, k->npar, x, nx, k->y, k->ny, k->d, kb,
                                       nthreads);
        for (R_xlen_t j = 0; status == BOCHNER_OK && j < k->ny; j++)
            memcpy(out + j * ldo, kb + j * nx, sizeof(double) * (size_t) nx);
    }
    vmaxset(vmax);
    return status;
}
