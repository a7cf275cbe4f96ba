# Suite gp: rff_gp() (random features, and its exact method) against
# kernlab::gausspr and GauPro: test RMSE, 95 % prediction-interval coverage
# and fit time on BostonHousing, quakes and Friedman 1 (two 80/20 splits,
# inputs standardised on the training rows), and a large n with fixed
# hyperparameters.  Ported from bench/gp.R's "accuracy" and "large" sections;
# its convergence, hyperparameter and co2 studies are investigations
# (bench/investigations/gp.R).  Each fit in a fresh process.
source("bench/harness/harness.R")
# repetitions: the 80/20 splits (accuracy) and the fits at large n
o <- bench_start("gp", "Gaussian processes: rff_gp() against kernlab::gausspr and GauPro",
                 reps = c(full = 2L, quick = 1L, tiny = 1L))

raw <- list(
  BostonHousing = function() {
    if (!bench_have("mlbench")) return(NULL)
    b <- bench_mlbench("BostonHousing")
    list(x = bench_numeric(b[, -14]), y = b$medv)
  },
  quakes = function() list(x = as.matrix(datasets::quakes[, c("lat", "long")]), y = datasets::quakes$depth),
  friedman1 = function() bench_friedman1(bench_size(1000L, 500L, 200L), sd = 1, seed = 27L))
sets <- bench_size(names(raw), names(raw), "quakes")

interval <- function(p, d) {
  list(metric = "rmse", value = bench_rmse(p$fit, d$yte),
       coverage = mean(d$yte >= p$lwr & d$yte <= p$upr))
}
methods <- list(
  rff_gp = function(d) rff_gp(d$xtr, d$ytr, D = 256, seed = 1),
  rff_gp_ard = function(d) rff_gp(d$xtr, d$ytr, D = 256, ard = TRUE, seed = 1),
  exact = function(d) rff_gp(d$xtr, d$ytr, method = "exact"),
  gausspr = function(d) kernlab::gausspr(d$xtr, d$ytr, kernel = "rbfdot", variance.model = TRUE),
  GauPro = function(d) GauPro::GauPro_kernel_model$new(d$xtr, d$ytr, kernel = GauPro::Gaussian$new(D = ncol(d$xtr)),
                                                       nug.est = TRUE, verbose = 0))
pkg <- c(gausspr = "kernlab", GauPro = "GauPro")
score <- function(obj, d) {
  if (inherits(obj, "gausspr")) {
    m <- as.vector(kernlab::predict(obj, d$xte))
    s <- as.vector(kernlab::predict(obj, d$xte, type = "sdeviation"))
    return(interval(list(fit = m, lwr = m - 1.96 * s, upr = m + 1.96 * s), d))
  }
  if (inherits(obj, "R6")) {
    p <- obj$pred(d$xte, se.fit = TRUE, mean_dist = FALSE)
    return(interval(list(fit = p$mean, lwr = p$mean - 1.96 * p$se, upr = p$mean + 1.96 * p$se), d))
  }
  p <- stats::predict(obj, d$xte, interval = "prediction")
  interval(list(fit = p[, 1], lwr = p[, 2], upr = p[, 3]), d)
}
threads <- 1L
for (s in sets) {
  d0 <- raw[[s]]()
  if (is.null(d0)) next
  n <- nrow(d0$x)
  for (split in seq_len(o$reps)) {
    set.seed(100 + split)
    te <- sample(n, round(0.2 * n))
    sc <- scale(d0$x[-te, , drop = FALSE])
    xs <- scale(d0$x, attr(sc, "scaled:center"), attr(sc, "scaled:scale"))
    f <- bench_data_file(list(xtr = xs[-te, , drop = FALSE], ytr = d0$y[-te],
                              xte = xs[te, , drop = FALSE], yte = d0$y[te]))
    case <- sprintf("%s (n = %d, d = %d)", s, n - length(te), ncol(d0$x))
    for (m in names(methods)) {
      if (!is.na(pkg[m]) && !bench_have(pkg[[m]])) next
      if (o$tiny && m %in% c("GauPro", "rff_gp_ard")) next
      bench_add("accuracy", case, m, if (is.na(pkg[m])) "bochner" else "peer",
                bench_fit(methods[[m]], f, score, threads = threads,
                          packages = if (m == "gausspr") "kernlab"), split)
    }
    unlink(f)
  }
}

# A large n with fixed hyperparameters (Friedman 1, d = 10): the fit is one
# pass over the rows; peak memory is the D x D system, not n.
n_big <- bench_size(1e6, 1e5, 1e4)
big <- bench_friedman1(n_big, sd = 1, seed = 3L)
f <- bench_data_file(list(xtr = big$x, ytr = big$y))
rm(big)
for (D in bench_size(c(512L, 1024L), 512L, 128L)) {
  for (th in bench_size(c(1L, 2L), 2L, 1L)) {
    for (r in seq_len(o$reps)) {
      bench_add("large n, fixed hyperparameters", sprintf("Friedman 1, n = %.0e, D = %d", n_big, D),
                "rff_gp_fixed", "bochner",
                bench_fit(bench_job(function(d, a) {
                  rff_gp(d$xtr, d$ytr, kernel = gaussian_kernel(2), D = a$D, optimize = FALSE,
                         noise = 1, seed = 1)
                }, D = D), f, function(obj, d) list(metric = "train_rmse", value = sqrt(mean(obj$residuals^2))),
                threads = th), r)
    }
  }
}
unlink(f)

hl <- list()
for (s in sets) {
  case <- unique(Filter(Negate(is.na), vapply(.bench$rows, function(r)
    if (startsWith(r$case, paste0(s, " ("))) r$case else NA_character_, "")))[1L]
  if (is.na(case)) next
  hl <- c(hl, list(
    list(figure = sprintf("%s: rff_gp() seconds", case), question = "accuracy", case = case, ours = "rff_gp", peer = "gausspr"),
    list(figure = sprintf("%s: rff_gp() RMSE", case), question = "accuracy", case = case, ours = "rff_gp", peer = "gausspr", measure = "value"),
    list(figure = sprintf("%s: exact rff_gp() seconds", case), question = "accuracy", case = case, ours = "exact", peer = "GauPro")))
}
bench_finish(headline = hl, about = c(
  "Accuracy: 80/20 splits by `set.seed(100 + split)`, inputs standardised on the training rows;",
  "`rff_gp(D = 256)` (and `ard = TRUE`), `rff_gp(method = \"exact\")`, `kernlab::gausspr(variance.model = TRUE)`,",
  "`GauPro_kernel_model` (Gaussian kernel, nugget estimated); 95 % intervals: `coverage` in the `more` column.",
  "Large n: `rff_gp(x, y, gaussian_kernel(2), D, optimize = FALSE, noise = 1)` on Friedman 1, d = 10."))
