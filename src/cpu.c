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
 *   Intel and others  kc = 256: the K-block the kernels were tuned with on a Xeon, kept.
 *   AMD, L2 >= 1 MB   kc = 384 (Zen 4: 1 MB L2 per core; the 72 KB micro-panel streams from
 *                     L2 either way, and longer K-blocks halve the reloads of C).
 * Measured on Zen 4 (AVX-512 run as two 256-bit halves): the 24 x 8 AVX-512 kernel still beats
 * the 12 x 4 AVX2 one (about 51 against 47 GFLOP/s per core in cache, 41 against 37 on Z'Z out
 * of cache), so the ISA choice stays the widest one; kc = 384 gave 0-3% over 256 on Z'Z, and
 * packing B in panels or prefetching its columns lost 20% or gained nothing.  What closed the gap
 * to OpenBLAS on Z'Z was reading Z by columns (bochner_gemm_tn: no transposed copy, no strided
 * packing).  Results do not depend on kc (gemm.c: each entry is the same chain). */
#include "bochner.h"
#include <stdlib.h>
#if defined(__GNUC__) && defined(__x86_64__) && !defined(_WIN32)
# include <cpuid.h>
#endif

static int cpu_isa = 0;
static bochner_gemm_blocks gemm_blocks = {256};

static void choose_gemm_blocking(void)
{
#if defined(__GNUC__) && defined(__x86_64__) && !defined(_WIN32)
    unsigned int a, b, c, d;
    if (__builtin_cpu_is("amd") && __get_cpuid(0x80000006u, &a, &b, &c, &d)) {
        unsigned int l2_kb = c >> 16;          /* AMD: ECX[31:16], L2 per core in KB */
        if (l2_kb >= 1024) gemm_blocks.kc = 384;
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
