/* Cheap checks shared by the .Call wrappers.  The R side validates user
 * input with messages that name the user's arguments; these only keep a
 * stray .Call from crashing R. */
#include "bochner.h"

int bochner_is_real_matrix(SEXP m)
{
    return TYPEOF(m) == REALSXP && isMatrix(m);
}

int bochner_count_arg(SEXP v, const char *what, int lower)
{
    int x = (TYPEOF(v) == INTSXP || TYPEOF(v) == REALSXP) && XLENGTH(v) == 1 ? asInteger(v)
                                                                           : NA_INTEGER;
    if (x == NA_INTEGER || x < lower) error("'%s' must be a whole number of at least %d", what, lower);
    return x;
}

/* The message of every status code a pure-C routine returns. */
static const char *status_message(int status)
{
    switch (status) {
    case BOCHNER_BAD_KERNEL: return "unknown kernel";
    case BOCHNER_BAD_ARGUMENT: return "bad parameters or sizes";
    case BOCHNER_NOT_POSITIVE_DEFINITE:
        return "the matrix is not numerically positive definite";
    default: return "internal error";
    }
}

void bochner_stop_on_status(int status, const char *where)
{
    if (status != BOCHNER_OK) error("%s: %s", where, status_message(status));
}

/* The arguments of a landmark rule's .Call wrapper (k-means++, randomly
 * pivoted Cholesky): x an n x d double matrix, par the kernel's parameters,
 * diag the kernel's diagonal on x; returns the count, between 1 and n. */
int bochner_landmark_args(SEXP x, SEXP par, SEXP diag, SEXP count, const char *what)
{
    if (!bochner_is_real_matrix(x)) error("'x' must be a double matrix");
    R_xlen_t n = nrows(x);
    if (TYPEOF(par) != REALSXP || XLENGTH(par) < 1) error("'par' must be a double vector");
    if (TYPEOF(diag) != REALSXP || XLENGTH(diag) != n)
        error("'diag' must be a double vector with one value per row of 'x'");
    int c = bochner_count_arg(count, what, 1);
    if (c > n) error("'%s' must be at most the number of rows", what);
    return c;
}

/* Folds over row blocks (R drives the loop, C adds each block; C never
 * calls back into R).  A fold's state is an external pointer tagged with
 * the fold's name whose protected list holds the accumulators: no R code
 * sees them, so each step adds to them in place, as R's environments are
 * changed in place.  Its address marks a finished fold (NULL: open), whose
 * accumulators have become a result and must not change again. */
static int fold_finished_mark;

SEXP bochner_fold_new(const char *tag, SEXP vectors)
{
    return R_MakeExternalPtr(NULL, install(tag), vectors);
}

SEXP bochner_fold_vectors(SEXP state, const char *tag)
{
    if (TYPEOF(state) != EXTPTRSXP || R_ExternalPtrTag(state) != install(tag))
        error("'state' must be the state of a %s fold", tag);
    if (R_ExternalPtrAddr(state) != NULL) error("this %s fold is finished", tag);
    return R_ExternalPtrProtected(state);
}

void bochner_fold_finish(SEXP state)
{
    R_SetExternalPtrAddr(state, &fold_finished_mark);
}
