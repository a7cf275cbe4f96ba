/* Kernel k-means: the driver both methods share.
 *
 * Kernel k-means++ seeding, then assignment and update until no point moves
 * or iter.max, empty clusters re-seeded from the point farthest from its
 * centre, nstart restarts keeping the lowest objective.  The methods differ
 * in how they represent centres, behind the km_problem interface (kmeans.h):
 *
 *   exact  kmeans_gram.c: the centre of cluster c is the mean of phi(x_j),
 *          j in c, known through sums of the Gram matrix.
 *   rff    kmeans_lloyd.c: explicit centroids of an n x D feature matrix.
 *
 * Randomness: unif_rand() only, drawn serially (first seed uniform, the
 * others proportional to the squared distance to the nearest seed), so
 * set.seed() reproduces a fit, whatever the number of threads.  Ties go to
 * the lowest cluster index. */
#include "kmeans.h"
#include <math.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* The driver                                                                */

/* The first index at which the running sum of the positive w exceeds
 * target, or -1 when it never does (then *last: the last positive index,
 * -1 if none).  *cum: the running sum at the end of the scan. */
R_xlen_t km_locate(const double *w, R_xlen_t n, double target, R_xlen_t *last, double *cum)
{
    double s = 0.0;
    *last = -1;
    for (R_xlen_t i = 0; i < n; i++) {
        if (w[i] > 0.0) {
            s += w[i];
            *last = i;
            if (s > target) {
                *cum = s;
                return i;
            }
        }
    }
    *cum = s;
    return -1;
}

/* Index drawn with probability proportional to w (w >= 0, total > 0). */
static R_xlen_t draw_proportional(const double *w, R_xlen_t n, double total)
{
    R_xlen_t last;
    double cum;
    R_xlen_t i = km_locate(w, n, unif_rand() * total, &last, &cum);
    if (i >= 0) return i;
    return last > 0 ? last : 0;   /* only reachable through rounding */
}

static R_xlen_t draw_uniform(R_xlen_t n)
{
    R_xlen_t i = (R_xlen_t) floor((double) n * unif_rand());
    return i < n ? i : n - 1;
}

/* The first point of a seeding: uniform, or proportional to the weights. */
static R_xlen_t draw_first(const double *w, R_xlen_t n)
{
    return w ? draw_proportional(w, n, km_sum(w, n)) : draw_uniform(n);
}

/* Squared distances of all m points of a seeding to its point s, into out. */
typedef void (*km_dist_fn)(void *ctx, R_xlen_t s, double *out);

/* Weighted kernel k-means++, the one seeding routine: the first point drawn
 * in proportion to the weights w (uniform without), each next one the best
 * of 2 + floor(log k) draws in proportion to w_i d_i^2 (d_i the squared
 * distance to the nearest point chosen), best meaning the lowest
 * sum_i w_i d_i^2 after it (greedy k-means++, as in scikit-learn: a single
 * draw per centre leaves clusters split or merged far more often); uniform
 * draws when every point coincides with a chosen one.  chosen (k) receives
 * the points, a (m) the rank of each point's nearest chosen point (ties to
 * the earlier) and mind (m) its squared distance; tmp: m scratch.  Used on
 * the points of a fit (seed_plus_plus) and on the weighted candidates of
 * k-means|| (seed_parallel). */
static void km_plus_plus(R_xlen_t m, int k, const double *w, km_dist_fn dist, void *ctx,
                         R_xlen_t *chosen, int *a, double *mind, double *tmp)
{
    const void *vmax = vmaxget();
    double *wd = (double *) R_alloc((size_t) m, sizeof(double));
    double *best = (double *) R_alloc((size_t) m, sizeof(double));
    int trials = 2 + (int) floor(log((double) k));
    for (int c = 0; c < k; c++) {
        R_xlen_t s = 0;
        if (c == 0) {
            s = draw_first(w, m);
            dist(ctx, s, best);
        } else {
            double total = 0.0;
            for (R_xlen_t i = 0; i < m; i++) {
                wd[i] = km_w(w, i) * mind[i];
                total += wd[i];
            }
            double best_pot = R_PosInf;
            for (int t = 0; t < trials; t++) {
                R_xlen_t cand = total > 0.0 ? draw_proportional(wd, m, total) : draw_uniform(m);
                dist(ctx, cand, tmp);
                double pot = 0.0;
                for (R_xlen_t i = 0; i < m; i++)
                    pot += km_w(w, i) * (tmp[i] < mind[i] ? tmp[i] : mind[i]);
                if (pot < best_pot) {
                    best_pot = pot;
                    s = cand;
                    memcpy(best, tmp, sizeof(double) * (size_t) m);
                }
            }
        }
        chosen[c] = s;
        for (R_xlen_t i = 0; i < m; i++) {
            if (c == 0 || best[i] < mind[i]) {
                mind[i] = best[i];
                a[i] = c;
            }
        }
        R_CheckUserInterrupt();
    }
    vmaxset(vmax);
}

static void problem_dist(void *ctx, R_xlen_t s, double *out)
{
    km_problem *p = (km_problem *) ctx;
    p->point_dist(p, s, out);
}

/* k-means++ on the points of the problem; every point joins its nearest
 * seed. */
static void seed_plus_plus(km_problem *p, int *a, double *mind, double *tmp)
{
    R_xlen_t *chosen = (R_xlen_t *) R_alloc((size_t) p->k, sizeof(R_xlen_t));
    km_plus_plus(p->n, p->k, p->w, problem_dist, p, chosen, a, mind, tmp);
}

/* The candidates of k-means|| as the points of a seeding. */
typedef struct {
    km_problem *p;
    const R_xlen_t *cand;
    R_xlen_t m;
} km_candidates;

static void candidate_dist(void *ctx, R_xlen_t s, double *out)
{
    const km_candidates *c = (const km_candidates *) ctx;
    for (R_xlen_t j = 0; j < c->m; j++) out[j] = c->p->pair_dist(c->p, c->cand[j], c->cand[s]);
}

/* k-means|| (Bahmani, Moseley, Vattani, Kumar & Vassilvitskii, 2012): a
 * uniform first candidate, then KM_PAR_ROUNDS rounds that each take every
 * point independently with probability min(1, l d(x)^2 / psi), l = 2k,
 * psi = sum_x d(x)^2, d the distance to the nearest candidate, the new
 * candidates' distances found in one pass over the points; then k-means++
 * on the candidates weighted by the points nearest to them, and every point
 * joins its nearest chosen candidate.  The draws are serial unif_rand()
 * calls (one per point per round), the passes per point, so the seeds do
 * not depend on the threads.  The weighted candidates are seeded by
 * km_plus_plus, the greedy k-means++ of the fit.  With at most k
 * candidates (few distinct points), plain k-means++. */
#define KM_PAR_ROUNDS 5

static void seed_parallel(km_problem *p, int *a, double *mind, double *tmp)
{
    R_xlen_t n = p->n, cap = 16 * (R_xlen_t) p->k + 16, ncand = 0;
    int k = p->k;
    double ell = 2.0 * (double) k;
    R_xlen_t *cand = (R_xlen_t *) R_alloc((size_t) cap, sizeof(R_xlen_t));
    for (R_xlen_t i = 0; i < n; i++) {
        mind[i] = R_PosInf;
        a[i] = -1;
    }
    const double *wt = p->w;
    cand[ncand++] = draw_first(wt, n);
    p->nearest(p, cand, 1, 0, mind, a);
    for (int round = 0; round < KM_PAR_ROUNDS; round++) {
        double psi = 0.0;   /* sum_i w_i d_i^2 */
        for (R_xlen_t i = 0; i < n; i++) psi += km_w(wt, i) * mind[i];
        if (!(psi > 0.0)) break;
        R_xlen_t first = ncand;
        for (R_xlen_t i = 0; i < n; i++) {
            if (unif_rand() * psi < ell * km_w(wt, i) * mind[i]) {
                if (ncand == cap) {
                    R_xlen_t grown = 2 * cap;
                    R_xlen_t *c2 = (R_xlen_t *) R_alloc((size_t) grown, sizeof(R_xlen_t));
                    memcpy(c2, cand, sizeof(R_xlen_t) * (size_t) cap);
                    cand = c2;
                    cap = grown;
                }
                cand[ncand++] = i;
            }
        }
        if (ncand > first) p->nearest(p, cand + first, ncand - first, first, mind, a);
        R_CheckUserInterrupt();
    }
    if (ncand <= k) {
        seed_plus_plus(p, a, mind, tmp);
        return;
    }
    /* candidates weighted by the number of points nearest to them, seeded
     * by the weighted k-means++ of the fit */
    double *w = (double *) R_alloc((size_t) ncand, sizeof(double));
    for (R_xlen_t c = 0; c < ncand; c++) w[c] = 0.0;
    for (R_xlen_t i = 0; i < n; i++) w[a[i]] += km_w(wt, i);
    R_xlen_t *pick = (R_xlen_t *) R_alloc((size_t) k, sizeof(R_xlen_t));
    R_xlen_t *chosen = (R_xlen_t *) R_alloc((size_t) k, sizeof(R_xlen_t));
    int *ca = (int *) R_alloc((size_t) ncand, sizeof(int));
    double *cd = (double *) R_alloc((size_t) ncand, sizeof(double));
    double *ct = (double *) R_alloc((size_t) ncand, sizeof(double));
    km_candidates cc = {p, cand, ncand};
    km_plus_plus(ncand, k, w, candidate_dist, &cc, pick, ca, cd, ct);
    for (int r = 0; r < k; r++) chosen[r] = cand[pick[r]];
    for (R_xlen_t i = 0; i < n; i++) mind[i] = R_PosInf;
    p->nearest(p, chosen, k, 0, mind, a);
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

double km_sum(const double *x, R_xlen_t n)
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
                   int *converged, int *reseeded, int *ntrace, int *moves, double *checks)
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
    /* Hartigan-Wong passes from Lloyd's partition, whose centres the problem
     * holds.  Every move lowers the objective, and a partition no move
     * improves is also one Lloyd leaves alone, so nothing follows them. */
    int passes = 0;
    *moves = 0;
    p->hw_pass = 0;
    p->hw_checks = 0.0;
    if (p->hartigan) {
        double obj;
        while (passes < itermax) {
            int mv = p->hartigan_pass(p, a, size, &obj);
            if (mv == 0) break;
            *moves += mv;
            passes++;
            trace_put(trace, t + passes, obj);
            R_CheckUserInterrupt();
        }
        /* recompute the centres from scratch: no drift from the updates */
        if (passes > 0) trace->v[t + passes] = p->refresh(p, a, NULL, size);
    }
    *ntrace = t + passes + 1;
    *checks = p->hw_checks;
}

/* nstart runs (from init if given, else k-means++), keeping the lowest
 * final objective (the first on ties); on return the problem's centres are
 * those of the best run. */
int km_fit(km_problem *p, const int *init, int nstart, int itermax, km_result *res)
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
        int iter, conv, reseeded, ntrace, moves;
        double checks;
        if (init) memcpy(a, init, sizeof(int) * (size_t) n);
        else if (p->seeding) seed_parallel(p, a, dist, bdist);
        else seed_plus_plus(p, a, dist, bdist);
        km_run(p, a, b, size, dist, bdist, itermax, &trace, &iter, &conv, &reseeded,
               &ntrace, &moves, &checks);
        double obj = trace.v[ntrace - 1];
        res->start_obj[r] = obj;
        if (best_run < 0 || obj < best) {
            best = obj;
            best_run = r;
            memcpy(res->cluster, a, sizeof(int) * (size_t) n);
            memcpy(res->size, size, sizeof(int) * (size_t) k);
            res->trace = (double *) R_alloc((size_t) ntrace, sizeof(double));
            memcpy(res->trace, trace.v, sizeof(double) * (size_t) ntrace);
            res->ntrace = ntrace;
            res->moves = moves;
            res->checks = checks;
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
/* Kernel k-means++ on the rows of x, without a Gram matrix (Nystrom
 * landmarks): km_plus_plus with the feature-space distances
 * K_ii - 2 K(x_i, x_s) + K_ss computed a column at a time. */

typedef struct {
    int code, npar, d, nthreads, status;
    const double *par, *x, *diag;
    R_xlen_t n;
    double *row;       /* d: the row x_s */
} km_kernel_points;

static void kernel_point_dist(void *ctx, R_xlen_t s, double *out)
{
    km_kernel_points *c = (km_kernel_points *) ctx;
    for (int j = 0; j < c->d; j++) c->row[j] = c->x[s + (R_xlen_t) j * c->n];
    int st = bochner_kernel_matrix(c->code, c->par, c->npar, c->x, c->n, c->row, 1, c->d, out,
                                   c->nthreads);
    if (st != BOCHNER_OK) c->status = st;
    for (R_xlen_t i = 0; i < c->n; i++) out[i] = km_clamp0(c->diag[i] - 2.0 * out[i] + c->diag[s]);
}

int bochner_kmeans_pp_kernel(int code, const double *par, int npar, const double *x,
                             R_xlen_t n, int d, const double *diag, int m, int nthreads,
                             int *chosen)
{
    if (n < 1 || d < 1 || m < 1 || m > n) return BOCHNER_BAD_ARGUMENT;
    km_kernel_points c = {code, npar, d, nthreads, BOCHNER_OK, par, x, diag, n,
                          (double *) R_alloc((size_t) d, sizeof(double))};
    R_xlen_t *pick = (R_xlen_t *) R_alloc((size_t) m, sizeof(R_xlen_t));
    int *a = (int *) R_alloc((size_t) n, sizeof(int));
    double *mind = (double *) R_alloc((size_t) n, sizeof(double));
    double *tmp = (double *) R_alloc((size_t) n, sizeof(double));
    km_plus_plus(n, m, NULL, kernel_point_dist, &c, pick, a, mind, tmp);
    for (int j = 0; j < m; j++) chosen[j] = (int) pick[j];
    return c.status;
}
