/* A small complex FFT for the TensorSketch features.
 *
 * R's C API no longer offers an FFT: the entry points fft_factor and
 * fft_work were removed from R_ext/Applic.h in R 3.3.0, and stats' fft() is
 * not callable from C.  So this file carries its own: a recursive
 * decimation-in-time transform for any length, with radix-4, -2, -3 and -5
 * butterflies and a generic butterfly for other small primes.  A length with
 * a prime factor above MAX_RADIX goes through Bluestein's algorithm, which
 * turns the transform into a circular convolution of a power-of-two length
 * m >= 2n - 1 (about six times the work of a smooth length).
 *
 * A plan is built once (serially, with R_alloc) and is read-only afterwards,
 * so several threads may run transforms with the same plan, each with its
 * own work buffer of bochner_fft_work_size() complex numbers.  Input and
 * output must be distinct arrays.  The forward
 * transform computes X[k] = sum_j x[j] exp(-2 pi i j k / n), like
 * stats::fft(); the inverse is unnormalised, like fft(inverse = TRUE). */
#include "bochner.h"
#include <math.h>
#include <string.h>
#include <limits.h>

#define MAX_RADIX 31

static void factorise(bochner_fft_plan *pl)
{
    int n = pl->n, rest = n, k = 0;
    int p = 4;
    while (rest > 1) {
        while (rest % p != 0) {
            if (p == 4) p = 2;
            else if (p == 2) p = 3;
            else p += 2;
            if ((long) p * p > rest) p = rest;  /* rest is prime */
        }
        rest /= p;
        pl->fac[k++] = p;
        pl->fac[k++] = rest;
        if (p > pl->max_radix) pl->max_radix = p;
    }
    pl->nfac = k / 2;
}

static int largest_prime_factor(int n)
{
    int largest = 1;
    for (int p = 2; (long) p * p <= n; p++)
        while (n % p == 0) {
            largest = p;
            n /= p;
        }
    return n > 1 ? (n > largest ? n : largest) : largest;
}

static void fill_twiddles(bcx *tw, int n)
{
    for (int k = 0; k < n; k++) {
        double a = -2.0 * M_PI * (double) k / (double) n;
        tw[k].re = cos(a);
        tw[k].im = sin(a);
    }
}

bochner_fft_plan *bochner_fft_plan_make(int n)
{
    bochner_fft_plan *pl = (bochner_fft_plan *) R_alloc(1, sizeof(bochner_fft_plan));
    memset(pl, 0, sizeof(*pl));
    pl->n = n;
    pl->max_radix = 1;
    if (n > 1 && largest_prime_factor(n) > MAX_RADIX) {
        int m = 1;
        while (m < 2 * n - 1) m *= 2;
        pl->bluestein = 1;
        pl->m = m;
        pl->sub = bochner_fft_plan_make(m);
        /* chirp c_j = exp(-i pi j^2 / n), the angle reduced exactly mod 2n */
        pl->chirp = (bcx *) R_alloc((size_t) n, sizeof(bcx));
        for (int j = 0; j < n; j++) {
            long long q = ((long long) j * j) % (2LL * n);
            double a = -M_PI * (double) q / (double) n;
            pl->chirp[j].re = cos(a);
            pl->chirp[j].im = sin(a);
        }
        /* b = conj(chirp), wrapped circularly, and its transform */
        bcx *b = (bcx *) R_alloc((size_t) m, sizeof(bcx));
        memset(b, 0, sizeof(bcx) * (size_t) m);
        for (int j = 0; j < n; j++) {
            b[j].re = pl->chirp[j].re;
            b[j].im = -pl->chirp[j].im;
            if (j > 0) b[m - j] = b[j];
        }
        pl->bfft = (bcx *) R_alloc((size_t) m, sizeof(bcx));
        bcx *work = (bcx *) R_alloc(bochner_fft_work_size(pl->sub), sizeof(bcx));
        bochner_fft(pl->sub, b, pl->bfft, work, 0);
        return pl;
    }
    pl->tw = (bcx *) R_alloc((size_t) (n > 0 ? n : 1), sizeof(bcx));
    fill_twiddles(pl->tw, n);
    if (n > 1) factorise(pl);
    return pl;
}

size_t bochner_fft_work_size(const bochner_fft_plan *pl)
{
    if (pl->bluestein) return 2 * (size_t) pl->m + bochner_fft_work_size(pl->sub);
    return (size_t) (pl->max_radix > 1 ? pl->max_radix : 1);
}

static inline bcx cmul(bcx a, bcx b)
{
    bcx r = {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
    return r;
}

/* Combine p transforms of length m, stored one after another in out, into
 * one transform of length p m.  tw holds exp(-2 pi i k / n) and fstride is
 * n / (p m). */
static void butterfly(bcx *out, int p, int m, R_xlen_t fstride, const bcx *tw,
                      bcx *scratch)
{
    if (p == 2) {
        bcx *o1 = out + m;
        for (int k = 0; k < m; k++) {
            bcx t = cmul(o1[k], tw[k * fstride]);
            o1[k].re = out[k].re - t.re;
            o1[k].im = out[k].im - t.im;
            out[k].re += t.re;
            out[k].im += t.im;
        }
    } else if (p == 4) {
        for (int k = 0; k < m; k++) {
            bcx t0 = out[k];
            bcx t1 = cmul(out[k + m], tw[k * fstride]);
            bcx t2 = cmul(out[k + 2 * m], tw[2 * k * fstride]);
            bcx t3 = cmul(out[k + 3 * m], tw[3 * k * fstride]);
            bcx s02 = {t0.re + t2.re, t0.im + t2.im};
            bcx d02 = {t0.re - t2.re, t0.im - t2.im};
            bcx s13 = {t1.re + t3.re, t1.im + t3.im};
            bcx d13 = {t1.re - t3.re, t1.im - t3.im};
            /* forward: W_4 = -i, so -i * d13 = (d13.im, -d13.re) */
            out[k].re = s02.re + s13.re;
            out[k].im = s02.im + s13.im;
            out[k + m].re = d02.re + d13.im;
            out[k + m].im = d02.im - d13.re;
            out[k + 2 * m].re = s02.re - s13.re;
            out[k + 2 * m].im = s02.im - s13.im;
            out[k + 3 * m].re = d02.re - d13.im;
            out[k + 3 * m].im = d02.im + d13.re;
        }
    } else if (p == 3) {
        const double h = 0.86602540378443864676;  /* sqrt(3) / 2 */
        for (int k = 0; k < m; k++) {
            bcx t0 = out[k];
            bcx t1 = cmul(out[k + m], tw[k * fstride]);
            bcx t2 = cmul(out[k + 2 * m], tw[2 * k * fstride]);
            bcx a = {t1.re + t2.re, t1.im + t2.im};
            bcx b = {t1.re - t2.re, t1.im - t2.im};
            bcx c = {t0.re - 0.5 * a.re, t0.im - 0.5 * a.im};
            /* X1 = c - i h b, X2 = c + i h b */
            out[k].re = t0.re + a.re;
            out[k].im = t0.im + a.im;
            out[k + m].re = c.re + h * b.im;
            out[k + m].im = c.im - h * b.re;
            out[k + 2 * m].re = c.re - h * b.im;
            out[k + 2 * m].im = c.im + h * b.re;
        }
    } else if (p == 5) {
        const double c1 = 0.30901699437494742410, c2 = -0.80901699437494742410;
        const double s1 = 0.95105651629515357212, s2 = 0.58778525229247312917;
        for (int k = 0; k < m; k++) {
            bcx t0 = out[k];
            bcx t1 = cmul(out[k + m], tw[k * fstride]);
            bcx t2 = cmul(out[k + 2 * m], tw[2 * k * fstride]);
            bcx t3 = cmul(out[k + 3 * m], tw[3 * k * fstride]);
            bcx t4 = cmul(out[k + 4 * m], tw[4 * k * fstride]);
            bcx a1 = {t1.re + t4.re, t1.im + t4.im}, b1 = {t1.re - t4.re, t1.im - t4.im};
            bcx a2 = {t2.re + t3.re, t2.im + t3.im}, b2 = {t2.re - t3.re, t2.im - t3.im};
            bcx u1 = {t0.re + c1 * a1.re + c2 * a2.re, t0.im + c1 * a1.im + c2 * a2.im};
            bcx u2 = {t0.re + c2 * a1.re + c1 * a2.re, t0.im + c2 * a1.im + c1 * a2.im};
            bcx v1 = {s1 * b1.re + s2 * b2.re, s1 * b1.im + s2 * b2.im};
            bcx v2 = {s2 * b1.re - s1 * b2.re, s2 * b1.im - s1 * b2.im};
            /* X1 = u1 - i v1, X4 = u1 + i v1, X2 = u2 - i v2, X3 = u2 + i v2 */
            out[k].re = t0.re + a1.re + a2.re;
            out[k].im = t0.im + a1.im + a2.im;
            out[k + m].re = u1.re + v1.im;
            out[k + m].im = u1.im - v1.re;
            out[k + 4 * m].re = u1.re - v1.im;
            out[k + 4 * m].im = u1.im + v1.re;
            out[k + 2 * m].re = u2.re + v2.im;
            out[k + 2 * m].im = u2.im - v2.re;
            out[k + 3 * m].re = u2.re - v2.im;
            out[k + 3 * m].im = u2.im + v2.re;
        }
    } else {
        /* any radix: tw[root] = exp(-2 pi i / p); q k fstride < n */
        R_xlen_t root = fstride * m;
        for (int k = 0; k < m; k++) {
            scratch[0] = out[k];
            for (int q = 1; q < p; q++)
                scratch[q] = cmul(out[k + q * m], tw[(R_xlen_t) q * k * fstride]);
            for (int s = 0; s < p; s++) {
                bcx acc = scratch[0];
                int e = 0;   /* q s mod p */
                for (int q = 1; q < p; q++) {
                    e += s;
                    if (e >= p) e -= p;
                    bcx t = cmul(scratch[q], tw[(R_xlen_t) e * root]);
                    acc.re += t.re;
                    acc.im += t.im;
                }
                out[k + s * m] = acc;
            }
        }
    }
}

/* Transform of in[0], in[fstride], ..., (n / fstride values) into out. */
static void fft_rec(bcx *out, const bcx *in, R_xlen_t fstride, const int *fac,
                    const bochner_fft_plan *pl, bcx *scratch)
{
    int p = fac[0], m = fac[1];
    if (m == 1) {
        for (int q = 0; q < p; q++) out[q] = in[q * fstride];
    } else {
        for (int q = 0; q < p; q++)
            fft_rec(out + (R_xlen_t) q * m, in + q * fstride, fstride * p, fac + 2,
                    pl, scratch);
    }
    butterfly(out, p, m, fstride, pl->tw, scratch);
}

static void fft_forward(const bochner_fft_plan *pl, const bcx *in, bcx *out, bcx *work)
{
    int n = pl->n;
    if (n == 1) {
        out[0] = in[0];
        return;
    }
    if (!pl->bluestein) {
        fft_rec(out, in, 1, pl->fac, pl, work);
        return;
    }
    int m = pl->m;
    bcx *a = work, *fa = work + m, *subwork = work + 2 * (size_t) m;
    for (int j = 0; j < n; j++) a[j] = cmul(in[j], pl->chirp[j]);
    memset(a + n, 0, sizeof(bcx) * (size_t) (m - n));
    fft_forward(pl->sub, a, fa, subwork);
    /* convolution by the inverse transform: conj(fft(conj(fa * bfft))) / m */
    for (int j = 0; j < m; j++) {
        bcx t = cmul(fa[j], pl->bfft[j]);
        fa[j].re = t.re;
        fa[j].im = -t.im;
    }
    fft_forward(pl->sub, fa, a, subwork);
    double s = 1.0 / (double) m;
    for (int k = 0; k < n; k++) {
        bcx c = {a[k].re * s, -a[k].im * s};
        out[k] = cmul(c, pl->chirp[k]);
    }
}

void bochner_fft(const bochner_fft_plan *pl, bcx *in, bcx *out, bcx *work,
                 int inverse)
{
    if (!inverse) {
        fft_forward(pl, in, out, work);
        return;
    }
    /* inverse (unnormalised) = conj(forward(conj(x))); in is conjugated in
     * place and restored, which is exact */
    int n = pl->n;
    for (int j = 0; j < n; j++) in[j].im = -in[j].im;
    fft_forward(pl, in, out, work);
    for (int j = 0; j < n; j++) {
        in[j].im = -in[j].im;
        out[j].im = -out[j].im;
    }
}
