/* placeholder: libm version, to be replaced by the vectorised one */
#include "bochner.h"
#include <math.h>
void bochner_cos_affine(double *y, const double *x, ptrdiff_t n, double shift, double scale)
{ for (ptrdiff_t i = 0; i < n; i++) y[i] = scale * cos(x[i] + shift); }
void bochner_sincos_scaled(double *c, double *s, const double *x, ptrdiff_t n, double scale)
{ for (ptrdiff_t i = 0; i < n; i++) { c[i] = scale * cos(x[i]); s[i] = scale * sin(x[i]); } }
SEXP bochner_fast_sincos(SEXP x)
{
    if (TYPEOF(x) != REALSXP) error("'x' must be a double vector");
    R_xlen_t n = XLENGTH(x);
    SEXP c = PROTECT(allocVector(REALSXP, n)), s = PROTECT(allocVector(REALSXP, n));
    bochner_sincos_scaled(REAL(c), REAL(s), REAL(x), n, 1.0);
    SEXP out = PROTECT(allocVector(VECSXP, 2)), nm = PROTECT(allocVector(STRSXP, 2));
    SET_VECTOR_ELT(out, 0, c); SET_VECTOR_ELT(out, 1, s);
    SET_STRING_ELT(nm, 0, mkChar("cos")); SET_STRING_ELT(nm, 1, mkChar("sin"));
    setAttrib(out, R_NamesSymbol, nm);
    UNPROTECT(4);
    return out;
}
