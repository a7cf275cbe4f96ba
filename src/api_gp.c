/* .Call wrappers: Gaussian processes on random features (gp.c): the sufficient statistics,
 * the gradient's pass and the Cholesky factor with its inverse.
 * Each checks and converts R arguments, allocates its result and calls the core
 * (bochner.h); the arithmetic is the core's. */
#include "api.h"

static int check_gp_features(SEXP x, SEXP w, SEXP amp)
{
    if (!bochner_is_real_matrix(x)) error("'x' must be a double matrix");
    if (!bochner_is_real_matrix(w)) error("'w' must be a double matrix");
    if (nrows(w) != ncols(x) || ncols(x) < 1) error("'w' must have one row per column of 'x'");
    if (ncols(w) < 1) error("'w' must have at least one column");
    if (TYPEOF(amp) != REALSXP || XLENGTH(amp) != ncols(w))
        error("'amp' must be a double vector, one per frequency");
    return ncols(w);
}

/* sw: NULL or the square roots of the case weights, one per row */
static const double *check_gp_sw(SEXP sw, R_xlen_t n)
{
    if (isNull(sw)) return NULL;
    if (TYPEOF(sw) != REALSXP || XLENGTH(sw) != n)
        error("'sw' must be NULL or a double vector, one per row");
    return REAL(sw);
}

/* .Call(C_gp_stats, x, w, amp, y, sw, single, nthreads): list(zz = Z'Z, zy = Z'y), Z's
 * rows scaled by sw (y is given already scaled); single: Z rounded to float and Z'Z
 * the float product summed in double (gp.c) */
SEXP bochner_gp_stats_call(SEXP x, SEXP w, SEXP amp, SEXP y, SEXP sw, SEXP single,
                           SEXP nthreads)
{
    int D = check_gp_features(x, w, amp);
    R_xlen_t n = nrows(x);
    if (TYPEOF(y) != REALSXP || XLENGTH(y) != n) error("'y' must be a double vector, one per row");
    const double *swp = check_gp_sw(sw, n);
    int sgl = asLogical(single);
    if (sgl == NA_LOGICAL) error("'single' must be TRUE or FALSE");
    SEXP zz = PROTECT(bochner_alloc_output(2 * D, 2 * D));
    SEXP zy = PROTECT(allocVector(REALSXP, 2 * D));
    bochner_gp_stats(REAL(x), n, ncols(x), REAL(w), D, REAL(amp), REAL(y), swp, sgl,
                     REAL(zz), REAL(zy), bochner_nthreads(asInteger(nthreads)));
    SEXP out = PROTECT(allocVector(VECSXP, 2));
    SET_VECTOR_ELT(out, 0, zz);
    SET_VECTOR_ELT(out, 1, zy);
    UNPROTECT(3);
    return out;
}

/* .Call(C_gp_gradient, x, w, amp, y, sw, alpha, ainv, s2, nthreads): list(M, csum) */
SEXP bochner_gp_gradient_call(SEXP x, SEXP w, SEXP amp, SEXP y, SEXP sw, SEXP alpha,
                              SEXP ainv, SEXP s2, SEXP nthreads)
{
    int D = check_gp_features(x, w, amp), m = 2 * D;
    R_xlen_t n = nrows(x);
    if (TYPEOF(y) != REALSXP || XLENGTH(y) != n) error("'y' must be a double vector, one per row");
    const double *swp = check_gp_sw(sw, n);
    double noise2 = asReal(s2);
    if (!(noise2 > 0.0) || !R_FINITE(noise2)) error("'s2' must be positive");
    if (TYPEOF(alpha) != REALSXP || XLENGTH(alpha) != m) error("'alpha' must have 2D values");
    if (!bochner_is_real_matrix(ainv) || nrows(ainv) != m || ncols(ainv) != m)
        error("'ainv' must be a 2D x 2D double matrix");
    SEXP M = PROTECT(bochner_alloc_output(ncols(x), D));
    SEXP csum = PROTECT(allocVector(REALSXP, m));
    bochner_gp_gradient(REAL(x), n, ncols(x), REAL(w), D, REAL(amp), REAL(y), swp, REAL(alpha),
                        REAL(ainv), noise2, REAL(M), REAL(csum),
                        bochner_nthreads(asInteger(nthreads)));
    SEXP out = PROTECT(allocVector(VECSXP, 2));
    SET_VECTOR_ELT(out, 0, M);
    SET_VECTOR_ELT(out, 1, csum);
    UNPROTECT(3);
    return out;
}

/* .Call(C_gp_chol, a, nthreads): list(r, rinv), or NULL when a is not
 * numerically positive definite */
SEXP bochner_gp_chol_call(SEXP a, SEXP nthreads)
{
    if (!bochner_is_real_matrix(a) || nrows(a) != ncols(a)) error("'a' must be a square double matrix");
    int n = nrows(a);
    SEXP r = PROTECT(bochner_alloc_output(n, n));
    SEXP ri = PROTECT(bochner_alloc_output(n, n));
    int bad = bochner_gp_chol(REAL(a), n, REAL(r), REAL(ri), bochner_nthreads(asInteger(nthreads)));
    if (bad) {
        UNPROTECT(2);
        return R_NilValue;
    }
    SEXP out = PROTECT(allocVector(VECSXP, 2));
    SET_VECTOR_ELT(out, 0, r);
    SET_VECTOR_ELT(out, 1, ri);
    UNPROTECT(3);
    return out;
}
