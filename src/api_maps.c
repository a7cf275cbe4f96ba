/* .Call wrappers: the feature maps: Fourier features and fused decision values (features.c),
 * SORF (structured.c), random projections, TensorSketch and min-kernel features
 * (polynomial.c), randomly pivoted Cholesky's Nystrom landmarks (rpcholesky.c), and
 * the features and distances of sparse rows (sparse.c), read here from Matrix's
 * dgCMatrix / dgRMatrix into the core's CSR form.
 * Each checks and converts R arguments, allocates its result and calls the core
 * (bochner.h); the arithmetic is the core's. */
#include "api.h"
#include <limits.h>
#include <string.h>

/* The arguments shared by the entry points: x, w, b, and the feature count. */
static R_xlen_t check_fourier_args(SEXP x, SEXP w, SEXP b)
{
    if (!bochner_is_real_matrix(x)) error("'x' must be a double matrix");
    if (!bochner_is_real_matrix(w)) error("'w' must be a double matrix");
    int d = ncols(x), nfreq = ncols(w);
    if (nrows(w) != d) error("'w' must have one row per column of 'x'");
    if (d < 1 || nfreq < 1) error("'x' and 'w' must have at least one column");
    if (!isNull(b) && (TYPEOF(b) != REALSXP || XLENGTH(b) != nfreq))
        error("'b' must be NULL or a double vector with one phase per frequency");
    R_xlen_t ncol = isNull(b) ? 2 * (R_xlen_t) nfreq : nfreq;
    if (ncol > INT_MAX) error("too many features");
    return ncol;
}

/* Z (n x features), or t(Z) when transposed is TRUE */
SEXP bochner_rff_transform_call(SEXP x, SEXP w, SEXP b, SEXP scale, SEXP transposed,
                                SEXP nthreads)
{
    R_xlen_t ncol = check_fourier_args(x, w, b), n = nrows(x);
    int tr = asLogical(transposed) == TRUE;
    SEXP z = PROTECT(tr ? bochner_alloc_output(ncol, n) : bochner_alloc_output(n, ncol));
    if (n > 0)
        bochner_fourier_run(REAL(x), n, ncols(x), REAL(w), ncols(w), isNull(b) ? NULL : REAL(b),
                    asReal(scale), REAL(z), tr, NULL, NULL, 0,
                    bochner_nthreads(asInteger(nthreads)));
    UNPROTECT(1);
    return z;
}

/* Z %*% beta + intercept (n x m) without holding Z: memory O(block) */
SEXP bochner_rff_decision_call(SEXP x, SEXP w, SEXP b, SEXP scale, SEXP beta,
                               SEXP intercept, SEXP nthreads)
{
    R_xlen_t ncol = check_fourier_args(x, w, b), n = nrows(x);
    if (!bochner_is_real_matrix(beta) || nrows(beta) != ncol)
        error("'beta' must be a double matrix with one row per feature");
    int m = ncols(beta);
    if (TYPEOF(intercept) != REALSXP || XLENGTH(intercept) != m)
        error("'intercept' must be a double vector with one value per column of 'beta'");
    SEXP out = PROTECT(bochner_alloc_output(n, m));
    if (n > 0 && m > 0)
        bochner_fourier_run(REAL(x), n, ncols(x), REAL(w), ncols(w), isNull(b) ? NULL : REAL(b),
                    asReal(scale), REAL(out), 2, REAL(beta), REAL(intercept), m,
                    bochner_nthreads(asInteger(nthreads)));
    UNPROTECT(1);
    return out;
}

static void check_data_matrix(SEXP x)
{
    if (!bochner_is_real_matrix(x)) error("'x' must be a double matrix");
    if (ncols(x) < 1) error("'x' must have at least one column");
}

/* An n x (ncol + has_constant) matrix, the last column filled with the
 * constant. */
static SEXP alloc_features(R_xlen_t n, R_xlen_t ncol, SEXP constant)
{
    int has_const = !isNull(constant);
    if (has_const && (TYPEOF(constant) != REALSXP || XLENGTH(constant) != 1))
        error("'constant' must be NULL or one number");
    if (ncol + has_const > INT_MAX) error("too many features");
    SEXP z = PROTECT(bochner_alloc_output(n, ncol + has_const));
    if (has_const) {
        double c = REAL(constant)[0], *zc = REAL(z) + ncol * n;
        for (R_xlen_t i = 0; i < n; i++) zc[i] = c;
    }
    UNPROTECT(1);
    return z;
}

SEXP bochner_projection_transform_call(SEXP x, SEXP w, SEXP term_ptr,
                                       SEXP term_deg, SEXP term_weight,
                                       SEXP constant, SEXP nthreads)
{
    check_data_matrix(x);
    if (!bochner_is_real_matrix(w)) error("'w' must be a double matrix");
    if (TYPEOF(term_ptr) != INTSXP || XLENGTH(term_ptr) < 1)
        error("'term_ptr' must be an integer vector");
    if (TYPEOF(term_deg) != INTSXP) error("'term_deg' must be an integer vector");
    if (TYPEOF(term_weight) != REALSXP || XLENGTH(term_weight) != XLENGTH(term_deg))
        error("'term_weight' must be a double vector as long as 'term_deg'");
    R_xlen_t n = nrows(x);
    int d = ncols(x);
    if (nrows(w) != d) error("'w' must have one row per column of 'x'");
    R_xlen_t nfeat = XLENGTH(term_ptr) - 1, nterm = XLENGTH(term_deg);
    const int *tp = INTEGER(term_ptr), *td = INTEGER(term_deg);
    if (tp[0] != 0 || tp[nfeat] != nterm) error("'term_ptr' does not match 'term_deg'");
    for (R_xlen_t f = 0; f < nfeat; f++)
        if (tp[f + 1] < tp[f]) error("'term_ptr' must be non-decreasing");
    double nvec = 0;
    for (R_xlen_t t = 0; t < nterm; t++) {
        if (td[t] == NA_INTEGER || td[t] < 0) error("'term_deg' must be non-negative");
        nvec += td[t];
    }
    if (nvec != (double) ncols(w)) error("'w' must have one column per projection");
    SEXP z = PROTECT(alloc_features(n, nfeat, constant));
    bochner_projection_features(REAL(x), n, d, REAL(w), (int) nfeat, tp, td,
                                REAL(term_weight), REAL(z),
                                bochner_nthreads(asInteger(nthreads)));
    UNPROTECT(1);
    return z;
}

SEXP bochner_tensorsketch_transform_call(SEXP x, SEXP hash, SEXP sign,
                                         SEXP D, SEXP scale, SEXP offset,
                                         SEXP nthreads)
{
    check_data_matrix(x);
    R_xlen_t n = nrows(x);
    int d = ncols(x), DD = asInteger(D);
    if (DD == NA_INTEGER || DD < 1 || DD > INT_MAX / 4)
        error("'D' must be a count between 1 and INT_MAX / 4");
    if (TYPEOF(hash) != INTSXP || !isMatrix(hash) || nrows(hash) != d + 1 || ncols(hash) < 1)
        error("'hash' must be an integer matrix with one row per column of 'x', plus one");
    if (TYPEOF(sign) != REALSXP || !isMatrix(sign) || nrows(sign) != d + 1 ||
        ncols(sign) != ncols(hash))
        error("'sign' must be a double matrix shaped like 'hash'");
    double sc = asReal(scale), off = asReal(offset);
    if (!(sc >= 0) || !(off >= 0)) error("'scale' and 'offset' must be non-negative");
    int p = ncols(hash);
    R_xlen_t len = XLENGTH(hash);
    int *h = (int *) R_alloc((size_t) len, sizeof(int));
    for (R_xlen_t i = 0; i < len; i++) {
        int v = INTEGER(hash)[i];
        if (v == NA_INTEGER || v < 1 || v > DD) error("'hash' values must lie in 1..D");
        h[i] = v - 1;
    }
    SEXP z = PROTECT(bochner_alloc_output(n, DD));
    bochner_tensor_sketch(REAL(x), n, d, h, REAL(sign), p, DD, sqrt(sc), sqrt(off),
                          REAL(z), bochner_nthreads(asInteger(nthreads)));
    UNPROTECT(1);
    return z;
}

SEXP bochner_min_transform_call(SEXP x, SEXP t, SEXP tmax, SEXP constant,
                                SEXP nthreads)
{
    check_data_matrix(x);
    R_xlen_t n = nrows(x);
    int d = ncols(x);
    if (TYPEOF(t) != REALSXP || !isMatrix(t) || ncols(t) != d || nrows(t) < 1)
        error("'t' must be a double matrix with one column per column of 'x'");
    if (TYPEOF(tmax) != REALSXP || XLENGTH(tmax) != d)
        error("'tmax' must be a double vector with one value per column of 'x'");
    int D = nrows(t);
    double *scale = (double *) R_alloc((size_t) d, sizeof(double));
    for (int j = 0; j < d; j++) {
        double v = REAL(tmax)[j];
        if (!(v >= 0) || !R_FINITE(v)) error("'tmax' must be finite and non-negative");
        scale[j] = sqrt(v / (double) D);
    }
    SEXP z = PROTECT(alloc_features(n, (R_xlen_t) d * D, constant));
    bochner_min_features(REAL(x), n, d, REAL(t), D, scale, REAL(z),
                         bochner_nthreads(asInteger(nthreads)));
    UNPROTECT(1);
    return z;
}

/* Z (n x D or n x 2D).  sign: integer p x 3 x B array of +-1 (D1, D2, D3
 * of each block); radial: D scales r_j / sigma; phase: D phases or NULL. */
SEXP bochner_structured_transform_call(SEXP x, SEXP sign, SEXP radial, SEXP phase,
                                       SEXP scale, SEXP nthreads)
{
    if (!bochner_is_real_matrix(x)) error("'x' must be a double matrix");
    if (TYPEOF(sign) != INTSXP) error("'sign' must be an integer array");
    if (TYPEOF(radial) != REALSXP) error("'radial' must be a double vector");
    R_xlen_t nfreq = XLENGTH(radial), n = nrows(x);
    int d = ncols(x);
    if (nfreq < 1 || nfreq > INT_MAX / 2) error("'radial' must have between 1 and %d scales", INT_MAX / 2);
    if (!isNull(phase) && (TYPEOF(phase) != REALSXP || XLENGTH(phase) != nfreq))
        error("'phase' must be NULL or a double vector with one phase per frequency");
    if (d < 1) error("'x' must have at least one column");
    SEXP dim = getAttrib(sign, R_DimSymbol);
    if (TYPEOF(dim) != INTSXP || XLENGTH(dim) != 3 || INTEGER(dim)[1] != 3)
        error("'sign' must be a p x 3 x B array");
    int p = INTEGER(dim)[0];
    if (p < 2 || (p & (p - 1)) != 0 || p < d)
        error("'sign' must have a power of 2 rows, at least 2 and at least ncol(x)");
    R_xlen_t nblock = (nfreq + p - 1) / p;
    if (INTEGER(dim)[2] != nblock)
        error("'sign' must have one slice per block of %d frequencies", p);
    const int *sg = INTEGER(sign);
    for (R_xlen_t i = 0; i < XLENGTH(sign); i++)
        if (sg[i] != 1 && sg[i] != -1) error("'sign' must hold only -1 and 1");
    R_xlen_t ncol = isNull(phase) ? 2 * nfreq : nfreq;
    SEXP z = PROTECT(bochner_alloc_output(n, ncol));
    if (n > 0) {
        int st = bochner_structured_transform(REAL(x), n, d, p, (int) nfreq, sg, REAL(radial),
                                              isNull(phase) ? NULL : REAL(phase), asReal(scale),
                                              REAL(z), bochner_nthreads(asInteger(nthreads)));
        bochner_stop_on_status(st, "structured_transform");
    }
    UNPROTECT(1);
    return z;
}

/* x: n x d double matrix; code, par: the kernel (as for kernel_matrix); diag: K_ii;
 * m: pivots wanted (1..n); block: candidates per round (1: sequential).  Draws from
 * R's generator.  state: NULL, or an earlier call's state on the same x, kernel and
 * diag, to continue from (its pivots come first); keep: whether to return the state.
 * Returns list(index = the pivots, 1-based rows in the order chosen, fewer than m
 * when the residual vanished; trace = trace(K - K_hat) on them; drawn = the
 * candidates drawn; state = NULL or list(F, r, index): the factor (pivots x n, a
 * row's factor per column), the residual diagonal and the pivots). */
SEXP bochner_rpcholesky_call(SEXP x, SEXP code, SEXP par, SEXP diag, SEXP m, SEXP block,
                             SEXP nthreads, SEXP state, SEXP keep)
{
    int mm = bochner_landmark_args(x, par, diag, m, "m");
    int b = bochner_count_arg(block, "block", 1);
    R_xlen_t n = nrows(x);
    int nf0 = 0;
    SEXP F0 = R_NilValue, r0 = R_NilValue, p0 = R_NilValue;
    if (!isNull(state)) {
        if (TYPEOF(state) != VECSXP || XLENGTH(state) != 3)
            error("'state' must be NULL or a state returned by an earlier call");
        F0 = VECTOR_ELT(state, 0);
        r0 = VECTOR_ELT(state, 1);
        p0 = VECTOR_ELT(state, 2);
        nf0 = TYPEOF(p0) == INTSXP ? LENGTH(p0) : -1;
        if (nf0 < 0 || nf0 > mm || !bochner_is_real_matrix(F0) || nrows(F0) != nf0 ||
            ncols(F0) != n || TYPEOF(r0) != REALSXP || XLENGTH(r0) != n)
            error("'state' does not match 'x' and 'm'");
        for (int j = 0; j < nf0; j++)
            if (INTEGER(p0)[j] < 1 || INTEGER(p0)[j] > n) error("'state' holds a pivot outside 'x'");
    }
    int kept = asLogical(keep) == TRUE;
    /* the factor is the returned state's when kept (no copy), else scratch */
    SEXP Fs = PROTECT(kept ? allocMatrix(REALSXP, mm, (int) n) : R_NilValue);
    SEXP rs = PROTECT(kept ? allocVector(REALSXP, n) : R_NilValue);
    double *F = kept ? REAL(Fs) : (double *) R_alloc((size_t) n * (size_t) mm, sizeof(double));
    double *r = kept ? REAL(rs) : (double *) R_alloc((size_t) n, sizeof(double));
    int *piv = (int *) R_alloc((size_t) mm, sizeof(int));
    if (nf0 > 0) {
        const double *f0 = REAL(F0);
        for (R_xlen_t i = 0; i < n; i++)
            memcpy(F + i * (R_xlen_t) mm, f0 + i * (R_xlen_t) nf0, sizeof(double) * (size_t) nf0);
        memcpy(r, REAL(r0), sizeof(double) * (size_t) n);
        for (int j = 0; j < nf0; j++) piv[j] = INTEGER(p0)[j] - 1;
    }
    int found = 0;
    double trace = 0.0, drawn = 0.0;
    GetRNGstate();
    int status = bochner_rpcholesky(asInteger(code), REAL(par), LENGTH(par), REAL(x), n,
                                    ncols(x), REAL(diag), mm, b,
                                    bochner_nthreads(asInteger(nthreads)), F, r, nf0, piv,
                                    &found, &trace, &drawn);
    PutRNGstate();
    bochner_stop_on_status(status, "randomly pivoted Cholesky");
    const char *names[] = {"index", "trace", "drawn", "state", ""};
    SEXP res = PROTECT(mkNamed(VECSXP, names));
    SEXP p = PROTECT(allocVector(INTSXP, found));
    for (int j = 0; j < found; j++) INTEGER(p)[j] = piv[j] + 1;
    SET_VECTOR_ELT(res, 0, p);
    SET_VECTOR_ELT(res, 1, ScalarReal(trace));
    SET_VECTOR_ELT(res, 2, ScalarReal(drawn));
    if (kept) {
        /* a run that stopped short (the residual vanished) keeps its first 'found'
         * columns: the factor is then pivots x n, as the state promises */
        if (found < mm) {
            SEXP Fk = PROTECT(allocMatrix(REALSXP, found, (int) n));
            for (R_xlen_t i = 0; i < n; i++)
                memcpy(REAL(Fk) + i * (R_xlen_t) found, F + i * (R_xlen_t) mm,
                       sizeof(double) * (size_t) found);
            Fs = Fk;
        } else {
            PROTECT(Fs);
        }
        const char *snames[] = {"F", "r", "index", ""};
        SEXP st = PROTECT(mkNamed(VECSXP, snames));
        SET_VECTOR_ELT(st, 0, Fs);
        SET_VECTOR_ELT(st, 1, rs);
        SET_VECTOR_ELT(st, 2, p);
        SET_VECTOR_ELT(res, 3, st);
        UNPROTECT(2);
    }
    UNPROTECT(4);
    return res;
}

/* ------------------------------------------------------------------------ */
/* The sparse matrix from R: checked, and in CSR form                         */

static SEXP slot(SEXP x, const char *name, SEXPTYPE type)
{
    SEXP s = install(name);
    if (!R_has_slot(x, s)) error("'x' must be a dgCMatrix or dgRMatrix");
    SEXP v = R_do_slot(x, s);
    if (TYPEOF(v) != type) error("'x' has a malformed '%s' slot", name);
    return v;
}

/* x (a dgCMatrix or dgRMatrix) as CSR with increasing columns in each row.
 * The checks keep a malformed object from reading out of bounds. */
static bochner_csr sparse_rows(SEXP x)
{
    if (!isS4(x) || !(inherits(x, "dgCMatrix") || inherits(x, "dgRMatrix")))
        error("'x' must be a dgCMatrix or dgRMatrix");
    int by_row = inherits(x, "dgRMatrix");
    SEXP dim = slot(x, "Dim", INTSXP);
    if (XLENGTH(dim) != 2 || INTEGER(dim)[0] < 0 || INTEGER(dim)[1] < 0)
        error("'x' has a malformed 'Dim' slot");
    int n = INTEGER(dim)[0], d = INTEGER(dim)[1];
    int outer = by_row ? n : d, inner = by_row ? d : n;
    SEXP p = slot(x, "p", INTSXP), idx = slot(x, by_row ? "j" : "i", INTSXP),
         val = slot(x, "x", REALSXP);
    if (XLENGTH(p) != (R_xlen_t) outer + 1 || INTEGER(p)[0] != 0)
        error("'x' has a malformed 'p' slot");
    const int *pp = INTEGER(p), *ii = INTEGER(idx);
    for (int o = 0; o < outer; o++)
        if (pp[o + 1] < pp[o]) error("'x' has a malformed 'p' slot");
    /* before any index is read */
    if (XLENGTH(idx) < pp[outer] || XLENGTH(val) < pp[outer])
        error("'x' has fewer indices or values than its 'p' slot says");
    for (int o = 0; o < outer; o++)
        for (int k = pp[o]; k < pp[o + 1]; k++)
            if (ii[k] < 0 || ii[k] >= inner || (k > pp[o] && ii[k] <= ii[k - 1]))
                error("'x' has unsorted or out-of-range indices");
    bochner_csr r = {pp, ii, REAL(val), n, d};
    if (by_row) return r;
    /* CSC to CSR by counting: columns visited in order, so each row's columns
     * come out increasing */
    int nnz = pp[d];
    int *rp = (int *) R_alloc((size_t) n + 1, sizeof(int));
    int *col = (int *) R_alloc(nnz > 0 ? (size_t) nnz : 1, sizeof(int));
    double *v = (double *) R_alloc(nnz > 0 ? (size_t) nnz : 1, sizeof(double));
    memset(rp, 0, sizeof(int) * ((size_t) n + 1));
    for (int k = 0; k < nnz; k++) rp[ii[k] + 1]++;
    for (int i = 0; i < n; i++) rp[i + 1] += rp[i];
    int *next = (int *) R_alloc((size_t) n + 1, sizeof(int));
    memcpy(next, rp, sizeof(int) * ((size_t) n + 1));
    const double *xv = REAL(val);
    for (int l = 0; l < d; l++)
        for (int k = pp[l]; k < pp[l + 1]; k++) {
            int dst = next[ii[k]]++;
            col[dst] = l;
            v[dst] = xv[k];
        }
    r.ptr = rp;
    r.col = col;
    r.val = v;
    return r;
}

/* Z (layout 0), t(Z) (1) or Z beta + intercept (2) of a sparse x: as
 * bochner_rff_transform_call / bochner_rff_decision_call for dense x.  wt:
 * NULL, or t(w) computed once by a caller that maps many blocks of rows. */
SEXP bochner_sparse_rff_call(SEXP x, SEXP w, SEXP wt, SEXP b, SEXP scale, SEXP layout,
                             SEXP beta, SEXP intercept, SEXP nthreads)
{
    bochner_csr xr = sparse_rows(x);
    if (!bochner_is_real_matrix(w)) error("'w' must be a double matrix");
    int nfreq = ncols(w);
    if (nrows(w) != xr.d) error("'w' must have one row per column of 'x'");
    if (xr.d < 1 || nfreq < 1) error("'x' and 'w' must have at least one column");
    if (!isNull(wt) && (!bochner_is_real_matrix(wt) || nrows(wt) != nfreq || ncols(wt) != xr.d))
        error("'wt' must be NULL or t(w)");
    if (!isNull(b) && (TYPEOF(b) != REALSXP || XLENGTH(b) != nfreq))
        error("'b' must be NULL or a double vector with one phase per frequency");
    R_xlen_t nfeat = isNull(b) ? 2 * (R_xlen_t) nfreq : nfreq;
    if (nfeat > INT_MAX) error("too many features");
    int lay = asInteger(layout);
    if (lay != 0 && lay != 1 && lay != 2) error("'layout' must be 0, 1 or 2");
    int m = 0;
    if (lay == 2) {
        if (!bochner_is_real_matrix(beta) || nrows(beta) != nfeat)
            error("'beta' must be a double matrix with one row per feature");
        m = ncols(beta);
        if (TYPEOF(intercept) != REALSXP || XLENGTH(intercept) != m)
            error("'intercept' must be a double vector with one value per column of 'beta'");
    }
    R_xlen_t n = xr.n;
    SEXP out = PROTECT(lay == 0 ? bochner_alloc_output(n, nfeat)
                       : lay == 1 ? bochner_alloc_output(nfeat, n)
                       : bochner_alloc_output(n, m));
    if (n > 0 && (lay != 2 || m > 0))
        bochner_sparse_run(&xr, REAL(w), isNull(wt) ? NULL : REAL(wt), nfreq,
                   isNull(b) ? NULL : REAL(b), asReal(scale), REAL(out),
                   lay, lay == 2 ? REAL(beta) : NULL, lay == 2 ? REAL(intercept) : NULL, m,
                   bochner_nthreads(asInteger(nthreads)));
    UNPROTECT(1);
    return out;
}

/* The distances between the rows of a sparse x in the order of stats::dist,
 * Euclidean or (manhattan TRUE) Manhattan (bochner_sparse_dist()). */
SEXP bochner_sparse_dist_call(SEXP x, SEXP manhattan)
{
    bochner_csr r = sparse_rows(x);
    R_xlen_t n = r.n;
    SEXP out = PROTECT(allocVector(REALSXP, n > 1 ? n * (n - 1) / 2 : 0));
    bochner_sparse_dist(&r, asLogical(manhattan) == TRUE, REAL(out));
    UNPROTECT(1);
    return out;
}
