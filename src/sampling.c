/* Frequencies of a Fourier map drawn other than independently
 * (random_features(sampling = "orthogonal" / "qmc"), R/sampling.R).
 *
 * Both write the d x D frequency matrix column by column (column j is the
 * frequency w_j) and draw from R's generator only, serially, in a fixed
 * order, so set.seed() reproduces them.
 *
 * Orthogonal random features (Yu et al. 2016), isotropic kernels only:
 * blocks of d frequencies; a block's directions are the Gram-Schmidt
 * orthonormalisation of d independent N(0, I_d) vectors (the Q of a QR
 * factorisation with diag(R) > 0, so the frame is Haar-distributed), each
 * scaled by an independent norm from the kernel's radial law:
 *   Gaussian  ||w|| = chi_d / sigma;
 *   Matern    ||w|| = chi_d / (sigma sqrt(u / (2 nu))), u ~ chi^2(2 nu),
 * the norm of the multivariate t draw.  The last block keeps the first
 * D mod d directions (Gram-Schmidt is sequential, so they are the first
 * directions of a full block).  Modified Gram-Schmidt with a second pass
 * where a column lost most of its norm ("twice is enough"): plain C, the
 * same numbers for any BLAS.  Per block the draws are: the block's
 * Gaussian columns, then for each column its chi_d (and for the Matern
 * kernel its chi^2(2 nu)).
 *
 * Randomised quasi-Monte Carlo (Avron et al. 2016), every shift-invariant
 * kernel: the Halton sequence (dimension k in base p_k, the k-th prime),
 * each base-p digit j of dimension k scrambled by an independent random
 * affine permutation a -> (g a + h) mod p, g uniform in 1..p-1, h uniform in
 * 0..p-1, over enough digits that p^-digits <= 2^-53.  For any fixed index
 * each scrambled digit is uniform and the digits are independent, so every
 * point is uniform on [0, 1)^s (to 2^-53): the estimate of the kernel stays
 * unbiased, while the points keep Halton's low discrepancy.  Coordinates are
 * clamped to [2^-53, 1 - 2^-53] and pushed through the inverse CDF of the
 * spectral law:
 *   Gaussian   qnorm(u) / sigma                          (dimensions 1..d)
 *   Laplace    Cauchy(0, 1/sigma): tan(pi (u - 1/2)) / sigma
 *   Cauchy     Laplace(0, 1/sigma): log(2u) / sigma or -log(2(1-u)) / sigma
 *   Matern     qnorm(u_1..d) / (sigma sqrt(qchisq(u_{d+1}, 2 nu) / (2 nu))),
 *              dimension d + 1 is the chi-square radius;
 * and for the phase map the phase is 2 pi u of the next dimension (d + 1,
 * or d + 2 for the Matern kernel).  The scrambles are the only draws:
 * dimension by dimension, digit by digit, g then h. */
#include "bochner.h"
#include <math.h>
#include <stdint.h>
#include <Rmath.h>
#include <R_ext/Random.h>

#define TWO_POW_53 9007199254740992.0
#define U_MIN (1.0 / TWO_POW_53)
#define U_MAX (1.0 - 1.0 / TWO_POW_53)
/* Frequencies (columns) between user-interrupt checks, scaled by d. */
#define WORK_PER_CHECK ((R_xlen_t) 1 << 22)

/* ---- orthogonal random features ---------------------------------------- */

static double dot(const double *a, const double *b, int d)
{
    double s = 0.0;
    for (int k = 0; k < d; k++) s += a[k] * b[k];
    return s;
}

/* Orthonormalise column v (length d) against the j orthonormal columns q,
 * in place; returns 0 if v is (numerically) in their span. */
static int gram_schmidt_column(const double *q, int j, int d, double *v)
{
    double before = sqrt(dot(v, v, d));
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < j; i++) {
            const double *qi = q + (ptrdiff_t) i * d;
            double c = dot(qi, v, d);
            for (int k = 0; k < d; k++) v[k] -= c * qi[k];
        }
        double after = sqrt(dot(v, v, d));
        if (!(after > 0.0)) return 0;
        /* little cancellation: one pass kept v orthogonal to working precision */
        if (pass == 0 && after > 0.5 * before) break;
        before = after;
    }
    double nrm = sqrt(dot(v, v, d));
    if (!(nrm > 1e-300)) return 0;
    for (int k = 0; k < d; k++) v[k] /= nrm;
    return 1;
}

int bochner_orthogonal_frequencies(int code, const double *par, int npar,
                                   R_xlen_t D, int d, double *out, double *norms)
{
    if (d < 1 || D < 0 || !(par[0] > 0)) return BOCHNER_BAD_ARGUMENT;
    if (code != BK_GAUSSIAN && code != BK_MATERN) return BOCHNER_BAD_KERNEL;
    if (code == BK_MATERN && (npar != 2 || !(par[1] > 0))) return BOCHNER_BAD_ARGUMENT;
    double inv_sigma = 1.0 / par[0];
    double df = code == BK_MATERN ? 2.0 * par[1] : 0.0;
    R_xlen_t since_check = 0;
    for (R_xlen_t j0 = 0; j0 < D; j0 += d) {
        int r = (int) (D - j0 < d ? D - j0 : d);
        double *blk = out + j0 * (R_xlen_t) d;
        R_xlen_t len = (R_xlen_t) r * d;
        for (R_xlen_t i = 0; i < len; i++) blk[i] = norm_rand();
        for (int c = 0; c < r; c++) {
            norms[c] = sqrt(rchisq((double) d)) * inv_sigma;
            if (code == BK_MATERN) norms[c] /= sqrt(rchisq(df) / df);
        }
        for (int c = 0; c < r; c++) {
            if (!gram_schmidt_column(blk, c, d, blk + (ptrdiff_t) c * d))
                return BOCHNER_BAD_ARGUMENT;
            since_check += (R_xlen_t) (c + 1) * d;
            if (since_check > WORK_PER_CHECK) {
                since_check = 0;
                R_CheckUserInterrupt();
            }
        }
        for (int c = 0; c < r; c++) {
            double *v = blk + (ptrdiff_t) c * d;
            for (int k = 0; k < d; k++) v[k] *= norms[c];
        }
    }
    return BOCHNER_OK;
}

/* ---- randomised quasi-Monte Carlo --------------------------------------- */

/* The first s primes. */
static void first_primes(int s, int *p)
{
    int count = 0;
    for (int c = 2; count < s; c++) {
        int prime = 1;
        for (int i = 0; i < count && p[i] * p[i] <= c; i++) {
            if (c % p[i] == 0) {
                prime = 0;
                break;
            }
        }
        if (prime) p[count++] = c;
    }
}

/* Digits of base p needed for p^-digits <= 2^-53. */
static int digits_for(int p)
{
    int m = 0;
    for (double q = 1.0; q < TWO_POW_53; q *= p) m++;
    return m;
}

/* Coordinate of point 'index' in a dimension of base p with m digit
 * scrambles (g, h). */
static double scrambled_radical_inverse(uint64_t index, int p, int m,
                                        const int *g, const int *h)
{
    double f = 1.0 / p, u = 0.0;
    uint64_t n = index;
    for (int j = 0; j < m; j++) {
        uint64_t a = n % (uint64_t) p;
        n /= (uint64_t) p;
        u += (double) (((uint64_t) g[j] * a + (uint64_t) h[j]) % (uint64_t) p) * f;
        f /= p;
    }
    return u < U_MIN ? U_MIN : (u > U_MAX ? U_MAX : u);
}

/* omega: d x D; phase: D, or NULL for no phase dimension.  Scratch: s ints
 * of primes, s + 1 digit offsets, and up to 53 s ints each of g and h,
 * allocated here with R_alloc. */
int bochner_qmc_frequencies(int code, const double *par, int npar,
                            R_xlen_t D, int d, double *omega, double *phase)
{
    if (d < 1 || d > BOCHNER_QMC_MAX_DIM || D < 0 || !(par[0] > 0)) return BOCHNER_BAD_ARGUMENT;
    if (code < BK_GAUSSIAN || code > BK_MATERN) return BOCHNER_BAD_KERNEL;
    if (code == BK_MATERN && (npar != 2 || !(par[1] > 0))) return BOCHNER_BAD_ARGUMENT;
    int radius = code == BK_MATERN;                  /* dimension d + 1: chi-square */
    int s = d + radius + (phase != NULL);            /* dimensions of the sequence */
    int *p = (int *) R_alloc(s, sizeof(int));
    R_xlen_t *off = (R_xlen_t *) R_alloc((size_t) s + 1, sizeof(R_xlen_t));
    first_primes(s, p);
    off[0] = 0;
    for (int k = 0; k < s; k++) off[k + 1] = off[k] + digits_for(p[k]);
    int *g = (int *) R_alloc(off[s], sizeof(int));
    int *h = (int *) R_alloc(off[s], sizeof(int));
    for (int k = 0; k < s; k++) {
        for (R_xlen_t j = off[k]; j < off[k + 1]; j++) {
            g[j] = 1 + (int) R_unif_index((double) (p[k] - 1));
            h[j] = (int) R_unif_index((double) p[k]);
        }
    }
    double inv_sigma = 1.0 / par[0];
    double df = radius ? 2.0 * par[1] : 0.0;
    R_xlen_t since_check = 0;
    for (R_xlen_t i = 0; i < D; i++) {
        double *w = omega + i * (R_xlen_t) d;
        double scale = inv_sigma;
        if (radius) {
            double u = scrambled_radical_inverse((uint64_t) i, p[d], (int) (off[d + 1] - off[d]),
                                                 g + off[d], h + off[d]);
            scale /= sqrt(qchisq(u, df, 1, 0) / df);
        }
        for (int k = 0; k < d; k++) {
            double u = scrambled_radical_inverse((uint64_t) i, p[k], (int) (off[k + 1] - off[k]),
                                                 g + off[k], h + off[k]);
            switch (code) {
            case BK_GAUSSIAN:
            case BK_MATERN:
                w[k] = scale * qnorm(u, 0.0, 1.0, 1, 0);
                break;
            case BK_LAPLACE:          /* Cauchy(0, 1/sigma) */
                w[k] = scale * tan(M_PI * (u - 0.5));
                break;
            default:                  /* BK_CAUCHY: Laplace(0, 1/sigma) */
                w[k] = u < 0.5 ? scale * log(2.0 * u) : -scale * log(2.0 * (1.0 - u));
            }
        }
        if (phase) {
            int k = s - 1;
            double u = scrambled_radical_inverse((uint64_t) i, p[k], (int) (off[k + 1] - off[k]),
                                                 g + off[k], h + off[k]);
            phase[i] = 2.0 * M_PI * u;
        }
        since_check += s;
        if (since_check > WORK_PER_CHECK) {
            since_check = 0;
            R_CheckUserInterrupt();
        }
    }
    return BOCHNER_OK;
}
