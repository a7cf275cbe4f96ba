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
#define TILES_PER_CHECK 64   /* tiles per thread between interrupt checks */

typedef struct {
    const double *x, *w, *b;
    R_xlen_t n;
    int d, nfreq;
    double scale;
    double *z;
    R_xlen_t ncb;        /* frequency blocks */
    double *scratch;     /* ROW_BLOCK x FREQ_BLOCK per thread */
} transform_job;

static void transform_tile(void *ctx, R_xlen_t t, int thread)
{
    const transform_job *p = (const transform_job *) ctx;
    double *scratch = p->scratch + (R_xlen_t) thread * ROW_BLOCK * FREQ_BLOCK;
    R_xlen_t r0 = (t / p->ncb) * ROW_BLOCK, n = p->n;
    int j0 = (int) ((t % p->ncb) * FREQ_BLOCK), d = p->d;
    int nr = (int) (n - r0 < ROW_BLOCK ? n - r0 : ROW_BLOCK);
    int nj = p->nfreq - j0 < FREQ_BLOCK ? p->nfreq - j0 : FREQ_BLOCK;
    /* scratch (nr x nj) = X[r0 + 0:nr, ] %*% W[, j0 + 0:nj] */
    bochner_gemm(p->x + r0, n, p->w + (R_xlen_t) j0 * d, d, nr, nj, d, scratch, nr, 0);
    double *z = p->z;
    if (p->b) {
        for (int j = 0; j < nj; j++)
            bochner_cos_affine(z + r0 + (R_xlen_t) (j0 + j) * n,
                               scratch + (R_xlen_t) j * nr, nr, p->b[j0 + j], p->scale);
    } else {
        for (int j = 0; j < nj; j++) {
            R_xlen_t col = 2 * (R_xlen_t) (j0 + j);
            bochner_sincos_scaled(z + r0 + col * n, z + r0 + (col + 1) * n,
                                  scratch + (R_xlen_t) j * nr, nr, p->scale);
        }
    }
}

void bochner_fourier_transform(const double *x, R_xlen_t n, int d,
                               const double *w, int nfreq, const double *b,
                               double scale, double *z, int nthreads)
{
    R_xlen_t nrb = (n + ROW_BLOCK - 1) / ROW_BLOCK;
    R_xlen_t ncb = (nfreq + FREQ_BLOCK - 1) / FREQ_BLOCK;
    /* work: the product and about 20 operations per cosine */
    double work = (double) n * (double) nfreq * ((double) d + 20.0);
    nthreads = bochner_threads_for(nthreads, work);
    transform_job p = {x, w, b, n, d, nfreq, scale, z, ncb,
                       (double *) R_alloc((size_t) nthreads * ROW_BLOCK * FREQ_BLOCK,
                                          sizeof(double))};
    bochner_parallel_blocks(nrb * ncb, nthreads, TILES_PER_CHECK, transform_tile, &p);
}

SEXP bochner_rff_transform_call(SEXP x, SEXP w, SEXP b, SEXP scale,
                                SEXP nthreads)
{
    if (!bochner_is_real_matrix(x)) error("'x' must be a double matrix");
    if (!bochner_is_real_matrix(w)) error("'w' must be a double matrix");
    R_xlen_t n = nrows(x);
    int d = ncols(x), nfreq = ncols(w);
    if (nrows(w) != d) error("'w' must have one row per column of 'x'");
    if (d < 1 || nfreq < 1) error("'x' and 'w' must have at least one column");
    if (!isNull(b) && (TYPEOF(b) != REALSXP || XLENGTH(b) != nfreq))
        error("'b' must be NULL or a double vector with one phase per frequency");
    double s = asReal(scale);
    R_xlen_t ncol = isNull(b) ? 2 * (R_xlen_t) nfreq : nfreq;
    if (ncol > INT_MAX) error("too many features");
    SEXP z = PROTECT(bochner_alloc_output(n, ncol));
    if (n > 0)
        bochner_fourier_transform(REAL(x), n, d, REAL(w), nfreq,
                                  isNull(b) ? NULL : REAL(b), s, REAL(z),
                                  bochner_nthreads(asInteger(nthreads)));
    UNPROTECT(1);
    return z;
}
