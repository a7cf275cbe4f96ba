# Stress: a feature matrix with more than 2^31 entries.
#
#   Rscript bench/investigations/stress.R            (needs about 18 GB of free memory)
#   STRESS_N=1100000 STRESS_D=2000 Rscript bench/investigations/stress.R
#
# Fits a Gaussian random Fourier feature map (phase map) with D = 2000 on
# n = 1.1e6 points in d = 3 dimensions and computes Z = predict(map, x):
# n * D = 2.2e9 entries (17.6 GB), beyond 2^31 = 2.147e9, so every index
# and offset into Z must be 64-bit (R_xlen_t / ptrdiff_t).  Sampled entries
# -- the first and last rows and columns, random ones, and those around
# linear index 2^31 (column floor(2^31 / n) and the next) and 2^32 if
# reached -- are checked against a plain-R computation of
# sqrt(2 / D) cos(x_i . w_j + b_j).  Prints the time and the peak memory
# (VmHWM from /proc/self/status).  Not part of the test suite; results are
# recorded in bench/investigations/stress.md.
suppressPackageStartupMessages(library(bochner))

n <- as.numeric(Sys.getenv("STRESS_N", "1100000"))
D <- as.integer(Sys.getenv("STRESS_D", "2000"))
d <- 3L
nthreads <- as.integer(Sys.getenv("STRESS_THREADS", "2"))

vm <- function(field) {
  line <- grep(paste0("^", field, ":"), readLines("/proc/self/status"), value = TRUE)
  as.numeric(gsub("[^0-9]", "", line)) / 1024^2   # GB
}
avail_gb <- function() {
  line <- grep("^MemAvailable:", readLines("/proc/meminfo"), value = TRUE)
  as.numeric(gsub("[^0-9]", "", line)) / 1024^2
}

need_gb <- 8 * n * D / 1024^3
cat(sprintf("n = %.0f, d = %d, D = %d: n * D = %.4g entries (2^31 = %.4g), Z needs %.1f GB\n",
            n, d, D, n * D, 2^31, need_gb))
cat(sprintf("memory available before: %.1f GB\n", avail_gb()))
if (avail_gb() < need_gb + 1) stop("not enough free memory for this run")

set.seed(20240611)
x <- matrix(rnorm(n * d), n, d)
map <- random_features(x, gaussian_kernel(sigma = 1), D = D, type = "phase", seed = 1)

invisible(gc(reset = TRUE))
t_predict <- system.time(Z <- predict(map, x, nthreads = nthreads))
cat(sprintf("predict: %.1f s elapsed (%.1f s CPU) on %d thread(s); dim(Z) = %.0f x %d\n",
            t_predict[["elapsed"]], t_predict[["user.self"]] + t_predict[["sys.self"]],
            nthreads, nrow(Z), ncol(Z)))
stopifnot(nrow(Z) == n, ncol(Z) == D, is.double(Z))

# entries to check: (row, column) pairs, 1-based
ni <- as.integer(n)
lin_to_rc <- function(l) cbind(row = (l - 1) %% n + 1, col = (l - 1) %/% n + 1)
around <- function(l) l + c(-2, -1, 0, 1, 2)
boundaries <- c(2^31 - 1, 2^31, 2^31 + 1)   # 0-based offsets 2^31 - 1 .. 2^31 + 1 (as 1-based l)
if (n * D > 2^32 + 2) boundaries <- c(boundaries, 2^32 - 1, 2^32, 2^32 + 1)
pairs <- rbind(
  cbind(row = c(1, 1, ni, ni), col = c(1, D, 1, D)),
  lin_to_rc(unlist(lapply(boundaries, around))),
  # whole rows across the boundary columns, rows at both ends
  cbind(row = c(1, 2, ni - 1, ni, sample.int(ni, 20)),
        col = floor(2^31 / n) + 1),
  cbind(row = c(1, 2, ni - 1, ni, sample.int(ni, 20)),
        col = floor(2^31 / n) + 2),
  cbind(row = sample.int(ni, 200, replace = TRUE), col = sample.int(D, 200, replace = TRUE))
)
pairs <- pairs[pairs[, "col"] <= D, , drop = FALSE]
lin <- (pairs[, "col"] - 1) * n + pairs[, "row"]   # 1-based linear index into Z

t_check <- system.time({
  got <- Z[lin]                       # linear (double) indexing beyond 2^31
  got2 <- Z[cbind(pairs[, "row"], pairs[, "col"])]
  want <- sqrt(2 / D) * cos(rowSums(x[pairs[, "row"], , drop = FALSE] *
                                    t(map$omega[, pairs[, "col"], drop = FALSE])) +
                            map$phase[pairs[, "col"]])
})
err <- max(abs(got - want))
cat(sprintf("checked %d entries (%d at or beyond linear index 2^31): max |error| = %.3g\n",
            length(lin), sum(lin > 2^31), err))
cat(sprintf("  linear and matrix indexing agree: %s\n", identical(got, got2)))
# a whole column beyond the boundary, against the plain-R formula
j <- as.integer(min(D, floor(2^31 / n) + 2))
colj <- Z[, j]
wantj <- sqrt(2 / D) * cos(drop(x %*% map$omega[, j]) + map$phase[j])
errj <- max(abs(colj - wantj))
cat(sprintf("  column %d (starts at linear index %.0f%s): max |error| = %.3g over %d rows\n",
            j, (j - 1) * n + 1, if ((j - 1) * n + 1 > 2^31) ", beyond 2^31" else "", errj, ni))
# the last column's sum through R's own long-vector code
cat(sprintf("  sum of the last column: %.6g (plain R: %.6g)\n", sum(Z[, D]),
            sum(sqrt(2 / D) * cos(drop(x %*% map$omega[, D]) + map$phase[D]))))

ok <- err < 1e-12 && errj < 1e-12 && identical(got, got2)
cat(sprintf("peak memory (VmHWM): %.2f GB; Z itself %.2f GB\n", vm("VmHWM"), need_gb))
cat(if (ok) "STRESS OK\n" else "STRESS FAILED\n")
if (!ok) quit(status = 1)
