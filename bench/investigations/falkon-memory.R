# falkon()'s memory with many centres (issue 23: 10^6 rows, d = 20, m =
# 10^4 in at most 1.5 GB beyond the data), and the m x m factorisation
# before and after the packed preconditioner (one m x m array holding T and
# A, src/falkon_factor.c).
#
# Every measurement runs in a fresh Rscript process: its peak memory is the
# high-water mark (VmHWM) beyond the mark once its data were made.  From the
# package root, after installing the package:
#
#   Rscript bench/investigations/falkon-memory.R                  both parts, 2 threads
#   Rscript bench/investigations/falkon-memory.R --part=factor    the factorisation only (m = 10^4)
#   Rscript bench/investigations/falkon-memory.R --part=steps --m=5000 --threads=1   one preconditioner
#   Rscript bench/investigations/falkon-memory.R --part=fit       the fits only (n = 2 10^5 stand-in)
#   Rscript bench/investigations/falkon-memory.R --n=1e6 --part=fit   the issue's size (many minutes)
#
# The factorisation is the packed factor: K_mm computed into the array and
# factored in place, then A formed in place for each candidate in turn.  The
# former path (K_mm from kernel_matrix(), T = chol(K_mm + shift I) on a copy,
# G = T T' / m and one A = chol(G + lambda I) per candidate, all held), which
# falkon-memory.md compares with it, lost its entry points in 4a381dd; its
# figures there are from the runs before that commit.
args <- commandArgs(trailingOnly = TRUE)
source("bench/harness/report.R")    # bench_arg()
opt <- function(name, default) bench_arg(name, default, args = args)
vm_hwm_mb <- function() {
  s <- readLines("/proc/self/status")
  as.numeric(gsub("[^0-9]", "", grep("^VmHWM", s, value = TRUE))) / 1024
}
nthreads <- as.integer(opt("threads", "2"))
m <- as.integer(as.numeric(opt("m", "1e4")))

# one measurement in this process: --one WHAT
if (length(args) && args[1L] == "--one") {
  suppressPackageStartupMessages(library(bochner))
  what <- args[2L]
  lambdas <- 10^c(-4, -6, -8)
  if (what == "steps") {
    # one preconditioner, three times each, fastest kept: the packed one
    # forming G in place, and the packed one copying a kept G (falkon_keep_g())
    set.seed(1)
    C <- matrix(stats::rnorm(m * 20), m, 20)
    ker <- gaussian_kernel(sigma = sqrt(20))
    code <- bochner:::kernel_code(ker)
    par <- bochner:::kernel_parameters(ker)
    F <- .Call(bochner:::C_falkon_factor, C, code, par, 1e-13, nthreads)
    Fg <- .Call(bochner:::C_falkon_factor, C, code, par, 1e-13, nthreads)
    el <- function(e) system.time(e)[["elapsed"]]
    r <- replicate(3, {
      c <- el(.Call(bochner:::C_falkon_factor_precond, F, 1e-6, 1, nthreads))
      g <- el(bochner:::falkon_keep_g(list(F = Fg), nthreads))
      e <- el(.Call(bochner:::C_falkon_factor_precond, Fg, 1e-6, 1, nthreads))
      Fg <<- .Call(bochner:::C_falkon_factor, C, code, par, 1e-13, nthreads)
      c(c, g, e)
    })
    r <- apply(r, 1L, min)
    cat(sprintf(paste0("steps (m = %d; elapsed, fastest of 3): packed G and A in place %.2f;",
                       " kept G %.2f, then A %.2f\n"), m, r[1], r[2], r[3]))
    quit(save = "no")
  }
  if (what == "factor_after") {
    set.seed(1)
    C <- matrix(stats::rnorm(m * 20), m, 20)
    ker <- gaussian_kernel(sigma = sqrt(20))
    code <- bochner:::kernel_code(ker)
    par <- bochner:::kernel_parameters(ker)
    gc()
    base <- vm_hwm_mb()
    t0 <- proc.time()[["elapsed"]]
    F <- .Call(bochner:::C_falkon_factor, C, code, par, 1e-13, nthreads)
    t1 <- proc.time()[["elapsed"]]
    for (l in lambdas) .Call(bochner:::C_falkon_factor_precond, F, l, 1, nthreads)
    t2 <- proc.time()[["elapsed"]]
    cat(sprintf("%s,%.1f,%.1f,%.0f\n", what, t1 - t0, (t2 - t1) / length(lambdas),
                vm_hwm_mb() - base))
  } else {
    n <- as.numeric(opt("n", "2e5"))
    set.seed(6)   # the generator of bench/falkon.R's synth_1e6
    d <- 20
    x <- matrix(stats::rnorm(n * d), n, d)
    f <- sin(x[, 1]) + cos(x[, 2]) + 0.5 * x[, 3] * x[, 4] + tanh(x[, 5] + x[, 6]) +
      0.3 * rowSums(x[, 7:10])
    y <- f + 0.5 * stats::rnorm(n)
    rm(f)
    invisible(falkon(x[1:300, ], y[1:300], m = 50, nthreads = nthreads))  # warm-up
    gc()
    base <- vm_hwm_mb()
    secs <- system.time(fit <- switch(what,
      fit_fixed = falkon(x, y, m = m, lambda = 1e-6, iter = 3, seed = 1,
                         nthreads = nthreads),
      fit_auto = falkon(x, y, m = m, seed = 1, nthreads = nthreads,
                        control = falkon_control(max_iter = 2, patience = 1))))[["elapsed"]]
    cat(sprintf("%s,%.1f,%.1f,%.0f,%g\n", what, secs, NA, vm_hwm_mb() - base, fit$lambda))
  }
  quit(save = "no")
}

part <- opt("part", "all")
whats <- c(if (part %in% c("all", "steps")) "steps",
           if (part %in% c("all", "factor")) "factor_after",
           if (part %in% c("all", "fit")) c("fit_fixed", "fit_auto"))
cat(sprintf("# %s; %d threads; m = %d; load: %s\n",
            { source("bench/harness/machine.R"); bench_lscpu()$cpu },
            nthreads, m, trimws(system("uptime", intern = TRUE))))
cat("what,seconds (K_mm and T, or the fit),seconds per lambda (G and A),peak MB beyond data,lambda\n")
for (w in whats) {
  out <- system2(file.path(R.home("bin"), "Rscript"),
                 c("bench/investigations/falkon-memory.R", "--one", w, args), stdout = TRUE)
  cat(out, sep = "\n")
}
