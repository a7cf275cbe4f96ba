# falkon(tune = ) against today's default (tune = "none"): test error and
# time of tune = "none" and "auto" (= "ard" for the Gaussian kernel: one
# length scale, then one per input, kept if better on held-out rows) on sets
# with inputs of different relevance (issue 39).  Writes falkon-tune.md and
# falkon-tune.csv beside this file.
#   Friedman 1 (mlbench.friedman1, sd 1: 5 of its 10 inputs are noise;
#     4000 training, 4000 test rows, five draws (seeds 1-5); the best RMSE is 1)
#   diamonds (ggplot2; log price on 9 predictors, 3 factors one-hot: 23
#     columns; 15 000 training, 10 000 test rows, bench_set())
#   Satellite, spam, Ionosphere (mlbench; the issue's example), Vehicle,
#     MASS::mcycle, Sonar, Glass, BostonHousing: five 70 / 30 splits each
#     (seeds 1-5; the first is bench_set()'s)
#   Vowel, DNA, Shuttle, Letter: bench_set()'s split of each (the machine
#     suite's)
#   synth_1e5 (bench_synth_reg(): n = 10^5, d = 20, 10 inputs unused): the
#     issue's size for the learning's time
# Every fit is falkon(xtr, ytr, seed = 1, tune = ...) with the package's
# threads; CPU is user + system seconds of the R process (both cores), with
# the load average before each fit.  TUNES (comma-separated, default
# "none,auto") may add "iso", "ard" and "rff_gp" (rff_gp(ard = TRUE), the
# package's other learner of ARD scales, on every regression set).
# TUNES=auto,gcv compares the tuning's held-out objective with GCV, and
# TUNES=auto,ml with the Nystrom marginal likelihood (falkon_control(
# tune_objective = "heldout" | "gcv" | "ml"), tune = "auto" both); they
# write falkon-gcv.csv and .md (falkon-ml.csv and .md) instead.
# Run: R_LIBS=<lib with bochner> Rscript bench/investigations/falkon-tune.R [sets...]
#
# TUNES=issue fits the default of the package as issue 39 found it (commit
# f1423a2: sigest bandwidth, lambda on a held-out slice whatever the rows, no
# tune argument) on the same splits and writes falkon-tune-issue.csv; the
# page then also compares "auto" with that default.  It needs a library
# holding that version:
#   git worktree add /tmp/f1423a2 f1423a2
#   R CMD INSTALL --library=<old lib> /tmp/f1423a2
#   TUNES=issue R_LIBS=<old lib> Rscript bench/investigations/falkon-tune.R
#   RENDER_ONLY=1 R_LIBS=<lib> Rscript bench/investigations/falkon-tune.R
suppressPackageStartupMessages({
  library(bochner)
  library(mlbench)
})
source("bench/harness/data.R")
bench_have <- function(pkg) requireNamespace(pkg, quietly = TRUE)

splits5 <- function(x, y) lapply(1:5, function(s) bench_split(x, y, seed = s))
sets <- list(
  friedman1 = function() bench_friedman1_pairs(1:5),
  diamonds = function() list(bench_set("diamonds")),
  Satellite = function() {
    v <- bench_mlbench("Satellite")
    splits5(as.matrix(v[, -37]), v$classes)
  },
  spam = function() {
    e <- new.env()
    utils::data(spam, package = "kernlab", envir = e)
    splits5(as.matrix(e$spam[, -58]), e$spam$type)
  },
  Ionosphere = function() {
    v <- bench_mlbench("Ionosphere")
    splits5(bench_numeric(v[, -35]), v$Class)
  },
  Vehicle = function() { v <- bench_mlbench("Vehicle"); splits5(as.matrix(v[, -19]), v$Class) },
  mcycle = function() splits5(cbind(times = MASS::mcycle$times), MASS::mcycle$accel),
  # three more small sets (leave-one-out fits): few rows per input (Sonar 2.4,
  # Glass 17) and a regression with a factor (BostonHousing's chas)
  Sonar = function() { v <- bench_mlbench("Sonar"); splits5(as.matrix(v[, -61]), v$Class) },
  Glass = function() { v <- bench_mlbench("Glass"); splits5(as.matrix(v[, -10]), v$Type) },
  BostonHousing = function() {
    v <- bench_mlbench("BostonHousing")
    splits5(bench_numeric(v[, -14]), v$medv)
  },
  # the machine suite's splits of the bench sets not above (one each)
  Vowel = function() list(bench_set("Vowel")),
  DNA = function() list(bench_set("DNA")),
  Shuttle = function() list(bench_set("Shuttle")),
  Letter = function() list(bench_set("Letter")),
  # the issue's size for the learning's time: n = 10^5, d = 20 (10 inputs
  # unused), noise sd 0.5 (the best RMSE is 0.5)
  synth_1e5 = function() {
    d <- bench_synth_reg(1.2e5)
    list(bench_split(d$x, d$y, n_train = 1e5, n_test = 2e4))
  }
)

timed <- function(expr) {
  t0 <- proc.time()
  value <- force(expr)
  t <- proc.time() - t0
  list(value = value, cpu = unname(t[1] + t[2]), elapsed = unname(t[3]))
}
# the CPU as the harness names it (lscpu's model name, family and model)
source("bench/harness/machine.R")
cpu_name <- function() bench_lscpu()$cpu
# a tuning report's scores: 'what' (check: the check fifth's held-out MSE of
# the candidates; heldout: the fit's held-out loss of the two judged fits),
# the least of the entries named 'which' (NA where absent)
tune_field <- function(fit, what, which) {
  v <- fit$tuning[[what]]
  v <- v[intersect(which, names(v))]
  if (length(v)) min(v) else NA_real_
}
load_now <- function() as.numeric(scan("/proc/loadavg", what = "", n = 1, quiet = TRUE))
# RMSE for numbers, error rate in percent for classes
test_error <- function(pred, y) {
  if (is.factor(y)) 100 * mean(pred != y) else sqrt(mean((pred - y)^2))
}

args <- commandArgs(TRUE)
which_sets <- if (length(args)) args else names(sets)
tunes <- strsplit(Sys.getenv("TUNES", "none,auto"), ",")[[1]]
out_dir <- "bench/investigations"
source(file.path(out_dir, "falkon-tune-page.R"))
# RENDER_ONLY=1: the page again from the rows of the last run (its CSV)
# falkon-tune-issue.csv (TUNES=issue): the issue-time default's rows
issue_csv <- file.path(out_dir, "falkon-tune-issue.csv")
issue_rows <- function() if (file.exists(issue_csv)) utils::read.csv(issue_csv)
# TUNES=auto,gcv or auto,ml: the held-out objective against that one
obj_run <- intersect(tunes, c("gcv", "ml"))[1L]
obj_file <- function(ext) file.path(out_dir, paste0("falkon-", obj_run, ".", ext))
# the CSV does not record the CPU: a page redrawn keeps its "Machine:" line
# (the machine of the run), not this one's
rerender <- function(lines, file) {
  old <- if (file.exists(file)) grep("^Machine: ", readLines(file), value = TRUE)[1L]
  if (length(old) && !is.na(old)) lines[grepl("^Machine: ", lines)][1L] <- old
  writeLines(lines, file)
  quit(save = "no")
}
if (nzchar(Sys.getenv("RENDER_ONLY")) && !is.na(obj_run)) {
  res <- utils::read.csv(obj_file("csv"))
  rerender(falkon_objective_page(res, unique(res$set), obj_run), obj_file("md"))
}
if (nzchar(Sys.getenv("RENDER_ONLY"))) {
  res <- utils::read.csv(file.path(out_dir, "falkon-tune.csv"))
  rerender(falkon_tune_page(res, unique(res$set), issue_rows()),
           file.path(out_dir, "falkon-tune.md"))
}
gp_sets <- c("friedman1", "diamonds", "mcycle", "BostonHousing", "synth_1e5")
rows <- list()
for (s in which_sets) {
  splits <- sets[[s]]()
  for (i in seq_along(splits)) {
    d <- splits[[i]]
    for (tune in setdiff(tunes, "rff_gp")) {
      ld <- load_now()
      # the issue-time package has no tune argument: its default is the call without it
      # beside "gcv" or "ml", "auto" is the held-out objective (the default
      # for classes, no longer for regressions)
      objective <- if (tune %in% c("gcv", "ml")) tune
                   else if (tune == "auto" && !is.na(obj_run)) "heldout"
      f <- timed(if (tune == "issue") falkon(d$xtr, d$ytr, seed = 1)
                 else if (!is.null(objective)) falkon(d$xtr, d$ytr, seed = 1, tune = "auto",
                                                      control = list(tune_objective = objective))
                 else falkon(d$xtr, d$ytr, seed = 1, tune = tune))
      fit <- f$value
      sg <- fit$kernel$sigma
      r <- data.frame(set = s, split = i, n_train = nrow(d$xtr), d = ncol(d$xtr),
                      task = if (is.factor(d$ytr)) "class" else "reg", tune = tune,
                      error = test_error(predict(fit, d$xte), d$yte),
                      cpu = f$cpu, elapsed = f$elapsed, load = ld, m = fit$m,
                      lambda = fit$lambda, iter = fit$iter,
                      sigma_min = min(sg), sigma_max = max(sg),
                      evals = if (is.null(fit$tuning)) NA else fit$tuning$evaluations,
                      chosen = if (is.null(fit$tuning)) "" else fit$tuning$chosen,
                      check_rule = tune_field(fit, "check", "rule"),
                      check_learned = tune_field(fit, "check", c("ard", "iso")),
                      heldout_rule = tune_field(fit, "heldout", "rule"),
                      heldout_learned = tune_field(fit, "heldout", "learned"))
      rows[[length(rows) + 1L]] <- r
      print(r, digits = 4)
    }
    # the package's other learner of ARD scales (marginal likelihood on
    # random features), on the regression sets
    if ("rff_gp" %in% tunes && s %in% gp_sets) {
      ld <- load_now()
      f <- timed(rff_gp(d$xtr, d$ytr, ard = ncol(d$xtr) > 1L, seed = 1))
      sg <- f$value$hyper$lengthscale
      r <- data.frame(set = s, split = i, n_train = nrow(d$xtr), d = ncol(d$xtr), task = "reg",
                      tune = "rff_gp", error = test_error(predict(f$value, d$xte), d$yte),
                      cpu = f$cpu, elapsed = f$elapsed, load = ld, m = f$value$D, lambda = NA,
                      iter = NA, sigma_min = min(sg), sigma_max = max(sg), evals = NA,
                      chosen = "", check_rule = NA, check_learned = NA, heldout_rule = NA,
                      heldout_learned = NA)
      rows[[length(rows) + 1L]] <- r
      print(r, digits = 4)
    }
  }
  saveRDS(do.call(rbind, rows), file.path(tempdir(), "falkon-tune-partial.rds"))
}
res <- do.call(rbind, rows)
if (identical(tunes, "issue")) {
  utils::write.csv(res, issue_csv, row.names = FALSE)
  quit(save = "no")
}
if (!is.na(obj_run)) {
  utils::write.csv(res, obj_file("csv"), row.names = FALSE)
  writeLines(falkon_objective_page(res, which_sets, obj_run), obj_file("md"))
  quit(save = "no")
}
utils::write.csv(res, file.path(out_dir, "falkon-tune.csv"), row.names = FALSE)
writeLines(falkon_tune_page(res, which_sets, issue_rows()),
           file.path(out_dir, "falkon-tune.md"))
