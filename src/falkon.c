/* FALKON (Rudi, Carratino & Rosasco 2017): the heavy parts, in C.
 *
 *   falkon_knm_apply   out = init + K_nm' diag(w) (K_nm U + V), one pass over
 *                      the rows of x in row blocks, many right-hand sides
 *                      (the columns of U and V) at once; K_nm evaluated
 *                      block by block, or read from a cached K_nm
 *   falkon_knm_part, falkon_pass_fold, falkon_pass_finish
 *                      the same pass in parts (the chunks of a data_chunks()
 *                      fit): each part's state, folded in row order, then
 *                      finished into the pass's result, bit for bit
 *   falkon_predict     K_nm alpha, in row blocks
 *   falkon_kernel_cache  K_nm itself, in row blocks (the passes' cache)
 * (the m x m factors and solves are in falkon_factor.c; the .Call wrappers,
 * and the parts' states as R lists, in api_falkon.c; falkon.h shares the
 * pass's stack and states with it)
 *
 * Without a cache K_nm = k(X, C) is never held: each block of rows gets its
 * kernel block Kb = k(X_b, C) from bochner_kernel_matrix() (threaded inside),
 * then
 *   T_b = w_b * (Kb U + V_b)          (threaded product, products.c)
 *   Kg' T_g for each group g of rows  (threaded over tiles of out, gemm.c)
 * and the groups' results are added along a fixed tree (below).  With U the
 * identity (the pass that forms H = K_nm' W K_nm for few centres) T_b is
 * w_b * Kb without the product, and only the upper triangle of each group's
 * Kg' T_g is computed and then mirrored: half the work of the plain pass.
 * With a cache (K_nm computed once by kernel_matrix() when it fits the
 * memory budget, R/falkon-fit.R) Kb is the cached block, read in place: the
 * same products on the same numbers, so the cached and the evaluated passes
 * agree bit for bit.
 * The blocks run in row order on the calling thread (bochner_kernel_matrix
 * allocates with R_alloc, so it must not run inside a parallel region), and
 * the threads work inside each block's kernel evaluation and products.  An
 * evaluated pass of a Euclidean kernel (Gaussian, Matern) on two or more
 * threads instead gives each thread whole groups of rows: it evaluates a
 * group's kernel rows in its own scratch (bochner_dk_rows_serial(), no R
 * API) and forms T and the leaf there, and the leaves are pushed in group
 * order (groups_evaluated(): at m = 10^4 two threads had been no faster
 * than one).
 * Every entry of out is then fixed by the global row numbers alone (each
 * group's entry one gemm.c chain over its rows, the groups added along a
 * tree over their numbers), and k(x_i, C) does not depend on the other rows
 * of its block (the kernel centres the data at the mean of C), so the
 * result is identical, bit for bit, for any number of threads, any block
 * size and any cut of the rows into parts.  User interrupts are checked
 * between blocks.
 *
 * Single precision (falkon_control(precision), issue 38): K_nm is stored in
 * float, half the bytes: the cache (falkon_kernel_cache(single)) holds the
 * double entries rounded, and each evaluated block is rounded in place, so
 * the cached and evaluated passes still agree bit for bit.  With at most 8
 * right-hand sides a cached block is read in place by gemm.c's _xf kernels
 * (the double kernels' chains on the widened entries), an evaluated one
 * rounded in place: every pass applies the same operator, the float-rounded
 * kernel matrix, exactly as a double fit on a kernel perturbed by 6e-8
 * relative an entry.  With more (bochner_falkon_float_products(), falkon.h)
 * the products are float: U and each T rounded to float, K_b U and each
 * leaf K_g' T_g by sgemm.c's chains (float K-blocks of 256 summed in
 * double), which depend on no block, tile or thread, so the identities
 * above hold.  There the passes are compute-bound (Letter: 26 columns) and
 * float does twice the multiply-adds an instruction.  Their rounding differs
 * from pass to pass; at tiny lambda the factor's jitter for float
 * (R/fit-falkon-solve.R) keeps CG from amplifying it (Letter at 1e-8: the
 * double fit's accuracy, bench/investigations/falkon-precision.md). */
#include "bochner.h"
#include "falkon.h"
#include <string.h>

/* Rows per block: about 16 MB of kernel block, at least 256 and at most
 * 8192 rows.  Each block opens a few parallel regions (kernel, products,
 * transpose); blocks this large keep their synchronisation negligible,
 * which matters most on a loaded machine. */
static R_xlen_t default_block_rows(R_xlen_t n, int m)
{
    R_xlen_t b = (R_xlen_t) ((16u << 20) / (8u * (unsigned) (m > 0 ? m : 1)));
    if (b < 256) b = 256;
    if (b > 8192) b = 8192;
    return b > n ? (n > 0 ? n : 1) : b;
}

/* The kernel blocks k(X_b, C) of a pass over the rows of x (n x d) in
 * blocks of nb rows, with their scratch. */
typedef struct {
    int d, m, nthreads;
    const double *x;
    R_xlen_t n, nb;
    double *xb, *kb;
    bochner_kernel_against k;   /* the centres' side, computed once per pass */
} kernel_blocks;

static int kernel_blocks_init(kernel_blocks *p, int code, const double *par, int npar,
                              const double *x, R_xlen_t n, int d, const double *c, int m,
                              R_xlen_t block_rows, int with_kb, int nthreads)
{
    R_xlen_t nb = block_rows > 0 ? (block_rows > n ? n : block_rows) : default_block_rows(n, m);
    p->d = d;
    p->m = m;
    p->nthreads = nthreads;
    p->x = x;
    p->n = n;
    p->nb = nb;
    p->xb = (double *) R_alloc((size_t) nb * (size_t) (d > 0 ? d : 1), sizeof(double));
    p->kb = with_kb ? (double *) R_alloc((size_t) nb * (size_t) m, sizeof(double)) : NULL;
    return bochner_kernel_against_init(&p->k, code, par, npar, c, m, d);
}

/* dest (rows x m, leading dimension ldd; p->kb when NULL) = k(rows i0 .. i0 + rows - 1
 * of x, C); a status code. */
static int kernel_block(kernel_blocks *p, R_xlen_t i0, int *rows, double *dest, R_xlen_t ldd)
{
    *rows = (int) (p->n - i0 < p->nb ? p->n - i0 : p->nb);
    bochner_copy_rows(p->x, p->n, p->d, i0, *rows, p->xb);
    return bochner_kernel_against_rows(&p->k, p->xb, *rows, dest ? dest : p->kb,
                                       dest ? ldd : *rows, p->nthreads);
}

/* ---------------------------------------------------------------------- */
/* The order of the sums over rows: fixed by the global row numbers.
 *
 * The rows of a pass (numbered 0 .. total - 1 over all chunks) fall in
 * groups of G = bochner_falkon_group_rows(m) consecutive rows, group g being rows g G ..
 * min((g + 1) G, total) - 1.  A group's contribution Kg' Tg is one gemm.c
 * chain over its rows in order; the groups' contributions are then added
 * along a fixed binary tree over the group numbers: a node (l, i) is the
 * sum of groups i 2^l .. (i + 1) 2^l - 1, formed as left child + right
 * child, and the pass's result adds the maximal nodes left to right.  The
 * nodes are built on a stack as the groups come in order (push a leaf; while
 * the two nodes on top are siblings, replace them by their parent), and a
 * node's value depends on its groups alone.  So the result is the same
 * doubles for any block size, thread count or chunking: a chunk returns
 * the nodes of its complete groups and, for a group it shares with the
 * chunk before or after it, the group's rows and T rows; this session
 * finishes such a group with the same kernel evaluation and product (a gemm.c entry is
 * the same chain whatever its position, leading dimension or tile) and
 * pushes the nodes of all chunks in order on one stack, which forms the
 * same nodes as the pass over all rows.  The cost: one leaf store per
 * group and entry, and on average one addition per group and entry for
 * the merges, against G multiply-adds per group and entry: with
 * groups of 256 rows, forming H = K' K (k = m = 1000) took 10-25 % more
 * CPU, as its m x m leaves leave the caches; with 1024, 0-10 %, and a pass
 * with few columns costs the same as the single chain (bench/falkon-passes.md).
 * Blocks are whole groups, so a kernel block holds at least one group. */
#define FALKON_GROUP 1024

/* Rows per group with m centres: 1024, or fewer (a power of two, at least 64) so that a
 * group's kernel rows stay within 8 MB.  A block of whole groups then stays in the
 * last-level cache between its kernel evaluation and its two products (at m = 10^4 a
 * 1024-row block was 82 MB, streamed from memory three times; bench/falkon-passes.md).
 * It depends on m alone, so every part of a chunked
 * pass (any machine) cuts the rows the same way. */
R_xlen_t bochner_falkon_group_rows(int m)
{
    R_xlen_t g = FALKON_GROUP;
    while (g > 64 && (double) g * m * 8.0 > 8.0 * 1048576.0) g /= 2;
    return g;
}

/* Push node (level, index), whose value is already in val[t->len] (rows
 * i0 .. i0 + mr - 1 of the m x k values), and merge siblings on top. */
void bochner_falkon_tree_push(tree_meta *t, int level, R_xlen_t index, double **val, int m,
                              int k, int i0, int mr)
{
    int n = t->len;
    t->level[n] = level;
    t->index[n] = index;
    n++;
    while (n >= 2 && t->level[n - 1] == t->level[n - 2] && t->index[n - 2] % 2 == 0 &&
           t->index[n - 1] == t->index[n - 2] + 1) {
        double *a = val[n - 2];
        const double *b = val[n - 1];
        for (int j = 0; j < k; j++)
            for (int i = i0; i < i0 + mr; i++) a[i + (ptrdiff_t) j * m] += b[i + (ptrdiff_t) j * m];
        t->level[n - 2]++;
        t->index[n - 2] /= 2;
        n--;
    }
    t->len = n;
}

/* The metadata of the same pushes, values left alone; the deepest stack. */
static int tree_push_meta(tree_meta *t, int level, R_xlen_t index)
{
    if (t->len >= FALKON_STACK) return -1;
    int n = t->len;
    t->level[n] = level;
    t->index[n] = index;
    n++;
    int most = n;
    while (n >= 2 && t->level[n - 1] == t->level[n - 2] && t->index[n - 2] % 2 == 0 &&
           t->index[n - 1] == t->index[n - 2] + 1) {
        t->level[n - 2]++;
        t->index[n - 2] /= 2;
        n--;
    }
    t->len = n;
    return most;
}



R_xlen_t bochner_falkon_group_end(R_xlen_t g, R_xlen_t G, R_xlen_t total)
{
    R_xlen_t e = (g + 1) * G;
    return e < total ? e : total;
}

/* Threads over tiles of rows of the result, each pushing the block's
 * complete groups (in order) on its own copy of the stack's metadata. */
typedef struct {
    const double *kb, *tb;
    const float *kf;                /* a float block: read in place (k <= 8) or, with tf, */
    const float *tf;                /* multiplied in float by T in float (rows x k) */
    ptrdiff_t ldk;
    int rows, m, k, tile, ngroups, sym;
    const int *goff, *grows;        /* the groups' offsets in the block and rows */
    const R_xlen_t *gidx;
    const tree_meta *meta;
    double **val;
} group_job;

/* Rows i0 .. i0 + mr - 1 of a group's leaf Kg' Tg (m x k, leading dimension ldl),
 * Kg and Tg its 'rows' rows: each entry one chain over the group's rows, the same
 * in any tile (for k <= 8 the 8-lane chain of bochner_dot_tn(), else a gemm.c
 * chain; doing 9-16 columns as two dot products read a cached K_nm twice and was
 * slower than the packed product: Shuttle's 14-column pass 0.065 -> 0.084 s).
 * With sym (Tg = W Kg, k = m: the leaf of H = K' W K) only the entries on and
 * above the diagonal, the others zero: a symmetric matrix for half the work,
 * mirrored when the pass is finished (bochner_falkon_pass_finish()). */
void bochner_falkon_group_leaf(const double *kg, ptrdiff_t ldk, const double *tg, ptrdiff_t ldt,
                       int rows, int k, int sym, int i0, int mr, double *leaf, ptrdiff_t ldl)
{
    if (!sym && k <= 8) {
        /* few right-hand sides: dot products of Kg's columns read in place (the
         * packed product would copy every column of the block to use it k times) */
        bochner_dot_tn(kg + (ptrdiff_t) i0 * ldk, ldk, tg, ldt, mr, k, rows, leaf + i0, ldl);
        return;
    }
    if (!sym) {
        bochner_gemm_tn(kg + (ptrdiff_t) i0 * ldk, ldk, tg, ldt, mr, k, rows, leaf + i0, ldl, 0);
        return;
    }
    bochner_gemm_tn(kg + (ptrdiff_t) i0 * ldk, ldk, tg + (ptrdiff_t) i0 * ldt, ldt, mr, k - i0,
                    rows, leaf + i0 + (ptrdiff_t) i0 * ldl, ldl, 0);
    for (int j = 0; j < i0 + mr && j < k; j++)
        for (int i = j + 1 > i0 ? j + 1 : i0; i < i0 + mr; i++) leaf[i + (ptrdiff_t) j * ldl] = 0.0;
}

static void group_tile(void *ctx, R_xlen_t t, int thread)
{
    (void) thread;
    const group_job *p = (const group_job *) ctx;
    int i0 = (int) t * p->tile, mr = p->m - i0 < p->tile ? p->m - i0 : p->tile;
    tree_meta meta = *p->meta;
    for (int g = 0; g < p->ngroups; g++) {
        if (p->tf)      /* float products (bochner_falkon_float_products()) */
            bochner_sgemm_tn(p->kf + p->goff[g] + (ptrdiff_t) i0 * p->ldk, p->ldk,
                             p->tf + p->goff[g], p->rows, mr, p->k, p->grows[g],
                             p->val[meta.len] + i0, p->m, 0);
        else if (p->kf) /* group_leaf's dot products, Kg float (gemm.c: the same chains) */
            bochner_dot_tn_xf(p->kf + p->goff[g] + (ptrdiff_t) i0 * p->ldk, p->ldk,
                              p->tb + p->goff[g], p->rows, mr, p->k, p->grows[g],
                              p->val[meta.len] + i0, p->m);
        else
            bochner_falkon_group_leaf(p->kb + p->goff[g], p->ldk, p->tb + p->goff[g], p->rows, p->grows[g],
                       p->k, p->sym, i0, mr, p->val[meta.len], p->m);
        bochner_falkon_tree_push(&meta, 0, p->gidx[g], p->val, p->m, p->k, i0, mr);
    }
}

static void group_update(const double *kb, const float *kf, ptrdiff_t ldk, const double *tb,
                         const float *tf, int rows, int ngroups, const int *goff, const int *grows,
                         const R_xlen_t *gidx, pass_state *st, int nthreads)
{
    int m = st->m, k = st->k;
    int tile = (m + 3) / 4;
    tile = (tile + 23) / 24 * 24;          /* whole 24-row micro-panels */
    if (tile > 240) tile = 240;
    group_job p = {kb, tb, kf, tf, ldk, rows, m, k, tile, ngroups, st->sym, goff, grows, gidx,
                   &st->meta, st->val};
    bochner_parallel_blocks((m + tile - 1) / tile,
                            bochner_threads_for(nthreads, (double) rows * m * k), 1 << 20,
                            group_tile, &p);
    for (int g = 0; g < ngroups; g++) tree_push_meta(&st->meta, 0, gidx[g]);
}

/* Copy the rows of a piece inside the block of rows r .. r + rows - 1
 * (global numbers) of a call starting at global row row0: x rows from x
 * (n x d), T rows from the block's tb. */
static void piece_copy(group_piece *pc, R_xlen_t r, int rows, const double *x, R_xlen_t n,
                       int d, R_xlen_t row0, const double *tb, int k)
{
    R_xlen_t a = pc->first > r ? pc->first : r;
    R_xlen_t b = pc->first + pc->rows < r + rows ? pc->first + pc->rows : r + rows;
    for (R_xlen_t i = a; i < b; i++) {
        R_xlen_t pi = i - pc->first, bi = i - r;
        for (int j = 0; j < d; j++) pc->x[pi + j * pc->rows] = x[i - row0 + (R_xlen_t) j * n];
        for (int j = 0; j < k; j++) pc->t[pi + j * pc->rows] = tb[bi + (ptrdiff_t) j * rows];
    }
}

static void piece_alloc(group_piece *pc, R_xlen_t group, R_xlen_t first, R_xlen_t rows, int d,
                        int k)
{
    pc->group = group;
    pc->first = first;
    pc->rows = rows;
    pc->x = rows ? (double *) R_alloc((size_t) rows * (size_t) (d > 0 ? d : 1), sizeof(double)) : NULL;
    pc->t = rows ? (double *) R_alloc((size_t) rows * (size_t) k, sizeof(double)) : NULL;
}

/* Whether U (m x k) is the identity: an O(m^2) look against the pass's O(n m^2). */
static int is_identity(const double *U, int m, int k)
{
    if (!U || k != m) return 0;
    for (int j = 0; j < k; j++)
        for (int i = 0; i < m; i++)
            if (U[i + (ptrdiff_t) j * m] != (i == j ? 1.0 : 0.0)) return 0;
    return 1;
}

/* The complete groups of an evaluated pass, a group per task: the thread evaluates the
 * group's kernel rows into its own scratch, forms T_g = w (K_g U + V_g) and the leaf
 * K_g' T_g there, and the leaves are pushed on the stack in group order afterwards.  The
 * block-by-block pass cut each block's work over the threads three times (kernel tiles,
 * rows of T, tiles of the leaf), so every line of the block moved between the cores'
 * caches, with a barrier at each step: at m = 10^4 (64-row groups) two threads were no
 * faster than one.  The same chains (an entry of K, T or a leaf does not depend on the
 * tile or the thread that forms it), so the same doubles as the block-by-block pass. */
typedef struct {
    const bochner_kernel_against *ka;
    const double *x, *U, *V, *w;
    const float *Uf;          /* U in float, with float products */
    R_xlen_t n, row0, G, g0, total;
    int d, m, k, wcols, single, fp;   /* fp: float products (bochner_falkon_float_products) */
    double *ku;
    double *scratch;          /* per thread: group_scratch(), then T_g (G x k), then with
                               * float products K_g and T_g in float */
    size_t per_thread;
    double *leaves;           /* per task: m x k */
} group_eval_job;

/* T = K U (already in t, when 'product') [+ V] or V alone, times w, rows i0 .. i0 +
 * rows - 1 of a part of n rows; ku gets K U before V is added.  Shared by the
 * block-by-block pass and the group tasks, so an entry of T is the same chain in both. */
static void finish_t(double *t, int rows, int k, int product, double *ku, const double *V,
                     const double *w, int wcols, R_xlen_t i0, R_xlen_t n)
{
    for (int j = 0; j < k; j++) {
        double *tj = t + (ptrdiff_t) j * rows;
        const double *vj = V ? V + i0 + (R_xlen_t) j * n : NULL;
        if (!product) {                     /* T = V alone */
            memcpy(tj, vj, sizeof(double) * (size_t) rows);
        } else {
            if (ku) memcpy(ku + i0 + (R_xlen_t) j * n, tj, sizeof(double) * (size_t) rows);
            if (vj)
                for (int i = 0; i < rows; i++) tj[i] += vj[i];
        }
        if (w) {
            const double *wj = w + i0 + (wcols ? (R_xlen_t) j * n : 0);
            for (int i = 0; i < rows; i++) tj[i] *= wj[i];
        }
    }
}

/* Doubles of a thread's scratch for a group of G rows' kernel rows (K_g, then the
 * centred rows and their norms that bochner_dk_rows_serial() works in). */
static size_t group_scratch(R_xlen_t G, int m, int d)
{
    return (size_t) G * ((size_t) m + (size_t) (d > 0 ? d : 1) + 1);
}

/* The kernel rows i0 .. i0 + rows - 1 against the centres, on this thread alone, into
 * the start of its scratch (rows x m, leading dimension rows); returns them. */
static double *group_kernel_rows(const bochner_kernel_against *a, const double *x, R_xlen_t n,
                                 R_xlen_t i0, int rows, int m, int d, double *scratch)
{
    double *xc = scratch + (size_t) rows * m;
    double *xn = xc + (size_t) rows * (d > 0 ? d : 1);
    bochner_dk_rows_serial(a->kind, a->s, a->centre, a->bt, a->yn, a->ny, a->d, x, n, i0, rows,
                           scratch, rows, xc, xn);
    return scratch;
}

static void group_eval(void *ctx, R_xlen_t t, int thread)
{
    const group_eval_job *p = (const group_eval_job *) ctx;
    R_xlen_t g = p->g0 + t, first = g * p->G;
    int rows = (int) (bochner_falkon_group_end(g, p->G, p->total) - first), m = p->m, k = p->k;
    R_xlen_t i0 = first - p->row0;
    double *scratch = p->scratch + (size_t) thread * p->per_thread;
    double *kg = group_kernel_rows(p->ka, p->x, p->n, i0, rows, m, p->d, scratch);
    double *tg = scratch + group_scratch(rows, m, p->d);
    if (p->fp) {
        /* float products: K_g and T_g rounded to float, the chains of sgemm.c */
        float *kf = (float *) (tg + (size_t) p->G * (size_t) k), *tf = kf + (size_t) rows * m;
        bochner_to_float(kg, (R_xlen_t) rows * m, kf);
        if (p->U) bochner_sgemm(kf, rows, p->Uf, m, rows, k, m, tg, rows, 0);
        finish_t(tg, rows, k, p->U != NULL, p->ku, p->V, p->w, p->wcols, i0, p->n);
        bochner_to_float(tg, (R_xlen_t) rows * k, tf);
        bochner_sgemm_tn(kf, rows, tf, rows, m, k, rows, p->leaves + (size_t) t * m * k, m, 0);
        return;
    }
    if (p->single) bochner_round_float(kg, (R_xlen_t) rows * m);
    if (p->U) bochner_gemm(kg, rows, p->U, m, rows, k, m, tg, rows, 0);
    finish_t(tg, rows, k, p->U != NULL, p->ku, p->V, p->w, p->wcols, i0, p->n);
    bochner_falkon_group_leaf(kg, rows, tg, rows, rows, k, 0, 0, m,
                              p->leaves + (size_t) t * m * k, m);
}

/* Groups g_lo .. g_hi - 1 (complete) by group_eval(), a batch of tasks at a time. */
static void groups_evaluated(const kernel_blocks *kbs, const double *x, R_xlen_t n, int d,
                             const double *U, const double *V, const double *w, int wcols,
                             int k, double *ku, R_xlen_t row0, R_xlen_t total, R_xlen_t G,
                             R_xlen_t g_lo, R_xlen_t g_hi, int single, int fp,
                             const float *Uf, int nthreads, pass_state *st)
{
    int m = st->m;
    const int per = 4;                       /* tasks per thread and region */
    R_xlen_t batch = (R_xlen_t) per * nthreads;
    size_t per_thread = group_scratch(G, m, d) + (size_t) G * (size_t) k;
    if (fp) per_thread += ((size_t) G * ((size_t) m + (size_t) k) + 1) / 2;   /* floats */
    group_eval_job p = {&kbs->k, x, U, V, w, Uf, n, row0, G, 0, total, d, m, k, wcols, single,
                        fp, ku,
                        (double *) R_alloc(per_thread * (size_t) nthreads, sizeof(double)),
                        per_thread,
                        (double *) R_alloc((size_t) batch * m * (size_t) k, sizeof(double))};
    for (R_xlen_t g0 = g_lo; g0 < g_hi; g0 += batch) {
        R_xlen_t nt = g_hi - g0 < batch ? g_hi - g0 : batch;
        p.g0 = g0;
        bochner_parallel_blocks(nt, nthreads, per, group_eval, &p);
        for (R_xlen_t t = 0; t < nt; t++) {
            memcpy(st->val[st->meta.len], p.leaves + (size_t) t * m * k,
                   sizeof(double) * (size_t) m * (size_t) k);
            bochner_falkon_tree_push(&st->meta, 0, g0 + t, st->val, m, k, 0, m);
        }
    }
}

/* The pass over rows row0 .. row0 + n - 1 of a pass over 'total' rows:
 * st gets the nodes of its complete groups and its partial groups; ku
 * (n x k) = K_nm U unless ku is NULL (given U); U (m x k) or NULL, V (n x k)
 * or NULL (not both), w NULL, one weight per row (wcols = 0) or one per row
 * and column (n x k, wcols = 1: a different diagonal for each right-hand
 * side, as multinomial Newton steps need).  The blocks start at multiples
 * of the block size in global row numbers (a multiple of the group size), so
 * no group straddles two blocks. */
int bochner_falkon_pass(int code, const double *par, int npar, const double *x, R_xlen_t n,
                       int d, const double *c, int m, const double *kc, const float *kcf,
                       const double *U, const double *V, const double *w, int wcols, int k,
                       double *ku, R_xlen_t row0, R_xlen_t total, R_xlen_t block_rows,
                       int single, int nthreads, pass_state *st)
{
    if (m < 1 || k < 1 || (!U && !V) || row0 < 0 || n < 0 || row0 + n > total ||
        (kcf && !single))
        return BOCHNER_BAD_ARGUMENT;
    const R_xlen_t G = bochner_falkon_group_rows(m);
    st->m = m;
    st->k = k;
    st->sym = 0;
    st->single = single;
    st->meta.len = 0;
    st->val = NULL;
    piece_alloc(&st->head, 0, row0, 0, d, k);
    piece_alloc(&st->tail, 0, row0 + n, 0, d, k);
    if (n == 0) return BOCHNER_OK;
    /* the partial groups at either end, and the complete ones between */
    R_xlen_t end = row0 + n, g0 = row0 / G, h_end = row0, t_start = end;
    if (row0 != g0 * G || end < bochner_falkon_group_end(g0, G, total)) {
        h_end = end < bochner_falkon_group_end(g0, G, total) ? end : bochner_falkon_group_end(g0, G, total);
        piece_alloc(&st->head, g0, row0, h_end - row0, d, k);
    }
    if (h_end < end) {
        R_xlen_t gl = (end - 1) / G;
        if (end < bochner_falkon_group_end(gl, G, total)) {
            t_start = gl * G;
            piece_alloc(&st->tail, gl, t_start, end - t_start, d, k);
        }
    }
    /* the stack's depth, from its metadata alone */
    int most = 0;
    tree_meta sim = {0};
    for (R_xlen_t g = h_end / G; g * G < t_start; g++) {
        int s = tree_push_meta(&sim, 0, g);
        if (s < 0) return BOCHNER_BAD_ARGUMENT;
        if (s > most) most = s;
    }
    st->val = (double **) R_alloc((size_t) (most > 0 ? most : 1), sizeof(double *));
    for (int i = 0; i < most; i++)
        st->val[i] = (double *) R_alloc((size_t) m * (size_t) k, sizeof(double));

    const int ident = is_identity(U, m, k);
    /* K' W (K I) is symmetric unless V is added or each column has its own weights */
    st->sym = ident && !V && !(w && wcols);
    const int cached = kc || kcf;
    nthreads = bochner_falkon_threads(nthreads, (double) n * m * (cached ? 2 * k : 2 * k + d));
    R_xlen_t nb = block_rows;
    if (nb <= 0) {
        if (cached) {
            /* the cached K_nm (n x m, column-major): whole groups, about 16 MB of it a
             * block, which the product T_b = K_b U leaves in the last-level cache for
             * the leaves that read it again.  Blocks of T_b up to 32 MB (all of
             * Shuttle's 38 600 rows at k = 7) read K_nm twice from memory: 6-18 %
             * slower passes at m = 1024 (k = 1, 7, 14) and 0-7 % at n = 10^5,
             * m = 4000, 2 threads (bench/falkon-notes.md). */
            nb = (R_xlen_t) ((16u << 20) / (8u * (unsigned) m)) / G * G;
            if (nb < G) nb = G;
        } else {
            /* whole groups, rounded down, about 8 MB of kernel block: it stays in
             * the last-level cache for the two products that read it */
            nb = (R_xlen_t) ((8u << 20) / (8u * (unsigned) m)) / G * G;
            if (nb < G) nb = G;
        }
    }
    nb = (nb + G - 1) / G * G;
    R_xlen_t most_rows = nb < n ? nb : n;
    kernel_blocks p;
    if (!cached) {
        int status = kernel_blocks_init(&p, code, par, npar, x, n, d, c, m, most_rows, 1,
                                        nthreads);
        if (status != BOCHNER_OK) return status;
    }
    /* single precision: K_nm in float, a cached block widened to double in a block of
     * scratch (in cache for the two products that read it), an evaluated one rounded to
     * float in place: the passes then run the double products on the float kernel
     * matrix, the same operator in every pass (see the header) */
    /* with at most 8 right-hand sides (not the H pass) the float cache is read in place:
     * its product and dot products (gemm.c's _xf kernels) are the double kernels' chains
     * on the widened entries, the same doubles for half the bytes streamed */
    const int inplace = kcf && k <= 8 && !ident;
    /* with many right-hand sides the products themselves are float (see
     * bochner_falkon_float_products()): U, each T and each block not cached in float
     * rounded to float, K_b U and K_g' T_g by sgemm.c's chains */
    const int fp = bochner_falkon_float_products(single, k, st->sym);
    float *Uf = NULL, *kbf = NULL, *tbf = NULL;
    if (fp) {
        if (U && !ident) {
            Uf = (float *) R_alloc((size_t) m * (size_t) k, sizeof(float));
            bochner_to_float(U, (R_xlen_t) m * k, Uf);
        }
        if (!kcf) kbf = (float *) R_alloc((size_t) most_rows * (size_t) m, sizeof(float));
        tbf = (float *) R_alloc((size_t) most_rows * (size_t) k, sizeof(float));
    }
    double *kbd = kcf && !inplace && !fp
                  ? (double *) R_alloc((size_t) most_rows * (size_t) m, sizeof(double)) : NULL;
    R_xlen_t gmax = nb / G + 1;
    double *tb = (double *) R_alloc((size_t) most_rows * (size_t) k, sizeof(double));
    int *goff = (int *) R_alloc((size_t) gmax, sizeof(int));
    int *grows = (int *) R_alloc((size_t) gmax, sizeof(int));
    R_xlen_t *gidx = (R_xlen_t *) R_alloc((size_t) gmax, sizeof(R_xlen_t));
    /* an evaluated pass with enough complete groups for the threads: those groups a task
     * each (groups_evaluated()), the partial groups at either end block by block below */
    R_xlen_t g_lo = h_end / G, g_hi = (t_start + G - 1) / G;   /* the last may be short */
    const int by_group = !cached && !ident && p.k.kind >= 0 && nthreads > 1 &&
                         g_hi - g_lo >= 4 * (R_xlen_t) nthreads;
    R_xlen_t seg_lo[2] = {row0, t_start}, seg_hi[2] = {by_group ? h_end : end, end};
    for (int seg = 0; seg < (by_group ? 2 : 1); seg++) {
        if (seg == 1)
            groups_evaluated(&p, x, n, d, U, V, w, wcols, k, ku, row0, total, G, g_lo, g_hi,
                             single, fp, Uf, nthreads, st);
        for (R_xlen_t r = seg_lo[seg]; r < seg_hi[seg];) {
            R_xlen_t r_end = (r / nb + 1) * nb;
            if (r_end > seg_hi[seg]) r_end = seg_hi[seg];
            R_xlen_t i0 = r - row0;
            int rows = (int) (r_end - r);
            const double *kb = NULL;
            const float *kf = inplace || (fp && kcf) ? kcf + i0 : NULL;
            ptrdiff_t ldk = (ptrdiff_t) n;
            if (!kcf) {             /* the block in double: cached, or evaluated here */
                if (kc) {
                    kb = kc + i0;
                } else {
                    p.nb = rows;
                    int got, status = kernel_block(&p, i0, &got, NULL, 0);
                    if (status != BOCHNER_OK) return status;
                    /* float products round it as they copy it below */
                    if (single && !fp) bochner_round_float(p.kb, (R_xlen_t) rows * m);
                    kb = p.kb;
                    ldk = rows;
                }
            }
            if (fp) {
                if (!kcf) {         /* the double block, in float */
                    for (int j = 0; j < m; j++)
                        bochner_to_float(kb + (ptrdiff_t) j * ldk, rows, kbf + (ptrdiff_t) j * rows);
                    kb = NULL;
                    kf = kbf;
                    ldk = rows;
                }
                if (ident) {        /* T = K_b itself, widened: the same values */
                    for (int j = 0; j < k; j++)
                        for (int i = 0; i < rows; i++)
                            tb[i + (ptrdiff_t) j * rows] = kf[i + (ptrdiff_t) j * ldk];
                } else if (U) {
                    bochner_sproduct(0, kf, ldk, Uf, m, rows, k, m, tb, rows, 0, 0, nthreads);
                }
            } else if (kcf && !inplace) {
                bochner_widen_float(kcf + i0, (ptrdiff_t) n, rows, m, kbd, rows, nthreads);
                kb = kbd;
                ldk = rows;
            }
            if (U && !fp) {
                if (ident) {
                    /* U = I (the pass that forms H = K_nm' W K_nm): K_b I is K_b itself,
                     * the same doubles as the product (each entry K_ij plus zeros), for
                     * half the pass's work */
                    for (int j = 0; j < k; j++)
                        memcpy(tb + (ptrdiff_t) j * rows, kb + (ptrdiff_t) j * ldk,
                               sizeof(double) * (size_t) rows);
                } else if (kf) {
                    bochner_product_xf(kf, ldk, U, m, rows, k, m, tb, rows, nthreads);
                } else {
                    bochner_product(kb, ldk, U, m, rows, k, m, tb, rows, 0, 0, nthreads);
                }
            }
            finish_t(tb, rows, k, U != NULL, ku, V, w, wcols, i0, n);
            if (fp) bochner_to_float(tb, (R_xlen_t) rows * k, tbf);
            piece_copy(&st->head, r, rows, x, n, d, row0, tb, k);
            piece_copy(&st->tail, r, rows, x, n, d, row0, tb, k);
            /* the complete groups of the block */
            int ng = 0;
            R_xlen_t a = r > h_end ? r : h_end, b = r_end < t_start ? r_end : t_start;
            for (R_xlen_t s = a; s < b; s = bochner_falkon_group_end(s / G, G, total)) {
                goff[ng] = (int) (s - r);
                grows[ng] = (int) (bochner_falkon_group_end(s / G, G, total) - s);
                gidx[ng++] = s / G;
            }
            if (ng) group_update(kb, kf, ldk, tb, fp ? tbf : NULL, rows, ng, goff, grows, gidx, st, nthreads);
            R_CheckUserInterrupt();
            r = r_end;
        }
    }
    return BOCHNER_OK;
}

/* out (m x k) = [init +] the sum of the stack's nodes, left to right (for H, its
 * upper triangle mirrored). */
void bochner_falkon_pass_finish(const pass_state *st, const double *init, double *out)
{
    size_t mk = (size_t) st->m * (size_t) st->k;
    if (st->meta.len == 0) memset(out, 0, sizeof(double) * mk);
    else memcpy(out, st->val[0], sizeof(double) * mk);
    for (int s = 1; s < st->meta.len; s++)
        for (size_t i = 0; i < mk; i++) out[i] += st->val[s][i];
    if (st->sym)
        for (int j = 0; j < st->k; j++)
            for (int i = j + 1; i < st->m; i++)
                out[i + (ptrdiff_t) j * st->m] = out[j + (ptrdiff_t) i * st->m];
    if (init)
        for (size_t i = 0; i < mk; i++) out[i] = init[i] + out[i];
}

/* out (m x k) = [init +] K_nm' diag(w) (K_nm U + V) over all n rows, and
 * ku (n x k) = K_nm U unless ku is NULL; see bochner_falkon_pass().  out must hold
 * init (or anything, with accumulate = 0). */
int bochner_falkon_knm_apply(int code, const double *par, int npar, const double *x,
                             R_xlen_t n, int d, const double *c, int m, const double *kc,
                             const float *kcf, const double *U, const double *V,
                             const double *w, int wcols, int k, double *out, double *ku,
                             int accumulate, R_xlen_t block_rows, int single, int nthreads)
{
    pass_state st;
    int status = bochner_falkon_pass(code, par, npar, x, n, d, c, m, kc, kcf, U, V, w, wcols, k, ku, 0,
                             n, block_rows, single, nthreads, &st);
    if (status != BOCHNER_OK) return status;
    if (accumulate) {
        double *init = (double *) R_alloc((size_t) m * (size_t) k, sizeof(double));
        memcpy(init, out, sizeof(double) * (size_t) m * (size_t) k);
        bochner_falkon_pass_finish(&st, init, out);
    } else {
        bochner_falkon_pass_finish(&st, NULL, out);
    }
    return BOCHNER_OK;
}

/* Rows g G .. (g + 1) G - 1 of K_nm alpha on one thread, in its own scratch. */
typedef struct {
    const bochner_kernel_against *ka;
    const double *x, *alpha;
    R_xlen_t n, G;
    int d, m, k;
    double *out, *scratch;    /* per thread: group_scratch() */
    size_t per_thread;
} rows_job;

static void predict_rows(void *ctx, R_xlen_t g, int thread)
{
    const rows_job *p = (const rows_job *) ctx;
    R_xlen_t i0 = g * p->G;
    int rows = (int) (p->n - i0 < p->G ? p->n - i0 : p->G);
    double *kg = group_kernel_rows(p->ka, p->x, p->n, i0, rows, p->m, p->d,
                                   p->scratch + (size_t) thread * p->per_thread);
    bochner_gemm(kg, rows, p->alpha, p->m, rows, p->k, p->m, p->out + i0, p->n, 0);
}

/* out (n x k) = K_nm alpha, alpha (m x k); with alpha NULL, out (n x m) =
 * K_nm itself (the passes' cache: each row's entries do not depend on its
 * block, so it equals kernel_matrix(x, C) and the blocks a pass evaluates). */
int bochner_falkon_predict(int code, const double *par, int npar, const double *x,
                           R_xlen_t n, int d, const double *c, int m, const double *alpha,
                           int k, double *out, R_xlen_t block_rows, int nthreads)
{
    if (m < 1 || k < 1 || (!alpha && k != m)) return BOCHNER_BAD_ARGUMENT;
    if (n == 0) return BOCHNER_OK;
    kernel_blocks p;
    int status = kernel_blocks_init(&p, code, par, npar, x, n, d, c, m, block_rows,
                                    alpha != NULL, nthreads);
    if (status != BOCHNER_OK) return status;
    R_xlen_t G = bochner_falkon_group_rows(m);
    if (alpha && p.k.kind >= 0 && nthreads > 1 && n >= 4 * G * nthreads) {
        /* whole groups of rows a thread each, as an evaluated pass (groups_evaluated()):
         * each row's K alpha is the same chain whatever block holds it */
        size_t per_thread = group_scratch(G, m, d);
        rows_job j = {&p.k, x, alpha, n, G, d, m, k, out,
                      (double *) R_alloc(per_thread * (size_t) nthreads, sizeof(double)),
                      per_thread};
        bochner_parallel_blocks((n + G - 1) / G, nthreads, 4, predict_rows, &j);
        return BOCHNER_OK;
    }
    for (R_xlen_t i0 = 0; i0 < n; i0 += p.nb) {
        int rows;
        /* K_nm itself: each block written in place by the kernel's threads */
        status = kernel_block(&p, i0, &rows, alpha ? NULL : out + i0, n);
        if (status != BOCHNER_OK) return status;
        if (alpha)
            bochner_product(p.kb, rows, alpha, m, rows, k, m, out + i0, n, 0, 0, nthreads);
        R_CheckUserInterrupt();
    }
    return BOCHNER_OK;
}

/* K_nm in float (n x m, leading dimension n): each block evaluated in double and rounded,
 * so the entries are the double cache's rounded to float */
int bochner_falkon_kernel_cache_f(int code, const double *par, int npar, const double *x,
                                 R_xlen_t n, int d, const double *c, int m, float *out,
                                 R_xlen_t block_rows, int nthreads)
{
    kernel_blocks p;
    int status = kernel_blocks_init(&p, code, par, npar, x, n, d, c, m, block_rows, 1, nthreads);
    if (status != BOCHNER_OK) return status;
    for (R_xlen_t i0 = 0; i0 < n; i0 += p.nb) {
        int rows;
        status = kernel_block(&p, i0, &rows, NULL, 0);
        if (status != BOCHNER_OK) return status;
        for (int j = 0; j < m; j++)
            bochner_to_float(p.kb + (ptrdiff_t) j * rows, rows, out + i0 + (R_xlen_t) j * n);
        R_CheckUserInterrupt();
    }
    return BOCHNER_OK;
}
