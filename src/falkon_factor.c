/* FALKON's m x m algebra, in C: the factors and the solves of the
 * preconditioner (Rudi, Carratino & Rosasco 2017), apart from the passes
 * over the rows in falkon.c.
 *
 *   falkon_factor_*    the packed preconditioner of a fit: T and A in one
 *                      m x m array, factored and solved in place
 *
 * The .Call wrappers, which hold the array in an external pointer, are in
 * api_falkon.c.
 *
 * Every product runs on the package's kernel (gemm.c, products.c) and the
 * Cholesky on cholesky.c, in orders fixed by the sizes alone, so the
 * results do not depend on the thread count or the BLAS. */
#include "bochner.h"
#include <float.h>
#include <math.h>
#include <string.h>

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
/* r: the nb x nb diagonal block (upper, leading dimension ldr), x: its rows
 * of the right-hand sides (leading dimension ldx). */
static void diagonal_solve(const double *r, ptrdiff_t ldr, int nb, double *x, ptrdiff_t ldx,
                           int k, int trans)
{
    if (trans) {
        double buf[SOLVE_NB * DIAG_COLS];
        for (int g0 = 0; g0 < k; g0 += DIAG_COLS) {
            int nc = k - g0 < DIAG_COLS ? k - g0 : DIAG_COLS;
            for (int c = 0; c < DIAG_COLS; c++) {
                const double *xj = x + (ptrdiff_t) (g0 + (c < nc ? c : 0)) * ldx;
                for (int i = 0; i < nb; i++) buf[i * DIAG_COLS + c] = xj[i];
            }
            for (int i = 0; i < nb; i++) {
                const double *ri = r + (ptrdiff_t) i * ldr;
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
                double *xj = x + (ptrdiff_t) (g0 + c) * ldx;
                for (int i = 0; i < nb; i++) xj[i] = buf[i * DIAG_COLS + c];
            }
        }
        return;
    }
    for (int j = 0; j < k; j++) {
        double *xj = x + (ptrdiff_t) j * ldx;
        for (int i = nb - 1; i >= 0; i--) {
            const double *ri = r + (ptrdiff_t) i * ldr;
            double xi = xj[i] / ri[i];
            xj[i] = xi;
            for (int l = 0; l < i; l++) xj[l] -= ri[l] * xi;
        }
    }
}

/* The triangular factor R of a solve: upper in place (lower = 0: R[i, j]
 * at r[i + j m], i <= j), or the packed preconditioner's A (lower = 1: its
 * strict upper part stored transposed in r's strict lower triangle, A[i, j]
 * at r[j + i m], its diagonal in d). */
typedef struct {
    const double *r, *d;
    int m, k, trans, lower, groups;
    double *b, *tmp;           /* tmp: SOLVE_NB x k in all, split like the columns */
    double *diag;              /* lower: SOLVE_NB^2 per group, the diagonal block unpacked */
} trisolve_job;

static void trisolve_group(void *ctx, R_xlen_t g, int thread)
{
    (void) thread;
    const trisolve_job *p = (const trisolve_job *) ctx;
    int m = p->m;
    const double *r = p->r;
    int j0 = (int) ((R_xlen_t) p->k * g / p->groups);
    int k = (int) ((R_xlen_t) p->k * (g + 1) / p->groups) - j0;
    double *b = p->b + (ptrdiff_t) j0 * m;
    double *tmp = p->tmp + (ptrdiff_t) j0 * SOLVE_NB;
    double *dg = p->lower ? p->diag + (ptrdiff_t) g * SOLVE_NB * SOLVE_NB : NULL;
    int nblk = (m + SOLVE_NB - 1) / SOLVE_NB;
    for (int q = 0; q < nblk; q++) {
        int blk = p->trans ? q : nblk - 1 - q;
        int i0 = blk * SOLVE_NB, nb = m - i0 < SOLVE_NB ? m - i0 : SOLVE_NB, i1 = i0 + nb;
        /* tmp = (rows i0..i1 of R, columns after them) X_after, or (rows
         * i0..i1 of R', columns before them) X_before; read in place, R' by
         * the transposed product where R is upper, R by it where R is
         * stored transposed */
        int inner = p->trans ? i0 : m - i1;
        if (inner > 0) {
            if (p->trans == p->lower)
                bochner_gemm(r + (p->lower ? i0 : i0 + (ptrdiff_t) i1 * m), m,
                             b + (p->trans ? 0 : i1), m, nb, k, inner, tmp, nb, 0);
            else
                bochner_gemm_tn(r + (p->lower ? i1 + (ptrdiff_t) i0 * m : (ptrdiff_t) i0 * m), m,
                                b + (p->trans ? 0 : i1), m, nb, k, inner, tmp, nb, 0);
            for (int j = 0; j < k; j++)
                for (int i = 0; i < nb; i++) b[i0 + i + (ptrdiff_t) j * m] -= tmp[i + (ptrdiff_t) j * nb];
        }
        if (p->lower) {
            for (int j = 0; j < nb; j++) {
                for (int i = 0; i < j; i++)
                    dg[i + (ptrdiff_t) j * nb] = r[i0 + j + (ptrdiff_t) (i0 + i) * m];
                dg[j + (ptrdiff_t) j * nb] = p->d[i0 + j];
            }
            diagonal_solve(dg, nb, nb, b + i0, m, k, p->trans);
        } else {
            diagonal_solve(r + i0 + (ptrdiff_t) i0 * m, m, nb, b + i0, m, k, p->trans);
        }
    }
}

/* tmp: NULL, or SOLVE_NB x k doubles of scratch (a caller solving many
 * times passes its own: R_alloc'd memory is only freed by a collection) */
static void packed_trisolve(const double *r, const double *d, int lower, int m, double *b,
                            int k, int trans, int nthreads, double *tmp)
{
    int nth = bochner_falkon_threads(nthreads, (double) m * (double) m * (double) k / 2.0);
    if (nth > k) nth = k;
    trisolve_job p = {r, d, m, k, trans, lower, nth, b,
                      tmp ? tmp : (double *) R_alloc((size_t) SOLVE_NB * (size_t) k,
                                                     sizeof(double)),
                      lower ? (double *) R_alloc((size_t) SOLVE_NB * SOLVE_NB * (size_t) nth,
                                                 sizeof(double)) : NULL};
    bochner_parallel_blocks(nth, nth, 1, trisolve_group, &p);
}

/* ---------------------------------------------------------------------- */
/* The packed preconditioner: one m x m array for both factors, as in the
 * FALKON reference code.  Its upper triangle (diagonal included) holds T,
 * T'T = K_mm + shift I; its strict lower triangle holds A' for the current
 * lambda, A'A = s T T' / m + lambda I, A's diagonal in a separate m-vector.
 * The array lives in an external pointer (only these routines touch it):
 * list(M, aux, G), aux = c(dT (m), dA (m), lambda, s, state), G NULL or
 * T T' / m kept (falkon_factor_keep_g), state 0: T only,
 * 1: T and A, 2: a preconditioner interrupted half way (M's diagonal holds
 * G or A, restored from dT on the next call). */
#define PK_TILE 240            /* output tiles of G and of the trailing updates */
#define PK_NB 192              /* block columns of the lower Cholesky */

typedef bochner_falkon_packed packed;

/* A factor read back after an interrupted preconditioner (state 2): T's
 * diagonal restored from dT. */
void bochner_falkon_packed_restore(packed *p)
{
    double *state = p->aux + 2 * (ptrdiff_t) p->m + 2;
    if (*state == 2) {
        for (int i = 0; i < p->m; i++) p->M[i + (ptrdiff_t) i * p->m] = p->aux[i];
        *state = 0;
    }
}

/* The clean h x h diagonal block of T at rows/columns i0.. (zeros below
 * its diagonal, the diagonal from dT), into buf (leading dimension h). */
static void t_diag_block(const packed *p, int i0, int h, double *buf)
{
    for (int j = 0; j < h; j++) {
        const double *mj = p->M + i0 + (ptrdiff_t) (i0 + j) * p->m;
        double *bj = buf + (ptrdiff_t) j * h;
        for (int i = 0; i < j; i++) bj[i] = mj[i];
        bj[j] = p->aux[i0 + j];
        for (int i = j + 1; i < h; i++) bj[i] = 0.0;
    }
}

/* G = T T' / m into the lower triangle and diagonal, from T's strict upper
 * triangle and dT, by column blocks J: Q = T[J, j0:]' (a clean transposed
 * panel), then each tile I >= J of G is T[I, i0:] Q[i0 - j0:], split at
 * the end of T's diagonal block (a clean copy) and the strict upper rest
 * read in place.  Tiles write only the lower triangle and the diagonal,
 * which no later read touches, so the tiles of a block run on the threads;
 * each entry is one chain in an order fixed by m. */
typedef struct {
    packed *p;
    const double *q;
    int j0, w, nthreads;
    double *buf;               /* per thread: PK_TILE^2 diagonal block + PK_TILE^2 tile */
} tt_job;

static void tt_tile(void *ctx, R_xlen_t t, int thread)
{
    const tt_job *jb = (const tt_job *) ctx;
    const packed *p = jb->p;
    int m = p->m, j0 = jb->j0, w = jb->w;
    int i0 = j0 + (int) t * PK_TILE, h = m - i0 < PK_TILE ? m - i0 : PK_TILE, i1 = i0 + h;
    ptrdiff_t ldq = m - j0;
    double *dblk = jb->buf + (ptrdiff_t) thread * 2 * PK_TILE * PK_TILE;
    double *out = dblk + PK_TILE * PK_TILE;
    t_diag_block(p, i0, h, dblk);
    bochner_gemm(dblk, h, jb->q + (i0 - j0), ldq, h, w, h, out, h, 0);
    if (m > i1)
        bochner_gemm(p->M + i0 + (ptrdiff_t) i1 * m, m, jb->q + (i1 - j0), ldq, h, w, m - i1,
                     out, h, 1);
    double scale = 1.0 / (double) m;
    for (int j = 0; j < w; j++)
        for (int i = (i0 == j0 ? j : 0); i < h; i++)
            p->M[i0 + i + (ptrdiff_t) (j0 + j) * m] = out[i + (ptrdiff_t) j * h] * scale;
}

static void packed_tt(packed *p, int nthreads)
{
    int m = p->m;
    double *q = (double *) R_alloc((size_t) m * PK_TILE, sizeof(double));
    double *buf = (double *) R_alloc((size_t) 2 * PK_TILE * PK_TILE * nthreads, sizeof(double));
    for (int j0 = 0; j0 < m; j0 += PK_TILE) {
        int w = m - j0 < PK_TILE ? m - j0 : PK_TILE;
        ptrdiff_t ldq = m - j0;
        bochner_transpose(p->M + j0 + (ptrdiff_t) j0 * m, m, w, m - j0, q, ldq);
        for (int j = 0; j < w; j++) {          /* the transposed diagonal block, clean */
            for (int l = 0; l < j; l++) q[l + j * ldq] = 0.0;
            q[j + j * ldq] = p->aux[j0 + j];
        }
        tt_job jb = {p, q, j0, w, nthreads, buf};
        int tiles = (m - j0 + PK_TILE - 1) / PK_TILE;
        bochner_parallel_blocks(tiles, bochner_threads_for(nthreads, (double) w * (m - j0) * (m - j0)), 4,
                                tt_tile, &jb);
    }
}

/* The trailing update of the lower Cholesky: the lower triangle (diagonal
 * included) of M[k1:, k1:] minus L21 L21' (L21 = X', X the solved panel),
 * as L21 (-X), by tiles on and below the diagonal; a diagonal tile goes
 * through a buffer so that T above it is untouched. */
typedef struct {
    double *a;                 /* M + k1 + k1 m */
    const double *l21, *xn;    /* L21 = X' in place (M + k1 + k0 m) and -X */
    int m, kb, nr, nt;
    double *buf;
} trail_job;

static void trail_tile(void *ctx, R_xlen_t t, int thread)
{
    const trail_job *jb = (const trail_job *) ctx;
    /* tile t of the lower triangle, column by column: (bi, bj), bi >= bj */
    int bj = 0;
    R_xlen_t rest = t;
    while (rest >= jb->nt - bj) { rest -= jb->nt - bj; bj++; }
    int bi = bj + (int) rest;
    int i0 = bi * PK_TILE, j0 = bj * PK_TILE;
    int h = jb->nr - i0 < PK_TILE ? jb->nr - i0 : PK_TILE;
    int w = jb->nr - j0 < PK_TILE ? jb->nr - j0 : PK_TILE;
    double *c = jb->a + i0 + (ptrdiff_t) j0 * jb->m;
    if (bi != bj) {
        bochner_gemm(jb->l21 + i0, jb->m, jb->xn + (ptrdiff_t) j0 * jb->kb, jb->kb, h, w, jb->kb,
                     c, jb->m, 1);
        return;
    }
    double *out = jb->buf + (ptrdiff_t) thread * PK_TILE * PK_TILE;
    bochner_gemm(jb->l21 + i0, jb->m, jb->xn + (ptrdiff_t) j0 * jb->kb, jb->kb, h, w, jb->kb,
                 out, h, 0);
    for (int j = 0; j < w; j++)
        for (int i = j; i < h; i++) c[i + (ptrdiff_t) j * jb->m] += out[i + (ptrdiff_t) j * h];
}

/* In place: M's lower triangle and diagonal (G + shift I) become L, L L' =
 * G + shift I, blocked right-looking: L11 = chol(A11) (transposed into a
 * buffer, cholesky.c's unblocked step), L21 = A21 L11^-T (the panel transposed, solved on the
 * threads), A22 -= L21 L21' (trail_tile).  0, or the 1-based column whose
 * pivot is not positive. */
static int packed_lower_cholesky(packed *p, int nthreads)
{
    int m = p->m;
    double *M = p->M;
    /* all scratch allocated once: R_alloc'd memory is only freed by a
     * collection, so per-step allocations would add up */
    double *u = (double *) R_alloc((size_t) PK_NB * PK_NB, sizeof(double));
    double *x = (double *) R_alloc((size_t) PK_NB * m, sizeof(double));
    double *buf = (double *) R_alloc((size_t) PK_TILE * PK_TILE * nthreads, sizeof(double));
    double *tmp = (double *) R_alloc((size_t) SOLVE_NB * m, sizeof(double));
    for (int k0 = 0; k0 < m; k0 += PK_NB) {
        int kb = m - k0 < PK_NB ? m - k0 : PK_NB, k1 = k0 + kb, nr = m - k1;
        for (int j = 0; j < kb; j++)
            for (int i = j; i < kb; i++)
                u[j + (ptrdiff_t) i * kb] = M[k0 + i + (ptrdiff_t) (k0 + j) * m];
        int bad = bochner_cholesky_block(u, kb, kb);
        if (bad) return k0 + bad;
        for (int j = 0; j < kb; j++)
            for (int i = j; i < kb; i++)
                M[k0 + i + (ptrdiff_t) (k0 + j) * m] = u[j + (ptrdiff_t) i * kb];
        if (nr == 0) break;
        bochner_transpose(M + k1 + (ptrdiff_t) k0 * m, m, nr, kb, x, kb);
        packed_trisolve(u, NULL, 0, kb, x, nr, 1, nthreads, tmp);
        bochner_transpose(x, kb, kb, nr, M + k1 + (ptrdiff_t) k0 * m, m);
        for (ptrdiff_t i = 0; i < (ptrdiff_t) kb * nr; i++) x[i] = -x[i];   /* now -X */
        int nt = (nr + PK_TILE - 1) / PK_TILE;
        trail_job jb = {M + k1 + (ptrdiff_t) k1 * m, M + k1 + (ptrdiff_t) k0 * m, x, m, kb, nr,
                        nt, buf};
        bochner_parallel_blocks((R_xlen_t) nt * (nt + 1) / 2,
                                bochner_threads_for(nthreads, (double) kb * nr * nr),
                                4, trail_tile, &jb);
    }
    return 0;
}

/* A for lambda and curvature s: G = T T' / m into the lower half, G +
 * lambda / s I factored in place, scaled by sqrt(s) (A'A = s G + lambda I);
 * 0, or the failing pivot (then the factor holds T only). */
int bochner_falkon_packed_precond(packed *p, double lambda, double s, int nthreads)
{
    int m = p->m;
    double *state = p->aux + 2 * (ptrdiff_t) m + 2;
    *state = 2;
    if (p->g) {                /* G kept: copied in, the same numbers as forming it */
        for (int j = 0; j < m; j++)
            memcpy(p->M + j + (ptrdiff_t) j * m, p->g + j + (ptrdiff_t) j * m,
                   sizeof(double) * (size_t) (m - j));
    } else {
        packed_tt(p, nthreads);
    }
    for (int i = 0; i < m; i++) p->M[i + (ptrdiff_t) i * m] += lambda / s;
    int bad = packed_lower_cholesky(p, nthreads);
    double rs = sqrt(s);
    for (int i = 0; i < m; i++) {
        double *mi = p->M + i + (ptrdiff_t) i * m;
        p->aux[m + i] = bad ? 0.0 : *mi * rs;
        *mi = p->aux[i];
        if (!bad && rs != 1.0)
            for (int l = 1; l < m - i; l++) mi[l] *= rs;
    }
    p->aux[2 * (ptrdiff_t) m] = lambda;
    p->aux[2 * (ptrdiff_t) m + 1] = s;
    *state = bad ? 0 : 1;
    return bad;
}

/* K_mm = k(C, C) into M (m x m) factored in place, T'T = K_mm + shift I,
 * shift = eps m mean(diag K_mm), raised 100-fold (K_mm recomputed) until
 * the factorisation succeeds (at most 7 tries); aux (2 m + 3) set.
 * Returns 0, 1 when every try failed, 2 when K_mm is not finite. */
int bochner_falkon_factor(const double *centres, int m, int d, int code, const double *par,
                          int npar, double e, double *M, double *aux, int nth)
{
    memset(aux, 0, sizeof(double) * (2 * (size_t) m + 3));
    double shift = 0.0;
    int bad = 1;
    for (int attempt = 0; attempt < 7 && bad; attempt++) {
        int status = bochner_kernel_matrix(code, par, npar, centres, m, NULL, m, d, M, nth);
        bochner_stop_on_status(status, "falkon_factor");
        if (attempt == 0) {
            double sum = 0.0;
            for (R_xlen_t i = 0; i < (R_xlen_t) m * m; i++)
                if (!R_FINITE(M[i])) return 2;
            for (int i = 0; i < m; i++) sum += M[i + (ptrdiff_t) i * m];
            sum /= m;
            shift = e * m * (sum > DBL_MIN ? sum : DBL_MIN);
        } else {
            shift *= 100.0;
        }
        for (int i = 0; i < m; i++) M[i + (ptrdiff_t) i * m] += shift;
        bad = bochner_cholesky(M, m, nth);
        R_CheckUserInterrupt();
    }
    if (bad) return 1;
    for (int i = 0; i < m; i++) aux[i] = M[i + (ptrdiff_t) i * m];
    return 0;
}

/* X <- T^-1 X, T'^-1 X (a = 0) or A^-1 X, A'^-1 X (a = 1); X m x k. */
void bochner_falkon_packed_solve(const packed *p, int a, double *X, int k, int trans, int nth)
{
    packed_trisolve(p->M, p->aux + p->m, a, p->m, X, k, trans, nth, NULL);
}

/* T B (trans = 0) or T' B (trans = 1) from the upper triangle in place, by
 * row blocks of the result on the threads: T[I, I] B[I] + T[I, i1:] B[i1:],
 * or T[:i0, I]' B[:i0] + T[I, I]' B[I]. */
typedef struct {
    const packed *p;
    const double *b;
    double *c, *buf;
    int k, trans;
} tprod_job;

static void tprod_block(void *ctx, R_xlen_t blk, int thread)
{
    const tprod_job *jb = (const tprod_job *) ctx;
    const packed *p = jb->p;
    int m = p->m, k = jb->k;
    int i0 = (int) blk * PK_TILE, h = m - i0 < PK_TILE ? m - i0 : PK_TILE, i1 = i0 + h;
    double *dblk = jb->buf + (ptrdiff_t) thread * PK_TILE * PK_TILE;
    t_diag_block(p, i0, h, dblk);
    double *c = jb->c + i0;
    if (!jb->trans) {
        bochner_gemm(dblk, h, jb->b + i0, m, h, k, h, c, m, 0);
        if (m > i1) bochner_gemm(p->M + i0 + (ptrdiff_t) i1 * m, m, jb->b + i1, m, h, k, m - i1,
                                 c, m, 1);
    } else {
        bochner_gemm_tn(dblk, h, jb->b + i0, m, h, k, h, c, m, 0);
        if (i0 > 0) bochner_gemm_tn(p->M + (ptrdiff_t) i0 * m, m, jb->b, m, h, k, i0, c, m, 1);
    }
}

/* C = T B (trans = 0) or T' B (trans = 1), B and C m x k. */
void bochner_falkon_packed_tprod(const packed *p, const double *B, int k, int trans, double *C,
                                 int nth)
{
    if (k <= 0) return;
    tprod_job jb = {p, B, C, (double *) R_alloc((size_t) PK_TILE * PK_TILE * nth, sizeof(double)),
                    k, trans};
    bochner_parallel_blocks((p->m + PK_TILE - 1) / PK_TILE, nth, 4, tprod_block, &jb);
}

/* T (w = 0) or A (w = 1) as a plain upper triangular m x m matrix into o. */
void bochner_falkon_packed_get(const packed *p, int w, double *o)
{
    int m = p->m;
    for (int j = 0; j < m; j++)
        for (int i = 0; i < m; i++)
            o[i + (ptrdiff_t) j * m] = i > j ? 0.0
                : i == j ? (w ? p->aux[m + i] : p->aux[i])
                : w ? p->M[j + (ptrdiff_t) i * m] : p->M[i + (ptrdiff_t) j * m];
}

/* G = T T' / m formed once into g (m x m, lower triangle and diagonal);
 * the factor then holds T only (no preconditioner until the next). */
void bochner_falkon_packed_keep_g(packed *p, double *g, int nth)
{
    int m = p->m;
    double *state = p->aux + 2 * (ptrdiff_t) m + 2;
    *state = 2;
    packed_tt(p, nth);
    for (int j = 0; j < m; j++) {
        memcpy(g + j + (ptrdiff_t) j * m, p->M + j + (ptrdiff_t) j * m,
               sizeof(double) * (size_t) (m - j));
        p->M[j + (ptrdiff_t) j * m] = p->aux[j];
    }
    *state = 0;
}
