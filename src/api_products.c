/* .Call wrappers: the dense and float products (products.c, sgemm.c), the float-matrix
 * operand reader that api_testing.c shares, and the moments fold over row blocks, whose
 * state is an R object (products.c has its arithmetic), and the exact column sums'
 * states (exact_moments.c).
 * Each checks and converts R arguments, allocates its result and calls the core
 * (bochner.h); the arithmetic is the core's. */
#include "api.h"
#include <string.h>

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

/* ------------------------------------------------------------------------ */
/* The moments fold (products.c's bochner_moments_*), its state an R object:
 *   state <- NULL; for each block: state <- moments_step(state, z, y, w, single)
 *   moments_finish(state)
 * z an nr x D and y an nr x m double matrix (the same D and m for every
 * block, nr >= 1), w NULL or nr non-negative row weights (NULL: W = I),
 * single TRUE for Z'WZ in single precision (products.c).
 * The state: bochner_fold_new() (checks.c), added to in place, so no D x D
 * copy per block. */
enum { MS_ZZ, MS_ZY, MS_S, MS_T, MS_ZSUM, MS_YSUM, MS_YSQ, MS_ACC, MS_LEN };

/* The core's view of the state's vectors. */
static bochner_moments moments_view(SEXP v)
{
    bochner_moments mo = {ncols(VECTOR_ELT(v, MS_ZZ)), ncols(VECTOR_ELT(v, MS_ZY)),
                          REAL(VECTOR_ELT(v, MS_ZZ)), REAL(VECTOR_ELT(v, MS_ZY)),
                          REAL(VECTOR_ELT(v, MS_S)), REAL(VECTOR_ELT(v, MS_T)),
                          REAL(VECTOR_ELT(v, MS_ZSUM)), REAL(VECTOR_ELT(v, MS_YSUM)),
                          REAL(VECTOR_ELT(v, MS_YSQ)), REAL(VECTOR_ELT(v, MS_ACC))};
    return mo;
}

static SEXP moments_state(SEXP state, int D, int m, const double *z, const double *y, int nr)
{
    if (state != R_NilValue) {
        SEXP v = bochner_fold_vectors(state, "moments");
        if (ncols(VECTOR_ELT(v, MS_ZZ)) != D || ncols(VECTOR_ELT(v, MS_ZY)) != m)
            error("the block has %d and %d columns; the first had %d and %d", D, m,
                  ncols(VECTOR_ELT(v, MS_ZZ)), ncols(VECTOR_ELT(v, MS_ZY)));
        return state;
    }
    if (D < 1) error("the feature blocks must have at least one column");
    SEXP v = PROTECT(allocVector(VECSXP, MS_LEN));
    SEXP zz = bochner_alloc_output(D, D);
    SET_VECTOR_ELT(v, MS_ZZ, zz);
    SEXP zy = bochner_alloc_output(D, m);
    SET_VECTOR_ELT(v, MS_ZY, zy);
    memset(REAL(zz), 0, sizeof(double) * (size_t) XLENGTH(zz));
    if (m > 0) memset(REAL(zy), 0, sizeof(double) * (size_t) XLENGTH(zy));
    SET_VECTOR_ELT(v, MS_S, allocVector(REALSXP, D));
    SET_VECTOR_ELT(v, MS_ZSUM, allocVector(REALSXP, D));
    SET_VECTOR_ELT(v, MS_T, allocVector(REALSXP, m));
    SET_VECTOR_ELT(v, MS_YSUM, allocVector(REALSXP, m));
    SET_VECTOR_ELT(v, MS_YSQ, allocVector(REALSXP, m));
    SET_VECTOR_ELT(v, MS_ACC, allocVector(REALSXP, 2));
    bochner_moments mo = moments_view(v);
    bochner_moments_start(&mo, z, y, nr);
    SEXP ptr = bochner_fold_new("moments", v);
    UNPROTECT(1);
    return ptr;
}

SEXP bochner_moments_step_call(SEXP state, SEXP z, SEXP y, SEXP w, SEXP single,
                               SEXP nthreads)
{
    if (!bochner_is_real_matrix(z) || !bochner_is_real_matrix(y) || nrows(z) != nrows(y) ||
        nrows(z) < 1)
        error("'z' and 'y' must be double matrices with the same rows, at least one");
    int nr = nrows(z), D = ncols(z), m = ncols(y);
    const double *wt = NULL;
    if (w != R_NilValue) {
        if (TYPEOF(w) != REALSXP || XLENGTH(w) != nr)
            error("'w' must be NULL or a double vector, one weight per row");
        wt = REAL(w);
        for (int i = 0; i < nr; i++)
            if (!(wt[i] >= 0.0) || !R_FINITE(wt[i]))
                error("the weights must be non-negative and finite");
    }
    int sgl = asLogical(single);
    if (sgl == NA_LOGICAL) error("'single' must be TRUE or FALSE");
    int nth = bochner_nthreads(asInteger(nthreads));
    state = PROTECT(moments_state(state, D, m, REAL(z), REAL(y), nr));
    bochner_moments mo = moments_view(R_ExternalPtrProtected(state));
    bochner_moments_add(&mo, REAL(z), REAL(y), wt, nr, sgl, nth);
    UNPROTECT(1);
    return state;
}

/* The fold's result: list(zz = Zc'WZc, zy = Zc'WYc, zbar, ybar, n = N,
 * yy = diag(Yc'WYc), rows); the state is finished (its accumulators become
 * the result). */
SEXP bochner_moments_finish_call(SEXP state, SEXP nthreads)
{
    if (state == R_NilValue) error("the moments fold has no blocks");
    int nth = bochner_nthreads(asInteger(nthreads));
    SEXP v = bochner_fold_vectors(state, "moments");
    bochner_moments mo = moments_view(v);
    double n = mo.acc[0], rows = mo.acc[1];
    if (!(n > 0.0)) error("the weights sum to zero");
    bochner_fold_finish(state);
    SEXP zbar = PROTECT(allocVector(REALSXP, mo.D));
    SEXP ybar = PROTECT(allocVector(REALSXP, mo.m));
    SEXP yy = PROTECT(allocVector(REALSXP, mo.m));
    bochner_moments_finish(&mo, REAL(zbar), REAL(ybar), REAL(yy), nth);
    const char *names[] = {"zz", "zy", "zbar", "ybar", "n", "yy", "rows", ""};
    SEXP out = PROTECT(mkNamed(VECSXP, names));
    SET_VECTOR_ELT(out, 0, VECTOR_ELT(v, MS_ZZ));
    SET_VECTOR_ELT(out, 1, VECTOR_ELT(v, MS_ZY));
    SET_VECTOR_ELT(out, 2, zbar);
    SET_VECTOR_ELT(out, 3, ybar);
    SET_VECTOR_ELT(out, 4, ScalarReal(n));
    SET_VECTOR_ELT(out, 5, yy);
    SET_VECTOR_ELT(out, 6, ScalarReal(rows));
    UNPROTECT(4);
    return out;
}

/* ------------------------------------------------------------------------ */
/* The exact column sums of the survey and the standardisation
 * (exact_moments.c): a column's state travels to R as c(special, partials...). */

static void exp_from_r(bochner_expansion *e, SEXP v)
{
    e->len = 0;
    e->special = 0.0;
    if (isNull(v)) return;
    const double *r = REAL(v);
    R_xlen_t len = XLENGTH(v);
    e->special = len > 0 ? r[0] : 0.0;
    for (R_xlen_t i = 1; i < len; i++) bochner_exp_add(e, r[i]);
}

static SEXP exp_to_r(const bochner_expansion *e)
{
    SEXP v = PROTECT(allocVector(REALSXP, (R_xlen_t) e->len + 1));
    REAL(v)[0] = e->special;
    if (e->len > 0) memcpy(REAL(v) + 1, e->p, sizeof(double) * (size_t) e->len);
    UNPROTECT(1);
    return v;
}

/* The state list(s, q) (one bochner_expansion per column each) of the rows of x
 * (NULL: none) added to states a and b (NULL: empty). */
SEXP bochner_column_sums_exact_call(SEXP x, SEXP a, SEXP b, SEXP nthreads)
{
    R_xlen_t n = 0;
    int d = -1;
    if (!isNull(x)) {
        if (!bochner_is_real_matrix(x)) error("'x' must be a double matrix");
        n = nrows(x);
        d = ncols(x);
    }
    SEXP states[2] = {a, b};
    for (int k = 0; k < 2; k++) {
        if (isNull(states[k])) continue;
        if (TYPEOF(states[k]) != VECSXP || XLENGTH(states[k]) != 2)
            error("a state of the exact column sums must be list(s, q)");
        int dk = (int) XLENGTH(VECTOR_ELT(states[k], 0));
        if (d >= 0 && dk != d) error("the exact column sums have %d and %d columns", d, dk);
        d = dk;
    }
    if (d < 0) d = 0;
    bochner_expansion *s = (bochner_expansion *) R_alloc((size_t) d + 1, sizeof(bochner_expansion));
    bochner_expansion *q = (bochner_expansion *) R_alloc((size_t) d + 1, sizeof(bochner_expansion));
    for (int j = 0; j < d; j++) {
        exp_from_r(&s[j], isNull(a) ? R_NilValue : VECTOR_ELT(VECTOR_ELT(a, 0), j));
        exp_from_r(&q[j], isNull(a) ? R_NilValue : VECTOR_ELT(VECTOR_ELT(a, 1), j));
        if (!isNull(b)) {
            SEXP sb = VECTOR_ELT(VECTOR_ELT(b, 0), j), qb = VECTOR_ELT(VECTOR_ELT(b, 1), j);
            for (R_xlen_t i = 0; i < XLENGTH(sb); i++)
                if (i == 0) s[j].special += REAL(sb)[0]; else bochner_exp_add(&s[j], REAL(sb)[i]);
            for (R_xlen_t i = 0; i < XLENGTH(qb); i++)
                if (i == 0) q[j].special += REAL(qb)[0]; else bochner_exp_add(&q[j], REAL(qb)[i]);
        }
    }
    if (n > 0 && d > 0)
        bochner_column_sums_add(REAL(x), n, d, s, q, bochner_nthreads(asInteger(nthreads)));
    SEXP out = PROTECT(allocVector(VECSXP, 2));
    SEXP so = allocVector(VECSXP, d);
    SET_VECTOR_ELT(out, 0, so);
    SEXP qo = allocVector(VECSXP, d);
    SET_VECTOR_ELT(out, 1, qo);
    for (int j = 0; j < d; j++) {
        SET_VECTOR_ELT(so, j, exp_to_r(&s[j]));
        SET_VECTOR_ELT(qo, j, exp_to_r(&q[j]));
    }
    UNPROTECT(1);
    return out;
}

/* list(center, m2) from a state of n rows: fl(S) / n and fl(n Q - S^2) / n. */
SEXP bochner_column_moments_exact_call(SEXP state, SEXP rows)
{
    if (TYPEOF(state) != VECSXP || XLENGTH(state) != 2)
        error("a state of the exact column sums must be list(s, q)");
    double n = asReal(rows);
    if (!(n >= 0.0)) error("'rows' must be a count");
    int d = (int) XLENGTH(VECTOR_ELT(state, 0));
    SEXP out = PROTECT(allocVector(VECSXP, 2));
    SEXP center = allocVector(REALSXP, d);
    SET_VECTOR_ELT(out, 0, center);
    SEXP m2 = allocVector(REALSXP, d);
    SET_VECTOR_ELT(out, 1, m2);
    bochner_expansion *s = (bochner_expansion *) R_alloc(1, sizeof(bochner_expansion));
    bochner_expansion *q = (bochner_expansion *) R_alloc(1, sizeof(bochner_expansion));
    bochner_expansion *t = (bochner_expansion *) R_alloc(1, sizeof(bochner_expansion));
    for (int j = 0; j < d; j++) {
        exp_from_r(s, VECTOR_ELT(VECTOR_ELT(state, 0), j));
        exp_from_r(q, VECTOR_ELT(VECTOR_ELT(state, 1), j));
        bochner_column_moment(s, q, n, t, REAL(center) + j, REAL(m2) + j);
    }
    UNPROTECT(1);
    return out;
}
