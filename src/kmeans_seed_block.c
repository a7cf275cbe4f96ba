/* Greedy k-means++ (km_plus_plus in kmeans.c) over data held in chunks:
 * one block of rows' part of a step.  The in-memory step draws each trial
 * point in proportion to w_i d_i^2 (d_i^2 the squared distance to the
 * nearest point chosen so far), then keeps the trial with the lowest
 * potential sum_i w_i min(d_i^2, d^2(x_i, trial)).  Over chunks, R draws
 * the same uniforms in the same order and a pass asks every block for its
 * potentials; the block holding a draw's target locates the row by the
 * same running-sum rule (km_locate).  The distances are the direct ones
 * of the in-memory seeding (bochner_kmeans_point_distances), so the
 * values, and the rows picked, are those of the in-memory fit. */
#include "kmeans.h"
#include <string.h>

/* Z (m x D) a block of rows, S (ns x D) the points chosen so far (ns = 0:
 * none, every d_i^2 infinite), T (nt x D) the trial points, w (m) weights
 * or NULL, targets (ntg) running-sum targets within the block.  Returns
 * *total = sum_i w_i d_i^2, pot (nt) the block's potential for each trial,
 * pick (ntg) the 0-based row each target falls on (-1: beyond the block's
 * total) and *last the block's last row of positive w_i d_i^2 (-1: none). */
int bochner_kmeans_pp_block(const double *Z, R_xlen_t m, int D, const double *S, int ns,
                            const double *T, int nt, const double *w, const double *targets,
                            int ntg, int nthreads, double *total, double *pot,
                            R_xlen_t *pick, R_xlen_t *last)
{
    if (m < 1 || D < 1 || ns < 0 || nt < 0 || ntg < 0) return BOCHNER_BAD_ARGUMENT;
    double *mind = (double *) R_alloc((size_t) m, sizeof(double));
    double *tmp = (double *) R_alloc((size_t) m, sizeof(double));
    double *v = (double *) R_alloc((size_t) D, sizeof(double));
    for (R_xlen_t i = 0; i < m; i++) mind[i] = R_PosInf;
    /* the nearest chosen point: a minimum, whatever the order */
    for (int s = 0; s < ns; s++) {
        for (int j = 0; j < D; j++) v[j] = S[s + (R_xlen_t) j * ns];
        bochner_kmeans_point_distances(Z, m, D, v, tmp, nthreads);
        for (R_xlen_t i = 0; i < m; i++) if (tmp[i] < mind[i]) mind[i] = tmp[i];
    }
    double tot = 0.0;
    for (R_xlen_t i = 0; i < m; i++) {
        tmp[i] = km_w(w, i) * mind[i];   /* w_i d_i^2, as the in-memory draw */
        tot += tmp[i];
    }
    *total = tot;
    for (int g = 0; g < ntg; g++) {
        double cum;
        pick[g] = km_locate(tmp, m, targets[g], last, &cum);
    }
    *last = -1;
    for (R_xlen_t i = 0; i < m; i++) if (tmp[i] > 0.0) *last = i;
    for (int t = 0; t < nt; t++) {
        for (int j = 0; j < D; j++) v[j] = T[t + (R_xlen_t) j * nt];
        bochner_kmeans_point_distances(Z, m, D, v, tmp, nthreads);
        double p = 0.0;
        for (R_xlen_t i = 0; i < m; i++) p += km_w(w, i) * (tmp[i] < mind[i] ? tmp[i] : mind[i]);
        pot[t] = p;
    }
    return BOCHNER_OK;
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
