/* .Call wrappers: kernel k-means: the exact and feature-space fits (kmeans_gram.c,
 * kmeans_lloyd.c), the block steps of the chunked fit (kmeans_blocks.c, kmeans_lloyd.c),
 * k-means++ landmarks (kmeans.c), and the argument checks and result list they share
 * (declared in kmeans.h).
 * Each checks and converts R arguments, allocates its result and calls the core
 * (bochner.h); the arithmetic is the core's. */
#include "api.h"
#include "kmeans.h"

/* TRUE or FALSE, as 1 or 0. */
int km_flag_arg(SEXP v, const char *what)
{
    if (TYPEOF(v) != LGLSXP || XLENGTH(v) != 1 || LOGICAL(v)[0] == NA_LOGICAL)
        error("'%s' must be TRUE or FALSE", what);
    return LOGICAL(v)[0];
}

/* NULL, or n finite positive weights. */
const double *km_weights_arg(SEXP v, R_xlen_t n)
{
    if (isNull(v)) return NULL;
    if (TYPEOF(v) != REALSXP || XLENGTH(v) != n)
        error("'weights' must be a double vector with one value per point");
    const double *w = REAL(v);
    for (R_xlen_t i = 0; i < n; i++)
        if (!(w[i] > 0.0) || !R_FINITE(w[i])) error("'weights' must be finite and positive");
    return w;
}

/* 0 (k-means++) or 1 (k-means||). */
int km_seeding_arg(SEXP v)
{
    if (TYPEOF(v) != INTSXP || XLENGTH(v) != 1 || (INTEGER(v)[0] != 0 && INTEGER(v)[0] != 1))
        error("'seeding' must be 0L (k-means++) or 1L (k-means||)");
    return INTEGER(v)[0];
}

/* NULL (for NULL), or the 0-based copy of an assignment with values in
 * 1..k, the argument 'what' of the wrapper. */
const int *km_assignment_arg(SEXP v, R_xlen_t n, int k, const char *what)
{
    if (isNull(v)) return NULL;
    if (TYPEOF(v) != INTSXP || XLENGTH(v) != n)
        error("'%s' must be an integer vector with one value per point", what);
    const int *x = INTEGER(v);
    int *a = (int *) R_alloc((size_t) n, sizeof(int));
    for (R_xlen_t i = 0; i < n; i++) {
        if (x[i] == NA_INTEGER || x[i] < 1 || x[i] > k)
            error("'%s' must have values in 1..%d", what, k);
        a[i] = x[i] - 1;
    }
    return a;
}

/* The list both fitting entry points return. */
SEXP km_result_list(R_xlen_t n, int k, const double *w, const int *cluster, const int *size,
                    const double *dist, const km_result *r, const double *start_obj,
                    int nstart, double totss, SEXP extra, const char *extra_name)
{
    const char *names[] = {"cluster", "size", "withinss", "distance", "trace", "iter",
                           "converged", "reseeded", "start_objectives", "totss",
                           extra_name, "moves", "hw_checks", ""};
    SEXP res = PROTECT(mkNamed(VECSXP, names));
    SEXP cl = PROTECT(allocVector(INTSXP, n));
    SEXP sz = PROTECT(allocVector(INTSXP, k));
    SEXP ws = PROTECT(allocVector(REALSXP, k));
    SEXP ds = PROTECT(allocVector(REALSXP, n));
    SEXP tr = PROTECT(allocVector(REALSXP, (R_xlen_t) r->ntrace));
    SEXP so = PROTECT(allocVector(REALSXP, nstart));
    for (int c = 0; c < k; c++) {
        INTEGER(sz)[c] = size[c];
        REAL(ws)[c] = 0.0;
    }
    for (R_xlen_t i = 0; i < n; i++) {
        INTEGER(cl)[i] = cluster[i] + 1;
        REAL(ds)[i] = dist[i];
        REAL(ws)[cluster[i]] += km_w(w, i) * dist[i];
    }
    memcpy(REAL(tr), r->trace, sizeof(double) * (size_t) r->ntrace);
    memcpy(REAL(so), start_obj, sizeof(double) * (size_t) nstart);
    SET_VECTOR_ELT(res, 0, cl);
    SET_VECTOR_ELT(res, 1, sz);
    SET_VECTOR_ELT(res, 2, ws);
    SET_VECTOR_ELT(res, 3, ds);
    SET_VECTOR_ELT(res, 4, tr);
    SET_VECTOR_ELT(res, 5, ScalarInteger(r->iter));
    SET_VECTOR_ELT(res, 6, ScalarLogical(r->converged));
    SET_VECTOR_ELT(res, 7, ScalarInteger(r->reseeded));
    SET_VECTOR_ELT(res, 8, so);
    SET_VECTOR_ELT(res, 9, ScalarReal(totss));
    SET_VECTOR_ELT(res, 10, extra);
    SET_VECTOR_ELT(res, 11, ScalarInteger(r->moves));
    SET_VECTOR_ELT(res, 12, ScalarReal(r->checks));
    UNPROTECT(7);
    return res;
}

/* x: n x d double matrix; code, par: the kernel (as for kernel_matrix);
 * diag: K_ii; m: how many points.  Returns the chosen rows (1-based) in
 * the order chosen. */
SEXP bochner_kmeans_pp_kernel_call(SEXP x, SEXP code, SEXP par, SEXP diag, SEXP m,
                                   SEXP nthreads)
{
    int mm = bochner_landmark_args(x, par, diag, m, "m");
    R_xlen_t n = nrows(x);
    int d = ncols(x);
    SEXP out = PROTECT(allocVector(INTSXP, mm));
    GetRNGstate();
    int status = bochner_kmeans_pp_kernel(asInteger(code), REAL(par), LENGTH(par), REAL(x), n,
                                          d, REAL(diag), mm,
                                          bochner_nthreads(asInteger(nthreads)), INTEGER(out));
    PutRNGstate();
    bochner_stop_on_status(status, "kernel k-means++");
    for (int j = 0; j < mm; j++) INTEGER(out)[j]++;
    UNPROTECT(1);
    return out;
}

/* NULL or a double matrix of D columns: its rows. */
static int point_rows(SEXP v, int D, const char *what)
{
    if (isNull(v)) return 0;
    if (!bochner_is_real_matrix(v) || ncols(v) != D)
        error("'%s' must be NULL or a double matrix with the columns of 'z'", what);
    return nrows(v);
}

SEXP bochner_kmeans_pp_block_call(SEXP z, SEXP seeds, SEXP trials, SEXP weights, SEXP targets,
                                  SEXP nthreads)
{
    if (!bochner_is_real_matrix(z)) error("'z' must be a double matrix");
    R_xlen_t m = nrows(z);
    int D = ncols(z);
    if (m < 1 || D < 1) error("'z' must have at least one row and one column");
    int ns = point_rows(seeds, D, "seeds"), nt = point_rows(trials, D, "trials");
    if (TYPEOF(targets) != REALSXP) error("'targets' must be a double vector");
    int ntg = LENGTH(targets);
    const double *w = km_weights_arg(weights, m);
    SEXP PT = PROTECT(allocVector(REALSXP, nt));
    SEXP PK = PROTECT(allocVector(REALSXP, ntg));
    R_xlen_t *pick = (R_xlen_t *) R_alloc((size_t) ntg + 1, sizeof(R_xlen_t)), last = -1;
    double total = 0.0;
    int status = bochner_kmeans_pp_block(REAL(z), m, D, ns ? REAL(seeds) : NULL, ns,
                                         nt ? REAL(trials) : NULL, nt, w, REAL(targets), ntg,
                                         bochner_nthreads(asInteger(nthreads)), &total,
                                         REAL(PT), pick, &last);
    bochner_stop_on_status(status, "kernel k-means++");
    for (int g = 0; g < ntg; g++) REAL(PK)[g] = (double) pick[g] + 1.0;   /* 0: none */
    const char *names[] = {"total", "pot", "pick", "last", ""};
    SEXP res = PROTECT(mkNamed(VECSXP, names));
    SET_VECTOR_ELT(res, 0, ScalarReal(total));
    SET_VECTOR_ELT(res, 1, PT);
    SET_VECTOR_ELT(res, 2, PK);
    SET_VECTOR_ELT(res, 3, ScalarReal((double) last + 1.0));
    UNPROTECT(3);
    return res;
}

SEXP bochner_kmeans_block_call(SEXP z, SEXP centres, SEXP weights, SEXP own, SEXP nfar,
                               SEXP nthreads)
{
    if (!bochner_is_real_matrix(z)) error("'z' must be a double matrix");
    if (!bochner_is_real_matrix(centres)) error("'centres' must be a double matrix");
    R_xlen_t m = nrows(z);
    int D = ncols(z), k = nrows(centres);
    if (ncols(centres) != D) error("'z' and 'centres' must have the same number of columns");
    if (D < 1 || k < 1 || m < 1) error("'z' and 'centres' must not be empty");
    if (own != R_NilValue &&
        (!bochner_is_real_matrix(own) || nrows(own) != k || ncols(own) != D))
        error("'own' must be NULL or a matrix like 'centres'");
    const double *w = km_weights_arg(weights, m);
    int nf = bochner_count_arg(nfar, "nfar", 0);
    if (nf > m) nf = (int) m;
    SEXP CL = PROTECT(allocVector(INTSXP, m));
    SEXP DI = PROTECT(allocVector(REALSXP, m));
    SEXP SU = PROTECT(allocMatrix(REALSXP, k, D));
    SEXP CO = PROTECT(allocVector(REALSXP, k));
    SEXP S2 = PROTECT(allocVector(REALSXP, k));
    SEXP ZS = PROTECT(allocVector(REALSXP, D));
    SEXP ZZ = PROTECT(allocVector(REALSXP, 1));
    SEXP FR = PROTECT(allocVector(INTSXP, nf));
    SEXP FD = PROTECT(allocVector(REALSXP, nf));
    int status = bochner_kmeans_block(REAL(z), m, D, REAL(centres), k, w,
                                      own == R_NilValue ? NULL : REAL(own), nf,
                                      bochner_nthreads(asInteger(nthreads)), INTEGER(CL),
                                      REAL(DI), REAL(SU), REAL(CO), REAL(S2), REAL(ZS),
                                      REAL(ZZ), INTEGER(FR), REAL(FD));
    bochner_stop_on_status(status, "kernel_kmeans");
    for (R_xlen_t i = 0; i < m; i++) INTEGER(CL)[i]++;
    for (int f = 0; f < nf; f++) INTEGER(FR)[f]++;
    const char *names[] = {"cluster", "distance", "sums", "counts", "s2", "zsum", "zz",
                           "far", "far_distance"};
    SEXP res = PROTECT(allocVector(VECSXP, 9));
    SEXP nms = PROTECT(allocVector(STRSXP, 9));
    SEXP vals[] = {CL, DI, SU, CO, S2, ZS, ZZ, FR, FD};
    for (int i = 0; i < 9; i++) {
        SET_VECTOR_ELT(res, i, vals[i]);
        SET_STRING_ELT(nms, i, mkChar(names[i]));
    }
    setAttrib(res, R_NamesSymbol, nms);
    UNPROTECT(11);
    return res;
}

/* The settings both k-means entry points take, checked for n points. */
typedef struct {
    int k, nstart, itermax, hartigan, seeding, nthreads;
    const int *init;
    const double *w;
} km_settings;

static km_settings km_settings_arg(R_xlen_t n, SEXP k, SEXP weights, SEXP init, SEXP hartigan,
                                   SEXP seeding, SEXP nstart, SEXP itermax, SEXP nthreads)
{
    km_settings st;
    st.k = bochner_count_arg(k, "k", 1);
    st.nstart = bochner_count_arg(nstart, "nstart", 1);
    st.itermax = bochner_count_arg(itermax, "iter.max", 1);
    if (st.k > n) error("'k' must be at most the number of points");
    st.init = km_assignment_arg(init, n, st.k, "init");
    st.hartigan = km_flag_arg(hartigan, "hartigan");
    st.seeding = km_seeding_arg(seeding);
    st.w = km_weights_arg(weights, n);
    st.nthreads = bochner_nthreads(asInteger(nthreads));
    return st;
}

SEXP bochner_kmeans_gram_call(SEXP x, SEXP code, SEXP par, SEXP k, SEXP weights,
                              SEXP init, SEXP hartigan, SEXP seeding, SEXP nstart,
                              SEXP itermax, SEXP nthreads)
{
    if (!bochner_is_real_matrix(x)) error("'x' must be a double matrix");
    if (TYPEOF(par) != REALSXP || XLENGTH(par) < 1) error("'par' must be a double vector");
    R_xlen_t n = nrows(x);
    int d = ncols(x);
    if (n < 1 || d < 1) error("'x' must have at least one row and one column");
    km_settings st = km_settings_arg(n, k, weights, init, hartigan, seeding, nstart, itermax,
                                     nthreads);
    int kk = st.k, ns = st.nstart, im = st.itermax, hw = st.hartigan, sd = st.seeding,
        nth = st.nthreads;
    const int *a0 = st.init;
    const double *w = st.w;

    double *K = (double *) R_alloc((size_t) n * (size_t) n, sizeof(double));
    bochner_advise_huge_pages(K, (size_t) n * (size_t) n * sizeof(double));
    int status = bochner_kernel_matrix(asInteger(code), REAL(par), LENGTH(par), REAL(x),
                                       n, NULL, n, d, K, nth);
    bochner_stop_on_status(status, "kernel_kmeans");

    int *cluster = (int *) R_alloc((size_t) n, sizeof(int));
    int *size = (int *) R_alloc((size_t) kk, sizeof(int));
    double *dist = (double *) R_alloc((size_t) n, sizeof(double));
    double *start_obj = (double *) R_alloc((size_t) ns, sizeof(double));
    km_result r = {cluster, size, dist, NULL, 0, 0, 0, 0, 0, 0.0, start_obj};
    SEXP sq = PROTECT(allocVector(REALSXP, kk));
    double totss = 0.0;
    GetRNGstate();
    status = bochner_kmeans_gram(K, n, kk, w, a0, ns, im, hw, sd, nth, &r, REAL(sq), &totss);
    PutRNGstate();
    bochner_stop_on_status(status, "kernel_kmeans");
    SEXP res = km_result_list(n, kk, w, cluster, size, dist, &r, start_obj, ns, totss, sq,
                              "centre_sqnorm");
    UNPROTECT(1);
    return res;
}

SEXP bochner_kmeans_gram_distances_call(SEXP y, SEXP x, SEXP code, SEXP par,
                                        SEXP weights, SEXP cluster, SEXP size, SEXP sq,
                                        SEXP nthreads)
{
    if (!bochner_is_real_matrix(y)) error("'y' must be a double matrix");
    if (!bochner_is_real_matrix(x)) error("'x' must be a double matrix");
    if (TYPEOF(par) != REALSXP || XLENGTH(par) < 1) error("'par' must be a double vector");
    R_xlen_t m = nrows(y), n = nrows(x);
    int d = ncols(x);
    if (ncols(y) != d) error("'x' and 'y' must have the same number of columns");
    if (n < 1 || d < 1) error("'x' must have at least one row and one column");
    if (TYPEOF(size) != INTSXP || XLENGTH(size) < 1) error("'size' must be an integer vector");
    if (TYPEOF(sq) != REALSXP || XLENGTH(sq) != XLENGTH(size))
        error("'sq' must be a double vector with one value per cluster");
    int k = LENGTH(size);
    const int *a = km_assignment_arg(cluster, n, k, "cluster");
    if (!a) error("'cluster' must be an integer vector with one value per point");
    const double *w = km_weights_arg(weights, n);
    SEXP out = PROTECT(allocMatrix(REALSXP, (int) m, k));
    if (m > 0) {
        int status = bochner_kmeans_gram_distances_w(asInteger(code), REAL(par), LENGTH(par),
                                                   REAL(y), m, REAL(x), n, d, w, a,
                                                   INTEGER(size), REAL(sq), k, REAL(out),
                                                   bochner_nthreads(asInteger(nthreads)));
        bochner_stop_on_status(status, "kernel_kmeans");
    }
    UNPROTECT(1);
    return out;
}

SEXP bochner_kmeans_lloyd_call(SEXP z, SEXP k, SEXP weights, SEXP init, SEXP hartigan,
                               SEXP seeding, SEXP nstart, SEXP itermax, SEXP nthreads)
{
    if (!bochner_is_real_matrix(z)) error("'z' must be a double matrix");
    R_xlen_t n = nrows(z);
    int D = ncols(z);
    if (n < 1 || D < 1) error("'z' must have at least one row and one column");
    km_settings st = km_settings_arg(n, k, weights, init, hartigan, seeding, nstart, itermax,
                                     nthreads);
    int kk = st.k, ns = st.nstart, im = st.itermax, hw = st.hartigan, sd = st.seeding,
        nth = st.nthreads;
    const int *a0 = st.init;
    const double *w = st.w;

    int *cluster = (int *) R_alloc((size_t) n, sizeof(int));
    int *size = (int *) R_alloc((size_t) kk, sizeof(int));
    double *dist = (double *) R_alloc((size_t) n, sizeof(double));
    double *start_obj = (double *) R_alloc((size_t) ns, sizeof(double));
    km_result r = {cluster, size, dist, NULL, 0, 0, 0, 0, 0, 0.0, start_obj};
    SEXP centres = PROTECT(allocMatrix(REALSXP, kk, D));
    double totss = 0.0;
    GetRNGstate();
    int status = bochner_kmeans_lloyd(REAL(z), n, D, kk, w, a0, ns, im, hw, sd, nth, &r,
                                      REAL(centres), &totss);
    PutRNGstate();
    bochner_stop_on_status(status, "kernel_kmeans");
    SEXP res = km_result_list(n, kk, w, cluster, size, dist, &r, start_obj, ns, totss,
                              centres, "centers");
    UNPROTECT(1);
    return res;
}

SEXP bochner_kmeans_centre_distances_call(SEXP z, SEXP centres, SEXP nthreads)
{
    if (!bochner_is_real_matrix(z)) error("'z' must be a double matrix");
    if (!bochner_is_real_matrix(centres)) error("'centres' must be a double matrix");
    R_xlen_t m = nrows(z);
    int D = ncols(z), k = nrows(centres);
    if (ncols(centres) != D) error("'z' and 'centres' must have the same number of columns");
    if (D < 1 || k < 1) error("'z' and 'centres' must not be empty");
    SEXP out = PROTECT(allocMatrix(REALSXP, (int) m, k));
    if (m > 0)
        bochner_kmeans_centre_distances(REAL(z), m, D, REAL(centres), k, REAL(out),
                                        bochner_nthreads(asInteger(nthreads)));
    UNPROTECT(1);
    return out;
}

SEXP bochner_kmeans_hartigan_block_call(SEXP z, SEXP cluster, SEXP sums, SEXP counts,
                                        SEXP last, SEXP base, SEXP window, SEXP nthreads)
{
    if (!bochner_is_real_matrix(z)) error("'z' must be a double matrix");
    if (!bochner_is_real_matrix(sums)) error("'sums' must be a double matrix");
    R_xlen_t m = nrows(z);
    int D = ncols(z), k = nrows(sums);
    if (ncols(sums) != D) error("'z' and 'sums' must have the same number of columns");
    if (TYPEOF(cluster) != INTSXP || XLENGTH(cluster) != m)
        error("'cluster' must be an integer vector, one per row of 'z'");
    if (TYPEOF(counts) != REALSXP || XLENGTH(counts) != k)
        error("'counts' must be a double vector, one per cluster");
    if (TYPEOF(last) != REALSXP || XLENGTH(last) != k)
        error("'last' must be a double vector, one per cluster");
    SEXP CL = PROTECT(allocVector(INTSXP, m));
    for (R_xlen_t i = 0; i < m; i++) INTEGER(CL)[i] = INTEGER(cluster)[i] - 1;
    SEXP SU = PROTECT(duplicate(sums));
    SEXP CO = PROTECT(duplicate(counts));
    SEXP LA = PROTECT(duplicate(last));
    SEXP BS = PROTECT(allocMatrix(REALSXP, k, D));
    SEXP B2 = PROTECT(allocVector(REALSXP, k));
    int moves = 0;
    int status = bochner_kmeans_hartigan_block(REAL(z), m, D, k, INTEGER(CL), REAL(SU),
                                               REAL(CO), REAL(LA), asReal(base), asReal(window),
                                               bochner_nthreads(asInteger(nthreads)), &moves,
                                               REAL(BS), REAL(B2));
    bochner_stop_on_status(status, "kernel_kmeans");
    for (R_xlen_t i = 0; i < m; i++) INTEGER(CL)[i]++;
    const char *names[] = {"cluster", "sums", "counts", "last", "moves", "block_sums",
                           "block_s2"};
    SEXP vals[] = {CL, SU, CO, LA, ScalarInteger(moves), BS, B2};
    SEXP res = PROTECT(allocVector(VECSXP, 7));
    SEXP nms = PROTECT(allocVector(STRSXP, 7));
    for (int i = 0; i < 7; i++) {
        SET_VECTOR_ELT(res, i, vals[i]);
        SET_STRING_ELT(nms, i, mkChar(names[i]));
    }
    setAttrib(res, R_NamesSymbol, nms);
    UNPROTECT(8);
    return res;
}
