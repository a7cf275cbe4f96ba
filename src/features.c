/* Random Fourier feature maps: the fused transform.
 *
 * Z = scale * cos(X W + b) (phase map) or scale * [cos(X W), sin(X W)] with
 * the cos/sin columns of each frequency side by side (pair map).  The output
 * is cut into tiles of ROW_BLOCK rows by FREQ_BLOCK frequencies; for each
 * tile the package's product (gemm.c) writes
 * X[rows, ] %*% W[, freqs] into a per-thread scratch block that stays in
 * cache, and the vectorised cosine (fastmath.c) adds the phase, takes the
 * cosine and scales it on the way into Z.  No n x D
 * temporary exists besides Z itself.  The tiling does not depend on the
 * number of threads, so neither does the result. */
#include "bochner.h"
#include <limits.h>

#define ROW_BLOCK 256
#define FREQ_BLOCK 256
#define DECISION_ROWS 64     /* rows per block of the fused decision values */
#define TILES_PER_CHECK 64   /* tiles per thread between interrupt checks */

typedef struct {
    const double *x, *w, *b;
    R_xlen_t n;
    int d, nfreq;
    double scale;
    int nfeat;           /* nfreq (phase map) or 2 nfreq (pair map) */
    double *out;         /* Z (n x nfeat), t(Z) (nfeat x n) or the decision values (n x m) */
    R_xlen_t ncb;        /* frequency blocks */
    double *scratch;     /* per thread */
    R_xlen_t per_thread;
    const double *beta, *intercept;   /* decision values: nfeat x m, m */
    int m;
} transform_job;

/* The features of nr rows and nj frequencies from their products
 * prod = x w (nr x nj, column-major): cos(prod + b_j) times scale (phase
 * map, b not NULL) or the cos/sin pair times scale, into dest (leading
 * dimension ldd).  Shared by the dense and sparse transforms. */
void bochner_fourier_finish(const double *prod, int nr, int nj, const double *b, double scale,
                            double *dest, ptrdiff_t ldd)
{
    for (int j = 0; j < nj; j++) {
        if (b) {
            bochner_cos_affine(dest + (R_xlen_t) j * ldd, prod + (R_xlen_t) j * nr, nr, b[j],
                               scale);
        } else {
            bochner_sincos_scaled(dest + (R_xlen_t) (2 * j) * ldd,
                                  dest + (R_xlen_t) (2 * j + 1) * ldd,
                                  prod + (R_xlen_t) j * nr, nr, scale);
        }
    }
}

/* The features of rows r0 .. r0 + nr - 1 and frequencies j0 .. j0 + nj - 1:
 * feature column f (f = j0, .., or 2 j0, .. for the pair map) goes to
 * dest + (f - first) * ldd, where first is the tile's first feature.
 * prod: nr x nj scratch for X[rows, ] %*% W[, freqs]. */
static void fourier_block(const transform_job *p, R_xlen_t r0, int nr, int j0, int nj,
                          double *dest, R_xlen_t ldd, double *prod)
{
    const int d = p->d;
    bochner_gemm(p->x + r0, p->n, p->w + (R_xlen_t) j0 * d, d, nr, nj, d, prod, nr, 0);
    bochner_fourier_finish(prod, nr, nj, p->b ? p->b + j0 : NULL, p->scale, dest, ldd);
}

static int first_feature(const transform_job *p, int j0) { return p->b ? j0 : 2 * j0; }

static void tile_geometry(const transform_job *p, R_xlen_t t, R_xlen_t *r0, int *nr,
                          int *j0, int *nj)
{
    *r0 = (t / p->ncb) * ROW_BLOCK;
    *j0 = (int) ((t % p->ncb) * FREQ_BLOCK);
    *nr = (int) (p->n - *r0 < ROW_BLOCK ? p->n - *r0 : ROW_BLOCK);
    *nj = p->nfreq - *j0 < FREQ_BLOCK ? p->nfreq - *j0 : FREQ_BLOCK;
}

/* Z, n x nfeat */
static void transform_tile(void *ctx, R_xlen_t t, int thread)
{
    const transform_job *p = (const transform_job *) ctx;
    R_xlen_t r0;
    int nr, j0, nj;
    tile_geometry(p, t, &r0, &nr, &j0, &nj);
    fourier_block(p, r0, nr, j0, nj, p->out + r0 + (R_xlen_t) first_feature(p, j0) * p->n,
                  p->n, p->scratch + (R_xlen_t) thread * p->per_thread);
}

/* t(Z), nfeat x n: a tile of features in scratch, transposed into place */
static void transform_tile_t(void *ctx, R_xlen_t t, int thread)
{
    const transform_job *p = (const transform_job *) ctx;
    R_xlen_t r0;
    int nr, j0, nj;
    tile_geometry(p, t, &r0, &nr, &j0, &nj);
    double *prod = p->scratch + (R_xlen_t) thread * p->per_thread;
    double *tile = prod + ROW_BLOCK * FREQ_BLOCK;
    int f0 = first_feature(p, j0), nf = p->b ? nj : 2 * nj;
    fourier_block(p, r0, nr, j0, nj, tile, nr, prod);
    bochner_transpose(tile, nr, nr, nf, p->out + f0 + r0 * (R_xlen_t) p->nfeat, p->nfeat);
}

/* Decision values of a block of rows: its features for every frequency in
 * scratch, then times beta, plus the intercept.  Each value is one chain
 * over the features in order (gemm.c), as for Z %*% beta. */
static void decision_rows(void *ctx, R_xlen_t blk, int thread)
{
    const transform_job *p = (const transform_job *) ctx;
    R_xlen_t r0 = blk * DECISION_ROWS;
    int nr = (int) (p->n - r0 < DECISION_ROWS ? p->n - r0 : DECISION_ROWS);
    double *prod = p->scratch + (R_xlen_t) thread * p->per_thread;
    double *feat = prod + DECISION_ROWS * FREQ_BLOCK;      /* nr x nfeat */
    for (int j0 = 0; j0 < p->nfreq; j0 += FREQ_BLOCK) {
        int nj = p->nfreq - j0 < FREQ_BLOCK ? p->nfreq - j0 : FREQ_BLOCK;
        fourier_block(p, r0, nr, j0, nj, feat + (R_xlen_t) first_feature(p, j0) * nr, nr, prod);
    }
    double *dec = p->out + r0;
    bochner_gemm(feat, nr, p->beta, p->nfeat, nr, p->m, p->nfeat, dec, p->n, 0);
    for (int c = 0; c < p->m; c++)
        for (int i = 0; i < nr; i++) dec[i + (R_xlen_t) c * p->n] += p->intercept[c];
}

/* layout: 0 Z, 1 t(Z), 2 decision values Z %*% beta + intercept */
void bochner_fourier_run(const double *x, R_xlen_t n, int d, const double *w, int nfreq,
                         const double *b, double scale, double *out, int layout,
                         const double *beta, const double *intercept, int m, int nthreads)
{
    transform_job p = {x, w, b, n, d, nfreq, scale, b ? nfreq : 2 * nfreq, out,
                       (nfreq + FREQ_BLOCK - 1) / FREQ_BLOCK, NULL, 0, beta, intercept, m};
    /* work: the product and about 20 operations per cosine */
    double work = (double) n * (double) nfreq * ((double) d + 20.0);
    if (layout == 2) work += (double) n * p.nfeat * m;
    nthreads = bochner_threads_for(nthreads, work);
    R_xlen_t nblocks = ((n + ROW_BLOCK - 1) / ROW_BLOCK) * p.ncb;
    bochner_block_fn fn = transform_tile;
    p.per_thread = ROW_BLOCK * FREQ_BLOCK;
    if (layout == 1) {
        fn = transform_tile_t;
        p.per_thread = 3 * (R_xlen_t) ROW_BLOCK * FREQ_BLOCK;   /* product, tile (pair: 2 x) */
    } else if (layout == 2) {
        fn = decision_rows;
        nblocks = (n + DECISION_ROWS - 1) / DECISION_ROWS;
        p.per_thread = DECISION_ROWS * (FREQ_BLOCK + (R_xlen_t) p.nfeat);
    }
    p.scratch = (double *) R_alloc((size_t) nthreads * (size_t) p.per_thread, sizeof(double));
    bochner_parallel_blocks(nblocks, nthreads, TILES_PER_CHECK, fn, &p);
}

void bochner_fourier_transform(const double *x, R_xlen_t n, int d,
                               const double *w, int nfreq, const double *b,
                               double scale, double *z, int nthreads)
{
    bochner_fourier_run(x, n, d, w, nfreq, b, scale, z, 0, NULL, NULL, 0, nthreads);
}
