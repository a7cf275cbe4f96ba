/* FALKON's pass internals shared by falkon.c (the passes) and api_falkon.c (the
 * chunked passes' states, which travel to R as lists and are folded there in row
 * order): the stack of a pass's row groups and the partial groups at its ends. */
#ifndef BOCHNER_FALKON_H
#define BOCHNER_FALKON_H

#include "bochner.h"

#define FALKON_STACK 130          /* nodes on a stack: < 2 log2(2^62) + 2 */

typedef struct {
    int len;
    int level[FALKON_STACK];
    R_xlen_t index[FALKON_STACK];
} tree_meta;

/* The rows of one group that a pass call does not hold all of: the rows x
 * (rows x d; their kernel rows are evaluated where the group is finished, a
 * row's kernel values not depending on the rows beside it) and T rows t
 * (rows x k). */
typedef struct {
    R_xlen_t group, first, rows;   /* rows = 0: none */
    double *x, *t;
} group_piece;

/* The state of a pass over rows row0 .. row0 + n - 1: the stack of nodes
 * of its complete groups (values m x k each) and its partial groups at
 * either end. */
typedef struct {
    int m, k;
    int sym;                /* the pass forms H = K_nm' W K_nm (below) */
    int single;             /* kernel blocks and T stored and multiplied in float (below) */
    tree_meta meta;
    double **val;
    group_piece head, tail;
} pass_state;

/* falkon.c: rows per group for m centres; a group's last row + 1; the stack's
 * push (merging siblings); a complete group's leaf; a pass over rows row0 ..
 * of 'total' into its state; the state's sum; K_nm in float */
R_xlen_t bochner_falkon_group_rows(int m);
R_xlen_t bochner_falkon_group_end(R_xlen_t g, R_xlen_t G, R_xlen_t total);
void bochner_falkon_tree_push(tree_meta *t, int level, R_xlen_t index, double **val, int m,
                              int k, int i0, int mr);
void bochner_falkon_group_leaf(const double *kg, ptrdiff_t ldk, const double *tg, ptrdiff_t ldt,
                       int rows, int k, int sym, int i0, int mr, double *leaf, ptrdiff_t ldl);

/* Whether a single-precision pass multiplies in float (sgemm.c: float K-blocks of 256
 * summed in double) rather than running the double chains on the float kernel values:
 * with more than 8 right-hand sides and not the H pass.  There the products are
 * compute-bound, and float's multiply-adds are twice as many per instruction; with few
 * columns the pass is bound by K_nm's bytes, already halved.  Every place that forms a
 * T or a leaf (falkon.c's passes, api_falkon.c's fold) asks this one rule, so a cached,
 * an evaluated and a chunked pass agree bit for bit. */
static inline int bochner_falkon_float_products(int single, int k, int sym)
{
    return single && k > 8 && !sym;
}
int bochner_falkon_pass(int code, const double *par, int npar, const double *x, R_xlen_t n,
                       int d, const double *c, int m, const double *kc, const float *kcf,
                       const double *U, const double *V, const double *w, int wcols, int k,
                       double *ku, R_xlen_t row0, R_xlen_t total, R_xlen_t block_rows,
                       int single, int nthreads, pass_state *st);
void bochner_falkon_pass_finish(const pass_state *st, const double *init, double *out);
int bochner_falkon_kernel_cache_f(int code, const double *par, int npar, const double *x,
                                 R_xlen_t n, int d, const double *c, int m, float *out,
                                 R_xlen_t block_rows, int nthreads);

#endif
