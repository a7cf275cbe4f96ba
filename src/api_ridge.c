/* .Call wrappers: the ridge solve, the Cholesky factor and its solves (cholesky.c), and
 * the lambda path's spectrum, reflectors and leave-one-out rows (ridge_path.c).
 * Each checks and converts R arguments, allocates its result and calls the core
 * (bochner.h); the arithmetic is the core's. */
#include "api.h"
#include <string.h>

/* The upper factor R (R'R = A + lambda I) of a symmetric A (its upper triangle read), a
 * new protected object; an error naming the column whose pivot fails. */
static SEXP ridge_factor(SEXP A, SEXP lambda, SEXP nthreads)
{
    if (!bochner_is_real_matrix(A) || nrows(A) != ncols(A))
        error("'A' must be a square double matrix");
    if (TYPEOF(lambda) != REALSXP || XLENGTH(lambda) != 1 || !R_FINITE(REAL(lambda)[0]))
        error("'lambda' must be one finite number");
    int n = nrows(A);
    SEXP R = PROTECT(duplicate(A));
    double *r = REAL(R), lam = REAL(lambda)[0];
    for (int i = 0; i < n; i++) r[i + (ptrdiff_t) i * n] += lam;
    int bad = bochner_cholesky(r, n, bochner_nthreads(asInteger(nthreads)));
    if (bad) error("the matrix is not numerically positive definite (pivot %d)", bad);
    return R;
}

/* .Call(C_ridge_solve, A, B, lambda, nthreads): (A + lambda I)^-1 B for a
 * symmetric A (its upper triangle is read); an error naming the column
 * whose pivot fails. */
SEXP bochner_ridge_solve_call(SEXP A, SEXP B, SEXP lambda, SEXP nthreads)
{
    if (bochner_is_real_matrix(A) && (!bochner_is_real_matrix(B) || nrows(B) != nrows(A)))
        error("'B' must be a double matrix with one row per row of 'A'");
    SEXP R = ridge_factor(A, lambda, nthreads);
    SEXP X = PROTECT(duplicate(B));
    bochner_cholesky_solve(REAL(R), nrows(R), REAL(X), ncols(X));
    UNPROTECT(2);
    return X;
}

/* .Call(C_cholesky, A, lambda, nthreads): the upper R with R'R = A + lambda I
 * (strict lower triangle zero), for several solves with one factor
 * (C_cholesky_solve); the same errors as C_ridge_solve. */
SEXP bochner_cholesky_call(SEXP A, SEXP lambda, SEXP nthreads)
{
    SEXP R = ridge_factor(A, lambda, nthreads);
    UNPROTECT(1);
    return R;
}

/* .Call(C_cholesky_solve, R, B): (R'R)^-1 B for an upper triangular R (its upper
 * triangle read), by the two triangular substitutions. */
SEXP bochner_cholesky_solve_call(SEXP R, SEXP B)
{
    if (!bochner_is_real_matrix(R) || nrows(R) != ncols(R))
        error("'R' must be a square double matrix");
    if (!bochner_is_real_matrix(B) || nrows(B) != nrows(R))
        error("'B' must be a double matrix with one row per row of 'R'");
    SEXP X = PROTECT(duplicate(B));
    bochner_cholesky_solve(REAL(R), nrows(R), REAL(X), ncols(X));
    UNPROTECT(1);
    return X;
}

/* .Call(C_triangular_solve, R, B, op, nthreads) for an upper triangular R (its
 * upper triangle read), blocked: op "left_t" R'^-1 B, "left" R^-1 B, "right"
 * B R^-1. */
SEXP bochner_triangular_solve_call(SEXP R, SEXP B, SEXP op, SEXP nthreads)
{
    static const char *ops[] = {"left_t", "left", "right"};
    if (!isString(op) || XLENGTH(op) != 1 || STRING_ELT(op, 0) == NA_STRING)
        error("'op' must be \"left_t\", \"left\" or \"right\"");
    int code = -1;
    for (int i = 0; i < 3; i++)
        if (!strcmp(CHAR(STRING_ELT(op, 0)), ops[i])) code = i;
    if (code < 0) error("'op' must be \"left_t\", \"left\" or \"right\"");
    if (!bochner_is_real_matrix(R) || nrows(R) != ncols(R))
        error("'R' must be a square double matrix");
    if (code < 2 && (!bochner_is_real_matrix(B) || nrows(B) != nrows(R)))
        error("'B' must be a double matrix with one row per row of 'R'");
    if (code == 2 && (!bochner_is_real_matrix(B) || ncols(B) != nrows(R)))
        error("'B' must be a double matrix with one column per row of 'R'");
    SEXP X = PROTECT(duplicate(B));
    bochner_triangular_solve(REAL(R), nrows(R), REAL(X), code == 2 ? nrows(X) : ncols(X), code,
                             bochner_nthreads(asInteger(nthreads)));
    UNPROTECT(1);
    return X;
}

/* .Call(C_ridge_spectrum, A, B, nthreads): for the symmetric A (upper
 * triangle read) and B (n x m), list(values = the eigenvalues of A in
 * decreasing order, c = V'B in that order, g = Q'B, d, e (T), V (the
 * reflectors, n x (n-1)), T (their blocks), tau). */
SEXP bochner_ridge_spectrum_call(SEXP A, SEXP B, SEXP nthreads)
{
    if (!bochner_is_real_matrix(A) || nrows(A) != ncols(A) || nrows(A) < 1)
        error("'A' must be a non-empty square double matrix");
    if (!bochner_is_real_matrix(B) || nrows(B) != nrows(A))
        error("'B' must be a double matrix with one row per row of 'A'");
    int n = nrows(A), m = ncols(B), nth = bochner_nthreads(asInteger(nthreads));
    const double *a0 = REAL(A);
    for (R_xlen_t q = 0; q < XLENGTH(A); q++)
        if (!R_FINITE(a0[q])) error("'A' must be finite");
    double *a = (double *) R_alloc((size_t) n * n, sizeof(double));
    memcpy(a, a0, sizeof(double) * (size_t) n * n);
    int nr = n - 1, ng = (nr + BOCHNER_RIDGE_QB - 1) / BOCHNER_RIDGE_QB;
    const char *names[] = {"values", "c", "g", "d", "e", "V", "T", "tau", ""};
    SEXP out = PROTECT(mkNamed(VECSXP, names));
    SEXP vals = PROTECT(allocVector(REALSXP, n));
    SEXP cc = PROTECT(allocMatrix(REALSXP, n, m));
    SEXP gg = PROTECT(allocMatrix(REALSXP, n, m));
    SEXP dd = PROTECT(allocVector(REALSXP, n));
    SEXP ee = PROTECT(allocVector(REALSXP, n));
    SEXP VV = PROTECT(bochner_alloc_output(n, nr));
    SEXP TT = PROTECT(allocVector(REALSXP, (R_xlen_t) ng * BOCHNER_RIDGE_QB * BOCHNER_RIDGE_QB));
    SEXP tq = PROTECT(allocVector(REALSXP, nr));
    if (bochner_ridge_spectrum(a, n, REAL(B), m, nth, REAL(vals), REAL(cc), REAL(gg), REAL(dd),
                               REAL(ee), REAL(VV), REAL(TT), REAL(tq)))
        error("the eigenvalues of the tridiagonal did not converge");
    SEXP parts[] = {vals, cc, gg, dd, ee, VV, TT, tq};
    for (int i = 0; i < 8; i++) SET_VECTOR_ELT(out, i, parts[i]);
    UNPROTECT(9);
    return out;
}

/* .Call(C_ridge_q_rows, X, V, T, nthreads): X Q for the reflectors of a
 * spectrum (X: r x n). */
SEXP bochner_ridge_q_rows_call(SEXP X, SEXP V, SEXP T, SEXP nthreads)
{
    if (!bochner_is_real_matrix(X)) error("'X' must be a double matrix");
    int n = ncols(X);
    if (!bochner_is_real_matrix(V) || nrows(V) != n || ncols(V) != (n > 0 ? n - 1 : 0))
        error("'V' must be the n x (n - 1) reflectors for the n columns of 'X'");
    R_xlen_t ng = (n - 1 + BOCHNER_RIDGE_QB - 1) / BOCHNER_RIDGE_QB;
    if (TYPEOF(T) != REALSXP || XLENGTH(T) != ng * BOCHNER_RIDGE_QB * BOCHNER_RIDGE_QB)
        error("'T' has the wrong length");
    SEXP out = PROTECT(duplicate(X));
    bochner_ridge_q_rows(REAL(out), nrows(X), n, REAL(V), REAL(T),
                         bochner_nthreads(asInteger(nthreads)));
    UNPROTECT(1);
    return out;
}

/* .Call(C_ridge_path_rows, d, e, lambda, U, g, nthreads): the leverages
 * and fitted values along the path, list(quad, cross)
 * (bochner_ridge_path_rows()). */
SEXP bochner_ridge_path_rows_call(SEXP d, SEXP e, SEXP lambda, SEXP U, SEXP g, SEXP nthreads)
{
    if (TYPEOF(d) != REALSXP || TYPEOF(e) != REALSXP || XLENGTH(e) != XLENGTH(d) ||
        XLENGTH(d) < 1)
        error("'d' and 'e' must be double vectors of the same positive length");
    int n = (int) XLENGTH(d);
    if (TYPEOF(lambda) != REALSXP || XLENGTH(lambda) < 1) error("'lambda' must be a double vector");
    int L = (int) XLENGTH(lambda);
    if (!bochner_is_real_matrix(U) || ncols(U) != n) error("'U' must be a double matrix with n columns");
    if (!bochner_is_real_matrix(g) || nrows(g) != n) error("'g' must be a double matrix with n rows");
    int r = nrows(U), m = ncols(g);
    const char *names[] = {"quad", "cross", ""};
    SEXP out = PROTECT(mkNamed(VECSXP, names));
    SEXP quad = PROTECT(allocMatrix(REALSXP, r, L));
    SEXP cross = PROTECT(bochner_alloc_output(r, (R_xlen_t) L * m));
    bochner_ridge_path_rows(REAL(d), REAL(e), n, REAL(lambda), L, REAL(U), r, REAL(g), m,
                            bochner_nthreads(asInteger(nthreads)), REAL(quad), REAL(cross));
    SET_VECTOR_ELT(out, 0, quad);
    SET_VECTOR_ELT(out, 1, cross);
    UNPROTECT(3);
    return out;
}
