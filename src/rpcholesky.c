/* Randomly pivoted Cholesky (Chen, Epperly, Tropp and Webber, "Randomly
 * pivoted Cholesky: practical approximation of a kernel matrix with few
 * entry evaluations", CPAM 2025): Nystrom landmarks chosen one at a time,
 * each in proportion to the diagonal of the residual K - F F' of the
 * landmarks so far.  It evaluates k + 1 columns' worth of kernel entries
 * (the diagonal and one column per pivot) and does O(n k^2) work, and its
 * Nystrom approximation's expected trace error is within a factor of the
 * best rank-k one's; uniform landmarks ignore where the residual lies.
 *
 *   bochner_rpcholesky       the pivots, the factor F (n x k) and the
 *                            residual trace after each pivot
 *   rpcholesky_call          its .Call wrapper (draws from R's generator)
 *
 * Each pivot is drawn serially from R's generator (set.seed() reproduces
 * the pivots) by a cumulative sum in double in row order, as the plain-R
 * reference in the tests does; the column update runs on the package's one
 * parallel loop, each row's sum in the same order whatever the threads. */
#include "bochner.h"
#include <string.h>

/* g = g - F[, 0:i) f, f = F[s, 0:i), over a block of rows. */
typedef struct {
    const double *F, *f;
    double *g;
    R_xlen_t n;
    int i;
} rpc_update_job;

#define RPC_ROWS 2048

static void rpc_update_block(void *ctx, R_xlen_t blk, int thread)
{
    (void) thread;
    const rpc_update_job *p = (const rpc_update_job *) ctx;
    R_xlen_t r0 = blk * RPC_ROWS, r1 = r0 + RPC_ROWS < p->n ? r0 + RPC_ROWS : p->n;
    for (int t = 0; t < p->i; t++) {
        const double *Ft = p->F + (R_xlen_t) t * p->n;
        double ft = p->f[t];
        for (R_xlen_t j = r0; j < r1; j++) p->g[j] -= Ft[j] * ft;
    }
}

/* The pivot: the first row whose cumulative residual diagonal (in double,
 * in row order) exceeds u times the total; a row of zero residual is never
 * drawn.  -1 when the residual vanishes. */
static R_xlen_t rpc_draw(const double *res, R_xlen_t n, double u)
{
    double total = 0.0;
    for (R_xlen_t j = 0; j < n; j++) total += res[j];
    if (!(total > 0.0)) return -1;
    double target = u * total, acc = 0.0;
    R_xlen_t last = -1;
    for (R_xlen_t j = 0; j < n; j++) {
        if (res[j] <= 0.0) continue;
        acc += res[j];
        last = j;
        if (acc > target) return j;
    }
    return last;   /* rounding: the last row with residual */
}

/* x (n x d, column-major), kernel (code, par), diag its diagonal k(x_j, x_j);
 * k pivots.  chosen (k): the pivots (0-based), F (n x k): the factor,
 * trace (k): the residual trace after each pivot.  Returns the number of
 * pivots taken (fewer than k when the residual vanishes first) or a
 * negative status. */
int bochner_rpcholesky(int code, const double *par, int npar, const double *x, R_xlen_t n,
                       int d, const double *diag, int k, int nthreads, int *chosen, double *F,
                       double *trace)
{
    if (n < 1 || d < 1 || k < 1 || k > n) return -BOCHNER_BAD_ARGUMENT;
    double *res = (double *) R_alloc((size_t) n, sizeof(double));
    double *row = (double *) R_alloc((size_t) d, sizeof(double));
    double *f = (double *) R_alloc((size_t) k, sizeof(double));
    for (R_xlen_t j = 0; j < n; j++) res[j] = diag[j] > 0.0 ? diag[j] : 0.0;
    for (int i = 0; i < k; i++) {
        R_xlen_t s = rpc_draw(res, n, unif_rand());
        if (s < 0) return i;
        double *g = F + (R_xlen_t) i * n;
        for (int j = 0; j < d; j++) row[j] = x[s + (R_xlen_t) j * n];
        int st = bochner_kernel_matrix(code, par, npar, x, n, row, 1, d, g, nthreads);
        if (st != BOCHNER_OK) return -st;
        for (int t = 0; t < i; t++) f[t] = F[s + (R_xlen_t) t * n];
        rpc_update_job job = {F, f, g, n, i};
        bochner_parallel_blocks((n + RPC_ROWS - 1) / RPC_ROWS,
                                bochner_threads_for(nthreads, (double) n * i), 64,
                                rpc_update_block, &job);
        double piv = g[s];
        if (!(piv > 0.0)) {          /* the pivot's residual was rounding only */
            res[s] = 0.0;
            i--;
            continue;
        }
        double scale = 1.0 / sqrt(piv), tr = 0.0;
        for (R_xlen_t j = 0; j < n; j++) {
            g[j] *= scale;
            double r = res[j] - g[j] * g[j];
            res[j] = r > 0.0 ? r : 0.0;
            tr += res[j];
        }
        res[s] = 0.0;
        chosen[i] = (int) s;
        trace[i] = tr;
    }
    return k;
}

/* x: n x d double matrix; code, par: the kernel (as for kernel_matrix);
 * diag: k(x_j, x_j); k: how many pivots.  Returns list(index = the pivots,
 * 1-based, in the order chosen; trace = the residual trace after each;
 * F = the n x taken factor). */
SEXP bochner_rpcholesky_call(SEXP x, SEXP code, SEXP par, SEXP diag, SEXP k, SEXP nthreads)
{
    int kk = bochner_landmark_args(x, par, diag, k, "k");
    R_xlen_t n = nrows(x);
    int d = ncols(x);
    SEXP Fm = PROTECT(bochner_alloc_output(n, kk));
    int *chosen = (int *) R_alloc((size_t) kk, sizeof(int));
    double *trace = (double *) R_alloc((size_t) kk, sizeof(double));
    GetRNGstate();
    int taken = bochner_rpcholesky(asInteger(code), REAL(par), LENGTH(par), REAL(x), n, d,
                                   REAL(diag), kk, bochner_nthreads(asInteger(nthreads)),
                                   chosen, REAL(Fm), trace);
    PutRNGstate();
    if (taken < 0) bochner_stop_on_status(-taken, "randomly pivoted Cholesky");
    SEXP idx = PROTECT(allocVector(INTSXP, taken));
    SEXP tr = PROTECT(allocVector(REALSXP, taken));
    for (int i = 0; i < taken; i++) {
        INTEGER(idx)[i] = chosen[i] + 1;
        REAL(tr)[i] = trace[i];
    }
    if (taken < kk) {
        /* the residual vanished first: the factor's first 'taken' columns */
        SEXP short_f = PROTECT(allocMatrix(REALSXP, (int) n, taken));
        if (taken > 0) memcpy(REAL(short_f), REAL(Fm), sizeof(double) * (size_t) n * taken);
        Fm = short_f;
    } else {
        PROTECT(Fm);
    }
    const char *names[] = {"index", "trace", "F", ""};
    SEXP out = PROTECT(mkNamed(VECSXP, names));
    SET_VECTOR_ELT(out, 0, idx);
    SET_VECTOR_ELT(out, 1, tr);
    SET_VECTOR_ELT(out, 2, Fm);
    UNPROTECT(5);
    return out;
}
