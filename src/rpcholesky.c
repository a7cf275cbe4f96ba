/* Randomly pivoted Cholesky (Chen, Epperly, Tropp & Webber, "Randomly pivoted
 * Cholesky: practical approximation of a kernel matrix with few entry
 * evaluations", CPAM 2025): Nystrom landmarks chosen where the approximation
 * is worst, in its block form with rejection sampling (Epperly, Tropp & Webber,
 * "Embrace rejection: kernel matrix approximation by accelerated randomly
 * pivoted Cholesky", 2024).
 *
 *   bochner_rpcholesky       the pivots and the residual trace (pure C)
 *   bochner_rpcholesky_call  its .Call wrapper, in the last section
 *
 * The residual diagonal r_i = K_ii - |F_i|^2 of the partial Cholesky factor F
 * (n x k) starts at diag(K).  Sequentially, each pivot s is drawn with
 * probability r_s / sum(r); its kernel column minus F F_s', scaled by
 * 1/sqrt(its s-th entry), becomes F's next column, and r drops by its squares.
 * k pivots cost (k + 1) n kernel entries and O(k^2 n) arithmetic, and sum(r)
 * is then exactly trace(K - K_hat), whose expectation is within a small factor
 * of the best rank-k approximation's.
 *
 * The block form draws b candidates at once from r, forms their b x b
 * residual block G = K_SS - F_S F_S', and accepts candidate a when
 * u_a r_{s_a} < G_aa, G then replaced by its Schur complement on a.  The
 * accepted pivots have the law of the sequential algorithm, and are folded
 * into F together: one pass over F per block instead of one per pivot, which
 * is why it is about 13 times faster (2.3 s against 30 s for m = 1000 of
 * n = 20000, bench/investigations/rpcholesky.md).  block = 1 is the plain
 * sequential algorithm (no rejection step, no rejection uniforms).
 *
 * Randomness: unif_rand() only, drawn serially in a fixed order (the b
 * candidates of a round, then one uniform per candidate examined), so
 * set.seed() reproduces the pivots whatever the thread count; every row's
 * fold sums in the same order whatever the threads.  Draws invert the running
 * sum of r, accumulated in long double as R's cumsum() does, so that a
 * plain-R reference (tests/testthat/test-rpcholesky.R) reproduces them.
 *
 * Residuals at most 64 eps max(diag K) are rounding noise (the rank is
 * exhausted: duplicated rows, a finite-rank kernel) and are set to 0; when all
 * are (or 20 rounds of the block form in a row accept nothing), the routine
 * stops early and returns the pivots it has.  Memory: R_alloc, and the caller's
 * factor and residual (which a continued run starts from). */
#include "bochner.h"
#include <float.h>
#include <math.h>
#include <string.h>

#define RPC_ROWS 256          /* rows per parallel block */
#define RPC_EMPTY_ROUNDS 20   /* consecutive rounds with no pivot accepted: stop */

typedef struct {
    R_xlen_t n;
    int k, nf, t;               /* F's capacity (columns), columns filled, new columns */
    double *F;                  /* n x k, row-major: row r at F + r k */
    const double *H;            /* n x t: k(X, x_T) */
    const double *FT;           /* t x nf, row-major: F's rows of the new pivots */
    const double *L;            /* t x t lower Cholesky factor, column-major */
    const int *live;            /* t: 1 where L's diagonal is positive */
    double *r, zero;
    double *scratch;            /* RPC_ROWS x t per thread: F_rows F_T' */
} rpc_fold;

/* F_r's new columns: L^-1 (H_r - F_T F_r'), and r_r lowered by their squares.  F_T F_r'
 * for the block's rows is one product on the package's kernel (F row-major is F' by
 * columns). */
static void rpc_fold_block(void *ctx, R_xlen_t block, int thread)
{
    rpc_fold *c = (rpc_fold *) ctx;
    R_xlen_t r0 = block * RPC_ROWS, r1 = r0 + RPC_ROWS < c->n ? r0 + RPC_ROWS : c->n;
    int t = c->t, nf = c->nf, rows = (int) (r1 - r0);
    double *P = c->scratch + (size_t) thread * RPC_ROWS * (size_t) t;
    if (nf > 0) bochner_gemm_tn(c->F + r0 * (R_xlen_t) c->k, c->k, c->FT, nf, rows, t, nf, P,
                                rows, 0);
    for (R_xlen_t row = r0; row < r1; row++) {
        double *y = c->F + row * (R_xlen_t) c->k + nf;
        double drop = 0.0;
        for (int a = 0; a < t; a++) {
            double h = c->H[row + (R_xlen_t) a * c->n];
            if (nf > 0) h -= P[(row - r0) + (R_xlen_t) a * rows];
            if (!c->live[a]) {
                y[a] = 0.0;
                continue;
            }
            for (int j = 0; j < a; j++) h -= c->L[a + (R_xlen_t) j * t] * y[j];
            y[a] = h / c->L[a + (R_xlen_t) a * t];
            drop += y[a] * y[a];
        }
        double v = c->r[row] - drop;
        c->r[row] = v > c->zero ? v : 0.0;
    }
}

/* The running sum of r (long double, as cumsum()); its last value, the total. */
static double rpc_running_sum(const double *r, R_xlen_t n, double *cum)
{
    long double s = 0.0L;
    for (R_xlen_t i = 0; i < n; i++) {
        s += r[i];
        cum[i] = (double) s;
    }
    return n > 0 ? cum[n - 1] : 0.0;
}

/* The first i with cum[i] > target (findInterval(target, cum) + 1 in R); past the
 * end only through rounding, then the last i with r_i > 0. */
static R_xlen_t rpc_locate(const double *cum, const double *r, R_xlen_t n, double target)
{
    R_xlen_t lo = 0, hi = n;   /* the answer lies in [lo, hi] */
    while (lo < hi) {
        R_xlen_t mid = lo + (hi - lo) / 2;
        if (cum[mid] > target) hi = mid; else lo = mid + 1;
    }
    if (lo < n) return lo;
    for (R_xlen_t i = n - 1; i >= 0; i--) if (r[i] > 0.0) return i;
    return 0;
}

/* The rows idx[0..t-1] of x (n x d, column-major) into out (t x d, column-major). */
static void rpc_gather(const double *x, R_xlen_t n, int d, const R_xlen_t *idx, int t,
                       double *out)
{
    for (int j = 0; j < d; j++)
        for (int a = 0; a < t; a++) out[a + (R_xlen_t) j * t] = x[idx[a] + (R_xlen_t) j * n];
}

/* Candidates S (b of them, drawn from r): their residual block, then accept in order
 * (one uniform per candidate examined, until 'need' are accepted).  Returns how many
 * were accepted, their rows in T. */
static int rpc_reject(const double *x, R_xlen_t n, int d, int code, const double *par,
                      int npar, const double *F, int k, int nf, const double *r,
                      const R_xlen_t *S, int b, int need, R_xlen_t *T, double *G,
                      double *xs, double *FSbuf, int nthreads, int *status)
{
    rpc_gather(x, n, d, S, b, xs);
    int st = bochner_kernel_matrix(code, par, npar, xs, b, NULL, b, d, G, nthreads);
    if (st != BOCHNER_OK) {
        *status = st;
        return 0;
    }
    if (nf > 0) {
        /* G -= F_S F_S': F_S' (nf x b, by columns) gathered, one product */
        double *FS = FSbuf, *P = FSbuf + (size_t) b * nf;
        for (int a = 0; a < b; a++)
            memcpy(FS + (R_xlen_t) a * nf, F + S[a] * (R_xlen_t) k, sizeof(double) * (size_t) nf);
        bochner_gemm_tn(FS, nf, FS, nf, b, b, nf, P, b, 0);
        for (R_xlen_t e = 0; e < (R_xlen_t) b * b; e++) G[e] -= P[e];
    }
    int t = 0;
    for (int a = 0; a < b && t < need; a++) {
        double u = unif_rand(), gaa = G[a + (R_xlen_t) a * b];
        int dup = 0;
        for (int j = 0; j < t; j++) dup |= T[j] == S[a];
        if (dup || !(gaa > 0.0) || !(u * r[S[a]] < gaa)) continue;
        T[t++] = S[a];
        for (int c = a + 1; c < b; c++) {
            double gca = G[c + (R_xlen_t) a * b] / gaa;
            for (int e = a + 1; e < b; e++) G[c + (R_xlen_t) e * b] -= gca * G[a + (R_xlen_t) e * b];
        }
    }
    return t;
}

/* x: n x d (column-major); diag: K_ii; k pivots wanted; block b >= 1.  F (n x k,
 * row-major) and r (n) are the caller's: the factor and the residual diagonal.
 * With nf0 > 0 the run continues an earlier one: F's first nf0 columns, r and
 * pivots[0..nf0-1] hold its factor, residual and pivots, and the later pivots
 * are drawn from that residual by the same rule (in law, the pivots of one
 * run to k: the centres' growth in falkon() keeps its pivots nested);
 * with nf0 = 0 r starts at diag.  pivots (k, 0-based) receives the pivots in
 * the order chosen; returns the status, *found how many there are (< k only
 * when the residual vanished), *trace the residual trace and *drawn the
 * candidates drawn. */
int bochner_rpcholesky(int code, const double *par, int npar, const double *x, R_xlen_t n,
                       int d, const double *diag, int k, int b, int nthreads, double *F,
                       double *r, int nf0, int *pivots, int *found, double *trace,
                       double *drawn)
{
    if (n < 1 || d < 1 || k < 1 || k > n || b < 1 || nf0 < 0 || nf0 > k)
        return BOCHNER_BAD_ARGUMENT;
    double *cum = (double *) R_alloc((size_t) n, sizeof(double));
    R_xlen_t *S = (R_xlen_t *) R_alloc((size_t) b, sizeof(R_xlen_t));
    R_xlen_t *T = (R_xlen_t *) R_alloc((size_t) b, sizeof(R_xlen_t));
    double *G = (double *) R_alloc((size_t) b * (size_t) b, sizeof(double));
    double *xs = (double *) R_alloc((size_t) b * (size_t) d, sizeof(double));
    double *H = (double *) R_alloc((size_t) n * (size_t) b, sizeof(double));
    double *FT = (double *) R_alloc((size_t) b * (size_t) k, sizeof(double));
    double *L = (double *) R_alloc((size_t) b * (size_t) b, sizeof(double));
    int *live = (int *) R_alloc((size_t) b, sizeof(int));
    /* the rejection step's F_S' and F_S F_S' (b x k and b x b) */
    double *FS = b > 1 ? (double *) R_alloc((size_t) b * ((size_t) k + (size_t) b), sizeof(double))
                       : NULL;
    double *scratch = (double *) R_alloc((size_t) (nthreads > 0 ? nthreads : 1) * RPC_ROWS *
                                         (size_t) b, sizeof(double));
    double dmax = 0.0;
    for (R_xlen_t i = 0; i < n; i++) if (diag[i] > dmax) dmax = diag[i];
    double zero = 64.0 * DBL_EPSILON * dmax;
    if (nf0 == 0)
        for (R_xlen_t i = 0; i < n; i++) r[i] = diag[i] > zero ? diag[i] : 0.0;
    int nf = nf0, status = BOCHNER_OK, empty = 0;
    *drawn = 0.0;
    while (nf < k) {
        R_CheckUserInterrupt();   /* between rounds: nothing shared is half-written */
        double total = rpc_running_sum(r, n, cum);
        if (!(total > 0.0)) break;
        int t;
        if (b == 1) {
            T[0] = rpc_locate(cum, r, n, unif_rand() * total);
            t = 1;
            *drawn += 1.0;
        } else {
            for (int a = 0; a < b; a++) S[a] = rpc_locate(cum, r, n, unif_rand() * total);
            *drawn += b;
            t = rpc_reject(x, n, d, code, par, npar, F, k, nf, r, S, b, k - nf, T, G, xs,
                           FS, nthreads, &status);
            if (status != BOCHNER_OK) return status;
            /* rounds with nothing accepted: the residual left is rounding noise */
            if (t == 0) {
                if (++empty == RPC_EMPTY_ROUNDS) break;
                continue;
            }
            empty = 0;
        }
        rpc_gather(x, n, d, T, t, xs);
        int st = bochner_kernel_matrix(code, par, npar, x, n, xs, t, d, H, nthreads);
        if (st != BOCHNER_OK) return st;
        for (int a = 0; a < t; a++) memcpy(FT + (R_xlen_t) a * nf, F + T[a] * (R_xlen_t) k,
                                           sizeof(double) * (size_t) nf);
        /* L L' = the residual block of the new pivots, H_TT - F_T F_T' */
        for (int a = 0; a < t; a++)
            for (int c = 0; c <= a; c++) {
                double s = H[T[a] + (R_xlen_t) c * n];
                const double *fa = FT + (R_xlen_t) a * nf, *fc = FT + (R_xlen_t) c * nf;
                for (int j = 0; j < nf; j++) s -= fa[j] * fc[j];
                for (int j = 0; j < c; j++) if (live[j]) s -= L[a + (R_xlen_t) j * t] * L[c + (R_xlen_t) j * t];
                if (a == c) {
                    live[a] = s > zero;
                    L[a + (R_xlen_t) a * t] = live[a] ? sqrt(s) : 0.0;
                } else {
                    L[a + (R_xlen_t) c * t] = live[c] ? s / L[c + (R_xlen_t) c * t] : 0.0;
                }
            }
        rpc_fold fold = {n, k, nf, t, F, H, FT, L, live, r, zero, scratch};
        R_xlen_t nblocks = (n + RPC_ROWS - 1) / RPC_ROWS;
        int nt = bochner_threads_for(nthreads, (double) n * (double) t * (double) (nf + t));
        bochner_parallel_blocks(nblocks, nt, 8, rpc_fold_block, &fold);
        for (int a = 0; a < t; a++) {
            r[T[a]] = 0.0;
            pivots[nf + a] = (int) T[a];
        }
        nf += t;
    }
    long double s = 0.0L;
    for (R_xlen_t i = 0; i < n; i++) s += r[i];
    *found = nf;
    *trace = (double) s;
    return status;
}
