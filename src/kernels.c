/* Exact kernels and Gram matrices.
 *
 * Euclidean kernels (Gaussian, Matern) get squared distances from one BLAS
 * product, |x|^2 + |y|^2 - 2 x.y on data centred at the mean of x (centring
 * leaves distances unchanged and keeps the cancellation small).  Coordinate-
 * wise kernels (Laplace, Cauchy, min) accumulate over coordinates with the
 * row index innermost so that the loops vectorise over a column of the
 * output.  Dot-product kernels (polynomial, exponential) apply their
 * function to one BLAS product x y'.  Columns are processed in chunks,
 * threads inside a chunk, user interrupts between chunks. */
#include "bochner.h"
#include <math.h>
#include <limits.h>
#include <string.h>
#include <Rmath.h>
#include <R_ext/BLAS.h>
#ifndef FCONE
#define FCONE
#endif

#define COL_CHUNK 256
/* Elementwise passes over the output run in chunks of this many entries,
 * with a user-interrupt check between chunks (outside the parallel region):
 * an n x n Gram matrix can take seconds to fill. */
#define ELEM_CHUNK ((R_xlen_t) 1 << 22)
/* outer_products calls the BLAS on column chunks of about this many
 * multiply-adds (at least 64 columns), with interrupt checks between calls:
 * a fraction of a second even with the reference BLAS.  Each entry is one
 * dot product whatever the split. */
#define GEMM_CHUNK_FLOPS ((double) (1 << 28))

#ifdef _OPENMP
# define BK_PARALLEL_FOR _Pragma("omp parallel for num_threads(nthreads) schedule(static)")
#else
# define BK_PARALLEL_FOR
#endif

/* out[i] = FUN(out[i]) for i < len, in chunks with interrupt checks between
 * them.  FUN is an expression in v (the entry); the caller has 'nthreads'. */
#define ELEMENTWISE(out, len, nthreads, FUN)                                   \
    for (R_xlen_t i0_ = 0; i0_ < (len); i0_ += ELEM_CHUNK) {                   \
        R_xlen_t i1_ = (len) - i0_ < ELEM_CHUNK ? (len) : i0_ + ELEM_CHUNK;    \
        R_xlen_t i_;                                                           \
        BK_PARALLEL_FOR                                                        \
        for (i_ = i0_; i_ < i1_; i_++) {                                       \
            double v = (out)[i_];                                              \
            (out)[i_] = (FUN);                                                 \
        }                                                                      \
        R_CheckUserInterrupt();                                                \
    }

/* Centre x (and y) and return the row norms.  The centre is the column
 * means of y when y is given, else of x: k(x, y) is then computed the same
 * way whatever other rows x comes with, so a Gram matrix against fixed
 * points y (as when predicting new rows x against training points y) is
 * identical row by row, whether the rows of x come all at once or in
 * chunks. */
static void centre_and_norms(const double *x, R_xlen_t nx, const double *y,
                             R_xlen_t ny, int d, double *xc, double *yc,
                             double *xn, double *yn)
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

/* out = alpha * a %*% t(b) for a (na x d), b (nb x d), column-major. */
static void outer_products(const double *a, R_xlen_t na, const double *b,
                           R_xlen_t nb, int d, double alpha, double *out)
{
    int m = (int) na, ldb = (int) nb, k = d;
    double zero = 0.0;
    if (na == 0 || nb == 0) return;
    if (d == 0) {
        memset(out, 0, sizeof(double) * (size_t) na * (size_t) nb);
        return;
    }
    double per_col = (double) na * (double) d;
    R_xlen_t chunk = per_col * 64 >= GEMM_CHUNK_FLOPS ? 64 : (R_xlen_t) (GEMM_CHUNK_FLOPS / per_col);
    for (R_xlen_t j0 = 0; j0 < nb; j0 += chunk) {
        int n = (int) (nb - j0 < chunk ? nb - j0 : chunk);
        F77_CALL(dgemm)("N", "T", &m, &n, &k, &alpha, a, &m, b + j0, &ldb, &zero,
                        out + j0 * na, &m FCONE FCONE);
        R_CheckUserInterrupt();
    }
}

/* Squared Euclidean distances into out (nx x ny). */
static void squared_distances(const double *x, R_xlen_t nx, const double *y,
                              R_xlen_t ny, int d, double *out)
{
    int self = (y == NULL);
    double *xc = (double *) R_alloc((size_t) nx * (size_t) (d > 0 ? d : 1), sizeof(double));
    double *xn = (double *) R_alloc((size_t) nx, sizeof(double));
    double *yc = self ? xc : (double *) R_alloc((size_t) ny * (size_t) (d > 0 ? d : 1), sizeof(double));
    double *yn = self ? xn : (double *) R_alloc((size_t) ny, sizeof(double));
    centre_and_norms(x, nx, self ? NULL : y, ny, d, xc, self ? NULL : yc, xn,
                     self ? NULL : yn);
    outer_products(xc, nx, yc, ny, d, -2.0, out);
    for (R_xlen_t j = 0; j < ny; j++) {
        double *col = out + j * nx;
        double ynj = yn[j];
        for (R_xlen_t i = 0; i < nx; i++) {
            double v = col[i] + xn[i] + ynj;
            col[i] = v > 0.0 ? v : 0.0;
        }
        if ((j + 1) % COL_CHUNK == 0) R_CheckUserInterrupt();
    }
    if (self) {
        /* exact zeros on the diagonal and exact symmetry, whatever the BLAS */
        for (R_xlen_t j = 0; j < ny; j++) {
            out[j + j * nx] = 0.0;
            for (R_xlen_t i = j + 1; i < nx; i++) out[j + i * nx] = out[i + j * nx];
            if ((j + 1) % COL_CHUNK == 0) R_CheckUserInterrupt();
        }
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

static inline double matern15(double z) { return (1.0 + z) * exp(-z); }
static inline double matern25(double z) { return (1.0 + z + z * z / 3.0) * exp(-z); }

static void apply_matern(double *out, R_xlen_t len, double sigma, double nu,
                         int nthreads)
{
    R_xlen_t i;
    if (nu == 0.5) {
        double s = 1.0 / sigma;
        ELEMENTWISE(out, len, nthreads, exp(-sqrt(v) * s))
    } else if (nu == 1.5) {
        double s = sqrt(3.0) / sigma;
        ELEMENTWISE(out, len, nthreads, matern15(sqrt(v) * s))
    } else if (nu == 2.5) {
        double s = sqrt(5.0) / sigma;
        ELEMENTWISE(out, len, nthreads, matern25(sqrt(v) * s))
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

/* Coordinate-wise kernels: one output column per point of y. */
static void coordinatewise(int code, const double *par, const double *x,
                           R_xlen_t nx, const double *y, R_xlen_t ny, int d,
                           double *out, int nthreads)
{
    /* columns per interrupt check: at most COL_CHUNK, fewer when a column
     * is long (about 2^26 operations between checks), at least one per thread */
    double per_col = (double) nx * (double) (d > 0 ? d : 1);
    R_xlen_t chunk = (R_xlen_t) ((double) (1 << 26) / per_col);
    if (chunk > COL_CHUNK) chunk = COL_CHUNK;
    if (chunk < nthreads) chunk = nthreads;
    for (R_xlen_t j0 = 0; j0 < ny; j0 += chunk) {
        R_xlen_t j1 = j0 + chunk < ny ? j0 + chunk : ny;
        R_xlen_t j;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nthreads) schedule(static)
#endif
        for (j = j0; j < j1; j++) {
            double *col = out + j * nx;
            if (code == BK_LAPLACE) {
                double s = -1.0 / par[0];
                for (R_xlen_t i = 0; i < nx; i++) col[i] = 0.0;
                for (int k = 0; k < d; k++) {
                    const double *xk = x + (R_xlen_t) k * nx;
                    double yk = y[j + (R_xlen_t) k * ny];
                    for (R_xlen_t i = 0; i < nx; i++) col[i] += fabs(xk[i] - yk);
                }
                for (R_xlen_t i = 0; i < nx; i++) col[i] = exp(col[i] * s);
            } else if (code == BK_CAUCHY) {
                double s = 1.0 / par[0];
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
                double offset = par[0];
                for (R_xlen_t i = 0; i < nx; i++) col[i] = offset;
                for (int k = 0; k < d; k++) {
                    const double *xk = x + (R_xlen_t) k * nx;
                    double yk = y[j + (R_xlen_t) k * ny];
                    for (R_xlen_t i = 0; i < nx; i++)
                        col[i] += xk[i] < yk ? xk[i] : yk;
                }
            }
        }
        R_CheckUserInterrupt();
    }
}

/* Polynomial kernel of the dot product.  par[0] == 0: (scale t + offset)^p
 * with par = (0, p, scale, offset); par[0] == 1: sum_i c_i t^i with
 * par = (1, c_0, ..., c_l), evaluated by Horner's rule. */
static inline double horner(const double *c, int l, double t)
{
    double v = c[l];
    for (int q = l - 1; q >= 0; q--) v = v * t + c[q];
    return v;
}

static void apply_polynomial(double *out, R_xlen_t len, const double *par,
                             int npar, int nthreads)
{
    if (par[0] == 0.0) {
        double scale = par[2], offset = par[3];
        int p = (int) par[1];
        ELEMENTWISE(out, len, nthreads, R_pow_di(scale * v + offset, p))
    } else {
        const double *c = par + 1;
        int l = npar - 2;
        ELEMENTWISE(out, len, nthreads, horner(c, l, v))
    }
}

int bochner_kernel_matrix(int code, const double *par, int npar,
                          const double *x, R_xlen_t nx, const double *y,
                          R_xlen_t ny, int d, double *out, int nthreads)
{
    R_xlen_t len = nx * ny;
    switch (code) {
    case BK_GAUSSIAN: {
        if (npar != 1 || !(par[0] > 0) || !R_FINITE(par[0])) return BOCHNER_BAD_ARGUMENT;
        double s = -0.5 / (par[0] * par[0]);
        squared_distances(x, nx, y, ny, d, out);
        ELEMENTWISE(out, len, nthreads, exp(v * s))
        return BOCHNER_OK;
    }
    case BK_MATERN:
        /* nu is capped (R/kernels.R, matern_kernel()): the Bessel
         * recursion needs floor(nu) + 1 doubles and as many steps per entry,
         * and R's bessel_k_ex indexes them with an int */
        if (npar != 2 || !(par[0] > 0) || !R_FINITE(par[0]) || !(par[1] > 0) ||
            par[1] > BOCHNER_MATERN_NU_MAX)
            return BOCHNER_BAD_ARGUMENT;
        squared_distances(x, nx, y, ny, d, out);
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
        outer_products(x, nx, y ? y : x, ny, d, 1.0, out);
        if (!y) /* exact symmetry, whatever the BLAS */
            for (R_xlen_t j = 0; j < ny; j++)
                for (R_xlen_t k = j + 1; k < nx; k++) out[j + k * nx] = out[k + j * nx];
        if (code == BK_POLYNOMIAL) {
            apply_polynomial(out, len, par, npar, nthreads);
        } else { /* exp(x.y / sigma^2) */
            double s = 1.0 / (par[0] * par[0]);
            ELEMENTWISE(out, len, nthreads, exp(v * s))
        }
        return BOCHNER_OK;
    default:
        return BOCHNER_BAD_KERNEL;
    }
}

static int is_real_matrix(SEXP m)
{
    return TYPEOF(m) == REALSXP && isMatrix(m);
}

SEXP bochner_kernel_matrix_call(SEXP code, SEXP par, SEXP x, SEXP y,
                                SEXP nthreads)
{
    if (!is_real_matrix(x)) error("'x' must be a double matrix");
    if (!isNull(y) && !is_real_matrix(y)) error("'y' must be a double matrix or NULL");
    if (TYPEOF(par) != REALSXP || XLENGTH(par) < 1) error("'par' must be a double vector");
    R_xlen_t nx = nrows(x), ny = isNull(y) ? nx : nrows(y);
    int d = ncols(x);
    if (!isNull(y) && ncols(y) != d) error("'x' and 'y' must have the same number of columns");
    SEXP out = PROTECT(bochner_alloc_output(nx, ny));
    int status = bochner_kernel_matrix(asInteger(code), REAL(par), LENGTH(par),
                                       REAL(x), nx, isNull(y) ? NULL : REAL(y),
                                       ny, d, REAL(out),
                                       bochner_nthreads(asInteger(nthreads)));
    if (status != BOCHNER_OK) error("kernel_matrix: unknown kernel or bad parameters (status %d)", status);
    UNPROTECT(1);
    return out;
}
