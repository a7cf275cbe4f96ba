/* ridge_path.c -- the whole lambda path of rff_ridge() without LAPACK.
 *
 * The symmetric system A (Zs'Zs, or Zs Zs' from the dual side) is reduced to
 * a tridiagonal T = Q'AQ by Householder reflections (LAPACK's dsytrd, upper
 * variant, re-derived): panels of TRD_NB columns, their rank-2k update of the
 * leading matrix on the package's product (bochner_product, upper tiles),
 * the symmetric matrix-vector products a column at a time, on one thread.  Q is never formed: it is kept as its reflectors, applied in blocks
 * of QB (compact WY, I - V T V', again on the product).  Then
 *   - the eigenvalues of T by implicit QL, the rotations applied to g = Q'B
 *     only, give e and c = V'B (V the eigenvectors of A): all that GCV needs,
 *     with no eigenvectors (O(D^2 m) after the reduction);
 *   - the leverages and fitted values along the path for leave-one-out come
 *     from u_i = Q'z_i and LDL' factorisations of T + lambda I (O(D) each):
 *     h_i = u_i'(T + lambda I)^-1 u_i.
 * The reduction costs 4/3 D^3 flops (half on the product, half in the
 * matrix-vector products, which stream A from memory); LAPACK's dsyevr with
 * eigenvectors, behind eigen(), costs about 2.5 times that, on R's BLAS.  Every entry is
 * computed in an order fixed by the sizes alone: identical for any number
 * of threads and any BLAS. */
#include "bochner.h"
#include <math.h>
#include <string.h>
#include <float.h>
#include <R_ext/Utils.h>

#define TRD_NB 32        /* panel width of the reduction */
#define TRD_NX 128       /* below this order, the unblocked reduction */
#define SYMV_COLS 128    /* column block of the symmetric product */
#define QB BOCHNER_RIDGE_QB   /* reflectors per block when applying Q */
#define LOO_ROWS 32      /* rows per block of the leverage recursions */
#define QL_MAXIT 60      /* QL iterations per eigenvalue */

/* 1-based views of column-major matrices, as in the LAPACK sources */
#define A_(r, c) a[((r) - 1) + ((ptrdiff_t) (c) - 1) * lda]
#define W_(r, c) w[((r) - 1) + ((ptrdiff_t) (c) - 1) * ldw]

/* ------------------------------------------------------------------------ */
/* y = A x for the symmetric n x n A whose upper triangle is read: fixed
 * blocks of SYMV_COLS columns, each writing its own partial vector, summed
 * in block order (the same sums for any number of threads). */
typedef struct {
    const double *a, *x;
    ptrdiff_t lda;
    int n;
    double *part;
} symv_job;

static void symv_block(void *ctx, R_xlen_t b, int thread)
{
    (void) thread;
    const symv_job *p = (const symv_job *) ctx;
    int j0 = (int) b * SYMV_COLS, j1 = p->n - j0 < SYMV_COLS ? p->n : j0 + SYMV_COLS;
    double *restrict y = p->part + (ptrdiff_t) b * p->n;
    const double *restrict x = p->x;
    memset(y, 0, sizeof(double) * (size_t) j1);
    int j = j0;
    /* four columns a sweep: each load of x[i] and y[i] serves four columns */
    for (; j + 4 <= j1; j += 4) {
        const double *restrict a0 = p->a + (ptrdiff_t) j * p->lda, *restrict a1 = a0 + p->lda,
                     *restrict a2 = a1 + p->lda, *restrict a3 = a2 + p->lda;
        double x0 = x[j], x1 = x[j + 1], x2 = x[j + 2], x3 = x[j + 3];
        double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
#pragma omp simd reduction(+:s0, s1, s2, s3)
        for (int i = 0; i < j; i++) {
            double xi = x[i];
            y[i] += a0[i] * x0 + a1[i] * x1 + a2[i] * x2 + a3[i] * x3;
            s0 += a0[i] * xi;
            s1 += a1[i] * xi;
            s2 += a2[i] * xi;
            s3 += a3[i] * xi;
        }
        /* the 4 x 4 diagonal block, upper triangle */
        const double *aq[4] = {a0, a1, a2, a3};
        double xq[4] = {x0, x1, x2, x3}, sq[4] = {s0, s1, s2, s3};
        for (int q = 0; q < 4; q++) {
            for (int r = 0; r < q; r++) {
                y[j + r] += aq[q][j + r] * xq[q];
                sq[q] += aq[q][j + r] * x[j + r];
            }
            y[j + q] += sq[q] + aq[q][j + q] * xq[q];
        }
    }
    for (; j < j1; j++) {
        const double *restrict aj = p->a + (ptrdiff_t) j * p->lda;
        double xj = x[j], s = 0.0;
#pragma omp simd reduction(+:s)
        for (int i = 0; i < j; i++) {
            y[i] += aj[i] * xj;
            s += aj[i] * x[i];
        }
        y[j] += s + aj[j] * xj;
    }
}

static void symv_upper(const double *a, ptrdiff_t lda, int n, const double *x, double *y,
                       double *part)
{
    if (n <= 0) return;
    R_xlen_t nb = (n + SYMV_COLS - 1) / SYMV_COLS;
    symv_job p = {a, x, lda, n, part};
    /* on one thread: the reduction calls this once per column, and a
     * parallel region per column waits, each time, for a thread the system
     * may have descheduled (on a busy 2-core machine a second thread made
     * the reduction 8 times slower at D = 4000; bench/ridge_path.md) */
    bochner_parallel_blocks(nb, 1, 4, symv_block, &p);
    memset(y, 0, sizeof(double) * (size_t) n);
    for (R_xlen_t b = 0; b < nb; b++) {
        int j1 = n - (int) b * SYMV_COLS < SYMV_COLS ? n : (int) (b + 1) * SYMV_COLS;
        const double *pb = part + b * n;
        for (int i = 0; i < j1; i++) y[i] += pb[i];
    }
}

static double dot(const double *restrict x, const double *restrict y, int n)
{
    double s = 0.0;
#pragma omp simd reduction(+:s)
    for (int i = 0; i < n; i++) s += x[i] * y[i];
    return s;
}

/* y += s x */
static void axpy(double s, const double *restrict x, double *restrict y, int n)
{
#pragma omp simd
    for (int i = 0; i < n; i++) y[i] += s * x[i];
}

/* LAPACK's dlarfg: H = I - tau v v' with v(n) = 1 maps (x, alpha) to
 * (0, beta); x (length n - 1) becomes v's other entries, alpha beta. */
static void householder(int n, double *alpha, double *x, double *tau)
{
    *tau = 0.0;
    if (n <= 1) return;
    double scale = 0.0;
    for (int i = 0; i < n - 1; i++) if (fabs(x[i]) > scale) scale = fabs(x[i]);
    if (scale == 0.0) return;
    double ss = 0.0;
    for (int i = 0; i < n - 1; i++) ss += (x[i] / scale) * (x[i] / scale);
    double xnorm = scale * sqrt(ss);
    double beta = -copysign(hypot(*alpha, xnorm), *alpha);
    *tau = (beta - *alpha) / beta;
    double f = 1.0 / (*alpha - beta);
    for (int i = 0; i < n - 1; i++) x[i] *= f;
    *alpha = beta;
}

/* LAPACK's dlatrd, upper: reduces the last nb columns of the leading N x N
 * matrix and forms W (N x nb, ldw) for the update A - V W' - W V'. */
static void panel(double *a, ptrdiff_t lda, int N, int nb, double *e, double *tau,
                  double *w, ptrdiff_t ldw, double *part, double *tmp)
{
    for (int I = N; I >= N - nb + 1; I--) {
        int IW = I - N + nb;
        if (I < N) {
            for (int k = I + 1; k <= N; k++) {
                axpy(-W_(I, IW + k - I), &A_(1, k), &A_(1, I), I);
                axpy(-A_(I, k), &W_(1, IW + k - I), &A_(1, I), I);
            }
        }
        if (I > 1) {
            householder(I - 1, &A_(I - 1, I), &A_(1, I), &tau[I - 2]);
            e[I - 2] = A_(I - 1, I);
            A_(I - 1, I) = 1.0;
            double *wi = &W_(1, IW), *v = &A_(1, I);
            symv_upper(a, lda, I - 1, v, wi, part);
            if (I < N) {
                int nc = N - I;
                for (int q = 0; q < nc; q++) tmp[q] = dot(&W_(1, IW + 1 + q), v, I - 1);
                for (int q = 0; q < nc; q++) axpy(-tmp[q], &A_(1, I + 1 + q), wi, I - 1);
                for (int q = 0; q < nc; q++) tmp[q] = dot(&A_(1, I + 1 + q), v, I - 1);
                for (int q = 0; q < nc; q++) axpy(-tmp[q], &W_(1, IW + 1 + q), wi, I - 1);
            }
            double t = tau[I - 2];
            for (int r = 0; r < I - 1; r++) wi[r] *= t;
            double alpha = -0.5 * t * dot(wi, v, I - 1);
            axpy(alpha, v, wi, I - 1);
        }
    }
}

/* LAPACK's dsytd2, upper, on the leading n x n matrix. */
static void reduce_unblocked(double *a, ptrdiff_t lda, int n, double *d, double *e,
                             double *tau, double *x, double *part)
{
    for (int I = n - 1; I >= 1; I--) {
        double taui;
        householder(I, &A_(I, I + 1), &A_(1, I + 1), &taui);
        e[I - 1] = A_(I, I + 1);
        if (taui != 0.0) {
            A_(I, I + 1) = 1.0;
            const double *v = &A_(1, I + 1);
            symv_upper(a, lda, I, v, x, part);
            for (int r = 0; r < I; r++) x[r] *= taui;
            double alpha = -0.5 * taui * dot(x, v, I);
            axpy(alpha, v, x, I);
            for (int j = 1; j <= I; j++) {       /* A -= v x' + x v', upper */
                double vj = v[j - 1], xj = x[j - 1];
                double *aj = &A_(1, j);
#pragma omp simd
                for (int r = 0; r < j; r++) aj[r] -= v[r] * xj + x[r] * vj;
            }
            A_(I, I + 1) = e[I - 1];
        }
        d[I] = A_(I + 1, I + 1);
        tau[I - 1] = taui;
    }
    d[0] = A_(1, 1);
}

/* LAPACK's dsytrd, upper: A = Q T Q' with T = tridiag(e, d, e) (e[i] joins
 * i and i + 1), Q = H(n-1) ... H(1), H(i) = I - tau[i-1] v v', v(i) = 1,
 * v(1:i-1) in A(1:i-1, i+1), v(i+1:n) = 0. */
static void tridiagonalise(double *a, int n, double *d, double *e, double *tau, int nthreads)
{
    ptrdiff_t lda = n, ldw = n;
    int nb = TRD_NB;
    R_xlen_t nblk = (n + SYMV_COLS - 1) / SYMV_COLS;
    double *part = (double *) R_alloc((size_t) (nblk > 0 ? nblk : 1) * (size_t) n, sizeof(double));
    double *tmp = (double *) R_alloc((size_t) n + nb, sizeof(double));
    int kk = n;
    if (n > TRD_NX) {
        double *w = (double *) R_alloc((size_t) n * nb, sizeof(double));
        double *left = (double *) R_alloc((size_t) n * 2 * nb, sizeof(double));
        double *right = (double *) R_alloc((size_t) n * 2 * nb, sizeof(double));
        kk = n - ((n - TRD_NX + nb - 1) / nb) * nb;
        for (int I = n - nb + 1; I >= kk + 1; I -= nb) {
            panel(a, lda, I + nb - 1, nb, e, tau, w, ldw, part, tmp);
            /* A(1:m, 1:m) -= [V W] [W'; V'] on and above the diagonal */
            int m = I - 1;
            double *V = &A_(1, I);
            for (int q = 0; q < nb; q++) {
                memcpy(left + (ptrdiff_t) q * m, V + (ptrdiff_t) q * lda, sizeof(double) * (size_t) m);
                memcpy(left + (ptrdiff_t) (nb + q) * m, w + (ptrdiff_t) q * ldw,
                       sizeof(double) * (size_t) m);
            }
            bochner_transpose(w, ldw, m, nb, right, 2 * nb);
            bochner_transpose(V, lda, m, nb, right + nb, 2 * nb);
            for (ptrdiff_t q = 0; q < (ptrdiff_t) m * 2 * nb; q++) right[q] = -right[q];
            bochner_product(left, m, right, 2 * nb, m, m, 2 * nb, a, lda, 1, 1, nthreads);
            for (int j = I; j <= I + nb - 1; j++) {
                A_(j - 1, j) = e[j - 2];
                d[j - 1] = A_(j, j);
            }
        }
    }
    reduce_unblocked(a, lda, kk, d, e, tau, tmp, part);
}

/* ------------------------------------------------------------------------ */
/* Q as blocks of reflectors: V (n x (n-1)) holds v of H(n-1), H(n-2), ...,
 * H(1) in that order (the order they act on the rows of X in X Q), with its
 * unit and zeros explicit; group g (columns g QB ...) has the upper
 * triangular T_g (QB x QB) of H(a) H(a+1)... = I - V_g T_g V_g' (dlarft,
 * forward). */
static void reflector_blocks(const double *a, int n, const double *tau, double *V,
                             double *T, double *tq)
{
    ptrdiff_t lda = n;
    int nr = n - 1;
    for (int c = 0; c < nr; c++) {
        int k = n - 1 - c;                 /* H(k): support rows 1..k */
        double *vc = V + (ptrdiff_t) c * n;
        for (int r = 0; r < k - 1; r++) vc[r] = A_(r + 1, k + 1);
        vc[k - 1] = 1.0;
        for (int r = k; r < n; r++) vc[r] = 0.0;
        tq[c] = tau[k - 1];
    }
    int ng = (nr + QB - 1) / QB;
    for (int g = 0; g < ng; g++) {
        int c0 = g * QB, cnt = nr - c0 < QB ? nr - c0 : QB;
        double *Tg = T + (ptrdiff_t) g * QB * QB;
        memset(Tg, 0, sizeof(double) * QB * QB);
        for (int j = 0; j < cnt; j++) {
            int len = n - 1 - (c0 + j);        /* support of v_j */
            const double *vj = V + (ptrdiff_t) (c0 + j) * n;
            double t = tq[c0 + j], *tj = Tg + (ptrdiff_t) j * QB;
            for (int q = 0; q < j; q++) tj[q] = -t * dot(V + (ptrdiff_t) (c0 + q) * n, vj, len);
            /* tj(0:j) <- T(0:j, 0:j) tj(0:j), upper triangular, top down */
            for (int q = 0; q < j; q++) {
                double s = 0.0;
                for (int l = q; l < j; l++) s += Tg[q + (ptrdiff_t) l * QB] * tj[l];
                tj[q] = s;
            }
            tj[j] = t;
        }
    }
}

/* X (r x n, ldx) <- X Q, by the blocks of reflectors. */
static void apply_q_rows(double *X, int r, int n, const double *V, const double *T,
                         int nthreads)
{
    int nr = n - 1, ng = (nr + QB - 1) / QB;
    if (r <= 0 || nr <= 0) return;
    double *xv = (double *) R_alloc((size_t) r * QB, sizeof(double));
    double *xvt = (double *) R_alloc((size_t) r * QB, sizeof(double));
    double *nvt = (double *) R_alloc((size_t) QB * n, sizeof(double));
    for (int g = 0; g < ng; g++) {
        int c0 = g * QB, cnt = nr - c0 < QB ? nr - c0 : QB, len = n - 1 - c0;
        const double *Vg = V + (ptrdiff_t) c0 * n;
        bochner_product(X, r, Vg, n, r, cnt, len, xv, r, 0, 0, nthreads);
        bochner_product(xv, r, T + (ptrdiff_t) g * QB * QB, QB, r, cnt, cnt, xvt, r, 0, 0,
                        nthreads);
        bochner_transpose(Vg, n, len, cnt, nvt, cnt);
        for (ptrdiff_t q = 0; q < (ptrdiff_t) cnt * len; q++) nvt[q] = -nvt[q];
        bochner_product(xvt, r, nvt, cnt, r, len, cnt, X, r, 1, 0, nthreads);
    }
}

/* B (n x m) <- Q'B, one reflector at a time: H(1) ... H(n-1) B. */
static void apply_qt_left(double *B, int n, int m, const double *V, const double *tq)
{
    for (int c = 0; c < n - 1; c++) {
        int len = n - 1 - c;
        const double *v = V + (ptrdiff_t) c * n;
        for (int j = 0; j < m; j++) {
            double *b = B + (ptrdiff_t) j * n;
            axpy(-tq[c] * dot(v, b, len), v, b, len);
        }
    }
}

/* ------------------------------------------------------------------------ */
/* Eigenvalues of the symmetric tridiagonal (d, e), e[i] joining i and i+1,
 * by implicit QL with Wilkinson shifts (tql1); each rotation is applied to
 * the rows of G (n x m), so that G becomes S'G for the eigenvectors S of T.
 * 0, or 1 when an eigenvalue did not converge.
 *
 * An off-diagonal is negligible when it is below eps times the norm of T
 * (tnorm, the largest row sum, which the rotations do not change), as in
 * EISPACK's tql1, not only below eps times its two diagonal neighbours.
 * The neighbour test alone never deflates a block whose entries are all at
 * rounding level: a rank-deficient Gram matrix (more features than rows, or
 * fewer distinct directions than features) has many eigenvalues of order
 * eps ||T|| whose off-diagonals stay of the same order under QL, and the
 * iteration ran out.  The norm test accepts an absolute error of eps ||T||
 * in each eigenvalue, which is what eigen() (LAPACK) promises too, and the
 * ridge path never resolves below 1e-10 of the trace. */
static int tridiagonal_ql(double *d, double *e, int n, double *G, int m)
{
    if (n <= 1) return 0;
    e[n - 1] = 0.0;
    double tnorm = 0.0;
    for (int i = 0; i < n; i++) {
        double row = fabs(d[i]) + fabs(e[i]) + (i > 0 ? fabs(e[i - 1]) : 0.0);
        if (row > tnorm) tnorm = row;
    }
    for (int l = 0; l < n; l++) {
        int iter = 0, mm;
        do {
            for (mm = l; mm < n - 1; mm++) {
                double dd = fabs(d[mm]) + fabs(d[mm + 1]);
                if (fabs(e[mm]) <= DBL_EPSILON * (dd > tnorm ? dd : tnorm)) break;
            }
            if (mm != l) {
                if (iter++ == QL_MAXIT) return 1;
                double g = (d[l + 1] - d[l]) / (2.0 * e[l]);
                double r = hypot(g, 1.0);
                g = d[mm] - d[l] + e[l] / (g + copysign(r, g));
                double s = 1.0, c = 1.0, p = 0.0;
                int i;
                for (i = mm - 1; i >= l; i--) {
                    double f = s * e[i], b = c * e[i];
                    e[i + 1] = (r = hypot(f, g));
                    if (r == 0.0) {
                        d[i + 1] -= p;
                        e[mm] = 0.0;
                        break;
                    }
                    s = f / r;
                    c = g / r;
                    g = d[i + 1] - p;
                    r = (d[i] - g) * s + 2.0 * c * b;
                    d[i + 1] = g + (p = s * r);
                    g = c * r - b;
                    for (int j = 0; j < m; j++) {
                        double *gj = G + (ptrdiff_t) j * n, t = gj[i + 1];
                        gj[i + 1] = s * gj[i] + c * t;
                        gj[i] = c * gj[i] - s * t;
                    }
                }
                if (r == 0.0 && i >= l) continue;
                d[l] -= p;
                e[l] = g;
                e[mm] = 0.0;
            }
        } while (mm != l);
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* The entry points' work (their wrappers are in api_ridge.c). */

/* For the symmetric a (n x n, upper triangle read, overwritten) and B
 * (n x m): the eigenvalues of a in decreasing order (vals), c = V'B in that
 * order, g = Q'B, T's diagonal d and off-diagonal e, Q's reflectors VV
 * (n x (n-1)), their blocks TT and factors tq.  Nonzero when the QL
 * iteration did not converge. */
int bochner_ridge_spectrum(double *a, int n, const double *B, int m, int nth, double *vals,
                           double *cc, double *gg, double *d, double *e, double *VV,
                           double *TT, double *tq)
{
    double *tau = (double *) R_alloc((size_t) n, sizeof(double));
    memset(e, 0, sizeof(double) * (size_t) n);
    tridiagonalise(a, n, d, e, tau, nth);
    reflector_blocks(a, n, tau, VV, TT, tq);
    memcpy(gg, B, sizeof(double) * (size_t) n * m);
    apply_qt_left(gg, n, m, VV, tq);
    /* QL on copies of (d, e), rotating a copy of g */
    double *ev = (double *) R_alloc((size_t) n, sizeof(double));
    double *ew = (double *) R_alloc((size_t) n, sizeof(double));
    double *G = (double *) R_alloc((size_t) n * (m > 0 ? m : 1), sizeof(double));
    memcpy(ev, d, sizeof(double) * (size_t) n);
    memcpy(ew, e, sizeof(double) * (size_t) n);
    memcpy(G, gg, sizeof(double) * (size_t) n * m);
    if (tridiagonal_ql(ev, ew, n, G, m)) return 1;
    int *idx = (int *) R_alloc((size_t) n, sizeof(int));
    for (int i = 0; i < n; i++) idx[i] = i;
    revsort(ev, idx, n);                   /* decreasing, idx alongside */
    for (int i = 0; i < n; i++) {
        vals[i] = ev[i];
        for (int j = 0; j < m; j++) cc[i + (ptrdiff_t) j * n] = G[idx[i] + (ptrdiff_t) j * n];
    }
    return 0;
}

/* X Q for the reflectors of a spectrum, in place (X: r x n). */
void bochner_ridge_q_rows(double *X, int r, int n, const double *VV, const double *TT, int nth)
{
    apply_q_rows(X, r, n, VV, TT, nth);
}

/* Leverages and fitted values along the path, for the rows U (r x n, rows
 * u_i = Q'z_i): quad[i, l] = u_i'(T + lambda_l I)^-1 u_i, and
 * cross[, (l-1) m + j] = U (T + lambda_l I)^-1 g[, j]. */
typedef struct {
    const double *U, *lo, *ip;
    int r, n, L;
    double *quad, *scratch;
} loo_job;

static void loo_block(void *ctx, R_xlen_t blk, int thread)
{
    const loo_job *p = (const loo_job *) ctx;
    int i0 = (int) blk * LOO_ROWS, nb = p->r - i0 < LOO_ROWS ? p->r - i0 : LOO_ROWS, L = p->L;
    double *w = p->scratch + (ptrdiff_t) thread * 2 * L * LOO_ROWS, *acc = w + L * LOO_ROWS;
    memset(w, 0, sizeof(double) * 2 * L * LOO_ROWS);
    for (int k = 0; k < p->n; k++) {
        const double *restrict u = p->U + i0 + (ptrdiff_t) k * p->r;
        for (int l = 0; l < L; l++) {
            double lk = k > 0 ? p->lo[(k - 1) + (ptrdiff_t) l * p->n] : 0.0;
            double ipk = p->ip[k + (ptrdiff_t) l * p->n];
            double *restrict wl = w + l * LOO_ROWS, *restrict al = acc + l * LOO_ROWS;
#pragma omp simd
            for (int i = 0; i < nb; i++) {
                double v = u[i] - lk * wl[i];
                wl[i] = v;
                al[i] += v * v * ipk;
            }
        }
    }
    for (int l = 0; l < L; l++)
        memcpy(p->quad + i0 + (ptrdiff_t) l * p->r, acc + l * LOO_ROWS, sizeof(double) * (size_t) nb);
}

/* For the tridiagonal T (d, e; n) and every lambda (L): quad (r x L) and
 * cross (r x L m) of the rows U (r x n) and g (n x m); 'bl' scratch. */
void bochner_ridge_path_rows(const double *dv, const double *ev, int n, const double *lam,
                             int L, const double *U, int r, const double *g, int m, int nth,
                             double *quad, double *cross)
{
    /* LDL' of T + lambda I for every lambda: unit lower factor lo, pivots 1/ip */
    double *lo = (double *) R_alloc((size_t) n * L, sizeof(double));
    double *ip = (double *) R_alloc((size_t) n * L, sizeof(double));
    double *bl = (double *) R_alloc((size_t) n * L * (m > 0 ? m : 1), sizeof(double));
    for (int l = 0; l < L; l++) {
        double *lol = lo + (ptrdiff_t) l * n, *ipl = ip + (ptrdiff_t) l * n;
        if (!(lam[l] > 0.0) || !R_FINITE(lam[l])) error("'lambda' must be positive and finite");
        double piv = dv[0] + lam[l];
        for (int k = 0; k < n; k++) {
            if (!(piv > 0.0)) error("T + lambda I is not numerically positive definite");
            ipl[k] = 1.0 / piv;
            if (k < n - 1) {
                lol[k] = ev[k] * ipl[k];
                piv = dv[k + 1] + lam[l] - lol[k] * ev[k];
            } else lol[k] = 0.0;
        }
        for (int j = 0; j < m; j++) {      /* (T + lambda I)^-1 g[, j] */
            double *x = bl + (ptrdiff_t) (l * m + j) * n;
            const double *gj = g + (ptrdiff_t) j * n;
            x[0] = gj[0];
            for (int k = 1; k < n; k++) x[k] = gj[k] - lol[k - 1] * x[k - 1];
            for (int k = 0; k < n; k++) x[k] *= ipl[k];
            for (int k = n - 2; k >= 0; k--) x[k] -= lol[k] * x[k + 1];
        }
    }
    if (r > 0) {
        R_xlen_t nblk = (r + LOO_ROWS - 1) / LOO_ROWS;
        int nt = bochner_threads_for(nth, 4.0 * r * (double) n * L);
        double *scratch = (double *) R_alloc((size_t) nt * 2 * L * LOO_ROWS, sizeof(double));
        loo_job job = {U, lo, ip, r, n, L, quad, scratch};
        bochner_parallel_blocks(nblk, nt, 4, loo_block, &job);
        if (m > 0) bochner_product(U, r, bl, n, r, L * m, n, cross, r, 0, 0, nth);
    }
}
