/* Kernel k-means on random features: Lloyd's k-means on the rows of an
 * n x D feature matrix Z, behind the driver's km_problem interface.
 *
 * Centroids are explicit; their sums are updated from the points that moved
 * while few move, and recomputed from all of Z every KM_MAX_INCREMENTAL
 * updates.  Distances are ||z||^2 - 2 z.c + ||c||^2, the inner products by
 * the package's product (gemm.c) on row blocks of Z, so no BLAS is called
 * inside the threads.  Threads own disjoint row blocks or disjoint columns of
 * the centroid sums, and every sum runs in a fixed order: results do not
 * depend on the number of threads. */
#include "kmeans.h"
#include <string.h>

#define KM_COLS_PER_BLOCK 8     /* feature columns per block of the centroid sums */

typedef struct {
    km_problem base;
    const double *Z;   /* n x D */
    int D;
    double *zn;        /* n: ||z_i||^2 */
    double *C;         /* k x D centroids */
    double *Ct;        /* D x k: t(C), the right operand of the products */
    double *Csum;      /* k x D sums of the points of each cluster */
    double *cn;        /* k: ||c||^2 */
    int *size;         /* k: sizes at the last refresh */
    double *W;         /* k: total weights at the last refresh (sizes without weights) */
    R_xlen_t *moved;   /* n: scratch for the points that moved */
    int since_full;    /* incremental updates since the last full pass */
    double *zsum;      /* k: scratch for sum_{i in c} ||z_i||^2 */
    double *scratch;   /* nthreads x KM_ROW_BLOCK x k */
    /* arguments of the block functions */
    const int *a, *prev;
    R_xlen_t nmoved;
    int *b;
    double *v;         /* D: the vector of vector_dist_block */
    double *out;
    double *hw;        /* Hartigan-Wong: a chunk's distances, hw_rows x k */
    R_xlen_t hw_first, hw_rows;
    unsigned char *dirty; /* k: centroids moved since the chunk's distances */
    unsigned char *cand;  /* k: the clusters one point may move to */
    R_xlen_t *last_change; /* k: the Hartigan-Wong step (pass * n + i) of each
                            * cluster's last change: the live sets */
    R_xlen_t hw_window;    /* 0: the pass is over all n rows; else the rows of
                            * the whole data, of which these are a block */
    R_xlen_t hw_base;      /* with hw_window: the step of the block's row 0 */
    /* k-means||: the points of nearest(), as columns (D x m), their norms */
    const double *Vt, *vn;
    R_xlen_t vm, vbase;
    double *vscratch;     /* nthreads x KM_ROW_BLOCK x vm */
    double *mind;
    int *near;
} lloyd_problem;

static R_xlen_t block_rows(R_xlen_t n, R_xlen_t blk, R_xlen_t *i0)
{
    *i0 = blk * KM_ROW_BLOCK;
    return n - *i0 < KM_ROW_BLOCK ? n - *i0 : KM_ROW_BLOCK;
}

/* Run fn over the row blocks of the n points, threads by work per row. */
static void over_rows(lloyd_problem *l, R_xlen_t n, double work_per_row, bochner_block_fn fn)
{
    bochner_parallel_blocks(km_row_blocks(n),
                            bochner_threads_for(l->base.nthreads, work_per_row * (double) n),
                            KM_BLOCKS_PER_CHECK, fn, l);
}

/* out (m x k) = squared distances of rows i0 .. i0 + m - 1 of Z (leading
 * dimension ldz) to the centroids (Ct: D x k, norms cn). */
static void block_centre_distances(const double *Z, R_xlen_t ldz, int D,
                                   const double *zn, R_xlen_t i0, int m,
                                   const double *Ct, int k, const double *cn,
                                   double *out)
{
    bochner_gemm(Z + i0, ldz, Ct, D, m, k, D, out, m, 0);
    for (int c = 0; c < k; c++) {
        double *col = out + (R_xlen_t) c * m;
        for (int i = 0; i < m; i++) col[i] = zn[i0 + i] - 2.0 * col[i] + cn[c];
    }
}

/* Centroid sums of a block of columns: from all points, or moving the
 * points that moved between their old and new clusters. */
static void centroid_sums_block(void *ctx, R_xlen_t blk, int thread)
{
    (void) thread;
    lloyd_problem *l = (lloyd_problem *) ctx;
    R_xlen_t n = l->base.n;
    int k = l->base.k, d0 = (int) blk * KM_COLS_PER_BLOCK;
    int d1 = l->D - d0 < KM_COLS_PER_BLOCK ? l->D : d0 + KM_COLS_PER_BLOCK;
    const int *a = l->a, *prev = l->prev;
    for (int d = d0; d < d1; d++) {
        double *cd = l->Csum + (R_xlen_t) d * k;
        const double *zd = l->Z + (R_xlen_t) d * n;
        if (prev) {
            for (R_xlen_t q = 0; q < l->nmoved; q++) {
                R_xlen_t i = l->moved[q];
                double v = km_w(l->base.w, i) * zd[i];
                cd[a[i]] += v;
                cd[prev[i]] -= v;
            }
        } else {
            for (int c = 0; c < k; c++) cd[c] = 0.0;
            if (l->base.w) {
                const double *w = l->base.w;
                for (R_xlen_t i = 0; i < n; i++) cd[a[i]] += w[i] * zd[i];
            } else {
                for (R_xlen_t i = 0; i < n; i++) cd[a[i]] += zd[i];
            }
        }
    }
}

/* The centroids of assignment a; the objective from
 * sum_{i in c} ||z_i - mu_c||^2 = sum_{i in c} ||z_i||^2 - |c| ||mu_c||^2,
 * without a pass over Z. */
static double lloyd_refresh(km_problem *p, const int *a, const int *prev, const int *size)
{
    lloyd_problem *l = (lloyd_problem *) p;
    R_xlen_t n = p->n, nmoved = 0;
    int k = p->k, D = l->D;
    if (prev && l->since_full < KM_MAX_INCREMENTAL) {
        for (R_xlen_t i = 0; i < n && 8 * nmoved <= n; i++)
            if (a[i] != prev[i]) l->moved[nmoved++] = i;
    }
    int incremental = prev && l->since_full < KM_MAX_INCREMENTAL && 8 * nmoved <= n;
    l->a = a;
    l->prev = incremental ? prev : NULL;
    l->nmoved = nmoved;
    double work = incremental ? 2.0 * (double) nmoved * D : (double) n * D;
    bochner_parallel_blocks((D + KM_COLS_PER_BLOCK - 1) / KM_COLS_PER_BLOCK,
                            bochner_threads_for(p->nthreads, work), 4,
                            centroid_sums_block, l);
    l->since_full = incremental ? l->since_full + 1 : 0;
    double *C = l->C, *Cs = l->Csum, *W = l->W;
    const double *w = p->w;
    double *zsum = l->zsum;
    for (int c = 0; c < k; c++) W[c] = zsum[c] = 0.0;
    for (R_xlen_t i = 0; i < n; i++) {
        W[a[i]] += km_w(w, i);
        zsum[a[i]] += km_w(w, i) * l->zn[i];
    }
    for (int c = 0; c < k; c++) {
        double s = 0.0, sz = W[c];
        for (int j = 0; j < D; j++) {
            R_xlen_t at = c + (R_xlen_t) j * k;
            C[at] = size[c] > 0 ? Cs[at] / sz : 0.0;
            l->Ct[j + (R_xlen_t) c * D] = C[at];
            s += C[at] * C[at];
        }
        l->cn[c] = s;
        l->size[c] = size[c];
    }
    double obj = 0.0;
    for (int c = 0; c < k; c++) obj += km_clamp0(zsum[c] - W[c] * l->cn[c]);
    return obj;
}

/* Distance of each point to its own centroid, computed directly. */
static void own_dist_block(void *ctx, R_xlen_t blk, int thread)
{
    (void) thread;
    lloyd_problem *l = (lloyd_problem *) ctx;
    R_xlen_t n = l->base.n, i0, m = block_rows(n, blk, &i0);
    int k = l->base.k;
    const int *a = l->a;
    double *dist = l->out;
    for (R_xlen_t i = 0; i < m; i++) dist[i0 + i] = 0.0;
    for (int j = 0; j < l->D; j++) {
        const double *zj = l->Z + (R_xlen_t) j * n + i0;
        const double *cj = l->C + (R_xlen_t) j * k;
        for (R_xlen_t i = 0; i < m; i++) {
            double t = zj[i] - cj[a[i0 + i]];
            dist[i0 + i] += t * t;
        }
    }
}

static void lloyd_own_dist(km_problem *p, const int *a, double *dist)
{
    lloyd_problem *l = (lloyd_problem *) p;
    l->a = a;
    l->out = dist;
    over_rows(l, p->n, 2.0 * l->D, own_dist_block);
}

static void assign_block(void *ctx, R_xlen_t blk, int thread)
{
    lloyd_problem *l = (lloyd_problem *) ctx;
    R_xlen_t n = l->base.n, i0;
    int m = (int) block_rows(n, blk, &i0), k = l->base.k;
    double *dm = l->scratch + (R_xlen_t) thread * KM_ROW_BLOCK * k;
    block_centre_distances(l->Z, n, l->D, l->zn, i0, m, l->Ct, k, l->cn, dm);
    for (int i = 0; i < m; i++) {
        int best = -1;
        double bestv = 0.0;
        for (int c = 0; c < k; c++) {
            if (l->size[c] == 0) continue;
            double v = dm[i + (R_xlen_t) c * m];
            if (best < 0 || v < bestv) { best = c; bestv = v; }
        }
        l->b[i0 + i] = best;
        l->out[i0 + i] = km_clamp0(bestv);
    }
}

static void lloyd_assign(km_problem *p, int *b, double *bdist)
{
    lloyd_problem *l = (lloyd_problem *) p;
    l->b = b;
    l->out = bdist;
    over_rows(l, p->n, (double) l->D * p->k, assign_block);
}

/* Squared distances of the points to the vector l->v (D values). */
static void vector_dist_block(void *ctx, R_xlen_t blk, int thread)
{
    (void) thread;
    lloyd_problem *l = (lloyd_problem *) ctx;
    R_xlen_t n = l->base.n, i0, m = block_rows(n, blk, &i0);
    double *out = l->out;
    for (R_xlen_t i = 0; i < m; i++) out[i0 + i] = 0.0;
    for (int j = 0; j < l->D; j++) {
        const double *zj = l->Z + (R_xlen_t) j * n + i0;
        double vj = l->v[j];
        for (R_xlen_t i = 0; i < m; i++) {
            double t = zj[i] - vj;
            out[i0 + i] += t * t;
        }
    }
}

/* Distances to point s: to the vector of its features. */
static void lloyd_point_dist(km_problem *p, R_xlen_t s, double *out)
{
    lloyd_problem *l = (lloyd_problem *) p;
    for (int j = 0; j < l->D; j++) l->v[j] = l->Z[s + (R_xlen_t) j * p->n];
    l->out = out;
    over_rows(l, p->n, 2.0 * l->D, vector_dist_block);
}

/* Squared distances (direct, as lloyd_point_dist) of the rows of Z (m x D)
 * to the vector v (D values), into out: the distances greedy k-means++
 * uses, for a block of rows of data held in chunks. */
void bochner_kmeans_point_distances(const double *Z, R_xlen_t m, int D, const double *v,
                                    double *out, int nthreads)
{
    lloyd_problem l;
    memset(&l, 0, sizeof(l));
    l.base.n = m;
    l.base.nthreads = nthreads;
    l.Z = Z;
    l.D = D;
    l.v = (double *) v;
    l.out = out;
    over_rows(&l, m, 2.0 * D, vector_dist_block);
}

/* k-means|| (kmeans.h): distances of a row block to the m points by one
 * product, as the assignment step does with centroids. */
static void nearest_block(void *ctx, R_xlen_t blk, int thread)
{
    lloyd_problem *l = (lloyd_problem *) ctx;
    R_xlen_t n = l->base.n, i0;
    int m = (int) block_rows(n, blk, &i0), vm = (int) l->vm;
    double *dm = l->vscratch + (R_xlen_t) thread * KM_ROW_BLOCK * vm;
    block_centre_distances(l->Z, n, l->D, l->zn, i0, m, l->Vt, vm, l->vn, dm);
    for (int q = 0; q < vm; q++) {
        const double *col = dm + (R_xlen_t) q * m;
        for (int i = 0; i < m; i++) {
            /* what the product leaves of a zero distance (a point against
             * itself or its duplicate) is rounding: 0, as the exact value,
             * so that k-means|| never draws a candidate twice */
            double d = col[i];
            if (d <= 1e-12 * (l->zn[i0 + i] + l->vn[q])) d = 0.0;
            if (d < l->mind[i0 + i]) {
                l->mind[i0 + i] = d;
                l->near[i0 + i] = (int) (l->vbase + q);
            }
        }
    }
}

/* Up to KM_NEAREST_BATCH points per product, so the scratch stays small. */
#define KM_NEAREST_BATCH 64

static void lloyd_nearest(km_problem *p, const R_xlen_t *s, R_xlen_t m, R_xlen_t base,
                          double *mind, int *near)
{
    lloyd_problem *l = (lloyd_problem *) p;
    R_xlen_t n = p->n;
    int D = l->D;
    for (R_xlen_t q0 = 0; q0 < m; q0 += KM_NEAREST_BATCH) {
        R_xlen_t vm = m - q0 < KM_NEAREST_BATCH ? m - q0 : KM_NEAREST_BATCH;
        const void *vmax = vmaxget();
        double *Vt = (double *) R_alloc((size_t) D * (size_t) vm, sizeof(double));
        double *vn = (double *) R_alloc((size_t) vm, sizeof(double));
        for (R_xlen_t q = 0; q < vm; q++) {
            R_xlen_t pt = s[q0 + q];
            for (int j = 0; j < D; j++) Vt[j + q * D] = l->Z[pt + (R_xlen_t) j * n];
            vn[q] = l->zn[pt];
        }
        l->Vt = Vt;
        l->vn = vn;
        l->vm = vm;
        l->vbase = base + q0;
        l->mind = mind;
        l->near = near;
        l->vscratch = (double *) R_alloc((size_t) p->nthreads * KM_ROW_BLOCK * (size_t) vm,
                                         sizeof(double));
        over_rows(l, n, (double) D * (double) vm, nearest_block);
        vmaxset(vmax);
    }
}

static double lloyd_pair_dist(km_problem *p, R_xlen_t i, R_xlen_t j)
{
    lloyd_problem *l = (lloyd_problem *) p;
    double s = 0.0;
    for (int q = 0; q < l->D; q++) {
        double t = l->Z[i + (R_xlen_t) q * p->n] - l->Z[j + (R_xlen_t) q * p->n];
        s += t * t;
    }
    return s;
}

#define KM_HW_CHUNK 64   /* row blocks whose distances are computed together */

/* Hartigan-Wong: the distances of a chunk of row blocks to the centroids, by
 * the product, in parallel (into l->hw, chunk rows x k, column-major). */
static void chunk_dist_block(void *ctx, R_xlen_t blk, int thread)
{
    lloyd_problem *l = (lloyd_problem *) ctx;
    R_xlen_t n = l->base.n, i0;
    int m = (int) block_rows(n, l->hw_first + blk, &i0), k = l->base.k;
    double *dm = l->scratch + (R_xlen_t) thread * KM_ROW_BLOCK * k;
    block_centre_distances(l->Z, n, l->D, l->zn, i0, m, l->Ct, k, l->cn, dm);
    R_xlen_t off = blk * KM_ROW_BLOCK;
    for (int c = 0; c < k; c++)
        memcpy(l->hw + off + (R_xlen_t) c * l->hw_rows, dm + (R_xlen_t) c * m,
               sizeof(double) * (size_t) m);
}

/* ||z_i - mu_c||^2 directly (no cancellation) */
static double direct_dist(const lloyd_problem *l, R_xlen_t i, int c)
{
    R_xlen_t n = l->base.n;
    int k = l->base.k;
    double s = 0.0;
    for (int j = 0; j < l->D; j++) {
        double t = l->Z[i + (R_xlen_t) j * n] - l->C[c + (R_xlen_t) j * k];
        s += t * t;
    }
    return s;
}

/* One Hartigan-Wong pass (kmeans.h), the points in order as if every
 * distance were computed afresh: the distances of a chunk of points come
 * from one parallel product; after a move only the two centroids it changed
 * are stale, and the later points of the chunk get their distances to those
 * recomputed directly.  A point whose product distances show no move (with
 * a margin for their rounding) has none; the others are decided on direct
 * distances.  A move updates both centroids at once (O(D)). */
static int lloyd_hartigan_pass(km_problem *p, int *a, int *size, double *obj)
{
    lloyd_problem *l = (lloyd_problem *) p;
    R_xlen_t n = p->n, nblocks = km_row_blocks(n), window = n;
    int k = p->k, D = l->D, moves = 0;
    double *d = l->zsum;   /* k scratch: one point's distances */
    R_xlen_t *last = l->last_change;
    /* live sets (as stats::kmeans's optra): point i was last examined n
     * steps ago; a move to c could only have become a gain if its own
     * cluster or c changed since.  Every cluster is live in the first pass
     * (Lloyd just moved the centres). */
    R_xlen_t base;
    if (l->hw_window) {        /* a block of a pass over the chunks: the steps
                                * count the rows of all chunks */
        base = l->hw_base;
        window = l->hw_window;
    } else {
        if (++p->hw_pass == 1) for (int c = 0; c < k; c++) last[c] = n;
        base = (R_xlen_t) p->hw_pass * n;
    }
    for (R_xlen_t first = 0; first < nblocks; first += KM_HW_CHUNK) {
        R_xlen_t nb = nblocks - first < KM_HW_CHUNK ? nblocks - first : KM_HW_CHUNK;
        R_xlen_t r0 = first * KM_ROW_BLOCK, r1 = r0 + nb * KM_ROW_BLOCK;
        if (r1 > n) r1 = n;
        /* no cluster live at the chunk's start: its points need distances
         * only after a move inside it, and those are computed directly */
        int product = 0;
        for (int c = 0; c < k; c++) product |= last[c] > base + r0 - window;
        if (product) {
            l->hw_first = first;
            l->hw_rows = r1 - r0;
            bochner_parallel_blocks(nb, bochner_threads_for(p->nthreads,
                                                            (double) l->hw_rows * D * k),
                                    KM_BLOCKS_PER_CHECK, chunk_dist_block, l);
        }
        int ndirty = 0;
        for (int c = 0; c < k; c++) l->dirty[c] = 0;
        for (R_xlen_t i = r0; i < r1; i++) {
            int from = a[i], to = -1;
            if (l->size[from] < 2) continue;
            R_xlen_t step = base + i;
            int own_live = last[from] > step - window, ncand = 0;
            for (int c = 0; c < k; c++) {
                l->cand[c] = c != from && (own_live || last[c] > step - window);
                ncand += l->cand[c];
            }
            if (!ncand) continue;
            p->hw_checks++;
            double zn = l->zn[i], slack = 0.0;
            for (int c = 0; c < k; c++) {
                if (c != from && !l->cand[c]) continue;
                if (!product || (ndirty && l->dirty[c])) {
                    d[c] = direct_dist(l, i, c);
                } else {
                    d[c] = km_clamp0(l->hw[(i - r0) + (R_xlen_t) c * l->hw_rows]);
                    double e = 1e-8 * (zn + l->cn[c]);
                    if (e > slack) slack = e;
                }
            }
            double wi = km_w(p->w, i), nf = l->W[from];
            int candidate = 0;
            for (int c = 0; c < k && !candidate; c++) {
                if (!l->cand[c]) continue;
                double nc = l->W[c];
                if (nc / (nc + wi) * d[c] < nf / (nf - wi) * d[from] + 2.0 * slack) candidate = 1;
            }
            if (!candidate) continue;
            for (int c = 0; c < k; c++)
                if (c == from || l->cand[c]) d[c] = direct_dist(l, i, c);
            double best = nf / (nf - wi) * d[from] * (1.0 - KM_MOVE_GAIN);
            for (int c = 0; c < k; c++) {
                if (!l->cand[c]) continue;
                double nc = l->W[c];
                double add = nc / (nc + wi) * d[c];
                if (add < best) { best = add; to = c; }
            }
            if (to < 0) continue;
            last[from] = last[to] = step;
            l->size[from]--;
            l->size[to]++;
            l->W[from] -= wi;
            l->W[to] += wi;
            size[from]--;
            size[to]++;
            a[i] = to;
            double sf = l->W[from], st = l->W[to], cf = 0.0, ct = 0.0;
            for (int j = 0; j < D; j++) {
                double z = wi * l->Z[i + (R_xlen_t) j * n];
                R_xlen_t f = from + (R_xlen_t) j * k, t = to + (R_xlen_t) j * k;
                l->Csum[f] -= z;
                l->Csum[t] += z;
                l->C[f] = l->Csum[f] / sf;   /* |from| >= 1 after the move */
                l->C[t] = l->Csum[t] / st;
                l->Ct[j + (R_xlen_t) from * D] = l->C[f];
                l->Ct[j + (R_xlen_t) to * D] = l->C[t];
                cf += l->C[f] * l->C[f];
                ct += l->C[t] * l->C[t];
            }
            l->cn[from] = cf;
            l->cn[to] = ct;
            ndirty += !l->dirty[from] + !l->dirty[to];
            l->dirty[from] = l->dirty[to] = 1;
            moves++;
        }
        R_CheckUserInterrupt();
    }
    /* the objective: sum_i w_i ||z_i||^2 - sum_c W_c ||mu_c||^2 (of the
     * block's rows only, in a pass over chunks) */
    double o = 0.0;
    for (R_xlen_t i = 0; i < n; i++) o += km_w(p->w, i) * l->zn[i];
    for (int c = 0; c < k; c++) o -= l->W[c] * l->cn[c];
    *obj = km_clamp0(o);
    l->since_full = KM_MAX_INCREMENTAL;   /* the next refresh recomputes the sums */
    return moves;
}

/* A problem on Z (n x D) with k clusters; scratch from R_alloc. */
static void lloyd_setup(lloyd_problem *l, const double *Z, R_xlen_t n, int D, int k,
                        int nthreads, double *centres)
{
    memset(l, 0, sizeof(*l));
    l->base.n = n;
    l->base.k = k;
    l->base.nthreads = nthreads;
    l->base.refresh = lloyd_refresh;
    l->base.own_dist = lloyd_own_dist;
    l->base.assign = lloyd_assign;
    l->base.point_dist = lloyd_point_dist;
    l->Z = Z;
    l->D = D;
    l->zn = (double *) R_alloc((size_t) n, sizeof(double));
    l->C = centres;
    l->Ct = (double *) R_alloc((size_t) k * (size_t) D, sizeof(double));
    l->cn = (double *) R_alloc((size_t) k, sizeof(double));
    l->size = (int *) R_alloc((size_t) k, sizeof(int));
    l->scratch = (double *) R_alloc((size_t) nthreads * KM_ROW_BLOCK * (size_t) k,
                                    sizeof(double));
    /* ||z_i||^2: the squared distances to the origin */
    l->v = (double *) R_alloc((size_t) D, sizeof(double));
    memset(l->v, 0, sizeof(double) * (size_t) D);
    l->out = l->zn;
    over_rows(l, n, 2.0 * D, vector_dist_block);
}

/* Lloyd's k-means (then Hartigan-Wong passes if hartigan) with k-means++
 * seeding on the rows of Z (n x D), see kmeans.h.  centres (k x D)
 * receives the centroids. */
int bochner_kmeans_lloyd(const double *Z, R_xlen_t n, int D, int k, const double *w,
                         const int *init, int nstart, int itermax, int hartigan,
                         int seeding, int nthreads, km_result *res, double *centres,
                         double *totss)
{
    lloyd_problem l;
    if (n < 1 || D < 1 || k < 1 || k > n) return BOCHNER_BAD_ARGUMENT;
    lloyd_setup(&l, Z, n, D, k, nthreads, centres);
    l.Csum = (double *) R_alloc((size_t) k * (size_t) D, sizeof(double));
    l.zsum = (double *) R_alloc((size_t) k, sizeof(double));
    l.W = (double *) R_alloc((size_t) k, sizeof(double));
    l.base.w = w;
    l.moved = (R_xlen_t *) R_alloc((size_t) n, sizeof(R_xlen_t));
    l.base.hartigan_pass = lloyd_hartigan_pass;
    l.base.hartigan = hartigan;
    l.base.nearest = lloyd_nearest;
    l.base.pair_dist = lloyd_pair_dist;
    l.base.seeding = seeding;
    if (hartigan) {
        l.hw = (double *) R_alloc((size_t) KM_HW_CHUNK * KM_ROW_BLOCK * (size_t) k,
                                  sizeof(double));
        l.dirty = (unsigned char *) R_alloc((size_t) k, 1);
        l.cand = (unsigned char *) R_alloc((size_t) k, 1);
        l.last_change = (R_xlen_t *) R_alloc((size_t) k, sizeof(R_xlen_t));
    }

    /* total sum of squares about the (weighted) mean of the rows */
    double tss = 0.0, wt = 0.0;
    for (R_xlen_t i = 0; i < n; i++) wt += km_w(w, i);
    for (int j = 0; j < D; j++) {
        const double *zj = Z + (R_xlen_t) j * n;
        double m = 0.0, s = 0.0;
        for (R_xlen_t i = 0; i < n; i++) m += km_w(w, i) * zj[i];
        m /= wt;
        for (R_xlen_t i = 0; i < n; i++) s += km_w(w, i) * (zj[i] - m) * (zj[i] - m);
        tss += s;
        if ((j + 1) % 64 == 0) R_CheckUserInterrupt();
    }
    *totss = tss;
    return km_fit(&l.base, init, nstart, itermax, res);
}

static void centre_distances_block(void *ctx, R_xlen_t blk, int thread)
{
    lloyd_problem *l = (lloyd_problem *) ctx;
    R_xlen_t m = l->base.n, i0;
    int rows = (int) block_rows(m, blk, &i0), k = l->base.k;
    double *dm = l->scratch + (R_xlen_t) thread * KM_ROW_BLOCK * k;
    block_centre_distances(l->Z, m, l->D, l->zn, i0, rows, l->Ct, k, l->cn, dm);
    for (int c = 0; c < k; c++)
        for (int i = 0; i < rows; i++)
            l->out[i0 + i + (R_xlen_t) c * m] = km_clamp0(dm[i + (R_xlen_t) c * rows]);
}

/* Squared distances (m x k, into out) of the rows of Z (m x D) to the
 * centroids C (k x D); returns the rows' squared norms (m, R_alloc'ed). */
const double *bochner_kmeans_centre_distances_norms(const double *Z, R_xlen_t m, int D,
                                                   const double *C, int k, double *out,
                                                   int nthreads)
{
    lloyd_problem l;
    lloyd_setup(&l, Z, m, D, k, nthreads, (double *) C);
    for (int c = 0; c < k; c++) {
        double s = 0.0;
        for (int j = 0; j < D; j++) {
            double v = C[c + (R_xlen_t) j * k];
            l.Ct[j + (R_xlen_t) c * D] = v;
            s += v * v;
        }
        l.cn[c] = s;
    }
    l.out = out;
    over_rows(&l, m, (double) D * k, centre_distances_block);
    return l.zn;
}

void bochner_kmeans_centre_distances(const double *Z, R_xlen_t m, int D,
                                     const double *C, int k, double *out,
                                     int nthreads)
{
    bochner_kmeans_centre_distances_norms(Z, m, D, C, k, out, nthreads);
}

/* A Hartigan-Wong pass over one block of rows of a partition of N rows
 * held in chunks: the rows of Z (m x D) with clusters cl (0-based), the
 * partition's per-cluster feature sums (k x D) and counts (k), the live
 * sets last (k: the step of each cluster's last change, steps numbering
 * pass * N + row over all N rows) and base, the step of the block's first
 * row.  The block's rows are visited in order by the in-memory pass
 * (lloyd_hartigan_pass) with the current centres, which it updates after
 * every move, so blocks passed one after another, the state carried from
 * one to the next, make the in-memory pass over all rows.  On return the
 * state is updated, *moves counted, and bsums (k x D) and bs2 (k) hold the
 * block's per-cluster sums of z and of ||z||^2 under its final clusters. */
int bochner_kmeans_hartigan_block(const double *Z, R_xlen_t m, int D, int k, int *cl,
                                  double *sums, double *counts, double *last, double base,
                                  double window, int nth, int *moves, double *bsums,
                                  double *bs2)
{
    if (m < 1 || D < 1 || k < 1 || !(window >= (double) m)) return BOCHNER_BAD_ARGUMENT;
    for (R_xlen_t i = 0; i < m; i++)
        if (cl[i] < 0 || cl[i] >= k) return BOCHNER_BAD_ARGUMENT;
    lloyd_problem l;
    double *C = (double *) R_alloc((size_t) k * (size_t) D, sizeof(double));
    lloyd_setup(&l, Z, m, D, k, nth, C);
    int *size = (int *) R_alloc((size_t) k, sizeof(int));
    for (int c = 0; c < k; c++) {
        double s = 0.0;
        for (int j = 0; j < D; j++) {
            R_xlen_t f = c + (R_xlen_t) j * k;
            C[f] = counts[c] > 0.0 ? sums[f] / counts[c] : 0.0;
            l.Ct[j + (R_xlen_t) c * D] = C[f];
            s += C[f] * C[f];
        }
        l.cn[c] = s;
        size[c] = l.size[c] = (int) counts[c];
    }
    l.Csum = sums;
    l.W = counts;
    l.zsum = (double *) R_alloc((size_t) k, sizeof(double));
    l.hw = (double *) R_alloc((size_t) KM_HW_CHUNK * KM_ROW_BLOCK * (size_t) k, sizeof(double));
    l.dirty = (unsigned char *) R_alloc((size_t) k, 1);
    l.cand = (unsigned char *) R_alloc((size_t) k, 1);
    l.last_change = (R_xlen_t *) R_alloc((size_t) k, sizeof(R_xlen_t));
    for (int c = 0; c < k; c++) l.last_change[c] = (R_xlen_t) last[c];
    l.hw_window = (R_xlen_t) window;
    l.hw_base = (R_xlen_t) base;
    double obj;
    *moves = lloyd_hartigan_pass(&l.base, cl, size, &obj);
    for (int c = 0; c < k; c++) last[c] = (double) l.last_change[c];
    memset(bsums, 0, sizeof(double) * (size_t) k * (size_t) D);
    for (int c = 0; c < k; c++) bs2[c] = 0.0;
    for (int j = 0; j < D; j++) {
        const double *zj = Z + (R_xlen_t) j * m;
        double *sj = bsums + (R_xlen_t) j * k;
        for (R_xlen_t i = 0; i < m; i++) sj[cl[i]] += zj[i];
    }
    for (R_xlen_t i = 0; i < m; i++) bs2[cl[i]] += l.zn[i];
    return BOCHNER_OK;
}
