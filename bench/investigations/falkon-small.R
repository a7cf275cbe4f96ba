# Investigation: where falkon()'s held-out slice stops being the better way to
# choose lambda on small training sets.  With lambda and iter "auto", falkon
# holds 10 % of the rows out (at most 2000) to choose lambda and the iteration
# count; below 100 rows there is no slice and lambda is chosen by exact
# leave-one-out on all rows (falkon_fit_loo(), R/fit-falkon-loo.R).  This
# script fits both ways at the same sizes, `control = list(loo_rows = 0)`
# (the held-out slice wherever one can be held) against `loo_rows = 1e9`
# (leave-one-out), with rff_ridge() and kernlab::ksvm() beside.
#
#   R_LIBS=<lib> Rscript bench/investigations/falkon-small.R [splits]
#
# Each set: a pool of complete rows; for each training size, `splits` random
# draws (set.seed(split)) of that many training rows, the test rows the rest
# (at most 2000).  Error: test RMSE (regression) or error rate in % (classes);
# the table gives the mean over the splits and the CPU seconds of a fit.
# Output: Markdown on stdout (falkon-small.md).
suppressMessages({
  library(bochner)
  library(kernlab)
})
source("bench/harness/harness.R")
args <- commandArgs(TRUE)
splits <- if (length(args)) as.integer(args[1L]) else 5L

ml <- function(name) bench_mlbench(name)
pools <- list(
  airquality = function() { d <- na.omit(datasets::airquality); list(x = as.matrix(d[, -1]), y = d$Ozone) },
  mcycle = function() { e <- new.env(); utils::data(mcycle, package = "MASS", envir = e)
                        list(x = as.matrix(e$mcycle["times"]), y = e$mcycle$accel) },
  faithful = function() list(x = as.matrix(datasets::faithful["waiting"]), y = datasets::faithful$eruptions),
  BostonHousing = function() { v <- ml("BostonHousing"); list(x = bench_numeric(v[, -14]), y = v$medv) },
  quakes = function() list(x = as.matrix(datasets::quakes[, c("lat", "long", "depth", "stations")]),
                           y = datasets::quakes$mag),
  friedman1 = function() bench_friedman1(4000, seed = 7L),
  diamonds = function() { d <- bench_diamonds(); set.seed(99); i <- sample(nrow(d$x), 4000)
                          list(x = d$x[i, ], y = d$y[i]) },
  Sonar = function() { v <- ml("Sonar"); list(x = as.matrix(v[, -61]), y = v$Class) },
  Ionosphere = function() { v <- ml("Ionosphere"); list(x = bench_numeric(v[, -c(2, 35)]), y = v$Class) },
  Glass = function() { v <- ml("Glass"); list(x = as.matrix(v[, -10]), y = v$Type) },
  BreastCancer = function() { v <- na.omit(ml("BreastCancer")); list(x = bench_numeric(v[, 2:10]), y = v$Class) },
  Vehicle = function() { v <- ml("Vehicle"); list(x = as.matrix(v[, -19]), y = v$Class) },
  spam = function() { e <- new.env(); utils::data(spam, package = "kernlab", envir = e)
                      list(x = as.matrix(e$spam[, -58]), y = e$spam$type) },
  DNA = function() { v <- ml("DNA"); list(x = bench_numeric(v[, -181]), y = v$Class) },
  Satellite = function() { v <- ml("Satellite"); list(x = as.matrix(v[, -37]), y = v$classes) })
sizes <- c(80, 100, 200, 500, 1000, 2000)

fits <- list(
  heldout = function(x, y) falkon(x, y, control = list(loo_rows = 0)),
  loo = function(x, y) falkon(x, y, control = list(loo_rows = 1e9)),
  rff_ridge = function(x, y) rff_ridge(x, y),
  ksvm = function(x, y) ksvm(x, y))
pred <- function(f, x) if (inherits(f, "ksvm")) kernlab::predict(f, x) else predict(f, x)
err <- function(p, y) {
  if (is.factor(y)) 100 * mean(as.character(p) != as.character(y)) else sqrt(mean((p - y)^2))
}

rows <- list()
for (name in names(pools)) {
  d <- pools[[name]]()
  x <- d$x
  y <- d$y
  keep <- stats::complete.cases(x)
  x <- x[keep, , drop = FALSE]
  y <- y[keep]
  x <- x[, apply(x, 2, stats::sd) > 0, drop = FALSE]
  if (is.factor(y)) y <- droplevels(y)
  N <- nrow(x)
  for (n in sizes[sizes <= 0.8 * N]) {
    res <- matrix(NA, splits, length(fits), dimnames = list(NULL, names(fits)))
    cpu <- res
    for (s in seq_len(splits)) {
      set.seed(s)
      idx <- sample(N)
      tr <- idx[seq_len(n)]
      te <- utils::head(idx[-seq_len(n)], 2000)
      ytr <- if (is.factor(y)) droplevels(y[tr]) else y[tr]
      if (is.factor(y) && nlevels(ytr) < 2L) next
      for (f in names(fits)) {
        set.seed(100 + s)
        t0 <- proc.time()
        fit <- suppressWarnings(fits[[f]](x[tr, , drop = FALSE], ytr))
        t1 <- proc.time() - t0
        cpu[s, f] <- t1[["user.self"]] + t1[["sys.self"]]
        res[s, f] <- err(pred(fit, x[te, , drop = FALSE]), y[te])
      }
    }
    m <- colMeans(res, na.rm = TRUE)
    rows[[length(rows) + 1L]] <- data.frame(
      set = name, type = if (is.factor(y)) "class" else "reg", n = n, d = ncol(x),
      heldout = m[["heldout"]], loo = m[["loo"]], change = 100 * (m[["loo"]] / m[["heldout"]] - 1),
      loo_wins = sum(res[, "loo"] < res[, "heldout"] - 1e-12, na.rm = TRUE),
      rff_ridge = m[["rff_ridge"]], ksvm = m[["ksvm"]],
      cpu_heldout = mean(cpu[, "heldout"], na.rm = TRUE), cpu_loo = mean(cpu[, "loo"], na.rm = TRUE))
    message(paste(format(rows[[length(rows)]]), collapse = " "))
  }
}
tab <- do.call(rbind, rows)

cat("# falkon() on small training sets: held-out slice against leave-one-out\n\n")
cat(sprintf("`Rscript bench/investigations/falkon-small.R %d`, %s UTC, commit %s; %s; %s.\n\n",
            splits, format(Sys.time(), "%Y-%m-%d %H:%M", tz = "UTC"),
            system("git rev-parse --short HEAD", intern = TRUE),
            paste(bench_lscpu()$cpu, collapse = ", "), bench_blas()))
cat("Error: test RMSE (reg) or error rate in % (class), mean over", splits, "random draws of",
    "n training rows (test: the rest, at most 2000).  `heldout`: `falkon(x, y, control =",
    "list(loo_rows = 0))`, lambda and the iterations chosen on a 10 % slice (none below 100",
    "rows: leave-one-out there too); `loo`: `loo_rows = 1e9`, lambda by exact leave-one-out",
    "on all rows.  `change`: loo over heldout, %; `loo_wins`: splits where loo's error is",
    "lower.  CPU: user + system seconds of a fit (2 threads).\n\n")
fmt <- tab
num <- c("heldout", "loo", "rff_ridge", "ksvm")
fmt[num] <- lapply(fmt[num], function(v) formatC(v, digits = 4, format = "g"))
fmt$change <- sprintf("%+.1f %%", tab$change)
fmt$loo_wins <- sprintf("%d / %d", tab$loo_wins, splits)
fmt$cpu_heldout <- sprintf("%.2f", tab$cpu_heldout)
fmt$cpu_loo <- sprintf("%.2f", tab$cpu_loo)
cat(paste0("| ", paste(names(fmt), collapse = " | "), " |\n"))
cat(paste0("|", paste(rep("---", ncol(fmt)), collapse = "|"), "|\n"))
for (i in seq_len(nrow(fmt))) cat(paste0("| ", paste(unlist(fmt[i, ]), collapse = " | "), " |\n"))
cat("\nBy size (mean change of loo over heldout, %; sets where loo is lower):\n\n")
for (n in sort(unique(tab$n))) {
  t <- tab[tab$n == n, ]
  cat(sprintf("- n = %d: %+.1f %% (lower on %d of %d sets; worst %+.1f %%)\n", n, mean(t$change),
              sum(t$change < 0), nrow(t), max(t$change)))
}
