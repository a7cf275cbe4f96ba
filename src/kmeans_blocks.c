/* The block entries of kernel k-means over data held in chunks (and of the
 * mini-batch passes): one Lloyd step on a block of rows, and one block's
 * part of a step of greedy k-means++.  (The Hartigan-Wong block pass lives
 * beside the in-memory pass it runs, in kmeans_lloyd.c.)
 *
 * Greedy k-means++ (km_plus_plus in kmeans.c) over data held in chunks:
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

/* One Lloyd step on a block of rows, the work of a chunk in the chunked fit
 * and of a mini-batch: for the rows of Z (m x D) with weights w (NULL: 1)
 * and the centres C (k x D), each row's nearest centre (ties to the lowest
 * number) and its squared distance, then per cluster the weighted sums of
 * the rows (k x D), their weights and the weighted sums of ||z||^2, the
 * weighted column sums and total of ||z||^2 (for the total sum of squares),
 * and the 'nfar' rows farthest from their centres (largest distance first,
 * ties to the lower row; distances to 'own' (k x D) instead when given: the
 * means of the clusters this step makes).  Every sum runs over the rows in
 * order: no dependence on the threads. */
int bochner_kmeans_block(const double *Z, R_xlen_t m, int D, const double *C, int k,
                         const double *w, const double *own, int nf, int nth, int *cl,
                         double *di, double *su, double *co, double *s2, double *zs,
                         double *zz, int *far, double *fard)
{
    if (m < 1 || D < 1 || k < 1 || nf < 0 || nf > m) return BOCHNER_BAD_ARGUMENT;
    double *dist = (double *) R_alloc((size_t) m * (size_t) k, sizeof(double));
    const double *q = bochner_kmeans_centre_distances_norms(Z, m, D, C, k, dist, nth);   /* q: ||z_i||^2 */
    for (R_xlen_t i = 0; i < m; i++) {
        int best = 0;
        double bd = dist[i];
        for (int c = 1; c < k; c++) {
            double v = dist[i + (R_xlen_t) c * m];
            if (v < bd) { bd = v; best = c; }
        }
        cl[i] = best;
        di[i] = bd;
    }
    memset(su, 0, sizeof(double) * (size_t) k * (size_t) D);
    for (int c = 0; c < k; c++) co[c] = s2[c] = 0.0;
    /* the rows grouped by cluster, in row order within each: every sum of
     * a cluster and column runs over its rows in order (as a scatter over
     * the rows would), four columns at a time in registers */
    R_xlen_t *first = (R_xlen_t *) R_alloc((size_t) k + 1, sizeof(R_xlen_t));
    R_xlen_t *ord = (R_xlen_t *) R_alloc((size_t) m, sizeof(R_xlen_t));
    for (int c = 0; c <= k; c++) first[c] = 0;
    for (R_xlen_t i = 0; i < m; i++) first[cl[i] + 1]++;
    for (int c = 0; c < k; c++) first[c + 1] += first[c];
    {
        R_xlen_t *at = (R_xlen_t *) R_alloc((size_t) k, sizeof(R_xlen_t));
        for (int c = 0; c < k; c++) at[c] = first[c];
        for (R_xlen_t i = 0; i < m; i++) ord[at[cl[i]]++] = i;
    }
    for (int j0 = 0; j0 < D; j0 += 4) {
        int nj = D - j0 < 4 ? D - j0 : 4;
        const double *z0 = Z + (R_xlen_t) j0 * m;
        for (int c = 0; c < k; c++) {
            double a[4] = {0.0, 0.0, 0.0, 0.0};
            for (R_xlen_t q = first[c]; q < first[c + 1]; q++) {
                R_xlen_t i = ord[q];
                double wi = km_w(w, i);
                for (int u = 0; u < nj; u++) a[u] += wi * z0[i + (R_xlen_t) u * m];
            }
            for (int u = 0; u < nj; u++) su[c + (R_xlen_t) (j0 + u) * k] = a[u];
        }
    }
    /* column sums (for the total sum of squares) from the cluster sums */
    for (int j = 0; j < D; j++) {
        double t = 0.0;
        for (int c = 0; c < k; c++) t += su[c + (R_xlen_t) j * k];
        zs[j] = t;
    }
    double tot = 0.0;
    for (R_xlen_t i = 0; i < m; i++) {
        co[cl[i]] += km_w(w, i);
        s2[cl[i]] += km_w(w, i) * q[i];
        tot += km_w(w, i) * q[i];
    }
    *zz = tot;
    if (nf > 0) {
        const double *d = di;
        if (own) {
            bochner_kmeans_centre_distances(Z, m, D, own, k, dist, nth);
            double *od = (double *) R_alloc((size_t) m, sizeof(double));
            for (R_xlen_t i = 0; i < m; i++) od[i] = dist[i + (R_xlen_t) cl[i] * m];
            d = od;
        }
        /* selection of the nf largest, ties to the lower row */
        unsigned char *taken = (unsigned char *) R_alloc((size_t) m, 1);
        memset(taken, 0, (size_t) m);
        for (int f = 0; f < nf; f++) {
            R_xlen_t pick = -1;
            for (R_xlen_t i = 0; i < m; i++)
                if (!taken[i] && (pick < 0 || d[i] > d[pick])) pick = i;
            taken[pick] = 1;
            far[f] = (int) pick;
            fard[f] = d[pick];
        }
    }
    return BOCHNER_OK;
}
