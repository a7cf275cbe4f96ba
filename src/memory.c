/* Large outputs: allocMatrix, then ask Linux to back the matrix with
 * transparent huge pages.
 *
 * A fresh n x D feature matrix is new memory: every 4 KiB page costs a page
 * fault on first write, and for the transform that is as much time as the
 * product and the cosines together (about 3 ns per entry here).  Where the
 * kernel's THP mode is "madvise" (Debian's default), MADV_HUGEPAGE lets one
 * fault map 2 MiB.  numpy does the same for arrays of 4 MiB or more.
 * falkon's K_nm cache and m x m factor are advised for the same reason and
 * because every pass streams the cache (api_falkon.c).  The
 * advice only changes how the pages are backed, never their contents, and a
 * failing madvise is harmless, so its result is ignored. */
#include "bochner.h"
#include <limits.h>
#include <stdint.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#define HUGE_PAGE ((uintptr_t) 2 << 20)
#define ADVISE_MIN_BYTES ((size_t) 4 << 20)

void bochner_advise_huge_pages(void *p, size_t bytes)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (bytes < ADVISE_MIN_BYTES) return;
    uintptr_t start = ((uintptr_t) p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    uintptr_t end = ((uintptr_t) p + bytes) & ~(HUGE_PAGE - 1);
    if (end > start) madvise((void *) start, end - start, MADV_HUGEPAGE);
#else
    (void) p; (void) bytes;
#endif
}

/* A double matrix for an output about to be written in full. */
SEXP bochner_alloc_output(R_xlen_t nrow, R_xlen_t ncol)
{
    if (nrow > INT_MAX || ncol > INT_MAX) error("too many rows or columns for a matrix");
    SEXP z = PROTECT(allocMatrix(REALSXP, (int) nrow, (int) ncol));
    bochner_advise_huge_pages(REAL(z), (size_t) XLENGTH(z) * sizeof(double));
    UNPROTECT(1);
    return z;
}

/* A block of rows as its own column-major matrix, so that the blocked
 * passes (falkon.c, gp.c) work on contiguous columns. */
void bochner_copy_rows(const double *x, R_xlen_t n, int d, R_xlen_t i0, int nb, double *xb)
{
    for (int k = 0; k < d; k++)
        memcpy(xb + (ptrdiff_t) k * nb, x + i0 + (R_xlen_t) k * n, sizeof(double) * (size_t) nb);
}
