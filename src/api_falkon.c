/* .Call wrappers: FALKON's m x m factors (falkon_factor.c), held in an external pointer
 * list(M, aux, G) tagged "bochner_falkon_factor" that only these wrappers open, and its
 * passes over the rows (falkon.c).
 * Each checks and converts R arguments, allocates its result and calls the core
 * (bochner.h); the arithmetic is the core's. */
#include "api.h"
#include "falkon.h"
#include <limits.h>
#include <string.h>

/* The factor of F (checked), an interrupted preconditioner undone. */
bochner_falkon_packed bochner_falkon_packed_arg(SEXP F)
{
    if (TYPEOF(F) != EXTPTRSXP || R_ExternalPtrTag(F) != install("bochner_falkon_factor"))
        error("'F' must be a FALKON factor");
    SEXP pr = R_ExternalPtrProtected(F);
    bochner_falkon_packed p = {REAL(VECTOR_ELT(pr, 0)), REAL(VECTOR_ELT(pr, 1)),
                               nrows(VECTOR_ELT(pr, 0)),
                               isNull(VECTOR_ELT(pr, 2)) ? NULL : REAL(VECTOR_ELT(pr, 2))};
    bochner_falkon_packed_restore(&p);
    return p;
}

/* .Call(C_falkon_factor, centres, code, par, eps, nthreads): the factor of
 * K_mm + shift I (bochner_falkon_factor()) as an external pointer, NULL
 * when every try fails, or FALSE when K_mm is not finite. */
SEXP bochner_falkon_factor_call(SEXP centres, SEXP code, SEXP par, SEXP eps, SEXP nthreads)
{
    if (!bochner_is_real_matrix(centres) || nrows(centres) < 1) error("'centres' must be a double matrix");
    if (TYPEOF(par) != REALSXP || XLENGTH(par) < 1) error("'par' must be a double vector");
    int m = nrows(centres), d = ncols(centres), nth = bochner_nthreads(asInteger(nthreads));
    SEXP pr = PROTECT(allocVector(VECSXP, 3));
    SET_VECTOR_ELT(pr, 0, bochner_alloc_output(m, m));
    SET_VECTOR_ELT(pr, 1, allocVector(REALSXP, 2 * (R_xlen_t) m + 3));
    int res = bochner_falkon_factor(REAL(centres), m, d, asInteger(code), REAL(par), LENGTH(par),
                                    asReal(eps), REAL(VECTOR_ELT(pr, 0)),
                                    REAL(VECTOR_ELT(pr, 1)), nth);
    if (res == 2) { UNPROTECT(1); return ScalarLogical(FALSE); }
    if (res == 1) { UNPROTECT(1); return R_NilValue; }
    SEXP F = PROTECT(R_MakeExternalPtr(NULL, install("bochner_falkon_factor"), pr));
    UNPROTECT(2);
    return F;
}

/* .Call(C_falkon_factor_precond, F, lambda, s, nthreads): A for lambda and
 * curvature s, in place; TRUE, or FALSE when a pivot fails (lambda is not
 * checked for sign: R passes positive ones, the tests a negative one). */
SEXP bochner_falkon_factor_precond_call(SEXP F, SEXP lambda, SEXP s, SEXP nthreads)
{
    bochner_falkon_packed p = bochner_falkon_packed_arg(F);
    double lam = asReal(lambda), sv = asReal(s);
    if (!R_FINITE(lam)) error("'lambda' must be a finite number");
    if (!R_FINITE(sv) || sv <= 0) error("'s' must be a positive number");
    int bad = bochner_falkon_packed_precond(&p, lam, sv, bochner_nthreads(asInteger(nthreads)));
    return ScalarLogical(bad ? FALSE : TRUE);
}

/* .Call(C_falkon_factor_solve, F, B, which, trans, nthreads): T^-1 B, T'^-1 B
 * (which = 0) or A^-1 B, A'^-1 B (which = 1), in the trisolve's orders. */
SEXP bochner_falkon_factor_solve_call(SEXP F, SEXP B, SEXP which, SEXP trans, SEXP nthreads)
{
    bochner_falkon_packed p = bochner_falkon_packed_arg(F);
    int a = asInteger(which) == 1;
    if (a && p.aux[2 * (ptrdiff_t) p.m + 2] != 1) error("the factor holds no preconditioner");
    if (!bochner_is_real_matrix(B) || nrows(B) != p.m)
        error("'B' must be a double matrix with one row per centre");
    SEXP X = PROTECT(duplicate(B));
    bochner_falkon_packed_solve(&p, a, REAL(X), ncols(B), asLogical(trans) == TRUE,
                                bochner_nthreads(asInteger(nthreads)));
    UNPROTECT(1);
    return X;
}

/* .Call(C_falkon_factor_tprod, F, B, trans, nthreads): T B or T' B. */
SEXP bochner_falkon_factor_tprod_call(SEXP F, SEXP B, SEXP trans, SEXP nthreads)
{
    bochner_falkon_packed p = bochner_falkon_packed_arg(F);
    if (!bochner_is_real_matrix(B) || nrows(B) != p.m)
        error("'B' must be a double matrix with one row per centre");
    int nth = bochner_falkon_threads(bochner_nthreads(asInteger(nthreads)),
                                     (double) p.m * p.m * ncols(B));
    int k = ncols(B);
    SEXP C = PROTECT(allocMatrix(REALSXP, p.m, k));
    bochner_falkon_packed_tprod(&p, REAL(B), k, asLogical(trans) == TRUE, REAL(C), nth);
    UNPROTECT(1);
    return C;
}

/* .Call(C_falkon_factor_copy, F): a second factor with a copy of the array
 * (and sharing the kept G, which is only read). */
SEXP bochner_falkon_factor_copy_call(SEXP F)
{
    bochner_falkon_packed_arg(F);
    SEXP old = R_ExternalPtrProtected(F);
    SEXP pr = PROTECT(allocVector(VECSXP, 3));
    SET_VECTOR_ELT(pr, 0, duplicate(VECTOR_ELT(old, 0)));
    SET_VECTOR_ELT(pr, 1, duplicate(VECTOR_ELT(old, 1)));
    SET_VECTOR_ELT(pr, 2, VECTOR_ELT(old, 2));
    SEXP out = PROTECT(R_MakeExternalPtr(NULL, install("bochner_falkon_factor"), pr));
    UNPROTECT(2);
    return out;
}

/* .Call(C_falkon_factor_keep_g, F, nthreads): G = T T' / m formed once and
 * kept in a second m x m array, so that each later preconditioner copies
 * it instead of forming it (for fits that refactor often and can hold it). */
SEXP bochner_falkon_factor_keep_g_call(SEXP F, SEXP nthreads)
{
    bochner_falkon_packed p = bochner_falkon_packed_arg(F);
    SEXP pr = R_ExternalPtrProtected(F);
    if (!isNull(VECTOR_ELT(pr, 2))) return R_NilValue;
    SEXP G = PROTECT(bochner_alloc_output(p.m, p.m));
    bochner_falkon_packed_keep_g(&p, REAL(G), bochner_nthreads(asInteger(nthreads)));
    SET_VECTOR_ELT(pr, 2, G);
    UNPROTECT(1);
    return R_NilValue;
}

/* ------------------------------------------------------------------------ */
/* The passes over the rows (falkon.c)                                       */

static const double *optional_matrix(SEXP a, R_xlen_t nrow, int ncol, const char *what)
{
    if (isNull(a)) return NULL;
    if (!bochner_is_real_matrix(a) || nrows(a) != nrow || ncols(a) != ncol)
        error("'%s' must be NULL or a double matrix of matching size", what);
    return REAL(a);
}

static void check_kernel_args(SEXP x, SEXP centres, SEXP par)
{
    if (!bochner_is_real_matrix(x)) error("'x' must be a double matrix");
    if (!bochner_is_real_matrix(centres) || ncols(centres) != ncols(x) || nrows(centres) < 1)
        error("'centres' must be a double matrix with the columns of 'x'");
    if (TYPEOF(par) != REALSXP || XLENGTH(par) < 1) error("'par' must be a double vector");
}

static R_xlen_t block_rows_arg(SEXP block_rows)
{
    double b = asReal(block_rows);
    if (!R_FINITE(b) || b < 0) error("'block_rows' must be a non-negative number");
    return (R_xlen_t) b;
}

/* The arguments of a pass, checked: the sizes, U, V and the weights. */
typedef struct {
    R_xlen_t n;
    int m, d, k, wcols;
    const double *u, *v, *w;
} pass_args;

static pass_args read_pass_args(SEXP x, SEXP centres, SEXP par, SEXP U, SEXP V, SEXP w)
{
    check_kernel_args(x, centres, par);
    pass_args a = {nrows(x), nrows(centres), ncols(x), 0, 0, NULL, NULL, NULL};
    if (isNull(U) && isNull(V)) error("one of 'U' and 'V' must be given");
    a.k = isNull(U) ? (bochner_is_real_matrix(V) ? ncols(V) : 0) : (bochner_is_real_matrix(U) ? ncols(U) : 0);
    if (a.k < 1) error("'U' and 'V' must be double matrices with at least one column");
    a.u = optional_matrix(U, a.m, a.k, "U");
    a.v = optional_matrix(V, a.n, a.k, "V");
    if (!isNull(w)) {
        a.wcols = XLENGTH(w) != a.n;
        if (TYPEOF(w) != REALSXP || (XLENGTH(w) != a.n && XLENGTH(w) != a.n * (R_xlen_t) a.k))
            error("'w' must be NULL, one weight per row, or one per row and column");
        a.w = REAL(w);
    }
    return a;
}

/* A cached K_nm in float: the raw vector of C_falkon_kernel_cache(single = TRUE), 4 bytes
 * an entry, its dimensions in "float_dim"; NULL when K is not one. */
static const float *float_cache(SEXP K, R_xlen_t n, int m)
{
    if (TYPEOF(K) != RAWSXP) return NULL;
    SEXP dim = getAttrib(K, install("float_dim"));
    if (TYPEOF(dim) != INTSXP || XLENGTH(dim) != 2 || INTEGER(dim)[0] != n ||
        INTEGER(dim)[1] != m || XLENGTH(K) != (R_xlen_t) n * m * 4)
        error("'K' must be NULL or the cached kernel matrix of matching size");
    return (const float *) RAW(K);
}

/* .Call(C_falkon_knm_apply, x, centres, code, par, U, V, w, init, block_rows, keep_ku,
 * nthreads, K, single): the m x k matrix, or with keep_ku = TRUE (and U given) the list
 * of it and K_nm U; K NULL, or the cached k(x, centres) (n x m: a double matrix, or in
 * float with single = TRUE); single: kernel blocks and products in float. */
SEXP bochner_falkon_knm_apply_call(SEXP x, SEXP centres, SEXP code, SEXP par, SEXP U, SEXP V,
                                   SEXP w, SEXP init, SEXP block_rows, SEXP keep_ku,
                                   SEXP nthreads, SEXP K, SEXP single)
{
    pass_args a = read_pass_args(x, centres, par, U, V, w);
    R_xlen_t n = a.n;
    int m = a.m, d = a.d, k = a.k, wcols = a.wcols;
    const double *u = a.u, *v = a.v, *pw = a.w;
    optional_matrix(init, m, k, "init");
    const int sp = asLogical(single) == TRUE;
    const float *kcf = sp ? float_cache(K, n, m) : NULL;
    const double *kc = kcf ? NULL : optional_matrix(K, n, m, "K");
    R_xlen_t nb = block_rows_arg(block_rows);
    int keep = asLogical(keep_ku) == TRUE && u != NULL;
    SEXP out = PROTECT(allocMatrix(REALSXP, m, k));
    SEXP ku = PROTECT(keep ? bochner_alloc_output(n, k) : R_NilValue);
    if (!isNull(init)) memcpy(REAL(out), REAL(init), sizeof(double) * (size_t) m * (size_t) k);
    int status = bochner_falkon_knm_apply(asInteger(code), REAL(par), LENGTH(par), REAL(x), n, d,
                                          REAL(centres), m, kc, kcf, u, v, pw, wcols, k,
                                          REAL(out), keep ? REAL(ku) : NULL, !isNull(init), nb,
                                          sp, bochner_nthreads(asInteger(nthreads)));
    bochner_stop_on_status(status, "falkon_knm_apply");
    if (keep) {
        SEXP both = PROTECT(allocVector(VECSXP, 2));
        SET_VECTOR_ELT(both, 0, out);
        SET_VECTOR_ELT(both, 1, ku);
        UNPROTECT(3);
        return both;
    }
    UNPROTECT(2);
    return out;
}

/* ------------------------------------------------------------------------ */
/* A pass in parts (the chunks of falkon on data_chunks()): each part's
 * state travels to this session as
 *   list(m, k, level, index, nodes, head, tail[, ku])
 * level (integer) and index (double) the stack's nodes, nodes their m x k
 * values, head and tail NULL or a partial group list(group, first, X, T)
 * (X rows x d rows of x, T rows x k weighted rows).  Folding two states
 * in row order and finishing gives the pass over all rows, bit for bit. */

static SEXP piece_sexp(const double *x, ptrdiff_t ldx, const double *t, ptrdiff_t ldt,
                       R_xlen_t group, R_xlen_t first, R_xlen_t rows, int d, int kk)
{
    if (rows == 0) return R_NilValue;
    SEXP pc = PROTECT(allocVector(VECSXP, 4));
    SET_VECTOR_ELT(pc, 0, ScalarReal((double) group));
    SET_VECTOR_ELT(pc, 1, ScalarReal((double) first));
    SEXP X = allocMatrix(REALSXP, (int) rows, d);
    SET_VECTOR_ELT(pc, 2, X);
    for (int j = 0; j < d; j++)
        memcpy(REAL(X) + (ptrdiff_t) j * rows, x + (ptrdiff_t) j * ldx, sizeof(double) * (size_t) rows);
    SEXP T = allocMatrix(REALSXP, (int) rows, kk);
    SET_VECTOR_ELT(pc, 3, T);
    for (int j = 0; j < kk; j++)
        memcpy(REAL(T) + (ptrdiff_t) j * rows, t + (ptrdiff_t) j * ldt, sizeof(double) * (size_t) rows);
    UNPROTECT(1);
    return pc;
}

static SEXP state_sexp(const pass_state *st, SEXP head, SEXP tail)
{
    PROTECT(head);
    PROTECT(tail);
    int len = st->meta.len;
    SEXP out = PROTECT(allocVector(VECSXP, 9));
    SEXP names = PROTECT(allocVector(STRSXP, 9));
    const char *nm[] = {"m", "k", "level", "index", "nodes", "head", "tail", "sym", "single"};
    for (int i = 0; i < 9; i++) SET_STRING_ELT(names, i, mkChar(nm[i]));
    setAttrib(out, R_NamesSymbol, names);
    SET_VECTOR_ELT(out, 0, ScalarInteger(st->m));
    SET_VECTOR_ELT(out, 1, ScalarInteger(st->k));
    SEXP lev = allocVector(INTSXP, len);
    SET_VECTOR_ELT(out, 2, lev);
    SEXP idx = allocVector(REALSXP, len);
    SET_VECTOR_ELT(out, 3, idx);
    SEXP nodes = allocVector(VECSXP, len);
    SET_VECTOR_ELT(out, 4, nodes);
    for (int i = 0; i < len; i++) {
        INTEGER(lev)[i] = st->meta.level[i];
        REAL(idx)[i] = (double) st->meta.index[i];
        SEXP v = allocMatrix(REALSXP, st->m, st->k);
        SET_VECTOR_ELT(nodes, i, v);
        memcpy(REAL(v), st->val[i], sizeof(double) * (size_t) st->m * (size_t) st->k);
    }
    SET_VECTOR_ELT(out, 5, head);
    SET_VECTOR_ELT(out, 6, tail);
    SET_VECTOR_ELT(out, 7, ScalarLogical(st->sym));
    SET_VECTOR_ELT(out, 8, ScalarLogical(st->single));
    UNPROTECT(4);
    return out;
}

static SEXP list_elt(SEXP s, const char *name)
{
    SEXP nms = getAttrib(s, R_NamesSymbol);
    for (R_xlen_t i = 0; i < XLENGTH(s); i++)
        if (strcmp(CHAR(STRING_ELT(nms, i)), name) == 0) return VECTOR_ELT(s, i);
    return R_NilValue;
}

/* The metadata of a state, checked; its node values in st->val (read in
 * place). */
static void state_read(SEXP s, pass_state *st)
{
    if (TYPEOF(s) != VECSXP || isNull(getAttrib(s, R_NamesSymbol)))
        error("'state' must be a pass state");
    st->m = asInteger(list_elt(s, "m"));
    st->k = asInteger(list_elt(s, "k"));
    st->sym = asLogical(list_elt(s, "sym")) == TRUE;
    st->single = asLogical(list_elt(s, "single")) == TRUE;
    SEXP lev = list_elt(s, "level"), idx = list_elt(s, "index"), nodes = list_elt(s, "nodes");
    if (st->m < 1 || st->k < 1 || TYPEOF(lev) != INTSXP || TYPEOF(idx) != REALSXP ||
        TYPEOF(nodes) != VECSXP || XLENGTH(lev) != XLENGTH(idx) ||
        XLENGTH(lev) != XLENGTH(nodes) || XLENGTH(lev) > FALKON_STACK)
        error("'state' must be a pass state");
    st->meta.len = LENGTH(lev);
    st->val = (double **) R_alloc((size_t) st->meta.len + 1, sizeof(double *));
    for (int i = 0; i < st->meta.len; i++) {
        SEXP v = VECTOR_ELT(nodes, i);
        if (!bochner_is_real_matrix(v) || nrows(v) != st->m || ncols(v) != st->k)
            error("'state' must be a pass state");
        st->meta.level[i] = INTEGER(lev)[i];
        st->meta.index[i] = (R_xlen_t) REAL(idx)[i];
        st->val[i] = REAL(v);
    }
}

/* A partial group being completed from the parts' pieces, in row order. */
typedef struct {
    R_xlen_t group, first, rows;
    double *x, *t;                  /* G x d and x k */
} pending_group;

typedef struct {
    int m, k, d, code, npar, sym, single;
    const double *c, *par;          /* the centres (m x d) and the kernel */
    R_xlen_t total, G;              /* rows of the pass, rows per group */
    tree_meta meta;
    double *val[FALKON_STACK];
    pending_group pend;
    SEXP held;                      /* list(a partial group before any node, or NULL) */
    int started;                    /* a node or a leaf has been pushed */
    R_xlen_t next;                  /* the group that must come next (-1: any) */
} fold_state;

static void fold_push(fold_state *f, int level, R_xlen_t index, const double *v)
{
    if (f->meta.len >= FALKON_STACK) error("the pass states have too many nodes");
    if (f->next >= 0 && (index << level) != f->next)
        error("the pass states are not in row order");
    f->next = (index + 1) << level;
    double *c = (double *) R_alloc((size_t) f->m * (size_t) f->k, sizeof(double));
    memcpy(c, v, sizeof(double) * (size_t) f->m * (size_t) f->k);
    f->val[f->meta.len] = c;
    bochner_falkon_tree_push(&f->meta, level, index, f->val, f->m, f->k, 0, f->m);
    f->started = 1;
}

/* The pending group: a leaf when complete, the head before any node. */
static void fold_flush(fold_state *f, int last, SEXP *tail)
{
    pending_group *p = &f->pend;
    if (p->rows == 0) return;
    if (p->first == p->group * f->G && p->first + p->rows == bochner_falkon_group_end(p->group, f->G, f->total)) {
        /* the group's kernel rows, as the pass evaluates them */
        int rows = (int) p->rows;
        double *xb = (double *) R_alloc((size_t) rows * (size_t) (f->d > 0 ? f->d : 1), sizeof(double));
        bochner_copy_rows(p->x, f->G, f->d, 0, rows, xb);
        double *kb = (double *) R_alloc((size_t) rows * (size_t) f->m, sizeof(double));
        int status = bochner_kernel_matrix(f->code, f->par, f->npar, xb, rows, f->c, f->m, f->d,
                                           kb, 1);
        bochner_stop_on_status(status, "falkon_pass_fold");
        double *leaf = (double *) R_alloc((size_t) f->m * (size_t) f->k, sizeof(double));
        if (bochner_falkon_float_products(f->single, f->k, f->sym)) {
            /* the pass's float product: K_g and T_g in float, sgemm.c's chains */
            float *kf = (float *) R_alloc((size_t) rows * (size_t) f->m, sizeof(float));
            float *tf = (float *) R_alloc((size_t) rows * (size_t) f->k, sizeof(float));
            bochner_to_float(kb, (R_xlen_t) rows * f->m, kf);
            for (int j = 0; j < f->k; j++)
                bochner_to_float(p->t + (ptrdiff_t) j * f->G, rows, tf + (ptrdiff_t) j * rows);
            bochner_sgemm_tn(kf, rows, tf, rows, f->m, f->k, rows, leaf, f->m, 0);
        } else {
            /* single precision: the kernel rows rounded to float, as the pass's */
            if (f->single) bochner_round_float(kb, (R_xlen_t) rows * f->m);
            bochner_falkon_group_leaf(kb, rows, p->t, f->G, rows, f->k, f->sym, 0, f->m, leaf,
                                      f->m);
        }
        fold_push(f, 0, p->group, leaf);
    } else if (!f->started && isNull(VECTOR_ELT(f->held, 0))) {
        SET_VECTOR_ELT(f->held, 0, piece_sexp(p->x, f->G, p->t, f->G, p->group,
                                              p->first, p->rows, f->d, f->k));
        f->next = p->group + 1;
    } else if (last) {
        *tail = piece_sexp(p->x, f->G, p->t, f->G, p->group, p->first, p->rows,
                           f->d, f->k);
    } else {
        error("the pass states are not in row order: rows of group %.0f are missing",
              (double) p->group);
    }
    p->rows = 0;
}

static void fold_piece(fold_state *f, SEXP pc)
{
    if (isNull(pc)) return;
    if (TYPEOF(pc) != VECSXP || XLENGTH(pc) != 4) error("'state' must be a pass state");
    R_xlen_t group = (R_xlen_t) asReal(VECTOR_ELT(pc, 0)), first = (R_xlen_t) asReal(VECTOR_ELT(pc, 1));
    SEXP X = VECTOR_ELT(pc, 2), T = VECTOR_ELT(pc, 3);
    if (!bochner_is_real_matrix(X) || !bochner_is_real_matrix(T) || ncols(X) != f->d ||
        ncols(T) != f->k || nrows(X) != nrows(T))
        error("'state' must be a pass state");
    R_xlen_t rows = nrows(X);
    pending_group *p = &f->pend;
    if (p->rows > 0 && (p->group != group || p->first + p->rows != first)) fold_flush(f, 0, NULL);
    if (p->rows == 0) {
        /* after a node or the head, a group starts at its first row */
        if (f->next >= 0 && (group != f->next || first != group * f->G))
            error("the pass states are not in row order");
        p->group = group;
        p->first = first;
    }
    if (first < group * f->G || first + rows > bochner_falkon_group_end(group, f->G, f->total) ||
        p->first + p->rows != first)
        error("the pass states are not in row order");
    for (int j = 0; j < f->d; j++)
        memcpy(p->x + p->rows + (ptrdiff_t) j * f->G, REAL(X) + (ptrdiff_t) j * rows,
               sizeof(double) * (size_t) rows);
    for (int j = 0; j < f->k; j++)
        memcpy(p->t + p->rows + (ptrdiff_t) j * f->G, REAL(T) + (ptrdiff_t) j * rows,
               sizeof(double) * (size_t) rows);
    p->rows += rows;
}

static void fold_in(fold_state *f, SEXP s)
{
    pass_state st;
    state_read(s, &st);
    if (st.m != f->m || st.k != f->k || st.sym != f->sym || st.single != f->single)
        error("the pass states have different sizes");
    fold_piece(f, list_elt(s, "head"));
    for (int i = 0; i < st.meta.len; i++) {
        fold_flush(f, 0, NULL);
        fold_push(f, st.meta.level[i], st.meta.index[i], st.val[i]);
    }
    fold_piece(f, list_elt(s, "tail"));
}

/* .Call(C_falkon_pass_fold, A, B, total, centres, code, par): the state of
 * A's rows followed by B's (A NULL: B's), for a pass over 'total' rows with
 * the kernel of the parts. */
SEXP bochner_falkon_pass_fold_call(SEXP A, SEXP B, SEXP total, SEXP centres, SEXP code,
                                   SEXP par)
{
    pass_state sb;
    state_read(B, &sb);
    if (!bochner_is_real_matrix(centres) || nrows(centres) != sb.m)
        error("'centres' must be a double matrix with one row per row of the states' nodes");
    if (TYPEOF(par) != REALSXP || XLENGTH(par) < 1) error("'par' must be a double vector");
    fold_state f;
    f.m = sb.m;
    f.k = sb.k;
    f.sym = sb.sym;
    f.single = sb.single;
    f.d = ncols(centres);
    f.c = REAL(centres);
    f.code = asInteger(code);
    f.par = REAL(par);
    f.npar = LENGTH(par);
    f.total = (R_xlen_t) asReal(total);
    f.G = bochner_falkon_group_rows(f.m);
    f.meta.len = 0;
    f.pend.rows = 0;
    f.pend.x = (double *) R_alloc((size_t) f.G * (size_t) (f.d > 0 ? f.d : 1), sizeof(double));
    f.pend.t = (double *) R_alloc((size_t) f.G * (size_t) f.k, sizeof(double));
    f.held = PROTECT(allocVector(VECSXP, 1));
    f.started = 0;
    f.next = -1;
    if (!isNull(A)) fold_in(&f, A);
    fold_in(&f, B);
    SEXP tail = R_NilValue;
    fold_flush(&f, 1, &tail);
    PROTECT(tail);
    pass_state out = {f.m, f.k, f.sym, f.single, f.meta, f.val, {0}, {0}};
    SEXP res = state_sexp(&out, VECTOR_ELT(f.held, 0), tail);
    UNPROTECT(2);
    return res;
}

/* .Call(C_falkon_pass_finish, state, init): the pass's m x k result
 * [init +], from the state of all its rows. */
SEXP bochner_falkon_pass_finish_call(SEXP state, SEXP init)
{
    pass_state st;
    state_read(state, &st);
    if (!isNull(list_elt(state, "head")) || !isNull(list_elt(state, "tail")))
        error("the pass state misses rows of a group");
    const double *pi = optional_matrix(init, st.m, st.k, "init");
    SEXP out = PROTECT(allocMatrix(REALSXP, st.m, st.k));
    bochner_falkon_pass_finish(&st, pi, REAL(out));
    UNPROTECT(1);
    return out;
}

/* .Call(C_falkon_knm_part, x, centres, code, par, U, V, w, block_rows,
 * keep_ku, nthreads, row0, total, single): the state of the pass over the rows of x,
 * rows row0 .. row0 + nrow(x) - 1 of a pass over 'total' rows; with keep_ku
 * (and U), K_nm U as its element "ku". */
SEXP bochner_falkon_knm_part_call(SEXP x, SEXP centres, SEXP code, SEXP par, SEXP U, SEXP V,
                                  SEXP w, SEXP block_rows, SEXP keep_ku, SEXP nthreads,
                                  SEXP row0, SEXP total, SEXP single)
{
    pass_args a = read_pass_args(x, centres, par, U, V, w);
    R_xlen_t n = a.n;
    int m = a.m, d = a.d, k = a.k, wcols = a.wcols;
    const double *u = a.u, *v = a.v, *pw = a.w;
    double r0 = asReal(row0), tot = asReal(total);
    if (!R_FINITE(r0) || !R_FINITE(tot) || r0 < 0 || r0 + (double) n > tot)
        error("'row0' and 'total' must place the rows of 'x' inside the pass");
    int keep = asLogical(keep_ku) == TRUE && u != NULL;
    SEXP ku = PROTECT(keep ? allocMatrix(REALSXP, (int) n, k) : R_NilValue);
    pass_state st;
    int status = bochner_falkon_pass(asInteger(code), REAL(par), LENGTH(par), REAL(x), n, d,
                             REAL(centres), m, NULL, NULL, u, v, pw, wcols, k,
                             keep ? REAL(ku) : NULL, (R_xlen_t) r0, (R_xlen_t) tot,
                             block_rows_arg(block_rows), asLogical(single) == TRUE,
                             bochner_nthreads(asInteger(nthreads)), &st);
    bochner_stop_on_status(status, "falkon_knm_part");
    SEXP head = PROTECT(piece_sexp(st.head.x, st.head.rows, st.head.t, st.head.rows,
                                   st.head.group, st.head.first, st.head.rows, d, k));
    SEXP tail = PROTECT(piece_sexp(st.tail.x, st.tail.rows, st.tail.t, st.tail.rows,
                                   st.tail.group, st.tail.first, st.tail.rows, d, k));
    SEXP res = PROTECT(state_sexp(&st, head, tail));
    if (keep) setAttrib(res, install("ku"), ku);
    UNPROTECT(4);
    return res;
}

/* .Call(C_falkon_kernel_cache, x, centres, code, par, block_rows, nthreads, single): K_nm,
 * a double matrix, or with single = TRUE in float: a raw vector of 4 bytes an entry with
 * its dimensions in "float_dim" (half the memory; read by C_falkon_knm_apply).  Either is
 * advised onto huge pages (memory.c), as the factor is.  On the AMD EPYC VM of
 * bench/investigations/falkon-ksvm-time.md, on 4 KiB pages, the same pass over Letter's
 * cache took 0.09 to 0.59 s from one CG iteration to the next, and the one-thread fit
 * 8.5 to 19 s (6.3 to 6.9 s advised); first touching the cache cost 3.0-3.9 s at
 * n = 10^5, m = 1000 in double (0.2-1.0 s advised).  A VM of November had measured the
 * opposite there, 1.7 s advised against 0.4 s. */
SEXP bochner_falkon_kernel_cache_call(SEXP x, SEXP centres, SEXP code, SEXP par,
                                      SEXP block_rows, SEXP nthreads, SEXP single)
{
    check_kernel_args(x, centres, par);
    R_xlen_t n = nrows(x);
    int m = nrows(centres);
    if (asLogical(single) == TRUE) {
        SEXP out = PROTECT(allocVector(RAWSXP, n * (R_xlen_t) m * 4));
        SEXP dim = PROTECT(allocVector(INTSXP, 2));
        if (n > INT_MAX) error("too many rows for the cache of 'x'");
        INTEGER(dim)[0] = (int) n;
        INTEGER(dim)[1] = m;
        setAttrib(out, install("float_dim"), dim);
        bochner_advise_huge_pages(RAW(out), (size_t) XLENGTH(out));
        int status = bochner_falkon_kernel_cache_f(asInteger(code), REAL(par), LENGTH(par), REAL(x), n,
                                           ncols(x), REAL(centres), m, (float *) RAW(out),
                                           block_rows_arg(block_rows),
                                           bochner_nthreads(asInteger(nthreads)));
        bochner_stop_on_status(status, "falkon_kernel_cache");
        UNPROTECT(2);
        return out;
    }
    if (n > INT_MAX) error("too many rows for the cache of 'x'");
    SEXP out = PROTECT(bochner_alloc_output(n, m));
    int status = bochner_falkon_predict(asInteger(code), REAL(par), LENGTH(par), REAL(x), n,
                                        ncols(x), REAL(centres), m, NULL, m, REAL(out),
                                        block_rows_arg(block_rows),
                                        bochner_nthreads(asInteger(nthreads)));
    bochner_stop_on_status(status, "falkon_kernel_cache");
    UNPROTECT(1);
    return out;
}

/* .Call(C_falkon_predict, x, centres, code, par, alpha, block_rows, nthreads) */
SEXP bochner_falkon_predict_call(SEXP x, SEXP centres, SEXP code, SEXP par, SEXP alpha,
                                 SEXP block_rows, SEXP nthreads)
{
    check_kernel_args(x, centres, par);
    int m = nrows(centres);
    if (!bochner_is_real_matrix(alpha) || nrows(alpha) != m || ncols(alpha) < 1)
        error("'alpha' must be a double matrix with one row per centre");
    R_xlen_t n = nrows(x);
    int k = ncols(alpha);
    SEXP out = PROTECT(bochner_alloc_output(n, k));
    int status = bochner_falkon_predict(asInteger(code), REAL(par), LENGTH(par), REAL(x), n,
                                        ncols(x), REAL(centres), m, REAL(alpha), k, REAL(out),
                                        block_rows_arg(block_rows),
                                        bochner_nthreads(asInteger(nthreads)));
    bochner_stop_on_status(status, "falkon_predict");
    UNPROTECT(1);
    return out;
}
