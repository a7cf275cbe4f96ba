# Benchmark: the feature transform in a default call, predict(map, x) with no
# nthreads argument (bochner_threads(): every core), against scikit-learn's
# RBFSampler.transform with numpy at its default threads, on the same data
# and the same frequencies, in one run: n = 20000, d = 64, D = 2048.
# scikit-learn runs under /usr/bin/python3 twice: with the BLAS numpy loads
# by default (the machine's libblas.so.3) and with OpenBLAS
# (LD_LIBRARY_PATH), so that its product is at its fastest.  Each time is
# the median of 7 runs after a warm-up.  Run from the package root after
# installing the package:  Rscript bench/investigations/default_transform.R
# Writes bench/investigations/default_transform.md.
suppressPackageStartupMessages(library(bochner))
n <- 20000L; d <- 64L; D <- 2048L; reps <- 7L
OPENBLAS_DIR <- "/usr/lib/x86_64-linux-gnu/openblas-pthread"
set.seed(1)
x <- matrix(rnorm(n * d), n, d)
map <- random_features(x, gaussian_kernel(1), D = D)
invisible(predict(map, x))
bochner_s <- stats::median(replicate(reps, system.time(predict(map, x))[["elapsed"]]))
dir <- tempfile("default-transform")
dir.create(dir)
writeBin(as.vector(t(x)), file.path(dir, "x.bin"))
writeBin(as.vector(t(map$omega)), file.path(dir, "w.bin"))
writeBin(map$phase, file.path(dir, "b.bin"))
py <- sprintf('
import sys, time, statistics, numpy as np
from sklearn.kernel_approximation import RBFSampler
n, d, D, reps = %d, %d, %d, %d
x = np.fromfile("%s/x.bin").reshape(n, d)
w = np.fromfile("%s/w.bin").reshape(d, D)
b = np.fromfile("%s/b.bin")
s = RBFSampler(gamma=0.5, n_components=D).fit(x[:10])
s.random_weights_ = w
s.random_offset_ = b
z = s.transform(x)
ts = []
for i in range(reps):
    t0 = time.perf_counter(); s.transform(x); ts.append(time.perf_counter() - t0)
print(statistics.median(ts))
', n, d, D, reps, dir, dir, dir)
writeLines(py, file.path(dir, "sk.py"))
run_python <- function(env) {
  out <- system2("/usr/bin/python3", file.path(dir, "sk.py"), stdout = TRUE, stderr = TRUE, env = env)
  as.numeric(utils::tail(out, 1L))
}
have_sklearn <- identical(system2("/usr/bin/python3", c("-c", shQuote("import sklearn")),
                                  stdout = FALSE, stderr = FALSE), 0L)
sk <- c(default = NA_real_, openblas = NA_real_)
if (have_sklearn) {
  sk[["default"]] <- run_python(character())
  if (file.exists(file.path(OPENBLAS_DIR, "libblas.so.3")))
    sk[["openblas"]] <- run_python(paste0("LD_LIBRARY_PATH=", OPENBLAS_DIR))
}
unlink(dir, recursive = TRUE)
fmt <- function(v) ifelse(is.na(v), "n/a", sprintf("%.3f", v))
out <- c("# The transform in a default call against scikit-learn",
         "",
         sprintf("Recorded %s by `Rscript bench/investigations/default_transform.R`. Machine: %s, %d cores; %s; R's BLAS: %s; `bochner_threads()` = %d; load average at the end %s.",
                 format(Sys.Date()), sub(".*: ", "", grep("model name", readLines("/proc/cpuinfo"), value = TRUE)[1]),
                 parallel::detectCores(), R.version.string, extSoftVersion()[["BLAS"]],
                 bochner_threads(), paste(readLines("/proc/loadavg"), collapse = "")),
         "",
         sprintf("n = %d, d = %d, D = %d, the same data and frequencies; median of %d runs.", n, d, D, reps),
         "",
         "| contender | seconds | bochner / it |",
         "|---|---:|---:|",
         sprintf("| bochner `predict(map, x)` (default threads) | %s | |", fmt(bochner_s)),
         sprintf("| scikit-learn `RBFSampler.transform`, numpy's default BLAS | %s | %s |", fmt(sk[["default"]]), fmt(bochner_s / sk[["default"]])),
         sprintf("| scikit-learn `RBFSampler.transform`, OpenBLAS (its default threads) | %s | %s |", fmt(sk[["openblas"]]), fmt(bochner_s / sk[["openblas"]])))
if (!have_sklearn) out <- c(out, "", "scikit-learn is not installed for /usr/bin/python3 here: its rows are n/a.")
writeLines(out, "bench/investigations/default_transform.md")
cat(out, sep = "\n")
