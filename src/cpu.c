/* The CPU's vector instructions, detected once when the package is loaded.
 *
 * bochner_cpu_isa() is the code path of the SIMD kernels (gemm.c, fastmath.c):
 *   0  portable code only (SSE2 on x86-64)
 *   1  AVX2 + FMA
 *   2  AVX-512F
 * capped by the environment variable BOCHNER_MAX_ISA (0, 1 or 2, read at
 * load): for tools that emulate the CPU without every instruction set
 * (valgrind), and to exercise the portable paths on a machine that has the
 * others.  Written once in R_init_bochner, before any other code of the
 * package runs, and only read afterwards: no mutable global state. */
#include "bochner.h"
#include <stdlib.h>

static int cpu_isa = 0;

void bochner_cpu_init(void)
{
    int hw = 0;
#if defined(__GNUC__) && defined(__x86_64__) && !defined(_WIN32)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        hw = 1;
        if (__builtin_cpu_supports("avx512f")) hw = 2;
    }
#endif
    const char *cap = getenv("BOCHNER_MAX_ISA");
    if (cap && (cap[0] == '0' || cap[0] == '1') && cap[1] == '\0' && cap[0] - '0' < hw)
        hw = cap[0] - '0';
    cpu_isa = hw;
}

int bochner_cpu_isa(void)
{
    return cpu_isa;
}
