/* Permutation nulls of the kernel two-sample (MMD) and independence (HSIC)
 * tests.
 *
 *   mmd_labels                B random splits of N pooled rows into m and
 *                             N - m (selection sampling into a bit set,
 *                             drawn serially from R's generator)
 *   mmd_perm_gram_call        for the exact statistic: with L the N x (B+1)
 *                             0/1 matrix of group-X labels (column 0 the
 *                             observed split), a = diag(L'KL), b = L'K1,
 *                             d = L'diag(K), via KL on the package's product
 *   mmd_perm_stream_call      the same on features K = ZZ', Z streamed in
 *                             row blocks that R computes (Z is never held):
 *                             S = Z'L (D x (B+1)), q = L'rowSums(Z^2)
 *   hsic_perm_gram_call       sum_ij Kc_ij Lc_pi(i)pi(j) for B permutations
 *                             drawn serially, one permutation per block of
 *                             the parallel loop
 *
 * The unbiased MMD^2 of every split follows in R from (a, b, d) and the
 * totals 1'K1 and tr K (R/mmd.R).  All randomness is drawn before any
 * parallel work, and every sum runs in a fixed order, so results do not
 * depend on the number of threads or on the row blocks. */
#include "bochner.h"
#include <stdint.h>
#include <string.h>

#define WORD_BITS 64

static inline int bit_get(const uint64_t *w, R_xlen_t i)
{
    return (int) ((w[i / WORD_BITS] >> (i % WORD_BITS)) & 1u);
}

static inline void bit_set(uint64_t *w, R_xlen_t i)
{
    w[i / WORD_BITS] |= (uint64_t) 1 << (i % WORD_BITS);
}

/* For each of B permutations, the rows that fall in the first group of m:
 * a uniformly random m-subset of 0..N-1 by selection sampling (Knuth's
 * Algorithm S: row i joins with probability (m - chosen) / (N - i)), one
 * uniform draw per row, written a 64-bit word at a time.  bits holds B *
 * nwords words.  Serial: R's generator. */
static void mmd_labels(R_xlen_t N, R_xlen_t m, int B, uint64_t *bits, R_xlen_t nwords)
{
    memset(bits, 0, sizeof(uint64_t) * (size_t) nwords * (size_t) B);
    GetRNGstate();
    for (int b = 0; b < B; b++) {
        uint64_t *w = bits + (ptrdiff_t) b * nwords;
        R_xlen_t need = m;
        for (R_xlen_t i0 = 0; i0 < N && need > 0; i0 += WORD_BITS) {
            R_xlen_t i1 = N - i0 < WORD_BITS ? N : i0 + WORD_BITS;
            uint64_t word = 0;
            for (R_xlen_t i = i0; i < i1 && need > 0; i++) {
                if (need == N - i) {                /* every remaining row is chosen */
                    for (R_xlen_t r = i; r < i1; r++) word |= (uint64_t) 1 << (r - i0);
                    for (R_xlen_t r = i1; r < N; r++) bit_set(w, r);
                    need = 0;
                    break;
                }
                if (unif_rand() * (double) (N - i) < (double) need) {
                    word |= (uint64_t) 1 << (i - i0);
                    need--;
                }
            }
            w[i0 / WORD_BITS] |= word;
        }
        if ((b & 15) == 15) R_CheckUserInterrupt();
    }
    PutRNGstate();
}

/* L[i, c] for rows r0 .. r0 + nr - 1: column 0 the observed split (the
 * first m rows), column 1 + b permutation b. */
static void mmd_expand(const uint64_t *bits, R_xlen_t nwords, int B, R_xlen_t m, R_xlen_t r0,
                       int nr, double *L)
{
    for (int i = 0; i < nr; i++) L[i] = r0 + i < m ? 1.0 : 0.0;
    for (int b = 0; b < B; b++) {
        const uint64_t *w = bits + (ptrdiff_t) b * nwords;
        double *col = L + (ptrdiff_t) (b + 1) * nr;
        for (int i = 0; i < nr; i++) col[i] = (double) bit_get(w, r0 + i);
    }
}

static uint64_t *mmd_draw(R_xlen_t N, R_xlen_t m, int B, R_xlen_t *nwords)
{
    *nwords = (N + WORD_BITS - 1) / WORD_BITS;
    uint64_t *bits = (uint64_t *) R_alloc((size_t) *nwords * (size_t) (B > 0 ? B : 1),
                                          sizeof(uint64_t));
    if (B > 0) mmd_labels(N, m, B, bits, *nwords);
    return bits;
}

static SEXP named_list(const char **names, SEXP *values, int n)
{
    SEXP out = PROTECT(mkNamed(VECSXP, names));
    for (int i = 0; i < n; i++) SET_VECTOR_ELT(out, i, values[i]);
    UNPROTECT(1);
    return out;
}

/* Exact statistic: K the N x N Gram matrix of the pooled sample (X first). */
SEXP bochner_mmd_perm_gram_call(SEXP K, SEXP m, SEXP B, SEXP nthreads)
{
    if (!bochner_is_real_matrix(K) || nrows(K) != ncols(K)) error("'K' must be a square double matrix");
    int N = nrows(K);
    int mm = bochner_count_arg(m, "m", 1), nb = bochner_count_arg(B, "B", 0);
    if (mm >= N) error("'m' must be less than the number of rows of 'K'");
    int nth = bochner_nthreads(asInteger(nthreads)), nc = nb + 1;
    R_xlen_t nwords;
    uint64_t *bits = mmd_draw(N, mm, nb, &nwords);
    double *L = (double *) R_alloc((size_t) N * (size_t) nc, sizeof(double));
    double *KL = (double *) R_alloc((size_t) N * (size_t) nc, sizeof(double));
    mmd_expand(bits, nwords, nb, mm, 0, N, L);
    bochner_product(REAL(K), N, L, N, N, nc, N, KL, N, 0, 0, nth);
    SEXP a = PROTECT(allocVector(REALSXP, nc)), b = PROTECT(allocVector(REALSXP, nc)),
         d = PROTECT(allocVector(REALSXP, nc));
    const double *k = REAL(K);
    for (int c = 0; c < nc; c++) {
        const double *l = L + (ptrdiff_t) c * N, *kl = KL + (ptrdiff_t) c * N;
        double sa = 0.0, sb = 0.0, sd = 0.0;
        for (int i = 0; i < N; i++) {
            sa += l[i] * kl[i];
            sb += kl[i];
            sd += l[i] * k[i + (ptrdiff_t) i * N];
        }
        REAL(a)[c] = sa;
        REAL(b)[c] = sb;
        REAL(d)[c] = sd;
    }
    const char *names[] = {"a", "b", "d", ""};
    SEXP vals[] = {a, b, d};
    SEXP out = named_list(names, vals, 3);
    UNPROTECT(3);
    return out;
}

/* Features: block(i), i = 1..nblocks, returns the nr x D features of the
 * next rows of the pooled sample (X's N1 rows first, then Y's); N rows in
 * all.  Returns list(S = Z'L, q = L'r, s = Z'1, Q = 1'r) with r the
 * squared row norms of Z. */
SEXP bochner_mmd_perm_stream_call(SEXP block, SEXP nblocks, SEXP rho, SEXP N, SEXP m, SEXP B,
                                  SEXP nthreads)
{
    if (!isFunction(block)) error("'block' must be a function");
    if (!isEnvironment(rho)) error("'rho' must be an environment");
    int nbl = bochner_count_arg(nblocks, "nblocks", 1);
    if (TYPEOF(N) != REALSXP || XLENGTH(N) != 1 || !(REAL(N)[0] >= 2.0))
        error("'N' must be a number of at least 2");
    R_xlen_t NN = (R_xlen_t) REAL(N)[0];
    if (TYPEOF(m) != REALSXP || XLENGTH(m) != 1 || !(REAL(m)[0] >= 1.0) ||
        (R_xlen_t) REAL(m)[0] >= NN)
        error("'m' must be a number between 1 and N - 1");
    R_xlen_t mm = (R_xlen_t) REAL(m)[0];
    int nb = bochner_count_arg(B, "B", 0), nc = nb + 1;
    int nth = bochner_nthreads(asInteger(nthreads));
    R_xlen_t nwords;
    uint64_t *bits = mmd_draw(NN, mm, nb, &nwords);
    int D = 0;
    R_xlen_t r0 = 0;
    size_t cap = 0;
    double *L = NULL, *zt = NULL, *r = NULL, *S = NULL, *q = NULL, *s = NULL, Q = 0.0;
    for (int ib = 0; ib < nbl; ib++) {
        SEXP arg = PROTECT(ScalarInteger(ib + 1));
        SEXP call = PROTECT(lang2(block, arg));
        SEXP z = PROTECT(eval(call, rho));
        if (!bochner_is_real_matrix(z) || nrows(z) < 1) error("block(%d) must return a double matrix", ib + 1);
        int nr = nrows(z);
        if (ib == 0) {
            D = ncols(z);
            if (D < 1) error("the feature blocks must have at least one column");
            S = (double *) R_alloc((size_t) D * (size_t) nc, sizeof(double));
            s = (double *) R_alloc((size_t) D, sizeof(double));
            q = (double *) R_alloc((size_t) nc, sizeof(double));
            memset(S, 0, sizeof(double) * (size_t) D * (size_t) nc);
            memset(s, 0, sizeof(double) * (size_t) D);
            memset(q, 0, sizeof(double) * (size_t) nc);
        } else if (ncols(z) != D) {
            error("block(%d) has %d columns; the first had %d", ib + 1, ncols(z), D);
        }
        if (r0 + nr > NN) error("the blocks have more than N rows");
        if ((size_t) nr > cap) {
            cap = (size_t) nr;
            L = (double *) R_alloc(cap * (size_t) nc, sizeof(double));
            zt = (double *) R_alloc(cap * (size_t) D, sizeof(double));
            r = (double *) R_alloc(cap, sizeof(double));
        }
        const double *zp = REAL(z);
        bochner_transpose(zp, nr, nr, D, zt, D);
        for (int i = 0; i < nr; i++) {
            const double *zi = zt + (ptrdiff_t) i * D;
            double a = 0.0;
            for (int j = 0; j < D; j++) a += zi[j] * zi[j];
            r[i] = a;
            Q += a;
        }
        for (int j = 0; j < D; j++) {
            const double *zj = zp + (ptrdiff_t) j * nr;
            double a = s[j];
            for (int i = 0; i < nr; i++) a += zj[i];
            s[j] = a;
        }
        UNPROTECT(3);
        mmd_expand(bits, nwords, nb, mm, r0, nr, L);
        for (int c = 0; c < nc; c++) {
            const double *l = L + (ptrdiff_t) c * nr;
            double a = q[c];
            for (int i = 0; i < nr; i++) a += l[i] * r[i];
            q[c] = a;
        }
        bochner_product(zt, D, L, nr, D, nc, nr, S, D, 1, 0, nth);
        r0 += nr;
    }
    if (r0 != NN) error("the blocks have %.0f rows, not N = %.0f", (double) r0, (double) NN);
    SEXP So = PROTECT(allocMatrix(REALSXP, D, nc)), qo = PROTECT(allocVector(REALSXP, nc)),
         so = PROTECT(allocVector(REALSXP, D));
    memcpy(REAL(So), S, sizeof(double) * (size_t) D * (size_t) nc);
    memcpy(REAL(qo), q, sizeof(double) * (size_t) nc);
    memcpy(REAL(so), s, sizeof(double) * (size_t) D);
    SEXP Qo = PROTECT(ScalarReal(Q));
    const char *names[] = {"S", "q", "s", "Q", ""};
    SEXP vals[] = {So, qo, so, Qo};
    SEXP out = named_list(names, vals, 4);
    UNPROTECT(4);
    return out;
}

/* HSIC under permutations of the second sample: t_c = sum_ij Kc_ij
 * Lc_{p(i) p(j)} for c = 0 (the identity) and B permutations p drawn
 * serially by Fisher-Yates from R's generator. */
typedef struct {
    const double *K, *L;
    const int *perm;
    int n;
    double *out;
} hsic_job;

static void hsic_block(void *ctx, R_xlen_t c, int thread)
{
    (void) thread;
    const hsic_job *p = (const hsic_job *) ctx;
    int n = p->n;
    const int *pi = p->perm + (ptrdiff_t) c * n;
    double total = 0.0;
    for (int j = 0; j < n; j++) {
        const double *kj = p->K + (ptrdiff_t) j * n, *lj = p->L + (ptrdiff_t) pi[j] * n;
        double a = 0.0;
        for (int i = 0; i < n; i++) a += kj[i] * lj[pi[i]];
        total += a;
    }
    p->out[c] = total;
}

SEXP bochner_hsic_perm_gram_call(SEXP K, SEXP L, SEXP B, SEXP nthreads)
{
    if (!bochner_is_real_matrix(K) || nrows(K) != ncols(K)) error("'K' must be a square double matrix");
    if (!bochner_is_real_matrix(L) || nrows(L) != nrows(K) || ncols(L) != nrows(K))
        error("'L' must be a square double matrix the size of 'K'");
    int n = nrows(K), nb = bochner_count_arg(B, "B", 0), nc = nb + 1;
    int nth = bochner_nthreads(asInteger(nthreads));
    int *perm = (int *) R_alloc((size_t) n * (size_t) nc, sizeof(int));
    for (int i = 0; i < n; i++) perm[i] = i;
    GetRNGstate();
    for (int c = 1; c < nc; c++) {
        int *pc = perm + (ptrdiff_t) c * n;
        for (int i = 0; i < n; i++) pc[i] = i;
        for (int i = n - 1; i > 0; i--) {
            int j = (int) R_unif_index((double) (i + 1));
            int t = pc[i];
            pc[i] = pc[j];
            pc[j] = t;
        }
    }
    PutRNGstate();
    SEXP out = PROTECT(allocVector(REALSXP, nc));
    hsic_job job = {REAL(K), REAL(L), perm, n, REAL(out)};
    /* permutations per thread between interrupt checks: about 2e7
     * multiply-adds, so that small n does not start a parallel region for
     * every few permutations */
    double per = 2e7 / ((double) n * (double) n);
    int per_check = per < 4.0 ? 4 : (per > 1e6 ? 1000000 : (int) per);
    bochner_parallel_blocks(nc, bochner_threads_for(nth, (double) n * (double) n * nc), per_check,
                            hsic_block, &job);
    UNPROTECT(1);
    return out;
}
