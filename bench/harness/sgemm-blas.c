/* The products suite's (bench/suites/products.R) window on the BLAS's single-precision products: sgemm_ and ssyrk_ of
 * the BLAS that R itself loaded (R_LD_LIBRARY_PATH picks it, .ci/blas-dir), found in
 * the process with dlsym, so that bochner's float product and the BLAS's are timed in
 * the same process on the same float operands.  Compiled by the suite (R CMD SHLIB)
 * into a temporary directory; not part of the package.
 *
 * Operands are the raw float matrices of .Call(bochner:::C_float_matrix, x) (4 bytes an
 * entry, dimensions in the attribute "float_dim"); results are float, returned the same
 * way (R_alloc'd scratch would be freed too early for the timing to be fair either way:
 * both sides allocate their result on each call). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <R.h>
#include <Rinternals.h>

typedef void (*sgemm_fn)(const char *, const char *, const int *, const int *, const int *,
                         const float *, const float *, const int *, const float *,
                         const int *, const float *, float *, const int *);
typedef void (*ssyrk_fn)(const char *, const char *, const int *, const int *, const float *,
                         const float *, const int *, const float *, float *, const int *);

static void *blas_symbol(const char *name)
{
    void *f = dlsym(RTLD_DEFAULT, name);
    if (!f) error("the BLAS R loaded has no %s", name);
    return f;
}

static const float *operand(SEXP x, int *nr, int *nc)
{
    SEXP dim = getAttrib(x, install("float_dim"));
    if (TYPEOF(x) != RAWSXP || TYPEOF(dim) != INTSXP || XLENGTH(dim) != 2)
        error("a float matrix from bochner:::C_float_matrix is needed");
    *nr = INTEGER(dim)[0];
    *nc = INTEGER(dim)[1];
    return (const float *) RAW(x);
}

static SEXP result(int nr, int nc, float **c)
{
    SEXP ans = PROTECT(allocVector(RAWSXP, (R_xlen_t) nr * nc * 4));
    SEXP dim = PROTECT(allocVector(INTSXP, 2));
    INTEGER(dim)[0] = nr;
    INTEGER(dim)[1] = nc;
    setAttrib(ans, install("float_dim"), dim);
    *c = (float *) RAW(ans);
    UNPROTECT(2);
    return ans;
}

/* a %*% b */
SEXP bench_sgemm(SEXP a, SEXP b)
{
    int m, k, k2, n;
    const float *fa = operand(a, &m, &k), *fb = operand(b, &k2, &n);
    if (k != k2) error("non-conformable");
    float *c;
    SEXP ans = PROTECT(result(m, n, &c));
    const float one = 1.0f, zero = 0.0f;
    ((sgemm_fn) blas_symbol("sgemm_"))("N", "N", &m, &n, &k, &one, fa, &m, fb, &k, &zero, c, &m);
    UNPROTECT(1);
    return ans;
}

/* t(a) %*% a, the upper triangle (ssyrk) */
SEXP bench_ssyrk(SEXP a)
{
    int k, n;
    const float *fa = operand(a, &k, &n);
    float *c;
    SEXP ans = PROTECT(result(n, n, &c));
    const float one = 1.0f, zero = 0.0f;
    ((ssyrk_fn) blas_symbol("ssyrk_"))("U", "T", &n, &k, &one, fa, &k, &zero, c, &n);
    UNPROTECT(1);
    return ans;
}

/* the file the BLAS's sgemm_ came from */
SEXP bench_blas_file(void)
{
    Dl_info info;
    void *f = dlsym(RTLD_DEFAULT, "sgemm_");
    return mkString(f && dladdr(f, &info) && info.dli_fname ? info.dli_fname : "?");
}

/* float matrix back to double (to check the BLAS's result) */
SEXP bench_float_to_double(SEXP x)
{
    int nr, nc;
    const float *f = operand(x, &nr, &nc);
    SEXP ans = PROTECT(allocMatrix(REALSXP, nr, nc));
    for (R_xlen_t i = 0; i < (R_xlen_t) nr * nc; i++) REAL(ans)[i] = f[i];
    UNPROTECT(1);
    return ans;
}
