# falkon() in single precision against double on the bench sets of the old bench/falkon.R
# (the same splits, seed 1; the data from bench/harness/data.R): test accuracy (classes) or RMSE (regression), time, the number of
# centres and whether K_nm was cached, each set fitted with falkon_control(precision =
# "double") and "single" alternately in one process (a warm-up fit first), on the default
# settings otherwise.  The evidence behind falkon_control(precision = "auto").
#
# With --jitter=1e-13,1e-7 each set is also fitted in single precision with the centres'
# factor's jitter for float (falkon_eps_single in R/fit-falkon-solve.R, where the passes
# multiply in float at a candidate lambda below 1e-7) set to each value: the evidence for
# its choice.  --precision=auto adds the default fit (auto's choice) to the table.
#
# Usage, from the package root after installing the package:
#     Rscript bench/investigations/falkon-precision.R [--sets=Vehicle,Shuttle] [--threads=2]
#         [--jitter=1e-13,1e-7]
# prints a markdown table (bench/investigations/falkon-precision.md quotes it).
source("bench/harness/report.R")    # bench_arg()
source("bench/harness/machine.R")   # bench_lscpu(), bench_load()
opt <- function(name, default) bench_arg(name, default, split = TRUE)
suppressPackageStartupMessages(library(bochner))
numeric_frame <- function(df) as.matrix(data.frame(lapply(df, function(v) as.numeric(as.character(v)))))
split_set <- function(x, y, frac = 0.7, n_train = NULL, n_test = NULL) {   # bench/falkon.R's
  keep <- stats::complete.cases(x)
  x <- x[keep, , drop = FALSE]
  y <- y[keep]
  x <- x[, apply(x, 2, stats::sd) > 0, drop = FALSE]
  if (is.factor(y)) y <- droplevels(y)
  set.seed(1)
  idx <- sample(nrow(x))
  ntr <- if (is.null(n_train)) round(frac * nrow(x)) else n_train
  tr <- idx[seq_len(ntr)]
  te <- idx[-seq_len(ntr)]
  if (!is.null(n_test)) te <- te[seq_len(min(n_test, length(te)))]
  list(xtr = x[tr, , drop = FALSE], ytr = y[tr], xte = x[te, , drop = FALSE], yte = y[te])
}
mlb <- function(name) {
  e <- new.env()
  utils::data(list = name, package = "mlbench", envir = e, lib.loc = "/usr/lib/R/site-library")
  e[[name]]
}
sets <- list(
  Vehicle = function() { v <- mlb("Vehicle"); split_set(as.matrix(v[, -19]), v$Class) },
  Vowel = function() { v <- mlb("Vowel"); split_set(numeric_frame(v[, 2:10]), v$Class) },
  DNA = function() { v <- mlb("DNA"); split_set(numeric_frame(v[, -181]), v$Class) },
  Satellite = function() { v <- mlb("Satellite"); split_set(as.matrix(v[, -37]), v$classes) },
  spam = function() {
    e <- new.env(); utils::data(spam, package = "kernlab", envir = e)
    split_set(as.matrix(e$spam[, -58]), e$spam$type)
  },
  Shuttle = function() { v <- mlb("Shuttle"); split_set(as.matrix(v[, -10]), v$Class) },
  Letter = function() {
    v <- mlb("LetterRecognition"); split_set(as.matrix(v[, -1]), v$lettr)
  },
  diamonds = function() {
    source("bench/harness/data.R", local = TRUE)
    d <- bench_diamonds()
    split_set(d$x, d$y, n_train = 15000, n_test = 10000)
  },
  synth_class_1e5 = function() {
    source("bench/harness/data.R", local = TRUE)
    d <- bench_synth_class()
    split_set(d$x, d$y, n_train = 1e5)
  }
)
which_sets <- opt("sets", names(sets))
threads <- as.integer(opt("threads", "2"))
jitters <- as.numeric(opt("jitter", character()))
default_jitter <- bochner:::falkon_eps_single
set_jitter <- function(e) utils::assignInNamespace("falkon_eps_single", e, "bochner")
cat(sprintf("%s; load averages at the start: %s\n", bench_lscpu()$cpu, bench_load()))
rows <- list()
for (nm in which_sets) {
  d <- sets[[nm]]()
  invisible(falkon(d$xtr[1:300, ], if (is.factor(d$ytr)) droplevels(d$ytr[1:300]) else d$ytr[1:300]))
  for (p in c("double", "single", "auto", if (length(jitters)) paste0("single@", jitters))) {
    gc()
    set.seed(1)
    set_jitter(if (grepl("@", p)) as.numeric(sub(".*@", "", p)) else default_jitter)
    t <- system.time(fit <- falkon(d$xtr, d$ytr, nthreads = threads,
                                   control = falkon_control(precision = sub("@.*", "", p))))
    pr <- predict(fit, d$xte)
    score <- if (is.factor(d$ytr)) mean(as.character(pr) == as.character(d$yte))
             else sqrt(mean((pr - d$yte)^2))
    rows[[length(rows) + 1L]] <- data.frame(set = nm, n = nrow(d$xtr), precision = p,
      metric = if (is.factor(d$ytr)) "accuracy" else "RMSE", score = score,
      seconds = t[["elapsed"]], cpu = t[["user.self"]] + t[["sys.self"]],
      m = nrow(fit$centres), lambda = fit$lambda,
      chose = if (is.null(fit$precision)) NA_character_ else fit$precision)
    cat(sprintf("%s %s: %.5f in %.2f s (CPU %.2f), m = %d, lambda = %g\n", nm, p, score,
                t[["elapsed"]], t[["user.self"]] + t[["sys.self"]], nrow(fit$centres), fit$lambda))
  }
}
res <- do.call(rbind, rows)
cat(sprintf("load averages at the end: %s\n", bench_load()))
variants <- unique(res$precision)
cat("\nEach cell: score (change against double: points of accuracy or % of RMSE), elapsed s, centres kept, lambda",
    "(and for auto the precision it chose).\n")
cat("\n| set | n train | metric | ", paste(variants, collapse = " | "), " |\n|---|---:|---|",
    paste(rep("---:", length(variants)), collapse = "|"), "|\n", sep = "")
for (nm in unique(res$set)) {
  a <- res[res$set == nm & res$precision == "double", ]
  cells <- vapply(variants, function(v) {
    b <- res[res$set == nm & res$precision == v, ]
    ch <- if (a$metric == "accuracy") sprintf("%+.2f", 100 * (b$score - a$score))
          else sprintf("%+.2f %%", 100 * (b$score / a$score - 1))
    sprintf("%.4f (%s), %.2f s, %d, %g%s", b$score, ch, b$seconds, b$m, b$lambda,
            if (v == "auto") paste0(", ", b$chose) else "")
  }, "")
  cat(sprintf("| %s | %d | %s | %s |\n", nm, a$n, a$metric, paste(cells, collapse = " | ")))
}
