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
    const double *r11;     /* kb x kb upper factor */
    double *a12;           /* kb x m, solved in place, column by column */
    ptrdiff_t lda;
    int kb, cols;          /* columns per block */
    int m;
} solve_job;

/* Columns of A12 <- R11^-T A12 (forward substitution with R11').  One
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
    double buf[NB * SOLVE_COLS];
    for (int g0 = j0; g0 < j1; g0 += SOLVE_COLS) {
        int nc = j1 - g0 < SOLVE_COLS ? j1 - g0 : SOLVE_COLS;
        for (int c = 0; c < SOLVE_COLS; c++) {
            const double *x = p->a12 + (ptrdiff_t) (g0 + (c < nc ? c : 0)) * p->lda;
            for (int i = 0; i < p->kb; i++) buf[i * SOLVE_COLS + c] = x[i];
        }
        for (int i = 0; i < p->kb; i++) {
            const double *ri = p->r11 + (ptrdiff_t) i * p->lda;
            double s[SOLVE_COLS];
            for (int c = 0; c < SOLVE_COLS; c++) s[c] = buf[i * SOLVE_COLS + c];
            for (int l = 0; l < i; l++) {
                double r = ri[l];
                const double *bl = buf + l * SOLVE_COLS;
                for (int c = 0; c < SOLVE_COLS; c++) s[c] -= r * bl[c];
            }
            for (int c = 0; c < SOLVE_COLS; c++) buf[i * SOLVE_COLS + c] = s[c] / ri[i];
        }
        for (int c = 0; c < nc; c++) {
            double *x = p->a12 + (ptrdiff_t) (g0 + c) * p->lda;
            for (int i = 0; i < p->kb; i++) x[i] = buf[i * SOLVE_COLS + c];
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
        solve_job sj = {a11, a12, lda, kb, 16, m};
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

/* One triangular substitution on b (n x m) with the triangle's rows stored
 * as the columns of c: forward (R'z = b, c = R: z_i = (b_i - sum_{l<i}
 * R_li z_l) / R_ii) or backward (R x = z, c = R': x_i = (z_i - sum_{l>i}
 * R_il x_l) / R_ii), each sum over l in increasing order.  Four right-hand
 * sides at a time: four independent sums, each in the order of one. */
static void triangular_substitute(const double *c, int n, double *b, int m, int forward)
{
    int j = 0;
    for (; j < m; j += 4) {
        int w = m - j < 4 ? m - j : 4;
        double *x[4];
        for (int q = 0; q < 4; q++) x[q] = b + (ptrdiff_t) (j + (q < w ? q : 0)) * n;
        for (int k = 0; k < n; k++) {
            int i = forward ? k : n - 1 - k, lo = forward ? 0 : i + 1, hi = forward ? i : n;
            const double *ci = c + (ptrdiff_t) i * n;
            double s0 = x[0][i], s1 = x[1][i], s2 = x[2][i], s3 = x[3][i];
            for (int l = lo; l < hi; l++) {
                double v = ci[l];
                s0 -= v * x[0][l];
                s1 -= v * x[1][l];
                s2 -= v * x[2][l];
                s3 -= v * x[3][l];
            }
            /* with fewer than four columns left the spare lanes repeat
             * column j, whose own store comes last */
            x[3][i] = s3 / ci[i];
            x[2][i] = s2 / ci[i];
            x[1][i] = s1 / ci[i];
            x[0][i] = s0 / ci[i];
        }
    }
}

/* b (n x m) <- (R'R)^-1 b for the upper factor r (n x n), by the two
 * substitutions as dot products over contiguous entries: R's columns for
 * R'z = b, the columns of a transposed copy (R's rows) for R x = z, with the
 * sums in the order of the plain row-by-row loops, so the result is theirs
 * bit for bit.  Walking R by rows strode n doubles per entry, and one sum
 * at a time waited on each add: 0.8 s for n = m = 1000 (2.5 GFLOP/s, AMD
 * EPYC Zen 5). */
void bochner_cholesky_solve(const double *r, int n, double *b, int m)
{
    double *rt = (double *) R_alloc((size_t) n * n, sizeof(double));
    bochner_transpose(r, n, n, n, rt, n);
    triangular_substitute(r, n, b, m, 1);
    triangular_substitute(rt, n, b, m, 0);
}
