/* Kernel k-means: exact (on the Gram matrix) and on random features (Lloyd).
 *
 * Both methods share one driver: kernel k-means++ seeding, then assignment
 * and update until no point moves or iter.max, empty clusters re-seeded from
 * the point farthest from its centre, nstart restarts keeping the lowest
 * objective.  What differs is how centres are represented:
 *
 *   exact  the centre of cluster c is the mean of phi(x_j), j in c, known
 *          through S[i, c] = sum_{j in c} K_ij and T_c = sum_{j,l in c} K_jl:
 *          ||phi(x_i) - mu_c||^2 = K_ii - 2 S[i, c] / |c| + T_c / |c|^2.
 *          S comes from one pass over K, in row blocks so that the block's
 *          tile of S stays in cache while K streams past; once few points
 *          move, S is updated from their columns of K alone.
 *   rff    explicit centroids of the n x D feature matrix Z (their sums
 *          likewise updated from the points that moved); distances by
 *          ||z||^2 - 2 z.c + ||c||^2 with one dgemm per row block.
 *
 * Randomness: unif_rand() only, drawn serially (first seed uniform, the
 * others proportional to the squared distance to the nearest seed).
 * Threads own disjoint rows of S, disjoint points, or disjoint columns of
 * the centroids, and every sum runs in a fixed order, so the result does not
 * depend on the number of threads.  Ties go to the lowest cluster index. */
#include "bochner.h"
#include <math.h>
#include <string.h>
#include <limits.h>
#include <R_ext/BLAS.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#ifndef FCONE
#define FCONE
#endif

#define KM_ROW_BLOCK 256        /* rows per block */
#define KM_BLOCKS_PER_CHECK 16  /* row blocks per thread between interrupt checks */
#define ACC_TILE 32768         /* bytes / 8 of a tile of S in the pass over K */
#define KM_PARALLEL_MIN 65536  /* less work than this runs on one thread */
#define KM_COLS_PER_CHECK 64    /* feature columns between interrupt checks */
/* Centres are updated from the points that moved while few moved, and
 * recomputed after this many updates, which bounds the rounding drift. */
#define KM_MAX_INCREMENTAL 8

/* ------------------------------------------------------------------------ */
/* The problem interface used by the driver                                  */

typedef struct km_problem km_problem;
struct km_problem {
    R_xlen_t n;
    int k;
    int nthreads;
    /* Centres of assignment a (empty clusters allowed, never divided by),
     * returning the objective: the sum over the points of the squared
     * distance to their own centre.  prev is NULL, or the assignment at the
     * previous refresh, which lets the problem update its centres from the
     * points that moved rather than recompute them. */
    double (*refresh)(km_problem *p, const int *a, const int *prev, const int *size);
    /* Squared distance of every point to its own centre (those of the last
     * refresh, for the assignment a given to it), into dist. */
    void (*own_dist)(km_problem *p, const int *a, double *dist);
    /* Nearest current centre of every point into b, its distance into bdist. */
    void (*assign)(km_problem *p, int *b, double *bdist);
    /* Squared distance of every point to point s, into out. */
    void (*point_dist)(km_problem *p, R_xlen_t s, double *out);
};

static double clamp0(double v) { return v > 0.0 ? v : 0.0; }

static R_xlen_t n_row_blocks(R_xlen_t n)
{
    return (n + KM_ROW_BLOCK - 1) / KM_ROW_BLOCK;
}

/* ------------------------------------------------------------------------ */
/* Exact kernel k-means on the Gram matrix                                   */

typedef struct {
    km_problem base;
    const double *K;   /* n x n Gram matrix */
    double *diag;      /* K_ii */
    double *S;         /* n x k: sum_{j in c} K_ij */
    double *T;         /* k: sum_{j, l in c} K_jl */
    double *sq;        /* k: T_c / |c|^2, the squared norm of the centre */
    int *size;         /* k: sizes at the last refresh */
    R_xlen_t *moved;   /* n: scratch for the points that moved */
    int since_full;    /* incremental updates since the last full pass */
} gram_problem;

/* Rows per block in the passes over K: long contiguous runs of each column
 * of K while the block's tile of S (rows x k) stays small, and at least one
 * block per thread.  Each entry of S is summed over the columns in order
 * whatever the blocks, so the result does not depend on them. */
static R_xlen_t acc_rows(R_xlen_t nr, int k, int nthreads)
{
    R_xlen_t rows = ACC_TILE / k, per_thread = (nr + nthreads - 1) / nthreads;
    if (rows > per_thread) rows = per_thread;
    if (rows < KM_ROW_BLOCK) rows = KM_ROW_BLOCK;
    return rows;
}

/* S[, c] = sum over columns j with a[j] == c of K[, j], for K (nr x nc) and
 * S (nr x k): row blocks (parallel), and within a block one pass over the
 * columns of K, so the block's tile of S stays in cache. */
static void accumulate_columns(const double *K, R_xlen_t nr, R_xlen_t nc,
                               const int *a, int k, double *S, int nthreads)
{
    R_xlen_t rows = acc_rows(nr, k, nthreads);
    R_xlen_t nb = (nr + rows - 1) / rows;
    R_xlen_t group = (R_xlen_t) nthreads;
    for (R_xlen_t g0 = 0; g0 < nb; g0 += group) {
        R_xlen_t g1 = g0 + group < nb ? g0 + group : nb;
        R_xlen_t blk;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nthreads) schedule(static) if(nb > 1)
#endif
        for (blk = g0; blk < g1; blk++) {
            R_xlen_t i0 = blk * rows;
            R_xlen_t m = nr - i0 < rows ? nr - i0 : rows;
            for (int c = 0; c < k; c++)
                memset(S + (R_xlen_t) c * nr + i0, 0, sizeof(double) * (size_t) m);
            for (R_xlen_t j = 0; j < nc; j++) {
                double *s = S + (R_xlen_t) a[j] * nr + i0;
                const double *kj = K + j * nr + i0;
                for (R_xlen_t i = 0; i < m; i++) s[i] += kj[i];
            }
        }
        R_CheckUserInterrupt();
    }
}

static double gram_distance(const gram_problem *g, R_xlen_t i, int c)
{
    double sz = (double) g->size[c];
    return g->diag[i] - 2.0 * g->S[i + (R_xlen_t) c * g->base.n] / sz + g->sq[c];
}

/* S[, c] += K[, j] for the points j that joined c, -= for those that left:
 * the same row blocks as accumulate_columns, O(n) per moved point. */
static void update_columns(const double *K, R_xlen_t n, const int *a, const int *prev,
                           const R_xlen_t *moved, R_xlen_t nmoved, int k, double *S,
                           int nthreads)
{
    R_xlen_t rows = acc_rows(n, k, nthreads);
    R_xlen_t nb = (n + rows - 1) / rows, blk;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nthreads) schedule(static) if(nb > 1)
#endif
    for (blk = 0; blk < nb; blk++) {
        R_xlen_t i0 = blk * rows;
        R_xlen_t m = n - i0 < rows ? n - i0 : rows;
        for (R_xlen_t q = 0; q < nmoved; q++) {
            R_xlen_t j = moved[q];
            double *to = S + (R_xlen_t) a[j] * n + i0;
            double *from = S + (R_xlen_t) prev[j] * n + i0;
            const double *kj = K + j * n + i0;
            for (R_xlen_t i = 0; i < m; i++) {
                to[i] += kj[i];
                from[i] -= kj[i];
            }
        }
    }
    R_CheckUserInterrupt();
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
        update_columns(g->K, n, a, prev, g->moved, nmoved, k, g->S, p->nthreads);
        g->since_full++;
    } else {
        accumulate_columns(g->K, n, n, a, k, g->S, p->nthreads);
        g->since_full = 0;
    }
    for (int c = 0; c < k; c++) g->T[c] = 0.0;
    for (R_xlen_t j = 0; j < n; j++) g->T[a[j]] += g->S[j + (R_xlen_t) a[j] * n];
    for (int c = 0; c < k; c++) {
        double sz = (double) size[c];
        g->size[c] = size[c];
        g->sq[c] = size[c] > 0 ? g->T[c] / (sz * sz) : 0.0;
    }
    double obj = 0.0;
    for (R_xlen_t i = 0; i < n; i++) obj += clamp0(gram_distance(g, i, a[i]));
    return obj;
}

static void gram_own_dist(km_problem *p, const int *a, double *dist)
{
    gram_problem *g = (gram_problem *) p;
    for (R_xlen_t i = 0; i < p->n; i++) dist[i] = clamp0(gram_distance(g, i, a[i]));
}

static void gram_assign(km_problem *p, int *b, double *bdist)
{
    gram_problem *g = (gram_problem *) p;
    R_xlen_t n = p->n, i;
    int k = p->k;
#ifdef _OPENMP
#pragma omp parallel for num_threads(p->nthreads) schedule(static) if(n * k >= KM_PARALLEL_MIN)
#endif
    for (i = 0; i < n; i++) {
        int best = -1;
        double bestv = 0.0;
        for (int c = 0; c < k; c++) {
            if (g->size[c] == 0) continue;
            double v = gram_distance(g, i, c);
            if (best < 0 || v < bestv) { best = c; bestv = v; }
        }
        b[i] = best;
        bdist[i] = clamp0(bestv);
    }
}

static void gram_point_dist(km_problem *p, R_xlen_t s, double *out)
{
    gram_problem *g = (gram_problem *) p;
    const double *ks = g->K + s * p->n;
    double kss = g->diag[s];
    for (R_xlen_t i = 0; i < p->n; i++) out[i] = clamp0(g->diag[i] - 2.0 * ks[i] + kss);
}

/* ------------------------------------------------------------------------ */
/* Lloyd's k-means on an n x D feature matrix                                */

typedef struct {
    km_problem base;
    const double *Z;   /* n x D */
    int D;
    double *zn;        /* n: ||z_i||^2 */
    double *C;         /* k x D centroids */
    double *Csum;      /* k x D sums of the points of each cluster */
    double *cn;        /* k: ||c||^2 */
    int *size;         /* k: sizes at the last refresh */
    R_xlen_t *moved;   /* n: scratch for the points that moved */
    int since_full;    /* incremental updates since the last full pass */
    double *zsum;      /* k: scratch for sum_{i in c} ||z_i||^2 */
    double *scratch;   /* nthreads x KM_ROW_BLOCK x k */
} lloyd_problem;

/* Squared distances of the rows of Z (n x D, leading dimension ldz) in row
 * block [i0, i0 + m) to the k centroids C, into out (m x k): one dgemm for
 * the inner products (ldz is at most INT_MAX: it is a row count of an R
 * matrix). */
static void block_centre_distances(const double *Z, R_xlen_t ldz, int D,
                                   const double *zn, R_xlen_t i0, int m,
                                   const double *C, int k, const double *cn,
                                   double *out)
{
    double one = 1.0, zero = 0.0;
    int ld = (int) ldz;
    /* out = Z[i0 + 0:m, ] %*% t(C) */
    F77_CALL(dgemm)("N", "T", &m, &k, &D, &one, Z + i0, &ld, C, &k, &zero, out,
                    &m FCONE FCONE);
    for (int c = 0; c < k; c++) {
        double *col = out + (R_xlen_t) c * m;
        for (int i = 0; i < m; i++) col[i] = zn[i0 + i] - 2.0 * col[i] + cn[c];
    }
}

static void row_sq_norms(const double *Z, R_xlen_t n, int D, double *zn, int nthreads)
{
    R_xlen_t nb = n_row_blocks(n);
    R_xlen_t group = (R_xlen_t) KM_BLOCKS_PER_CHECK * nthreads;
    for (R_xlen_t g0 = 0; g0 < nb; g0 += group) {
        R_xlen_t g1 = g0 + group < nb ? g0 + group : nb, blk;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nthreads) schedule(static) if(n * D >= KM_PARALLEL_MIN)
#endif
        for (blk = g0; blk < g1; blk++) {
            R_xlen_t i0 = blk * KM_ROW_BLOCK;
            R_xlen_t m = n - i0 < KM_ROW_BLOCK ? n - i0 : KM_ROW_BLOCK;
            for (R_xlen_t i = 0; i < m; i++) zn[i0 + i] = 0.0;
            for (int d = 0; d < D; d++) {
                const double *zd = Z + (R_xlen_t) d * n + i0;
                for (R_xlen_t i = 0; i < m; i++) zn[i0 + i] += zd[i] * zd[i];
            }
        }
        R_CheckUserInterrupt();
    }
}

/* The centroids, from sums over all points (threads own columns, each
 * summed over the points in order) or, when few points moved, by moving
 * those points' rows between the sums (O(D) per moved point).  The
 * objective comes from sum_{i in c} ||z_i - mu_c||^2 =
 * sum_{i in c} ||z_i||^2 - |c| ||mu_c||^2, without a pass over Z. */
static double lloyd_refresh(km_problem *p, const int *a, const int *prev, const int *size)
{
    lloyd_problem *l = (lloyd_problem *) p;
    R_xlen_t n = p->n, nmoved = 0;
    int k = p->k, D = l->D, d;
    const double *Z = l->Z;
    double *C = l->C, *Cs = l->Csum;
    if (prev && l->since_full < KM_MAX_INCREMENTAL) {
        for (R_xlen_t i = 0; i < n && 8 * nmoved <= n; i++)
            if (a[i] != prev[i]) l->moved[nmoved++] = i;
    }
    if (prev && l->since_full < KM_MAX_INCREMENTAL && 8 * nmoved <= n) {
        const R_xlen_t *mv = l->moved;
#ifdef _OPENMP
#pragma omp parallel for num_threads(p->nthreads) schedule(static) if(nmoved * D >= KM_PARALLEL_MIN)
#endif
        for (d = 0; d < D; d++) {
            double *cd = Cs + (R_xlen_t) d * k;
            const double *zd = Z + (R_xlen_t) d * n;
            for (R_xlen_t q = 0; q < nmoved; q++) {
                R_xlen_t i = mv[q];
                cd[a[i]] += zd[i];
                cd[prev[i]] -= zd[i];
            }
        }
        l->since_full++;
    } else {
        /* a pass over all of Z: interrupts checked between column groups */
        for (int d0 = 0; d0 < D; d0 += KM_COLS_PER_CHECK) {
            int d1 = D - d0 < KM_COLS_PER_CHECK ? D : d0 + KM_COLS_PER_CHECK;
#ifdef _OPENMP
#pragma omp parallel for num_threads(p->nthreads) schedule(static) if(n * (d1 - d0) >= KM_PARALLEL_MIN)
#endif
            for (d = d0; d < d1; d++) {
                double *cd = Cs + (R_xlen_t) d * k;
                const double *zd = Z + (R_xlen_t) d * n;
                for (int c = 0; c < k; c++) cd[c] = 0.0;
                for (R_xlen_t i = 0; i < n; i++) cd[a[i]] += zd[i];
            }
            R_CheckUserInterrupt();
        }
        l->since_full = 0;
    }
    R_CheckUserInterrupt();
    for (int c = 0; c < k; c++) {
        double s = 0.0, sz = (double) size[c];
        for (int j = 0; j < D; j++) {
            R_xlen_t at = c + (R_xlen_t) j * k;
            C[at] = size[c] > 0 ? Cs[at] / sz : 0.0;
            s += C[at] * C[at];
        }
        l->cn[c] = s;
        l->size[c] = size[c];
    }
    double *zsum = l->zsum;
    for (int c = 0; c < k; c++) zsum[c] = 0.0;
    for (R_xlen_t i = 0; i < n; i++) zsum[a[i]] += l->zn[i];
    double obj = 0.0;
    for (int c = 0; c < k; c++) obj += clamp0(zsum[c] - (double) size[c] * l->cn[c]);
    return obj;
}

/* Distance of each point to its own centroid, computed directly. */
static void lloyd_own_dist(km_problem *p, const int *a, double *dist)
{
    lloyd_problem *l = (lloyd_problem *) p;
    R_xlen_t n = p->n, nb = n_row_blocks(n), blk;
    int k = p->k, D = l->D;
    const double *Z = l->Z, *C = l->C;
    R_xlen_t group = (R_xlen_t) KM_BLOCKS_PER_CHECK * p->nthreads;
    for (R_xlen_t g0 = 0; g0 < nb; g0 += group) {
        R_xlen_t g1 = g0 + group < nb ? g0 + group : nb;
#ifdef _OPENMP
#pragma omp parallel for num_threads(p->nthreads) schedule(static) if(n * D >= KM_PARALLEL_MIN)
#endif
        for (blk = g0; blk < g1; blk++) {
            R_xlen_t i0 = blk * KM_ROW_BLOCK;
            R_xlen_t m = n - i0 < KM_ROW_BLOCK ? n - i0 : KM_ROW_BLOCK;
            for (R_xlen_t i = 0; i < m; i++) dist[i0 + i] = 0.0;
            for (int j = 0; j < D; j++) {
                const double *zj = Z + (R_xlen_t) j * n + i0;
                const double *cj = C + (R_xlen_t) j * k;
                for (R_xlen_t i = 0; i < m; i++) {
                    double t = zj[i] - cj[a[i0 + i]];
                    dist[i0 + i] += t * t;
                }
            }
        }
        R_CheckUserInterrupt();
    }
}

static void lloyd_assign(km_problem *p, int *b, double *bdist)
{
    lloyd_problem *l = (lloyd_problem *) p;
    R_xlen_t n = p->n;
    int k = p->k;
    R_xlen_t nb = n_row_blocks(n);
    R_xlen_t group = (R_xlen_t) KM_BLOCKS_PER_CHECK * p->nthreads;
    for (R_xlen_t g0 = 0; g0 < nb; g0 += group) {
        R_xlen_t g1 = g0 + group < nb ? g0 + group : nb;
        R_xlen_t blk;
#ifdef _OPENMP
#pragma omp parallel for num_threads(p->nthreads) schedule(static) if(g1 - g0 > 1)
#endif
        for (blk = g0; blk < g1; blk++) {
            int me = 0;
#ifdef _OPENMP
            me = omp_get_thread_num();
#endif
            double *dm = l->scratch + (R_xlen_t) me * KM_ROW_BLOCK * k;
            R_xlen_t i0 = blk * KM_ROW_BLOCK;
            int m = (int) (n - i0 < KM_ROW_BLOCK ? n - i0 : KM_ROW_BLOCK);
            block_centre_distances(l->Z, n, l->D, l->zn, i0, m, l->C, k, l->cn, dm);
            for (int i = 0; i < m; i++) {
                int best = -1;
                double bestv = 0.0;
                for (int c = 0; c < k; c++) {
                    if (l->size[c] == 0) continue;
                    double v = dm[i + (R_xlen_t) c * m];
                    if (best < 0 || v < bestv) { best = c; bestv = v; }
                }
                b[i0 + i] = best;
                bdist[i0 + i] = clamp0(bestv);
            }
        }
        R_CheckUserInterrupt();
    }
}

static void lloyd_point_dist(km_problem *p, R_xlen_t s, double *out)
{
    lloyd_problem *l = (lloyd_problem *) p;
    R_xlen_t n = p->n, nb = n_row_blocks(n), blk;
    int D = l->D;
    const double *Z = l->Z;
    R_xlen_t group = (R_xlen_t) KM_BLOCKS_PER_CHECK * p->nthreads;
    for (R_xlen_t g0 = 0; g0 < nb; g0 += group) {
        R_xlen_t g1 = g0 + group < nb ? g0 + group : nb;
#ifdef _OPENMP
#pragma omp parallel for num_threads(p->nthreads) schedule(static) if(n * D >= KM_PARALLEL_MIN)
#endif
        for (blk = g0; blk < g1; blk++) {
            R_xlen_t i0 = blk * KM_ROW_BLOCK;
            R_xlen_t m = n - i0 < KM_ROW_BLOCK ? n - i0 : KM_ROW_BLOCK;
            for (R_xlen_t i = 0; i < m; i++) out[i0 + i] = 0.0;
            for (int j = 0; j < D; j++) {
                const double *zj = Z + (R_xlen_t) j * n;
                double zs = zj[s];
                for (R_xlen_t i = 0; i < m; i++) {
                    double t = zj[i0 + i] - zs;
                    out[i0 + i] += t * t;
                }
            }
        }
        R_CheckUserInterrupt();
    }
}

/* ------------------------------------------------------------------------ */
/* The driver                                                                */

/* Index drawn with probability proportional to w (w >= 0, total > 0). */
static R_xlen_t draw_proportional(const double *w, R_xlen_t n, double total)
{
    double target = unif_rand() * total, cum = 0.0;
    R_xlen_t last = 0;
    for (R_xlen_t i = 0; i < n; i++) {
        if (w[i] > 0.0) {
            cum += w[i];
            last = i;
            if (cum > target) return i;
        }
    }
    return last;   /* only reachable through rounding */
}

static R_xlen_t draw_uniform(R_xlen_t n)
{
    R_xlen_t i = (R_xlen_t) floor((double) n * unif_rand());
    return i < n ? i : n - 1;
}

/* Kernel k-means++: the first seed uniform, each next one with probability
 * proportional to the squared distance to the nearest seed (uniform again if
 * every point coincides with a seed); every point joins its nearest seed. */
static void seed_plus_plus(km_problem *p, int *a, double *mind, double *tmp)
{
    R_xlen_t n = p->n;
    for (int c = 0; c < p->k; c++) {
        R_xlen_t s;
        if (c == 0) {
            s = draw_uniform(n);
        } else {
            double total = 0.0;
            for (R_xlen_t i = 0; i < n; i++) total += mind[i];
            s = total > 0.0 ? draw_proportional(mind, n, total) : draw_uniform(n);
        }
        p->point_dist(p, s, tmp);
        for (R_xlen_t i = 0; i < n; i++) {
            if (c == 0 || tmp[i] < mind[i]) {
                mind[i] = tmp[i];
                a[i] = c;
            }
        }
        R_CheckUserInterrupt();
    }
}

static void count_sizes(const int *a, R_xlen_t n, int k, int *size)
{
    for (int c = 0; c < k; c++) size[c] = 0;
    for (R_xlen_t i = 0; i < n; i++) size[a[i]]++;
}

/* Give every empty cluster the point farthest from its centre among the
 * clusters with more than one point (one exists while a cluster is empty,
 * because k <= n).  Returns the number of clusters re-seeded. */
static int fix_empty(int *a, int *size, double *dist, R_xlen_t n, int k)
{
    int fixed = 0;
    for (int c = 0; c < k; c++) {
        if (size[c] > 0) continue;
        R_xlen_t far = -1;
        double best = -1.0;
        for (R_xlen_t i = 0; i < n; i++)
            if (size[a[i]] > 1 && dist[i] > best) { best = dist[i]; far = i; }
        if (far < 0) break;   /* impossible when k <= n */
        size[a[far]]--;
        a[far] = c;
        size[c] = 1;
        dist[far] = 0.0;
        fixed++;
    }
    return fixed;
}

static double sum_doubles(const double *x, R_xlen_t n)
{
    double s = 0.0;
    for (R_xlen_t i = 0; i < n; i++) s += x[i];
    return s;
}

/* A growable trace of objective values (iter.max may be huge). */
typedef struct {
    double *v;
    R_xlen_t cap;
} km_trace;

static void trace_put(km_trace *tr, R_xlen_t t, double value)
{
    if (t >= tr->cap) {
        R_xlen_t cap = 2 * tr->cap > t + 1 ? 2 * tr->cap : t + 1;
        double *v = (double *) R_alloc((size_t) cap, sizeof(double));
        memcpy(v, tr->v, sizeof(double) * (size_t) tr->cap);
        tr->v = v;
        tr->cap = cap;
    }
    tr->v[t] = value;
}

/* One run from the assignment in a (0-based, empty clusters allowed). */
static void km_run(km_problem *p, int *a, int *b, int *size, double *dist,
                   double *bdist, int itermax, km_trace *trace, int *iter,
                   int *converged, int *reseeded)
{
    R_xlen_t n = p->n;
    int k = p->k, t = 0;
    *reseeded = 0;
    count_sizes(a, n, k, size);
    for (int c = 0; c < k; c++) {
        if (size[c] == 0) {
            p->refresh(p, a, NULL, size);
            p->own_dist(p, a, dist);
            *reseeded += fix_empty(a, size, dist, n, k);
            break;
        }
    }
    trace_put(trace, 0, p->refresh(p, a, NULL, size));
    *converged = 0;
    while (t < itermax) {
        p->assign(p, b, bdist);
        count_sizes(b, n, k, size);
        *reseeded += fix_empty(b, size, bdist, n, k);
        t++;
        int moved = 0;
        for (R_xlen_t i = 0; i < n; i++) if (a[i] != b[i]) { moved = 1; break; }
        if (!moved) {
            trace_put(trace, t, trace->v[t - 1]);
            *converged = 1;
            break;
        }
        double obj = p->refresh(p, b, a, size);
        memcpy(a, b, sizeof(int) * (size_t) n);
        trace_put(trace, t, obj);
    }
    *iter = t;
}

typedef struct {
    int *cluster;      /* n, 0-based */
    int *size;         /* k */
    double *dist;      /* n: squared distance to own centre */
    double *trace;     /* iter + 1, allocated by km_fit */
    int iter, converged, reseeded;
    double *start_obj; /* nstart */
} km_result;

/* nstart runs (from init if given, else k-means++), keeping the lowest
 * final objective (the first on ties); on return the problem's centres are
 * those of the best run. */
static int km_fit(km_problem *p, const int *init, int nstart, int itermax,
                  km_result *res)
{
    R_xlen_t n = p->n;
    int k = p->k;
    if (n < 1 || k < 1 || k > n || nstart < 1 || itermax < 1) return BOCHNER_BAD_ARGUMENT;
    int *a = (int *) R_alloc((size_t) n, sizeof(int));
    int *b = (int *) R_alloc((size_t) n, sizeof(int));
    int *size = (int *) R_alloc((size_t) k, sizeof(int));
    double *dist = (double *) R_alloc((size_t) n, sizeof(double));
    double *bdist = (double *) R_alloc((size_t) n, sizeof(double));
    km_trace trace;
    trace.cap = itermax < 255 ? (R_xlen_t) itermax + 1 : 256;
    trace.v = (double *) R_alloc((size_t) trace.cap, sizeof(double));
    double best = 0.0;
    int best_run = -1;
    for (int r = 0; r < nstart; r++) {
        int iter, conv, reseeded;
        if (init) memcpy(a, init, sizeof(int) * (size_t) n);
        else seed_plus_plus(p, a, dist, bdist);
        km_run(p, a, b, size, dist, bdist, itermax, &trace, &iter, &conv, &reseeded);
        double obj = trace.v[iter];
        res->start_obj[r] = obj;
        if (best_run < 0 || obj < best) {
            best = obj;
            best_run = r;
            memcpy(res->cluster, a, sizeof(int) * (size_t) n);
            memcpy(res->size, size, sizeof(int) * (size_t) k);
            res->trace = (double *) R_alloc((size_t) iter + 1, sizeof(double));
            memcpy(res->trace, trace.v, sizeof(double) * ((size_t) iter + 1));
            res->iter = iter;
            res->converged = conv;
            res->reseeded = reseeded;
        }
    }
    if (best_run != nstart - 1) p->refresh(p, res->cluster, NULL, res->size);
    p->own_dist(p, res->cluster, res->dist);
    return BOCHNER_OK;
}

/* ------------------------------------------------------------------------ */
/* Pure-C entry points                                                       */

/* Exact kernel k-means on the n x n Gram matrix K.  Outputs as km_fit, plus
 * sq (k): the squared norms T_c / |c|^2 of the centres.  *trace points to
 * iter + 1 objective values (R_alloc'ed). */
int bochner_kmeans_gram(const double *K, R_xlen_t n, int k, const int *init,
                        int nstart, int itermax, int nthreads, int *cluster,
                        int *size, double *dist, double **trace, int *iter,
                        int *converged, int *reseeded, double *start_obj,
                        double *sq, double *totss)
{
    gram_problem g;
    km_result res = {cluster, size, dist, NULL, 0, 0, 0, start_obj};
    if (n < 1 || k < 1 || k > n) return BOCHNER_BAD_ARGUMENT;
    g.base.n = n;
    g.base.k = k;
    g.base.nthreads = nthreads;
    g.base.refresh = gram_refresh;
    g.base.own_dist = gram_own_dist;
    g.base.assign = gram_assign;
    g.base.point_dist = gram_point_dist;
    g.K = K;
    g.diag = (double *) R_alloc((size_t) n, sizeof(double));
    g.S = (double *) R_alloc((size_t) n * (size_t) k, sizeof(double));
    g.T = (double *) R_alloc((size_t) k, sizeof(double));
    g.sq = (double *) R_alloc((size_t) k, sizeof(double));
    g.size = (int *) R_alloc((size_t) k, sizeof(int));
    g.moved = (R_xlen_t *) R_alloc((size_t) n, sizeof(R_xlen_t));
    g.since_full = 0;
    for (R_xlen_t i = 0; i < n; i++) g.diag[i] = K[i + i * n];

    /* total sum of squares: sum_i K_ii - (1/n) sum_ij K_ij, row sums via S */
    int *zeros = (int *) R_alloc((size_t) n, sizeof(int));
    memset(zeros, 0, sizeof(int) * (size_t) n);
    accumulate_columns(K, n, n, zeros, 1, g.S, nthreads);
    *totss = clamp0(sum_doubles(g.diag, n) - sum_doubles(g.S, n) / (double) n);

    int status = km_fit(&g.base, init, nstart, itermax, &res);
    if (status != BOCHNER_OK) return status;
    for (int c = 0; c < k; c++) sq[c] = g.sq[c];
    *trace = res.trace;
    *iter = res.iter;
    *converged = res.converged;
    *reseeded = res.reseeded;
    return BOCHNER_OK;
}

/* Lloyd's k-means with k-means++ seeding on the rows of Z (n x D).
 * centres (k x D) receives the centroids. */
int bochner_kmeans_lloyd(const double *Z, R_xlen_t n, int D, int k,
                         const int *init, int nstart, int itermax, int nthreads,
                         int *cluster, int *size, double *dist, double **trace,
                         int *iter, int *converged, int *reseeded,
                         double *start_obj, double *centres, double *totss)
{
    lloyd_problem l;
    km_result res = {cluster, size, dist, NULL, 0, 0, 0, start_obj};
    if (n < 1 || D < 1 || k < 1 || k > n) return BOCHNER_BAD_ARGUMENT;
    l.base.n = n;
    l.base.k = k;
    l.base.nthreads = nthreads;
    l.base.refresh = lloyd_refresh;
    l.base.own_dist = lloyd_own_dist;
    l.base.assign = lloyd_assign;
    l.base.point_dist = lloyd_point_dist;
    l.Z = Z;
    l.D = D;
    l.zn = (double *) R_alloc((size_t) n, sizeof(double));
    l.C = centres;
    l.Csum = (double *) R_alloc((size_t) k * (size_t) D, sizeof(double));
    l.zsum = (double *) R_alloc((size_t) k, sizeof(double));
    l.moved = (R_xlen_t *) R_alloc((size_t) n, sizeof(R_xlen_t));
    l.since_full = 0;
    l.cn = (double *) R_alloc((size_t) k, sizeof(double));
    l.size = (int *) R_alloc((size_t) k, sizeof(int));
    l.scratch = (double *) R_alloc((size_t) nthreads * KM_ROW_BLOCK * (size_t) k,
                                   sizeof(double));
    row_sq_norms(Z, n, D, l.zn, nthreads);

    /* total sum of squares about the mean of the rows */
    double tss = 0.0;
    for (int j = 0; j < D; j++) {
        const double *zj = Z + (R_xlen_t) j * n;
        double m = sum_doubles(zj, n) / (double) n, s = 0.0;
        for (R_xlen_t i = 0; i < n; i++) s += (zj[i] - m) * (zj[i] - m);
        tss += s;
        if ((j + 1) % KM_COLS_PER_CHECK == 0) R_CheckUserInterrupt();
    }
    *totss = tss;

    int status = km_fit(&l.base, init, nstart, itermax, &res);
    if (status != BOCHNER_OK) return status;
    *trace = res.trace;
    *iter = res.iter;
    *converged = res.converged;
    *reseeded = res.reseeded;
    return BOCHNER_OK;
}

/* Squared distances (m x k, into out) of the rows of Z (m x D) to the
 * centroids C (k x D). */
void bochner_kmeans_centre_distances(const double *Z, R_xlen_t m, int D,
                                     const double *C, int k, double *out,
                                     int nthreads)
{
    double *zn = (double *) R_alloc((size_t) m, sizeof(double));
    double *cn = (double *) R_alloc((size_t) k, sizeof(double));
    double *scratch = (double *) R_alloc((size_t) nthreads * KM_ROW_BLOCK * (size_t) k,
                                         sizeof(double));
    row_sq_norms(Z, m, D, zn, nthreads);
    for (int c = 0; c < k; c++) {
        double s = 0.0;
        for (int j = 0; j < D; j++) s += C[c + (R_xlen_t) j * k] * C[c + (R_xlen_t) j * k];
        cn[c] = s;
    }
    R_xlen_t nb = n_row_blocks(m), blk;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nthreads) schedule(static) if(nb > 1)
#endif
    for (blk = 0; blk < nb; blk++) {
        int me = 0;
#ifdef _OPENMP
        me = omp_get_thread_num();
#endif
        double *dm = scratch + (R_xlen_t) me * KM_ROW_BLOCK * k;
        R_xlen_t i0 = blk * KM_ROW_BLOCK;
        int rows = (int) (m - i0 < KM_ROW_BLOCK ? m - i0 : KM_ROW_BLOCK);
        block_centre_distances(Z, m, D, zn, i0, rows, C, k, cn, dm);
        for (int c = 0; c < k; c++)
            for (int i = 0; i < rows; i++)
                out[i0 + i + (R_xlen_t) c * m] = clamp0(dm[i + (R_xlen_t) c * rows]);
    }
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
        accumulate_columns(Kb, mb, n, cluster, k, S, nthreads);
        for (int c = 0; c < k; c++) {
            double sz = (double) size[c];
            for (R_xlen_t i = 0; i < mb; i++) {
                double v = sz > 0 ? kyy[i] - 2.0 * S[i + (R_xlen_t) c * mb] / sz + sq[c]
                                  : R_PosInf;
                out[i0 + i + (R_xlen_t) c * m] = clamp0(v);
            }
        }
        R_CheckUserInterrupt();
    }
    return BOCHNER_OK;
}

/* ------------------------------------------------------------------------ */
/* .Call wrappers                                                            */

static int is_real_matrix(SEXP m)
{
    return TYPEOF(m) == REALSXP && isMatrix(m);
}

static int count_arg(SEXP v, const char *what, int lower)
{
    int x = (TYPEOF(v) == INTSXP || TYPEOF(v) == REALSXP) && XLENGTH(v) == 1 ? asInteger(v)
                                                                           : NA_INTEGER;
    if (x == NA_INTEGER || x < lower) error("'%s' must be a whole number of at least %d", what, lower);
    return x;
}

/* NULL, or the 0-based copy of an initial assignment with values in 1..k. */
static const int *initial_assignment(SEXP init, R_xlen_t n, int k)
{
    if (isNull(init)) return NULL;
    if (TYPEOF(init) != INTSXP || XLENGTH(init) != n)
        error("'init' must be NULL or an integer vector with one value per point");
    const int *v = INTEGER(init);
    int *a = (int *) R_alloc((size_t) n, sizeof(int));
    for (R_xlen_t i = 0; i < n; i++) {
        if (v[i] == NA_INTEGER || v[i] < 1 || v[i] > k)
            error("'init' must have values in 1..%d", k);
        a[i] = v[i] - 1;
    }
    return a;
}

/* The list both fitting entry points return. */
static SEXP km_result_list(R_xlen_t n, int k, const int *cluster, const int *size,
                           const double *dist, const double *trace, int iter,
                           int converged, int reseeded, const double *start_obj,
                           int nstart, double totss, SEXP extra, const char *extra_name)
{
    const char *names[] = {"cluster", "size", "withinss", "distance", "trace", "iter",
                           "converged", "reseeded", "start_objectives", "totss",
                           extra_name, ""};
    SEXP res = PROTECT(mkNamed(VECSXP, names));
    SEXP cl = PROTECT(allocVector(INTSXP, n));
    SEXP sz = PROTECT(allocVector(INTSXP, k));
    SEXP ws = PROTECT(allocVector(REALSXP, k));
    SEXP ds = PROTECT(allocVector(REALSXP, n));
    SEXP tr = PROTECT(allocVector(REALSXP, (R_xlen_t) iter + 1));
    SEXP so = PROTECT(allocVector(REALSXP, nstart));
    for (int c = 0; c < k; c++) {
        INTEGER(sz)[c] = size[c];
        REAL(ws)[c] = 0.0;
    }
    for (R_xlen_t i = 0; i < n; i++) {
        INTEGER(cl)[i] = cluster[i] + 1;
        REAL(ds)[i] = dist[i];
        REAL(ws)[cluster[i]] += dist[i];
    }
    memcpy(REAL(tr), trace, sizeof(double) * ((size_t) iter + 1));
    memcpy(REAL(so), start_obj, sizeof(double) * (size_t) nstart);
    SET_VECTOR_ELT(res, 0, cl);
    SET_VECTOR_ELT(res, 1, sz);
    SET_VECTOR_ELT(res, 2, ws);
    SET_VECTOR_ELT(res, 3, ds);
    SET_VECTOR_ELT(res, 4, tr);
    SET_VECTOR_ELT(res, 5, ScalarInteger(iter));
    SET_VECTOR_ELT(res, 6, ScalarLogical(converged));
    SET_VECTOR_ELT(res, 7, ScalarInteger(reseeded));
    SET_VECTOR_ELT(res, 8, so);
    SET_VECTOR_ELT(res, 9, ScalarReal(totss));
    SET_VECTOR_ELT(res, 10, extra);
    UNPROTECT(7);
    return res;
}

SEXP bochner_kmeans_gram_call(SEXP x, SEXP code, SEXP par, SEXP k, SEXP init,
                              SEXP nstart, SEXP itermax, SEXP nthreads)
{
    if (!is_real_matrix(x)) error("'x' must be a double matrix");
    if (TYPEOF(par) != REALSXP || XLENGTH(par) < 1) error("'par' must be a double vector");
    R_xlen_t n = nrows(x);
    int d = ncols(x);
    if (n < 1 || d < 1) error("'x' must have at least one row and one column");
    int kk = count_arg(k, "k", 1), ns = count_arg(nstart, "nstart", 1);
    int im = count_arg(itermax, "iter.max", 1);
    if (kk > n) error("'k' must be at most the number of points");
    const int *a0 = initial_assignment(init, n, kk);
    int nth = bochner_nthreads(asInteger(nthreads));

    double *K = (double *) R_alloc((size_t) n * (size_t) n, sizeof(double));
    int status = bochner_kernel_matrix(asInteger(code), REAL(par), LENGTH(par), REAL(x),
                                       n, NULL, n, d, K, nth);
    if (status != BOCHNER_OK) error("kernel_kmeans: unknown kernel or bad parameters (status %d)", status);

    int *cluster = (int *) R_alloc((size_t) n, sizeof(int));
    int *size = (int *) R_alloc((size_t) kk, sizeof(int));
    double *dist = (double *) R_alloc((size_t) n, sizeof(double));
    double *trace = NULL;
    double *start_obj = (double *) R_alloc((size_t) ns, sizeof(double));
    SEXP sq = PROTECT(allocVector(REALSXP, kk));
    int iter = 0, conv = 0, reseeded = 0;
    double totss = 0.0;
    GetRNGstate();
    status = bochner_kmeans_gram(K, n, kk, a0, ns, im, nth, cluster, size, dist, &trace,
                                 &iter, &conv, &reseeded, start_obj, REAL(sq), &totss);
    PutRNGstate();
    if (status != BOCHNER_OK) error("kernel_kmeans: bad arguments (status %d)", status);
    SEXP res = km_result_list(n, kk, cluster, size, dist, trace, iter, conv, reseeded,
                              start_obj, ns, totss, sq, "centre_sqnorm");
    UNPROTECT(1);
    return res;
}

SEXP bochner_kmeans_lloyd_call(SEXP z, SEXP k, SEXP init, SEXP nstart, SEXP itermax,
                               SEXP nthreads)
{
    if (!is_real_matrix(z)) error("'z' must be a double matrix");
    R_xlen_t n = nrows(z);
    int D = ncols(z);
    if (n < 1 || D < 1) error("'z' must have at least one row and one column");
    int kk = count_arg(k, "k", 1), ns = count_arg(nstart, "nstart", 1);
    int im = count_arg(itermax, "iter.max", 1);
    if (kk > n) error("'k' must be at most the number of points");
    const int *a0 = initial_assignment(init, n, kk);
    int nth = bochner_nthreads(asInteger(nthreads));

    int *cluster = (int *) R_alloc((size_t) n, sizeof(int));
    int *size = (int *) R_alloc((size_t) kk, sizeof(int));
    double *dist = (double *) R_alloc((size_t) n, sizeof(double));
    double *trace = NULL;
    double *start_obj = (double *) R_alloc((size_t) ns, sizeof(double));
    SEXP centres = PROTECT(allocMatrix(REALSXP, kk, D));
    int iter = 0, conv = 0, reseeded = 0;
    double totss = 0.0;
    GetRNGstate();
    int status = bochner_kmeans_lloyd(REAL(z), n, D, kk, a0, ns, im, nth, cluster, size,
                                      dist, &trace, &iter, &conv, &reseeded, start_obj,
                                      REAL(centres), &totss);
    PutRNGstate();
    if (status != BOCHNER_OK) error("kernel_kmeans: bad arguments (status %d)", status);
    SEXP res = km_result_list(n, kk, cluster, size, dist, trace, iter, conv, reseeded,
                              start_obj, ns, totss, centres, "centers");
    UNPROTECT(1);
    return res;
}

SEXP bochner_kmeans_centre_distances_call(SEXP z, SEXP centres, SEXP nthreads)
{
    if (!is_real_matrix(z)) error("'z' must be a double matrix");
    if (!is_real_matrix(centres)) error("'centres' must be a double matrix");
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

SEXP bochner_kmeans_gram_distances_call(SEXP y, SEXP x, SEXP code, SEXP par,
                                        SEXP cluster, SEXP size, SEXP sq,
                                        SEXP nthreads)
{
    if (!is_real_matrix(y)) error("'y' must be a double matrix");
    if (!is_real_matrix(x)) error("'x' must be a double matrix");
    if (TYPEOF(par) != REALSXP || XLENGTH(par) < 1) error("'par' must be a double vector");
    R_xlen_t m = nrows(y), n = nrows(x);
    int d = ncols(x);
    if (ncols(y) != d) error("'x' and 'y' must have the same number of columns");
    if (n < 1 || d < 1) error("'x' must have at least one row and one column");
    if (TYPEOF(size) != INTSXP || XLENGTH(size) < 1) error("'size' must be an integer vector");
    if (TYPEOF(sq) != REALSXP || XLENGTH(sq) != XLENGTH(size))
        error("'sq' must be a double vector with one value per cluster");
    int k = LENGTH(size);
    const int *a = initial_assignment(cluster, n, k);
    if (!a) error("'cluster' must be an integer vector");
    SEXP out = PROTECT(allocMatrix(REALSXP, (int) m, k));
    if (m > 0) {
        int status = bochner_kmeans_gram_distances(asInteger(code), REAL(par), LENGTH(par),
                                                   REAL(y), m, REAL(x), n, d, a,
                                                   INTEGER(size), REAL(sq), k, REAL(out),
                                                   bochner_nthreads(asInteger(nthreads)));
        if (status != BOCHNER_OK)
            error("kernel_kmeans: unknown kernel or bad parameters (status %d)", status);
    }
    UNPROTECT(1);
    return out;
}
