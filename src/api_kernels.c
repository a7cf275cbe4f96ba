/* .Call wrappers: kernels and their spectra: kernel matrices (kernels.c), spectral samples
 * (spectral.c), orthogonal and randomised QMC frequencies (sampling.c).
 * Each checks and converts R arguments, allocates its result and calls the core
 * (bochner.h); the arithmetic is the core's. */
#include "api.h"

SEXP bochner_kernel_matrix_call(SEXP code, SEXP par, SEXP x, SEXP y,
                                SEXP nthreads)
{
    if (!bochner_is_real_matrix(x)) error("'x' must be a double matrix");
    if (!isNull(y) && !bochner_is_real_matrix(y)) error("'y' must be a double matrix or NULL");
    if (TYPEOF(par) != REALSXP || XLENGTH(par) < 1) error("'par' must be a double vector");
    R_xlen_t nx = nrows(x), ny = isNull(y) ? nx : nrows(y);
    int d = ncols(x);
    if (!isNull(y) && ncols(y) != d) error("'x' and 'y' must have the same number of columns");
    SEXP out = PROTECT(bochner_alloc_output(nx, ny));
    int status = bochner_kernel_matrix(asInteger(code), REAL(par), LENGTH(par),
                                       REAL(x), nx, isNull(y) ? NULL : REAL(y),
                                       ny, d, REAL(out),
                                       bochner_nthreads(asInteger(nthreads)));
    bochner_stop_on_status(status, "kernel_matrix");
    UNPROTECT(1);
    return out;
}

SEXP bochner_spectral_sample_call(SEXP code, SEXP par, SEXP n, SEXP d)
{
    if (TYPEOF(par) != REALSXP || XLENGTH(par) < 1) error("'par' must be a double vector");
    double nn = asReal(n);
    int dd = asInteger(d);
    if (!R_FINITE(nn) || nn < 0 || nn > INT_MAX) error("'n' must be a count");
    if (dd == NA_INTEGER || dd < 0) error("'d' must be a count");
    if (!(REAL(par)[0] > 0)) error("'sigma' must be positive");
    if (asInteger(code) == BK_SPECTRAL_MIXTURE && dd > 0 &&
        !bochner_sm_check(REAL(par), LENGTH(par), dd))
        error("the spectral mixture's parameters do not fit %d input columns", dd);
    SEXP out = PROTECT(allocMatrix(REALSXP, (int) nn, dd));
    GetRNGstate();
    int status = bochner_spectral_sample(asInteger(code), REAL(par), LENGTH(par),
                                         (R_xlen_t) nn, dd, REAL(out));
    PutRNGstate();
    if (status == BOCHNER_BAD_KERNEL) error("spectral_sample: the kernel has no spectral density");
    bochner_stop_on_status(status, "spectral_sample");
    UNPROTECT(1);
    return out;
}

static void check_shift_invariant_par(SEXP code, SEXP par)
{
    if (TYPEOF(par) != REALSXP || XLENGTH(par) < 1) error("'par' must be a double vector");
    if (!(REAL(par)[0] > 0) || !R_FINITE(REAL(par)[0])) error("'sigma' must be positive");
    int c = asInteger(code);
    if (c == BK_MATERN && (XLENGTH(par) != 2 || !(REAL(par)[1] > 0) ||
                           REAL(par)[1] > BOCHNER_MATERN_NU_MAX))
        error("'nu' must be positive");
}

SEXP bochner_orthogonal_frequencies_call(SEXP code, SEXP par, SEXP D, SEXP d)
{
    check_shift_invariant_par(code, par);
    int nfreq = bochner_count_arg(D, "D", 0), dd = bochner_count_arg(d, "d", 1);
    SEXP out = PROTECT(bochner_alloc_output(dd, nfreq));
    double *norms = (double *) R_alloc(dd, sizeof(double));
    GetRNGstate();
    int status = bochner_orthogonal_frequencies(asInteger(code), REAL(par), LENGTH(par),
                                                nfreq, dd, REAL(out), norms);
    PutRNGstate();
    if (status == BOCHNER_BAD_KERNEL)
        error("orthogonal frequencies: only for the Gaussian and Matern kernels");
    bochner_stop_on_status(status, "orthogonal frequencies");
    UNPROTECT(1);
    return out;
}

SEXP bochner_qmc_frequencies_call(SEXP code, SEXP par, SEXP D, SEXP d, SEXP with_phase)
{
    check_shift_invariant_par(code, par);
    int nfreq = bochner_count_arg(D, "D", 0), dd = bochner_count_arg(d, "d", 1);
    int ph = asLogical(with_phase);
    if (ph == NA_LOGICAL) error("'with_phase' must be TRUE or FALSE");
    if (dd > BOCHNER_QMC_MAX_DIM) error("qmc frequencies: at most %d dimensions", BOCHNER_QMC_MAX_DIM);
    SEXP res = PROTECT(allocVector(VECSXP, 2));
    SET_VECTOR_ELT(res, 0, bochner_alloc_output(dd, nfreq));
    if (ph) SET_VECTOR_ELT(res, 1, allocVector(REALSXP, nfreq));
    GetRNGstate();
    int status = bochner_qmc_frequencies(asInteger(code), REAL(par), LENGTH(par), nfreq, dd,
                                         REAL(VECTOR_ELT(res, 0)),
                                         ph ? REAL(VECTOR_ELT(res, 1)) : NULL);
    PutRNGstate();
    if (status == BOCHNER_BAD_KERNEL)
        error("qmc frequencies: the kernel has no spectral density");
    bochner_stop_on_status(status, "qmc frequencies");
    SEXP names = PROTECT(allocVector(STRSXP, 2));
    SET_STRING_ELT(names, 0, mkChar("omega"));
    SET_STRING_ELT(names, 1, mkChar("phase"));
    setAttrib(res, R_NamesSymbol, names);
    UNPROTECT(2);
    return res;
}
