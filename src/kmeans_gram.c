/* Exact kernel k-means on the n x n Gram matrix, behind the driver's
 * km_problem interface.
 *
 * The centre of cluster c is the mean of phi(x_j), j in c, known through
 * S[i, c] = sum_{j in c} K_ij and T_c = sum_{j,l in c} K_jl:
 *     ||phi(x_i) - mu_c||^2 = K_ii - 2 S[i, c] / |c| + T_c / |c|^2.
 * S comes from one pass over K, in row blocks so that the block's tile of S
 * stays in cache while K streams past; once few points move, S is updated
 * from their columns of K alone.  Threads own disjoint row blocks of S or
 * disjoint points, and every sum runs over the columns in order, so the
 * result does not depend on the number of threads or the blocks. */
#include "kmeans.h"
#include <string.h>

#define ACC_TILE 32768         /* doubles in a row block's tile of S */

typedef struct {
    km_problem base;
    const double *K;   /* n x n Gram matrix */
    double *diag;      /* K_ii */
    double *S;         /* n x k: sum_{j in c} K_ij */
    double *T;         /* k: sum_{j, l in c} K_jl */
    double *sq;        /* k: T_c / W_c^2, the squared norm of the centre */
    int *size;         /* k: sizes at the last refresh */
    double *W;         /* k: the clusters' total weights (their sizes without weights) */
    R_xlen_t *moved;   /* n: scratch for the points that moved */
    int since_full;    /* incremental updates since the last full pass */
    int *b;            /* gram_assign's outputs */
    double *bdist;
} gram_problem;

/* Rows per block in the passes over K: long contiguous runs of each column
 * of K while the block's tile of S (rows x k) stays small, and at least four
 * blocks per thread.  Each entry of S is summed over the columns in order
 * whatever the blocks, so the result does not depend on them. */
static R_xlen_t acc_rows(R_xlen_t nr, int k, int nthreads)
{
    R_xlen_t rows = ACC_TILE / k, balanced = (nr + 4 * nthreads - 1) / (4 * nthreads);
    if (rows > balanced) rows = balanced;   /* a few blocks per thread */
    return rows < 64 ? 64 : rows;
}

/* S[, c] = sum over columns j with a[j] == c of K[, j] (the full pass), or
 * S[, c] += K[, j] for the points j that joined c and -= for those that left
 * (moved != NULL): O(n) per moved point.  K is nr x nc, S nr x k. */
typedef struct {
    const double *K;
    const double *w;   /* nc column weights, or NULL */
    R_xlen_t nr, nc, rows;
    const int *a, *prev;
    const R_xlen_t *moved;
    R_xlen_t nmoved;
    int k;
    double *S;
} columns_job;

static void columns_block(void *ctx, R_xlen_t blk, int thread)
{
    (void) thread;
    const columns_job *p = (const columns_job *) ctx;
    R_xlen_t nr = p->nr, i0 = blk * p->rows;
    R_xlen_t m = nr - i0 < p->rows ? nr - i0 : p->rows;
    if (p->moved) {
        for (R_xlen_t q = 0; q < p->nmoved; q++) {
            R_xlen_t j = p->moved[q];
            double *to = p->S + (R_xlen_t) p->a[j] * nr + i0;
            double *from = p->S + (R_xlen_t) p->prev[j] * nr + i0;
            const double *kj = p->K + j * nr + i0;
            double wj = km_w(p->w, j);
            for (R_xlen_t i = 0; i < m; i++) {
                to[i] += wj * kj[i];
                from[i] -= wj * kj[i];
            }
        }
        return;
    }
    for (int c = 0; c < p->k; c++)
        memset(p->S + (R_xlen_t) c * nr + i0, 0, sizeof(double) * (size_t) m);
    for (R_xlen_t j = 0; j < p->nc; j++) {
        double *s = p->S + (R_xlen_t) p->a[j] * nr + i0;
        const double *kj = p->K + j * nr + i0;
        if (p->w) {
            double wj = p->w[j];
            for (R_xlen_t i = 0; i < m; i++) s[i] += wj * kj[i];
        } else {
            for (R_xlen_t i = 0; i < m; i++) s[i] += kj[i];
        }
    }
}

static void run_columns(columns_job *p, int nthreads)
{
    double work = (double) p->nr * (double) (p->moved ? 2 * p->nmoved : p->nc);
    nthreads = bochner_threads_for(nthreads, work);
    p->rows = acc_rows(p->nr, p->k, nthreads);
    bochner_parallel_blocks((p->nr + p->rows - 1) / p->rows, nthreads, 1, columns_block, p);
}

static void accumulate_columns(const double *K, const double *w, R_xlen_t nr, R_xlen_t nc,
                               const int *a, int k, double *S, int nthreads)
{
    columns_job p = {K, w, nr, nc, 0, a, NULL, NULL, 0, k, S};
    run_columns(&p, nthreads);
}

static void update_columns(const double *K, const double *w, R_xlen_t n, const int *a,
                           const int *prev, const R_xlen_t *moved, R_xlen_t nmoved, int k,
                           double *S, int nthreads)
{
    columns_job p = {K, w, n, n, 0, a, prev, moved, nmoved, k, S};
    run_columns(&p, nthreads);
}

static double gram_distance(const gram_problem *g, R_xlen_t i, int c)
{
    return g->diag[i] - 2.0 * g->S[i + (R_xlen_t) c * g->base.n] / g->W[c] + g->sq[c];
}

static double gram_refresh(km_problem *p, const int *a, const int *prev, const int *size)
{
    gram_problem *g = (gram_problem *) p;
    R_xlen_t n = p->n, nmoved = 0;
    int k = p->k;
    if (prev && g->since_full < KM_MAX_INCREMENTAL) {
        for (R_xlen_t i = 0; i < n && 4 * nmoved <= n; i++)
            if (a[i] != prev[i]) g->moved[nmoved++] = i;
    }
    if (prev && g->since_full < KM_MAX_INCREMENTAL && 4 * nmoved <= n) {
        update_columns(g->K, p->w, n, a, prev, g->moved, nmoved, k, g->S, p->nthreads);
        g->since_full++;
    } else {
        accumulate_columns(g->K, p->w, n, n, a, k, g->S, p->nthreads);
        g->since_full = 0;
    }
    const double *w = p->w;
    for (int c = 0; c < k; c++) g->T[c] = g->W[c] = 0.0;
    for (R_xlen_t j = 0; j < n; j++) {
        double wj = km_w(w, j);
        g->T[a[j]] += wj * g->S[j + (R_xlen_t) a[j] * n];
        g->W[a[j]] += wj;
    }
    for (int c = 0; c < k; c++) {
        g->size[c] = size[c];
        g->sq[c] = size[c] > 0 ? g->T[c] / (g->W[c] * g->W[c]) : 0.0;
    }
    double obj = 0.0;
    for (R_xlen_t i = 0; i < n; i++) obj += km_w(w, i) * km_clamp0(gram_distance(g, i, a[i]));
    return obj;
}

static void gram_own_dist(km_problem *p, const int *a, double *dist)
{
    gram_problem *g = (gram_problem *) p;
    for (R_xlen_t i = 0; i < p->n; i++) dist[i] = km_clamp0(gram_distance(g, i, a[i]));
}

static void assign_block(void *ctx, R_xlen_t blk, int thread)
{
    (void) thread;
    gram_problem *g = (gram_problem *) ctx;
    R_xlen_t n = g->base.n, i0 = blk * KM_ROW_BLOCK;
    R_xlen_t i1 = n - i0 < KM_ROW_BLOCK ? n : i0 + KM_ROW_BLOCK;
    int k = g->base.k;
    for (R_xlen_t i = i0; i < i1; i++) {
        int best = -1;
        double bestv = 0.0;
        for (int c = 0; c < k; c++) {
            if (g->size[c] == 0) continue;
            double v = gram_distance(g, i, c);
            if (best < 0 || v < bestv) { best = c; bestv = v; }
        }
        g->b[i] = best;
        g->bdist[i] = km_clamp0(bestv);
    }
}

static void gram_assign(km_problem *p, int *b, double *bdist)
{
    gram_problem *g = (gram_problem *) p;
    g->b = b;
    g->bdist = bdist;
    bochner_parallel_blocks(km_row_blocks(p->n),
                            bochner_threads_for(p->nthreads, 4.0 * (double) p->n * p->k),
                            KM_BLOCKS_PER_CHECK, assign_block, g);
}

static void gram_point_dist(km_problem *p, R_xlen_t s, double *out)
{
    gram_problem *g = (gram_problem *) p;
    const double *ks = g->K + s * p->n;
    double kss = g->diag[s];
    for (R_xlen_t i = 0; i < p->n; i++) out[i] = km_clamp0(g->diag[i] - 2.0 * ks[i] + kss);
}

/* k-means|| (kmeans.h): distances to the m points from their columns of K. */
typedef struct {
    const gram_problem *g;
    const R_xlen_t *s;
    R_xlen_t m, base;
    double *mind;
    int *near;
} nearest_job;

static void nearest_block(void *ctx, R_xlen_t blk, int thread)
{
    (void) thread;
    const nearest_job *j = (const nearest_job *) ctx;
    const gram_problem *g = j->g;
    R_xlen_t n = g->base.n, i0 = blk * KM_ROW_BLOCK;
    R_xlen_t i1 = n - i0 < KM_ROW_BLOCK ? n : i0 + KM_ROW_BLOCK;
    for (R_xlen_t q = 0; q < j->m; q++) {
        R_xlen_t s = j->s[q];
        const double *ks = g->K + s * n;
        double kss = g->diag[s];
        for (R_xlen_t i = i0; i < i1; i++) {
            double d = km_clamp0(g->diag[i] - 2.0 * ks[i] + kss);
            if (d < j->mind[i]) {
                j->mind[i] = d;
                j->near[i] = (int) (j->base + q);
            }
        }
    }
}

static void gram_nearest(km_problem *p, const R_xlen_t *s, R_xlen_t m, R_xlen_t base,
                         double *mind, int *near)
{
    nearest_job j = {(gram_problem *) p, s, m, base, mind, near};
    bochner_parallel_blocks(km_row_blocks(p->n),
                            bochner_threads_for(p->nthreads, 4.0 * (double) p->n * (double) m),
                            KM_BLOCKS_PER_CHECK, nearest_block, &j);
}

static double gram_pair_dist(km_problem *p, R_xlen_t i, R_xlen_t j)
{
    gram_problem *g = (gram_problem *) p;
    return km_clamp0(g->diag[i] - 2.0 * g->K[i + j * p->n] + g->diag[j]);
}

/* One Hartigan-Wong pass (kmeans.h) on the Gram sums: point i's distance to
 * every centre is O(1) from S, and a move updates S by column i of K (O(n)),
 * T_a by -2 S[i, a] + K_ii and T_b by 2 S[i, b] + K_ii.  Serial, in the
 * order of the points, so the result does not depend on the threads. */
static int gram_hartigan_pass(km_problem *p, int *a, int *size, double *obj)
{
    gram_problem *g = (gram_problem *) p;
    R_xlen_t n = p->n;
    int k = p->k, moves = 0;
    for (R_xlen_t i = 0; i < n; i++) {
        int from = a[i], to = -1;
        if (g->size[from] < 2) continue;
        p->hw_checks++;   /* every point (no live sets here) */
        double wi = km_w(p->w, i), wf = g->W[from];
        double remove = wf / (wf - wi) * km_clamp0(gram_distance(g, i, from));
        double best = remove * (1.0 - KM_MOVE_GAIN);
        for (int c = 0; c < k; c++) {
            if (c == from) continue;
            double wc = g->W[c];
            double add = g->size[c] > 0 ? wc / (wc + wi) * km_clamp0(gram_distance(g, i, c)) : 0.0;
            if (add < best) { best = add; to = c; }
        }
        if (to < 0) continue;
        double *sf = g->S + (R_xlen_t) from * n, *st = g->S + (R_xlen_t) to * n;
        const double *ki = g->K + i * n;
        g->T[from] += wi * (wi * g->diag[i] - 2.0 * sf[i]);
        g->T[to] += wi * (wi * g->diag[i] + 2.0 * st[i]);
        for (R_xlen_t j = 0; j < n; j++) {
            sf[j] -= wi * ki[j];
            st[j] += wi * ki[j];
        }
        g->size[from]--;
        g->size[to]++;
        g->W[from] -= wi;
        g->W[to] += wi;
        size[from]--;
        size[to]++;
        a[i] = to;
        for (int c = 0; c < 2; c++) {
            int cc = c ? to : from;
            g->sq[cc] = g->size[cc] > 0 ? g->T[cc] / (g->W[cc] * g->W[cc]) : 0.0;
        }
        moves++;
        if ((moves & 255) == 0) R_CheckUserInterrupt();
    }
    /* the objective: sum_c (sum_{i in c} w_i K_ii - T_c / W_c) */
    double o = 0.0;
    for (R_xlen_t i = 0; i < n; i++) o += km_w(p->w, i) * g->diag[i];
    for (int c = 0; c < k; c++) if (g->size[c] > 0) o -= g->T[c] / g->W[c];
    *obj = km_clamp0(o);
    g->since_full = KM_MAX_INCREMENTAL;   /* the next refresh recomputes S */
    return moves;
}

/* Exact kernel k-means on the n x n Gram matrix K (kmeans.h), plus sq (k):
 * the squared norms T_c / |c|^2 of the centres. */
int bochner_kmeans_gram(const double *K, R_xlen_t n, int k, const double *w,
                        const int *init, int nstart, int itermax, int hartigan,
                        int seeding, int nthreads, km_result *res, double *sq,
                        double *totss)
{
    gram_problem g;
    memset(&g, 0, sizeof(g));
    if (n < 1 || k < 1 || k > n) return BOCHNER_BAD_ARGUMENT;
    g.base.n = n;
    g.base.k = k;
    g.base.nthreads = nthreads;
    g.base.w = w;
    g.base.refresh = gram_refresh;
    g.base.own_dist = gram_own_dist;
    g.base.assign = gram_assign;
    g.base.point_dist = gram_point_dist;
    g.base.hartigan_pass = gram_hartigan_pass;
    g.base.hartigan = hartigan;
    g.base.nearest = gram_nearest;
    g.base.pair_dist = gram_pair_dist;
    g.base.seeding = seeding;
    g.K = K;
    g.diag = (double *) R_alloc((size_t) n, sizeof(double));
    g.S = (double *) R_alloc((size_t) n * (size_t) k, sizeof(double));
    g.T = (double *) R_alloc((size_t) k, sizeof(double));
    g.sq = (double *) R_alloc((size_t) k, sizeof(double));
    g.size = (int *) R_alloc((size_t) k, sizeof(int));
    g.W = (double *) R_alloc((size_t) k, sizeof(double));
    g.moved = (R_xlen_t *) R_alloc((size_t) n, sizeof(R_xlen_t));
    g.since_full = 0;
    for (R_xlen_t i = 0; i < n; i++) g.diag[i] = K[i + i * n];

    /* total sum of squares: sum_i w_i K_ii - (1/W) sum_ij w_i w_j K_ij, the
     * weighted row sums via S */
    int *zeros = (int *) R_alloc((size_t) n, sizeof(int));
    memset(zeros, 0, sizeof(int) * (size_t) n);
    accumulate_columns(K, w, n, n, zeros, 1, g.S, nthreads);
    double wd = 0.0, wsw = 0.0, wt = 0.0;
    for (R_xlen_t i = 0; i < n; i++) {
        wd += km_w(w, i) * g.diag[i];
        wsw += km_w(w, i) * g.S[i];
        wt += km_w(w, i);
    }
    *totss = km_clamp0(wd - wsw / wt);

    int status = km_fit(&g.base, init, nstart, itermax, res);
    if (status != BOCHNER_OK) return status;
    for (int c = 0; c < k; c++) sq[c] = g.sq[c];
    return BOCHNER_OK;
}

/* Feature-space squared distances (m x k, into out) of new points y (m x d)
 * to the centres of an exact fit on x (n x d) with 0-based clusters
 * cluster, sizes size and centre norms sq:
 *   k(y, y) - 2 / |c| sum_{j in c} k(y, x_j) + sq_c.
 * k(y, x) is computed in row blocks of y, never as one m x n matrix. */
int bochner_kmeans_gram_distances(int code, const double *par, int npar,
                                  const double *y, R_xlen_t m, const double *x,
                                  R_xlen_t n, int d, const int *cluster,
                                  const int *size, const double *sq, int k,
                                  double *out, int nthreads)
{
    return bochner_kmeans_gram_distances_w(code, par, npar, y, m, x, n, d, NULL, cluster,
                                           size, sq, k, out, nthreads);
}

/* As bochner_kmeans_gram_distances, with case weights w (n) of the
 * training points: the centres are weighted means. */
int bochner_kmeans_gram_distances_w(int code, const double *par, int npar,
                                    const double *y, R_xlen_t m, const double *x,
                                    R_xlen_t n, int d, const double *w,
                                    const int *cluster, const int *size,
                                    const double *sq, int k, double *out, int nthreads)
{
    double *W = (double *) R_alloc((size_t) k, sizeof(double));
    for (int c = 0; c < k; c++) W[c] = 0.0;
    for (R_xlen_t j = 0; j < n; j++) W[cluster[j]] += km_w(w, j);
    R_xlen_t rows = ((R_xlen_t) 1 << 20) / n;
    if (rows < 64) rows = 64;
    if (rows > m) rows = m;
    double *yb = (double *) R_alloc((size_t) rows * (size_t) d, sizeof(double));
    double *Kb = (double *) R_alloc((size_t) rows * (size_t) n, sizeof(double));
    double *S = (double *) R_alloc((size_t) rows * (size_t) k, sizeof(double));
    double *kyy = (double *) R_alloc((size_t) rows, sizeof(double));
    double *yi = (double *) R_alloc((size_t) d, sizeof(double));
    for (R_xlen_t i0 = 0; i0 < m; i0 += rows) {
        R_xlen_t mb = m - i0 < rows ? m - i0 : rows;
        const void *vmax = vmaxget();
        for (int j = 0; j < d; j++)
            memcpy(yb + (R_xlen_t) j * mb, y + (R_xlen_t) j * m + i0,
                   sizeof(double) * (size_t) mb);
        int status = bochner_kernel_matrix(code, par, npar, yb, mb, x, n, d, Kb, nthreads);
        vmaxset(vmax);
        if (status != BOCHNER_OK) return status;
        for (R_xlen_t i = 0; i < mb && status == BOCHNER_OK; i++) {
            for (int j = 0; j < d; j++) yi[j] = yb[i + (R_xlen_t) j * mb];
            status = bochner_kernel_matrix(code, par, npar, yi, 1, NULL, 1, d, kyy + i, 1);
            vmaxset(vmax);
        }
        if (status != BOCHNER_OK) return status;
        accumulate_columns(Kb, w, mb, n, cluster, k, S, nthreads);
        for (int c = 0; c < k; c++) {
            double sz = W[c];
            for (R_xlen_t i = 0; i < mb; i++) {
                double v = size[c] > 0 ? kyy[i] - 2.0 * S[i + (R_xlen_t) c * mb] / sz + sq[c]
                                  : R_PosInf;
                out[i0 + i + (R_xlen_t) c * m] = km_clamp0(v);
            }
        }
        R_CheckUserInterrupt();
    }
    return BOCHNER_OK;
}
