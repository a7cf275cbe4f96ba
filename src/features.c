/* Random Fourier feature maps: the fused transform.
 *
 * Z = scale * cos(X W + b) (phase map) or scale * [cos(X W), sin(X W)] with
 * the cos/sin columns of each frequency side by side (pair map).  The output
 * is cut into tiles of ROW_BLOCK rows by FREQ_BLOCK frequencies; for each
 * tile the SIMD product of gemm.c (BLAS where the CPU lacks AVX2) writes
 * X[rows, ] %*% W[, freqs] into a per-thread scratch block that stays in
 * cache, and the vectorised cosine (fastmath.c) adds the phase, takes the
 * cosine and scales it on the way into Z.  No n x D
 * temporary exists besides Z itself.  The tiling does not depend on the
 * number of threads, so neither does the result. */
#include "bochner.h"
#include <limits.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define ROW_BLOCK 256
#define FREQ_BLOCK 256
#define TILES_PER_CHECK 64   /* tiles per thread between interrupt checks */

static void transform_tile(const double *x, R_xlen_t n, int d, const double *w,
                           const double *b, double scale, double *z,
                           R_xlen_t r0, int nr, int j0, int nj, double *scratch)
{
    /* scratch (nr x nj) = X[r0 + 0:nr, ] %*% W[, j0 + 0:nj] */
    bochner_tile_product(x + r0, (int) n, w + (R_xlen_t) j0 * d, d, nr, nj, scratch);
    if (b) {
        for (int j = 0; j < nj; j++)
            bochner_cos_affine(z + r0 + (R_xlen_t) (j0 + j) * n,
                               scratch + (R_xlen_t) j * nr, nr, b[j0 + j], scale);
    } else {
        for (int j = 0; j < nj; j++) {
            R_xlen_t col = 2 * (R_xlen_t) (j0 + j);
            bochner_sincos_scaled(z + r0 + col * n, z + r0 + (col + 1) * n,
                                  scratch + (R_xlen_t) j * nr, nr, scale);
        }
    }
}

void bochner_fourier_transform(const double *x, R_xlen_t n, int d,
                               const double *w, int nfreq, const double *b,
                               double scale, double *z, int nthreads)
{
    R_xlen_t nrb = (n + ROW_BLOCK - 1) / ROW_BLOCK;
    R_xlen_t ncb = (nfreq + FREQ_BLOCK - 1) / FREQ_BLOCK;
    R_xlen_t ntiles = nrb * ncb;
    R_xlen_t group = (R_xlen_t) TILES_PER_CHECK * nthreads;
    double *scratch = (double *) R_alloc((size_t) nthreads * ROW_BLOCK * FREQ_BLOCK,
                                         sizeof(double));
    for (R_xlen_t g0 = 0; g0 < ntiles; g0 += group) {
        R_xlen_t g1 = g0 + group < ntiles ? g0 + group : ntiles;
        R_xlen_t t;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nthreads) schedule(static)
#endif
        for (t = g0; t < g1; t++) {
            int me = 0;
#ifdef _OPENMP
            me = omp_get_thread_num();
#endif
            R_xlen_t rb = t / ncb, cb = t % ncb;
            R_xlen_t r0 = rb * ROW_BLOCK;
            int j0 = (int) (cb * FREQ_BLOCK);
            int nr = (int) (n - r0 < ROW_BLOCK ? n - r0 : ROW_BLOCK);
            int nj = nfreq - j0 < FREQ_BLOCK ? nfreq - j0 : FREQ_BLOCK;
            transform_tile(x, n, d, w, b, scale, z, r0, nr, j0, nj,
                           scratch + (R_xlen_t) me * ROW_BLOCK * FREQ_BLOCK);
        }
        R_CheckUserInterrupt();
    }
}

SEXP bochner_rff_transform_call(SEXP x, SEXP w, SEXP b, SEXP scale,
                                SEXP nthreads)
{
    if (TYPEOF(x) != REALSXP || !isMatrix(x)) error("'x' must be a double matrix");
    if (TYPEOF(w) != REALSXP || !isMatrix(w)) error("'w' must be a double matrix");
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
