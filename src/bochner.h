/* bochner: the core's shared routines, pure C on plain arrays (the .Call entry points
 * are declared in api.h and defined in the api_*.c files).  The few routines here that
 * take SEXP are those whose work is on R objects: checks.c's argument checks and fold
 * states (a fold's state lives in an R list between calls) and memory.c's output
 * allocation. */
#ifndef BOCHNER_H
#define BOCHNER_H

#include <stddef.h>
#include <stdint.h>
#include <R.h>
#include <Rinternals.h>

/* Kernel codes shared with R (R/kernels.R, kernel_code()). */
enum bochner_kernel_code {
    BK_GAUSSIAN = 1,
    BK_LAPLACE = 2,
    BK_CAUCHY = 3,
    BK_MATERN = 4,
    BK_POLYNOMIAL = 5,
    BK_MIN = 6,
    BK_EXPDOT = 7,
    BK_SPECTRAL_MIXTURE = 8
};

/* Largest Matern smoothness nu (R/kernels.R has the same bound): beyond it
 * the kernel is the Gaussian to within 1e-3, and the Bessel recursion costs
 * O(nu) per entry. */
#define BOCHNER_MATERN_NU_MAX 1000.0

/* Status codes returned by the pure-C routines. */
enum bochner_status {
    BOCHNER_OK = 0,
    BOCHNER_BAD_KERNEL = 1,
    BOCHNER_BAD_ARGUMENT = 2,
    BOCHNER_NOT_POSITIVE_DEFINITE = 3
};

/* memory.c */
SEXP bochner_alloc_output(R_xlen_t nrow, R_xlen_t ncol);
void bochner_advise_huge_pages(void *p, size_t bytes);
void bochner_memory_init(void);   /* at load: whether to advise huge pages */
int bochner_huge_pages(void);     /* that choice, 1 or 0 */
/* rows i0 .. i0 + nb - 1 of x (n x d, column-major) into xb (nb x d) */
void bochner_copy_rows(const double *x, R_xlen_t n, int d, R_xlen_t i0, int nb, double *xb);

/* checks.c: cheap checks of the .Call wrappers, one message per status */
int bochner_is_real_matrix(SEXP m);
int bochner_count_arg(SEXP v, const char *what, int lower);
int bochner_landmark_args(SEXP x, SEXP par, SEXP diag, SEXP count, const char *what);
/* folds over row blocks: the state of a fold (checks.c) */
SEXP bochner_fold_new(const char *tag, SEXP vectors);
SEXP bochner_fold_vectors(SEXP state, const char *tag);
void bochner_fold_finish(SEXP state);
void bochner_stop_on_status(int status, const char *where);

/* threads.c: the thread policy and the one parallel loop */
int bochner_nthreads(int requested);
int bochner_threads_for(int nthreads, double work);
typedef void (*bochner_block_fn)(void *ctx, R_xlen_t block, int thread);
void bochner_parallel_blocks(R_xlen_t nblocks, int nthreads, int per_check,
                             bochner_block_fn fn, void *ctx);

/* cpu.c: vector instructions, detected once at load */
void bochner_cpu_init(void);
int bochner_cpu_isa(void);    /* 0 portable, 1 AVX2 + FMA, 2 AVX-512F */
/* the product kernel's cache blocking (gemm.c), chosen for the CPU at load */
typedef struct {
    int kc;                   /* inner indices per K-block (at most 384) */
} bochner_gemm_blocks;
const bochner_gemm_blocks *bochner_gemm_blocking(void);

/* fastmath.c: vectorised cosine and sine */
void bochner_cos_affine(double *y, const double *x, ptrdiff_t n,
                        double shift, double scale);
void bochner_sincos_scaled(double *c, double *s, const double *x, ptrdiff_t n,
                           double scale);
void bochner_exp_scaled(double *y, const double *x, ptrdiff_t n, double scale);
void bochner_exp_distances(double *col, double *v, const double *xn, int n, double ynj,
                           double scale);
/* the same with float results (single-precision kernel blocks and features) */
void bochner_exp_scaled_f(float *y, const double *x, ptrdiff_t n, double scale);
void bochner_cos_affine_f(float *y, const double *x, ptrdiff_t n, double shift, double scale);
void bochner_sincos_scaled_f(float *c, float *s, const double *x, ptrdiff_t n, double scale);

/* Where the product kernels' next panel of x starts, for their prefetch (gemm.c,
 * sgemm.c): after the panel of rows i0 .. i0 + r - 1 of the K-block from inner index pc
 * (kb long), the next r rows, or after the last whole panel the next K-block's first; -1
 * when that is not a whole panel inside x (nr rows, d inner indices; stored transposed,
 * d x nr, with transa).  An offset in entries from x. */
static inline ptrdiff_t bochner_next_panel(ptrdiff_t ldx, ptrdiff_t d, int nr, int i0,
                                           ptrdiff_t pc, int kb, int r, int transa)
{
    ptrdiff_t row, col;
    if (i0 + 2 * r <= nr) { row = i0 + r; col = pc; }
    else if (pc + 2 * (ptrdiff_t) kb <= d && nr >= r) { row = 0; col = pc + kb; }
    else return -1;
    return transa ? col + row * ldx : col * ldx + row;
}

/* gemm.c: the package's own serial product, c (m x n) = [c +] a %*% b */
void bochner_gemm(const double *a, ptrdiff_t lda, const double *b, ptrdiff_t ldb,
                  int m, int n, int k, double *c, ptrdiff_t ldc, int accumulate);
void bochner_gemm_tn(const double *a, ptrdiff_t lda, const double *b, ptrdiff_t ldb,
                     int m, int n, int k, double *c, ptrdiff_t ldc, int accumulate);
void bochner_gemm_path(int isa, int transa, const double *a, ptrdiff_t lda, const double *b,
                       ptrdiff_t ldb, int m, int n, int k, double *c, ptrdiff_t ldc,
                       int accumulate);
/* c (m x n) = t(a) %*% b, a (k x m): dot products with their own 8-lane chain, for few
 * columns of b */
void bochner_dot_tn(const double *a, ptrdiff_t lda, const double *b, ptrdiff_t ldb, int m,
                    int n, int k, double *c, ptrdiff_t ldc);
void bochner_dot_tn_path(int isa, const double *a, ptrdiff_t lda, const double *b,
                         ptrdiff_t ldb, int m, int n, int k, double *c, ptrdiff_t ldc);

/* sgemm.c: the same product of float operands, float K-blocks of 256 summed into double
 * results (the error bound is in sgemm.c's header) */
void bochner_sgemm(const float *a, ptrdiff_t lda, const float *b, ptrdiff_t ldb,
                   int m, int n, int k, double *c, ptrdiff_t ldc, int accumulate);
void bochner_sgemm_tn(const float *a, ptrdiff_t lda, const float *b, ptrdiff_t ldb,
                      int m, int n, int k, double *c, ptrdiff_t ldc, int accumulate);
void bochner_sgemm_path(int isa, int transa, const float *a, ptrdiff_t lda, const float *b,
                        ptrdiff_t ldb, int m, int n, int k, double *c, ptrdiff_t ldc,
                        int accumulate);
void bochner_to_float(const double *x, R_xlen_t n, float *y);
/* gemm.c: a float operand read in place by the double kernels' chains (falkon's float K_nm) */
void bochner_gemm_xf(const float *a, ptrdiff_t lda, const double *b, ptrdiff_t ldb, int m,
                     int n, int k, double *c, ptrdiff_t ldc, int accumulate);
void bochner_dot_tn_xf(const float *a, ptrdiff_t lda, const double *b, ptrdiff_t ldb, int m,
                       int n, int k, double *c, ptrdiff_t ldc);
void bochner_round_float(double *x, R_xlen_t n);
void bochner_widen_float(const float *src, ptrdiff_t lds, int rows, int m, double *dst,
                         ptrdiff_t ldd, int nthreads);

/* products.c: tiled, threaded products on that kernel */
void bochner_product(const double *a, ptrdiff_t lda, const double *b, ptrdiff_t ldb,
                     int m, int n, int k, double *c, ptrdiff_t ldc, int accumulate,
                     int upper, int nthreads);
void bochner_crossproduct(const double *a, ptrdiff_t lda, const double *b, ptrdiff_t ldb,
                          int m, int n, int k, double *c, ptrdiff_t ldc, int accumulate,
                          int upper, int nthreads);
void bochner_product_xf(const float *a, ptrdiff_t lda, const double *b, ptrdiff_t ldb, int m,
                        int n, int k, double *c, ptrdiff_t ldc, int nthreads);
void bochner_sproduct(int transa, const float *a, ptrdiff_t lda, const float *b,
                      ptrdiff_t ldb, int m, int n, int k, double *c, ptrdiff_t ldc,
                      int accumulate, int upper, int nthreads);
void bochner_mirror_upper(double *g, R_xlen_t n, int nthreads);
void bochner_transpose(const double *x, ptrdiff_t ldx, int nrow, int ncol, double *t,
                       ptrdiff_t ldt);
/* exact_moments.c: exact column sums as floating-point expansions */
#define BOCHNER_EXP_MAX 128
typedef struct {
    int len;
    double special;
    double p[BOCHNER_EXP_MAX];
} bochner_expansion;
void bochner_exp_add(bochner_expansion *e, double x);
void bochner_column_sums_add(const double *x, R_xlen_t n, int d, bochner_expansion *s,
                             bochner_expansion *q, int nthreads);
void bochner_column_moment(const bochner_expansion *s, const bochner_expansion *q, double n,
                           bochner_expansion *t, double *center, double *m2);
/* the moments fold over row blocks (Z'WZ, Z'WY centred; its state is an R
 * object, api_products.c): views of the state's vectors */
typedef struct {
    int D, m;
    double *zz, *zy, *s, *t, *zsum, *ysum, *ysq, *acc;   /* acc: N, rows */
} bochner_moments;
void bochner_moments_start(const bochner_moments *mo, const double *z, const double *y, int nr);
void bochner_moments_add(const bochner_moments *mo, const double *z, const double *y,
                         const double *w, int nr, int single, int nthreads);
void bochner_moments_finish(const bochner_moments *mo, double *zbar, double *ybar, double *yy,
                            int nthreads);

/* statistics.c: the kernel tests' permutation nulls and feature moments */
uint64_t *bochner_mmd_draw(R_xlen_t N, R_xlen_t m, int B, R_xlen_t *nwords);
void bochner_mmd_perm_gram(const double *k, int N, int mm, int nb, int nth, double *A,
                           double *Bv, double *Dv);
void bochner_mmd_fold_block(const double *z, int nr, int D, int nb, const uint64_t *bits,
                            R_xlen_t nwords, R_xlen_t m, R_xlen_t r0, double *S, double *sum,
                            double *q, double *Qacc, int nth);
void bochner_stat_moments_shift(const double *z, int nr, int D, double *shift);
void bochner_stat_moments_block(const double *z, int nr, int D, const double *shift, double *zz,
                                double *sum, int single, int nth);
void bochner_stat_moments_finish(double *g, int D, const double *sum, const double *shift,
                                 double n, double *zbar, int nth);
void bochner_hsic_perm_gram(const double *K, const double *L, int n, int nb, int nth,
                            double *out);

/* ridge_path.c: the lambda path from one tridiagonal reduction (reflectors
 * applied BOCHNER_RIDGE_QB at a time) */
#define BOCHNER_RIDGE_QB 64
int bochner_ridge_spectrum(double *a, int n, const double *B, int m, int nth, double *vals,
                           double *cc, double *gg, double *d, double *e, double *VV,
                           double *TT, double *tq);
void bochner_ridge_q_rows(double *X, int r, int n, const double *VV, const double *TT, int nth);
void bochner_ridge_path_rows(const double *dv, const double *ev, int n, const double *lam,
                             int L, const double *U, int r, const double *g, int m, int nth,
                             double *quad, double *cross);

/* cholesky.c: a = R'R on that kernel, and the solves */
int bochner_cholesky(double *a, int n, int nthreads);
int bochner_cholesky_block(double *a, ptrdiff_t lda, int kb);
void bochner_cholesky_solve(const double *r, int n, double *b, int m);
void bochner_triangular_solve(const double *r, int n, double *b, int m, int op, int nthreads);

/* kernel_blocks.c: Gram blocks of the Euclidean kernels, fused on the product tiles */
enum bochner_block_kind {
    BOCHNER_BLOCK_GAUSSIAN = 0,
    BOCHNER_BLOCK_MATERN05 = 1,
    BOCHNER_BLOCK_MATERN15 = 2,
    BOCHNER_BLOCK_MATERN25 = 3
};
void bochner_centre_and_norms(const double *x, R_xlen_t nx, const double *y, R_xlen_t ny,
                              int d, double *xc, double *yc, double *xn, double *yn);
void bochner_distance_kernel_blocks(int kind, double s, const double *x, R_xlen_t nx,
                                    const double *y, R_xlen_t ny, int d, double *out,
                                    int nthreads);
void bochner_dk_prepare(const double *y, R_xlen_t ny, int d, double *centre, double *bt,
                        double *yn);
void bochner_dk_rows(int kind, double s, const double *centre, const double *bt,
                     const double *yn, R_xlen_t ny, int d, const double *x, R_xlen_t nx,
                     double *out, R_xlen_t ldo, int nthreads);
void bochner_dk_rows_serial(int kind, double s, const double *centre, const double *bt,
                            const double *yn, R_xlen_t ny, int d, const double *x, R_xlen_t n,
                            R_xlen_t i0, int nx, double *out, R_xlen_t ldo, double *xc,
                            double *xn);

/* kernels.c */
int bochner_kernel_matrix(int code, const double *par, int npar,
                          const double *x, R_xlen_t nx, const double *y,
                          R_xlen_t ny, int d, double *out, int nthreads);
/* kernels.c: k(x, y) for block after block of rows x against the same points y, the
 * side of y computed once where the kernel allows (the fused Euclidean kernels) */
typedef struct {
    int code, npar, d, kind;   /* kind: a BOCHNER_BLOCK_* code, or -1: kernel_matrix() */
    const double *par, *y;
    R_xlen_t ny;
    double s;
    double *centre, *bt, *yn;
} bochner_kernel_against;
int bochner_kernel_against_init(bochner_kernel_against *k, int code, const double *par,
                                int npar, const double *y, R_xlen_t ny, int d);
int bochner_kernel_against_rows(const bochner_kernel_against *k, const double *x,
                                R_xlen_t nx, double *out, R_xlen_t ldo, int nthreads);

/* kernels.c: the spectral mixture's packed parameters (Q, or 0 if bad) */
int bochner_sm_check(const double *par, int npar, int d);

/* gp.c: Gaussian processes on random features */
int bochner_gp_stats(const double *x, R_xlen_t n, int d, const double *w, int D,
                     const double *amp, const double *y, const double *sw, int single,
                     double *zz, double *zy, int nthreads);
int bochner_gp_gradient(const double *x, R_xlen_t n, int d, const double *w, int D,
                        const double *amp, const double *y, const double *sw,
                        const double *alpha, const double *ainv, double s2, double *M,
                        double *csum, int nthreads);
int bochner_gp_chol(const double *a, int n, double *r, double *ri, int nthreads);

/* spectral.c */
int bochner_spectral_sample(int code, const double *par, int npar,
                            R_xlen_t n, int d, double *out);

/* sampling.c: orthogonal and randomised quasi-Monte Carlo frequencies.
 * The Halton sequence of qmc sampling has one prime base per input column
 * (R/sampling.R has the same bound). */
#define BOCHNER_QMC_MAX_DIM 1000000
int bochner_orthogonal_frequencies(int code, const double *par, int npar,
                                   R_xlen_t D, int d, double *out, double *norms);
int bochner_qmc_frequencies(int code, const double *par, int npar,
                            R_xlen_t D, int d, double *omega, double *phase);

/* features.c */
/* layout: 0 Z, 1 t(Z), 2 decision values Z %*% beta + intercept (non-static: the .Call
 * wrappers of api_maps.c choose the layout) */
void bochner_fourier_run(const double *x, R_xlen_t n, int d, const double *w, int nfreq,
                         const double *b, double scale, double *out, int layout,
                         const double *beta, const double *intercept, int m, int nthreads);
void bochner_fourier_transform(const double *x, R_xlen_t n, int d,
                               const double *w, int nfreq, const double *b,
                               double scale, double *z, int nthreads);

/* structured.c: structured orthogonal random features (SORF) */
int bochner_structured_transform(const double *x, R_xlen_t n, int d, int p, int nfreq,
                                 const int *sign, const double *radial, const double *b,
                                 double scale, double *z, int nthreads);
/* sparse.c: Fourier features of sparse rows, bit for bit the dense path's.  A
 * sparse matrix by rows: the columns of row i are col[ptr[i] .. ptr[i+1]-1],
 * increasing. */
typedef struct {
    const int *ptr, *col;
    const double *val;
    R_xlen_t n;
    int d;
} bochner_csr;
/* layout 0: Z, 1: t(Z), 2: Z beta + intercept (m columns); wt_all: NULL or t(w) */
void bochner_sparse_run(const bochner_csr *x, const double *w, const double *wt_all, int nfreq,
                        const double *b, double scale, double *out, int layout,
                        const double *beta, const double *intercept, int m, int nthreads);
void bochner_sparse_dist(const bochner_csr *r, int man, double *o);
/* the Walsh-Hadamard transform of columns, for the tests' entry point */
void bochner_fwht_columns(const double *x, int p, int m, double *out);

/* kmeans.c */
/* (bochner_kmeans_gram, bochner_kmeans_lloyd: see kmeans.h) */
void bochner_kmeans_centre_distances(const double *Z, R_xlen_t m, int D,
                                     const double *C, int k, double *out,
                                     int nthreads);
int bochner_kmeans_gram_distances(int code, const double *par, int npar,
                                  const double *y, R_xlen_t m, const double *x,
                                  R_xlen_t n, int d, const int *cluster,
                                  const int *size, const double *sq, int k,
                                  double *out, int nthreads);
/* fft.c: complex FFT of any length (R's C API has none since R 3.3.0) */
typedef struct {
    double re, im;
} bcx;

typedef struct bochner_fft_plan {
    int n;
    int nfac;                       /* number of (radix, remaining length) pairs */
    int fac[64];
    int max_radix;
    bcx *tw;                        /* exp(-2 pi i k / n), k < n */
    int bluestein;                  /* 1: length with a large prime factor */
    int m;                          /* Bluestein: power-of-two length >= 2n - 1 */
    struct bochner_fft_plan *sub;   /* Bluestein: plan of length m */
    bcx *chirp;                     /* Bluestein: exp(-i pi k^2 / n) */
    bcx *bfft;                      /* Bluestein: transform of the wrapped conj(chirp) */
} bochner_fft_plan;

bochner_fft_plan *bochner_fft_plan_make(int n);
size_t bochner_fft_work_size(const bochner_fft_plan *pl);
void bochner_fft(const bochner_fft_plan *pl, bcx *in, bcx *out, bcx *work,
                 int inverse);

/* polynomial.c: random projections, TensorSketch, min-kernel features */
void bochner_projection_features(const double *x, R_xlen_t n, int d,
                                 const double *w, int nfeat,
                                 const int *term_ptr, const int *term_deg,
                                 const double *term_weight, double *z,
                                 int nthreads);
void bochner_tensor_sketch(const double *x, R_xlen_t n, int d,
                           const int *hash, const double *sign, int p, int D,
                           double sx, double s0, double *z, int nthreads);
void bochner_min_features(const double *x, R_xlen_t n, int d,
                          const double *t, int D, const double *scale,
                          double *z, int nthreads);

/* rpcholesky.c: randomly pivoted Cholesky's Nystrom landmarks (block form with
 * rejection sampling), from scratch or continuing an earlier run */
int bochner_rpcholesky(int code, const double *par, int npar, const double *x, R_xlen_t n,
                       int d, const double *diag, int k, int b, int nthreads, double *F,
                       double *r, int nf0, int *pivots, int *found, double *trace,
                       double *drawn);

/* One binary SVM problem's samples: rows[0..n-1] (0-based columns of the
 * D x N features zt), their signs (+1 or -1) and costs; the dual solver
 * (svm.c) and the primal Newton solver share it. */
typedef struct {
    const double *zt;
    const int *rows;
    R_xlen_t n;
    int D;
    const int *sign;
    const double *cost;
} bochner_svm_samples;
/* The squared-hinge SVM's primal Newton solver (svm_newton.c) on one
 * binary problem. */
typedef struct {
    bochner_svm_samples s;
    double B, tol, gnorm0, f;
    int max_iter, iter, converged, done;
} bochner_svm_newton_problem;
double bochner_svm_dot(const double *a, const double *b, int D);
/* svm.c: the binary problems of a fit, described by concatenated per-sample
 * vectors (problem c: samples off[c] .. off[c+1]-1 of rows (1-based columns
 * of the D x N features zt), sign +1/-1, cost > 0), checked by api_svm.c */
typedef struct {
    int D, N, nprob, loss, shrink;
    R_xlen_t len;
    const int *off, *rows, *sign;
    const double *cost, *zt;
    double B, eps;
} bochner_svm_spec;
void bochner_svm_dcd(const bochner_svm_spec *sp, int max_iter, int nthreads, double *W,
                     double *A, int *iter, int *converged);
void bochner_svm_local(const bochner_svm_spec *sp, const double *w, double sigma, int passes,
                       const double *norms, int nthreads, double *V, double *A, double *DW,
                       double *AS, double *A2, int *iter);
void bochner_svm_newton_init(bochner_svm_newton_problem *p);
void bochner_svm_newton_step(bochner_svm_newton_problem *p, double *w, double *scratch);
void bochner_svm_newton_alpha(const bochner_svm_newton_problem *p, const double *w,
                              double *alpha);

/* features.c: the feature tile's cos / sin finish (shared with sparse.c) */
void bochner_fourier_finish(const double *prod, int nr, int nj, const double *b, double scale,
                            double *dest, ptrdiff_t ldd);

/* threads.c: FALKON's thread choice (its passes and factors) */
int bochner_falkon_threads(int nthreads, double work);

/* falkon.c: FALKON's passes over the rows; falkon_factor.c: its m x m factors and solves */
int bochner_falkon_knm_apply(int code, const double *par, int npar, const double *x,
                             R_xlen_t n, int d, const double *c, int m, const double *kc,
                             const float *kcf, const double *U, const double *V,
                             const double *w, int wcols, int k, double *out, double *ku,
                             int accumulate, R_xlen_t block_rows, int single, int nthreads);
int bochner_falkon_predict(int code, const double *par, int npar, const double *x,
                           R_xlen_t n, int d, const double *c, int m, const double *alpha,
                           int k, double *out, R_xlen_t block_rows, int nthreads);
/* The packed preconditioner: T (upper triangle of M, diagonal in aux[0..m)) and
 * A (strict lower triangle, diagonal in aux[m..2m)); aux[2m..2m+3) = lambda,
 * s, state (0: T only, 1: T and A, 2: a preconditioner interrupted half
 * way); g NULL or G = T T' / m kept */
typedef struct {
    double *M, *aux;
    int m;
    const double *g;
} bochner_falkon_packed;
int bochner_falkon_factor(const double *centres, int m, int d, int code, const double *par,
                          int npar, double e, double *M, double *aux, int nth);
void bochner_falkon_packed_restore(bochner_falkon_packed *p);
int bochner_falkon_packed_precond(bochner_falkon_packed *p, double lambda, double s,
                                  int nthreads);
void bochner_falkon_packed_solve(const bochner_falkon_packed *p, int a, double *X, int k,
                                 int trans, int nth);
void bochner_falkon_packed_tprod(const bochner_falkon_packed *p, const double *B, int k,
                                 int trans, double *C, int nth);
void bochner_falkon_packed_get(const bochner_falkon_packed *p, int w, double *o);
void bochner_falkon_packed_keep_g(bochner_falkon_packed *p, double *g, int nth);

#endif
