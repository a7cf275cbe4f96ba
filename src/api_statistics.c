/* .Call wrappers: the kernel statistics' permutation nulls and feature moments
 * (statistics.c): the exact MMD and HSIC permutation sums, and the MMD and moments folds
 * over row blocks, whose states are R objects (bochner_fold_new()).
 * Each checks and converts R arguments, allocates its result and calls the core
 * (bochner.h); the arithmetic is the core's. */
#include "api.h"
#include <stdint.h>
#include <string.h>
#include <math.h>

static SEXP named_list(const char **names, SEXP *values, int n)
{
    SEXP out = PROTECT(mkNamed(VECSXP, names));
    for (int i = 0; i < n; i++) SET_VECTOR_ELT(out, i, values[i]);
    UNPROTECT(1);
    return out;
}

/* Exact statistic: K the N x N Gram matrix of the pooled sample (X first):
 * list(a, b, d) of bochner_mmd_perm_gram(). */
SEXP bochner_mmd_perm_gram_call(SEXP K, SEXP m, SEXP B, SEXP nthreads)
{
    if (!bochner_is_real_matrix(K) || nrows(K) != ncols(K)) error("'K' must be a square double matrix");
    int N = nrows(K);
    int mm = bochner_count_arg(m, "m", 1), nb = bochner_count_arg(B, "B", 0);
    if (mm >= N) error("'m' must be less than the number of rows of 'K'");
    int nth = bochner_nthreads(asInteger(nthreads)), nc = nb + 1;
    SEXP a = PROTECT(allocVector(REALSXP, nc)), b = PROTECT(allocVector(REALSXP, nc)),
         d = PROTECT(allocVector(REALSXP, nc));
    bochner_mmd_perm_gram(REAL(K), N, mm, nb, nth, REAL(a), REAL(b), REAL(d));
    const char *names[] = {"a", "b", "d", ""};
    SEXP vals[] = {a, b, d};
    SEXP out = named_list(names, vals, 3);
    UNPROTECT(3);
    return out;
}

/* Features, folded over row blocks that R computes (C never calls back
 * into R).  mmd_draw(N, m, B) draws the B splits of the pooled rows 0 .. N - 1
 * (X's m rows first) as bits, B runs of nwords = ceil(N / 64) words;
 * mmd_bits_slice(bits, B, w0, w1) keeps words w0 .. w1 of each run, the rows
 * 64 w0 .. 64 (w1 + 1) - 1, which is all a chunk of the pooled rows needs.
 * mmd_fold_start(bits, r0, N, m, B, D) opens a fold over the rows r0 .. N - 1
 * of the bits' rows (row i in X's group of the observed split when i < m, so
 * m may lie outside 0 .. N for a chunk of one sample); mmd_fold_step(state, z)
 * adds the nr x D features of its next rows, and mmd_fold_finish(state) returns
 * list(S = Z'L, q = L'r, s = Z'1, Q = 1'r) with r the squared row norms of Z
 * and L the rows' labels (column 1 the observed split): all B + 1 splits in
 * one product per block.  These are sums over rows, so the folds of a
 * pooled sample's chunks add up to the fold over all of it.  The state:
 * bochner_fold_new(). */
enum { MF_BITS, MF_S, MF_SUM, MF_Q, MF_ACC, MF_DIMS, MF_LEN };

static double row_count_arg(SEXP x, const char *what, double lo)
{
    if (TYPEOF(x) != REALSXP || XLENGTH(x) != 1 || !R_FINITE(REAL(x)[0]) || REAL(x)[0] < lo ||
        REAL(x)[0] > 4503599627370496.0 || REAL(x)[0] != floor(REAL(x)[0]))
        error("'%s' must be a whole number of at least %.0f", what, lo);
    return REAL(x)[0];
}

SEXP bochner_mmd_draw_call(SEXP N, SEXP m, SEXP B)
{
    R_xlen_t NN = (R_xlen_t) row_count_arg(N, "N", 2.0);
    R_xlen_t mm = (R_xlen_t) row_count_arg(m, "m", 1.0);
    if (mm >= NN) error("'m' must be a number between 1 and N - 1");
    int nb = bochner_count_arg(B, "B", 0);
    R_xlen_t nwords;
    uint64_t *bits = bochner_mmd_draw(NN, mm, nb, &nwords);
    size_t nbytes = sizeof(uint64_t) * (size_t) nwords * (size_t) nb;
    SEXP out = PROTECT(allocVector(RAWSXP, (R_xlen_t) nbytes));
    if (nbytes) memcpy(RAW(out), bits, nbytes);
    UNPROTECT(1);
    return out;
}

/* the words per run of a bits vector of B runs */
static R_xlen_t bits_words(SEXP bits, int nb)
{
    if (TYPEOF(bits) != RAWSXP) error("'bits' must be a raw vector from mmd_draw");
    R_xlen_t len = XLENGTH(bits);
    if (nb == 0) return 0;
    if (len % ((R_xlen_t) sizeof(uint64_t) * nb))
        error("'bits' must hold B runs of 8-byte words");
    return len / ((R_xlen_t) sizeof(uint64_t) * nb);
}

SEXP bochner_mmd_bits_slice_call(SEXP bits, SEXP B, SEXP w0, SEXP w1)
{
    int nb = bochner_count_arg(B, "B", 0);
    R_xlen_t nwords = bits_words(bits, nb);
    R_xlen_t a = (R_xlen_t) row_count_arg(w0, "w0", 0.0), b = (R_xlen_t) row_count_arg(w1, "w1", 0.0);
    if (nb > 0 && (b < a || b >= nwords)) error("'w0' and 'w1' must be words of 'bits' in order");
    R_xlen_t k = nb > 0 ? b - a + 1 : 0;
    SEXP out = PROTECT(allocVector(RAWSXP, (R_xlen_t) sizeof(uint64_t) * k * nb));
    const uint64_t *src = (const uint64_t *) RAW(bits);
    uint64_t *dst = (uint64_t *) RAW(out);
    for (int r = 0; r < nb; r++)
        memcpy(dst + (ptrdiff_t) r * k, src + (ptrdiff_t) r * nwords + a, sizeof(uint64_t) * (size_t) k);
    UNPROTECT(1);
    return out;
}

SEXP bochner_mmd_fold_start_call(SEXP bits, SEXP r0, SEXP N, SEXP m, SEXP B, SEXP D)
{
    double first = row_count_arg(r0, "r0", 0.0), end = row_count_arg(N, "N", 1.0);
    if (end <= first) error("'N' must be greater than 'r0'");
    if (TYPEOF(m) != REALSXP || XLENGTH(m) != 1 || !R_FINITE(REAL(m)[0]) ||
        fabs(REAL(m)[0]) > 4503599627370496.0 || REAL(m)[0] != floor(REAL(m)[0]))
        error("'m' must be a whole number");
    int nb = bochner_count_arg(B, "B", 0), nc = nb + 1, DD = bochner_count_arg(D, "D", 1);
    R_xlen_t nwords = bits_words(bits, nb);
    if (nb > 0 && (double) nwords * 64.0 < end) error("'bits' has fewer than N rows");
    SEXP v = PROTECT(allocVector(VECSXP, MF_LEN));
    SET_VECTOR_ELT(v, MF_BITS, bits);
    SET_VECTOR_ELT(v, MF_S, allocMatrix(REALSXP, DD, nc));
    SET_VECTOR_ELT(v, MF_SUM, allocVector(REALSXP, DD));
    SET_VECTOR_ELT(v, MF_Q, allocVector(REALSXP, nc));
    SET_VECTOR_ELT(v, MF_ACC, allocVector(REALSXP, 2));    /* Q, the next row */
    SET_VECTOR_ELT(v, MF_DIMS, allocVector(REALSXP, 4));   /* N, m, B, words */
    memset(REAL(VECTOR_ELT(v, MF_S)), 0, sizeof(double) * (size_t) DD * (size_t) nc);
    memset(REAL(VECTOR_ELT(v, MF_SUM)), 0, sizeof(double) * (size_t) DD);
    memset(REAL(VECTOR_ELT(v, MF_Q)), 0, sizeof(double) * (size_t) nc);
    REAL(VECTOR_ELT(v, MF_ACC))[0] = 0.0;
    REAL(VECTOR_ELT(v, MF_ACC))[1] = first;
    double *dims = REAL(VECTOR_ELT(v, MF_DIMS));
    dims[0] = end;
    dims[1] = REAL(m)[0];
    dims[2] = nb;
    dims[3] = (double) nwords;
    SEXP state = bochner_fold_new("mmd", v);
    UNPROTECT(1);
    return state;
}

SEXP bochner_mmd_fold_step_call(SEXP state, SEXP z, SEXP nthreads)
{
    SEXP v = bochner_fold_vectors(state, "mmd");
    int D = nrows(VECTOR_ELT(v, MF_S));
    if (!bochner_is_real_matrix(z) || nrows(z) < 1 || ncols(z) != D)
        error("'z' must be a double matrix with rows and the fold's %d columns", D);
    const double *dims = REAL(VECTOR_ELT(v, MF_DIMS));
    double *acc = REAL(VECTOR_ELT(v, MF_ACC));
    int nr = nrows(z), nb = (int) dims[2];
    int nth = bochner_nthreads(asInteger(nthreads));
    if (acc[1] + nr > dims[0]) error("the blocks go beyond row N");
    bochner_mmd_fold_block(REAL(z), nr, D, nb, (const uint64_t *) RAW(VECTOR_ELT(v, MF_BITS)),
                           (R_xlen_t) dims[3], (R_xlen_t) dims[1], (R_xlen_t) acc[1],
                           REAL(VECTOR_ELT(v, MF_S)), REAL(VECTOR_ELT(v, MF_SUM)),
                           REAL(VECTOR_ELT(v, MF_Q)), acc, nth);
    acc[1] += nr;
    return state;
}

SEXP bochner_mmd_fold_finish_call(SEXP state)
{
    SEXP v = bochner_fold_vectors(state, "mmd");
    const double *acc = REAL(VECTOR_ELT(v, MF_ACC)), *dims = REAL(VECTOR_ELT(v, MF_DIMS));
    if (acc[1] != dims[0]) error("the blocks end at row %.0f, not N = %.0f", acc[1], dims[0]);
    bochner_fold_finish(state);
    const char *names[] = {"S", "q", "s", "Q", ""};
    SEXP vals[] = {VECTOR_ELT(v, MF_S), VECTOR_ELT(v, MF_Q), VECTOR_ELT(v, MF_SUM),
                   PROTECT(ScalarReal(acc[0]))};
    SEXP out = named_list(names, vals, 4);
    UNPROTECT(1);
    return out;
}

/* Centred cross product of a tall Z folded over row blocks that R computes
 * (stat_moments_step(state, z, single), z an nr x D double matrix, single TRUE for
 * Zc'Zc in single precision; stat_moments_finish(state) gives list(zz = Zc'Zc, zbar,
 * n)); statistics.c's bochner_stat_moments_*.  The state: bochner_fold_new(). */
enum { SM_ZZ, SM_SHIFT, SM_SUM, SM_N, SM_SINGLE, SM_LEN };

SEXP bochner_stat_moments_step_call(SEXP state, SEXP z, SEXP single, SEXP nthreads)
{
    if (!bochner_is_real_matrix(z) || nrows(z) < 1 || ncols(z) < 1)
        error("'z' must be a double matrix with rows and columns");
    int sgl = asLogical(single);
    if (sgl == NA_LOGICAL) error("'single' must be TRUE or FALSE");
    int nr = nrows(z), D = ncols(z);
    int nth = bochner_nthreads(asInteger(nthreads));
    if (state == R_NilValue) {
        SEXP v = PROTECT(allocVector(VECSXP, SM_LEN));
        SET_VECTOR_ELT(v, SM_SINGLE, ScalarLogical(sgl));
        SET_VECTOR_ELT(v, SM_ZZ, allocMatrix(REALSXP, D, D));
        SET_VECTOR_ELT(v, SM_SHIFT, allocVector(REALSXP, D));
        SET_VECTOR_ELT(v, SM_SUM, allocVector(REALSXP, D));
        SET_VECTOR_ELT(v, SM_N, ScalarReal(0.0));
        memset(REAL(VECTOR_ELT(v, SM_ZZ)), 0, sizeof(double) * (size_t) D * (size_t) D);
        memset(REAL(VECTOR_ELT(v, SM_SUM)), 0, sizeof(double) * (size_t) D);
        bochner_stat_moments_shift(REAL(z), nr, D, REAL(VECTOR_ELT(v, SM_SHIFT)));
        state = bochner_fold_new("stat_moments", v);
        UNPROTECT(1);
    }
    PROTECT(state);
    SEXP v = bochner_fold_vectors(state, "stat_moments");
    if (ncols(VECTOR_ELT(v, SM_ZZ)) != D)
        error("the block has %d columns; the first had %d", D, ncols(VECTOR_ELT(v, SM_ZZ)));
    if (LOGICAL(VECTOR_ELT(v, SM_SINGLE))[0] != sgl)
        error("the block's precision differs from the first block's");
    bochner_stat_moments_block(REAL(z), nr, D, REAL(VECTOR_ELT(v, SM_SHIFT)),
                               REAL(VECTOR_ELT(v, SM_ZZ)), REAL(VECTOR_ELT(v, SM_SUM)), sgl,
                               nth);
    REAL(VECTOR_ELT(v, SM_N))[0] += nr;
    UNPROTECT(1);
    return state;
}

SEXP bochner_stat_moments_finish_call(SEXP state, SEXP nthreads)
{
    SEXP v = bochner_fold_vectors(state, "stat_moments");
    int nth = bochner_nthreads(asInteger(nthreads));
    SEXP zz = VECTOR_ELT(v, SM_ZZ);
    int D = ncols(zz);
    double n = REAL(VECTOR_ELT(v, SM_N))[0];
    bochner_fold_finish(state);
    SEXP zbar = PROTECT(allocVector(REALSXP, D));
    bochner_stat_moments_finish(REAL(zz), D, REAL(VECTOR_ELT(v, SM_SUM)),
                                REAL(VECTOR_ELT(v, SM_SHIFT)), n, REAL(zbar), nth);
    const char *names[] = {"zz", "zbar", "n", ""};
    SEXP vals[] = {zz, zbar, PROTECT(ScalarReal(n))};
    SEXP out = named_list(names, vals, 3);
    UNPROTECT(2);
    return out;
}

/* HSIC under permutations of the second sample (bochner_hsic_perm_gram()). */
SEXP bochner_hsic_perm_gram_call(SEXP K, SEXP L, SEXP B, SEXP nthreads)
{
    if (!bochner_is_real_matrix(K) || nrows(K) != ncols(K)) error("'K' must be a square double matrix");
    if (!bochner_is_real_matrix(L) || nrows(L) != nrows(K) || ncols(L) != nrows(K))
        error("'L' must be a square double matrix the size of 'K'");
    int n = nrows(K), nb = bochner_count_arg(B, "B", 0), nc = nb + 1;
    SEXP out = PROTECT(allocVector(REALSXP, nc));
    bochner_hsic_perm_gram(REAL(K), REAL(L), n, nb, bochner_nthreads(asInteger(nthreads)),
                           REAL(out));
    UNPROTECT(1);
    return out;
}
