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
 * A column's state travels to R as c(special, partials...) (api_products.c
 * converts it). */
#include "bochner.h"
#include <math.h>
#include <string.h>

#define EXP_MAX BOCHNER_EXP_MAX
typedef bochner_expansion expansion;
#define exp_add bochner_exp_add

/* e += x exactly (Python's msum step: keep the non-zero rounding errors). */
void exp_add(expansion *e, double x)
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

/* Add the rows of x (n x d) to the column states s and q (d each). */
void bochner_column_sums_add(const double *x, R_xlen_t n, int d, expansion *s, expansion *q,
                             int nthreads)
{
    if (n <= 0 || d <= 0) return;
    moments_ctx c = {x, n, s, q};
    int nt = bochner_threads_for(nthreads, 8.0 * (double) n * d);
    bochner_parallel_blocks(d, nt, 1, moments_column, &c);
}

/* A column's centre fl(S) / n and m2 = max(fl(n Q - S^2) / n, 0), t scratch. */
void bochner_column_moment(const expansion *s, const expansion *q, double n, expansion *t,
                           double *center, double *m2)
{
    *center = exp_round(s) / n;
    /* n Q - S^2, exactly */
    t->len = 0;
    t->special = s->special != 0.0 || q->special != 0.0 ? s->special * s->special + q->special
                                                         : 0.0;
    for (int i = 0; i < q->len; i++) exp_add_product(t, n, q->p[i]);
    for (int i = 0; i < s->len; i++)
        for (int k = 0; k < s->len; k++) exp_add_product(t, -s->p[i], s->p[k]);
    double v = exp_round(t) / n;
    *m2 = v < 0.0 ? 0.0 : v;
}
