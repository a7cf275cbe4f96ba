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
 * package runs, and only read afterwards: no mutable global state.
 *
 * bochner_gemm_blocking() is the product kernel's cache blocking (gemm.c), from the vendor and
 * the L2 size that cpuid reports:
 *   Intel and others  kc = 256, no software prefetch: the parameters the kernels were tuned
 *                     with on a Xeon, kept as they are.
 *   AMD, L2 >= 1 MB   kc = 384 and software prefetch of B's columns: on Zen 4 (1 MB L2;
 *                     AVX-512 run as two 256-bit halves) the 24 x 8 AVX-512 kernel still beats
 *                     the 12 x 4 AVX2 one in cache (about 51 against 47 GFLOP/s per core), but
 *                     out of cache its strided B columns were fetched late: longer K-blocks and
 *                     a prefetch 4 lines ahead gave about +5% on Z'Z (bench/gemm.md).
 * Results do not depend on either choice (gemm.c: each entry is the same chain). */
#include "bochner.h"
#include <stdlib.h>
#if defined(__GNUC__) && defined(__x86_64__) && !defined(_WIN32)
# include <cpuid.h>
#endif

static int cpu_isa = 0;
static bochner_gemm_blocks gemm_blocks = {256, 0};

static void choose_gemm_blocking(void)
{
#if defined(__GNUC__) && defined(__x86_64__) && !defined(_WIN32)
    unsigned int a, b, c, d;
    if (__builtin_cpu_is("amd") && __get_cpuid(0x80000006u, &a, &b, &c, &d)) {
        unsigned int l2_kb = c >> 16;          /* AMD: ECX[31:16], L2 per core in KB */
        if (l2_kb >= 1024) {
            gemm_blocks.kc = 384;
            gemm_blocks.prefetch = 1;
        }
    }
#endif
}

const bochner_gemm_blocks *bochner_gemm_blocking(void)
{
    return &gemm_blocks;
}

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
    choose_gemm_blocking();
}

int bochner_cpu_isa(void)
{
    return cpu_isa;
}
