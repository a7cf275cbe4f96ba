/* .Call wrappers: the linear SVM's dual coordinate descent in memory and CoCoA+'s local
 * solver on a chunk (svm.c): the problems' description checked into a bochner_svm_spec,
 * the results allocated here, the solve the core's. */
#include "api.h"
#include <limits.h>

static double svm_real(SEXP v, const char *what)
{
    if ((TYPEOF(v) != REALSXP && TYPEOF(v) != INTSXP) || XLENGTH(v) != 1)
        error("'%s' must be a single number", what);
    double x = asReal(v);
    if (!R_FINITE(x)) error("'%s' must be finite", what);
    return x;
}

/* The problems' description (bochner_svm_spec), checked: D x N features zt, problems given by
 * offsets (nprob + 1) into concatenated rows (1-based columns of zt), signs
 * and costs.  'empty_ok' lets a problem have no samples (a pair of classes
 * absent from a chunk). */

static bochner_svm_spec svm_check(SEXP zt, SEXP rows, SEXP offsets, SEXP sign, SEXP cost, SEXP loss,
                          SEXP bias, SEXP eps, SEXP shrink, int empty_ok)
{
    bochner_svm_spec s;
    if (!bochner_is_real_matrix(zt)) error("'zt' must be a double matrix");
    s.zt = REAL(zt);
    s.D = nrows(zt);
    s.N = ncols(zt);
    if (s.D < 1 || s.N < 1) error("'zt' must have at least one row and one column");
    if (s.D == INT_MAX) error("'zt' has too many rows");
    if (TYPEOF(offsets) != INTSXP || XLENGTH(offsets) < 2)
        error("'offsets' must be an integer vector of length >= 2");
    s.nprob = (int) XLENGTH(offsets) - 1;
    s.len = XLENGTH(rows);
    if (TYPEOF(rows) != INTSXP) error("'rows' must be an integer vector");
    if (TYPEOF(sign) != INTSXP || XLENGTH(sign) != s.len)
        error("'sign' must be an integer vector as long as 'rows'");
    if (TYPEOF(cost) != REALSXP || XLENGTH(cost) != s.len)
        error("'cost' must be a double vector as long as 'rows'");
    s.off = INTEGER(offsets);
    s.rows = INTEGER(rows);
    s.sign = INTEGER(sign);
    s.cost = REAL(cost);
    if (s.off[0] != 0 || s.off[s.nprob] != s.len)
        error("'offsets' must run from 0 to length(rows)");
    for (int c = 0; c < s.nprob; c++)
        if (s.off[c + 1] < s.off[c] + (empty_ok ? 0 : 1))
            error("every problem needs at least one sample");
    for (R_xlen_t i = 0; i < s.len; i++) {
        if (s.rows[i] == NA_INTEGER || s.rows[i] < 1 || s.rows[i] > s.N)
            error("'rows' must index columns of 'zt'");
        if (s.sign[i] != 1 && s.sign[i] != -1) error("'sign' must be +1 or -1");
        if (!(s.cost[i] > 0.0) || !R_FINITE(s.cost[i]))
            error("the costs must be positive and finite");
    }
    s.loss = bochner_count_arg(loss, "loss", 1);
    if (s.loss > 2) error("'loss' must be 1 (hinge) or 2 (squared hinge)");
    s.B = svm_real(bias, "bias");
    s.eps = svm_real(eps, "epsilon");
    if (s.B < 0.0) error("'bias' must be non-negative");
    if (!(s.eps > 0.0)) error("'epsilon' must be positive");
    if (TYPEOF(shrink) != LGLSXP || XLENGTH(shrink) != 1 || LOGICAL(shrink)[0] == NA_LOGICAL)
        error("'shrinking' must be TRUE or FALSE");
    s.shrink = LOGICAL(shrink)[0];
    return s;
}

static SEXP svm_named_list(int n, const char **names, SEXP *vals)
{
    SEXP res = PROTECT(allocVector(VECSXP, n));
    SEXP nms = PROTECT(allocVector(STRSXP, n));
    for (int i = 0; i < n; i++) {
        SET_VECTOR_ELT(res, i, vals[i]);
        SET_STRING_ELT(nms, i, mkChar(names[i]));
    }
    setAttrib(res, R_NamesSymbol, nms);
    UNPROTECT(2);
    return res;
}

/* zt: D x N double matrix of features (one sample per column).  The binary
 * problems, nprob = length(offsets) - 1 of them, are given by concatenated
 * per-sample vectors: problem c has the samples offsets[c] .. offsets[c+1]-1
 * of rows (1-based columns of zt), sign (+1/-1) and cost (C_s > 0).
 * Returns list(w = (D + 1) x nprob, alpha (concatenated like rows), iter,
 * converged) (bochner_svm_dcd()). */
SEXP bochner_svm_dcd_call(SEXP zt, SEXP rows, SEXP offsets, SEXP sign, SEXP cost, SEXP loss,
                          SEXP bias, SEXP eps, SEXP max_iter, SEXP shrink, SEXP nthreads)
{
    bochner_svm_spec sp = svm_check(zt, rows, offsets, sign, cost, loss, bias, eps, shrink, 0);
    int mi = bochner_count_arg(max_iter, "max_iter", 1);
    SEXP W = PROTECT(allocMatrix(REALSXP, sp.D + 1, sp.nprob));
    SEXP A = PROTECT(allocVector(REALSXP, sp.len));
    SEXP IT = PROTECT(allocVector(INTSXP, sp.nprob));
    SEXP CV = PROTECT(allocVector(LGLSXP, sp.nprob));
    bochner_svm_dcd(&sp, mi, bochner_nthreads(asInteger(nthreads)), REAL(W), REAL(A),
                    INTEGER(IT), LOGICAL(CV));
    const char *names[] = {"w", "alpha", "iter", "converged"};
    SEXP vals[] = {W, A, IT, CV};
    SEXP res = svm_named_list(4, names, vals);
    UNPROTECT(4);
    return res;
}

/* CoCoA+'s local solver on one chunk (bochner_svm_local()), from the
 * weights w and the chunk's duals alpha.  Returns list(alpha, dw = (D + 1)
 * x nprob change of the weights, asum, a2, iter). */
SEXP bochner_svm_local_call(SEXP zt, SEXP rows, SEXP offsets, SEXP sign, SEXP cost,
                            SEXP loss, SEXP bias, SEXP w, SEXP alpha, SEXP sigma,
                            SEXP passes, SEXP eps, SEXP shrink, SEXP norms, SEXP nthreads)
{
    bochner_svm_spec sp = svm_check(zt, rows, offsets, sign, cost, loss, bias, eps, shrink, 1);
    int D = sp.D, nprob = sp.nprob;
    if (!bochner_is_real_matrix(w) || nrows(w) != D + 1 || ncols(w) != nprob)
        error("'w' must be a (nrow(zt) + 1) x (number of problems) double matrix");
    if (TYPEOF(alpha) != REALSXP || XLENGTH(alpha) != sp.len)
        error("'alpha' must be a double vector as long as 'rows'");
    double sg = svm_real(sigma, "sigma");
    if (sg < 1.0) error("'sigma' must be at least 1");
    int np = bochner_count_arg(passes, "passes", 1);
    if (!isNull(norms) && (TYPEOF(norms) != REALSXP || XLENGTH(norms) != sp.N))
        error("'norms' must be NULL or a double vector, one per column of 'zt'");
    SEXP V = PROTECT(duplicate(w));           /* the local view w + sigma dw */
    SEXP A = PROTECT(duplicate(alpha));
    SEXP DW = PROTECT(allocMatrix(REALSXP, D + 1, nprob));
    SEXP AS = PROTECT(allocVector(REALSXP, nprob));
    SEXP A2 = PROTECT(allocVector(REALSXP, nprob));
    SEXP IT = PROTECT(allocVector(INTSXP, nprob));
    bochner_svm_local(&sp, REAL(w), sg, np, isNull(norms) ? NULL : REAL(norms),
                      bochner_nthreads(asInteger(nthreads)), REAL(V), REAL(A), REAL(DW),
                      REAL(AS), REAL(A2), INTEGER(IT));
    const char *names[] = {"alpha", "dw", "asum", "a2", "iter"};
    SEXP vals[] = {A, DW, AS, A2, IT};
    SEXP res = svm_named_list(5, names, vals);
    UNPROTECT(6);
    return res;
}
