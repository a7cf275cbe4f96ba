# Benchmark: the random Fourier feature transform, predict(map, x), against
# plain R and, where python3 with scikit-learn is installed, against
# sklearn.kernel_approximation.RBFSampler.transform on the same data, in one
# run on one machine.  Run from the package root after installing it:
#   Rscript bench/transform.R        (or: make bench)
# It prints a markdown table and writes it into bench/README.md between the
# transform markers.
library(bochner)

n <- 20000L; d <- 64L; D <- 2048L; reps <- 5L
set.seed(1)
x <- matrix(rnorm(n * d), n, d)
map <- random_features(x, gaussian_kernel(sigma = 8), D = D)
W <- map$omega
b <- map$phase

time_median <- function(f) {
  f()  # warm up
  stats::median(replicate(reps, system.time(f())[["elapsed"]]))
}

plain_r <- function() sqrt(2 / D) * cos(sweep(x %*% W, 2, b, "+"))
stopifnot(isTRUE(all.equal(predict(map, x, nthreads = 1), plain_r(), tolerance = 1e-12)))

res <- data.frame(
  method = c("bochner predict(), 1 thread", "bochner predict(), 2 threads",
             "plain R: sqrt(2/D) * cos(sweep(x %*% W, 2, b, \"+\"))", "bare product x %*% W"),
  seconds = c(time_median(function() predict(map, x, nthreads = 1)),
              time_median(function() predict(map, x, nthreads = 2)),
              time_median(plain_r),
              time_median(function() x %*% W)))

find_python <- function() {
  for (py in unique(c(Sys.which("python3"), "/usr/bin/python3"))) {
    if (nzchar(py) && file.exists(py) &&
        identical(suppressWarnings(system2(py, c("-c", shQuote("import sklearn")),
                                           stdout = FALSE, stderr = FALSE)), 0L)) return(py)
  }
  ""
}
python <- find_python()
if (nzchar(python)) {
  data_file <- tempfile(fileext = ".bin")
  writeBin(as.vector(t(x)), data_file)   # row-major, as numpy reads it
  script <- tempfile(fileext = ".py")
  writeLines(c(
    "import sys, time, statistics, numpy as np",
    "from sklearn.kernel_approximation import RBFSampler",
    sprintf("n, d, D, reps = %d, %d, %d, %d", n, d, D, reps),
    "x = np.fromfile(sys.argv[1], dtype=np.float64).reshape(n, d)",
    "rbf = RBFSampler(gamma=1.0 / (2 * 8.0**2), n_components=D, random_state=0).fit(x)",
    "rbf.transform(x)",
    "t = []",
    "for _ in range(reps):",
    "    t0 = time.perf_counter(); rbf.transform(x); t.append(time.perf_counter() - t0)",
    "print(statistics.median(t))"), script)
  out <- system2(python, c(script, data_file), stdout = TRUE)
  res <- rbind(res, data.frame(method = "scikit-learn RBFSampler.transform",
                               seconds = as.numeric(utils::tail(out, 1))))
}

res$ratio_to_bochner_1_thread <- res$seconds / res$seconds[1]
blas <- sessionInfo()$BLAS
header <- c(
  sprintf("n = %d, d = %d, D = %d (phase map), median of %d runs; %s; R's BLAS: %s; %s.",
          n, d, D, reps, format(Sys.Date()), blas,
          if (nzchar(python)) paste("python:", python) else "scikit-learn not installed"),
  "",
  "| method | seconds | time / bochner (1 thread) |",
  "|---|---:|---:|")
rows <- sprintf("| %s | %.3f | %.2f |", res$method, res$seconds, res$ratio_to_bochner_1_thread)
table <- c(header, rows)
cat(table, sep = "\n")

readme <- file.path("bench", "README.md")
if (file.exists(readme)) {
  lines <- readLines(readme)
  start <- grep("<!-- transform:start -->", lines, fixed = TRUE)
  end <- grep("<!-- transform:end -->", lines, fixed = TRUE)
  if (length(start) == 1L && length(end) == 1L && end > start) {
    lines <- c(lines[seq_len(start)], table, lines[end:length(lines)])
    writeLines(lines, readme)
    cat("\nrecorded in", readme, "\n")
  }
}
