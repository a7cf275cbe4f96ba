/* .Call wrappers: FALKON's m x m factors (falkon_factor.c), held in an external pointer
 * list(M, aux, G) tagged "bochner_falkon_factor" that only these wrappers open, and its
 * passes over the rows (falkon.c).
 * Each checks and converts R arguments, allocates its result and calls the core
 * (bochner.h); the arithmetic is the core's. */
#include "api.h"
#include <string.h>

/* The factor of F (checked), an interrupted preconditioner undone. */
static bochner_falkon_packed packed_arg(SEXP F)
{
    if (TYPEOF(F) != EXTPTRSXP || R_ExternalPtrTag(F) != install("bochner_falkon_factor"))
        error("'F' must be a FALKON factor");
    SEXP pr = R_ExternalPtrProtected(F);
    bochner_falkon_packed p = {REAL(VECTOR_ELT(pr, 0)), REAL(VECTOR_ELT(pr, 1)),
                               nrows(VECTOR_ELT(pr, 0)),
                               isNull(VECTOR_ELT(pr, 2)) ? NULL : REAL(VECTOR_ELT(pr, 2))};
    bochner_falkon_packed_restore(&p);
    return p;
}

/* .Call(C_falkon_factor, centres, code, par, eps, nthreads): the factor of
 * K_mm + shift I (bochner_falkon_factor()) as an external pointer, NULL
 * when every try fails, or FALSE when K_mm is not finite. */
SEXP bochner_falkon_factor_call(SEXP centres, SEXP code, SEXP par, SEXP eps, SEXP nthreads)
{
    if (!bochner_is_real_matrix(centres) || nrows(centres) < 1) error("'centres' must be a double matrix");
    if (TYPEOF(par) != REALSXP || XLENGTH(par) < 1) error("'par' must be a double vector");
    int m = nrows(centres), d = ncols(centres), nth = bochner_nthreads(asInteger(nthreads));
    SEXP pr = PROTECT(allocVector(VECSXP, 3));
    SET_VECTOR_ELT(pr, 0, allocMatrix(REALSXP, m, m));
    SET_VECTOR_ELT(pr, 1, allocVector(REALSXP, 2 * (R_xlen_t) m + 3));
    int res = bochner_falkon_factor(REAL(centres), m, d, asInteger(code), REAL(par), LENGTH(par),
                                    asReal(eps), REAL(VECTOR_ELT(pr, 0)),
                                    REAL(VECTOR_ELT(pr, 1)), nth);
    if (res == 2) { UNPROTECT(1); return ScalarLogical(FALSE); }
    if (res == 1) { UNPROTECT(1); return R_NilValue; }
    SEXP F = PROTECT(R_MakeExternalPtr(NULL, install("bochner_falkon_factor"), pr));
    UNPROTECT(2);
    return F;
}

/* .Call(C_falkon_factor_precond, F, lambda, s, nthreads): A for lambda and
 * curvature s, in place; TRUE, or FALSE when a pivot fails (lambda is not
 * checked for sign: R passes positive ones, the tests a negative one). */
SEXP bochner_falkon_factor_precond_call(SEXP F, SEXP lambda, SEXP s, SEXP nthreads)
{
    bochner_falkon_packed p = packed_arg(F);
    double lam = asReal(lambda), sv = asReal(s);
    if (!R_FINITE(lam)) error("'lambda' must be a finite number");
    if (!R_FINITE(sv) || sv <= 0) error("'s' must be a positive number");
    int bad = bochner_falkon_packed_precond(&p, lam, sv, bochner_nthreads(asInteger(nthreads)));
    return ScalarLogical(bad ? FALSE : TRUE);
}

/* .Call(C_falkon_factor_solve, F, B, which, trans, nthreads): T^-1 B, T'^-1 B
 * (which = 0) or A^-1 B, A'^-1 B (which = 1), in the trisolve's orders. */
SEXP bochner_falkon_factor_solve_call(SEXP F, SEXP B, SEXP which, SEXP trans, SEXP nthreads)
{
    bochner_falkon_packed p = packed_arg(F);
    int a = asInteger(which) == 1;
    if (a && p.aux[2 * (ptrdiff_t) p.m + 2] != 1) error("the factor holds no preconditioner");
    if (!bochner_is_real_matrix(B) || nrows(B) != p.m)
        error("'B' must be a double matrix with one row per centre");
    SEXP X = PROTECT(duplicate(B));
    bochner_falkon_packed_solve(&p, a, REAL(X), ncols(B), asLogical(trans) == TRUE,
                                bochner_nthreads(asInteger(nthreads)));
    UNPROTECT(1);
    return X;
}

/* .Call(C_falkon_factor_tprod, F, B, trans, nthreads): T B or T' B. */
SEXP bochner_falkon_factor_tprod_call(SEXP F, SEXP B, SEXP trans, SEXP nthreads)
{
    bochner_falkon_packed p = packed_arg(F);
    if (!bochner_is_real_matrix(B) || nrows(B) != p.m)
        error("'B' must be a double matrix with one row per centre");
    int nth = bochner_falkon_threads(bochner_nthreads(asInteger(nthreads)),
                                     (double) p.m * p.m * ncols(B));
    int k = ncols(B);
    SEXP C = PROTECT(allocMatrix(REALSXP, p.m, k));
    bochner_falkon_packed_tprod(&p, REAL(B), k, asLogical(trans) == TRUE, REAL(C), nth);
    UNPROTECT(1);
    return C;
}

/* .Call(C_falkon_factor_get, F, which): T (which = 0) or A (which = 1) as
 * plain upper triangular matrices, or c(lambda, s, state) (which = 2). */
SEXP bochner_falkon_factor_get_call(SEXP F, SEXP which)
{
    bochner_falkon_packed p = packed_arg(F);
    int w = asInteger(which), m = p.m;
    if (w == 2) {
        SEXP out = PROTECT(allocVector(REALSXP, 3));
        memcpy(REAL(out), p.aux + 2 * (ptrdiff_t) m, 3 * sizeof(double));
        UNPROTECT(1);
        return out;
    }
    if (w == 1 && p.aux[2 * (ptrdiff_t) m + 2] != 1) return R_NilValue;
    SEXP out = PROTECT(allocMatrix(REALSXP, m, m));
    bochner_falkon_packed_get(&p, w, REAL(out));
    UNPROTECT(1);
    return out;
}

/* .Call(C_falkon_factor_copy, F): a second factor with a copy of the array
 * (and sharing the kept G, which is only read). */
SEXP bochner_falkon_factor_copy_call(SEXP F)
{
    packed_arg(F);
    SEXP old = R_ExternalPtrProtected(F);
    SEXP pr = PROTECT(allocVector(VECSXP, 3));
    SET_VECTOR_ELT(pr, 0, duplicate(VECTOR_ELT(old, 0)));
    SET_VECTOR_ELT(pr, 1, duplicate(VECTOR_ELT(old, 1)));
    SET_VECTOR_ELT(pr, 2, VECTOR_ELT(old, 2));
    SEXP out = PROTECT(R_MakeExternalPtr(NULL, install("bochner_falkon_factor"), pr));
    UNPROTECT(2);
    return out;
}

/* .Call(C_falkon_factor_keep_g, F, nthreads): G = T T' / m formed once and
 * kept in a second m x m array, so that each later preconditioner copies
 * it instead of forming it (for fits that refactor often and can hold it). */
SEXP bochner_falkon_factor_keep_g_call(SEXP F, SEXP nthreads)
{
    bochner_falkon_packed p = packed_arg(F);
    SEXP pr = R_ExternalPtrProtected(F);
    if (!isNull(VECTOR_ELT(pr, 2))) return R_NilValue;
    SEXP G = PROTECT(allocMatrix(REALSXP, p.m, p.m));
    bochner_falkon_packed_keep_g(&p, REAL(G), bochner_nthreads(asInteger(nthreads)));
    SET_VECTOR_ELT(pr, 2, G);
    UNPROTECT(1);
    return R_NilValue;
}
