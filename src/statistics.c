/* Permutation nulls of the kernel two-sample (MMD) and independence (HSIC)
 * tests, and the feature moments of the kernel statistics.
 *
 *   mmd_labels                B random splits of N pooled rows into m and
 *                             N - m, as bit sets (draw_subset(): fair coins
 *                             16 to a uniform draw, adjusted to the group
 *                             size; drawn serially from R's generator)
 *   mmd_perm_gram             for the exact statistic: with L the N x (B+1)
 *                             0/1 matrix of group-X labels (column 0 the
 *                             observed split), a = diag(L'KL), b = L'K1,
 *                             d = L'diag(K), via KL on the package's product
 *   mmd_fold_*                the same on features K = ZZ', Z folded over
 *                             row blocks that R computes (Z is never held):
 *                             S = Z'L (D x (B+1)), q = L'rowSums(Z^2), every
 *                             split in one threaded product per block
 *   stat_moments_*            Zc'Zc and the column means of folded
 *                             features (the gamma nulls, HSIC, kernel PCA
 *                             and CCA), on tiles small enough to share a
 *                             D x D result between the threads
 *   hsic_perm_gram            sum_ij Kc_ij Lc_pi(i)pi(j) for B permutations
 *                             drawn serially, one permutation per block of
 *                             the parallel loop
 *
 * The unbiased MMD^2 of every split follows in R from (a, b, d) and the
 * totals 1'K1 and tr K (R/mmd.R).  All randomness is drawn before any
 * parallel work, and every sum runs in a fixed order, so results do not
 * depend on the number of threads.  The .Call wrappers, and the fold states
 * they keep as R objects, are in api_statistics.c. */
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

/* Word w of a bit set with the bits at or beyond N cleared. */
static inline uint64_t tail_mask(R_xlen_t N, R_xlen_t word)
{
    R_xlen_t left = N - word * WORD_BITS;
    return left >= WORD_BITS ? ~(uint64_t) 0 : (((uint64_t) 1 << left) - 1);
}

static int popcount64(uint64_t x)
{
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return (int) ((x * 0x0101010101010101ULL) >> 56);
}

/* One uniformly random s-subset of 0..N-1 into w (nwords words, cleared
 * first), from R's generator.  Near s = N/2: N fair coins, 16 from each
 * uniform draw (as R's own R_unif_index takes 16 bits a draw), then rows
 * chosen uniformly at random removed from (or added to) the set until it
 * has s rows: the coins give a set that is uniform given its size, and
 * removing or adding uniformly chosen rows keeps it so (N/16 + O(sqrt N)
 * draws, against N for selection sampling).  Far from N/2 (s < 0.4 N):
 * Floyd's algorithm, s index draws. */
static void draw_subset(R_xlen_t N, R_xlen_t s, uint64_t *w, R_xlen_t nwords)
{
    memset(w, 0, sizeof(uint64_t) * (size_t) nwords);
    if ((double) s < 0.4 * (double) N) {
        for (R_xlen_t j = N - s; j < N; j++) {
            R_xlen_t t = (R_xlen_t) R_unif_index((double) (j + 1));
            if (bit_get(w, t)) bit_set(w, j); else bit_set(w, t);
        }
        return;
    }
    R_xlen_t k = 0;
    for (R_xlen_t q = 0; q < nwords; q++) {
        uint64_t word = 0;
        for (int part = 0; part < 4; part++)
            word |= (uint64_t) (unif_rand() * 65536.0) << (16 * part);
        word &= tail_mask(N, q);
        w[q] = word;
        k += popcount64(word);
    }
    while (k != s) {
        R_xlen_t t = (R_xlen_t) R_unif_index((double) N);
        int in = bit_get(w, t);
        if (k > s && in) {
            w[t / WORD_BITS] &= ~((uint64_t) 1 << (t % WORD_BITS));
            k--;
        } else if (k < s && !in) {
            bit_set(w, t);
            k++;
        }
    }
}

/* For each of B permutations, the rows that fall in the first group of m:
 * a uniformly random m-subset of 0..N-1 (draw_subset() on the smaller
 * group, complemented when that is the second).  bits holds B * nwords
 * words.  Serial: R's generator. */
static void mmd_labels(R_xlen_t N, R_xlen_t m, int B, uint64_t *bits, R_xlen_t nwords)
{
    int flip = m > N - m;
    R_xlen_t s = flip ? N - m : m;
    GetRNGstate();
    for (int b = 0; b < B; b++) {
        uint64_t *w = bits + (ptrdiff_t) b * nwords;
        draw_subset(N, s, w, nwords);
        if (flip)
            for (R_xlen_t q = 0; q < nwords; q++) w[q] = ~w[q] & tail_mask(N, q);
        if ((b & 15) == 15) R_CheckUserInterrupt();
    }
    PutRNGstate();
}

/* Column c of L for rows r0 .. r0 + nr - 1: column 0 the observed split
 * (the first m rows), column 1 + b permutation b. */
static void mmd_expand_column(const uint64_t *bits, R_xlen_t nwords, R_xlen_t m, R_xlen_t r0,
                              int nr, int c, double *col)
{
    if (c == 0) {
        for (int i = 0; i < nr; i++) col[i] = r0 + i < m ? 1.0 : 0.0;
        return;
    }
    const uint64_t *w = bits + (ptrdiff_t) (c - 1) * nwords;
    /* a word at a time: the shifts stay in registers */
    for (int i = 0; i < nr;) {
        R_xlen_t g = r0 + i;
        int skip = (int) (g % WORD_BITS), take = WORD_BITS - skip;
        if (take > nr - i) take = nr - i;
        uint64_t word = w[g / WORD_BITS] >> skip;
        for (int t = 0; t < take; t++) col[i + t] = (double) ((word >> t) & 1u);
        i += take;
    }
}

static void mmd_expand(const uint64_t *bits, R_xlen_t nwords, int B, R_xlen_t m, R_xlen_t r0,
                       int nr, double *L)
{
    for (int c = 0; c <= B; c++)
        mmd_expand_column(bits, nwords, m, r0, nr, c, L + (ptrdiff_t) c * nr);
}

uint64_t *bochner_mmd_draw(R_xlen_t N, R_xlen_t m, int B, R_xlen_t *nwords)
{
    *nwords = (N + WORD_BITS - 1) / WORD_BITS;
    uint64_t *bits = (uint64_t *) R_alloc((size_t) *nwords * (size_t) (B > 0 ? B : 1),
                                          sizeof(uint64_t));
    if (B > 0) mmd_labels(N, m, B, bits, *nwords);
    return bits;
}

/* c (m x n) += t(a) %*% b, a (k x m, lda), on square tiles of STAT_TILE
 * spread over the threads; with 'upper' only the tiles that meet the upper
 * triangle (a symmetric result; bochner_mirror_upper() completes it).  The
 * outputs of these statistics are small (D x D, D x (B + 1)) and the inner
 * dimension long, so products.c's 240-square tiles would leave one thread
 * with most of the work; each entry is still one chain over k in order
 * (gemm.c), so the result does not depend on the threads. */
#define STAT_TILE 48
typedef struct {
    const double *a, *b;
    ptrdiff_t lda, ldb, ldc;
    int m, n, k, tm;
    double *c;
    const int *tiles;
} tn_job;

static void tn_tile(const tn_job *p, int id)
{
    int bi = id % p->tm, bj = id / p->tm;
    int i0 = bi * STAT_TILE, j0 = bj * STAT_TILE;
    int mr = p->m - i0 < STAT_TILE ? p->m - i0 : STAT_TILE;
    int nc = p->n - j0 < STAT_TILE ? p->n - j0 : STAT_TILE;
    bochner_gemm_tn(p->a + (ptrdiff_t) i0 * p->lda, p->lda, p->b + (ptrdiff_t) j0 * p->ldb, p->ldb,
                    mr, nc, p->k, p->c + i0 + (ptrdiff_t) j0 * p->ldc, p->ldc, 1);
}

/* the tiles of an m x n result (upper: those with i0 <= j0), into ids; returns their count */
static int tn_tiles(int m, int n, int upper, int **ids)
{
    int tm = (m + STAT_TILE - 1) / STAT_TILE, tn = (n + STAT_TILE - 1) / STAT_TILE, q = 0;
    *ids = (int *) R_alloc((size_t) tm * (size_t) tn, sizeof(int));
    for (int bj = 0; bj < tn; bj++)
        for (int bi = 0; bi < tm; bi++)
            if (!upper || bi <= bj) (*ids)[q++] = bi + bj * tm;
    return q;
}

/* The work of one row block of the MMD feature stream (z, nr x D): phase 1
 * expands the label columns L (nr x (B+1)), the squared row norms r and
 * the column sums s; phase 2 the tiles of S += Z'L and q += L'r.  Every
 * task writes its own outputs, each a chain in row order. */
#define STAT_ROWS 1024         /* rows per row-norm task */
#define STAT_COLS 8            /* columns per label / column-sum / q task */
typedef struct {
    int phase, nr, D, nc;
    const double *z;
    const uint64_t *bits;
    R_xlen_t nwords, m, r0;
    double *L, *r, *s, *q;
    const double *ones;        /* nr ones: column sums as products */
    tn_job tn;
    int ntiles, nL, nR, nS;
} mmd_block_job;

static void mmd_block_task(void *ctx, R_xlen_t task, int thread)
{
    (void) thread;
    const mmd_block_job *p = (const mmd_block_job *) ctx;
    int t = (int) task, nr = p->nr;
    if (p->phase == 2) {
        if (t < p->ntiles) {
            tn_tile(&p->tn, p->tn.tiles[t]);
            return;
        }
        /* q += L'r on the product kernel: its chains interleave, and
         * they are the same whatever the row blocks */
        int c0 = (t - p->ntiles) * STAT_COLS, c1 = c0 + STAT_COLS < p->nc ? c0 + STAT_COLS : p->nc;
        bochner_gemm_tn(p->r, nr, p->L + (ptrdiff_t) c0 * nr, nr, 1, c1 - c0, nr, p->q + c0, 1, 1);
        return;
    }
    if (t < p->nL) {
        int c0 = t * STAT_COLS, c1 = c0 + STAT_COLS < p->nc ? c0 + STAT_COLS : p->nc;
        for (int c = c0; c < c1; c++)
            mmd_expand_column(p->bits, p->nwords, p->m, p->r0, nr, c, p->L + (ptrdiff_t) c * nr);
    } else if ((t -= p->nL) < p->nR) {
        int i0 = t * STAT_ROWS, i1 = i0 + STAT_ROWS < nr ? i0 + STAT_ROWS : nr;
        double *r = p->r;
        for (int i = i0; i < i1; i++) r[i] = 0.0;
        for (int j = 0; j < p->D; j++) {
            const double *zj = p->z + (ptrdiff_t) j * nr;
            for (int i = i0; i < i1; i++) r[i] += zj[i] * zj[i];
        }
    } else {
        t -= p->nR;
        int j0 = t * STAT_COLS, j1 = j0 + STAT_COLS < p->D ? j0 + STAT_COLS : p->D;
        bochner_gemm_tn(p->z + (ptrdiff_t) j0 * nr, nr, p->ones, nr, j1 - j0, 1, nr, p->s + j0, p->D,
                        1);
    }
}

/* Exact statistic: K the N x N Gram matrix of the pooled sample (X first);
 * the first m rows are X.  a, b, d: B + 1 each (the labels drawn here). */
void bochner_mmd_perm_gram(const double *k, int N, int mm, int nb, int nth, double *A,
                           double *Bv, double *Dv)
{
    int nc = nb + 1;
    R_xlen_t nwords;
    uint64_t *bits = bochner_mmd_draw(N, mm, nb, &nwords);
    double *L = (double *) R_alloc((size_t) N * (size_t) nc, sizeof(double));
    double *KL = (double *) R_alloc((size_t) N * (size_t) nc, sizeof(double));
    mmd_expand(bits, nwords, nb, mm, 0, N, L);
    bochner_product(k, N, L, N, N, nc, N, KL, N, 0, 0, nth);
    for (int c = 0; c < nc; c++) {
        const double *l = L + (ptrdiff_t) c * N, *kl = KL + (ptrdiff_t) c * N;
        double sa = 0.0, sb = 0.0, sd = 0.0;
        for (int i = 0; i < N; i++) {
            sa += l[i] * kl[i];
            sb += kl[i];
            sd += l[i] * k[i + (ptrdiff_t) i * N];
        }
        A[c] = sa;
        Bv[c] = sb;
        Dv[c] = sd;
    }
}

static double *ones(size_t n)
{
    double *p = (double *) R_alloc(n, sizeof(double));
    for (size_t i = 0; i < n; i++) p[i] = 1.0;
    return p;
}

/* The MMD on features, folded over row blocks (api_statistics.c keeps the
 * state): the block z (nr x D) of the pooled rows r0 .. r0 + nr - 1 added
 * to S = Z'L (D x (B + 1)), q = L'r, s = Z'1 and Qacc[0] = 1'r, with r the
 * squared row norms and L the labels (bits, from bochner_mmd_draw(); column
 * 0 the observed split, the first m rows). */
void bochner_mmd_fold_block(const double *z, int nr, int D, int nb, const uint64_t *bits,
                            R_xlen_t nwords, R_xlen_t m, R_xlen_t r0, double *S, double *sum,
                            double *q, double *Qacc, int nth)
{
    int nc = nb + 1;
    mmd_block_job job;
    memset(&job, 0, sizeof job);
    job.tn = (tn_job) {NULL, NULL, 0, 0, D, D, nc, 0, (D + STAT_TILE - 1) / STAT_TILE, S, NULL};
    int *ids;
    job.ntiles = tn_tiles(D, nc, 0, &ids);
    job.tn.tiles = ids;
    job.L = (double *) R_alloc((size_t) nr * (size_t) nc, sizeof(double));
    job.r = (double *) R_alloc((size_t) nr, sizeof(double));
    job.ones = ones((size_t) nr);
    job.nr = nr;
    job.D = D;
    job.nc = nc;
    job.z = z;
    job.bits = bits;
    job.nwords = nwords;
    job.m = m;
    job.r0 = r0;
    job.s = sum;
    job.q = q;
    job.nL = (nc + STAT_COLS - 1) / STAT_COLS;
    job.nR = (nr + STAT_ROWS - 1) / STAT_ROWS;
    job.nS = (D + STAT_COLS - 1) / STAT_COLS;
    job.tn.a = z;
    job.tn.lda = nr;
    job.tn.b = job.L;
    job.tn.ldb = nr;
    job.tn.k = nr;
    double work = (double) nr * (double) (D + nc);
    job.phase = 1;
    bochner_parallel_blocks(job.nL + job.nR + job.nS, bochner_threads_for(nth, work), 64,
                            mmd_block_task, &job);
    for (int i = 0; i < nr; i++) Qacc[0] += job.r[i];
    job.phase = 2;
    bochner_parallel_blocks(job.ntiles + job.nL, bochner_threads_for(nth, work * D), 64,
                            mmd_block_task, &job);
}

/* One row block of the moments stream: zc = z - shift and its column sums
 * (phase 1, column strips; the sums as products, zc'1, whose chains
 * interleave), then the tiles of zz += zc'zc (phase 2). */
typedef struct {
    int phase, nr, D;
    const double *z, *shift, *ones;
    double *zc, *sum;
    tn_job tn;
    int ntiles;
} moments_job;

static void moments_task(void *ctx, R_xlen_t task, int thread)
{
    (void) thread;
    const moments_job *p = (const moments_job *) ctx;
    if (p->phase == 2) {
        tn_tile(&p->tn, p->tn.tiles[task]);
        return;
    }
    int nr = p->nr, j0 = (int) task * STAT_COLS, j1 = j0 + STAT_COLS < p->D ? j0 + STAT_COLS : p->D;
    for (int j = j0; j < j1; j++) {
        const double *zj = p->z + (ptrdiff_t) j * nr;
        double *cj = p->zc + (ptrdiff_t) j * nr, sh = p->shift[j];
        for (int i = 0; i < nr; i++) cj[i] = zj[i] - sh;
    }
    bochner_gemm_tn(p->zc + (ptrdiff_t) j0 * nr, nr, p->ones, nr, j1 - j0, 1, nr, p->sum + j0, p->D, 1);
}

/* Centred cross product of a tall Z folded over row blocks (the state is
 * api_statistics.c's): as products.c's moments fold, accumulated about the
 * first block's column means (shift, bochner_stat_moments_shift()) and
 * corrected at the end, Zc'Zc = (Z - t)'(Z - t) - n (zbar - t)(zbar - t)',
 * so that centring cancels no digits; the tiles are small (tn_job), for the
 * D x D output. */
void bochner_stat_moments_shift(const double *z, int nr, int D, double *shift)
{
    for (int j = 0; j < D; j++) {
        const double *zj = z + (ptrdiff_t) j * nr;
        double a = 0.0;
        for (int i = 0; i < nr; i++) a += zj[i];
        shift[j] = a / nr;
    }
}

/* The block z (nr x D) added to zz (upper triangle) and sum.  single: zz by the
 * single-precision product (the shifted block rounded to float, sgemm.c's float sums of
 * 256 rows added in double; the sums stay double), for the kernel statistics' precision
 * (R/stat-statistics.R); the tiles are then products.c's, as for rff_gp()'s Z'Z. */
void bochner_stat_moments_block(const double *z, int nr, int D, const double *shift, double *zz,
                                double *sum, int single, int nth)
{
    moments_job job;
    memset(&job, 0, sizeof job);
    job.tn = (tn_job) {NULL, NULL, 0, 0, D, D, D, 0, (D + STAT_TILE - 1) / STAT_TILE, zz, NULL};
    int *ids;
    job.ntiles = tn_tiles(D, D, 1, &ids);
    job.tn.tiles = ids;
    job.zc = (double *) R_alloc((size_t) nr * (size_t) D, sizeof(double));
    job.ones = ones((size_t) nr);
    job.nr = nr;
    job.D = D;
    job.z = z;
    job.shift = shift;
    job.sum = sum;
    job.tn.a = job.tn.b = job.zc;
    job.tn.lda = job.tn.ldb = nr;
    job.tn.k = nr;
    double work = (double) nr * (double) D;
    job.phase = 1;
    bochner_parallel_blocks((D + STAT_COLS - 1) / STAT_COLS, bochner_threads_for(nth, work), 64,
                            moments_task, &job);
    if (single) {
        float *zf = (float *) R_alloc((size_t) nr * (size_t) D, sizeof(float));
        bochner_to_float(job.zc, (R_xlen_t) nr * D, zf);
        bochner_sproduct(1, zf, nr, zf, nr, D, D, nr, zz, D, 1, 1, nth);
        return;
    }
    job.phase = 2;
    bochner_parallel_blocks(job.ntiles, bochner_threads_for(nth, work * D / 2.0), 64,
                            moments_task, &job);
}

/* The end: zz corrected and completed in place, zbar (D) from n rows. */
void bochner_stat_moments_finish(double *g, int D, const double *sum, const double *shift,
                                 double n, double *zbar, int nth)
{
    for (int j = 0; j < D; j++)
        for (int i = 0; i <= j; i++) g[i + (ptrdiff_t) j * D] -= sum[i] * (sum[j] / n);
    bochner_mirror_upper(g, D, nth);
    for (int j = 0; j < D; j++) zbar[j] = shift[j] + sum[j] / n;
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

/* t (B + 1) of K and L (n x n each), the permutations drawn here. */
void bochner_hsic_perm_gram(const double *K, const double *L, int n, int nb, int nth,
                            double *out)
{
    int nc = nb + 1;
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
    hsic_job job = {K, L, perm, n, out};
    /* permutations per thread between interrupt checks: about 2e7
     * multiply-adds, so that small n does not start a parallel region for
     * every few permutations */
    double per = 2e7 / ((double) n * (double) n);
    int per_check = per < 4.0 ? 4 : (per > 1e6 ? 1000000 : (int) per);
    bochner_parallel_blocks(nc, bochner_threads_for(nth, (double) n * (double) n * nc), per_check,
                            hsic_block, &job);
}
