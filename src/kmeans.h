/* Kernel k-means: what the driver (kmeans.c), the two methods (kmeans_gram.c on the
 * Gram matrix, kmeans_lloyd.c on features), the block steps (kmeans_blocks.c) and
 * their .Call wrappers (api_kmeans.c) share. */
#ifndef BOCHNER_KMEANS_H
#define BOCHNER_KMEANS_H

#include "bochner.h"

#define KM_ROW_BLOCK 256        /* rows per block */
#define KM_BLOCKS_PER_CHECK 16  /* row blocks per thread between interrupt checks */
/* Centres are updated from the points that moved while few moved, and
 * recomputed after this many updates, which bounds the rounding drift. */
#define KM_MAX_INCREMENTAL 8

/* The problem interface used by the driver */
typedef struct km_problem km_problem;
struct km_problem {
    R_xlen_t n;
    int k;
    int nthreads;
    const double *w;   /* n positive case weights, or NULL for 1 */
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
    /* One Hartigan-Wong pass over the points in order, from centres that
     * are those of a: point i leaves its cluster a for b when
     * |b| / (|b| + 1) d(i, b) < |a| / (|a| - 1) d(i, a), the exact change
     * of the objective, and both centres are updated at once.  Updates a
     * and size, returns the number of moves, the objective into *obj. */
    int (*hartigan_pass)(km_problem *p, int *a, int *size, double *obj);
    int hartigan;      /* run Hartigan-Wong passes after Lloyd */
    int hw_pass;       /* Hartigan-Wong passes of this run so far (km_run resets) */
    double hw_checks;  /* points whose moves a pass evaluated, this run */
    /* k-means||: for every point i, its distances to the m points s[] in
     * order; where one is below mind[i], mind[i] takes it and near[i] its
     * index plus base (ties keep the earlier point). */
    void (*nearest)(km_problem *p, const R_xlen_t *s, R_xlen_t m, R_xlen_t base,
                    double *mind, int *near);
    /* Squared distance between points i and j. */
    double (*pair_dist)(km_problem *p, R_xlen_t i, R_xlen_t j);
    int seeding;       /* 0: k-means++, 1: k-means|| */
};

/* A move must gain more than this fraction of the point's cost, so that
 * rounding cannot make points cycle between clusters. */
#define KM_MOVE_GAIN 1e-10

typedef struct {
    int *cluster;      /* n, 0-based */
    int *size;         /* k */
    double *dist;      /* n: squared distance to own centre */
    double *trace;     /* iter + 1, allocated by km_fit */
    int iter, converged, reseeded;
    int ntrace;        /* values in trace: Lloyd's iter + 1, then one per Hartigan pass */
    int moves;         /* Hartigan-Wong moves of the returned run */
    double checks;     /* points whose moves its passes evaluated (live sets) */
    double *start_obj; /* nstart */
} km_result;

static inline double km_clamp0(double v) { return v > 0.0 ? v : 0.0; }

static inline R_xlen_t km_row_blocks(R_xlen_t n)
{
    return (n + KM_ROW_BLOCK - 1) / KM_ROW_BLOCK;
}

/* kmeans.c: k-means++ on the kernel's feature space (Nystrom landmarks; non-static for
 * its wrapper in api_kmeans.c) */
int bochner_kmeans_pp_kernel(int code, const double *par, int npar, const double *x,
                             R_xlen_t n, int d, const double *diag, int m, int nthreads,
                             int *chosen);

/* api_kmeans.c: what the .Call wrappers share (argument checks, the result list) */
int km_fit(km_problem *p, const int *init, int nstart, int itermax, km_result *res);
double km_sum(const double *x, R_xlen_t n);
R_xlen_t km_locate(const double *w, R_xlen_t n, double target, R_xlen_t *last, double *cum);
int km_flag_arg(SEXP v, const char *what);
int km_seeding_arg(SEXP v);
const double *km_weights_arg(SEXP v, R_xlen_t n);
static inline double km_w(const double *w, R_xlen_t i) { return w ? w[i] : 1.0; }
const int *km_assignment_arg(SEXP v, R_xlen_t n, int k, const char *what);
SEXP km_result_list(R_xlen_t n, int k, const double *w, const int *cluster, const int *size,
                    const double *dist, const km_result *r, const double *start_obj,
                    int nstart, double totss, SEXP extra, const char *extra_name);

/* kmeans_gram.c, kmeans_lloyd.c: the two methods.  res holds cluster,
 * size, dist (n, k, n) and start_obj (nstart) allocated by the caller; the
 * rest is filled in (trace R_alloc'ed). */
int bochner_kmeans_gram(const double *K, R_xlen_t n, int k, const double *w,
                        const int *init, int nstart, int itermax, int hartigan,
                        int seeding, int nthreads, km_result *res, double *sq,
                        double *totss);
int bochner_kmeans_gram_distances_w(int code, const double *par, int npar,
                                    const double *y, R_xlen_t m, const double *x,
                                    R_xlen_t n, int d, const double *w,
                                    const int *cluster, const int *size,
                                    const double *sq, int k, double *out, int nthreads);
int bochner_kmeans_lloyd(const double *Z, R_xlen_t n, int D, int k, const double *w,
                         const int *init, int nstart, int itermax, int hartigan,
                         int seeding, int nthreads, km_result *res, double *centres,
                         double *totss);

/* One Lloyd step on a block of rows (kmeans_blocks.c): nearest centres and
 * distances, per-cluster weighted sums, weights and sums of ||z||^2, column
 * sums, total ||z||^2, the nf farthest rows (0-based). */
int bochner_kmeans_hartigan_block(const double *Z, R_xlen_t m, int D, int k, int *cl,
                                  double *sums, double *counts, double *last, double base,
                                  double window, int nth, int *moves, double *bsums,
                                  double *bs2);
const double *bochner_kmeans_centre_distances_norms(const double *Z, R_xlen_t m, int D,
                                                   const double *C, int k, double *out,
                                                   int nthreads);
void bochner_kmeans_point_distances(const double *Z, R_xlen_t m, int D, const double *v,
                                    double *out, int nthreads);
int bochner_kmeans_pp_block(const double *Z, R_xlen_t m, int D, const double *S, int ns,
                            const double *T, int nt, const double *w, const double *targets,
                            int ntg, int nthreads, double *total, double *pot,
                            R_xlen_t *pick, R_xlen_t *last);
int bochner_kmeans_block(const double *Z, R_xlen_t m, int D, const double *C, int k,
                         const double *w, const double *own, int nf, int nth, int *cl,
                         double *di, double *su, double *co, double *s2, double *zs,
                         double *zz, int *far, double *fard);

#endif
