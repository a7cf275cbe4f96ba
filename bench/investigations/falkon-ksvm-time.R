# Investigation (issue 38's time target): default falkon() against kernlab::ksvm() at its
# default cost and at C = 10 on Shuttle (the harness's 70/30 split, 40 600 training rows)
# and Letter (mlbench's LetterRecognition, 70/30 by set.seed(1), 14 000 rows), each fit
# in a fresh process (bench_fit(): elapsed and CPU seconds of the training call), under
# OpenBLAS and the reference BLAS; falkon on 2 threads and 1, ksvm on 2 (it is
# single-threaded itself; OpenBLAS threads its few BLAS calls).  Markdown on stdout.
#   Rscript bench/investigations/falkon-ksvm-time.R          (from the package root)
source("bench/harness/harness.R")
if (!bench_have("mlbench") || !bench_have("kernlab")) stop("needs mlbench and kernlab")
sets <- list(Shuttle = bench_set("Shuttle"), Letter = bench_set("Letter"))
score <- function(obj, d) {
  p <- if (inherits(obj, "ksvm")) kernlab::predict(obj, d$xte) else stats::predict(obj, d$xte)
  list(accuracy = mean(as.character(p) == as.character(d$yte)))
}
fits <- list(falkon = function(d) falkon(d$xtr, d$ytr),
             ksvm = function(d) kernlab::ksvm(d$xtr, d$ytr),
             ksvm_C10 = function(d) kernlab::ksvm(d$xtr, d$ytr, C = 10))
cat("| set | n train | BLAS | fit | threads | elapsed s | CPU s | accuracy | falkon / this |\n")
cat("|---|---:|---|---|---:|---:|---:|---:|---:|\n")
for (nm in names(sets)) {
  d <- sets[[nm]]
  f <- bench_data_file(d)
  for (blas in c("openblas", "reference")) {
    ours <- NA_real_
    for (m in names(fits)) for (th in if (m == "falkon") c(2L, 1L) else 2L) {
      r <- bench_fit(fits[[m]], f, score, function(d) fits[[m]](bench_slice(d, 300)), threads = th,
                     blas = blas, packages = if (m == "falkon") "bochner" else "kernlab")
      if (m == "falkon" && th == 2L) ours <- r$elapsed
      cat(sprintf("| %s | %d | %s | %s | %d | %.2f | %.2f | %.4f | %s |\n", nm, nrow(d$xtr), r$blas,
                  m, th, r$elapsed, r$cpu, r$accuracy,
                  if (m != "falkon") sprintf("%.2f", ours / r$elapsed) else ""))
    }
  }
  unlink(f)
}
