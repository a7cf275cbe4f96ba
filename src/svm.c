/* Linear SVMs in the primal on random features: dual coordinate descent for
 * L2-regularised L1-loss (hinge) and L2-loss (squared hinge) SVMs, the
 * method of Hsieh, Chang, Lin, Keerthi and Sundararajan (2008) that LIBLINEAR
 * implements (solve_l2r_l1l2_svc), with its shrinking and its stopping rule.
 *
 * For labels y_i = +-1 and feature vectors x_i augmented with a constant B
 * (the bias feature, regularised like the other weights, as LIBLINEAR's
 * -B 1), the primal is
 *     min_w  1/2 w.w + sum_i C_i xi(w; x_i, y_i),
 *     xi = max(0, 1 - y_i w.x_i)       (hinge, loss = 1)
 *     xi = max(0, 1 - y_i w.x_i)^2     (squared hinge, loss = 2)
 * and the dual
 *     min_a  1/2 a' Qbar a - e'a,  0 <= a_i <= U_i,
 *     Qbar = Q + Dg, Q_ij = y_i y_j x_i.x_j,
 * with U_i = C_i, Dg_ii = 0 (hinge) or U_i = Inf, Dg_ii = 1/(2 C_i) (squared
 * hinge).  Coordinate descent keeps w = sum_i y_i a_i x_i, so each step costs
 * two passes over one sample's features: G = y_i w.x_i - 1 + Dg_ii a_i, then
 * a_i <- min(max(a_i - G / Qbar_ii, 0), U_i) and w += (a_i - a_old) y_i x_i.
 *
 * The features arrive transposed, D x n (one sample per column), so that a
 * sample's features are contiguous.  Coordinates are visited in a random
 * order each epoch, from a generator seeded from R's (set.seed()
 * reproduces the fit).  A call solves any number of binary problems, each
 * on a subset of the samples (one-vs-one pairs, one-vs-rest, and the folds
 * of a cross-validation), in parallel, each on one thread.
 * Shrinking drops coordinates at a bound whose projected gradient says they
 * will stay there; the solver stops when the spread of projected gradients
 * over the active set, max PG - min PG, is at most eps over the full set.
 * Each problem is serial and in a fixed order, so the result does not
 * depend on the thread count.  For the squared hinge in memory, a problem
 * the dual has not solved in SVM_DUAL_PASSES passes (large costs) goes on
 * with Newton's method on the primal (svm_newton.c) from its weights. */
#include "bochner.h"
#include <math.h>
#include <limits.h>
#include <R_ext/Random.h>
#include <stdint.h>

/* sum_j a[j] b[j] in a fixed order (svm_newton.c). */
#define svm_dot bochner_svm_dot

static void svm_axpy(double *y, double a, const double *x, int D)
{
    for (int j = 0; j < D; j++) y[j] += a * x[j];
}

/* The order of the coordinates in each pass comes from a small generator
 * (splitmix64) of each binary problem's own, seeded from R's generator
 * before the problems start: set.seed() reproduces a fit, and the problems
 * of one-vs-rest can run on several threads (no R API there) with the same
 * result for any thread count. */
static inline uint64_t svm_rng_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Uniform integer in [0, m), m >= 1. */
static R_xlen_t svm_unif_index(uint64_t *state, R_xlen_t m)
{
    double u = (double) (svm_rng_next(state) >> 11) * 0x1.0p-53;
    R_xlen_t r = (R_xlen_t) (u * (double) m);
    return r < m ? r : m - 1;
}

/* A 64-bit seed from two draws of R's generator (unif_rand has 32 random
 * bits). */
static uint64_t svm_seed_from_r(void)
{
    uint64_t hi = (uint64_t) (unif_rand() * 4294967296.0);
    uint64_t lo = (uint64_t) (unif_rand() * 4294967296.0);
    return (hi << 32) ^ lo;
}

/* One binary problem on a subset of the samples (one-vs-one pairs, or the
 * folds of a cross-validation, share one feature matrix), solved a few
 * passes at a time (svm_passes), so that the caller can check for
 * interrupts between calls.  Local sample s is column rows[s] of zt, with
 * label sign[s] and cost C_s (class weight times case weight times cost). */
typedef struct {
    bochner_svm_samples s;
    int loss;
    double B, eps;
    int max_iter, shrink;
    double *w, *alpha, *qd;
    R_xlen_t *index;
    R_xlen_t active;
    double pgmax_old, pgmin_old;
    int iter, converged, done;
    uint64_t rng;
    double sigma;   /* CoCoA+'s sigma': 1 for the in-memory problem */
    double *dw;     /* NULL, or the change of the weights, sum of d_i y_i x_i,
                     * set from (w - w0) / sigma after the passes */
    const double *w0; /* NULL, or the starting weights (CoCoA+'s local problem) */
    bochner_svm_newton_problem *nt; /* NULL, or the primal Newton solver (the
                                     * in-memory squared hinge) in place of
                                     * the coordinate descent */
    double *nt_scratch;
    int nt_on, nt_base; /* Newton has taken over (after nt_base passes) */
} svm_problem;

/* The dual's diagonal shift and upper bound for a sample of cost c. */
static inline double svm_diag(const svm_problem *p, double c)
{
    return p->loss == 1 ? 0.0 : 0.5 / c;
}

static inline double svm_ub(const svm_problem *p, double c)
{
    return p->loss == 1 ? c : R_PosInf;
}

/* zt: D x N features (column i is sample i); rows: the n samples of this
 * problem (0-based columns of zt); sign: +1 or -1 and cost: C_s > 0 per
 * sample; loss: 1 hinge, 2 squared hinge; B: the bias feature (0 for none);
 * w: D + 1 weights out (the last multiplies B); alpha: n dual variables
 * out; index, qd: n scratch; norms: NULL, or ||z_j||^2 for every column j
 * of zt (the caller keeps them between calls).
 * Warm start (CoCoA+'s local subproblem, Ma et al. 2015): with 'warm' the
 * entries of w and alpha are the starting values, not zeroed; w is then the
 * local view w0 + sigma * dw of the weights, every step moves it by sigma
 * times the step (dw, D + 1, zeroed here, is (w - w0) / sigma once the
 * caller's passes are done), and the curvature of coordinate i is sigma ||x_i||^2 + Dg_ii.  sigma = 1 with
 * alpha = 0, w = 0 is the in-memory problem, step for step. */
static int svm_init(svm_problem *p, const double *zt, const int *rows, R_xlen_t n, int D,
                    const int *sign, const double *cost, int loss, double B,
                    double eps, int max_iter, int shrink, double *w, double *alpha,
                    R_xlen_t *index, double *qd, uint64_t seed, int warm, double sigma,
                    double *dw, const double *norms)
{
    if (n < 1 || D < 1 || (loss != 1 && loss != 2) || !(B >= 0.0) || !(eps > 0.0) ||
        max_iter < 1 || !(sigma >= 1.0) || !R_FINITE(sigma))
        return BOCHNER_BAD_ARGUMENT;
    p->s.zt = zt;
    p->s.rows = rows;
    p->s.n = n;
    p->s.D = D;
    p->s.sign = sign;
    p->s.cost = cost;
    p->loss = loss;
    p->B = B;
    p->eps = eps;
    p->max_iter = max_iter;
    p->shrink = shrink;
    p->w = w;
    p->alpha = alpha;
    p->index = index;
    p->qd = qd;
    p->sigma = sigma;
    p->dw = dw;
    p->w0 = NULL;
    p->nt = NULL;
    p->nt_scratch = NULL;
    p->nt_on = p->nt_base = 0;
    if (!warm) for (int j = 0; j <= D; j++) w[j] = 0.0;
    if (dw) for (int j = 0; j <= D; j++) dw[j] = 0.0;
    for (R_xlen_t i = 0; i < n; i++) {
        const double *xi = zt + (R_xlen_t) rows[i] * D;
        if (!warm) alpha[i] = 0.0;
        else if (!(alpha[i] >= 0.0) || alpha[i] > svm_ub(p, cost[i])) return BOCHNER_BAD_ARGUMENT;
        double xx = norms ? norms[rows[i]] : svm_dot(xi, xi, D);
        qd[i] = svm_diag(p, cost[i]) + sigma * (xx + B * B);
        index[i] = i;
    }
    p->active = n;
    p->pgmax_old = R_PosInf;
    p->pgmin_old = R_NegInf;
    p->iter = p->converged = p->done = 0;
    p->rng = seed;
    return BOCHNER_OK;
}

/* Up to 'passes' more passes (epochs) of coordinate descent; done is set
 * when the tolerance is met or max_iter passes have been made.  Pure C. */
static void svm_passes(svm_problem *p, int passes)
{
    const double *zt = p->s.zt;
    const int D = p->s.D;
    const R_xlen_t n = p->s.n;
    double *w = p->w, *alpha = p->alpha, B = p->B;
    R_xlen_t *index = p->index;
    if (p->nt_on) {
        /* a Newton step in place of each pass (it costs several) */
        for (int e = 0; e < passes && !p->done; e++) {
            bochner_svm_newton_step(p->nt, w, p->nt_scratch);
            p->iter = p->nt_base + p->nt->iter;
            p->converged = p->nt->converged;
            p->done = p->nt->done;
        }
        return;
    }
    for (int e = 0; e < passes && !p->done; e++) {
        double pgmax_new = R_NegInf, pgmin_new = R_PosInf;
        R_xlen_t active = p->active;
        for (R_xlen_t s = 0; s < active; s++) {
            R_xlen_t j = s + svm_unif_index(&p->rng, active - s);
            R_xlen_t t = index[s];
            index[s] = index[j];
            index[j] = t;
        }
        for (R_xlen_t s = 0; s < active; s++) {
            R_xlen_t i = index[s];
            const double *xi = zt + (R_xlen_t) p->s.rows[i] * D;
            double yi = p->s.sign[i] > 0 ? 1.0 : -1.0;
            double G = yi * (svm_dot(w, xi, D) + w[D] * B) - 1.0 +
                       alpha[i] * svm_diag(p, p->s.cost[i]);
            double C = svm_ub(p, p->s.cost[i]), PG = 0.0;
            if (alpha[i] == 0.0) {
                if (p->shrink && G > p->pgmax_old) {
                    active--;
                    index[s] = index[active];
                    index[active] = i;
                    s--;
                    continue;
                }
                if (G < 0.0) PG = G;
            } else if (alpha[i] == C) {
                if (p->shrink && G < p->pgmin_old) {
                    active--;
                    index[s] = index[active];
                    index[active] = i;
                    s--;
                    continue;
                }
                if (G > 0.0) PG = G;
            } else {
                PG = G;
            }
            if (PG > pgmax_new) pgmax_new = PG;
            if (PG < pgmin_new) pgmin_new = PG;
            if (fabs(PG) > 1.0e-12) {
                double old = alpha[i], a = old - G / p->qd[i];
                if (a < 0.0) a = 0.0;
                if (a > C) a = C;
                alpha[i] = a;
                double d = (a - old) * yi;
                /* the local view moves by sigma times the step; the change
                 * of the weights, (w - w0) / sigma, is taken at the end (one
                 * vector operation per step fewer) */
                if (p->dw) d *= p->sigma;
                svm_axpy(w, d, xi, D);
                w[D] += d * B;
            }
        }
        p->iter++;
        if (active == 0) {
            /* everything shrunk: check the full set */
            p->active = n;
            p->pgmax_old = R_PosInf;
            p->pgmin_old = R_NegInf;
        } else if (pgmax_new - pgmin_new <= p->eps) {
            if (active == n) {
                p->converged = 1;
                p->done = 1;
                break;
            }
            p->active = n;
            p->pgmax_old = R_PosInf;
            p->pgmin_old = R_NegInf;
        } else {
            p->active = active;
            p->pgmax_old = pgmax_new <= 0.0 ? R_PosInf : pgmax_new;
            p->pgmin_old = pgmin_new >= 0.0 ? R_NegInf : pgmin_new;
        }
        if (p->iter >= p->max_iter) {
            if (p->nt) {
                /* the dual has not converged in its passes: Newton on the
                 * primal takes over from its weights */
                p->nt_on = 1;
                p->nt_base = p->iter;
                break;
            }
            p->done = 1;
        }
    }
}

#define SVM_DUAL_PASSES 100

/* The binary problems of one fit, run on threads a few passes at a time. */
typedef struct {
    svm_problem *prob;
    int passes;
} svm_job;

static void svm_block(void *ctx, R_xlen_t c, int thread)
{
    (void) thread;
    const svm_job *j = (const svm_job *) ctx;
    svm_passes(j->prob + c, j->passes);
}

/* Pass rounds over the problems until all are done: every problem not done
 * makes a few passes (about 2^28 multiply-adds per problem), the problems
 * shared among the threads as they come free; interrupts are checked
 * between rounds (by bochner_parallel_blocks). */
static void svm_run(svm_problem *prob, int nprob, double work, int nthreads)
{
    int live = 0;
    for (int c = 0; c < nprob; c++) live += !prob[c].done;
    if (!live) return;
    double pass_work = work / live;
    svm_job job = {prob, pass_work >= 2.68e8 ? 1 : (int) (2.68e8 / pass_work)};
    int nth = bochner_threads_for(nthreads, work);
    for (;;) {
        int left = 0;
        for (int c = 0; c < nprob; c++) left += !prob[c].done;
        if (!left) break;
        bochner_parallel_blocks(nprob, nth, nprob, svm_block, &job);
    }
}

static uint64_t *svm_seeds(int nprob)
{
    uint64_t *seed = (uint64_t *) R_alloc((size_t) nprob, sizeof(uint64_t));
    GetRNGstate();
    for (int c = 0; c < nprob; c++) seed[c] = svm_seed_from_r();
    PutRNGstate();
    return seed;
}

/* ------------------------------------------------------------------------ */
/* The entry points' work (their wrappers, api_svm.c, check the arguments
 * into a bochner_svm_spec and allocate the results). */

/* The in-memory solve: every problem of sp to convergence or max_iter
 * passes; W ((D + 1) x nprob), A (the duals, concatenated like the rows),
 * iter and converged (nprob each) filled. */
void bochner_svm_dcd(const bochner_svm_spec *sp, int max_iter, int nthreads, double *W,
                     double *A, int *iter, int *converged)
{
    int D = sp->D, nprob = sp->nprob, lo = sp->loss, sh = sp->shrink, mi = max_iter;
    R_xlen_t len = sp->len;
    const int *off = sp->off, *rw = sp->rows, *sg = sp->sign;
    const double *cs = sp->cost;
    double B = sp->B, ep = sp->eps;
    int *row0 = (int *) R_alloc((size_t) len, sizeof(int));
    for (R_xlen_t i = 0; i < len; i++) row0[i] = rw[i] - 1;
    R_xlen_t *index = (R_xlen_t *) R_alloc((size_t) len, sizeof(R_xlen_t));
    double *qd = (double *) R_alloc((size_t) len, sizeof(double));
    svm_problem *prob = (svm_problem *) R_alloc((size_t) nprob, sizeof(svm_problem));
    uint64_t *seed = svm_seeds(nprob);
    double work = 0.0;
    for (int c = 0; c < nprob; c++) {
        R_xlen_t o = off[c], nc = off[c + 1] - off[c];
        int status = svm_init(prob + c, sp->zt, row0 + o, nc, D, sg + o, cs + o, lo, B,
                              ep, mi, sh, W + (R_xlen_t) c * (D + 1), A + o,
                              index + o, qd + o, seed[c], 0, 1.0, NULL, NULL);
        bochner_stop_on_status(status, "rff_svm");
        work += 2.0 * (double) nc * (double) D;
        if (lo == 2) {
            /* the squared hinge: at most SVM_DUAL_PASSES passes of the dual
             * (fast at moderate costs), then Newton on the primal, whose
             * steps do not multiply with the cost as the dual's passes do */
            if (mi > SVM_DUAL_PASSES) prob[c].max_iter = SVM_DUAL_PASSES;
            bochner_svm_newton_problem *nt = (bochner_svm_newton_problem *)
                R_alloc(1, sizeof(bochner_svm_newton_problem));
            *nt = (bochner_svm_newton_problem) {prob[c].s, B, 1e-6 * ep, 0.0, 0.0, mi, 0, 0, 0};
            bochner_svm_newton_init(nt);
            prob[c].nt = nt;
            prob[c].nt_scratch = (double *) R_alloc((size_t) (6 * (D + 1)) + 2 * (size_t) nc,
                                                    sizeof(double));
            work += 8.0 * (double) nc * (double) D;
        }
    }
    svm_run(prob, nprob, work, nthreads);
    for (int c = 0; c < nprob; c++) {
        if (prob[c].nt_on) bochner_svm_newton_alpha(prob[c].nt, prob[c].w, prob[c].alpha);
        iter[c] = prob[c].iter;
        converged[c] = prob[c].converged;
    }
}

/* CoCoA+'s local solver (Ma et al. 2015) on one chunk: the problems of sp,
 * on the chunk's samples, started from the weights w ((D + 1) x nprob, the
 * same for every chunk) and the chunk's own duals A (updated in place),
 * with the curvature scaled by sigma (sigma' = the number of chunks makes
 * adding the chunks' updates safe).  At most 'passes' passes per problem
 * (fewer when the local projected gradients spread by at most eps).  V:
 * a copy of w, the local view w + sigma dw; DW its change / sigma.  norms:
 * NULL, or the squared norms of the columns of zt.  Also the chunk's share
 * of the dual objective at the starting duals: AS = sum alpha_i and, for
 * the squared hinge, A2 = sum alpha_i^2 / (4 C_i). */
void bochner_svm_local(const bochner_svm_spec *sp, const double *w, double sigma, int passes,
                       const double *norms, int nthreads, double *V, double *A, double *DW,
                       double *AS, double *A2, int *iter)
{
    int D = sp->D, nprob = sp->nprob;
    R_xlen_t len = sp->len;
    int *row0 = (int *) R_alloc((size_t) len + 1, sizeof(int));
    for (R_xlen_t i = 0; i < len; i++) row0[i] = sp->rows[i] - 1;
    R_xlen_t *index = (R_xlen_t *) R_alloc((size_t) len + 1, sizeof(R_xlen_t));
    double *qd = (double *) R_alloc((size_t) len + 1, sizeof(double));
    svm_problem *prob = (svm_problem *) R_alloc((size_t) nprob, sizeof(svm_problem));
    uint64_t *seed = svm_seeds(nprob);
    double work = 0.0;
    for (int c = 0; c < nprob; c++) {
        R_xlen_t o = sp->off[c], nc = sp->off[c + 1] - sp->off[c];
        double *wc = V + (R_xlen_t) c * (D + 1), *dwc = DW + (R_xlen_t) c * (D + 1);
        double *ac = A + o, as = 0.0, a2 = 0.0;
        for (R_xlen_t i = 0; i < nc; i++) {
            as += ac[i];
            if (sp->loss == 2) a2 += ac[i] * ac[i] / (4.0 * sp->cost[o + i]);
        }
        AS[c] = as;
        A2[c] = a2;
        if (nc == 0) {
            for (int j = 0; j <= D; j++) dwc[j] = 0.0;
            prob[c].done = 1;
            prob[c].iter = 0;
            continue;
        }
        int status = svm_init(prob + c, sp->zt, row0 + o, nc, D, sp->sign + o, sp->cost + o,
                              sp->loss, sp->B, sp->eps, passes, sp->shrink, wc, ac, index + o,
                              qd + o, seed[c], 1, sigma, dwc, norms);
        if (status != BOCHNER_OK) error("'alpha' must lie between 0 and the bound of its sample");
        prob[c].w0 = w + (R_xlen_t) c * (D + 1);
        work += 2.0 * (double) nc * (double) D;
    }
    svm_run(prob, nprob, work, nthreads);
    for (int c = 0; c < nprob; c++) {
        iter[c] = prob[c].iter;
        if (sp->off[c + 1] == sp->off[c]) continue;
        const double *wc = V + (R_xlen_t) c * (D + 1), *w0 = prob[c].w0;
        double *dwc = DW + (R_xlen_t) c * (D + 1);
        for (int j = 0; j <= D; j++) dwc[j] = (wc[j] - w0[j]) / sigma;
    }
}
