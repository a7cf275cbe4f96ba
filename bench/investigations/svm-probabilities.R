# Investigation: where should rff_svm()'s Platt sigmoids come from?  By
# default they are fitted to the training rows' decision values (free: the
# fit computes them); with probability = TRUE the binary problems are solved
# again on k stratified folds (k more problems each on (k - 1) / k of the
# rows, in the same parallel call) and the sigmoids fitted to the held-out
# decision values.  Part 1: test log-loss, accuracy and fit time of the
# default rff_svm() and of k = 2, 3 and 5 folds, against
# kernlab::ksvm(prob.model = TRUE) (its default cost), on the bench's
# classification sets (bench/harness/data.R, 70/30 splits).  Part 2: the
# training values against 5 folds at larger costs and D, where the fit
# follows its training rows more closely.
#
#   Rscript bench/investigations/svm-probabilities.R
# writes bench/investigations/svm-probabilities.md.  The fold count has no
# argument of its own (probability = TRUE, cross = k sets it above 5): the
# script sets bochner:::svm_probability_folds, which is why it reaches
# into the namespace.  Two threads (the default on this machine); elapsed
# seconds of the fit only, the best of three fits (bench_time(); ksvm: one),
# with nothing else running.
suppressMessages(library(bochner))
source("bench/harness/harness.R")
options(bochner.threads = 2)
sets <- c("Vehicle", "Vowel", "DNA", "Satellite", "spam", "Shuttle", "Letter")
rows <- list()
reliab <- list()
ns <- asNamespace("bochner")
set_folds <- function(k) {
  unlockBinding("svm_probability_folds", ns)
  assign("svm_probability_folds", as.integer(k), envir = ns)
  lockBinding("svm_probability_folds", ns)
}
start_load <- bench_load()
for (name in sets) {
  d <- bench_set(name)
  if (is.null(d)) next
  if (name == "Shuttle") d <- bench_slice(d, 15000L)
  add <- function(method, pred, prob, s) rows[[length(rows) + 1L]] <<- bench_class_row(name, d, method, pred, prob, s)
  t0 <- bench_time(function() f0 <<- rff_svm(d$xtr, d$ytr, seed = 1))$elapsed
  p0 <- predict(f0, d$xte, type = "prob")
  add("rff_svm(), training decision values", predict(f0, d$xte), p0, t0)
  reliab[[name]] <- bench_reliability(p0, d$yte)
  for (k in c(2L, 3L, 5L)) {
    set_folds(k)
    t <- bench_time(function() f <<- rff_svm(d$xtr, d$ytr, seed = 1, probability = TRUE))$elapsed
    p <- predict(f, d$xte, type = "prob")
    add(sprintf("rff_svm(probability = TRUE), %d folds", k), predict(f, d$xte), p, t)
  }
  set_folds(5L)
  if (requireNamespace("kernlab", quietly = TRUE)) {
    t <- system.time(kf <- kernlab::ksvm(d$xtr, d$ytr, prob.model = TRUE))[["elapsed"]]
    p <- kernlab::predict(kf, d$xte, type = "probabilities")
    add("ksvm(prob.model = TRUE)", kernlab::predict(kf, d$xte), p, t)
  }
}
tab <- do.call(rbind, rows)
# the time of each fit over the plain rff_svm()'s on the same set
plain <- tab$seconds[startsWith(tab$method, "rff_svm(),")][match(tab$set, unique(tab$set))]
tab$x_plain <- round(tab$seconds / plain, 2)
folds2 <- tab[grepl("2 folds", tab$method), ]
folds5 <- tab[grepl("5 folds", tab$method), ]
md <- c(bench_page_head("Where should rff_svm()'s Platt sigmoids come from?",
                       "bench/investigations/svm-probabilities.R", start_load,
                       "`x_plain`: the fit's time over the plain `rff_svm()`'s on the same set.",
                       tab),
        sprintf(paste("Probabilities cost %.2f-%.2fx the plain fit with 2 folds and %.2f-%.2fx with",
                      "5 folds (libsvm's); the multi-class sets with many pair problems pay most."),
                min(folds2$x_plain), max(folds2$x_plain), min(folds5$x_plain), max(folds5$x_plain)))
# the default's log-loss over 5 folds' and over ksvm's
ratio <- function(a, b) {
  x <- tab$logloss[grepl(a, tab$method, fixed = TRUE)] / tab$logloss[grepl(b, tab$method, fixed = TRUE)]
  stats::setNames(round(x, 3), unique(tab$set))
}
r5 <- ratio("training decision", "5 folds")
rk <- ratio("training decision", "ksvm")
md <- c(md, "", sprintf(paste("The default (training decision values) has %.3f-%.3fx the log-loss of 5 folds",
                              "(%s) and %.3f-%.3fx ksvm's (%s)."),
                        min(r5), max(r5), paste(names(r5), r5, sep = " ", collapse = ", "),
                        min(rk), max(rk), paste(names(rk), rk, sep = " ", collapse = ", ")))

# Part 2: larger costs and D on the sets small enough to fit them quickly
rows2 <- list()
for (name in c("Vehicle", "Vowel", "DNA", "spam", "Satellite")) {
  d <- bench_set(name)
  for (cfg in list(c(1, 1024), c(10, 1024), c(100, 1024), c(1, 4096), c(10, 4096))) {
    f <- suppressWarnings(rff_svm(d$xtr, d$ytr, seed = 1, cost = cfg[1], D = cfg[2]))
    f5 <- suppressWarnings(rff_svm(d$xtr, d$ytr, seed = 1, cost = cfg[1], D = cfg[2],
                                   probability = TRUE))
    l0 <- bench_logloss(predict(f, d$xte, type = "prob"), d$yte)
    l5 <- bench_logloss(predict(f5, d$xte, type = "prob"), d$yte)
    rows2[[length(rows2) + 1L]] <- data.frame(set = name, cost = cfg[1], D = cfg[2],
      train_accuracy = round(f$accuracy, 4), test_accuracy = round(bench_accuracy(predict(f, d$xte), d$yte), 4),
      logloss_training = round(l0, 4), logloss_5_folds = round(l5, 4), ratio = round(l0 / l5, 3))
  }
}
tab2 <- do.call(rbind, rows2)
md <- c(md, "", "## Larger costs and D", "",
        paste("The default's sigmoids (training decision values) against 5 folds' when the fit follows",
              "its training rows more closely (`train_accuracy`); one fit each, seed 1."), "",
        knitr::kable(tab2, format = "pipe", row.names = FALSE), "",
        sprintf(paste("At the default cost the ratio is %.3f-%.3f; at cost = 10, %.3f-%.3f; at cost = 100,",
                      "%.3f-%.3f: the larger the cost, the more `probability = TRUE` is worth its time."),
                min(tab2$ratio[tab2$cost == 1]), max(tab2$ratio[tab2$cost == 1]),
                min(tab2$ratio[tab2$cost == 10]), max(tab2$ratio[tab2$cost == 10]),
                min(tab2$ratio[tab2$cost == 100]), max(tab2$ratio[tab2$cost == 100])))
md <- c(md, "", bench_reliability_md(reliab, "the default rff_svm() (training decision values)"))
writeLines(md, "bench/investigations/svm-probabilities.md")
print(tab)
print(tab2)
