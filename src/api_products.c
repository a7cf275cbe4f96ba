/* .Call wrappers: the dense and float products (products.c, sgemm.c), and the float-matrix
 * operand reader that api_testing.c shares.
 * Each checks and converts R arguments, allocates its result and calls the core
 * (bochner.h); the arithmetic is the core's. */
#include "api.h"

/* A float matrix as R holds it for the hooks: a raw vector of 4 bytes an entry with the
 * dimensions of the double matrix it came from in the attribute "float_dim". */
const float *bochner_float_operand(SEXP x, const char *what, int *nr, int *nc)
{
    if (TYPEOF(x) == RAWSXP) {
        SEXP dim = getAttrib(x, install("float_dim"));
        if (TYPEOF(dim) != INTSXP || XLENGTH(dim) != 2 ||
            (R_xlen_t) INTEGER(dim)[0] * INTEGER(dim)[1] * 4 != XLENGTH(x))
            error("'%s' must be a float matrix from C_float_matrix", what);
        *nr = INTEGER(dim)[0];
        *nc = INTEGER(dim)[1];
        return (const float *) RAW(x);
    }
    if (!bochner_is_real_matrix(x)) error("'%s' must be a double matrix", what);
    *nr = nrows(x);
    *nc = ncols(x);
    float *f = (float *) R_alloc((size_t) XLENGTH(x) + 1, sizeof(float));
    bochner_to_float(REAL(x), XLENGTH(x), f);
    return f;
}

/* .Call(C_sproduct, a, b, transa, nthreads): the threaded product (products.c) of float
 * operands (double matrices, rounded, or raw ones from C_float_matrix): a %*% b, or
 * t(a) %*% b with transa; b NULL with transa: t(a) %*% a, exactly symmetric (Z'Z). */
SEXP bochner_sproduct_call(SEXP a, SEXP b, SEXP transa, SEXP nthreads)
{
    int ar, ac, br, bc;
    const float *fa = bochner_float_operand(a, "a", &ar, &ac);
    const int tr = asLogical(transa) == TRUE;
    const int nth = bochner_nthreads(asInteger(nthreads));
    if (isNull(b)) {
        if (!tr) error("'b' = NULL needs transa = TRUE");
        SEXP g = PROTECT(bochner_alloc_output(ac, ac));
        memset(REAL(g), 0, sizeof(double) * (size_t) XLENGTH(g));
        bochner_sproduct(1, fa, ar, fa, ar, ac, ac, ar, REAL(g), ac, 0, 1, nth);
        bochner_mirror_upper(REAL(g), ac, nth);
        UNPROTECT(1);
        return g;
    }
    const float *fb = bochner_float_operand(b, "b", &br, &bc);
    const int m = tr ? ac : ar, k = tr ? ar : ac;
    if (br != k) error("non-conformable arguments: inner dimension of a = %d, nrow(b) = %d", k, br);
    SEXP c = PROTECT(bochner_alloc_output(m, bc));
    if (k == 0) memset(REAL(c), 0, sizeof(double) * (size_t) XLENGTH(c));
    else bochner_sproduct(tr, fa, ar, fb, br, m, bc, k, REAL(c), m, 0, 0, nth);
    UNPROTECT(1);
    return c;
}

/* a %*% b */
SEXP bochner_matprod_call(SEXP a, SEXP b, SEXP nthreads)
{
    if (!bochner_is_real_matrix(a)) error("'a' must be a double matrix");
    if (!bochner_is_real_matrix(b)) error("'b' must be a double matrix");
    int m = nrows(a), k = ncols(a), n = ncols(b);
    if (nrows(b) != k) error("non-conformable arguments: ncol(a) = %d, nrow(b) = %d", k, nrows(b));
    SEXP c = PROTECT(bochner_alloc_output(m, n));
    if (k == 0) memset(REAL(c), 0, sizeof(double) * (size_t) XLENGTH(c));
    else bochner_product(REAL(a), m, REAL(b), k, m, n, k, REAL(c), m, 0, 0,
                         bochner_nthreads(asInteger(nthreads)));
    UNPROTECT(1);
    return c;
}

/* t(a) %*% a, exactly symmetric */
SEXP bochner_crossprod_call(SEXP a, SEXP nthreads)
{
    if (!bochner_is_real_matrix(a)) error("'a' must be a double matrix");
    int n = nrows(a), D = ncols(a);
    int nth = bochner_nthreads(asInteger(nthreads));
    SEXP g = PROTECT(bochner_alloc_output(D, D));
    memset(REAL(g), 0, sizeof(double) * (size_t) XLENGTH(g));
    bochner_crossproduct(REAL(a), n, REAL(a), n, D, D, n, REAL(g), D, 1, 1, nth);
    bochner_mirror_upper(REAL(g), D, nth);
    UNPROTECT(1);
    return g;
}
