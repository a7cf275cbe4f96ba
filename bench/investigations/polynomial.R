# Benchmark: random features for polynomial kernels.  For the three
# constructions of random_features(method = "product" | "maclaurin" |
# "tensorsketch") it records the error of Z Z' against the exact Gram matrix
# as D grows, at degree 2 and 3, on data of d = 10 and d = 100, with the
# time to fit the map and compute Z; and, where python3 with scikit-learn is
# installed, sklearn.kernel_approximation.PolynomialCountSketch (TensorSketch
# with independent uniform hashes) on the same data beside TensorSketch.
#
# Run from the package root after installing the package:
#   Rscript bench/investigations/polynomial.R
# It prints markdown and writes it to bench/investigations/polynomial.md.
library(bochner)

n <- 300L
reps <- 3L   # independent maps per cell: medians of their error and time
dims <- c(10L, 100L)
degrees <- c(2L, 3L)
Ds <- c(1000L, 4000L, 10000L, 40000L)
methods <- c("product", "maclaurin", "tensorsketch")
nthreads <- 1L

unit_rows <- function(n, d) {
  x <- matrix(stats::rnorm(n * d), n, d)
  x / sqrt(rowSums(x^2))
}

errors <- function(Z, K) {
  E <- tcrossprod(Z) - K
  c(rel_max = max(abs(E)) / max(abs(K)), rel_rms = sqrt(mean(E^2)) / sqrt(mean(K^2)))
}

elapsed <- function(expr) {
  t <- system.time(value <- expr)[["elapsed"]]
  list(value = value, seconds = t)
}

find_python <- function() {
  for (py in unique(c(Sys.which("python3"), "/usr/bin/python3"))) {
    if (nzchar(py) && file.exists(py) &&
        identical(suppressWarnings(system2(py, c("-c", shQuote("import sklearn")),
                                           stdout = FALSE, stderr = FALSE)), 0L)) return(py)
  }
  ""
}
python <- find_python()

# scikit-learn: one process per data set, all degrees and D; the error is
# computed in numpy with the same definitions.
sklearn_run <- function(x) {
  data_file <- tempfile(fileext = ".bin")
  writeBin(as.vector(t(x)), data_file)
  script <- tempfile(fileext = ".py")
  writeLines(c(
    "import sys, time, numpy as np",
    "from sklearn.kernel_approximation import PolynomialCountSketch",
    sprintf("n, d = %d, %d", nrow(x), ncol(x)),
    "x = np.fromfile(sys.argv[1], dtype=np.float64).reshape(n, d)",
    sprintf("for p in [%s]:", paste(degrees, collapse = ", ")),
    "    K = (x @ x.T + 1.0) ** p",
    sprintf("    for D in [%s]:", paste(Ds, collapse = ", ")),
    "        runs = []",
    sprintf("        for r in range(%d):", reps),
    "            t0 = time.perf_counter()",
    "            Z = PolynomialCountSketch(degree=p, gamma=1.0, coef0=1.0, n_components=D,",
    "                                      random_state=r).fit(x).transform(x)",
    "            t = time.perf_counter() - t0",
    "            E = Z @ Z.T - K",
    "            runs.append((np.abs(E).max() / np.abs(K).max(),",
    "                         np.sqrt((E ** 2).mean()) / np.sqrt((K ** 2).mean()), t))",
    "        med = np.median(np.array(runs), axis=0)",
    "        print(p, D, med[0], med[1], med[2])"), script)
  out <- system2(python, c(script, data_file), stdout = TRUE)
  unlink(c(data_file, script))
  r <- utils::read.table(text = out, col.names = c("degree", "D", "rel_max", "rel_rms", "seconds"))
  r$method <- "sklearn PolynomialCountSketch"
  r
}

rows <- list()
for (d in dims) {
  set.seed(d)
  x <- unit_rows(n, d)
  for (p in degrees) {
    k <- polynomial_kernel(degree = p, scale = 1, offset = 1)
    K <- kernel_matrix(k, x)
    for (m in methods) for (D in Ds) {
      runs <- vapply(seq_len(reps), function(r) {
        set.seed(1000 * p + D + r)
        fit <- elapsed(random_features(x, k, D = D, method = m))
        z <- elapsed(predict(fit$value, x, nthreads = nthreads))
        c(errors(z$value, K), seconds = fit$seconds + z$seconds)
      }, numeric(3))
      med <- apply(runs, 1, stats::median)
      rows[[length(rows) + 1L]] <- data.frame(d = d, degree = p, method = m, D = D,
                                              rel_max = med[["rel_max"]], rel_rms = med[["rel_rms"]],
                                              seconds = med[["seconds"]])
      invisible(gc())
    }
  }
  if (nzchar(python)) {
    s <- sklearn_run(x)
    s$d <- d
    rows[[length(rows) + 1L]] <- s[, c("d", "degree", "method", "D", "rel_max", "rel_rms", "seconds")]
  }
}
res <- do.call(rbind, rows)

# The coefficient vector of the acceptance criterion, at D = 40000.
coef_rows <- list()
kc <- polynomial_kernel(coef = c(0.5, 1, 0, 0.25))
for (d in dims) {
  set.seed(d)
  x <- unit_rows(n, d)
  K <- kernel_matrix(kc, x)
  for (m in c("product", "maclaurin")) {
    runs <- vapply(seq_len(reps), function(r) {
      set.seed(7 + r)
      fit <- elapsed(random_features(x, kc, D = 40000L, method = m))
      z <- elapsed(predict(fit$value, x, nthreads = nthreads))
      c(errors(z$value, K), seconds = fit$seconds + z$seconds)
    }, numeric(3))
    med <- apply(runs, 1, stats::median)
    coef_rows[[length(coef_rows) + 1L]] <- data.frame(d = d, method = m, rel_max = med[["rel_max"]],
                                                      rel_rms = med[["rel_rms"]],
                                                      seconds = med[["seconds"]])
  }
}
coef_res <- do.call(rbind, coef_rows)

# TensorSketch time against the FFT length (d = 100, degree 3).
set.seed(3)
x <- unit_rows(n, 100L)
fft_lengths <- c(32768L, 40000L, 40009L)
fft_res <- data.frame(D = fft_lengths, factors = c("2^15", "2^6 5^4", "prime (Bluestein)"),
                      seconds = vapply(fft_lengths, function(D) {
                        map <- random_features(x, polynomial_kernel(3), D = D, method = "tensorsketch")
                        system.time(predict(map, x, nthreads = nthreads))[["elapsed"]]
                      }, numeric(1)))

fmt <- function(v, digits = 3) formatC(v, format = "f", digits = digits)
out <- c(
  "# Random features for polynomial kernels: error against D",
  "",
  "Recorded by `bench/investigations/polynomial.R` (run `Rscript bench/investigations/polynomial.R` from the",
  "package root after installing bochner); do not edit by hand.",
  "",
  sprintf("%s; R's BLAS: %s; %d thread(s); %s.", format(Sys.Date()), sessionInfo()$BLAS,
          nthreads, if (nzchar(python)) {
            paste("python:", python, "with scikit-learn",
                  system2(python, c("-c", shQuote("import sklearn; print(sklearn.__version__)")),
                          stdout = TRUE))
          } else "scikit-learn not installed"),
  "",
  sprintf(paste("Data: n = %d rows of N(0, I_d) scaled to unit Euclidean norm (\"unit-scale\"),",
                "d = 10 and d = 100.  Kernel (x.y + 1)^p.  Each cell is the median over %d",
                "independent maps (fixed seeds) of the error and of the time."), n, reps),
  "",
  "* **relative max error** = max |Z Z' - K| / max |K| over all n^2 pairs;",
  "* **relative rms error** = sqrt(mean((Z Z' - K)^2)) / sqrt(mean(K^2));",
  "* **seconds** = fitting the map plus computing Z for the n rows (for",
  "  scikit-learn, `fit` plus `transform`); the error computation is not timed.",
  "",
  "`product` uses Gaussian projections (D copies plus the constant column),",
  "`maclaurin` random signs with the degree law P(N = n) ~ c_n rho^n (rho the",
  "largest squared row norm),",
  "`tensorsketch` balanced hashes; scikit-learn's PolynomialCountSketch is",
  "TensorSketch with independent uniform hashes.",
  "",
  "With d = 10 the degree-2 tensor of (x, 1) has only 121 coordinates: a",
  "sketch is exact unless two of them share a bucket, so TensorSketch's error",
  "there is often zero, with rare jumps when a collision happens.", "")
for (d in dims) for (p in degrees) {
  r <- res[res$d == d & res$degree == p, ]
  out <- c(out, sprintf("## d = %d, degree %d", d, p), "",
           "| method | D | relative max error | relative rms error | seconds |",
           "|---|---:|---:|---:|---:|",
           sprintf("| %s | %d | %s | %s | %s |", r$method, r$D, fmt(r$rel_max, 4),
                   fmt(r$rel_rms, 4), fmt(r$seconds, 3)), "")
}
out <- c(out, "## Coefficient vector c(0.5, 1, 0, 0.25) at D = 40000", "",
         "| d | method | relative max error | relative rms error | seconds |",
         "|---:|---|---:|---:|---:|",
         sprintf("| %d | %s | %s | %s | %s |", coef_res$d, coef_res$method,
                 fmt(coef_res$rel_max, 4), fmt(coef_res$rel_rms, 4), fmt(coef_res$seconds, 3)),
         "",
         "## TensorSketch and the FFT length (d = 100, degree 3, computing Z)", "",
         "| D | factors | seconds |", "|---:|---|---:|",
         sprintf("| %d | %s | %s |", fft_res$D, fft_res$factors, fmt(fft_res$seconds, 3)), "")
cat(out, sep = "\n")
writeLines(out, file.path("bench", "polynomial.md"))
cat("recorded in bench/investigations/polynomial.md\n")
