/* The squared-hinge SVM in the primal by Newton's method (Keerthi and
 * DeCoste 2005, the finite Newton method; LIBLINEAR's -s 2 solves the same
 * primal with a trust-region Newton).  At a large cost the dual coordinate
 * descent of svm.c needs a number of passes that grows with the cost (the
 * dual's curvature 1/(2 C) vanishes); the primal Newton step does not care.
 *
 * For labels y_i = +-1, features x_i augmented with the constant B and
 * costs C_i, the primal is
 *     f(w) = 1/2 w.w + sum_i C_i max(0, 1 - y_i w.x_i)^2,
 * with gradient g = w - 2 sum_{i in I} C_i y_i (1 - y_i w.x_i) x_i and
 * (generalised) Hessian H = I + 2 sum_{i in I} C_i x_i x_i', I the samples
 * with margin below 1.  Each step solves H s = -g by conjugate gradients
 * (Jacobi-preconditioned, Hessian-vector products from two passes over the
 * samples, no D x D matrix), then finds the exact minimum of the piecewise
 * quadratic f(w + t s) in t by a safeguarded one-dimensional Newton search.
 * Everything is serial in a fixed order: the result does not depend on the
 * thread count.  Pure C, no R API (it runs on the package's threads). */
#include "bochner.h"
#include <math.h>

/* sum_j a[j] b[j] in four interleaved partial sums (a fixed order). */
double bochner_svm_dot(const double *a, const double *b, int D)
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    int j = 0;
    for (; j + 4 <= D; j += 4) {
        s0 += a[j] * b[j];
        s1 += a[j + 1] * b[j + 1];
        s2 += a[j + 2] * b[j + 2];
        s3 += a[j + 3] * b[j + 3];
    }
    for (; j < D; j++) s0 += a[j] * b[j];
    return (s0 + s1) + (s2 + s3);
}

/* v.x_i for the augmented sample i (D features, then B). */
static inline double nt_xdot(const double *v, const double *xi, int D, double B)
{
    return bochner_svm_dot(v, xi, D) + v[D] * B;
}

static inline void nt_xaxpy(double *v, double a, const double *xi, int D, double B)
{
    for (int j = 0; j < D; j++) v[j] += a * xi[j];
    v[D] += a * B;
}

/* Hv = v + 2 sum_{i in I} C_i (x_i.v) x_i, I: margin[i] < 1. */
static void nt_hess(const bochner_svm_newton_problem *p, const double *margin,
                    const double *v, double *hv)
{
    const int D = p->s.D;
    for (int j = 0; j <= D; j++) hv[j] = v[j];
    for (R_xlen_t i = 0; i < p->s.n; i++) {
        if (margin[i] >= 1.0) continue;
        const double *xi = p->s.zt + (R_xlen_t) p->s.rows[i] * D;
        nt_xaxpy(hv, 2.0 * p->s.cost[i] * nt_xdot(v, xi, D, p->B), xi, D, p->B);
    }
}

/* Margins y_i w.x_i, the objective and the gradient at w. */
static double nt_eval(const bochner_svm_newton_problem *p, const double *w, double *margin,
                      double *g)
{
    const int D = p->s.D;
    double f = 0.5 * bochner_svm_dot(w, w, D + 1);
    for (int j = 0; j <= D; j++) g[j] = w[j];
    for (R_xlen_t i = 0; i < p->s.n; i++) {
        const double *xi = p->s.zt + (R_xlen_t) p->s.rows[i] * D;
        double yi = p->s.sign[i] > 0 ? 1.0 : -1.0;
        margin[i] = yi * nt_xdot(w, xi, D, p->B);
        double m = 1.0 - margin[i];
        if (m > 0.0) {
            f += p->s.cost[i] * m * m;
            nt_xaxpy(g, -2.0 * p->s.cost[i] * yi * m, xi, D, p->B);
        }
    }
    return f;
}

/* phi'(t) and phi''(t) of phi(t) = f(w + t s), from the margins o_i and
 * the directional margins q_i = y_i s.x_i. */
static void nt_line(const bochner_svm_newton_problem *p, const double *o, const double *q,
                    double ws, double ss, double t, double *d1, double *d2)
{
    double a = ws + t * ss, b = ss;
    for (R_xlen_t i = 0; i < p->s.n; i++) {
        double m = 1.0 - o[i] - t * q[i];
        if (m > 0.0) {
            a -= 2.0 * p->s.cost[i] * q[i] * m;
            b += 2.0 * p->s.cost[i] * q[i] * q[i];
        }
    }
    *d1 = a;
    *d2 = b;
}

void bochner_svm_newton_init(bochner_svm_newton_problem *p)
{
    p->gnorm0 = -1.0;
    p->f = R_PosInf;
    p->iter = 0;
    p->converged = 0;
    p->done = 0;
}

/* One Newton step from w (updated in place; any start).  scratch: 6 (D + 1) + 2 n
 * doubles.  Sets done (and converged) when the gradient norm is at most
 * tol times its value at w = 0, or when a step no longer decreases the
 * objective (the limit of the arithmetic). */
void bochner_svm_newton_step(bochner_svm_newton_problem *p, double *w, double *scratch)
{
    const int D = p->s.D, D1 = D + 1;
    double *g = scratch, *s = g + D1, *r = s + D1, *d = r + D1, *hd = d + D1, *M = hd + D1;
    double *margin = M + D1, *q = margin + p->s.n;
    if (p->gnorm0 < 0.0) {
        /* the reference: the gradient's norm at w = 0 */
        for (int j = 0; j <= D; j++) s[j] = 0.0;
        nt_eval(p, s, margin, g);
        p->gnorm0 = sqrt(bochner_svm_dot(g, g, D1));
    }
    double f = nt_eval(p, w, margin, g);
    double gn = sqrt(bochner_svm_dot(g, g, D1));
    if (gn <= p->tol * p->gnorm0 || f >= p->f) {
        p->converged = 1;
        p->done = 1;
        return;
    }
    p->f = f;
    /* the Jacobi preconditioner diag(H) */
    for (int j = 0; j <= D; j++) M[j] = 1.0;
    for (R_xlen_t i = 0; i < p->s.n; i++) {
        if (margin[i] >= 1.0) continue;
        const double *xi = p->s.zt + (R_xlen_t) p->s.rows[i] * D;
        double c2 = 2.0 * p->s.cost[i];
        for (int j = 0; j < D; j++) M[j] += c2 * xi[j] * xi[j];
        M[D] += c2 * p->B * p->B;
    }
    /* CG on H s = -g to a relative residual eta (tighter as g falls:
     * superlinear convergence of the inexact Newton method) */
    double eta = fmin(0.5, sqrt(gn / p->gnorm0));
    for (int j = 0; j <= D; j++) {
        s[j] = 0.0;
        r[j] = -g[j];
        d[j] = r[j] / M[j];
    }
    double rz = 0.0;
    for (int j = 0; j <= D; j++) rz += r[j] * d[j];
    int maxcg = 2 * D1 + 20;
    for (int k = 0; k < maxcg; k++) {
        if (sqrt(bochner_svm_dot(r, r, D1)) <= eta * gn) break;
        nt_hess(p, margin, d, hd);
        double dhd = bochner_svm_dot(d, hd, D1);
        if (!(dhd > 0.0)) break;
        double a = rz / dhd;
        for (int j = 0; j <= D; j++) {
            s[j] += a * d[j];
            r[j] -= a * hd[j];
        }
        double rz_new = 0.0;
        for (int j = 0; j <= D; j++) rz_new += r[j] * r[j] / M[j];
        double beta = rz_new / rz;
        rz = rz_new;
        for (int j = 0; j <= D; j++) d[j] = r[j] / M[j] + beta * d[j];
    }
    /* exact line search on the piecewise quadratic phi(t) = f(w + t s):
     * phi'(0) = g.s < 0; Newton's iteration in t, kept inside the bracket
     * [lo, hi] of the sign change of phi' (bisection when it leaves it) */
    for (R_xlen_t i = 0; i < p->s.n; i++) {
        const double *xi = p->s.zt + (R_xlen_t) p->s.rows[i] * D;
        q[i] = (p->s.sign[i] > 0 ? 1.0 : -1.0) * nt_xdot(s, xi, D, p->B);
    }
    double ws = bochner_svm_dot(w, s, D1), ss = bochner_svm_dot(s, s, D1), d0 = bochner_svm_dot(g, s, D1);
    if (!(d0 < 0.0)) {
        p->converged = 1;
        p->done = 1;
        return;
    }
    double lo = 0.0, hi = R_PosInf, t = 1.0;
    for (int k = 0; k < 60; k++) {
        double d1, d2;
        nt_line(p, margin, q, ws, ss, t, &d1, &d2);
        if (fabs(d1) <= 1e-12 * fabs(d0)) break;
        if (d1 < 0.0) lo = t; else hi = t;
        double tn = t - d1 / d2;
        if (!(tn > lo && tn < hi)) tn = R_FINITE(hi) ? 0.5 * (lo + hi) : 2.0 * t;
        if (R_FINITE(hi) && hi - lo <= 1e-15 * hi) break;
        t = tn;
    }
    for (int j = 0; j <= D; j++) w[j] += t * s[j];
    p->iter++;
    if (p->iter >= p->max_iter) p->done = 1;
}

/* alpha_i = 2 C_i max(0, 1 - y_i w.x_i): the dual variables of the
 * optimum (w = sum alpha_i y_i x_i there). */
void bochner_svm_newton_alpha(const bochner_svm_newton_problem *p, const double *w,
                              double *alpha)
{
    for (R_xlen_t i = 0; i < p->s.n; i++) {
        const double *xi = p->s.zt + (R_xlen_t) p->s.rows[i] * p->s.D;
        double m = 1.0 - (p->s.sign[i] > 0 ? 1.0 : -1.0) * nt_xdot(w, xi, p->s.D, p->B);
        alpha[i] = m > 0.0 ? 2.0 * p->s.cost[i] * m : 0.0;
    }
}
