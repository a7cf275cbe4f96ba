/* Large outputs: allocMatrix, then ask Linux to back the matrix with
 * transparent huge pages, where that is measured to pay.
 *
 * A fresh n x D feature matrix is new memory: every 4 KiB page costs a page
 * fault on first write, and for the transform that is as much time as the
 * product and the cosines together (about 3 ns per entry here).  Where the
 * kernel's THP mode is "madvise" (Debian's default), MADV_HUGEPAGE lets one
 * fault map 2 MiB.  numpy does the same for arrays of 4 MiB or more.
 * falkon's K_nm cache and m x m factor are advised for the same reason and
 * because every pass streams the cache (api_falkon.c).  The
 * advice only changes how the pages are backed, never their contents, and a
 * failing madvise is harmless, so its result is ignored.
 *
 * Not under free page reporting.  A virtual machine whose balloon device
 * reports free pages to the host (virtio feature VIRTIO_BALLOON_F_REPORTING)
 * hands its free 2 MiB blocks back, so every huge page is memory the host
 * must fault in afresh, while 4 KiB faults are mostly served from pages
 * freed a moment ago and still backed.  On such a VM (Firecracker, AMD EPYC
 * family 25, 2 cores) an 800 MB K_nm cache took 1.15 s advised (1.8 s of
 * system time) against 0.30-0.33 s on 4 KiB pages, the passes over it 52-53
 * against 53-58 ms, and the default falkon fits on Shuttle and Letter 1.23-1.40
 * and 3.07-3.61 s against 0.99-1.11 and 3.00-3.27 s.  A VM without that report
 * measured the opposite (a866ec5: passes on 4 KiB pages varying sixfold), so
 * the advice is dropped only where the feature is negotiated, read once at load
 * from sysfs.  The environment variable BOCHNER_HUGE_PAGES (read at load) forces it: 0 never
 * advises, 1 always does. */
#include "bochner.h"
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <dirent.h>
#include <sys/mman.h>
#endif

#define HUGE_PAGE ((uintptr_t) 2 << 20)
#define ADVISE_MIN_BYTES ((size_t) 4 << 20)

/* Written once in R_init_bochner (bochner_memory_init), only read afterwards. */
static int advise_huge = 1;

#if defined(__linux__)
/* Whether a virtio balloon (device id 5) has negotiated free page reporting:
 * feature bit 5, the sixth character of sysfs's features string. */
static int free_page_reporting(void)
{
    DIR *dir = opendir("/sys/bus/virtio/devices");
    if (!dir) return 0;
    int found = 0;
    struct dirent *e;
    while (!found && (e = readdir(dir)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[512], buf[160];
        snprintf(path, sizeof path, "/sys/bus/virtio/devices/%s/device", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        int is_balloon = fgets(buf, sizeof buf, f) && strtol(buf, NULL, 16) == 5;
        fclose(f);
        if (!is_balloon) continue;
        snprintf(path, sizeof path, "/sys/bus/virtio/devices/%s/features", e->d_name);
        f = fopen(path, "r");
        if (!f) continue;
        if (fgets(buf, sizeof buf, f) && strlen(buf) > 5 && buf[5] == '1') found = 1;
        fclose(f);
    }
    closedir(dir);
    return found;
}
#endif

void bochner_memory_init(void)
{
    const char *force = getenv("BOCHNER_HUGE_PAGES");
    if (force && (force[0] == '0' || force[0] == '1') && force[1] == '\0') {
        advise_huge = force[0] == '1';
        return;
    }
#if defined(__linux__)
    advise_huge = !free_page_reporting();
#endif
}

int bochner_huge_pages(void)
{
    return advise_huge;
}

void bochner_advise_huge_pages(void *p, size_t bytes)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (!advise_huge || bytes < ADVISE_MIN_BYTES) return;
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
