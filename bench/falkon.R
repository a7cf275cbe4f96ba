# falkon() with its defaults against the exact kernel machines (kernlab::ksvm
# with its defaults and with C = 10, e1071::svm), bochner's rff_svm() and
# rff_ridge(), and scikit-learn's Nystroem + RidgeClassifier and SVC, on the
# same splits (fixed by seed), under the reference BLAS and OpenBLAS.
#
# Every fit runs in a fresh Rscript (or python) process, so its peak memory
# is the process's high-water mark (VmHWM / ru_maxrss) beyond what the
# process held once its data were read.  Times are elapsed seconds of the
# training call only.  Results accumulate in bench/falkon-results.csv (a
# run replaces the rows of the sets, BLAS and threads it ran) and
# bench/falkon.md is rewritten from that file after every run, so the script
# runs in pieces.  From the package root, after installing the package:
#
#   Rscript bench/falkon.R                     default sets, both BLAS, 1 and 2 threads
#   Rscript bench/falkon.R --sets=Vehicle,spam --blas=reference --threads=2
#   Rscript bench/falkon.R --sets=synth_1e6    the 10^6-row set (minutes)
#   Rscript bench/falkon.R --peers=none        bochner's fits only (keep peers' rows)
#   Rscript bench/falkon.R --report            rewrite falkon.md from the csv
#
# Sets: Vehicle, Vowel, DNA, Satellite, Shuttle (mlbench), spam (kernlab),
# synth_class_1e5 (10^5 training rows, Bayes accuracy 0.90 exactly),
# diamonds (ggplot2; regression of log price on 9 predictors, 3 of them
# factors; 15 000 training rows), synth_1e6 (regression, 10^6 rows, d = 20,
# falkon with m = 10^4 beside rff_ridge with D = 1024; not in the default run).
args <- commandArgs(trailingOnly = TRUE)

# ---------------------------------------------------------------------------
# One fit in this (fresh) process: --fit DATA.rds METHOD OUT.rds
vm_hwm_mb <- function() {
  s <- readLines("/proc/self/status")
  as.numeric(gsub("[^0-9]", "", grep("^VmHWM", s, value = TRUE))) / 1024
}

log_loss <- function(p, y) {
  p <- as.matrix(p)
  p <- p[, levels(y), drop = FALSE]
  -mean(log(pmax(p[cbind(seq_along(y), as.integer(y))], 1e-15)))
}

fit_methods <- list(
  falkon = function(d) bochner::falkon(d$xtr, d$ytr),
  falkon_m1e4 = function(d) bochner::falkon(d$xtr, d$ytr, centers = 1e4),
  falkon_logistic = function(d) bochner::falkon(d$xtr, d$ytr, loss = "logistic"),
  rff_svm = function(d) bochner::rff_svm(d$xtr, d$ytr),
  rff_svm_prob = function(d) bochner::rff_svm(d$xtr, d$ytr, probability = TRUE),
  rff_ridge = function(d) bochner::rff_ridge(d$xtr, d$ytr),
  ksvm = function(d) kernlab::ksvm(d$xtr, d$ytr),
  ksvm_C10 = function(d) {
    if (is.factor(d$ytr)) kernlab::ksvm(d$xtr, d$ytr, C = 10)
    else kernlab::ksvm(d$xtr, d$ytr, type = "eps-svr", C = 10)
  },
  ksvm_prob = function(d) kernlab::ksvm(d$xtr, d$ytr, prob.model = TRUE),
  e1071 = function(d) e1071::svm(d$xtr, d$ytr)
)

fit_predict <- function(method, fit, d) {
  cls <- is.factor(d$ytr)
  if (method %in% c("ksvm", "ksvm_C10", "ksvm_prob")) {
    pred <- kernlab::predict(fit, d$xte)
    prob <- if (method == "ksvm_prob") kernlab::predict(fit, d$xte, type = "probabilities")
  } else if (method == "e1071") {
    pred <- stats::predict(fit, d$xte)
    prob <- NULL
  } else if (method %in% c("falkon_logistic", "rff_svm_prob")) {
    pred <- stats::predict(fit, d$xte)
    prob <- stats::predict(fit, d$xte, type = "prob")
  } else {
    pred <- stats::predict(fit, d$xte)
    prob <- NULL
  }
  if (cls) {
    list(value = mean(as.character(pred) == as.character(d$yte)),
         logloss = if (is.null(prob)) NA_real_ else log_loss(prob, d$yte))
  } else {
    list(value = sqrt(mean((as.numeric(pred) - d$yte)^2)), logloss = NA_real_)
  }
}

# What the fit chose, for the notes column (falkon: centres, lambda, iterations).
fit_note <- function(method, fit) {
  if (!startsWith(method, "falkon")) return("")
  pick <- function(...) for (nm in c(...)) if (!is.null(fit[[nm]])) return(fit[[nm]])
  m <- pick("m", "n_centers")
  if (is.null(m) && is.matrix(fit$centers)) m <- nrow(fit$centers)
  lam <- pick("lambda")
  it <- pick("iterations", "iter")
  sig <- if (!is.null(fit$kernel$sigma)) fit$kernel$sigma
  paste(c(if (!is.null(m)) sprintf("m = %d", as.integer(m[1])),
          if (is.numeric(lam)) sprintf("lambda = %.2g", lam[1]),
          if (!is.null(it)) sprintf("t = %s", paste(it, collapse = "/")),
          if (is.numeric(sig)) sprintf("sigma = %.3g", sig[1])), collapse = ", ")
}

if (length(args) >= 1L && args[1L] == "--fit") {
  suppressPackageStartupMessages({
    library(bochner)
    if (startsWith(args[3L], "ksvm")) library(kernlab)
  })
  options(bochner.threads = as.integer(Sys.getenv("OMP_NUM_THREADS", "1")))
  d <- readRDS(args[2L])
  method <- args[3L]
  fitter <- fit_methods[[method]]
  # warm-up on a slice: lazy loading and first touch out of the timing
  w <- min(300L, nrow(d$xtr))
  small <- d
  small$xtr <- d$xtr[seq_len(w), , drop = FALSE]
  small$ytr <- d$ytr[seq_len(w)]
  if (is.factor(small$ytr)) small$ytr <- droplevels(small$ytr)
  if (!is.factor(small$ytr) || nlevels(small$ytr) > 1L) invisible(try(fitter(small), silent = TRUE))
  gc()
  base <- vm_hwm_mb()
  set.seed(1)
  secs <- system.time(fit <- fitter(d))[["elapsed"]]
  peak <- vm_hwm_mb() - base
  r <- fit_predict(method, fit, d)
  saveRDS(data.frame(value = r$value, logloss = r$logloss, seconds = secs, peak_mb = peak,
                     note = fit_note(method, fit), stringsAsFactors = FALSE), args[4L])
  quit(save = "no")
}

# ---------------------------------------------------------------------------
# The driver.
opt <- function(name, default) {
  hit <- grep(paste0("^--", name, "="), args, value = TRUE)
  if (length(hit) == 0L) return(default)
  strsplit(sub(paste0("^--", name, "="), "", hit[1L]), ",")[[1L]]
}
# --results=FILE: another results file (for runs side by side); the report
# reads every bench/falkon-results*.csv
results_csv <- opt("results", "bench/falkon-results.csv")
md_file <- "bench/falkon.md"
if (!file.exists("DESCRIPTION") || !dir.exists("bench")) stop("run from the package root")

numeric_frame <- function(df) {
  as.matrix(data.frame(lapply(df, function(v) as.numeric(as.character(v)))))
}
split_set <- function(x, y, frac = 0.7, n_train = NULL, n_test = NULL) {
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
  utils::data(list = name, package = "mlbench", envir = e)
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
  synth_class_1e5 = function() {
    source("bench/falkon-synth.R", local = TRUE)
    d <- falkon_synth_class_xy()
    split_set(d$x, d$y, n_train = 1e5)
  },
  diamonds = function() {
    source("bench/falkon-diamonds.R", local = TRUE)
    d <- falkon_diamonds_xy()
    split_set(d$x, d$y, n_train = 15000, n_test = 10000)
  },
  synth_1e6 = function() {
    # regression with Gaussian noise of sd 0.5: the best possible RMSE is 0.5
    set.seed(6)
    n <- 1.1e6
    d <- 20
    x <- matrix(stats::rnorm(n * d), n, d)
    f <- sin(x[, 1]) + cos(x[, 2]) + 0.5 * x[, 3] * x[, 4] + tanh(x[, 5] + x[, 6]) +
      0.3 * rowSums(x[, 7:10])
    y <- f + 0.5 * stats::rnorm(n)
    list(xtr = x[1:1e6, ], ytr = y[1:1e6], xte = x[-(1:1e6), ], yte = y[-(1:1e6)])
  }
)
# which peers run where (the exact solvers are out of reach on the largest sets)
peers_for <- function(name, d) {
  n <- nrow(d$xtr)
  cls <- is.factor(d$ytr)
  if (name == "synth_1e6") return(character())
  if (name == "synth_class_1e5") return(c("e1071", "sk_svc", "sk_nystroem"))
  out <- c("ksvm", "ksvm_C10", "e1071", "sk_nystroem", "sk_svc")
  if (cls) out <- c(out, "ksvm_prob")
  out
}
ours_for <- function(name, d) {
  cls <- is.factor(d$ytr)
  if (name == "synth_1e6") return(c("falkon_m1e4", "rff_ridge"))
  c("falkon", if (cls) c("falkon_logistic", "rff_svm", "rff_svm_prob"), "rff_ridge")
}

blas_path <- function(kind) {
  if (kind == "reference") return(Sys.getenv("R_LD_LIBRARY_PATH"))
  cache <- file.path(tempdir(), "blas")
  p <- system2("bash", c(".ci/blas-dir", kind, cache), stdout = TRUE, stderr = FALSE)
  if (length(p) == 0L || !nzchar(p[1L])) stop("no ", kind, " BLAS found by .ci/blas-dir")
  p[1L]
}
blas_dirs <- function(kind) {
  if (kind == "reference") return("")
  system2("bash", c(".ci/blas-dir", "--dirs", kind, file.path(tempdir(), "blas")),
          stdout = TRUE, stderr = FALSE)[1L]
}

run_r_fit <- function(data_file, method, blas, threads) {
  out <- tempfile(fileext = ".rds")
  env <- c(sprintf("R_LD_LIBRARY_PATH=%s", blas_path(blas)),
           sprintf("OPENBLAS_NUM_THREADS=%d", threads),
           sprintf("OMP_NUM_THREADS=%d", threads),
           sprintf("R_DEFAULT_PACKAGES=%s", "datasets,utils,grDevices,graphics,stats,methods"))
  lib <- Sys.getenv("R_LIBS")
  status <- system2(file.path(R.home("bin"), "Rscript"),
                    c("bench/falkon.R", "--fit", data_file, method, out),
                    env = c(env, if (nzchar(lib)) sprintf("R_LIBS=%s", lib)),
                    stdout = "", stderr = "")
  if (!file.exists(out)) {
    return(data.frame(value = NA, logloss = NA, seconds = NA, peak_mb = NA,
                      note = sprintf("failed (status %s)", status)))
  }
  readRDS(out)
}

run_sk_fit <- function(csv, method, task, blas, comps) {
  env <- c(sprintf("OPENBLAS_NUM_THREADS=%d", 2L), "OMP_NUM_THREADS=2",
           if (blas != "reference") sprintf("LD_LIBRARY_PATH=%s", blas_dirs(blas)))
  out <- suppressWarnings(system2("/usr/bin/python3",
                                  c("bench/falkon_sklearn.py", csv$train, csv$test,
                                    method, task, comps),
                                  env = env, stdout = TRUE, stderr = FALSE))
  hit <- grep("^RESULT", out, value = TRUE)
  if (length(hit) == 0L) {
    return(data.frame(value = NA, logloss = NA, seconds = NA, peak_mb = NA, note = "failed"))
  }
  v <- as.numeric(strsplit(hit[1L], " ")[[1L]][-1L])
  data.frame(value = v[1L], logloss = NA_real_, seconds = v[2L], peak_mb = v[3L],
             note = if (method == "sk_nystroem") sprintf("n_components = %s", comps) else "")
}

write_csv_xy <- function(x, y, path) {
  utils::write.table(cbind(x, if (is.factor(y)) as.integer(y) - 1L else y), path, sep = ",",
                     row.names = FALSE, col.names = FALSE)
}

# Merge the rows of this run into the results file: rows of the same set,
# BLAS, threads and method are replaced.
save_rows <- function(rows, path) {
  new <- do.call(rbind, rows)
  if (is.null(new)) return(invisible())
  if (file.exists(path)) {
    old <- utils::read.csv(path, stringsAsFactors = FALSE)
    key <- function(r) paste(r$set, r$blas, r$threads, r$method)
    old <- old[!key(old) %in% key(new), , drop = FALSE]
    new <- rbind(old[, names(new)], new)
  }
  utils::write.csv(new, path, row.names = FALSE)
}

if (length(opt("from-log", NULL))) {
  source("bench/falkon-report.R")
  save_rows(list(falkon_log_rows(opt("from-log", NULL))), results_csv)
} else if (!("--report" %in% args)) {
  set_names <- opt("sets", setdiff(names(sets), "synth_1e6"))
  blases <- opt("blas", c("reference", "openblas"))
  threads_list <- as.integer(opt("threads", c("1", "2")))
  peers_mode <- opt("peers", "all")           # "all", "none", or "reference" (peers under reference BLAS only)
  only_methods <- opt("methods", NULL)
  sk_ok <- system2("/usr/bin/python3", c("-c", shQuote("import sklearn")), stdout = FALSE,
                   stderr = FALSE) == 0L
  bad <- setdiff(set_names, names(sets))
  if (length(bad)) stop("unknown set(s): ", paste(bad, collapse = ", "))
  started <- Sys.time()
  rows <- list()
  for (name in set_names) {
    d <- sets[[name]]()
    cls <- is.factor(d$ytr)
    data_file <- tempfile(fileext = ".rds")
    saveRDS(d, data_file)
    meta <- list(set = name, n_train = nrow(d$xtr), n_test = nrow(d$xte), d = ncol(d$xtr),
                 classes = if (cls) nlevels(d$ytr) else 0L)
    cat(sprintf("== %s: n_train = %d, n_test = %d, d = %d, %s\n", name, meta$n_train,
                meta$n_test, meta$d, if (cls) paste(meta$classes, "classes") else "regression"))
    peers <- if (identical(peers_mode, "none")) character() else peers_for(name, d)
    ours <- ours_for(name, d)
    if (!is.null(only_methods)) {
      peers <- intersect(peers, only_methods)
      ours <- intersect(ours, only_methods)
    }
    csv <- NULL
    if (sk_ok && any(startsWith(peers, "sk_"))) {
      csv <- list(train = tempfile(fileext = ".csv"), test = tempfile(fileext = ".csv"))
      write_csv_xy(d$xtr, d$ytr, csv$train)
      write_csv_xy(d$xte, d$yte, csv$test)
    }
    rm(d)
    add <- function(method, blas, threads, r) {
      row <- data.frame(meta, blas = blas, threads = threads, method = method,
                        metric = if (cls) "accuracy" else "rmse", r,
                        date = format(Sys.Date()), stringsAsFactors = FALSE)
      rows[[length(rows) + 1L]] <<- row
      cat(sprintf("  %-8s %-9s %d thr  %-16s %s = %.4f  logloss %s  %7.2f s  %7.1f MB  %s\n",
                  name, blas, threads, method, row$metric, r$value,
                  format(round(r$logloss, 4)), r$seconds, r$peak_mb, r$note))
    }
    for (blas in blases) {
      for (th in threads_list) {
        for (m in ours) add(m, blas, th, run_r_fit(data_file, m, blas, th))
      }
      if (identical(peers_mode, "reference") && blas != "reference") next
      th <- max(threads_list)
      for (m in peers) {
        if (startsWith(m, "sk_")) {
          if (!is.null(csv)) {
            add(m, blas, th, run_sk_fit(csv, sub("^sk_", "", m),
                                        if (cls) "classification" else "regression", blas,
                                        1000L))
          }
        } else {
          add(m, blas, th, run_r_fit(data_file, m, blas, th))
        }
      }
    }
    unlink(c(data_file, unlist(csv)))
    # after every set, so that an interrupted run keeps what it measured
    save_rows(rows, results_csv)
  }
  cat(sprintf("run took %.1f minutes\n", as.numeric(difftime(Sys.time(), started, units = "mins"))))
}

source("bench/falkon-report.R")
falkon_report(list.files("bench", "^falkon-results.*[.]csv$", full.names = TRUE), md_file)
