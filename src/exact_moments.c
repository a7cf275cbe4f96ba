/* Column means and centred sums of squares that do not depend on how the
 * rows are grouped: the standardisation of the in-memory fits and of the
 * chunked fits (one chunk at a time, merged in any grouping) is then the
 * same to the last bit.
 *
 * Each column keeps the exact sums S = sum x and Q = sum x^2 as
 * expansions: non-overlapping doubles whose exact sum is the value
 * (Shewchuk 1997, "Adaptive precision floating-point arithmetic"; the
 * partials of Python's math.fsum).  x^2 enters exactly as p + e with
 * p = fl(x x) and e = fma(x, x, -p).  Merging two states adds the partials
 * of one into the other, still exactly.  At the end
 *   centre = fl(S) / n,   m2 = fl(n Q - S^2) / n,
 * where fl() rounds an expansion correctly (n Q - S^2 is formed exactly
 * from the partials by the same error-free products), so both depend only
 * on the exact sums: on the rows, not on their grouping or order.  An
 * expansion of doubles has at most about (1024 + 1074) / 53 partials;
 * EXP_MAX leaves room.  Non-finite values (and an overflowing sum) are
 * kept apart in 'special', which then is the result (Inf, -Inf or NaN).
 *
 * A column's state travels to R as c(special, partials...). */
#include "bochner.h"
#include <math.h>
#include <string.h>

#define EXP_MAX 128

typedef struct {
    int len;
    double special;
    double p[EXP_MAX];
} expansion;

/* e += x exactly (Python's msum step: keep the non-zero rounding errors). */
static void exp_add(expansion *e, double x)
{
    if (!isfinite(x)) {
        e->special += x;
        return;
    }
    int j = 0;
    for (int i = 0; i < e->len; i++) {
        double y = e->p[i];
        if (fabs(x) < fabs(y)) {
            double t = x;
            x = y;
            y = t;
        }
        double hi = x + y;
        double lo = y - (hi - x);
        if (lo != 0.0) e->p[j++] = lo;
        x = hi;
    }
    if (!isfinite(x)) e->special += x;          /* the sum overflowed */
    else if (j < EXP_MAX) e->p[j++] = x;
    e->len = j;
}

/* e += a b exactly, through the error-free product. */
static void exp_add_product(expansion *e, double a, double b)
{
    double p = a * b;
    exp_add(e, p);
    if (isfinite(p)) exp_add(e, fma(a, b, -p));
}

/* The double nearest the expansion's value (ties to even), as math.fsum. */
static double exp_round(const expansion *e)
{
    if (e->special != 0.0) return e->special;
    int n = e->len;
    if (n == 0) return 0.0;
    double hi = e->p[--n], lo = 0.0;
    while (n > 0) {
        double x = hi, y = e->p[--n];
        hi = x + y;
        lo = y - (hi - x);
        if (lo != 0.0) break;
    }
    /* a half-way case decided by the partials below */
    if (n > 0 && ((lo < 0.0 && e->p[n - 1] < 0.0) || (lo > 0.0 && e->p[n - 1] > 0.0))) {
        double y = lo * 2.0, x = hi + y;
        if (y == x - hi) hi = x;
    }
    return hi;
}

static void exp_from_r(expansion *e, SEXP v)
{
    e->len = 0;
    e->special = 0.0;
    if (isNull(v)) return;
    const double *r = REAL(v);
    R_xlen_t len = XLENGTH(v);
    e->special = len > 0 ? r[0] : 0.0;
    for (R_xlen_t i = 1; i < len; i++) exp_add(e, r[i]);
}

static SEXP exp_to_r(const expansion *e)
{
    SEXP v = PROTECT(allocVector(REALSXP, (R_xlen_t) e->len + 1));
    REAL(v)[0] = e->special;
    if (e->len > 0) memcpy(REAL(v) + 1, e->p, sizeof(double) * (size_t) e->len);
    UNPROTECT(1);
    return v;
}

typedef struct {
    const double *x;
    R_xlen_t n;
    expansion *s, *q;
} moments_ctx;

static void moments_column(void *vctx, R_xlen_t j, int thread)
{
    (void) thread;
    moments_ctx *c = vctx;
    const double *col = c->x + j * c->n;
    for (R_xlen_t i = 0; i < c->n; i++) {
        exp_add(&c->s[j], col[i]);
        exp_add_product(&c->q[j], col[i], col[i]);
    }
}

/* The state list(s, q) (one expansion per column each) of the rows of x
 * (NULL: none) added to states a and b (NULL: empty). */
SEXP bochner_column_sums_exact_call(SEXP x, SEXP a, SEXP b, SEXP nthreads)
{
    R_xlen_t n = 0;
    int d = -1;
    if (!isNull(x)) {
        if (!bochner_is_real_matrix(x)) error("'x' must be a double matrix");
        n = nrows(x);
        d = ncols(x);
    }
    SEXP states[2] = {a, b};
    for (int k = 0; k < 2; k++) {
        if (isNull(states[k])) continue;
        if (TYPEOF(states[k]) != VECSXP || XLENGTH(states[k]) != 2)
            error("a state of the exact column sums must be list(s, q)");
        int dk = (int) XLENGTH(VECTOR_ELT(states[k], 0));
        if (d >= 0 && dk != d) error("the exact column sums have %d and %d columns", d, dk);
        d = dk;
    }
    if (d < 0) d = 0;
    expansion *s = (expansion *) R_alloc((size_t) d + 1, sizeof(expansion));
    expansion *q = (expansion *) R_alloc((size_t) d + 1, sizeof(expansion));
    for (int j = 0; j < d; j++) {
        exp_from_r(&s[j], isNull(a) ? R_NilValue : VECTOR_ELT(VECTOR_ELT(a, 0), j));
        exp_from_r(&q[j], isNull(a) ? R_NilValue : VECTOR_ELT(VECTOR_ELT(a, 1), j));
        if (!isNull(b)) {
            SEXP sb = VECTOR_ELT(VECTOR_ELT(b, 0), j), qb = VECTOR_ELT(VECTOR_ELT(b, 1), j);
            for (R_xlen_t i = 0; i < XLENGTH(sb); i++)
                if (i == 0) s[j].special += REAL(sb)[0]; else exp_add(&s[j], REAL(sb)[i]);
            for (R_xlen_t i = 0; i < XLENGTH(qb); i++)
                if (i == 0) q[j].special += REAL(qb)[0]; else exp_add(&q[j], REAL(qb)[i]);
        }
    }
    if (n > 0 && d > 0) {
        moments_ctx c = {REAL(x), n, s, q};
        int nt = bochner_threads_for(bochner_nthreads(asInteger(nthreads)), 8.0 * (double) n * d);
        bochner_parallel_blocks(d, nt, 1, moments_column, &c);
    }
    SEXP out = PROTECT(allocVector(VECSXP, 2));
    SEXP so = allocVector(VECSXP, d);
    SET_VECTOR_ELT(out, 0, so);
    SEXP qo = allocVector(VECSXP, d);
    SET_VECTOR_ELT(out, 1, qo);
    for (int j = 0; j < d; j++) {
        SET_VECTOR_ELT(so, j, exp_to_r(&s[j]));
        SET_VECTOR_ELT(qo, j, exp_to_r(&q[j]));
    }
    UNPROTECT(1);
    return out;
}

/* list(center, m2) from a state of n rows: fl(S) / n and fl(n Q - S^2) / n. */
SEXP bochner_column_moments_exact_call(SEXP state, SEXP rows)
{
    if (TYPEOF(state) != VECSXP || XLENGTH(state) != 2)
        error("a state of the exact column sums must be list(s, q)");
    double n = asReal(rows);
    if (!(n >= 0.0)) error("'rows' must be a count");
    int d = (int) XLENGTH(VECTOR_ELT(state, 0));
    SEXP out = PROTECT(allocVector(VECSXP, 2));
    SEXP center = allocVector(REALSXP, d);
    SET_VECTOR_ELT(out, 0, center);
    SEXP m2 = allocVector(REALSXP, d);
    SET_VECTOR_ELT(out, 1, m2);
    expansion *s = (expansion *) R_alloc(1, sizeof(expansion));
    expansion *q = (expansion *) R_alloc(1, sizeof(expansion));
    expansion *t = (expansion *) R_alloc(1, sizeof(expansion));
    for (int j = 0; j < d; j++) {
        exp_from_r(s, VECTOR_ELT(VECTOR_ELT(state, 0), j));
        exp_from_r(q, VECTOR_ELT(VECTOR_ELT(state, 1), j));
        REAL(center)[j] = exp_round(s) / n;
        /* n Q - S^2, exactly */
        t->len = 0;
        t->special = s->special != 0.0 || q->special != 0.0 ? s->special * s->special + q->special
                                                             : 0.0;
        for (int i = 0; i < q->len; i++) exp_add_product(t, n, q->p[i]);
        for (int i = 0; i < s->len; i++)
            for (int k = 0; k < s->len; k++) exp_add_product(t, -s->p[i], s->p[k]);
        double v = exp_round(t) / n;
        REAL(m2)[j] = v < 0.0 ? 0.0 : v;
    }
    UNPROTECT(1);
    return out;
}
