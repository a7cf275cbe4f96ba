/* FALKON's m x m algebra, in C: the factors and the solves of the
 * preconditioner (Rudi, Carratino & Rosasco 2017), apart from the passes
 * over the rows in falkon.c.
 *
 *   falkon_cholesky    chol(K + shift I), upper
 *   falkon_tt          T diag(d) T' / m for an upper triangular T
 *   falkon_precond     chol(T diag(d) T' / m + lambda I), upper
 *   falkon_trisolve    R^-1 B or R'^-1 B for an upper triangular R
 *
 * Every product runs on the package's kernel (gemm.c, products.c) and the
 * Cholesky on cholesky.c, in orders fixed by the sizes alone, so the
 * results do not depend on the thread count or the BLAS. */
#include "bochner.h"
#include <string.h>

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
    int nth = bochner_falkon_threads(nthreads, (double) m * (double) m * (double) k / 2.0);
    if (nth > k) nth = k;
    trisolve_job p = {r, m, k, trans, nth, b,
                      (double *) R_alloc((size_t) SOLVE_NB * (size_t) k, sizeof(double))};
    bochner_parallel_blocks(nth, nth, 1, trisolve_group, &p);
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
