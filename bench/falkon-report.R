# Writes bench/falkon.md from bench/falkon-results.csv (sourced by
# bench/falkon.R after every run, or alone with `Rscript bench/falkon.R --report`).

falkon_report <- function(results_csv, md_file) {
  results_csv <- results_csv[file.exists(results_csv)]
  if (length(results_csv) == 0L) stop("no results yet: run Rscript bench/falkon.R first")
  r <- do.call(rbind, lapply(results_csv, utils::read.csv, stringsAsFactors = FALSE))
  r <- r[order(!is.na(r$value)), , drop = FALSE]   # a failed row gives way to a measured one
  key <- paste(r$set, r$blas, r$threads, r$method)
  r <- r[!duplicated(key, fromLast = TRUE), , drop = FALSE]
  r <- r[order(match(r$set, unique(r$set))), , drop = FALSE]
  cpu <- tryCatch({
    l <- system2("lscpu", stdout = TRUE)
    trimws(sub("^Model name:", "", grep("^Model name:", l, value = TRUE)[1L]))
  }, error = function(e) "unknown CPU")
  cores <- parallel::detectCores()
  load <- tryCatch(paste(strsplit(readLines("/proc/loadavg"), " ")[[1L]][1:3], collapse = "/"),
                   error = function(e) "?")
  f3 <- function(v) ifelse(is.na(v), "-", formatC(v, format = "f", digits = 3))
  f2 <- function(v) ifelse(is.na(v), "-", formatC(v, format = "f", digits = 2))
  pct <- function(v) ifelse(is.na(v), "-", formatC(100 * v, format = "f", digits = 2))
  # a peer not run under this BLAS (libsvm uses none): its row under another
  get <- function(set, method, blas, threads = NULL, col = "value") {
    s <- r[r$set == set & r$method == method & r$blas == blas & !is.na(r$value), , drop = FALSE]
    if (nrow(s) == 0L && !startsWith(method, "falkon") && !startsWith(method, "rff_")) {
      s <- r[r$set == set & r$method == method & !is.na(r$value), , drop = FALSE]
    }
    if (!is.null(threads)) s <- s[s$threads == threads, , drop = FALSE]
    if (nrow(s) == 0L) return(NA_real_)
    s[[col]][which.max(s$threads)]
  }
  verdict <- function(ok) ifelse(is.na(ok), "n/a", ifelse(ok, "PASS", "MISS"))
  out <- c("# falkon() against exact and approximate kernel machines", "",
           "Written by `Rscript bench/falkon.R` (see its header for the options that run it",
           "in pieces); rows accumulate in `bench/falkon-results*.csv`.",
           sprintf("Machine: %s (`lscpu`), %d cores (load average %s when this page was",
                   cpu, cores, load),
           "written; the reading below says how busy the machine was for each recording).",
           "Compare methods within a set and BLAS, not across runs.",
           sprintf("R %s; each fit in a fresh process; time = elapsed seconds of the training call;",
                   paste(R.version$major, R.version$minor, sep = ".")),
           "peak = the process's high-water mark of resident memory (VmHWM, python's",
           "ru_maxrss) during the fit, beyond what it held once its data were read.",
           "BLAS: `reference` is Debian's reference BLAS (R's default here); `openblas` is",
           "OpenBLAS (pthread) selected per process with `R_LD_LIBRARY_PATH` from",
           "`.ci/blas-dir openblas` (python: `LD_LIBRARY_PATH`).  bochner's fits call no BLAS.",
           "Threads: bochner's `nthreads` (and OpenBLAS's); kernlab, e1071 and SVC are",
           "single-threaded and were run at the largest thread count of the run.  On the",
           "10^5 set e1071 and SVC (libsvm, which calls no BLAS) ran under the reference",
           "BLAS only; the OpenBLAS rows of the targets reuse their times.  A peer that",
           "failed under one BLAS is taken from the other in the target tables.",
           "Splits: 70 % / 30 % with `set.seed(1)` (diamonds: 15 000 training and 10 000 test",
           "rows; synthetic sets: their own seeds, see the script).", "")

  # hand-written reading of the figures, kept beside the generated tables
  notes <- file.path(dirname(md_file), "falkon-notes.md")
  if (file.exists(notes)) out <- c(out, readLines(notes), "")

  # ---- targets -------------------------------------------------------------
  out <- c(out, "## Targets of issue 23", "")
  blases <- unique(r$blas)
  cls_sets <- unique(r$set[r$metric == "accuracy" & r$method == "ksvm"])
  if (length(cls_sets)) {
    out <- c(out, "### Default `falkon()` against `ksvm()` defaults (accuracy within 0.5 point, <= 0.3x time)",
             "", "The issue's target applies to sets with >= 5000 training rows (marked *);",
             "the smaller sets are shown for reference.", "",
             "| set | n train | BLAS | threads | falkon % | ksvm % | difference (points) | falkon s | ksvm s | time ratio | verdict |",
             "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for (s in cls_sets) for (b in blases) for (th in sort(unique(r$threads[r$set == s & r$method == "falkon" & r$blas == b]))) {
      fa <- get(s, "falkon", b, th); ka <- get(s, "ksvm", b)
      ft <- get(s, "falkon", b, th, "seconds"); kt <- get(s, "ksvm", b, NULL, "seconds")
      n <- r$n_train[r$set == s][1L]
      ok <- (100 * (fa - ka) >= -0.5) & (ft / kt <= 0.3)
      out <- c(out, sprintf("| %s%s | %d | %s | %d | %s | %s | %+.2f | %s | %s | %s | %s |", s,
                            if (n >= 5000) "*" else "", n, b, th, pct(fa), pct(ka),
                            100 * (fa - ka), f2(ft), f2(kt), f2(ft / kt),
                            if (n >= 5000) verdict(ok) else "(small)"))
    }
    out <- c(out, "")
  }
  if (any(r$set == "synth_class_1e5")) {
    out <- c(out, "### n = 10^5 (Bayes accuracy 0.90): >= 10x faster than e1071 and SVC, <= 0.5 point less accuracy", "",
             "| BLAS | threads | falkon % | falkon s | e1071 % | e1071 s | speed-up | SVC % | SVC s | speed-up | verdict |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    s <- "synth_class_1e5"
    for (b in blases) for (th in sort(unique(r$threads[r$set == s & r$method == "falkon" & r$blas == b]))) {
      fa <- get(s, "falkon", b, th); ft <- get(s, "falkon", b, th, "seconds")
      ea <- get(s, "e1071", b); et <- get(s, "e1071", b, NULL, "seconds")
      sa <- get(s, "sk_svc", b); st <- get(s, "sk_svc", b, NULL, "seconds")
      ok <- et / ft >= 10 & st / ft >= 10 & 100 * (fa - max(ea, sa)) >= -0.5
      out <- c(out, sprintf("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |", b, th,
                            pct(fa), f2(ft), pct(ea), f2(et), f2(et / ft), pct(sa), f2(st),
                            f2(st / ft), verdict(ok)))
    }
    out <- c(out, "")
  }
  if (any(r$set == "diamonds")) {
    out <- c(out, "### Regression on diamonds (15 000 training rows, 3 factor predictors): RMSE within 5 % of `ksvm(type = \"eps-svr\", C = 10)` at <= 0.1x its time", "",
             "| BLAS | threads | falkon RMSE | ksvm C = 10 RMSE | ratio | falkon s | ksvm s | time ratio | verdict |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---|")
    s <- "diamonds"
    for (b in blases) for (th in sort(unique(r$threads[r$set == s & r$method == "falkon" & r$blas == b]))) {
      fa <- get(s, "falkon", b, th); ft <- get(s, "falkon", b, th, "seconds")
      ka <- get(s, "ksvm_C10", b); kt <- get(s, "ksvm_C10", b, NULL, "seconds")
      out <- c(out, sprintf("| %s | %d | %s | %s | %s | %s | %s | %s | %s |", b, th, f3(fa), f3(ka),
                            f3(fa / ka), f2(ft), f2(kt), f3(ft / kt),
                            verdict(fa / ka <= 1.05 & ft / kt <= 0.1)))
    }
    out <- c(out, "")
  }
  if (any(r$set == "synth_1e6")) {
    out <- c(out, "### n = 10^6, d = 20, m = 10^4: <= 5 minutes on 2 cores, <= 1.5 GB beyond the data", "",
             "Test RMSE (noise sd 0.5, so 0.5 is the best possible) beside `rff_ridge()` with D = 1024.", "",
             "| BLAS | threads | method | RMSE | seconds | peak MB | verdict |", "|---|---:|---|---:|---:|---:|---|")
    s <- r[r$set == "synth_1e6", , drop = FALSE]
    for (i in seq_len(nrow(s))) {
      ok <- if (s$method[i] == "falkon_m1e4") verdict(s$seconds[i] <= 300 & s$peak_mb[i] <= 1536) else ""
      out <- c(out, sprintf("| %s | %d | %s | %s | %s | %.0f | %s |", s$blas[i], s$threads[i],
                            s$method[i], f3(s$value[i]), f2(s$seconds[i]), s$peak_mb[i], ok))
    }
    out <- c(out, "")
  }
  ll_sets <- unique(r$set[r$method == "falkon_logistic"])
  if (length(ll_sets)) {
    out <- c(out, "### Log-loss of logistic `falkon()` against `rff_svm(probability = TRUE)` and `ksvm(prob.model = TRUE)`", "",
             "| set | BLAS | threads | falkon logistic | rff_svm prob | ksvm prob | verdict |",
             "|---|---|---:|---:|---:|---:|---|")
    for (s in ll_sets) for (b in blases) for (th in sort(unique(r$threads[r$set == s & r$method == "falkon_logistic" & r$blas == b]))) {
      fl <- get(s, "falkon_logistic", b, th, "logloss")
      rl <- get(s, "rff_svm_prob", b, th, "logloss")
      kl <- get(s, "ksvm_prob", b, NULL, "logloss")
      out <- c(out, sprintf("| %s | %s | %d | %s | %s | %s | %s |", s, b, th, f3(fl), f3(rl), f3(kl),
                            verdict(if (all(is.na(c(rl, kl)))) NA else fl <= min(rl, kl, na.rm = TRUE))))
    }
    out <- c(out, "")
  }

  # ---- every row -----------------------------------------------------------
  out <- c(out, "## Every fit", "",
           "Accuracy in %, or test RMSE for regression; log-loss where the method gives",
           "probabilities.  Notes give what falkon chose (centres m, lambda, CG iterations t,",
           "bandwidth sigma on the standardised inputs) and the components of Nystroem.", "")
  for (s in unique(r$set)) {
    rs <- r[r$set == s, , drop = FALSE]
    rs <- rs[order(rs$blas, rs$method, rs$threads), , drop = FALSE]
    out <- c(out, sprintf("### %s: %d training rows, %d test rows, d = %d, %s", s, rs$n_train[1L],
                          rs$n_test[1L], rs$d[1L],
                          if (rs$classes[1L] > 0) paste(rs$classes[1L], "classes") else "regression"),
             "", "| BLAS | method | threads | accuracy % / RMSE | log-loss | seconds | peak MB | notes | date |",
             "|---|---|---:|---:|---:|---:|---:|---|---|")
    for (i in seq_len(nrow(rs))) {
      v <- if (rs$metric[i] == "accuracy") pct(rs$value[i]) else f3(rs$value[i])
      out <- c(out, sprintf("| %s | %s | %d | %s | %s | %s | %s | %s | %s |", rs$blas[i],
                            rs$method[i], rs$threads[i], v, f3(rs$logloss[i]), f2(rs$seconds[i]),
                            ifelse(is.na(rs$peak_mb[i]), "-", sprintf("%.0f", rs$peak_mb[i])),
                            ifelse(is.na(rs$note[i]), "", rs$note[i]), rs$date[i]))
    }
    out <- c(out, "")
  }
  out <- c(out, "Methods: `falkon` = `falkon(x, y)` (all defaults); `falkon_logistic` = `falkon(x, y, loss = \"logistic\")`;",
           "`falkon_m1e4` = `falkon(x, y, centers = 1e4)`; `rff_svm`, `rff_ridge` = their defaults;",
           "`rff_svm_prob` = `rff_svm(x, y, probability = TRUE)`; `ksvm` = `kernlab::ksvm(x, y)`",
           "(C-SVC or eps-SVR, C = 1, sigma from sigest, scaled); `ksvm_C10` = the same with C = 10",
           "(eps-svr for regression); `ksvm_prob` = `ksvm(x, y, prob.model = TRUE)`; `e1071` =",
           "`e1071::svm(x, y)` (libsvm, gamma = 1/d, C = 1, scaled); `sk_svc` = scikit-learn",
           "`StandardScaler` + `SVC()` (libsvm; `SVR(C = 10)` for regression); `sk_nystroem` =",
           "`StandardScaler` + `Nystroem(n_components = 1000)` + `RidgeClassifier()` (`Ridge()`",
           "for regression), gamma at scikit-learn's default 1/d.")
  writeLines(out, md_file)
  invisible(out)
}

# The rows a run printed (its log), for a run stopped before it saved them:
# `Rscript bench/falkon.R --from-log=LOG --results=FILE`.
falkon_log_rows <- function(log, date = format(Sys.Date())) {
  lines <- readLines(log)
  rows <- list()
  meta <- NULL
  for (l in lines) {
    h <- regmatches(l, regexec("^== (\\S+): n_train = (\\d+), n_test = (\\d+), d = (\\d+), (.*)$", l))[[1L]]
    if (length(h)) {
      meta <- list(set = h[2L], n_train = as.integer(h[3L]), n_test = as.integer(h[4L]),
                   d = as.integer(h[5L]),
                   classes = if (grepl("classes", h[6L])) as.integer(sub(" classes", "", h[6L])) else 0L)
      next
    }
    r <- regmatches(l, regexec(paste0("^  (\\S+)\\s+(\\S+)\\s+(\\d+) thr  (\\S+)\\s+(accuracy|rmse) = (\\S+)",
                                      "\\s+logloss (\\S+)\\s+(\\S+) s\\s+(\\S+) MB  ?(.*)$"), l))[[1L]]
    if (length(r) == 0L || is.null(meta)) next
    num <- function(v) suppressWarnings(as.numeric(v))
    rows[[length(rows) + 1L]] <- data.frame(meta, blas = r[3L], threads = as.integer(r[4L]),
                                            method = r[5L], metric = r[6L], value = num(r[7L]),
                                            logloss = num(r[8L]), seconds = num(r[9L]),
                                            peak_mb = num(r[10L]), note = r[11L], date = date,
                                            stringsAsFactors = FALSE)
  }
  do.call(rbind, rows)
}
