# Investigation: where should rff_ridge()'s Platt sigmoids come from?  By
# default a classification fits them to the training rows' one-hot scores
# (free: the fit computes them); with probability = TRUE to the exact
# leave-one-out scores at the chosen lambda (the hat matrix's diagonal: a
# D x D inverse and a product with every row's features).  Test log-loss,
# accuracy and fit time of both on the bench's classification sets
# (bench/harness/data.R, 70/30 splits), the default lambda (chosen from
# the data) and the default D.
#
#   Rscript bench/investigations/ridge-probabilities.R
# writes bench/investigations/ridge-probabilities.md.  Two threads (the
# default on this machine); elapsed seconds of the fit only, the best of
# three fits (bench_time()), with nothing else running.
suppressMessages(library(bochner))
source("bench/harness/harness.R")
options(bochner.threads = 2)
sets <- c("Vehicle", "Vowel", "DNA", "Satellite", "spam", "Shuttle", "Letter")
rows <- list()
reliab <- list()
start_load <- bench_load()
for (name in sets) {
  d <- bench_set(name)
  if (is.null(d)) next
  add <- function(method, f, s) {
    rows[[length(rows) + 1L]] <<- bench_class_row(name, d, method, predict(f, d$xte),
                                                   predict(f, d$xte, type = "prob"), s)
  }
  fit <- function(probability) {
    suppressWarnings(rff_ridge(d$xtr, d$ytr, seed = 1, probability = probability))
  }
  t0 <- bench_time(function() f0 <<- fit(FALSE))$elapsed
  add("rff_ridge(), training scores", f0, t0)
  reliab[[name]] <- bench_reliability(predict(f0, d$xte, type = "prob"), d$yte)
  t1 <- bench_time(function() f1 <<- fit(TRUE))$elapsed
  add("rff_ridge(probability = TRUE), leave-one-out scores", f1, t1)
}
tab <- do.call(rbind, rows)
plain <- tab$seconds[startsWith(tab$method, "rff_ridge(),")][match(tab$set, unique(tab$set))]
tab$x_plain <- round(tab$seconds / plain, 2)
ll <- function(p) tab$logloss[startsWith(tab$method, p)]
ratio <- stats::setNames(round(ll("rff_ridge(),") / ll("rff_ridge(prob"), 3), unique(tab$set))
loo <- tab[startsWith(tab$method, "rff_ridge(prob"), ]
md <- c(bench_page_head("Where should rff_ridge()'s Platt sigmoids come from?",
                       "bench/investigations/ridge-probabilities.R", start_load,
                       "`x_plain`: the fit's time over the default fit's on the same set.", tab),
        sprintf(paste("The training scores' log-loss over the leave-one-out scores': %s.",
                      "The leave-one-out scores cost %.2f-%.2fx the default fit."),
                paste(names(ratio), ratio, sep = " ", collapse = ", "),
                min(loo$x_plain), max(loo$x_plain)))
md <- c(md, "", bench_reliability_md(reliab, "the default rff_ridge() (training scores)"))
writeLines(md, "bench/investigations/ridge-probabilities.md")
print(tab)
