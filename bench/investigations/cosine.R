# Benchmark: the vectorised cosine alone, in ns per value, single-threaded.
# bochner's cos (src/fastmath.c, with the run-time SIMD dispatch the package
# uses) against libm's cos (what R's cos() calls) in the same C loop, R's
# cos() itself, and numpy's np.cos in place where /usr/bin/python3 has numpy.
# The data (1e4 values uniform on [-8 pi, 8 pi], 80 KB) stay in cache and
# are reused 2000 times, so no allocation or page fault is timed; the
# figure is the fastest of 5.  Run from the package root:
#   Rscript bench/investigations/cosine.R
# It compiles bench/investigations/cosine/loop.c together with src/fastmath.c and
# src/gemm.c (R CMD SHLIB, R's default flags) in a temporary directory and
# writes its table into bench/investigations/transform.md between the cosine markers.

N <- 1e4L
REPS <- 2000L
build <- tempfile("bochner-cos-")
dir.create(build)
invisible(file.copy(c("bench/investigations/cosine/loop.c", "src/fastmath.c", "src/gemm.c", "src/bochner.h"), build))
old <- setwd(build)
so <- paste0("loop", .Platform$dynlib.ext)
st <- system2(file.path(R.home("bin"), "R"),
              c("CMD", "SHLIB", "-o", so, "loop.c", "fastmath.c", "gemm.c"),
              stdout = TRUE, stderr = TRUE,
              env = "PKG_LIBS='$(BLAS_LIBS) $(FLIBS)' PKG_CFLAGS='$(SHLIB_OPENMP_CFLAGS)'")
dll <- dyn.load(file.path(build, so))
setwd(old)

set.seed(2)
x <- stats::runif(N, -8 * pi, 8 * pi)
y <- numeric(N); s <- numeric(N)
best <- function(f) min(vapply(1:5, function(i) system.time(f())[["elapsed"]], 0))
ns <- function(sec, values) 1e9 * sec / values
invisible(.C("loop_cos_affine", x, N, 10L, y))        # warm-up
t_cos <- best(function() .C("loop_cos_affine", x, N, REPS, y, NAOK = TRUE))
t_pair <- best(function() .C("loop_sincos", x, N, REPS, y, s, NAOK = TRUE))
t_libm <- best(function() .C("loop_libm_cos", x, N, REPS %/% 10L, y, NAOK = TRUE))
t_r <- best(function() for (k in seq_len(REPS %/% 10L)) cos(x))
chk <- .C("loop_cos_affine", x, N, 1L, y = y)$y
err <- max(abs(chk - 0.5 * cos(x + 0.25)))

numpy <- NA_real_
py <- "/usr/bin/python3"
if (file.exists(py)) {
  code <- sprintf(paste0("import numpy as np, time\n",
                         "a = np.random.default_rng(2).uniform(-8*np.pi, 8*np.pi, %d)\n",
                         "best = 1e9\n",
                         "for _ in range(5):\n",
                         "    t = time.perf_counter()\n",
                         "    for _ in range(%d): np.cos(a, out=a)\n",
                         "    best = min(best, time.perf_counter() - t)\n",
                         "print(best)\n"), N, REPS)
  out <- suppressWarnings(system2(py, c("-c", shQuote(code)), stdout = TRUE, stderr = FALSE))
  if (length(out) == 1L) numpy <- as.numeric(out)
}

isa <- c("SSE2 (portable)", "AVX2", "AVX-512")[.Call(bochner:::C_tile_product, NULL, NULL, -2L, FALSE) + 1L]
cpu <- sub("^[^:]*:[[:space:]]*", "", grep("^model name", readLines("/proc/cpuinfo"), value = TRUE)[1])
table <- c(
  sprintf("Recorded %s by `Rscript bench/investigations/cosine.R`; %s, %s code path, 1 thread, R's default -O2.",
          format(Sys.Date()), cpu, isa),
  sprintf("%d values in cache, %d passes, fastest of 5; max |error| of bochner's cos against libm here: %.1e.",
          N, REPS, err),
  "",
  "| operation | ns per value |",
  "|---|---:|",
  sprintf("| bochner cosine with phase and scale, `s * cos(x + b)` (phase map) | %.2f |", ns(t_cos, N * REPS)),
  sprintf("| bochner cosine and sine, `s * (cos x, sin x)` (pair map), per value | %.2f |", ns(t_pair, 2 * N * REPS)),
  sprintf("| libm `cos` in the same C loop | %.2f |", ns(t_libm, N * (REPS %/% 10L))),
  sprintf("| R `cos(x)` (libm, plus allocating the result) | %.2f |", ns(t_r, N * (REPS %/% 10L))),
  sprintf("| numpy `np.cos(a, out=a)` | %s |", if (is.na(numpy)) "n/a" else sprintf("%.2f", ns(numpy, N * REPS))))
cat(table, sep = "\n")
readme <- file.path("bench", "README.md")
lines <- readLines(readme)
start <- grep("<!-- cosine:start -->", lines, fixed = TRUE)
end <- grep("<!-- cosine:end -->", lines, fixed = TRUE)
if (length(start) == 1L && length(end) == 1L && end > start) {
  writeLines(c(lines[seq_len(start)], table, lines[end:length(lines)]), readme)
  cat("\nrecorded in", readme, "\n")
}
