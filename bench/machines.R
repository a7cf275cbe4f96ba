# Kernel machines on real data: default calls of rff_svm() and rff_ridge()
# against kernlab::ksvm() with its defaults (exact Gaussian-kernel C-SVC,
# one-vs-one, bandwidth from sigest), and LiblineaR on the same random
# features where installed.  Accuracy on a fixed held-out split (seeded) and
# training time, in one run.  Run from the repository root:
#   Rscript bench/machines.R            (writes bench/machines.md)
#   BOCHNER_BENCH_QUICK=1 Rscript bench/machines.R   (smaller sets, a check)
suppressPackageStartupMessages({
  library(bochner)
  library(mlbench)
})
quick <- nzchar(Sys.getenv("BOCHNER_BENCH_QUICK"))
has_kernlab <- requireNamespace("kernlab", quietly = TRUE)
has_liblinear <- requireNamespace("LiblineaR", quietly = TRUE)
threads <- bochner_threads()

numeric_frame <- function(df) {
  as.matrix(data.frame(lapply(df, function(v) as.numeric(as.character(v)))))
}
sets <- list(
  Vehicle = function() { data(Vehicle, package = "mlbench", envir = environment())
    list(x = as.matrix(Vehicle[, -19]), y = Vehicle$Class) },
  Vowel = function() { data(Vowel, package = "mlbench", envir = environment())
    list(x = numeric_frame(Vowel[, 2:10]), y = Vowel$Class) },
  Satellite = function() { data(Satellite, package = "mlbench", envir = environment())
    list(x = as.matrix(Satellite[, -37]), y = Satellite$classes) },
  DNA = function() { data(DNA, package = "mlbench", envir = environment())
    list(x = numeric_frame(DNA[, -181]), y = DNA$Class) },
  spam = function() { data(spam, package = "kernlab", envir = environment())
    list(x = as.matrix(spam[, -58]), y = spam$type) },
  Shuttle = function() { data(Shuttle, package = "mlbench", envir = environment())
    list(x = as.matrix(Shuttle[, -10]), y = Shuttle$Class) },
  synthetic_1e6 = function() {
    # two classes separated by a sine-shaped boundary in 10 dimensions
    set.seed(42)
    n <- if (quick) 2e4 else 1e6
    x <- matrix(rnorm(n * 10), n, 10)
    y <- factor(ifelse(sin(2 * x[, 1]) + x[, 2] * x[, 3] + 0.3 * rnorm(n) > 0, "a", "b"))
    list(x = x, y = y)
  })
if (!has_kernlab) sets$spam <- NULL
if (quick) sets <- sets[c("Vehicle", "Vowel", "synthetic_1e6")]
only <- Sys.getenv("BOCHNER_BENCH_SETS")     # e.g. "synthetic_1e6": those sets only, no .md
if (nzchar(only)) sets <- sets[strsplit(only, ",")[[1]]]

timed <- function(expr) {
  t <- system.time(v <- expr)[["elapsed"]]
  list(value = v, time = t)
}
rows <- list()
add <- function(set, n, method, acc, time) {
  rows[[length(rows) + 1L]] <<- data.frame(set = set, n_train = n, method = method,
                                           accuracy = round(acc, 4), seconds = round(time, 2))
}
for (name in names(sets)) {
  d <- sets[[name]]()
  y <- droplevels(factor(d$y))
  x <- d$x
  keep <- stats::complete.cases(x)
  x <- x[keep, , drop = FALSE]
  y <- y[keep]
  x <- x[, apply(x, 2, stats::sd) > 0, drop = FALSE]
  set.seed(1)
  train <- sample(nrow(x), round(0.7 * nrow(x)))
  xtr <- x[train, ]; ytr <- y[train]; xte <- x[-train, ]; yte <- y[-train]
  n <- length(train)
  cat(sprintf("== %s: n_train = %d, d = %d, %d classes\n", name, n, ncol(x), nlevels(y)))
  # warm-up on a slice (first touch of memory, lazy loading)
  invisible(rff_svm(xtr[1:min(n, 500), ], ytr[1:min(n, 500)], D = 64, seed = 1))
  s <- timed(rff_svm(xtr, ytr, seed = 1))
  add(name, n, "rff_svm (defaults)", mean(predict(s$value, xte) == yte), s$time)
  r <- timed(rff_ridge(xtr, ytr, seed = 1))
  add(name, n, "rff_ridge (defaults)", mean(predict(r$value, xte) == yte), r$time)
  if (has_liblinear && n <= 1e5) {
    # (LiblineaR needs the dense n x D feature matrix in R and copies it: beyond
    # 1e5 rows at D = 1024 that is more memory than the point of the bench)
    # LiblineaR's L2-loss dual solver on bochner's features of the same map
    map <- s$value$map
    xs <- function(x) sweep(sweep(x, 2, s$value$scaling$center), 2, s$value$scaling$scale, "/")
    l <- timed({
      z <- predict(map, xs(xtr))
      LiblineaR::LiblineaR(z, ytr, type = 3, cost = 1, bias = 1)
    })
    pl <- predict(l$value, predict(map, xs(xte)))$predictions
    add(name, n, "LiblineaR on the same features", mean(pl == yte), l$time)
  }
  if (has_kernlab && n <= 50000) {
    k <- timed(kernlab::ksvm(xtr, ytr))
    add(name, n, "kernlab::ksvm (defaults)", mean(kernlab::predict(k$value, xte) == yte), k$time)
  } else if (has_kernlab) {
    add(name, n, "kernlab::ksvm (defaults)", NA, NA)   # n x n kernel: out of reach
  }
  print(do.call(rbind, rows[vapply(rows, function(r) r$set == name, TRUE)]), row.names = FALSE)
}
res <- do.call(rbind, rows)
if (!quick && !nzchar(only)) {
  out <- c("# Kernel machines on real data", "",
           "`Rscript bench/machines.R`: default calls of `rff_svm()` and `rff_ridge()`",
           "(D = 1024, one-vs-one, lambda chosen automatically) against",
           "`kernlab::ksvm()` with its defaults (exact Gaussian C-SVC, cost 1, one-vs-one,",
           "sigma from `sigest`) and LiblineaR's L2-loss SVM on the same random features.",
           "70/30 split with `set.seed(1)`; training time in seconds (elapsed).",
           sprintf("Machine: %s, %d threads, BLAS: %s, %s.",
                   Sys.info()[["nodename"]], threads, extSoftVersion()[["BLAS"]],
                   format(Sys.Date())), "",
           "| set | n train | method | accuracy | seconds |", "|---|---|---|---|---|",
           sprintf("| %s | %d | %s | %s | %s |", res$set, res$n_train, res$method,
                   format(res$accuracy), format(res$seconds)))
  writeLines(out, "bench/machines.md")
}
