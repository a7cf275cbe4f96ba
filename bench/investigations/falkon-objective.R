# Which objective should falkon(tune = ) minimise to learn one length scale
# per input?  Issue 39 names three: a held-out squared error (what the
# package does, R/fit-falkon-tune.R), generalised cross-validation, and the
# Nystrom complexity-regularised objective (Titsias's collapsed bound, the
# "sgpr" objective of Meanti et al., AISTATS 2022).  All three are
# minimised here on the same rows (at most 3000 of the training rows, the
# tuning's first stage), the same 300 uniform centres, from the same start
# (the bandwidth rule's scale for every input; the untuned fit's lambda, or
# for the bound signal variance var(y) and noise var(y) / 10),
# by the same optimiser (optim()'s L-BFGS-B with finite differences: the
# question is where each objective's minimum lies, not how fast it is
# found), in the Gaussian kernel.  Each set of learned scales is then
# given to the default falkon() fit (which chooses lambda and m as usual)
# and scored on the test rows, beside the shipped falkon(tune = "ard") and
# rff_gp(ard = TRUE) (marginal likelihood on random features).
#
#   held-out: mean over one held-out fifth of ||K_vm alpha - y_v||^2, alpha
#             fitted on the other four fifths (five folds below 1500 rows:
#             the tuning's falkon_tune_folds());
#   GCV:      n ||y - K_nm alpha||^2 / (n - tr H)^2 on all rows, with
#             tr H = tr((K_nm'K_nm + lambda n K_mm)^-1 K_nm'K_nm);
#   Titsias:  -log N(y | 0, Q + s^2 I) + tr(K - Q) / (2 s^2), Q = a^2 K_nm
#             K_mm^-1 K_mn (one such term per one-hot column for classes),
#             over the scales, a^2 and s^2.
#
# Usage: R_LIBS=<lib> Rscript bench/investigations/falkon-objective.R [set ...]
# Writes bench/investigations/falkon-objective.md.  Run with nothing else
# on the machine for the time column; the errors do not depend on it.
suppressPackageStartupMessages({
  library(bochner)
  library(mlbench)
})
source("bench/harness/data.R")
source("bench/harness/machine.R")
bench_have <- function(pkg) requireNamespace(pkg, quietly = TRUE)
ns <- asNamespace("bochner")
nth <- 2L

splits3 <- function(x, y) lapply(1:3, function(s) bench_split(x, y, seed = s))
sets <- list(
  friedman1 = function() bench_friedman1_pairs(1:3),
  BostonHousing = function() {
    v <- bench_mlbench("BostonHousing")
    splits3(bench_numeric(v[, -14]), v$medv)
  },
  Vehicle = function() { v <- bench_mlbench("Vehicle"); splits3(as.matrix(v[, -19]), v$Class) },
  diamonds = function() list(bench_set("diamonds"))
)

# the unit Gaussian kernel on the package's kernel blocks
gk <- function(a, b) ns$tune_kernels(a, b, ns$tune_gaussian, nth)$K
chol_solve <- function(R, B) .Call(ns$C_cholesky_solve, R, B)
mp <- function(a, b) .Call(ns$C_matprod, a, b, nth)
ldet <- function(R) 2 * sum(log(diag(R)))

# the three objectives at theta; 'pr' holds the rows x, their targets y
# (centred, n x k), the centres z and the tuning's folds (probs)
obj_heldout <- function(theta, pr) {
  d <- ncol(pr$x)
  ns$falkon_tune_eval(theta[-1], pr$probs, d, d, exp(theta[1]), nth)$value
}
nystrom_parts <- function(s, pr) {
  u <- sweep(pr$x, 2L, s, "/")
  z <- sweep(pr$z, 2L, s, "/")
  Knm <- gk(u, z)
  list(Knm = Knm, Kmm = gk(z, NULL), B = .Call(ns$C_crossprod, Knm, nth))
}
obj_gcv <- function(theta, pr) {
  p <- nystrom_parts(exp(theta[-1]), pr)
  n <- nrow(pr$x)
  R <- .Call(ns$C_cholesky, p$B + exp(theta[1]) * n * p$Kmm, 1e-10 * n, nth)
  alpha <- chol_solve(R, t(mp(t(pr$y), p$Knm)))
  rss <- sum((pr$y - mp(p$Knm, alpha))^2)
  tr_h <- sum(diag(chol_solve(R, p$B)))
  log(n * rss / (n - tr_h)^2)
}
obj_titsias <- function(theta, pr) {
  d <- ncol(pr$x)
  a2 <- exp(theta[d + 1L])
  s2 <- exp(theta[d + 2L])
  p <- nystrom_parts(exp(theta[seq_len(d)]), pr)
  n <- nrow(pr$x)
  m <- nrow(pr$z)
  Rk <- .Call(ns$C_cholesky, p$Kmm, 1e-6, nth)   # the usual jitter of a unit kernel
  R <- .Call(ns$C_cholesky, p$B + (s2 / a2) * p$Kmm, 1e-8 * n, nth)
  b <- t(mp(t(pr$y), p$Knm))
  k <- ncol(pr$y)
  quad <- (sum(pr$y^2) - sum(b * chol_solve(R, b))) / s2
  logdet <- n * log(s2) - ldet(Rk) + m * log(a2 / s2) + ldet(R)
  trace <- n * a2 - a2 * sum(diag(chol_solve(Rk, p$B)))
  0.5 * (quad + k * logdet) + k * trace / (2 * s2)
}

learn <- function(which, pr, s0, lam0, d) {
  lo_s <- rep(log(1e-2), d)
  hi_s <- rep(log(1e4), d)
  if (which == "titsias") {
    v <- mean(apply(pr$y, 2, stats::var))
    # signal variance v and noise v / 10, the usual GP start: the untuned
    # fit's lambda (1e-8 on friedman1) puts the noise so low that the
    # factor of K_nm'K_nm + (s^2 / a^2) K_mm fails at the start
    start <- c(rep(log(s0), d), log(v), log(v / 10))
    lower <- c(lo_s, log(v) - 10, log(v) - 25)
    upper <- c(hi_s, log(v) + 10, log(v) + 5)
    f <- obj_titsias
  } else {
    start <- c(log(lam0), rep(log(s0), d))
    lower <- c(log(1e-10), lo_s)
    upper <- c(0, hi_s)
    f <- if (which == "gcv") obj_gcv else obj_heldout
  }
  # where a Cholesky factor fails (scales so long that K_mm is numerically
  # of rank one) the point counts as a very bad one, and the line search
  # steps back
  g <- function(theta, pr) tryCatch(f(theta, pr), error = function(e) 1e10)
  o <- stats::optim(start, g, pr = pr, method = "L-BFGS-B", lower = lower, upper = upper,
                    control = list(maxit = 200))
  sg <- if (which == "titsias") exp(o$par[seq_len(d)]) else exp(o$par[-1])
  list(sigma = sg, evals = o$counts[[1]])
}

test_error <- function(pred, y) {
  if (is.factor(y)) 100 * mean(pred != y) else sqrt(mean((pred - y)^2))
}
timed <- function(expr) {
  t0 <- proc.time()
  v <- force(expr)
  list(value = v, elapsed = unname((proc.time() - t0)[3]))
}

args <- commandArgs(TRUE)
which_sets <- if (length(args)) args else names(sets)
rows <- list()
csv <- "bench/investigations/falkon-objective.csv"
# RENDER_ONLY=1: the page from the CSV of the last run
if (nzchar(Sys.getenv("RENDER_ONLY"))) which_sets <- character()
for (nm in which_sets) {
  splits <- sets[[nm]]()
  for (i in seq_along(splits)) {
    dd <- splits[[i]]
    d <- ncol(dd$xtr)
    base <- timed(falkon(dd$xtr, dd$ytr, seed = 1))
    sc <- ns$rff_scaling(dd$xtr)
    xs <- ns$rff_apply_scaling(dd$xtr, sc)
    Y <- if (is.factor(dd$ytr)) stats::model.matrix(~ dd$ytr - 1) else cbind(dd$ytr)
    # the tuning's own folds (one held-out fifth; five folds below 1500
    # rows); GCV and the bound use all these rows and the first fold's centres
    set.seed(100 + i)
    use <- sort(sample.int(nrow(xs), min(3000L, nrow(xs))))
    probs <- ns$falkon_tune_folds(xs[use, , drop = FALSE], Y[use, , drop = FALSE], 300L, 300L)
    pr <- list(x = xs[use, , drop = FALSE], z = probs$folds[[1]]$z, probs = probs,
               y = sweep(Y[use, , drop = FALSE], 2L, colMeans(Y[use, , drop = FALSE])))
    s0 <- exp(mean(log(base$value$kernel$sigma)))
    lam0 <- base$value$lambda
    add <- function(method, fit, elapsed, sigma, evals = NA) {
      r <- data.frame(set = nm, split = i, n_train = nrow(dd$xtr), d = d, method = method,
                      error = test_error(predict(fit, dd$xte), dd$yte), elapsed = elapsed,
                      evals = evals, sigma = paste(signif(sigma, 3), collapse = " "))
      print(r[, 1:8], digits = 4)
      rows[[length(rows) + 1L]] <<- r
    }
    add("default falkon", base$value, base$elapsed, base$value$kernel$sigma)
    tuned <- timed(falkon(dd$xtr, dd$ytr, seed = 1, tune = "ard"))
    add("falkon(tune = \"ard\")", tuned$value, tuned$elapsed, tuned$value$kernel$sigma)
    for (ob in c("heldout", "gcv", "titsias")) {
      l <- timed(learn(ob, pr, s0, lam0, d))
      f <- falkon(dd$xtr, dd$ytr, seed = 1, kernel = gaussian_kernel(l$value$sigma))
      add(ob, f, l$elapsed, l$value$sigma, l$value$evals)
    }
    if (!is.factor(dd$ytr)) {
      g <- timed(rff_gp(dd$xtr, dd$ytr, ard = TRUE, seed = 1))
      add("rff_gp(ard = TRUE)", g$value, g$elapsed, g$value$hyper$lengthscale)
    }
  }
}
res <- if (length(rows)) do.call(rbind, rows) else utils::read.csv(csv, check.names = FALSE)
if (length(rows)) utils::write.csv(res, csv, row.names = FALSE)

cols <- c("default falkon", "falkon(tune = \"ard\")", "heldout", "gcv", "titsias",
          "rff_gp(ard = TRUE)")
means <- tapply(res$error, list(res$set, factor(res$method, cols)), mean)
means <- means[unique(res$set), , drop = FALSE]
fmt <- function(v) ifelse(is.na(v), "-", formatC(v, digits = 4, format = "g"))
lines <- c(
  "# Which objective learns falkon's length scales? (issue 39)", "",
  sprintf("Generated by `bench/investigations/falkon-objective.R` on %s (2 cores), %s; bochner %s.",
          bench_lscpu()$cpu, format(Sys.Date()), utils::packageVersion("bochner")), "",
  "The held-out squared error (the package's objective), generalised cross-validation",
  "and Titsias's collapsed bound (the Nystrom complexity-regularised objective), each",
  "minimised over one length scale per input (and lambda, or the signal and noise",
  "variances) on the same rows (at most 3000 training rows), the same 300 uniform",
  "centres, from the same scales (the bound: signal variance var(y), noise var(y) / 10;",
  "the others: the untuned fit's lambda), by optim()'s L-BFGS-B with finite differences; the",
  "learned scales then go to the default `falkon()` fit.  `falkon(tune = \"ard\")` is the",
  "shipped tuner (analytic gradient, a refinement on up to 12 000 rows and 1000",
  "centres, judged against the rule); `rff_gp(ard = TRUE)` the package's marginal",
  "likelihood on random features.  Test RMSE (error % for classes), mean over splits.", "",
  paste0("| set | ", paste(cols, collapse = " | "), " |"),
  paste0("|---|", paste(rep("---:", length(cols)), collapse = "|"), "|"),
  vapply(rownames(means), function(r) {
    paste0("| ", r, " | ", paste(fmt(means[r, ]), collapse = " | "), " |")
  }, ""),
  "", "Every split (elapsed s: the fit, or the objective's optimisation; evaluations:",
  "optim()'s count of objective values, each gradient d + 1 or d + 2 more):", "",
  "| set | split | n | d | method | error | elapsed s | evaluations | length scales |",
  "|---|---:|---:|---:|---|---:|---:|---:|---|",
  sprintf("| %s | %d | %d | %d | %s | %.4g | %.1f | %s | %s |", res$set, res$split,
          res$n_train, res$d, res$method, res$error, res$elapsed,
          ifelse(is.na(res$evals), "-", res$evals), res$sigma))
# the reading: each objective's change of the mean error against the shipped tuner's
rel <- function(col) 100 * (means[, col] / means[, "falkon(tune = \"ard\")"] - 1)
pct <- function(v) paste(sprintf("%s %+.1f %%", names(v), v), collapse = ", ")
best <- apply(means[, c("heldout", "gcv", "titsias"), drop = FALSE], 1, function(v) names(which.min(v)))
lines <- c(lines, "", "## Reading", "",
  sprintf("Command (nothing else running): `R_LIBS=<lib> Rscript bench/investigations/falkon-objective.R` (%.0f minutes).",
          sum(res$elapsed) / 60), "",
  sprintf("- The objective with the lowest mean error of the three: %s.",
          paste(sprintf("%s %s", names(best), best), collapse = ", ")),
  sprintf("- GCV against the shipped tuner: %s.", pct(rel("gcv"))),
  sprintf("- Titsias's bound against it: %s.", pct(rel("titsias"))),
  sprintf("- `rff_gp(ard = TRUE)` against it (regression): %s.",
          pct(stats::na.omit(rel("rff_gp(ard = TRUE)")))),
  "- The held-out objective stays: the gain of GCV is a few per cent on three sets and a",
  "  loss on the classes, from one objective optimised here without the shipped tuner's",
  "  refinement and judgement; Titsias's bound is the worst of the three.  GCV is the",
  "  candidate to add to the tuner (its analytic gradient costs what the held-out one",
  "  does: one more m x m product for tr H), measured then on the fifteen sets of",
  "  falkon-tune.md.")
writeLines(lines, "bench/investigations/falkon-objective.md")
