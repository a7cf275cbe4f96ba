/* .Call wrappers: the ridge solve (cholesky.c).  ridge_path.c's wrappers drive its static
 * reduction steps and stay there until it is split.
 * Each checks and converts R arguments, allocates its result and calls the core
 * (bochner.h); the arithmetic is the core's. */
#include "api.h"

/* .Call(C_ridge_solve, A, B, lambda, nthreads): (A + lambda I)^-1 B for a
 * symmetric A (its upper triangle is read); an error naming the column
 * whose pivot fails. */
SEXP bochner_ridge_solve_call(SEXP A, SEXP B, SEXP lambda, SEXP nthreads)
{
    if (!bochner_is_real_matrix(A) || nrows(A) != ncols(A))
        error("'A' must be a square double matrix");
    if (!bochner_is_real_matrix(B) || nrows(B) != nrows(A))
        error("'B' must be a double matrix with one row per row of 'A'");
    if (TYPEOF(lambda) != REALSXP || XLENGTH(lambda) != 1 || !R_FINITE(REAL(lambda)[0]))
        error("'lambda' must be one finite number");
    int n = nrows(A), m = ncols(B);
    SEXP R = PROTECT(duplicate(A));
    SEXP X = PROTECT(duplicate(B));
    double *r = REAL(R), lam = REAL(lambda)[0];
    for (int i = 0; i < n; i++) r[i + (ptrdiff_t) i * n] += lam;
    int bad = bochner_cholesky(r, n, bochner_nthreads(asInteger(nthreads)));
    if (bad) error("the matrix is not numerically positive definite (pivot %d)", bad);
    bochner_cholesky_solve(r, n, REAL(X), m);
    UNPROTECT(2);
    return X;
}
