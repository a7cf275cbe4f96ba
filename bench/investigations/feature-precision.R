# Single precision in the feature solvers (issue 38, ?feature_precision): rff_gp() with
# fixed hyperparameters and rff_ridge(), double against single, 1 and 2 threads.
#
#   Rscript bench/investigations/feature-precision.R [--n=1e6] [--D=1024] [--sweep-only]
#     [--no-sweep] [--solvers=gp,ridge,ridge_auto] [--threads=2,1] [--reps=1]
#
# Part 1 (the issue's case): n rows, d = 10 inputs, D frequencies; every fit runs in a
# child process of its own (this script with --child=...), so that its peak memory
# (VmHWM) is its own; the children save predictions on 1000 test rows and the parent
# compares single with double.  Part 2 (the rule of "auto"): small fits over n, D and
# the noise, the errors of single against q = 2^-24 sqrt(n / 2D) s_f^2 / s_n^2.
# With --reps=N each fit of part 1 runs N times (double and single alternating): the
# medians, with the range of the elapsed times (a shared VM's timings vary by 10 %).
# The output is Markdown: feature-precision.md is this script's output.

args <- commandArgs(TRUE)
source("bench/harness/report.R")    # bench_arg()
opt <- function(name, default) bench_arg(name, default, args = args)
library(bochner)
N <- as.numeric(opt("n", "1e6"))
D <- as.integer(opt("D", "1024"))
d <- 10L
NOISE <- 0.1

make_data <- function(n, d, seed = 1) {
  set.seed(seed)
  x <- matrix(rnorm(n * d), n, d)
  b1 <- rnorm(d) / sqrt(d)
  b2 <- rnorm(d) / sqrt(d)
  f <- function(x) sin(2 * drop(x %*% b1)) + 0.5 * cos(3 * drop(x %*% b2))
  xt <- matrix(rnorm(1000 * d), 1000, d)
  list(x = x, y = f(x) + rnorm(n, sd = NOISE), xt = xt)
}

vm_hwm <- function() {
  s <- grep("^VmHWM", readLines("/proc/self/status"), value = TRUE)
  as.numeric(gsub("[^0-9]", "", s)) / 2^20        # GiB
}

fit_one <- function(solver, precision, threads, dat) {
  if (solver == "gp") {
    rff_gp(dat$x, dat$y, kernel = gaussian_kernel(sqrt(d)), D = D, optimize = FALSE,
           signal = 1, noise = NOISE, seed = 1, control = list(precision = precision),
           nthreads = threads)
  } else {
    lambda <- if (solver == "ridge") 1e-6 else "auto"
    rff_ridge(dat$x, dat$y, D = D, lambda = lambda, seed = 1, precision = precision,
              nthreads = threads)
  }
}

child <- opt("child", "")
if (nzchar(child)) {
  p <- strsplit(child, ",")[[1L]]                   # solver,precision,threads,file
  dat <- make_data(N, d)
  t0 <- proc.time()
  fit <- fit_one(p[1L], p[2L], as.integer(p[3L]), dat)
  tm <- proc.time() - t0
  pr <- if (p[1L] == "gp") predict(fit, dat$xt, se.fit = TRUE)
        else list(fit = predict(fit, dat$xt))
  saveRDS(list(elapsed = tm[["elapsed"]], cpu = tm[["user.self"]] + tm[["sys.self"]],
               hwm = vm_hwm(), mean = drop(pr$fit),
               var = if (!is.null(pr$se.fit)) pr$se.fit^2,
               logLik = if (p[1L] == "gp") fit$logLik, lambda = fit$lambda,
               precision = fit$precision), p[4L])
  quit(save = "no")
}

script <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
run_child <- function(solver, precision, threads) {
  out <- tempfile(fileext = ".rds")
  status <- system2(file.path(R.home("bin"), "Rscript"),
                    c(script, paste0("--n=", N), paste0("--D=", D),
                      paste0("--child=", solver, ",", precision, ",", threads, ",", out)))
  if (status != 0L) stop("the child ", solver, "/", precision, "/", threads, " failed")
  readRDS(out)
}
rel <- function(a, b) max(abs(a - b)) / max(abs(b))
relv <- function(a, b) max(abs(a - b) / abs(b))

cat("# Single precision in the feature solvers (issue 38)\n\n")
cat("`Rscript bench/investigations/feature-precision.R", paste(args, collapse = " "), "`",
    "run", format(Sys.time(), "%Y-%m-%d %H:%M %Z"), "\n\n")
source("bench/harness/machine.R")
cpu <- bench_lscpu()
cat("CPU: ", cpu$cpu, ", ", parallel::detectCores(), " CPUs", if (nzchar(cpu$simd)) ", ",
    cpu$simd, "\n\n", sep = "")
cat("Load at the start: `", system("uptime", intern = TRUE), "`\n\n", sep = "")

if (!"--sweep-only" %in% args) {
  cat(sprintf("## Part 1: n = %g, d = %d, D = %d (2D = %d features), noise %g\n\n",
              N, d, D, 2L * D, NOISE))
  cat("rff_gp(optimize = FALSE, signal = 1, noise = 0.1); rff_ridge(lambda = 1e-6) and",
      "rff_ridge(lambda = \"auto\") (D features). Each fit in a child process of its own:",
      "elapsed and CPU seconds of the fit, the child's peak resident memory (VmHWM, with",
      "the data: x is", format(N * d * 8 / 2^20, digits = 3), "MiB); with --reps, medians",
      "and the range of the elapsed times.  Differences on",
      "1000 test rows against the double fit of the same thread count: means max|diff| /",
      "max|double|, variances max relative.\n\n")
  cat("| solver | threads | precision | elapsed s | CPU s | peak GiB | single/double elapsed",
      "| mean diff | var diff | logLik diff | lambda |\n|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
  reps <- as.integer(opt("reps", "1"))
  for (solver in strsplit(opt("solvers", "gp,ridge,ridge_auto"), ",")[[1L]]) {
    for (threads in as.integer(strsplit(opt("threads", "2,1"), ",")[[1L]])) {
      runs <- lapply(seq_len(reps), function(i)
        lapply(c(double = "double", single = "single"), function(p) run_child(solver, p, threads)))
      r <- runs[[1L]]
      for (p in names(r)) {
        el <- vapply(runs, function(x) x[[p]]$elapsed, 0)
        r[[p]]$elapsed <- stats::median(el)
        r[[p]]$cpu <- stats::median(vapply(runs, function(x) x[[p]]$cpu, 0))
        r[[p]]$range <- if (reps > 1L) sprintf(" (%.1f-%.1f)", min(el), max(el)) else ""
      }
      for (p in names(r)) {
        a <- r[[p]]
        b <- r$double
        cat(sprintf("| %s | %d | %s | %.1f%s | %.1f | %.2f | %s | %s | %s | %s | %s |\n",
                    solver, threads, a$precision, a$elapsed, a$range, a$cpu, a$hwm,
                    if (p == "single") sprintf("%.2f", a$elapsed / b$elapsed) else "",
                    if (p == "single") sprintf("%.1e", rel(a$mean, b$mean)) else "",
                    if (p == "single" && !is.null(a$var)) sprintf("%.1e", relv(a$var, b$var)) else "",
                    if (p == "single" && !is.null(a$logLik)) sprintf("%.3g", a$logLik - b$logLik) else "",
                    if (!is.null(a$lambda)) format(a$lambda, digits = 3) else ""))
      }
    }
  }
  cat("\nLoad after part 1: `", system("uptime", intern = TRUE), "`\n\n", sep = "")
}

if ("--no-sweep" %in% args) {
  cat("Load at the end: `", system("uptime", intern = TRUE), "`\n", sep = "")
  quit(save = "no")
}
cat("## Part 2: the error of single precision against q (the rule of \"auto\")\n\n")
cat("rff_gp(optimize = FALSE, signal = 1), d = 10, noise s_n varied, 2 threads;",
    "q = 2^-24 sqrt(n / 2D) (s_f / s_n)^2.  Errors as in part 1.\n\n")
cat("| n | D | noise | q | mean diff | var diff | logLik diff | double s | single s |\n",
    "|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n", sep = "")
for (n in c(2e4, 1e5)) {
  dat <- make_data(n, d, seed = 2)
  for (Ds in c(256L, 512L)) {
    for (noise in c(0.3, 0.1, 0.03, 0.01)) {
      f <- function(p) {
        t <- system.time(fit <- rff_gp(dat$x, dat$y, kernel = gaussian_kernel(sqrt(d)), D = Ds,
                                       optimize = FALSE, signal = 1, noise = noise, seed = 1,
                                       control = list(precision = p), nthreads = 2L))
        list(fit = fit, t = t[["elapsed"]], pr = predict(fit, dat$xt, se.fit = TRUE))
      }
      a <- f("double")
      b <- f("single")
      q <- 2^-24 * sqrt(n / (2 * Ds)) / noise^2
      cat(sprintf("| %g | %d | %g | %.1e | %.1e | %.1e | %.3g | %.2f | %.2f |\n", n, Ds, noise,
                  q, rel(b$pr$fit, a$pr$fit), relv(b$pr$se.fit^2, a$pr$se.fit^2),
                  b$fit$logLik - a$fit$logLik, a$t, b$t))
    }
  }
}
cat("\nLoad at the end: `", system("uptime", intern = TRUE), "`\n", sep = "")
