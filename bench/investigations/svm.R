# Benchmark: rff_svm() (a linear SVM on random Fourier features, trained by
# dual coordinate descent) against kernlab::ksvm (the exact Gaussian-kernel
# SVM, SMO on the Gram matrix), in one run on one thread each.
#
#  1. kernlab::spam: 4601 e-mails, 57 numeric columns; 3000 training rows
#     drawn with set.seed(1), the other 1601 for testing.  ksvm with its
#     defaults (C = 1, scaled inputs, sigma from sigest()); rff_svm with its
#     defaults (scaled inputs, median-heuristic sigma, cost = 1) for
#     D = 256 ... 4096, and at the default D with ksvm's own sigma.
#  2. A synthetic set: n = 50 000 training and 10 000 test points in 10
#     dimensions, the class is whether the first five coordinates fall
#     inside the sphere holding half the mass (a boundary no linear
#     classifier finds), with 5 % of the labels flipped (so 95 % is the best
#     possible accuracy).  ksvm on all 50 000 would take far too long here
#     (SMO is between quadratic and cubic in n), so it runs on random
#     subsamples of 5000 and 10 000 rows; rff_svm runs on all 50 000.
#
# Run from the package root after installing the package and kernlab:
#   Rscript bench/investigations/svm.R
# It writes bench/investigations/svm.md and the spam table into bench/README.md between the
# svm markers.  Times are elapsed seconds of one run (training only; the
# test accuracy is computed outside the timing).
library(bochner)
if (!requireNamespace("kernlab", quietly = TRUE)) stop("bench/investigations/svm.R needs kernlab")
options(bochner.threads = 1)
Ds <- c(256L, 512L, 1024L, 2048L, 4096L)

timed <- function(expr) {
  t <- system.time(value <- expr)[["elapsed"]]
  list(value = value, seconds = t)
}
fmt_row <- function(...) paste0("| ", paste(..., sep = " | "), " |")
pct <- function(a) sprintf("%.2f", 100 * a)

# --- 1. spam ---------------------------------------------------------------
data(spam, package = "kernlab", envir = environment())
x <- as.matrix(spam[, -58])
y <- spam$type
set.seed(1)
train <- sample(nrow(spam), 3000)
xtr <- x[train, ]
ytr <- y[train]
xte <- x[-train, ]
yte <- y[-train]

set.seed(2)
ks <- timed(kernlab::ksvm(xtr, ytr, kernel = "rbfdot", C = 1))
ks_acc <- mean(kernlab::predict(ks$value, xte) == yte)
ks_sigma <- kernlab::kpar(kernlab::kernelf(ks$value))$sigma
ks_nsv <- kernlab::nSV(ks$value)
# kernlab's rbfdot is exp(-s ||x - y||^2): sigma = 1 / sqrt(2 s) in bochner
matching <- 1 / sqrt(2 * ks_sigma)

spam_rows <- c(fmt_row("method", "D", "sigma", "test accuracy %", "train seconds", "passes"),
               "|---|---:|---:|---:|---:|---:|",
               fmt_row("kernlab::ksvm (exact, C = 1, sigest)", "-",
                       sprintf("%.3f (kernlab s = %.4f)", matching, ks_sigma), pct(ks_acc),
                       sprintf("%.2f", ks$seconds), sprintf("%d SV", ks_nsv)))
spam_acc <- numeric()
for (D in Ds) {
  set.seed(3)
  f <- timed(rff_svm(xtr, ytr, D = D))
  acc <- mean(predict(f$value, xte) == yte)
  spam_acc[as.character(D)] <- acc
  spam_rows <- c(spam_rows, fmt_row(sprintf("rff_svm, median sigma%s", if (D == 1024L) " (default call)" else ""),
                                    D, sprintf("%.3f", f$value$kernel$sigma), pct(acc),
                                    sprintf("%.2f", f$seconds), f$value$iter))
}
set.seed(3)
f <- timed(rff_svm(xtr, ytr, kernel = gaussian_kernel(matching)))
spam_rows <- c(spam_rows, fmt_row("rff_svm, ksvm's sigma", 1024, sprintf("%.3f", matching),
                                  pct(mean(predict(f$value, xte) == yte)),
                                  sprintf("%.2f", f$seconds), f$value$iter))
set.seed(3)
f <- timed(rff_svm(xtr, ytr, loss = "squared_hinge"))
spam_rows <- c(spam_rows, fmt_row("rff_svm, squared hinge, median sigma", 1024,
                                  sprintf("%.3f", f$value$kernel$sigma),
                                  pct(mean(predict(f$value, xte) == yte)),
                                  sprintf("%.2f", f$seconds), f$value$iter))
set.seed(3)
f <- timed(rff_ridge(xtr, ytr))
spam_rows <- c(spam_rows, fmt_row("rff_ridge (one-hot, lambda = 0.01), median sigma", 1024,
                                  sprintf("%.3f", f$value$kernel$sigma),
                                  pct(mean(predict(f$value, xte) == yte)),
                                  sprintf("%.2f", f$seconds), "-"))
# the default call over several seeds: how much the random features move it
seed_acc <- vapply(1:5, function(s) {
  mean(predict(rff_svm(xtr, ytr, seed = 100 + s), xte) == yte)
}, numeric(1))

# --- 2. synthetic, n = 50 000 ------------------------------------------------
sphere <- function(n, d = 10) {
  x <- matrix(rnorm(n * d), n, d)
  inside <- rowSums(x[, 1:5]^2) < stats::qchisq(0.5, 5)
  flip <- stats::runif(n) < 0.05
  list(x = x, y = factor(ifelse(xor(inside, flip), "inside", "outside")))
}
set.seed(10)
syn_tr <- sphere(50000)
syn_te <- sphere(10000)
syn_rows <- c(fmt_row("method", "training rows", "D", "test accuracy %", "train seconds", "passes"),
              "|---|---:|---:|---:|---:|---:|")
for (m in c(5000L, 10000L)) {
  set.seed(11)
  idx <- sample(50000, m)
  k <- timed(kernlab::ksvm(syn_tr$x[idx, ], syn_tr$y[idx], kernel = "rbfdot", C = 1))
  syn_rows <- c(syn_rows, fmt_row("kernlab::ksvm (exact, C = 1, sigest), subsample", m, "-",
                                  pct(mean(kernlab::predict(k$value, syn_te$x) == syn_te$y)),
                                  sprintf("%.2f", k$seconds),
                                  sprintf("%d SV", kernlab::nSV(k$value))))
}
syn_secs <- numeric()
for (D in Ds) {
  set.seed(12)
  f <- timed(rff_svm(syn_tr$x, syn_tr$y, D = D))
  syn_secs[as.character(D)] <- f$seconds
  syn_rows <- c(syn_rows, fmt_row("rff_svm, median sigma", 50000, D,
                                  pct(mean(predict(f$value, syn_te$x) == syn_te$y)),
                                  sprintf("%.2f", f$seconds), f$value$iter))
  rm(f)
  invisible(gc())
}

# where the default call's time goes: the median heuristic, the map and Z
xs <- scale(syn_tr$x)
set.seed(12)
feat <- timed(predict(random_features(xs, gaussian_kernel("median"), D = 1024L), xs))
rm(xs)

# --- write ------------------------------------------------------------------
blas <- tryCatch(sessionInfo()$BLAS, error = function(e) "unknown")
header <- sprintf("%s; R %s; BLAS: %s; one thread (options(bochner.threads = 1)).",
                  format(Sys.Date()), getRversion(), blas)
spam_summary <- sprintf(paste0(
  "Default call `rff_svm(x, y)` (D = 1024, median sigma, cost = 1): %s %% against ",
  "ksvm's %s %% (difference %+.2f points); over 5 further seeds %s %% to %s %% ",
  "(mean %s %%)."),
  pct(spam_acc[["1024"]]), pct(ks_acc), 100 * (spam_acc[["1024"]] - ks_acc),
  pct(min(seed_acc)), pct(max(seed_acc)), pct(mean(seed_acc)))
md <- c("# rff_svm against kernlab::ksvm",
        "",
        "Written by `bench/investigations/svm.R`; see the script's header for the set-up.",
        "",
        header,
        "",
        "## kernlab::spam, 3000 training rows (set.seed(1)), 1601 test rows",
        "",
        spam_rows,
        "",
        spam_summary,
        "",

        "## Synthetic: 10 dimensions, sphere boundary in the first 5, 5 % label noise",
        "",
        "50 000 training rows, 10 000 test rows; the best possible accuracy is 95 %.",
        "ksvm on all 50 000 rows is out of reach here, so it ran on random subsamples.",
        "",
        syn_rows,
        "",
        sprintf(paste("Where the time goes (synthetic, D = 1024): the median heuristic, the map and",
                      "the 50 000 x 1024 features take %.2f s of the %.2f s; the rest is the",
                      "solver (dual coordinate descent) and the training predictions."),
                feat$seconds, syn_secs[["1024"]]),
        "")
writeLines(md, "bench/investigations/svm.md")
cat(md, sep = "\n")

readme <- "bench/investigations/transform.md"
lines <- readLines(readme)
start <- grep("<!-- svm:start -->", lines, fixed = TRUE)
end <- grep("<!-- svm:end -->", lines, fixed = TRUE)
block <- c(header, "", spam_rows, "", spam_summary)
if (length(start) == 1L && length(end) == 1L && end > start) {
  lines <- c(lines[seq_len(start)], block, lines[end:length(lines)])
  writeLines(lines, readme)
}
