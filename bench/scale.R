# Scale-out benchmark (bench/scale.md): n = 1e7 rows, d = 20, in 100 .rds
# files under a temporary directory (not the repository); rff_ridge
# (D = 1024) and rff k-means (D = 256, k = 10) from the files on 1 and 2
# local workers (PSOCK clusters on this machine), time and peak memory per
# worker; the in-memory ridge fit for comparison.
#
#   Rscript bench/scale.R gen      # writes the files (about 1.6 GB)
#   Rscript bench/scale.R chunks   # the chunked fits on 1 and 2 workers
#   Rscript bench/scale.R memory   # the in-memory ridge fit (reads all files)
#   Rscript bench/scale.R clean    # removes the files
#
# Environment: SCALE_DIR (default /tmp/bochner-scale), SCALE_FILES (100),
# SCALE_ROWS (rows per file, 1e5), SCALE_KM_ITER (Lloyd iterations timed, 3).
suppressPackageStartupMessages(library(bochner))
mode <- commandArgs(TRUE)[1L]
dir <- Sys.getenv("SCALE_DIR", "/tmp/bochner-scale")
nfiles <- as.integer(Sys.getenv("SCALE_FILES", "100"))
rows <- as.integer(Sys.getenv("SCALE_ROWS", "100000"))
km_iter <- as.integer(Sys.getenv("SCALE_KM_ITER", "3"))
d <- 20L
files <- file.path(dir, sprintf("part-%03d.rds", seq_len(nfiles)))
# a smooth target of the first three inputs, plus noise
truth <- function(x) sin(x[, 1]) + cos(x[, 2]) * x[, 3] / 2

peak_mb <- function() {
  st <- readLines("/proc/self/status")
  as.numeric(gsub("[^0-9]", "", grep("^VmHWM:", st, value = TRUE))) / 1024
}

if (identical(mode, "gen")) {
  dir.create(dir, showWarnings = FALSE, recursive = TRUE)
  for (i in seq_len(nfiles)) {
    set.seed(i)
    x <- matrix(rnorm(rows * d), rows, d, dimnames = list(NULL, sprintf("x%02d", 1:d)))
    df <- data.frame(x, y = truth(x) + rnorm(rows, sd = 0.1))
    saveRDS(df, files[i], compress = FALSE)
  }
  cat(sprintf("%d files of %d rows, %.2f GB\n", nfiles, rows,
              sum(file.size(files)) / 2^30))
}

if (identical(mode, "chunks")) {
  library(future)
  chunks <- data_chunks(files)
  kmchunks <- data_chunks(files, reader = function(p) readRDS(p)[, -21L])
  res <- list()
  ref <- NULL
  for (w in c(1L, 2L)) {
    plan(cluster, workers = rep("localhost", w))
    # the workers start before the clock
    invisible(future.apply::future_lapply(seq_len(w), function(i) Sys.getpid()))
    t <- system.time(fit <- rff_ridge(chunks, y = "y", kernel = gaussian_kernel(4),
                                      D = 1024, lambda = 1, seed = 1, nthreads = 1))[["elapsed"]]
    if (is.null(ref)) ref <- fit else stopifnot(identical(ref$weights, fit$weights))
    tk <- system.time(km <- kernel_kmeans(kmchunks, 10, gaussian_kernel(4), D = 256,
                                          seed = 1, iter.max = km_iter, rounds = 2,
                                          nthreads = 1))[["elapsed"]]
    mem <- unlist(future.apply::future_lapply(seq_len(w), function(i) {
      st <- readLines("/proc/self/status")
      as.numeric(gsub("[^0-9]", "", grep("^VmHWM:", st, value = TRUE))) / 1024
    }, future.scheduling = 1))
    passes <- 1 + 1 + 2 + 1 + (km$iter + 1)   # survey, first centre, rounds, weights, Lloyd
    res[[w]] <- data.frame(workers = w, ridge_s = t, ridge_rmse = fit$rmse,
                           kmeans_s = tk, kmeans_passes = passes, kmeans_iter = km$iter,
                           kmeans_obj = km$tot.withinss, worker_peak_mb = max(mem),
                           master_peak_mb = peak_mb())
    print(res[[w]])
    plan(sequential)
  }
  out <- do.call(rbind, res)
  print(out)
  cat(sprintf("ridge speed-up on 2 workers: %.2f; weights identical: TRUE\n",
              out$ridge_s[1] / out$ridge_s[2]))
  saveRDS(list(out = out, weights = ref$weights), file.path(dir, "chunks-result.rds"))
}

if (identical(mode, "memory")) {
  x <- NULL
  t_read <- system.time({
    parts <- lapply(files, readRDS)
    all <- do.call(rbind, parts)
    rm(parts)
    y <- all$y
    x <- as.matrix(all[, 1:d])
    rm(all)
  })[["elapsed"]]
  gc()
  t <- system.time(fit <- rff_ridge(x, y, kernel = gaussian_kernel(4), D = 1024, lambda = 1,
                                    seed = 1, nthreads = 2))[["elapsed"]]
  cat(sprintf("in memory: read %.1f s, rff_ridge %.1f s (2 threads), rmse %.5f, peak %.0f MB\n",
              t_read, t, fit$rmse, peak_mb()))
  f <- file.path(dir, "chunks-result.rds")
  if (file.exists(f)) {
    ch <- readRDS(f)
    cat(sprintf("max |weights (chunks) - weights (memory)| = %.3g (max |weight| %.3g)\n",
                max(abs(ch$weights - fit$weights)), max(abs(fit$weights))))
  }
}

if (identical(mode, "clean")) unlink(dir, recursive = TRUE)
