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
