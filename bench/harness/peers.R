# The peers: availability (a line in the page's "Skipped" list for each one
# missing), figures of merit, and the peers' fits as functions of a set d
# (list(xtr, ytr, xte, yte)) for bench_fit().

bench_skips <- new.env()   # name -> the line the page prints

bench_skip <- function(what, why) {
  line <- sprintf("%s: %s", what, why)
  if (is.null(bench_skips[[line]])) {
    assign(line, TRUE, envir = bench_skips)
    message("skipped: ", line)
  }
  invisible(FALSE)
}

# TRUE when the package is installed; otherwise FALSE and a skip line.
bench_have <- function(pkg) {
  if (requireNamespace(pkg, quietly = TRUE)) return(TRUE)
  bench_skip(pkg, "not installed; its rows are not measured")
}

# TRUE when /usr/bin/python3 imports scikit-learn; otherwise FALSE and a skip line.
bench_have_sklearn <- local({
  ok <- NULL
  function() {
    if (is.null(ok)) {
      ok <<- file.exists("/usr/bin/python3") &&
        suppressWarnings(system2("/usr/bin/python3", c("-c", shQuote("import sklearn")),
                                 stdout = FALSE, stderr = FALSE)) == 0L
    }
    if (!ok) bench_skip("scikit-learn", "/usr/bin/python3 does not import sklearn; its rows are not measured")
    ok
  }
})

# Figures of merit.
bench_accuracy <- function(pred, y) mean(as.character(pred) == as.character(y))
bench_rmse <- function(pred, y) sqrt(mean((as.numeric(pred) - y)^2))
bench_logloss <- function(p, y) {
  p <- as.matrix(p)[, levels(y), drop = FALSE]
  -mean(log(pmax(p[cbind(seq_along(y), as.integer(y))], 1e-15)))
}
# a reliability table of class probabilities p (one column per level of the
# test classes y): rows binned by the probability of the predicted class, its
# mean (predicted) against the fraction classified correctly (observed)
bench_reliability <- function(p, y) {
  conf <- apply(p, 1L, max)
  right <- colnames(p)[max.col(p, ties.method = "first")] == as.character(y)
  bin <- cut(conf, c(0, 0.5, 0.7, 0.8, 0.9, 0.95, 0.99, 1), include.lowest = TRUE)
  r <- stats::aggregate(data.frame(predicted = conf, observed = right), list(bin = bin), mean)
  r$rows <- as.vector(table(bin)[as.character(r$bin)])
  r
}
# the page section of reliability tables (a named list of bench_reliability(), one
# per set) of the machine 'who'
bench_reliability_md <- function(reliab, who) {
  out <- c(sprintf("## Reliability of %s", who), "",
           "Rows binned by the probability of the predicted class: its mean (predicted)",
           "against the fraction classified correctly (observed).", "")
  for (s in names(reliab)) {
    out <- c(out, paste0("**", s, "**"), "", knitr::kable(reliab[[s]], format = "pipe", digits = 3),
             "")
  }
  out
}
# one row of a classification table (the probability investigations): test
# accuracy, log-loss (prob NULL: none) and seconds of the fit on set `set`
bench_class_row <- function(set, d, method, pred, prob, seconds) {
  data.frame(set = set, n_train = nrow(d$xtr), classes = nlevels(d$ytr), method = method,
             accuracy = round(bench_accuracy(pred, d$yte), 4),
             logloss = if (is.null(prob)) NA_real_ else round(bench_logloss(prob, d$yte), 4),
             seconds = round(seconds, 2))
}
# accuracy (classes) or RMSE (regression) of predictions on the test rows
bench_score_pred <- function(pred, d) {
  if (is.factor(d$ytr)) list(metric = "accuracy", value = bench_accuracy(pred, d$yte))
  else list(metric = "rmse", value = bench_rmse(pred, d$yte))
}
# clustering agreement up to relabelling: the adjusted Rand index
bench_ari <- function(a, b) {
  tab <- table(a, b)
  c2 <- function(v) sum(v * (v - 1) / 2)
  s <- c2(tab); sa <- c2(rowSums(tab)); sb <- c2(colSums(tab)); n <- c2(sum(tab))
  e <- sa * sb / n
  (s - e) / ((sa + sb) / 2 - e)
}

# The peers' kernel machines (d: a split set); predict with bench_peer_predict().
bench_peers <- list(
  ksvm = function(d) kernlab::ksvm(d$xtr, d$ytr),
  ksvm_C10 = function(d) {
    if (is.factor(d$ytr)) kernlab::ksvm(d$xtr, d$ytr, C = 10)
    else kernlab::ksvm(d$xtr, d$ytr, type = "eps-svr", C = 10)
  },
  e1071 = function(d) e1071::svm(d$xtr, d$ytr),
  gausspr = function(d) kernlab::gausspr(d$xtr, d$ytr, variance.model = TRUE),
  # the linear peers on bochner's own random features (the same map): what
  # rff_svm() / rff_ridge() solve, by another solver
  LiblineaR_rff = function(d) {
    map <- bench_rff_map(d)
    z <- stats::predict(map, scale(d$xtr))
    list(map = map, fit = LiblineaR::LiblineaR(z, d$ytr, type = 2, cost = 1))
  },
  glmnet_rff = function(d) {
    map <- bench_rff_map(d)
    z <- stats::predict(map, scale(d$xtr))
    fam <- if (is.factor(d$ytr)) (if (nlevels(d$ytr) > 2) "multinomial" else "binomial") else "gaussian"
    list(map = map, fit = glmnet::cv.glmnet(z, d$ytr, alpha = 0, family = fam, nfolds = 5))
  }
)
bench_peer_pkg <- c(ksvm = "kernlab", ksvm_C10 = "kernlab", e1071 = "e1071",
                    gausspr = "kernlab", LiblineaR_rff = "LiblineaR", glmnet_rff = "glmnet",
                    kkmeans = "kernlab", kmmd = "kernlab", kpca = "kernlab",
                    dhsic = "dHSIC", dcor = "energy", GauPro = "GauPro")

# The Gaussian map of the linear peers: D = 1024, median-heuristic sigma on
# the standardised inputs (the median distance of up to 1000 rows), as rff_svm()'s default.
bench_rff_map <- function(d, D = 1024L) {
  x <- scale(d$xtr)
  set.seed(1)
  sigma <- stats::median(stats::dist(x[sample(nrow(x), min(1000L, nrow(x))), , drop = FALSE]))
  bochner::random_features(x, bochner::gaussian_kernel(sigma), D = D, seed = 1)
}

bench_peer_predict <- function(method, obj, d) {
  if (method %in% c("LiblineaR_rff", "glmnet_rff")) {
    ctr <- attr(scale(d$xtr), "scaled:center"); sc <- attr(scale(d$xtr), "scaled:scale")
    z <- stats::predict(obj$map, scale(d$xte, ctr, sc))
    if (method == "LiblineaR_rff") return(stats::predict(obj$fit, z)$predictions)
    p <- stats::predict(obj$fit, z, s = "lambda.min", type = if (is.factor(d$ytr)) "class" else "response")
    return(if (is.factor(d$ytr)) p[, 1] else as.numeric(p))
  }
  if (startsWith(method, "ksvm") || method == "gausspr") return(kernlab::predict(obj, d$xte))
  stats::predict(obj, d$xte)
}

# scikit-learn in a fresh /usr/bin/python3 (bench/harness/sklearn_fit.py):
# METHOD on the set d written as CSV; returns a row as bench_fit() does.
# Methods: nystroem (Nystroem + RidgeClassifier / Ridge), svc (SVC / SVR C = 10),
# rbf_sampler (RBFSampler(n_components = D).fit_transform: the transform alone).
bench_sklearn <- function(method, d, threads = 1L, blas = "default", components = 1000L) {
  if (!bench_have_sklearn() || !is.null(.bench$render)) return(NULL)
  dir <- tempfile("bench-sk-"); dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  code <- function(y) if (is.factor(y)) as.integer(y) - 1L else y
  utils::write.table(cbind(d$xtr, code(d$ytr)), file.path(dir, "train.csv"), sep = ",",
                     row.names = FALSE, col.names = FALSE)
  if (!is.null(d$xte)) utils::write.table(cbind(d$xte, code(d$yte)), file.path(dir, "test.csv"),
                                          sep = ",", row.names = FALSE, col.names = FALSE)
  env <- c(sprintf("OPENBLAS_NUM_THREADS=%d", threads), sprintf("OMP_NUM_THREADS=%d", threads))
  if (blas != "default") {
    dirs <- suppressWarnings(system2("bash", c(".ci/blas-dir", "--dirs", blas, file.path(tempdir(), "blas")),
                                     stdout = TRUE, stderr = FALSE))[1L]
    env <- c(env, sprintf("LD_LIBRARY_PATH=%s", dirs))
  }
  out <- suppressWarnings(system2("/usr/bin/python3",
    c("bench/harness/sklearn_fit.py", dir, method,
      if (is.factor(d$ytr)) "classification" else "regression", components),
    env = env, stdout = TRUE, stderr = FALSE))
  hit <- grep("^RESULT", out, value = TRUE)
  if (length(hit) == 0L) {
    return(data.frame(elapsed = NA_real_, cpu = NA_real_, peak_mb = NA_real_, blas = blas,
                      threads = threads, status = "failed", metric = NA_character_, value = NA_real_))
  }
  v <- strsplit(hit[1L], " ")[[1L]]
  data.frame(elapsed = as.numeric(v[3L]), cpu = as.numeric(v[4L]), peak_mb = as.numeric(v[5L]),
             blas = v[6L], threads = threads, status = "ok",
             metric = if (method == "rbf_sampler") "none" else if (is.factor(d$ytr)) "accuracy" else "rmse",
             value = as.numeric(v[2L]))
}
