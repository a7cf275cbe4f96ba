/* Cholesky factorisation and solves on the package's own product.
 *
 * A = R'R for a symmetric positive definite A (only its upper triangle is
 * read), blocked right-looking: for each block column of NB,
 *   R11 = chol(A11)                      (unblocked, serial)
 *   A12 <- R11^-T A12                    (triangular solves, columns in parallel)
 *   A22 <- A22 - A12' A12                (upper tiles, bochner_product)
 * so the O(D^3) work runs on the package's kernel with its threads.  Every
 * entry is computed in an order fixed by the sizes alone, so R is the same
 * for any number of threads and any BLAS; and the solves are plain loops.
 * This replaces LAPACK's dpotrf for ridge's normal equations, which with
 * R's reference BLAS took longer than forming them. */
#include "bochner.h"
#include <math.h>
#include <string.h>

#define NB 96                 /* block columns: a multiple of the kernel rows (96 against 192:
                                 * half the serial triangular solves, m = 4000 factored 12 % faster
                                 * on one thread, AMD EPYC Zen 4) */

/* Unblocked upper Cholesky of the kb x kb block at a (leading dimension lda),
 * in place; 0, or the 1-based column whose pivot is not positive. */
static int chol_block(double *a, ptrdiff_t lda, int kb)
{
    for (int j = 0; j < kb; j++) {
        double *aj = a + (ptrdiff_t) j * lda;
        for (int i = 0; i < j; i++) {
            const double *ai = a + (ptrdiff_t) i * lda;
            double s = aj[i];
            for (int l = 0; l < i; l++) s -= ai[l] * aj[l];
            aj[i] = s / ai[i];
        }
        double s = aj[j];
        for (int l = 0; l < j; l++) s -= aj[l] * aj[l];
        if (!(s > 0.0) || !R_FINITE(s)) return j + 1;
        aj[j] = sqrt(s);
    }
    return 0;
}

/* The unblocked step for other blocked factorisations (falkon_factor.c). */
int bochner_cholesky_block(double *a, ptrdiff_t lda, int kb)
{
    return chol_block(a, lda, kb);
}

typedef struct {
    const double *r11;     /* kb x kb: column i holds row i of the triangular matrix */
    double *a12;           /* kb x m right-hand sides, solved in place, one by one */
    ptrdiff_t lda;         /* a right-hand side's stride in a12 */
    int kb, cols;          /* right-hand sides per block */
    int m;
    ptrdiff_t ldr;         /* of r11 */
    int backward;          /* 0: row i's entries l < i (R11'), from the top; 1: l > i (R11) */
    ptrdiff_t inc;         /* the stride of a right-hand side's entries: 1, or lda of a
                            * matrix whose rows are the right-hand sides (B R^-1) */
} solve_job;

/* Columns of A12 <- R11^-T A12 (forward substitution with R11'), or with
 * 'backward' R11^-1 A12 from a transposed copy of R11.  One
 * column's substitution is a chain of dependent subtractions (latency
 * bound: about a quarter of the machine's add rate), so SOLVE_COLS columns
 * go together, interleaved in a small buffer: their chains run side by side
 * (the compiler may also vectorise across them) while each column's sum keeps its
 * order, so the result is the same number as one column at a time. */
#define SOLVE_COLS 8
static void solve_block(void *ctx, R_xlen_t blk, int thread)
{
    (void) thread;
    const solve_job *p = (const solve_job *) ctx;
    int j0 = (int) blk * p->cols, j1 = p->m - j0 < p->cols ? p->m : j0 + p->cols;
    int kb = p->kb;
    double buf[NB * SOLVE_COLS];
    for (int g0 = j0; g0 < j1; g0 += SOLVE_COLS) {
        int nc = j1 - g0 < SOLVE_COLS ? j1 - g0 : SOLVE_COLS;
        for (int c = 0; c < SOLVE_COLS; c++) {
            const double *x = p->a12 + (ptrdiff_t) (g0 + (c < nc ? c : 0)) * p->lda;
            for (int i = 0; i < kb; i++) buf[i * SOLVE_COLS + c] = x[i * p->inc];
        }
        for (int q = 0; q < kb; q++) {
            int i = p->backward ? kb - 1 - q : q;
            int lo = p->backward ? i + 1 : 0, hi = p->backward ? kb : i;
            const double *ri = p->r11 + (ptrdiff_t) i * p->ldr;
            double s[SOLVE_COLS];
            for (int c = 0; c < SOLVE_COLS; c++) s[c] = buf[i * SOLVE_COLS + c];
            for (int l = lo; l < hi; l++) {
                double r = ri[l];
                const double *bl = buf + l * SOLVE_COLS;
                for (int c = 0; c < SOLVE_COLS; c++) s[c] -= r * bl[c];
            }
            for (int c = 0; c < SOLVE_COLS; c++) buf[i * SOLVE_COLS + c] = s[c] / ri[i];
        }
        for (int c = 0; c < nc; c++) {
            double *x = p->a12 + (ptrdiff_t) (g0 + c) * p->lda;
            for (int i = 0; i < kb; i++) x[i * p->inc] = buf[i * SOLVE_COLS + c];
        }
    }
}

/* In place: the upper triangle of a (n x n) becomes R with a = R'R, the
 * strict lower triangle zero.  Returns 0, or the 1-based column of the first
 * non-positive pivot. */
int bochner_cholesky(double *a, int n, int nthreads)
{
    ptrdiff_t lda = n;
    double *neg = (double *) R_alloc((size_t) n * NB, sizeof(double));
    for (int k0 = 0; k0 < n; k0 += NB) {
        int kb = n - k0 < NB ? n - k0 : NB, m = n - k0 - kb;
        double *a11 = a + k0 + (ptrdiff_t) k0 * lda;
        int bad = chol_block(a11, lda, kb);
        if (bad) return k0 + bad;
        if (m == 0) break;
        double *a12 = a11 + (ptrdiff_t) kb * lda;
        solve_job sj = {a11, a12, lda, kb, 16, m, lda, 0, 1};
        bochner_parallel_blocks((m + 15) / 16,
                                bochner_threads_for(nthreads, (double) kb * kb * m / 2.0),
                                8, solve_block, &sj);
        /* A22 += (-A12') A12 on and above the diagonal */
        bochner_transpose(a12, lda, kb, m, neg, m);
        for (ptrdiff_t i = 0; i < (ptrdiff_t) m * kb; i++) neg[i] = -neg[i];
        double *a22 = a12 + kb;
        bochner_product(neg, m, a12, lda, m, m, kb, a22, lda, 1, 1, nthreads);
    }
    for (int j = 0; j < n; j++)
        for (int i = j + 1; i < n; i++) a[i + (ptrdiff_t) j * lda] = 0.0;
    return 0;
}

/* Four right-hand sides at a time from column j of b (n x m): x[0..3],
 * the spare lanes repeating column j when fewer are left (their stores,
 * of the same values, come before column j's). */
static void lanes(double *b, int n, int m, int j, double *x[4])
{
    int w = m - j < 4 ? m - j : 4;
    for (int q = 0; q < 4; q++) x[q] = b + (ptrdiff_t) (j + (q < w ? q : 0)) * n;
}

/* x_i <- (x_i - sum_{l = lo}^{hi - 1} c[l - lo] x_l) / d in four lanes, the
 * sum over l in increasing order: each lane's arithmetic is that of a plain
 * loop over one right-hand side, so the lanes change no result, only keep
 * four independent sums in flight. */
static inline void substitute_row(const double *c, double d, int i, int lo, int hi,
                                  double *x[4])
{
    double s0 = x[0][i], s1 = x[1][i], s2 = x[2][i], s3 = x[3][i];
    for (int l = lo; l < hi; l++) {
        double v = c[l - lo];
        s0 -= v * x[0][l];
        s1 -= v * x[1][l];
        s2 -= v * x[2][l];
        s3 -= v * x[3][l];
    }
    x[3][i] = s3 / d;
    x[2][i] = s2 / d;
    x[1][i] = s1 / d;
    x[0][i] = s0 / d;
}

#define PANEL 64              /* rows of R transposed at a time for R x = z: 64 n doubles */

/* b (n x m) <- (R'R)^-1 b for the upper factor r (n x n), with the sums of
 * the plain row-by-row substitutions in their order, so the result is
 * theirs bit for bit.  R'z = b runs down R's columns (contiguous); R x = z
 * needs R's rows, which it reads from a transposed copy of PANEL of them at
 * a time (the rows from the bottom up, as the substitution uses them).
 * Reading R by rows strode n doubles per entry, and one sum at a time
 * waited on each add: 0.63 s for n = m = 1000 against 0.22 now (AMD EPYC
 * Zen 5). */
void bochner_cholesky_solve(const double *r, int n, double *b, int m)
{
    double *x[4];
    for (int j = 0; j < m; j += 4) {                         /* R' z = b */
        lanes(b, n, m, j, x);
        for (int i = 0; i < n; i++) {
            const double *ri = r + (ptrdiff_t) i * n;
            substitute_row(ri, ri[i], i, 0, i, x);
        }
    }
    double *panel = (double *) R_alloc((size_t) PANEL * n, sizeof(double));
    for (int i1 = n; i1 > 0; i1 -= PANEL) {                  /* R x = z */
        int i0 = i1 > PANEL ? i1 - PANEL : 0, w = n - i0;
        /* panel column i - i0 is row i of R from column i0 on */
        bochner_transpose(r + i0 + (ptrdiff_t) i0 * n, n, i1 - i0, w, panel, w);
        for (int j = 0; j < m; j += 4) {
            lanes(b, n, m, j, x);
            for (int i = i1 - 1; i >= i0; i--) {
                const double *pi = panel + (ptrdiff_t) (i - i0) * w + (i - i0);
                substitute_row(pi + 1, pi[0], i, i + 1, n, x);
            }
        }
    }
}


/* One substitution with a block's worth of pivots at a time, for many
 * right-hand sides, in place: op 0 solves R'X = B and 1 R X = B for B (n x
 * m), op 2 X R = B for B (m x n), the rows its right-hand sides (the whitened
 * K_nm R^-1 of the tuning's marginal likelihood, with no transposed copy).
 * Each block of TRI_NB pivots is a substitution on its part of every
 * right-hand side (those in parallel, solve_block()) followed by the update
 * of the parts still to solve, a product on the package's kernel with its
 * threads: R'X = B updates the rows below with R[k, below]' X_k, R X = B
 * the rows above with R[above, k] X_k, X R = B the columns to the right
 * with X_k R[k, right].  Nearly all of the n^2 m multiply-adds are in those
 * products, so the solve runs at the kernel's rate instead of the latency
 * of one dependent chain per right-hand side: R'X = B with n = 1000 and
 * m = 9600 took 1.09 s as plain substitutions, 0.41 s blocked on one thread
 * and 0.23 s on two (AMD EPYC Zen 4).  The blocks and the products' chains are fixed by
 * the sizes, so the result is the same for any number of threads, and a
 * right-hand side's solution does not depend on those beside it; the sums
 * run in another order than the plain substitutions'
 * (bochner_cholesky_solve()). */
#define TRI_NB 64              /* pivots a block: 24 to 96 within 5 % (n = 1000, m = 9600) */
void bochner_triangular_solve(const double *r, int n, double *b, int m, int op, int nthreads)
{
    if (n <= 0 || m <= 0) return;
    ptrdiff_t ld = n, ldb = op == 2 ? m : n;
    double *neg = (double *) R_alloc((size_t) TRI_NB * n, sizeof(double));
    double *t = (double *) R_alloc((size_t) TRI_NB * TRI_NB, sizeof(double));
    int nb = (n + TRI_NB - 1) / TRI_NB;
    for (int q = 0; q < nb; q++) {
        /* R'X = B and X R = B from the first pivot; R X = B from the last, the
         * remainder block first */
        int k0 = (op == 1 ? nb - 1 - q : q) * TRI_NB, kb = n - k0 < TRI_NB ? n - k0 : TRI_NB;
        const double *rkk = r + k0 + (ptrdiff_t) k0 * ld;
        solve_job sj = {rkk, b + k0, ld, kb, 16, m, ld, 0, 1};
        if (op == 1) {
            /* row i of the block as column i of t, read contiguously */
            bochner_transpose(rkk, ld, kb, kb, t, kb);
            sj.r11 = t;
            sj.ldr = kb;
            sj.backward = 1;
        } else if (op == 2) {
            /* X_k R_kk = B_k is R_kk' X_k' = B_k': the rows of B_k, a column apart */
            sj.a12 = b + (ptrdiff_t) k0 * ldb;
            sj.lda = 1;
            sj.inc = ldb;
        }
        bochner_parallel_blocks((m + 15) / 16,
                                bochner_threads_for(nthreads, (double) kb * kb * m / 2.0),
                                8, solve_block, &sj);
        int rest = op == 1 ? k0 : n - k0 - kb;
        if (rest == 0) continue;
        /* the negated part of R the update multiplies: kb x rest (op 0, 2), k0 x kb (op 1) */
        const double *part = op == 1 ? r + (ptrdiff_t) k0 * ld : rkk + (ptrdiff_t) kb * ld;
        int rows = op == 1 ? k0 : kb, cols = op == 1 ? kb : rest;
        for (int j = 0; j < cols; j++)
            for (int i = 0; i < rows; i++)
                neg[i + (ptrdiff_t) j * rows] = -part[i + (ptrdiff_t) j * ld];
        if (op == 0)
            bochner_crossproduct(neg, kb, b + k0, ld, rest, m, kb, b + k0 + kb, ld, 1, 0,
                                 nthreads);
        else if (op == 1)
            bochner_product(neg, k0, b + k0, ld, k0, m, kb, b, ld, 1, 0, nthreads);
        else
            bochner_product(b + (ptrdiff_t) k0 * ldb, ldb, neg, kb, m, rest, kb,
                            b + (ptrdiff_t) (k0 + kb) * ldb, ldb, 1, 0, nthreads);
    }
}
