/* Sampling the spectral densities (Bochner's theorem) with R's generator.
 *
 * Row i of the n x d output is one frequency.  Draws are made serially in a
 * fixed order, so set.seed() reproduces them:
 *   Gaussian   N(0, sigma^-2 I), column by column (as rnorm(n * d, 0, 1/sigma));
 *   Laplace    Cauchy(0, 1/sigma) per coordinate (as rcauchy(n * d, 0, 1/sigma));
 *   Cauchy     Laplace(0, scale 1/sigma) per coordinate, by inversion of one
 *              uniform each;
 *   Matern     multivariate t with 2 nu degrees of freedom: for each row a
 *              chi-square u then d normals z, w = z / (sigma sqrt(u / (2 nu))). */
#include "bochner.h"
#include <math.h>
#include <limits.h>
#include <Rmath.h>

/* Draws between user-interrupt checks (n * d can be in the billions). */
#define DRAWS_PER_CHECK ((R_xlen_t) 1 << 20)
#define CHECK_EVERY(i) if (((i) + 1) % DRAWS_PER_CHECK == 0) R_CheckUserInterrupt()

int bochner_spectral_sample(int code, const double *par, int npar,
                            R_xlen_t n, int d, double *out)
{
    R_xlen_t len = n * (R_xlen_t) d;
    double scale = 1.0 / par[0];
    switch (code) {
    case BK_GAUSSIAN:
        for (R_xlen_t i = 0; i < len; i++) {
            out[i] = scale * norm_rand();
            CHECK_EVERY(i);
        }
        return BOCHNER_OK;
    case BK_LAPLACE:
        for (R_xlen_t i = 0; i < len; i++) {
            out[i] = rcauchy(0.0, scale);
            CHECK_EVERY(i);
        }
        return BOCHNER_OK;
    case BK_CAUCHY:
        for (R_xlen_t i = 0; i < len; i++) {
            double u = unif_rand();
            out[i] = u < 0.5 ? scale * log(2.0 * u) : -scale * log(2.0 * (1.0 - u));
            CHECK_EVERY(i);
        }
        return BOCHNER_OK;
    case BK_MATERN: {
        if (npar != 2) return BOCHNER_BAD_ARGUMENT;
        double df = 2.0 * par[1];
        for (R_xlen_t i = 0; i < n; i++) {
            double u = rchisq(df);
            double s = scale / sqrt(u / df);
            for (int k = 0; k < d; k++) out[i + (R_xlen_t) k * n] = s * norm_rand();
            if ((i + 1) % (DRAWS_PER_CHECK / d + 1) == 0) R_CheckUserInterrupt();
        }
        return BOCHNER_OK;
    }
    case BK_SPECTRAL_MIXTURE: {
        /* per row: a component (probability w_q / sum w), a sign (the
         * density's mirror), then d normals: w = +-2 pi mu_q + z / ell_q */
        int Q = bochner_sm_check(par, npar, d);
        if (!Q) return BOCHNER_BAD_ARGUMENT;
        if (d < 1) return BOCHNER_OK;
        const double *wt = par + 1, *mu = wt + Q, *ell = mu + (R_xlen_t) Q * d;
        double total = 0.0;
        for (int q = 0; q < Q; q++) total += wt[q];
        if (!(total > 0.0)) return BOCHNER_BAD_ARGUMENT;
        for (R_xlen_t i = 0; i < n; i++) {
            double u = unif_rand() * total, acc = 0.0;
            int q = 0;
            for (; q < Q - 1; q++) {
                acc += wt[q];
                if (u < acc) break;
            }
            double sign = unif_rand() < 0.5 ? -1.0 : 1.0;
            for (int k = 0; k < d; k++)
                out[i + (R_xlen_t) k * n] = sign * 2.0 * M_PI * mu[q + (R_xlen_t) k * Q] +
                    norm_rand() / ell[q + (R_xlen_t) k * Q];
            if ((i + 1) % (DRAWS_PER_CHECK / d + 1) == 0) R_CheckUserInterrupt();
        }
        return BOCHNER_OK;
    }
    default:
        return BOCHNER_BAD_KERNEL;
    }
}
