/* .Call wrappers: the test-only entry points: called from tests/testthat and never from
 * R/ (grep C_<name>), they expose one kernel or one code path to exact tests: the
 * vectorised exp / cos / sin (fastmath.c), the product tiles at a chosen ISA (gemm.c,
 * sgemm.c), float matrices (sgemm.c), the FFT (fft.c), the Walsh-Hadamard transform
 * (structured.c), FALKON's factors as plain matrices (falkon_factor.c), the huge-page
 * choice made at load (memory.c).  Kept in one file so that the
 * package's API is the rest.
 * Each checks and converts R arguments, allocates its result and calls the core
 * (bochner.h); the arithmetic is the core's. */
#include "api.h"
#include <string.h>

/* .Call(C_fast_math_f, x, what, scale): the float results of exp(scale x) (what 0),
 * scale cos(x) (1) or scale sin(x) (2), returned as doubles (the test hook) */
SEXP bochner_fast_math_f(SEXP x, SEXP what, SEXP scale)
{
    if (TYPEOF(x) != REALSXP) error("'x' must be a double vector");
    if (TYPEOF(scale) != REALSXP || XLENGTH(scale) != 1) error("'scale' must be a number");
    const int w = asInteger(what);
    if (w < 0 || w > 3) error("'what' must be 0 (exp), 1 (cos), 2 (sin) or 3 (cos affine)");
    R_xlen_t n = XLENGTH(x);
    float *a = (float *) R_alloc((size_t) n + 1, sizeof(float));
    float *b = (float *) R_alloc((size_t) n + 1, sizeof(float));
    const double sc = REAL(scale)[0];
    if (n > 0) {
        if (w == 0) bochner_exp_scaled_f(a, REAL(x), n, sc);
        else if (w == 3) bochner_cos_affine_f(a, REAL(x), n, 0.0, sc);
        else bochner_sincos_scaled_f(w == 1 ? a : b, w == 1 ? b : a, REAL(x), n, sc);
    }
    SEXP y = PROTECT(allocVector(REALSXP, n));
    for (R_xlen_t i = 0; i < n; i++) REAL(y)[i] = a[i];
    UNPROTECT(1);
    return y;
}

/* .Call(C_fast_exp, x, scale): exp(scale * x), the test hook of bochner_exp_scaled */
SEXP bochner_fast_exp(SEXP x, SEXP scale)
{
    if (TYPEOF(x) != REALSXP) error("'x' must be a double vector");
    if (TYPEOF(scale) != REALSXP || XLENGTH(scale) != 1) error("'scale' must be a number");
    R_xlen_t n = XLENGTH(x);
    SEXP y = PROTECT(allocVector(REALSXP, n));
    if (n > 0) bochner_exp_scaled(REAL(y), REAL(x), (ptrdiff_t) n, REAL(scale)[0]);
    UNPROTECT(1);
    return y;
}

SEXP bochner_fast_sincos(SEXP x)
{
    if (TYPEOF(x) != REALSXP)
        error("'x' must be a double vector");
    R_xlen_t n = XLENGTH(x);
    SEXP cv = PROTECT(allocVector(REALSXP, n));
    SEXP sv = PROTECT(allocVector(REALSXP, n));
    if (n > 0)
        bochner_sincos_scaled(REAL(cv), REAL(sv), REAL(x), (ptrdiff_t) n, 1.0);
    SEXP out = PROTECT(allocVector(VECSXP, 2));
    SEXP nms = PROTECT(allocVector(STRSXP, 2));
    SET_VECTOR_ELT(out, 0, cv);
    SET_VECTOR_ELT(out, 1, sv);
    SET_STRING_ELT(nms, 0, mkChar("cos"));
    SET_STRING_ELT(nms, 1, mkChar("sin"));
    setAttrib(out, R_NamesSymbol, nms);
    UNPROTECT(4);
    return out;
}

/* x %*% w (transa = 0) or t(x) %*% w (transa = 1) computed in 256 x 256 tiles on code path
 * 'isa' (-1: the one chosen at load; requests above it clamp down to it).  isa = -2L returns
 * the path chosen at load (0, 1 or 2); x and w are then ignored. */
SEXP bochner_tile_product_call(SEXP x, SEXP w, SEXP isa, SEXP transa)
{
    if (TYPEOF(isa) != INTSXP || XLENGTH(isa) != 1 || INTEGER(isa)[0] == NA_INTEGER)
        error("'isa' must be a single non-NA integer");
    const int best = bochner_cpu_isa();
    if (INTEGER(isa)[0] == -2) return ScalarInteger(best);
    if (!bochner_is_real_matrix(x)) error("'x' must be a double matrix");
    if (!bochner_is_real_matrix(w)) error("'w' must be a double matrix");
    /* transa 2: t(x) %*% w by bochner_dot_tn_path() */
    const int dot = TYPEOF(transa) == INTSXP && XLENGTH(transa) == 1 && INTEGER(transa)[0] == 2;
    const int tr = dot || asLogical(transa) == TRUE;
    const int n = tr ? ncols(x) : nrows(x), d = tr ? nrows(x) : ncols(x), m = ncols(w);
    if (nrows(w) != d)
        error("non-conformable arguments: inner dimension of x = %d, nrow(w) = %d", d, nrows(w));
    int path = INTEGER(isa)[0];
    if (path < 0 || path > best) path = best;
    SEXP ans = PROTECT(allocMatrix(REALSXP, n, m));
    double *a = REAL(ans);
    const double *xx = REAL(x), *ww = REAL(w);
    enum { TILE = 256 };
    for (int j0 = 0; j0 < m; j0 += TILE) {
        const int nj = m - j0 < TILE ? m - j0 : TILE;
        for (int r0 = 0; r0 < n; r0 += TILE) {
            const int nr = n - r0 < TILE ? n - r0 : TILE;
            if (dot) {
                bochner_dot_tn_path(path, xx + (ptrdiff_t) r0 * d, d, ww, d, nr, m, d, a + r0, n);
                continue;
            }
            bochner_gemm_path(path, tr, tr ? xx + (ptrdiff_t) r0 * d : xx + r0, tr ? d : n,
                              ww + (ptrdiff_t) j0 * d, d, nr, nj, d,
                              a + (ptrdiff_t) j0 * n + r0, n, 0);
        }
    }
    UNPROTECT(1);
    return ans;
}


/* .Call(C_float_matrix, x): x rounded to float, as a raw vector with x's dimensions in
 * "float_dim" (so that a bench times the products alone, not the conversion) */
SEXP bochner_float_matrix_call(SEXP x)
{
    if (!bochner_is_real_matrix(x)) error("'x' must be a double matrix");
    SEXP ans = PROTECT(allocVector(RAWSXP, XLENGTH(x) * 4));
    bochner_to_float(REAL(x), XLENGTH(x), (float *) RAW(ans));
    SEXP dim = PROTECT(allocVector(INTSXP, 2));
    INTEGER(dim)[0] = nrows(x);
    INTEGER(dim)[1] = ncols(x);
    setAttrib(ans, install("float_dim"), dim);
    UNPROTECT(2);
    return ans;
}

/* .Call(C_stile_product, x, w, isa, transa): x %*% w (or t(x) %*% w) with x and w rounded to
 * float, in 256 x 256 tiles of the result on code path isa (-1: the one chosen at load;
 * requests above it clamp down to it) */
SEXP bochner_stile_product_call(SEXP x, SEXP w, SEXP isa, SEXP transa)
{
    if (TYPEOF(isa) != INTSXP || XLENGTH(isa) != 1 || INTEGER(isa)[0] == NA_INTEGER)
        error("'isa' must be a single non-NA integer");
    const int best = bochner_cpu_isa();
    int xr, xc, wr, wc;
    const float *xx = bochner_float_operand(x, "x", &xr, &xc), *ww = bochner_float_operand(w, "w", &wr, &wc);
    const int tr = asLogical(transa) == TRUE;
    const int n = tr ? xc : xr, d = tr ? xr : xc, m = wc;
    if (wr != d)
        error("non-conformable arguments: inner dimension of x = %d, nrow(w) = %d", d, wr);
    int path = INTEGER(isa)[0];
    if (path < 0 || path > best) path = best;
    SEXP ans = PROTECT(allocMatrix(REALSXP, n, m));
    double *a = REAL(ans);
    enum { TILE = 256 };
    for (int j0 = 0; j0 < m; j0 += TILE) {
        const int nj = m - j0 < TILE ? m - j0 : TILE;
        for (int r0 = 0; r0 < n; r0 += TILE) {
            const int nr = n - r0 < TILE ? n - r0 : TILE;
            bochner_sgemm_path(path, tr, tr ? xx + (ptrdiff_t) r0 * d : xx + r0, tr ? d : n,
                               ww + (ptrdiff_t) j0 * d, d, nr, nj, d,
                               a + (ptrdiff_t) j0 * n + r0, n, 0);
        }
    }
    UNPROTECT(1);
    return ans;
}

/* Test entry: stats::fft() semantics on a complex vector. */
SEXP bochner_fft_call(SEXP z, SEXP inverse)
{
    if (TYPEOF(z) != CPLXSXP) error("'z' must be a complex vector");
    R_xlen_t n = XLENGTH(z);
    if (n > INT_MAX / 4) error("'z' is too long");
    SEXP out = PROTECT(allocVector(CPLXSXP, n));
    if (n > 0) {
        bochner_fft_plan *pl = bochner_fft_plan_make((int) n);
        bcx *work = (bcx *) R_alloc(bochner_fft_work_size(pl), sizeof(bcx));
        bcx *in = (bcx *) R_alloc((size_t) n, sizeof(bcx));
        bcx *res = (bcx *) R_alloc((size_t) n, sizeof(bcx));
        for (R_xlen_t j = 0; j < n; j++) {
            in[j].re = COMPLEX(z)[j].r;
            in[j].im = COMPLEX(z)[j].i;
        }
        bochner_fft(pl, in, res, work, asLogical(inverse) == TRUE);
        for (R_xlen_t j = 0; j < n; j++) {
            COMPLEX(out)[j].r = res[j].re;
            COMPLEX(out)[j].i = res[j].im;
        }
    }
    UNPROTECT(1);
    return out;
}

/* Test entry: the unnormalised Walsh-Hadamard transform of each column of x
 * (rows a power of 2, at least 2): H %*% x. */
SEXP bochner_fwht_call(SEXP x)
{
    if (!bochner_is_real_matrix(x)) error("'x' must be a double matrix");
    int p = nrows(x), m = ncols(x);
    if (p < 2 || (p & (p - 1)) != 0) error("'x' must have a power of 2 (at least 2) rows");
    SEXP out = PROTECT(allocMatrix(REALSXP, p, m));
    bochner_fwht_columns(REAL(x), p, m, REAL(out));
    UNPROTECT(1);
    return out;
}

/* Test entry, .Call(C_falkon_factor_get, F, which): T (which = 0) or A (which = 1) as
 * plain upper triangular matrices, or c(lambda, s, state) (which = 2). */
SEXP bochner_falkon_factor_get_call(SEXP F, SEXP which)
{
    bochner_falkon_packed p = bochner_falkon_packed_arg(F);
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

/* .Call(C_huge_pages): whether large outputs are advised onto huge pages (memory.c's
 * choice at load: TRUE or FALSE). */
SEXP bochner_huge_pages_call(void)
{
    return ScalarLogical(bochner_huge_pages());
}
