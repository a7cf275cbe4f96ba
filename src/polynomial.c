/* Random features for kernels that are not shift-invariant.
 *
 * 1. Sums of products of random projections (the product construction and
 *    Random Maclaurin features).  Feature f is
 *        z_f(x) = sum over its terms t of weight_t * prod_{v in t} (w_v . x),
 *    the projection vectors w_v being columns of W, stored feature by
 *    feature and term by term.  The output is cut into tiles of ROW_BLOCK
 *    rows by a block of consecutive features with at most VEC_BLOCK vectors
 *    between them; one product per tile (gemm.c) gives the projections into a
 *    per-thread scratch block, and the products and sums are formed from it
 *    while it is in cache.
 * 2. TensorSketch of (scale x.y + offset)^p: p count sketches of the
 *    augmented vector (sqrt(scale) x, sqrt(offset)), multiplied in the
 *    Fourier domain.  Two rows share each complex FFT (one as the real part,
 *    one as the imaginary part).
 * 3. Indicator features of the min kernel: sqrt(T_j / D) 1{t_jk <= x_j}.
 *
 * The tiling never depends on the number of threads, so neither do the
 * results.  The random draws come from R (R/polynomial.R) and are passed in. */
#include "bochner.h"
#include <limits.h>
#include <math.h>
#include <string.h>

#define ROW_BLOCK 256
#define VEC_BLOCK 256
#define TILES_PER_CHECK 64     /* tiles per thread between interrupt checks */
#define PAIRS_PER_CHECK 16     /* row pairs per thread between interrupt checks */
#define COLS_PER_CHECK 1024    /* min-feature columns per thread between checks */

/* ---------------------------------------------------------------------- */
/* 1. sums of products of projections                                      */

static void projection_tile(const double *x, R_xlen_t n, int d, const double *w,
                            const R_xlen_t *fvec, const int *term_ptr,
                            const int *term_deg, const double *term_weight,
                            double *z, R_xlen_t r0, int nr, int f0, int f1,
                            double *scratch, double *prod)
{
    R_xlen_t v0 = fvec[f0];
    int nv = (int) (fvec[f1] - v0);
    if (nv > 0) bochner_gemm(x + r0, n, w + v0 * d, d, nr, nv, d, scratch, nr, 0);
    for (int f = f0; f < f1; f++) {
        double *zc = z + r0 + (R_xlen_t) f * n;
        for (int i = 0; i < nr; i++) zc[i] = 0.0;
        R_xlen_t v = fvec[f] - v0;
        for (int t = term_ptr[f]; t < term_ptr[f + 1]; t++) {
            double wt = term_weight[t];
            for (int i = 0; i < nr; i++) prod[i] = wt;
            for (int j = 0; j < term_deg[t]; j++) {
                const double *col = scratch + (v + j) * nr;
                for (int i = 0; i < nr; i++) prod[i] *= col[i];
            }
            v += term_deg[t];
            for (int i = 0; i < nr; i++) zc[i] += prod[i];
        }
    }
}

typedef struct {
    const double *x;
    R_xlen_t n;
    int d;
    const double *w;
    const R_xlen_t *fvec;
    const int *term_ptr, *term_deg;
    const double *term_weight;
    double *z;
    const int *bstart;
    int nblocks;
    R_xlen_t maxv, per_thread;
    double *scratch;
} projection_job;

static void projection_block(void *ctx, R_xlen_t tile, int thread)
{
    const projection_job *p = (const projection_job *) ctx;
    double *s = p->scratch + (R_xlen_t) thread * p->per_thread;
    R_xlen_t r0 = (tile / p->nblocks) * ROW_BLOCK;
    int b = (int) (tile % p->nblocks);
    int nr = (int) (p->n - r0 < ROW_BLOCK ? p->n - r0 : ROW_BLOCK);
    projection_tile(p->x, p->n, p->d, p->w, p->fvec, p->term_ptr, p->term_deg,
                    p->term_weight, p->z, r0, nr, p->bstart[b], p->bstart[b + 1], s,
                    s + ROW_BLOCK * p->maxv);
}

void bochner_projection_features(const double *x, R_xlen_t n, int d,
                                 const double *w, int nfeat,
                                 const int *term_ptr, const int *term_deg,
                                 const double *term_weight, double *z,
                                 int nthreads)
{
    if (n == 0 || nfeat == 0) return;
    /* first vector of each feature */
    R_xlen_t *fvec = (R_xlen_t *) R_alloc((size_t) nfeat + 1, sizeof(R_xlen_t));
    fvec[0] = 0;
    for (int f = 0; f < nfeat; f++) {
        R_xlen_t nv = 0;
        for (int t = term_ptr[f]; t < term_ptr[f + 1]; t++) nv += term_deg[t];
        fvec[f + 1] = fvec[f] + nv;
    }
    /* feature blocks: as many features as fit in VEC_BLOCK vectors, at
     * least one */
    int *bstart = (int *) R_alloc((size_t) nfeat + 1, sizeof(int));
    int nblocks = 0;
    R_xlen_t maxv = 1;
    for (int f = 0; f < nfeat;) {
        int g = f + 1;
        while (g < nfeat && fvec[g + 1] - fvec[f] <= VEC_BLOCK) g++;
        bstart[nblocks++] = f;
        if (fvec[g] - fvec[f] > maxv) maxv = fvec[g] - fvec[f];
        f = g;
    }
    bstart[nblocks] = nfeat;

    R_xlen_t nrb = (n + ROW_BLOCK - 1) / ROW_BLOCK;
    R_xlen_t per_thread = ROW_BLOCK * maxv + ROW_BLOCK;
    double work = (double) n * (double) (fvec[nfeat] + nfeat) * (double) d;
    nthreads = bochner_threads_for(nthreads, work);
    projection_job p = {x, n, d, w, fvec, term_ptr, term_deg, term_weight, z, bstart,
                        nblocks, maxv, per_thread,
                        (double *) R_alloc((size_t) nthreads * (size_t) per_thread,
                                           sizeof(double))};
    bochner_parallel_blocks(nrb * nblocks, nthreads, TILES_PER_CHECK, projection_block, &p);
}

/* ---------------------------------------------------------------------- */
/* 2. TensorSketch                                                         */

/* Count sketch of the augmented rows a (real part) and b (imaginary part,
 * when b >= 0) with hash h and signs s. */
static void count_sketch_pair(const double *x, R_xlen_t n, int d, R_xlen_t a,
                              R_xlen_t b, const int *h, const double *s,
                              double sx, double s0, bcx *y, int D)
{
    memset(y, 0, sizeof(bcx) * (size_t) D);
    for (int k = 0; k < d; k++) {
        double c = s[k] * sx;
        y[h[k]].re += c * x[a + (R_xlen_t) k * n];
        if (b >= 0) y[h[k]].im += c * x[b + (R_xlen_t) k * n];
    }
    y[h[d]].re += s[d] * s0;
    if (b >= 0) y[h[d]].im += s[d] * s0;
}

static void sketch_pair(const double *x, R_xlen_t n, int d, R_xlen_t a,
                        R_xlen_t b, const int *hash, const double *sign, int p,
                        int D, double sx, double s0, double *z,
                        const bochner_fft_plan *pl, bcx *buf)
{
    bcx *y = buf, *f = buf + D, *pa = buf + 2 * (R_xlen_t) D,
        *pb = buf + 3 * (R_xlen_t) D, *work = buf + 4 * (R_xlen_t) D;
    for (int j = 0; j < p; j++) {
        count_sketch_pair(x, n, d, a, b, hash + (R_xlen_t) j * (d + 1),
                          sign + (R_xlen_t) j * (d + 1), sx, s0, y, D);
        bochner_fft(pl, y, f, work, 0);
        /* the transforms of the real and imaginary parts:
         * A = (F[k] + conj(F[-k])) / 2, B = (F[k] - conj(F[-k])) / (2i) */
        for (int k = 0; k < D; k++) {
            int kk = k == 0 ? 0 : D - k;
            bcx ya = {0.5 * (f[k].re + f[kk].re), 0.5 * (f[k].im - f[kk].im)};
            bcx yb = {0.5 * (f[k].im + f[kk].im), -0.5 * (f[k].re - f[kk].re)};
            if (j == 0) {
                pa[k] = ya;
                pb[k] = yb;
            } else {
                double re = pa[k].re * ya.re - pa[k].im * ya.im;
                pa[k].im = pa[k].re * ya.im + pa[k].im * ya.re;
                pa[k].re = re;
                re = pb[k].re * yb.re - pb[k].im * yb.im;
                pb[k].im = pb[k].re * yb.im + pb[k].im * yb.re;
                pb[k].re = re;
            }
        }
    }
    /* both inverse transforms are real: invert A + iB in one go */
    for (int k = 0; k < D; k++) {
        y[k].re = pa[k].re - pb[k].im;
        y[k].im = pa[k].im + pb[k].re;
    }
    bochner_fft(pl, y, f, work, 1);
    double s = 1.0 / (double) D;
    for (int k = 0; k < D; k++) z[a + (R_xlen_t) k * n] = f[k].re * s;
    if (b >= 0)
        for (int k = 0; k < D; k++) z[b + (R_xlen_t) k * n] = f[k].im * s;
}

typedef struct {
    const double *x;
    R_xlen_t n;
    int d;
    const int *hash;
    const double *sign;
    int p, D;
    double sx, s0, *z;
    const bochner_fft_plan *pl;
    size_t per_thread;
    bcx *buf;
} sketch_job;

static void sketch_block(void *ctx, R_xlen_t q, int thread)
{
    const sketch_job *j = (const sketch_job *) ctx;
    R_xlen_t a = 2 * q, b = 2 * q + 1 < j->n ? 2 * q + 1 : -1;
    sketch_pair(j->x, j->n, j->d, a, b, j->hash, j->sign, j->p, j->D, j->sx, j->s0, j->z,
                j->pl, j->buf + (size_t) thread * j->per_thread);
}

void bochner_tensor_sketch(const double *x, R_xlen_t n, int d,
                           const int *hash, const double *sign, int p, int D,
                           double sx, double s0, double *z, int nthreads)
{
    if (n == 0) return;
    memset(z, 0, sizeof(double) * (size_t) n * (size_t) D);
    if (p == 1) {
        /* a single count sketch: no transform needed */
        for (int k = 0; k < d; k++) {
            double *col = z + (R_xlen_t) hash[k] * n;
            double c = sign[k] * sx;
            const double *xk = x + (R_xlen_t) k * n;
            for (R_xlen_t i = 0; i < n; i++) col[i] += c * xk[i];
        }
        double *col = z + (R_xlen_t) hash[d] * n;
        for (R_xlen_t i = 0; i < n; i++) col[i] += sign[d] * s0;
        return;
    }
    bochner_fft_plan *pl = bochner_fft_plan_make(D);
    size_t per_thread = 4 * (size_t) D + bochner_fft_work_size(pl);
    R_xlen_t npairs = (n + 1) / 2;
    nthreads = bochner_threads_for(nthreads, (double) npairs * p * D * (d + 20.0));
    sketch_job job = {x, n, d, hash, sign, p, D, sx, s0, z, pl, per_thread,
                      (bcx *) R_alloc((size_t) nthreads * per_thread, sizeof(bcx))};
    bochner_parallel_blocks(npairs, nthreads, PAIRS_PER_CHECK, sketch_block, &job);
}

/* ---------------------------------------------------------------------- */
/* 3. min-kernel indicator features                                        */

typedef struct {
    const double *x;
    R_xlen_t n;
    int D;
    const double *t, *scale;
    double *z;
} min_job;

static void min_column(void *ctx, R_xlen_t c, int thread)
{
    (void) thread;
    const min_job *p = (const min_job *) ctx;
    R_xlen_t j = c / p->D, n = p->n;
    double thr = p->t[c], s = p->scale[j];   /* t is D x d: t[k + j D] = t[c] */
    const double *xj = p->x + j * n;
    double *zc = p->z + c * n;
    for (R_xlen_t i = 0; i < n; i++) zc[i] = xj[i] >= thr ? s : 0.0;
}

void bochner_min_features(const double *x, R_xlen_t n, int d,
                          const double *t, int D, const double *scale,
                          double *z, int nthreads)
{
    min_job p = {x, n, D, t, scale, z};
    R_xlen_t ncol = (R_xlen_t) d * D;
    bochner_parallel_blocks(ncol, bochner_threads_for(nthreads, (double) ncol * n),
                            COLS_PER_CHECK, min_column, &p);
}
