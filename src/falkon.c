/* FALKON (Rudi, Carratino & Rosasco 2017): the heavy parts, in C.
 *
 *   falkon_knm_apply   out = init + K_nm' diag(w) (K_nm U + V), one pass over
 *                      the rows of x in row blocks, many right-hand sides
 *                      (the columns of U and V) at once; K_nm evaluated
 *                      block by block, or read from a cached K_nm
 *   falkon_predict     K_nm alpha, in row blocks
 *   falkon_kernel_cache  K_nm itself, in row blocks (the passes' cache)
 *   falkon_cholesky    chol(K + shift I), upper
 *   falkon_tt          T diag(d) T' / m for an upper triangular T
 *   falkon_precond     chol(T diag(d) T' / m + lambda I), upper
 *   falkon_trisolve    R^-1 B or R'^-1 B for an upper triangular R
 *
 * Without a cache K_nm = k(X, C) is never held: each block of rows gets its
 * kernel block Kb = k(X_b, C) from bochner_kernel_matrix() (threaded inside),
 * then
 *   T_b = w_b * (Kb U + V_b)          (threaded product, products.c)
 *   out += Kb' T_b                    (threaded cross product, accumulate = 1)
 * With a cache (K_nm computed once by kernel_matrix() when it fits the
 * memory budget, R/falkon-fit.R) Kb is the cached block, read in place: the
 * same products on the same numbers, so the cached and the evaluated passes
 * agree bit for bit.
 * The blocks run in row order on the calling thread (bochner_kernel_matrix
 * allocates with R_alloc, so it must not run inside a parallel region), and
 * the threads work inside each block's kernel evaluation and products.
 * Every entry of out is then one chain of multiply-adds over the rows in
 * order (gemm.c accumulates into the stored double exactly as one long
 * product would), and k(x_i, C) does not depend on the other rows of its
 * block (the kernel centres the data at the mean of C), so the result is
 * identical, bit for bit, for any number of threads and any block size;
 * and a chunked pass that feeds one chunk's result as the next chunk's
 * 'init' equals the pass over all rows.  User interrupts are checked
 * between blocks. */
#include "bochner.h"
#include <string.h>

/* Rows per block: about 16 MB of kernel block, at least 256 and at most
 * 8192 rows.  Each block opens a few parallel regions (kernel, products,
 * transpose); blocks this large keep their synchronisation negligible,
 * which matters most on a loaded machine. */
static R_xlen_t default_block_rows(R_xlen_t n, int m)
{
    R_xlen_t b = (R_xlen_t) ((16u << 20) / (8u * (unsigned) (m > 0 ? m : 1)));
    if (b < 256) b = 256;
    if (b > 8192) b = 8192;
    return b > n ? (n > 0 ? n : 1) : b;
}

/* The kernel blocks k(X_b, C) of a pass over the rows of x (n x d) in
 * blocks of nb rows, with their scratch. */
typedef struct {
    int code, npar, d, m, nthreads;
    const double *par, *x, *c;
    R_xlen_t n, nb;
    double *xb, *kb;
} kernel_blocks;

static void kernel_blocks_init(kernel_blocks *p, int code, const double *par, int npar,
                               const double *x, R_xlen_t n, int d, const double *c, int m,
                               R_xlen_t block_rows, int nthreads)
{
    R_xlen_t nb = block_rows > 0 ? (block_rows > n ? n : block_rows) : default_block_rows(n, m);
    kernel_blocks b = {code, npar, d, m, nthreads, par, x, c, n, nb,
                       (double *) R_alloc((size_t) nb * (size_t) (d > 0 ? d : 1), sizeof(double)),
                       (double *) R_alloc((size_t) nb * (size_t) m, sizeof(double))};
    *p = b;
}

/* p->kb (rows x m) = k(rows i0 .. i0 + rows - 1 of x, C); a status code. */
static int kernel_block(kernel_blocks *p, R_xlen_t i0, int *rows)
{
    *rows = (int) (p->n - i0 < p->nb ? p->n - i0 : p->nb);
    bochner_copy_rows(p->x, p->n, p->d, i0, *rows, p->xb);
    return bochner_kernel_matrix(p->code, p->par, p->npar, p->xb, *rows, p->c, p->m, p->d,
                                 p->kb, p->nthreads);
}

/* Transpose of a block, its columns split between the threads. */
#define TRANSPOSE_COLS 64
typedef struct {
    const double *x;
    int nrow, ncol;
    double *t;
} transpose_job;

static void transpose_block(void *ctx, R_xlen_t blk, int thread)
{
    (void) thread;
    const transpose_job *p = (const transpose_job *) ctx;
    int j0 = (int) blk * TRANSPOSE_COLS;
    int nc = p->ncol - j0 < TRANSPOSE_COLS ? p->ncol - j0 : TRANSPOSE_COLS;
    bochner_transpose(p->x + (ptrdiff_t) j0 * p->nrow, p->nrow, p->nrow, nc, p->t + j0,
                      p->ncol);
}

static void parallel_transpose(const double *x, int nrow, int ncol, double *t, int nthreads)
{
    transpose_job p = {x, nrow, ncol, t};
    bochner_parallel_blocks((ncol + TRANSPOSE_COLS - 1) / TRANSPOSE_COLS,
                            bochner_threads_for(nthreads, (double) nrow * ncol), 64,
                            transpose_block, &p);
}

/* A pass or solve under about 5 ms of arithmetic (2^24 multiply-adds) runs
 * on the calling thread: it opens several parallel regions, and each costs
 * a wake-up that such small work cannot repay (on a loaded machine, a wait
 * for the other thread's time slice: Vehicle's fit took 9 times its
 * one-thread CPU time on two threads). */
#define FALKON_MIN_THREADED_WORK 16777216.0
static int falkon_threads(int nthreads, double work)
{
    return work < FALKON_MIN_THREADED_WORK ? 1 : nthreads;
}

/* out (m x k) += t(kb) %*% tb for kb (rows x m, ldk) and tb (rows x k): the
 * update of a pass, as products.c's cross product (tiles of at most 240
 * rows of out, all k columns, each one serial product), but with at least
 * four tiles: for m = 256 its two tiles of 240 and 16 rows left one thread
 * idle.  Every entry is the same chain over the rows whatever tile
 * computes it (gemm.c). */
typedef struct {
    const double *kb, *tb;
    ptrdiff_t ldk;
    int rows, m, k, tile;
    double *out;
} cross_job;

static void cross_tile(void *ctx, R_xlen_t t, int thread)
{
    (void) thread;
    const cross_job *p = (const cross_job *) ctx;
    int i0 = (int) t * p->tile, mr = p->m - i0 < p->tile ? p->m - i0 : p->tile;
    bochner_gemm_tn(p->kb + (ptrdiff_t) i0 * p->ldk, p->ldk, p->tb, p->rows, mr, p->k, p->rows,
                    p->out + i0, p->m, 1);
}

static void cross_update(const double *kb, ptrdiff_t ldk, const double *tb, int rows, int m,
                         int k, double *out, int nthreads)
{
    int tile = (m + 3) / 4;
    tile = (tile + 23) / 24 * 24;          /* whole 24-row micro-panels */
    if (tile > 240) tile = 240;
    cross_job p = {kb, tb, ldk, rows, m, k, tile, out};
    bochner_parallel_blocks((m + tile - 1) / tile,
                            bochner_threads_for(nthreads, (double) rows * m * k), 1 << 20,
                            cross_tile, &p);
}

/* out (m x k) = [out +] K_nm' diag(w) (K_nm U + V), and ku (n x k) = K_nm U
 * unless ku is NULL (given U); U (m x k) or NULL,
 * V (n x k) or NULL (not both), w NULL, one weight per row (wcols = 0) or
 * one per row and column (n x k, wcols = 1: a different diagonal for each
 * right-hand side, as multinomial Newton steps need).  out must hold init (or
 * anything, with accumulate = 0). */
int bochner_falkon_knm_apply(int code, const double *par, int npar, const double *x,
                             R_xlen_t n, int d, const double *c, int m, const double *kc,
                             const double *U, const double *V, const double *w, int wcols,
                             int k, double *out, double *ku, int accumulate,
                             R_xlen_t block_rows, int nthreads)
{
    if (m < 1 || k < 1 || (!U && !V)) return BOCHNER_BAD_ARGUMENT;
    if (!accumulate) memset(out, 0, sizeof(double) * (size_t) m * (size_t) k);
    if (n == 0) return BOCHNER_OK;
    nthreads = falkon_threads(nthreads, (double) n * m * (kc ? 2 * k : 2 * k + d));
    kernel_blocks p;
    if (kc) {
        /* the cached K_nm (n x m): no kernel scratch, so by default one
         * block (the scratch T_b at most 32 MB): two parallel regions per
         * pass */
        R_xlen_t nb = block_rows;
        if (nb <= 0) {
            nb = (R_xlen_t) ((32u << 20) / (8u * (unsigned) k));
            if (nb < 4096) nb = 4096;
        }
        if (nb > n) nb = n;
        kernel_blocks b = {code, npar, d, m, nthreads, par, x, c, n, nb, NULL, NULL};
        p = b;
    } else {
        kernel_blocks_init(&p, code, par, npar, x, n, d, c, m, block_rows, nthreads);
    }
    double *tb = (double *) R_alloc((size_t) p.nb * (size_t) k, sizeof(double));
    for (R_xlen_t i0 = 0; i0 < n; i0 += p.nb) {
        int rows;
        const double *kb;
        ptrdiff_t ldk;
        if (kc) {
            rows = (int) (n - i0 < p.nb ? n - i0 : p.nb);
            kb = kc + i0;
            ldk = (ptrdiff_t) n;
        } else {
            int status = kernel_block(&p, i0, &rows);
            if (status != BOCHNER_OK) return status;
            kb = p.kb;
            ldk = rows;
        }
        if (U) {
            bochner_product(kb, ldk, U, m, rows, k, m, tb, rows, 0, 0, nthreads);
            if (ku)
                for (int j = 0; j < k; j++)
                    memcpy(ku + i0 + (R_xlen_t) j * n, tb + (ptrdiff_t) j * rows,
                           sizeof(double) * (size_t) rows);
            if (V)
                for (int j = 0; j < k; j++)
                    for (int i = 0; i < rows; i++)
                        tb[i + (ptrdiff_t) j * rows] += V[i0 + i + (R_xlen_t) j * n];
        } else {
            for (int j = 0; j < k; j++)
                memcpy(tb + (ptrdiff_t) j * rows, V + i0 + (R_xlen_t) j * n,
                       sizeof(double) * (size_t) rows);
        }
        if (w)
            for (int j = 0; j < k; j++) {
                const double *wj = w + i0 + (wcols ? (R_xlen_t) j * n : 0);
                for (int i = 0; i < rows; i++) tb[i + (ptrdiff_t) j * rows] *= wj[i];
            }
        cross_update(kb, ldk, tb, rows, m, k, out, nthreads);
        R_CheckUserInterrupt();
    }
    return BOCHNER_OK;
}

/* out (n x k) = K_nm alpha, alpha (m x k); with alpha NULL, out (n x m) =
 * K_nm itself (the passes' cache: each row's entries do not depend on its
 * block, so it equals kernel_matrix(x, C) and the blocks a pass evaluates). */
int bochner_falkon_predict(int code, const double *par, int npar, const double *x,
                           R_xlen_t n, int d, const double *c, int m, const double *alpha,
                           int k, double *out, R_xlen_t block_rows, int nthreads)
{
    if (m < 1 || k < 1 || (!alpha && k != m)) return BOCHNER_BAD_ARGUMENT;
    if (n == 0) return BOCHNER_OK;
    kernel_blocks p;
    kernel_blocks_init(&p, code, par, npar, x, n, d, c, m, block_rows, nthreads);
    for (R_xlen_t i0 = 0; i0 < n; i0 += p.nb) {
        int rows, status = kernel_block(&p, i0, &rows);
        if (status != BOCHNER_OK) return status;
        if (alpha)
            bochner_product(p.kb, rows, alpha, m, rows, k, m, out + i0, n, 0, 0, nthreads);
        else
            for (int j = 0; j < m; j++)
                memcpy(out + i0 + (R_xlen_t) j * n, p.kb + (ptrdiff_t) j * rows,
                       sizeof(double) * (size_t) rows);
        R_CheckUserInterrupt();
    }
    return BOCHNER_OK;
}

/* Triangular solves by blocks of SOLVE_NB rows, for many right-hand sides:
 * trans = 0: B <- R^-1 B (R upper; blocks from the last), trans = 1:
 * B <- R'^-1 B (blocks from the first; the off-diagonal blocks of R' are
 * read from R in place by the transposed product, as fast here as a plain
 * product on a transposed copy, which cost an m x m transpose per factor).  The updates from the solved
 * blocks are products on the package's kernel (gemm.c); the small diagonal
 * blocks are substitutions.  Each thread solves its own share of the
 * right-hand sides, whole: one parallel region per solve (threading each
 * block's product instead meant m / SOLVE_NB regions, which did not scale
 * and which a loaded machine turns into waits), and R's blocks are packed
 * once per thread.  A product's entry is one chain whatever columns come
 * with it, so every entry's arithmetic is fixed by m alone and results do
 * not depend on the thread count. */
#define SOLVE_NB 96

/* The diagonal block's substitution.  With R' it is a chain of dependent
 * subtractions per column (latency bound), so DIAG_COLS columns go
 * together, interleaved in a buffer, each column's sum in its own order
 * (the same numbers as one column at a time). */
#define DIAG_COLS 8
static void diagonal_solve(const double *r, int m, int i0, int nb, double *x, int k, int trans)
{
    if (trans) {
        double buf[SOLVE_NB * DIAG_COLS];
        for (int g0 = 0; g0 < k; g0 += DIAG_COLS) {
            int nc = k - g0 < DIAG_COLS ? k - g0 : DIAG_COLS;
            for (int c = 0; c < DIAG_COLS; c++) {
                const double *xj = x + (ptrdiff_t) (g0 + (c < nc ? c : 0)) * m + i0;
                for (int i = 0; i < nb; i++) buf[i * DIAG_COLS + c] = xj[i];
            }
            for (int i = 0; i < nb; i++) {
                const double *ri = r + (ptrdiff_t) (i0 + i) * m + i0;
                double s[DIAG_COLS];
                for (int c = 0; c < DIAG_COLS; c++) s[c] = buf[i * DIAG_COLS + c];
                for (int l = 0; l < i; l++) {
                    double rl = ri[l];
                    const double *bl = buf + l * DIAG_COLS;
                    for (int c = 0; c < DIAG_COLS; c++) s[c] -= rl * bl[c];
                }
                for (int c = 0; c < DIAG_COLS; c++) buf[i * DIAG_COLS + c] = s[c] / ri[i];
            }
            for (int c = 0; c < nc; c++) {
                double *xj = x + (ptrdiff_t) (g0 + c) * m + i0;
                for (int i = 0; i < nb; i++) xj[i] = buf[i * DIAG_COLS + c];
            }
        }
        return;
    }
    for (int j = 0; j < k; j++) {
        double *xj = x + (ptrdiff_t) j * m;
        for (int i = i0 + nb - 1; i >= i0; i--) {
            const double *ri = r + (ptrdiff_t) i * m;
            double xi = xj[i] / ri[i];
            xj[i] = xi;
            for (int l = i0; l < i; l++) xj[l] -= ri[l] * xi;
        }
    }
}

typedef struct {
    const double *r;
    int m, k, trans, groups;
    double *b, *tmp;           /* tmp: SOLVE_NB x k in all, split like the columns */
} trisolve_job;

static void trisolve_group(void *ctx, R_xlen_t g, int thread)
{
    (void) thread;
    const trisolve_job *p = (const trisolve_job *) ctx;
    int m = p->m;
    int j0 = (int) ((R_xlen_t) p->k * g / p->groups);
    int k = (int) ((R_xlen_t) p->k * (g + 1) / p->groups) - j0;
    double *b = p->b + (ptrdiff_t) j0 * m;
    double *tmp = p->tmp + (ptrdiff_t) j0 * SOLVE_NB;
    int nblk = (m + SOLVE_NB - 1) / SOLVE_NB;
    for (int q = 0; q < nblk; q++) {
        int blk = p->trans ? q : nblk - 1 - q;
        int i0 = blk * SOLVE_NB, nb = m - i0 < SOLVE_NB ? m - i0 : SOLVE_NB, i1 = i0 + nb;
        /* tmp = (rows i0..i1 of R, columns after them) X_after, or (rows
         * i0..i1 of R', columns before them) X_before */
        int inner = p->trans ? i0 : m - i1;
        if (inner > 0) {
            if (p->trans)   /* R'[i0..i1, 0..i0] = R[0..i0, i0..i1]', read in place */
                bochner_gemm_tn(p->r + (ptrdiff_t) i0 * m, m, b, m, nb, k, inner, tmp, nb, 0);
            else
                bochner_gemm(p->r + i0 + (ptrdiff_t) i1 * m, m, b + i1, m, nb, k, inner, tmp,
                             nb, 0);
            for (int j = 0; j < k; j++)
                for (int i = 0; i < nb; i++) b[i0 + i + (ptrdiff_t) j * m] -= tmp[i + (ptrdiff_t) j * nb];
        }
        diagonal_solve(p->r, m, i0, nb, b, k, p->trans);
    }
}

void bochner_falkon_trisolve(const double *r, int m, double *b, int k, int trans,
                             int nthreads)
{
    int nth = falkon_threads(nthreads, (double) m * (double) m * (double) k / 2.0);
    if (nth > k) nth = k;
    trisolve_job p = {r, m, k, trans, nth, b,
                      (double *) R_alloc((size_t) SOLVE_NB * (size_t) k, sizeof(double))};
    bochner_parallel_blocks(nth, nth, 1, trisolve_group, &p);
}

/* ------------------------------------------------------------------------ */
/* .Call entry points                                                        */

static const double *optional_matrix(SEXP a, R_xlen_t nrow, int ncol, const char *what)
{
    if (isNull(a)) return NULL;
    if (!bochner_is_real_matrix(a) || nrows(a) != nrow || ncols(a) != ncol)
        error("'%s' must be NULL or a double matrix of matching size", what);
    return REAL(a);
}

static void check_kernel_args(SEXP x, SEXP centres, SEXP par)
{
    if (!bochner_is_real_matrix(x)) error("'x' must be a double matrix");
    if (!bochner_is_real_matrix(centres) || ncols(centres) != ncols(x) || nrows(centres) < 1)
        error("'centres' must be a double matrix with the columns of 'x'");
    if (TYPEOF(par) != REALSXP || XLENGTH(par) < 1) error("'par' must be a double vector");
}

static R_xlen_t block_rows_arg(SEXP block_rows)
{
    double b = asReal(block_rows);
    if (!R_FINITE(b) || b < 0) error("'block_rows' must be a non-negative number");
    return (R_xlen_t) b;
}

/* .Call(C_falkon_knm_apply, x, centres, code, par, U, V, w, init, block_rows, keep_ku,
 * nthreads, K): the m x k matrix, or with keep_ku = TRUE (and U given) the list
 * of it and K_nm U; K NULL, or the cached k(x, centres) (n x m). */
SEXP bochner_falkon_knm_apply_call(SEXP x, SEXP centres, SEXP code, SEXP par, SEXP U, SEXP V,
                                   SEXP w, SEXP init, SEXP block_rows, SEXP keep_ku,
                                   SEXP nthreads, SEXP K)
{
    check_kernel_args(x, centres, par);
    R_xlen_t n = nrows(x);
    int m = nrows(centres), d = ncols(x);
    if (isNull(U) && isNull(V)) error("one of 'U' and 'V' must be given");
    int k = isNull(U) ? (bochner_is_real_matrix(V) ? ncols(V) : 0) : (bochner_is_real_matrix(U) ? ncols(U) : 0);
    if (k < 1) error("'U' and 'V' must be double matrices with at least one column");
    const double *u = optional_matrix(U, m, k, "U");
    const double *v = optional_matrix(V, n, k, "V");
    const double *pw = NULL;
    int wcols = 0;
    if (!isNull(w)) {
        wcols = XLENGTH(w) != n;
        if (TYPEOF(w) != REALSXP || (XLENGTH(w) != n && XLENGTH(w) != n * (R_xlen_t) k))
            error("'w' must be NULL, one weight per row, or one per row and column");
        pw = REAL(w);
    }
    optional_matrix(init, m, k, "init");
    const double *kc = optional_matrix(K, n, m, "K");
    R_xlen_t nb = block_rows_arg(block_rows);
    int keep = asLogical(keep_ku) == TRUE && u != NULL;
    SEXP out = PROTECT(allocMatrix(REALSXP, m, k));
    SEXP ku = PROTECT(keep ? bochner_alloc_output(n, k) : R_NilValue);
    if (!isNull(init)) memcpy(REAL(out), REAL(init), sizeof(double) * (size_t) m * (size_t) k);
    int status = bochner_falkon_knm_apply(asInteger(code), REAL(par), LENGTH(par), REAL(x), n, d,
                                          REAL(centres), m, kc, u, v, pw, wcols, k, REAL(out),
                                          keep ? REAL(ku) : NULL, !isNull(init), nb,
                                          bochner_nthreads(asInteger(nthreads)));
    bochner_stop_on_status(status, "falkon_knm_apply");
    if (keep) {
        SEXP both = PROTECT(allocVector(VECSXP, 2));
        SET_VECTOR_ELT(both, 0, out);
        SET_VECTOR_ELT(both, 1, ku);
        UNPROTECT(3);
        return both;
    }
    UNPROTECT(2);
    return out;
}

/* .Call(C_falkon_kernel_cache, x, centres, code, par, block_rows, nthreads): K_nm */
SEXP bochner_falkon_kernel_cache_call(SEXP x, SEXP centres, SEXP code, SEXP par,
                                      SEXP block_rows, SEXP nthreads)
{
    check_kernel_args(x, centres, par);
    R_xlen_t n = nrows(x);
    int m = nrows(centres);
    /* allocMatrix, not bochner_alloc_output(): huge pages for a matrix this
     * size cost 1.7 s of system time here (n = 10^5, m = 1000), small pages 0.4 s */
    if (n > INT_MAX) error("too many rows for the cache of 'x'");
    SEXP out = PROTECT(allocMatrix(REALSXP, (int) n, m));
    int status = bochner_falkon_predict(asInteger(code), REAL(par), LENGTH(par), REAL(x), n,
                                        ncols(x), REAL(centres), m, NULL, m, REAL(out),
                                        block_rows_arg(block_rows),
                                        bochner_nthreads(asInteger(nthreads)));
    bochner_stop_on_status(status, "falkon_kernel_cache");
    UNPROTECT(1);
    return out;
}

/* .Call(C_falkon_predict, x, centres, code, par, alpha, block_rows, nthreads) */
SEXP bochner_falkon_predict_call(SEXP x, SEXP centres, SEXP code, SEXP par, SEXP alpha,
                                 SEXP block_rows, SEXP nthreads)
{
    check_kernel_args(x, centres, par);
    int m = nrows(centres);
    if (!bochner_is_real_matrix(alpha) || nrows(alpha) != m || ncols(alpha) < 1)
        error("'alpha' must be a double matrix with one row per centre");
    R_xlen_t n = nrows(x);
    int k = ncols(alpha);
    SEXP out = PROTECT(bochner_alloc_output(n, k));
    int status = bochner_falkon_predict(asInteger(code), REAL(par), LENGTH(par), REAL(x), n,
                                        ncols(x), REAL(centres), m, REAL(alpha), k, REAL(out),
                                        block_rows_arg(block_rows),
                                        bochner_nthreads(asInteger(nthreads)));
    bochner_stop_on_status(status, "falkon_predict");
    UNPROTECT(1);
    return out;
}

static int square_arg(SEXP a, const char *what)
{
    if (!bochner_is_real_matrix(a) || nrows(a) != ncols(a) || nrows(a) < 1)
        error("'%s' must be a square double matrix", what);
    return nrows(a);
}

/* .Call(C_falkon_cholesky, K, shift, nthreads): the upper R with
 * R'R = K + shift I (K's upper triangle is read); NULL when a pivot fails. */
SEXP bochner_falkon_cholesky_call(SEXP K, SEXP shift, SEXP nthreads)
{
    int m = square_arg(K, "K");
    double s = asReal(shift);
    if (!R_FINITE(s)) error("'shift' must be a finite number");
    SEXP R = PROTECT(duplicate(K));
    double *r = REAL(R);
    for (int i = 0; i < m; i++) r[i + (ptrdiff_t) i * m] += s;
    int bad = bochner_cholesky(r, m, bochner_nthreads(asInteger(nthreads)));
    UNPROTECT(1);
    return bad ? R_NilValue : R;
}

/* g (m x m, symmetric) = T diag(dw) T' / m for an upper triangular T (dw
 * NULL: ones).  Entry (i, j) sums over l >= max(i, j) only, so each column
 * block j0 .. j0 + w - 1 of the upper triangle is the product of rows
 * 0 .. j0 + w - 1 and columns l >= j0 of T diag(dw) / m with rows l >= j0
 * of T': a third of the flops of the full product, and since the terms
 * left out are exact zeros each entry is the chain the full product would
 * give.  The lower triangle is then mirrored. */
#define TT_COLS 240
static void upper_tt(const double *t, const double *dw, int m, double *g, int nthreads)
{
    double *a = (double *) R_alloc((size_t) m * m, sizeof(double));
    double *b = (double *) R_alloc((size_t) m * m, sizeof(double));
    for (int j = 0; j < m; j++) {
        double s = (dw ? dw[j] : 1.0) / (double) m;
        for (int i = 0; i < m; i++) a[i + (ptrdiff_t) j * m] = t[i + (ptrdiff_t) j * m] * s;
    }
    parallel_transpose(t, m, m, b, nthreads);
    for (int j0 = 0; j0 < m; j0 += TT_COLS) {
        int w = m - j0 < TT_COLS ? m - j0 : TT_COLS;
        bochner_product(a + (ptrdiff_t) j0 * m, m, b + j0 + (ptrdiff_t) j0 * m, m, j0 + w, w,
                        m - j0, g + (ptrdiff_t) j0 * m, m, 0, 0, nthreads);
    }
    bochner_mirror_upper(g, m, nthreads);
}

static const double *weights_arg(SEXP dw, int m)
{
    if (isNull(dw)) return NULL;
    if (TYPEOF(dw) != REALSXP || XLENGTH(dw) != m)
        error("'dw' must be NULL or one weight per centre");
    return REAL(dw);
}

/* .Call(C_falkon_tt, T, dw, nthreads): T diag(dw) T' / m (dw NULL: ones). */
SEXP bochner_falkon_tt_call(SEXP T, SEXP dw, SEXP nthreads)
{
    int m = square_arg(T, "T");
    const double *pw = weights_arg(dw, m);
    SEXP G = PROTECT(allocMatrix(REALSXP, m, m));
    upper_tt(REAL(T), pw, m, REAL(G), bochner_nthreads(asInteger(nthreads)));
    UNPROTECT(1);
    return G;
}

/* .Call(C_falkon_precond, T, dw, lambda, nthreads): the upper A with
 * A'A = T diag(dw) T' / m + lambda I (dw NULL: ones); NULL when a pivot
 * fails. */
SEXP bochner_falkon_precond_call(SEXP T, SEXP dw, SEXP lambda, SEXP nthreads)
{
    int m = square_arg(T, "T");
    double lam = asReal(lambda);
    if (!R_FINITE(lam)) error("'lambda' must be a finite number");
    const double *pw = weights_arg(dw, m);
    int nth = bochner_nthreads(asInteger(nthreads));
    SEXP A = PROTECT(allocMatrix(REALSXP, m, m));
    double *r = REAL(A);
    upper_tt(REAL(T), pw, m, r, nth);
    for (int i = 0; i < m; i++) r[i + (ptrdiff_t) i * m] += lam;
    int bad = bochner_cholesky(r, m, nth);
    UNPROTECT(1);
    return bad ? R_NilValue : A;
}

/* .Call(C_falkon_trisolve, R, B, trans, nthreads): R^-1 B (trans = 0) or
 * R'^-1 B (trans = 1) for an upper triangular R. */
SEXP bochner_falkon_trisolve_call(SEXP R, SEXP B, SEXP trans, SEXP nthreads)
{
    int m = square_arg(R, "R");
    if (!bochner_is_real_matrix(B) || nrows(B) != m) error("'B' must be a double matrix with one row per row of 'R'");
    int nth = bochner_nthreads(asInteger(nthreads)), tr = asLogical(trans) == TRUE;
    SEXP X = PROTECT(duplicate(B));
    bochner_falkon_trisolve(REAL(R), m, REAL(X), ncols(B), tr, nth);
    UNPROTECT(1);
    return X;
}
