# Benchmark: the feature maps against each other and against scikit-learn, in
# one run.  Every scheme is
#   iid, orthogonal, structured, qmc   random_features(x, kernel, D, sampling = ...)
#   nystrom_uniform / _kmeans / _leverage   nystrom_features(x, kernel, m = D, landmarks = ...)
# and each call is wrapped in tryCatch(): a scheme this build of bochner does
# not have (or that does not apply, e.g. orthogonal for the Laplace kernel)
# is "n/a" in the tables, with the reason underneath, and the run goes on.
#
# Sections of bench/investigations/maps.md (sizes at BOCHNER_BENCH_SCALE = 1):
#   1. Approximation error of Z Z' against the exact Gram matrix K
#      (kernel_approx_error(map, xs): K from kernel_matrix()), rms and max over
#      a fixed random sample xs of 1000 rows of each data set, mean over seeds
#      1:3, against D.  Maps are fitted on the whole (standardised) data set;
#      the Gaussian kernel's sigma is the median heuristic on xs, resolved once
#      (attr(kernel_matrix(gaussian_kernel("median"), xs), "sigma")) and then
#      given as a number everywhere.  D in {d, 2d, 4d, 8d} with d replaced by
#      16 where d < 16, capped at 4096; for d <= 8 the grid runs to 512 (6
#      points) so that a slope can be fitted.  Nystrom uses m = D up to 1024
#      (m = 2048 costs ~10 s per eigendecomposition under the reference
#      LAPACK; larger m are "skipped").  Gaussian kernel, phase map (the
#      default, D columns, as many as Nystrom's m) and pair map (2 D
#      columns, Fourier schemes only); Matern (nu = 1.5) and Laplace on
#      Satellite, each with its own median sigma.
#      Data: kernlab::spam (57 columns), mlbench::Satellite (36), a USPS-like
#      digits set if an installed package has one (ElemStatLearn::zip.train;
#      else skipped with a note), a synthetic Gaussian mixture with d = 512
#      (n = 4000, 10 components of unequal weight) and one with d = 4
#      (n = 5000, 6 components).  All columns standardised.
#   2. scikit-learn in the same run (/usr/bin/python3, skipped cleanly if
#      sklearn is missing): RBFSampler and Nystroem (uniform landmarks, same
#      m, gamma = 1 / (2 sigma^2)) errors on the same samples and seeds
#      (data passed as binary files), and Nystrom fit + transform time on
#      every row of each data set with m = 1000 (median of 3), bochner
#      against sklearn.
#   3. Transform time of "structured" against the dense "iid" (and
#      "orthogonal") maps: predict() on n = 5000 rows, D = 4096, d in {64,
#      128, 256, 512, 1024}, at 1 thread and at the default threads, median
#      of 3; with the rms error of each at that D on 500 of the rows
#      (mean of 3 seeds).
#   4. Downstream: test accuracy of rff_ridge(x_train, y_train, map = map)
#      with each scheme at D = 1024 on spam (type) and Satellite (classes);
#      70/30 split, standardised with the training means and sds, maps fitted
#      on the standardised training rows; lambda chosen once per data set on
#      a validation split of the training rows with the iid map, from
#      {1e-4, 1e-3, 1e-2, 1e-1} x n (n the rows fitted), and used for every
#      scheme; mean over seeds 1:3.
#   A summary at the top of bench/investigations/maps.md checks the goals of the issue, each
#   PASS/FAIL with the measured numbers.
#
# Run from the package root after installing the package (`make bench` does
# both):
#     Rscript bench/investigations/maps.R
# Takes about 9 minutes on 2 cores (estimated from its parts: the largest are
# the k-means++ Nystrom landmarks at d = 512, ~2 minutes, and the Nystrom
# fits of part 4, ~1.5 minutes).  BOCHNER_BENCH_SCALE (default 1) below 1
# is a smoke run: smaller samples, D, n and one seed; the table says so.
#     BOCHNER_BENCH_SCALE=0.02 Rscript bench/investigations/maps.R     # under a minute
# BOCHNER_BENCH_MD sets the output file (default bench/investigations/maps.md).

t_start <- Sys.time()
load_start <- paste(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3], collapse = "/")
suppressPackageStartupMessages(library(bochner))

scale <- local({
  s <- Sys.getenv("BOCHNER_BENCH_SCALE", "1")
  v <- suppressWarnings(as.numeric(s))
  if (length(v) != 1L || !is.finite(v) || v <= 0) stop("BOCHNER_BENCH_SCALE must be a positive number, not '", s, "'")
  min(v, 1)
})
smoke <- scale < 1
pow2 <- function(v) as.integer(2^round(log2(v)))
N_SAMPLE <- if (smoke) max(100L, as.integer(round(1000 * scale))) else 1000L
D_CAP <- if (smoke) max(64L, pow2(4096 * scale)) else 4096L
NYS_CAP <- if (smoke) min(D_CAP, N_SAMPLE) else 1024L
SEEDS <- if (smoke) 1L else 1:3
N_SYN <- if (smoke) max(500L, as.integer(round(5000 * scale))) else 5000L
N_SYN512 <- if (smoke) N_SYN else 4000L             # d = 512: k-means++ landmarks cost ~30 ms each at n = 5000
M_TIME <- if (smoke) 100L else 1000L                  # Nystrom timing: m
T_N <- if (smoke) 500L else 5000L                    # structured timing: n, D, d
T_D <- if (smoke) 256L else 4096L
T_DIMS <- if (smoke) c(64L, 128L) else c(64L, 128L, 256L, 512L, 1024L)
T_ERR_N <- if (smoke) 100L else 500L
DOWN_D <- if (smoke) 128L else 1024L
DOWN_N <- if (smoke) 800L else Inf                   # rows of spam / Satellite used downstream
REPS <- 3L
NTHREADS <- bochner_threads()
PYTHON <- "/usr/bin/python3"
MD <- Sys.getenv("BOCHNER_BENCH_MD", file.path("bench", "maps.md"))

FOURIER <- c("iid", "orthogonal", "structured", "qmc")
NYSTROM <- c("nystrom_uniform", "nystrom_kmeans", "nystrom_leverage")
SCHEMES <- c(FOURIER, NYSTROM)

failures <- new.env()            # scheme -> distinct error messages
note_failure <- function(scheme, msg) {
  msg <- gsub("[\r\n]+", " ", msg)
  failures[[scheme]] <- unique(c(failures[[scheme]], msg))
}

# Fits the map of a scheme; NULL (and the reason noted) when it fails.
fit_map <- function(scheme, x, kernel, D, seed, type = "phase") {
  tryCatch({
    if (scheme %in% FOURIER) {
      random_features(x, kernel, D = D, type = type, sampling = scheme, seed = seed)
    } else {
      if (!exists("nystrom_features", mode = "function"))
        stop("nystrom_features() is not in this build of bochner")
      nystrom_features(x, kernel, m = D, landmarks = sub("nystrom_", "", scheme), seed = seed)
    }
  }, error = function(e) { note_failure(scheme, conditionMessage(e)); NULL })
}

approx_error <- function(map, xs) {
  if (is.null(map)) return(c(rms = NA_real_, max = NA_real_))
  e <- kernel_approx_error(map, xs)
  c(rms = e$rms, max = e$max)
}

standardise <- function(x, centre = colMeans(x), sds = apply(x, 2, stats::sd)) {
  sds[!is.finite(sds) | sds == 0] <- 1
  sweep(sweep(x, 2, centre, "-"), 2, sds, "/")
}

mixture <- function(n, d, k, seed) {
  set.seed(seed)
  w <- (1:k)^-1.5
  centres <- matrix(stats::rnorm(k * d, sd = 1.5), k)
  spread <- stats::runif(k, 0.5, 1.5)
  g <- sample.int(k, n, replace = TRUE, prob = w)
  centres[g, , drop = FALSE] + matrix(stats::rnorm(n * d), n) * spread[g]
}

d_grid <- function(d) {
  base <- max(16L, d)
  g <- base * 2^(0:(if (d <= 8) 5 else 3))
  g <- if (smoke) pmin(g, D_CAP) else pmin(g, 4096L)
  unique(as.integer(g))
}

median_sigma <- function(kernel, xs) attr(kernel_matrix(kernel, xs), "sigma")

secs <- function(expr) { gc(FALSE); system.time(expr)[["elapsed"]] }
median_time <- function(f, reps = REPS) stats::median(vapply(seq_len(reps), function(i) secs(f()), 0))

# ---------------------------------------------------------------------------
# data

data_notes <- character()
datasets <- list()
data(spam, package = "kernlab", envir = environment())
datasets$spam <- list(x = standardise(as.matrix(spam[, 1:57])), y = spam$type, what = "kernlab::spam, 57 numeric columns")
data(Satellite, package = "mlbench", envir = environment())
datasets$Satellite <- list(x = standardise(as.matrix(Satellite[, 1:36])), y = Satellite$classes,
                           what = "mlbench::Satellite, 36 numeric columns")
if (requireNamespace("ElemStatLearn", quietly = TRUE)) {
  zip <- get(utils::data("zip.train", package = "ElemStatLearn", envir = environment()))
  datasets$USPS <- list(x = standardise(as.matrix(zip[, -1])), what = "ElemStatLearn::zip.train (USPS digits), 256 columns")
} else {
  data_notes <- c(data_notes, paste0("USPS-like digits: skipped, no installed package has such a data set ",
                                     "(ElemStatLearn, which has the USPS `zip.train`, is not installed)."))
}
datasets$mix512 <- list(x = standardise(mixture(N_SYN512, 512L, 10L, 11)),
                        what = sprintf("synthetic Gaussian mixture, d = 512, n = %d, 10 components", N_SYN512))
datasets$mix4 <- list(x = standardise(mixture(N_SYN, 4L, 6L, 12)),
                      what = sprintf("synthetic Gaussian mixture, d = 4, n = %d, 6 components", N_SYN))
for (i in seq_along(datasets)) {
  set.seed(100 + i)
  ds <- datasets[[i]]
  ds$sample <- sort(sample.int(nrow(ds$x), min(N_SAMPLE, nrow(ds$x))))
  ds$xs <- ds$x[ds$sample, , drop = FALSE]
  ds$sigma <- median_sigma(gaussian_kernel("median"), ds$xs)
  datasets[[i]] <- ds
}
cat(sprintf("bench/investigations/maps.R: scale %g, sample %d rows, seeds %s, data sets %s\n", scale, N_SAMPLE,
            paste(SEEDS, collapse = ","), paste(names(datasets), collapse = ", ")))

# ---------------------------------------------------------------------------
# 1. error against D

error_rows <- function(dsname, x, xs, kernel, kname, type, schemes, grid) {
  rows <- list()
  for (D in grid) for (s in schemes) {
    if (s %in% NYSTROM && (D > NYS_CAP || D > nrow(x))) {
      rows[[length(rows) + 1L]] <- data.frame(data = dsname, kernel = kname, type = type, D = D, scheme = s,
                                              rms = NA_real_, max = NA_real_, status = "skipped", seeds = 0L)
      next
    }
    e <- vapply(SEEDS, function(seed) approx_error(fit_map(s, x, kernel, D, seed, type), xs), c(rms = 0, max = 0))
    e <- matrix(e, nrow = 2, dimnames = list(c("rms", "max"), NULL))
    ok <- !is.na(e["rms", ])
    rows[[length(rows) + 1L]] <- data.frame(data = dsname, kernel = kname, type = type, D = D, scheme = s,
                                            rms = if (any(ok)) mean(e["rms", ok]) else NA_real_,
                                            max = if (any(ok)) mean(e["max", ok]) else NA_real_,
                                            status = if (all(ok)) "ok" else if (any(ok)) "partial" else "n/a",
                                            seeds = sum(ok))
  }
  do.call(rbind, rows)
}

# per-seed rms for the slope fit (qmc and iid, small d)
seed_rms <- function(x, xs, kernel, type, scheme, grid) {
  do.call(rbind, lapply(grid, function(D) do.call(rbind, lapply(SEEDS, function(seed) {
    data.frame(D = D, seed = seed, rms = approx_error(fit_map(scheme, x, kernel, D, seed, type), xs)[["rms"]])
  }))))
}

err <- list()
slopes <- list()
for (nm in names(datasets)) {
  ds <- datasets[[nm]]
  k <- gaussian_kernel(ds$sigma)
  grid <- d_grid(ncol(ds$x))
  cat(sprintf("  errors: %s (d = %d, D in %s)\n", nm, ncol(ds$x), paste(grid, collapse = ",")))
  err[[length(err) + 1L]] <- error_rows(nm, ds$x, ds$xs, k, "gaussian", "phase", SCHEMES, grid)
  err[[length(err) + 1L]] <- error_rows(nm, ds$x, ds$xs, k, "gaussian", "pair", FOURIER, grid)
  if (ncol(ds$x) <= 8) {
    for (type in c("phase", "pair")) for (s in c("iid", "qmc")) {
      slopes[[length(slopes) + 1L]] <- cbind(data = nm, type = type, scheme = s,
                                             seed_rms(ds$x, ds$xs, k, type, s, grid))
    }
  }
}
other_kernels <- list()
if ("Satellite" %in% names(datasets)) {
  ds <- datasets$Satellite
  grid <- d_grid(ncol(ds$x))
  mk <- matern_kernel(median_sigma(matern_kernel("median", 1.5), ds$xs), 1.5)
  lk <- laplace_kernel(median_sigma(laplace_kernel("median"), ds$xs))
  other_kernels <- list(matern = mk, laplace = lk)
  cat("  errors: Satellite, Matern 1.5 and Laplace\n")
  err[[length(err) + 1L]] <- error_rows("Satellite", ds$x, ds$xs, mk, "matern", "phase",
                                        c("iid", "orthogonal", "qmc", NYSTROM), grid)
  err[[length(err) + 1L]] <- error_rows("Satellite", ds$x, ds$xs, lk, "laplace", "phase",
                                        c("iid", "orthogonal", "qmc", NYSTROM), grid)
}
err <- do.call(rbind, err)
lap <- function(name) section_times[[name]] <<- as.double(difftime(Sys.time(), t_start, units = "mins"))
section_times <- list()
lap("errors")
slopes <- if (length(slopes)) do.call(rbind, slopes) else NULL

# ---------------------------------------------------------------------------
# 2. scikit-learn

have_sklearn <- identical(suppressWarnings(system2(PYTHON, c("-c", shQuote("import sklearn")),
                                                   stdout = FALSE, stderr = FALSE)), 0L)
sk_err <- NULL; sk_time <- NULL; sk_version <- NA_character_; sk_note <- character()
py_dir <- tempfile("bochner-maps-")
dir.create(py_dir)
if (have_sklearn) {
  manifest <- character()
  for (nm in names(datasets)) {
    ds <- datasets[[nm]]
    writeBin(as.vector(t(ds$x)), file.path(py_dir, paste0(nm, ".x")))
    writeBin(as.integer(ds$sample - 1L), file.path(py_dir, paste0(nm, ".idx")))
    grid <- d_grid(ncol(ds$x))
    manifest <- c(manifest, paste(nm, nrow(ds$x), ncol(ds$x), sprintf("%.17g", 1 / (2 * ds$sigma^2)),
                                  paste(grid, collapse = ","), sep = "\t"))
  }
  writeLines(manifest, file.path(py_dir, "manifest.tsv"))
  py <- sprintf('
import time, statistics, warnings, numpy as np, sklearn
from sklearn.kernel_approximation import RBFSampler, Nystroem
warnings.simplefilter("ignore")
dir, seeds, nys_cap, m_time, reps = "%s", [%s], %d, %d, %d
out = open(dir + "/errors.csv", "w"); out.write("data,method,D,seed,rms,max,seconds\\n")
tim = open(dir + "/times.csv", "w"); tim.write("data,method,m,seconds\\n")
for line in open(dir + "/manifest.tsv"):
    name, n, d, gamma, grid = line.rstrip("\\n").split("\\t")
    n, d, gamma = int(n), int(d), float(gamma)
    grid = [int(v) for v in grid.split(",")]
    x = np.fromfile(dir + "/" + name + ".x").reshape(n, d)
    xs = x[np.fromfile(dir + "/" + name + ".idx", dtype=np.int32)]
    sq = (xs * xs).sum(1)
    K = np.exp(-gamma * np.maximum(sq[:, None] + sq[None, :] - 2 * xs @ xs.T, 0))
    np.fill_diagonal(K, 1.0)
    for D in grid:
        for seed in seeds:
            for method in ("RBFSampler", "Nystroem"):
                if method == "Nystroem" and (D > nys_cap or D > n):
                    continue
                t0 = time.perf_counter()
                if method == "RBFSampler":
                    z = RBFSampler(gamma=gamma, n_components=D, random_state=seed).fit(x).transform(xs)
                else:
                    z = Nystroem(kernel="rbf", gamma=gamma, n_components=D, random_state=seed).fit(x).transform(xs)
                t = time.perf_counter() - t0
                E = z @ z.T - K
                out.write("%%s,%%s,%%d,%%d,%%.10g,%%.10g,%%.6g\\n" %% (name, method, D, seed, np.sqrt(np.mean(E * E)), np.abs(E).max(), t))
    m = min(m_time, n)
    ts = []
    for r in range(reps):
        t0 = time.perf_counter()
        Nystroem(kernel="rbf", gamma=gamma, n_components=m, random_state=r).fit(x).transform(x)
        ts.append(time.perf_counter() - t0)
    tim.write("%%s,Nystroem,%%d,%%.6g\\n" %% (name, m, statistics.median(ts)))
    ts = []
    for r in range(reps):
        t0 = time.perf_counter()
        RBFSampler(gamma=gamma, n_components=m, random_state=r).fit(x).transform(x)
        ts.append(time.perf_counter() - t0)
    tim.write("%%s,RBFSampler,%%d,%%.6g\\n" %% (name, m, statistics.median(ts)))
    out.flush(); tim.flush()
print(sklearn.__version__, np.__version__)
', py_dir, paste(SEEDS, collapse = ", "), NYS_CAP, M_TIME, REPS)
  writeLines(py, file.path(py_dir, "sk.py"))
  cat("  scikit-learn ...\n")
  py_out <- suppressWarnings(system2(PYTHON, file.path(py_dir, "sk.py"), stdout = TRUE, stderr = TRUE))
  st <- attr(py_out, "status")
  if (!is.null(st) && st != 0L) {
    sk_note <- sprintf("the scikit-learn script failed (exit status %s): %s", st,
                       paste(utils::tail(py_out, 3L), collapse = " "))
  } else {
    sk_version <- utils::tail(py_out, 1L)
  }
  if (file.exists(file.path(py_dir, "errors.csv"))) {
    e <- utils::read.csv(file.path(py_dir, "errors.csv"), stringsAsFactors = FALSE)
    if (nrow(e)) {
      sk_err <- stats::aggregate(cbind(rms, max, seconds) ~ data + method + D, data = e, FUN = mean)
    }
    sk_time <- utils::read.csv(file.path(py_dir, "times.csv"), stringsAsFactors = FALSE)
  }
} else {
  sk_note <- sprintf("scikit-learn is not installed for %s: its columns are n/a.", PYTHON)
}
unlink(py_dir, recursive = TRUE)
lap("scikit-learn")

# bochner's side of the Nystrom timing: fit + transform on every row, m = M_TIME
cat("  Nystrom timing ...\n")
by_time <- do.call(rbind, lapply(names(datasets), function(nm) {
  ds <- datasets[[nm]]
  k <- gaussian_kernel(ds$sigma)
  m <- min(M_TIME, nrow(ds$x))
  one <- function(s, nthreads) {
    ok <- !is.null(fit_map(s, ds$x[1:min(50L, nrow(ds$x)), , drop = FALSE], k, min(m, 10L), 1L))
    if (!ok) return(NA_real_)
    median_time(function() {
      map <- if (s == "iid") random_features(ds$x, k, D = m, seed = 1) else
        nystrom_features(ds$x, k, m = m, landmarks = "uniform", seed = 1, nthreads = nthreads)
      predict(map, ds$x, nthreads = nthreads)
    })
  }
  data.frame(data = nm, n = nrow(ds$x), m = m,
             nys_1 = one("nystrom_uniform", 1L), nys_def = one("nystrom_uniform", NTHREADS),
             iid_1 = one("iid", 1L), iid_def = one("iid", NTHREADS))
}))

lap("Nystrom timing")

# ---------------------------------------------------------------------------
# 3. structured against dense: transform time and error

cat("  structured timing ...\n")
timing <- do.call(rbind, lapply(T_DIMS, function(d) {
  set.seed(200 + d)
  x <- matrix(stats::rnorm(T_N * d), T_N, d)
  xe <- x[seq_len(T_ERR_N), , drop = FALSE]
  k <- gaussian_kernel(median_sigma(gaussian_kernel("median"), xe))
  row <- data.frame(d = d, n = T_N, D = T_D)
  for (s in c("iid", "orthogonal", "structured")) {
    map <- fit_map(s, x, k, T_D, 1L)
    for (nt in unique(c(1L, NTHREADS))) {
      col <- paste0(s, "_t", if (nt == 1L) "1" else "def")
      row[[col]] <- if (is.null(map)) NA_real_ else median_time(function() predict(map, x, nthreads = nt))
    }
    if (NTHREADS == 1L) row[[paste0(s, "_tdef")]] <- row[[paste0(s, "_t1")]]
    row[[paste0(s, "_rms")]] <- mean(vapply(SEEDS, function(seed)
      approx_error(fit_map(s, x, k, T_D, seed), xe)[["rms"]], 0))
  }
  row
}))

lap("structured timing")

# ---------------------------------------------------------------------------
# 4. downstream accuracy of rff_ridge(map = )

cat("  downstream ...\n")
down <- list(); down_setup <- list()
for (nm in intersect(c("spam", "Satellite"), names(datasets))) {
  src <- if (nm == "spam") spam else Satellite
  X <- as.matrix(src[, seq_len(ncol(src) - 1L)])
  y <- droplevels(src[[ncol(src)]])
  set.seed(300)
  use <- if (is.finite(DOWN_N) && nrow(X) > DOWN_N) sort(sample.int(nrow(X), DOWN_N)) else seq_len(nrow(X))
  X <- X[use, ]; y <- y[use]
  tr <- sort(sample.int(nrow(X), round(0.7 * nrow(X))))
  mu <- colMeans(X[tr, ]); sds <- apply(X[tr, ], 2, stats::sd)
  xtr <- standardise(X[tr, ], mu, sds); xte <- standardise(X[-tr, ], mu, sds)
  ytr <- y[tr]; yte <- y[-tr]
  set.seed(301)
  sig <- median_sigma(gaussian_kernel("median"), xtr[sort(sample.int(nrow(xtr), min(1000L, nrow(xtr)))), ])
  k <- gaussian_kernel(sig)
  # lambda on a validation split of the training rows, iid map, seed 1
  fit_rows <- sort(sample.int(nrow(xtr), round(0.8 * nrow(xtr))))
  vmap <- random_features(xtr[fit_rows, ], k, D = DOWN_D, seed = 1)
  factors <- c(1e-4, 1e-3, 1e-2, 1e-1)
  vacc <- vapply(factors, function(f) tryCatch({
    fit <- rff_ridge(xtr[fit_rows, ], ytr[fit_rows], map = vmap, lambda = f * length(fit_rows))
    mean(predict(fit, xtr[-fit_rows, ]) == ytr[-fit_rows])
  }, error = function(e) { note_failure("iid", paste("rff_ridge(map =):", conditionMessage(e))); NA_real_ }), 0)
  fbest <- if (all(is.na(vacc))) 1e-2 else factors[which.max(vacc)]
  lambda <- fbest * nrow(xtr)
  down_setup[[nm]] <- data.frame(data = nm, n_train = nrow(xtr), n_test = nrow(xte), sigma = sig,
                                 factor = fbest, lambda = lambda,
                                 validation = paste(sprintf("%g: %.2f", factors, 100 * vacc), collapse = "; "))
  for (s in SCHEMES) {
    acc <- vapply(SEEDS, function(seed) {
      map <- fit_map(s, xtr, k, DOWN_D, seed)
      if (is.null(map)) return(NA_real_)
      tryCatch({
        fit <- rff_ridge(xtr, ytr, map = map, lambda = lambda)
        mean(predict(fit, xte) == yte)
      }, error = function(e) { note_failure(s, conditionMessage(e)); NA_real_ })
    }, 0)
    ok <- !is.na(acc)
    down[[length(down) + 1L]] <- data.frame(data = nm, scheme = s,
                                            acc = if (any(ok)) 100 * mean(acc[ok]) else NA_real_,
                                            lo = if (any(ok)) 100 * min(acc[ok]) else NA_real_,
                                            hi = if (any(ok)) 100 * max(acc[ok]) else NA_real_)
  }
}
down <- do.call(rbind, down)
down_setup <- do.call(rbind, down_setup)
lap("downstream")

# ---------------------------------------------------------------------------
# summary: the issue's goals

fmt <- function(v, digits = 4) ifelse(is.na(v), "n/a", formatC(v, format = "g", digits = digits))
fmt2 <- function(v) ifelse(is.na(v), "n/a", sprintf("%.2f", v))
fmt_s <- function(v) ifelse(is.na(v), "n/a", sprintf("%.3f", v))
verdict <- function(ok) if (is.na(ok)) "n/a" else if (ok) "PASS" else "FAIL"
get_err <- function(dsn, kn, type, s, D, what = "rms") {
  r <- err[err$data == dsn & err$kernel == kn & err$type == type & err$scheme == s & err$D == D, what]
  if (length(r)) r[1] else NA_real_
}

summary_lines <- character()
# (a) orthogonal <= 0.75 x iid, D in [d, 8d], every data set
for (type in c("pair", "phase")) {
  parts <- character(); oks <- logical()
  for (nm in names(datasets)) {
    d <- ncol(datasets[[nm]]$x)
    Ds <- d_grid(d); Ds <- Ds[Ds >= d & Ds <= 8 * d]
    if (!length(Ds)) { parts <- c(parts, sprintf("%s: no D in [d, 8d] at this scale", nm)); next }
    r <- vapply(Ds, function(D) get_err(nm, "gaussian", type, "orthogonal", D) / get_err(nm, "gaussian", type, "iid", D), 0)
    worst <- if (all(is.na(r))) NA_real_ else max(r, na.rm = TRUE)
    oks <- c(oks, if (anyNA(r)) NA else all(r <= 0.75))
    parts <- c(parts, sprintf("%s %s (D %d-%d)", nm, fmt2(worst), min(Ds), max(Ds)))
  }
  ok <- if (anyNA(oks)) NA else all(oks)
  summary_lines <- c(summary_lines, sprintf(
    "| (a) Gaussian, %s map: orthogonal rms <= 0.75 x iid for every D in [d, 8d], every data set | %s | worst ratio orthogonal / iid: %s |",
    type, verdict(ok), paste(parts, collapse = "; ")))
}
# (b) qmc slope steeper than -1/2 for d <= 8
fit_slope <- function(sub) {
  sub <- sub[is.finite(sub$rms) & sub$rms > 0, ]
  if (nrow(sub) < 3L || length(unique(sub$D)) < 2L) return(c(slope = NA_real_, se = NA_real_))
  f <- summary(stats::lm(log(rms) ~ log(D), data = sub))$coefficients
  c(slope = f[2, 1], se = if (nrow(sub) > 2L) f[2, 2] else NA_real_)
}
slope_tab <- NULL
if (!is.null(slopes)) {
  slope_tab <- do.call(rbind, lapply(split(slopes, list(slopes$data, slopes$type, slopes$scheme), drop = TRUE), function(s) {
    f <- fit_slope(s)
    data.frame(data = s$data[1], type = s$type[1], scheme = s$scheme[1], Dmin = min(s$D), Dmax = max(s$D),
               points = sum(is.finite(s$rms)), slope = f[["slope"]], se = f[["se"]])
  }))
  for (type in c("phase", "pair")) {
    q <- slope_tab[slope_tab$type == type & slope_tab$scheme == "qmc", ]
    i <- slope_tab[slope_tab$type == type & slope_tab$scheme == "iid", ]
    ok <- if (!nrow(q) || anyNA(q$slope)) NA else all(q$slope + 2 * q$se < -0.5)
    summary_lines <- c(summary_lines, sprintf(
      "| (b) qmc, %s map, d <= 8: slope of log rms against log D steeper than -1/2 (slope + 2 SE < -0.5) | %s | %s |",
      type, verdict(ok), paste(sprintf("%s: qmc %s ± %s (iid %s), D %d-%d", q$data, fmt2(q$slope), fmt2(q$se),
                                       fmt2(i$slope[match(q$data, i$data)]), q$Dmin, q$Dmax), collapse = "; ")))
  }
} else {
  summary_lines <- c(summary_lines, "| (b) qmc slope, d <= 8 | n/a | no data set with d <= 8 |")
}
# (c) structured >= 3x faster than dense at d >= 512, rms within 10% of orthogonal
big <- timing[timing$d >= 512, ]
if (nrow(big)) {
  sp1 <- big$iid_t1 / big$structured_t1; spd <- big$iid_tdef / big$structured_tdef
  rr <- big$structured_rms / big$orthogonal_rms
  ok <- if (anyNA(c(sp1, spd, rr))) NA else all(sp1 >= 3 & spd >= 3 & abs(rr - 1) <= 0.1)
  summary_lines <- c(summary_lines, sprintf(
    "| (c) structured >= 3x faster than dense (iid) at d >= 512, rms within 10%% of orthogonal (n = %d, D = %d) | %s | %s |",
    T_N, T_D, verdict(ok), paste(sprintf("d = %d: speedup %s (1 thread), %s (%d threads); rms structured / orthogonal %s",
                                         big$d, fmt2(sp1), fmt2(spd), NTHREADS, fmt2(rr)), collapse = "; ")))
} else {
  summary_lines <- c(summary_lines, sprintf("| (c) structured >= 3x faster at d >= 512 | n/a | not measured at this scale (d up to %d) |", max(T_DIMS)))
}
# (d) nystrom uniform ~ sklearn Nystroem, and faster
if (!is.null(sk_err)) {
  cmp <- merge(err[err$kernel == "gaussian" & err$type == "phase" & err$scheme == "nystrom_uniform", c("data", "D", "rms")],
               sk_err[sk_err$method == "Nystroem", c("data", "D", "rms")], by = c("data", "D"), suffixes = c("", "_sk"))
  cmp$ratio <- cmp$rms / cmp$rms_sk
  tm <- merge(by_time, sk_time[sk_time$method == "Nystroem", c("data", "seconds")], by = "data")
  gm <- tapply(cmp$ratio, cmp$data, function(r) exp(mean(log(r))))
  ok_err <- if (!nrow(cmp) || anyNA(cmp$ratio)) NA else all(gm >= 0.8 & gm <= 1.25)
  ok_time <- if (!nrow(tm) || anyNA(tm$nys_def)) NA else all(tm$nys_def < tm$seconds)
  ok <- if (is.na(ok_err) || is.na(ok_time)) NA else ok_err && ok_time
  summary_lines <- c(summary_lines, sprintf(
    "| (d) Nystrom uniform rms within 0.8-1.25 x sklearn Nystroem's at equal m (geometric mean of the ratio over m, per data set), and fit + transform faster (m = %d, all rows, bochner's default threads) | %s | rms bochner / sklearn: %s (single cells %s to %s); time bochner / sklearn: %s |",
    M_TIME, verdict(ok), paste(sprintf("%s %s", names(gm), fmt2(gm)), collapse = "; "),
    fmt2(suppressWarnings(min(cmp$ratio, na.rm = TRUE))), fmt2(suppressWarnings(max(cmp$ratio, na.rm = TRUE))), paste(sprintf("%s %s s / %s s", tm$data, fmt_s(tm$nys_def), fmt_s(tm$seconds)), collapse = "; ")))
} else {
  summary_lines <- c(summary_lines, "| (d) Nystrom uniform against sklearn Nystroem | n/a | scikit-learn not run |")
}
# (e) leverage lower than uniform on >= 3 data sets
lev <- vapply(names(datasets), function(nm) {
  e <- err[err$data == nm & err$kernel == "gaussian" & err$type == "phase", ]
  u <- e[e$scheme == "nystrom_uniform", c("D", "rms")]; l <- e[e$scheme == "nystrom_leverage", c("D", "rms")]
  r <- merge(u, l, by = "D", suffixes = c("_u", "_l"))
  r <- r$rms_l / r$rms_u
  if (!length(r) || all(is.na(r))) NA_real_ else exp(mean(log(r), na.rm = TRUE))
}, 0)
nlow <- sum(lev < 1, na.rm = TRUE)
summary_lines <- c(summary_lines, sprintf(
  "| (e) leverage landmarks: lower rms than uniform (geometric mean of the ratio over m) on >= 3 data sets | %s | %d of %d; leverage / uniform: %s |",
  if (all(is.na(lev))) "n/a" else verdict(nlow >= 3), nlow, sum(!is.na(lev)),
  paste(sprintf("%s %s", names(lev), fmt2(lev)), collapse = "; ")))

# ---------------------------------------------------------------------------
# the markdown

minutes <- as.double(difftime(Sys.time(), t_start, units = "mins"))
cpu <- local({
  l <- readLines("/proc/cpuinfo")
  sub("^[^:]*:[[:space:]]*", "", grep("^model name", l, value = TRUE)[1])
})
mem <- as.numeric(gsub("[^0-9]", "", grep("^MemTotal:", readLines("/proc/meminfo"), value = TRUE))) / 2^20
label <- c(iid = "iid", orthogonal = "orthogonal", structured = "structured", qmc = "qmc",
           nystrom_uniform = "Nyström uniform", nystrom_kmeans = "Nyström k-means++", nystrom_leverage = "Nyström leverage")
cell <- function(r) {
  if (!nrow(r) || r$status == "skipped") return("skipped")
  if (is.na(r$rms)) return("n/a")
  sprintf("%s / %s%s", fmt(r$rms, 3), fmt(r$max, 3), if (r$status == "partial") sprintf(" (%d seeds)", r$seeds) else "")
}
error_table <- function(dsn, kn, type, schemes, sk = FALSE) {
  sub <- err[err$data == dsn & err$kernel == kn & err$type == type, ]
  hdr <- c(label[schemes], if (sk) c("sklearn RBFSampler", "sklearn Nystroem"))
  out <- c(paste0("| D | ", paste(hdr, collapse = " | "), " |"), paste0("|---:|", strrep("---:|", length(hdr))))
  for (D in unique(sub$D)) {
    cells <- vapply(schemes, function(s) cell(sub[sub$scheme == s & sub$D == D, ]), "")
    if (sk) {
      for (m in c("RBFSampler", "Nystroem")) {
        r <- if (is.null(sk_err)) NULL else sk_err[sk_err$data == dsn & sk_err$method == m & sk_err$D == D, ]
        cells <- c(cells, if (is.null(r) || !nrow(r)) (if (m == "Nystroem" && D > NYS_CAP) "skipped" else "n/a")
                          else sprintf("%s / %s", fmt(r$rms, 3), fmt(r$max, 3)))
      }
    }
    out <- c(out, sprintf("| %d | %s |", D, paste(cells, collapse = " | ")))
  }
  out
}

out <- c("# Feature maps compared: `bench/investigations/maps.R`", "",
         "<!-- written by bench/investigations/maps.R; rerun it rather than editing -->", "")
if (smoke) {
  out <- c(out, sprintf(paste0("> **Smoke run, not a recording.** `BOCHNER_BENCH_SCALE=%g`: samples of %d rows, D up to %d, ",
                               "one seed, small timing sizes; it only shows that the script runs end to end."), scale, N_SAMPLE, D_CAP), "")
}
out <- c(out,
  sprintf("Recorded %s by `%sRscript bench/investigations/maps.R` from the package root; the whole run took %.1f minutes.",
          format(Sys.Date()), if (smoke) sprintf("BOCHNER_BENCH_SCALE=%g ", scale) else "", minutes),
  sprintf("Minutes from the start at the end of each part: %s.",
          paste(sprintf("%s %.1f", names(section_times), unlist(section_times)), collapse = ", ")),
  sprintf("Machine: %s, %d cores, %.0f GiB; %s; bochner %s; R's BLAS: `%s`; `bochner_threads()` = %d; load average %s at the start and %s at the end (the machine is shared, so timings are noisy).",
          cpu, parallel::detectCores(), mem, R.version.string, format(utils::packageVersion("bochner")),
          extSoftVersion()[["BLAS"]], NTHREADS, load_start,
          paste(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3], collapse = "/")),
  sprintf("scikit-learn: %s.", if (is.na(sk_version)) paste("not run;", paste(sk_note, collapse = " ")) else
          sprintf("%s (numpy %s) under `%s`, numpy's default BLAS, one thread", sub(" .*", "", sk_version), sub(".* ", "", sk_version), PYTHON)),
  "", "## Summary: the goals", "",
  "| goal | verdict | measured |", "|---|---|---|", summary_lines, "")
fails <- ls(failures)
if (length(fails)) {
  out <- c(out, "Scheme calls that raised an error (their cells are n/a), with the message:", "",
           unlist(lapply(fails, function(s) sprintf("- %s: %s", label[[s]], paste(failures[[s]], collapse = " / ")))), "")
}
out <- c(out, "## 1. Approximation error of Z Z' against the exact kernel matrix", "",
  sprintf(paste0("Each cell: rms / max of Z Z' - K over a fixed random sample of %d rows of the data set (K from ",
                 "`kernel_matrix()`, via `kernel_approx_error(map, sample)`), mean over seeds %s; maps fitted on all rows ",
                 "(standardised). Phase map: D columns (`type = \"phase\"`, the default), Nyström with m = D columns; ",
                 "scikit-learn's RBFSampler is a phase map too, Nystroem has uniform landmarks. skipped: Nyström ",
                 "beyond m = %d (the eigendecomposition of an m x m matrix under the reference LAPACK, ~10 s at m = 2048)."),
          N_SAMPLE, paste(SEEDS, collapse = ", "), NYS_CAP), "",
  "| data set | n | d | Gaussian sigma (median heuristic on the sample) |", "|---|---:|---:|---:|",
  vapply(names(datasets), function(nm) sprintf("| %s (%s) | %d | %d | %.4g |", nm, datasets[[nm]]$what,
                                                nrow(datasets[[nm]]$x), ncol(datasets[[nm]]$x), datasets[[nm]]$sigma), ""), "")
if (length(data_notes)) out <- c(out, paste0("- ", data_notes), "")
for (nm in names(datasets)) {
  out <- c(out, sprintf("### %s, Gaussian kernel, phase map", nm), "", error_table(nm, "gaussian", "phase", SCHEMES, sk = TRUE), "",
           sprintf("### %s, Gaussian kernel, pair map (2 D columns)", nm), "", error_table(nm, "gaussian", "pair", FOURIER), "")
}
if (length(other_kernels)) {
  out <- c(out, sprintf("### Satellite, Matérn kernel (nu = 1.5, sigma = %.4g), phase map", other_kernels$matern$sigma), "",
           error_table("Satellite", "matern", "phase", c("iid", "orthogonal", "qmc", NYSTROM)), "",
           sprintf("### Satellite, Laplace kernel (sigma = %.4g), phase map", other_kernels$laplace$sigma), "",
           error_table("Satellite", "laplace", "phase", c("iid", "orthogonal", "qmc", NYSTROM)), "",
           "Orthogonal sampling needs an isotropic spectral density: for the Laplace kernel it is n/a by design.", "")
}
if (!is.null(slope_tab)) {
  out <- c(out, "### Error decay for d <= 8: slope of log rms against log D", "",
           "Least squares over every (D, seed) point; -1/2 is the Monte Carlo rate.", "",
           "| data set | map | scheme | D | points | slope | SE |", "|---|---|---|---|---:|---:|---:|",
           sprintf("| %s | %s | %s | %d-%d | %d | %s | %s |", slope_tab$data, slope_tab$type, slope_tab$scheme,
                   slope_tab$Dmin, slope_tab$Dmax, slope_tab$points, fmt2(slope_tab$slope), fmt2(slope_tab$se)), "")
}
out <- c(out, "## 2. Nyström (and random features) fit + transform time against scikit-learn", "",
  sprintf(paste0("Fit on all n rows and transform all n rows, m = %d (D = m for the random features), Gaussian kernel, ",
                 "median of %d; bochner at 1 thread and at `bochner_threads()` = %d; scikit-learn on one thread ",
                 "(numpy's default BLAS here)."), M_TIME, REPS, NTHREADS), "",
  "| data set | n | m | bochner Nyström uniform, 1 thread (s) | bochner Nyström uniform, default threads (s) | sklearn Nystroem (s) | bochner default / sklearn | bochner iid RFF, 1 thread (s) | bochner iid RFF, default threads (s) | sklearn RBFSampler (s) |",
  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for (i in seq_len(nrow(by_time))) {
  r <- by_time[i, ]
  skn <- if (is.null(sk_time)) NA_real_ else sk_time$seconds[sk_time$data == r$data & sk_time$method == "Nystroem"][1]
  skr <- if (is.null(sk_time)) NA_real_ else sk_time$seconds[sk_time$data == r$data & sk_time$method == "RBFSampler"][1]
  out <- c(out, sprintf("| %s | %d | %d | %s | %s | %s | %s | %s | %s | %s |", r$data, r$n, r$m, fmt_s(r$nys_1), fmt_s(r$nys_def),
                        fmt_s(skn), fmt2(r$nys_def / skn), fmt_s(r$iid_1), fmt_s(r$iid_def), fmt_s(skr)))
}
if (length(sk_note)) out <- c(out, "", paste0("- ", sk_note))
out <- c(out, "", "## 3. Structured (SORF) against dense transforms", "",
  sprintf(paste0("`predict(map, x)` on n = %d rows of N(0, I) data, D = %d, Gaussian kernel with the median sigma; ",
                 "seconds, median of %d (map fitted once, untimed). rms: error of Z Z' on the first %d rows, mean over seeds %s."),
          T_N, T_D, REPS, T_ERR_N, paste(SEEDS, collapse = ", ")), "",
  sprintf("| d | iid, 1 thread | orthogonal, 1 thread | structured, 1 thread | iid / structured, 1 thread | iid, %d threads | structured, %d threads | iid / structured, %d threads | rms iid | rms orthogonal | rms structured | structured / orthogonal rms |",
          NTHREADS, NTHREADS, NTHREADS),
  "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  sprintf("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |", timing$d, fmt_s(timing$iid_t1), fmt_s(timing$orthogonal_t1),
          fmt_s(timing$structured_t1), fmt2(timing$iid_t1 / timing$structured_t1), fmt_s(timing$iid_tdef),
          fmt_s(timing$structured_tdef), fmt2(timing$iid_tdef / timing$structured_tdef), fmt(timing$iid_rms, 3),
          fmt(timing$orthogonal_rms, 3), fmt(timing$structured_rms, 3), fmt2(timing$structured_rms / timing$orthogonal_rms)),
  "", "## 4. Downstream: rff_ridge(map = ) test accuracy at equal D", "",
  sprintf(paste0("D = m = %d, Gaussian kernel, sigma the median heuristic on (up to 1000) standardised training rows; ",
                 "70/30 train/test split (seed 300), standardised with the training means and sds; every map fitted on the ",
                 "standardised training rows and passed as `rff_ridge(x_train, y_train, map = map, lambda = lambda)`. ",
                 "lambda = factor x n_train, the factor chosen once per data set with the iid map (seed 1) on an 80/20 ",
                 "split of the training rows. Accuracy in %%: mean over seeds %s (range)."),
          DOWN_D, paste(SEEDS, collapse = ", ")), "",
  "| data set | n train | n test | sigma | lambda factor | lambda | validation accuracy % by factor |", "|---|---:|---:|---:|---:|---:|---|",
  sprintf("| %s | %d | %d | %.4g | %g | %.4g | %s |", down_setup$data, down_setup$n_train, down_setup$n_test, down_setup$sigma,
          down_setup$factor, down_setup$lambda, down_setup$validation), "",
  paste0("| scheme | ", paste(unique(down$data), collapse = " | "), " |"), paste0("|---|", strrep("---:|", length(unique(down$data)))))
for (s in SCHEMES) {
  cells <- vapply(unique(down$data), function(nm) {
    r <- down[down$data == nm & down$scheme == s, ]
    if (is.na(r$acc)) "n/a" else if (length(SEEDS) > 1L) sprintf("%.2f (%.2f-%.2f)", r$acc, r$lo, r$hi) else sprintf("%.2f", r$acc)
  }, "")
  out <- c(out, sprintf("| %s | %s |", label[[s]], paste(cells, collapse = " | ")))
}
out <- c(out, "")
writeLines(out, MD)
cat("\n", out, sep = "\n")
cat("\ntables written to", MD, sprintf("(%.1f minutes)\n", minutes))
