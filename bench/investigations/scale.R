# Scale-out benchmark (bench/investigations/scale.md): n = 1e7 rows, d = 20, in 100 .rds
# files under a temporary directory (not the repository); rff_ridge
# (D = 1024) and rff k-means (D = 256, k = 10) from the files on 1 and 2
# local workers (PSOCK clusters on this machine), time and peak memory per
# worker; the in-memory ridge fit for comparison.
#
#   Rscript bench/investigations/scale.R          # all of the below, each in its own process
#   Rscript bench/investigations/scale.R gen      # writes the files (about 1.6 GB)
#   Rscript bench/investigations/scale.R chunks   # the chunked fits on 1 and 2 workers
#   Rscript bench/investigations/scale.R memory   # the in-memory ridge fit (reads all files)
#   Rscript bench/investigations/scale.R svm      # chunked rff_svm against the in-memory fit
#   Rscript bench/investigations/scale.R kmeans   # chunked kernel_kmeans against the in-memory fit
#   Rscript bench/investigations/scale.R falkon   # falkon() on the 100 files, 2 workers (not in 'all')
#   Rscript bench/investigations/scale.R clean    # removes the files
#
# Environment: SCALE_DIR (default /tmp/bochner-scale), SCALE_FILES (100),
# SCALE_ROWS (rows per file, 1e5), SCALE_KM_ITER (Lloyd iterations timed, 3),
# SCALE_FALKON_CENTERS (500), SCALE_FALKON_ITER (10), SCALE_WORKERS (2).
suppressPackageStartupMessages(library(bochner))
mode <- commandArgs(TRUE)[1L]
if (is.na(mode)) mode <- "all"   # make bench: every step, each in its own process
dir <- Sys.getenv("SCALE_DIR", "/tmp/bochner-scale")
nfiles <- as.integer(Sys.getenv("SCALE_FILES", "100"))
rows <- as.integer(Sys.getenv("SCALE_ROWS", "100000"))
km_iter <- as.integer(Sys.getenv("SCALE_KM_ITER", "3"))
d <- 20L
files <- file.path(dir, sprintf("part-%03d.rds", seq_len(nfiles)))
# a smooth target of the first three inputs, plus noise
truth <- function(x) sin(x[, 1]) + cos(x[, 2]) * x[, 3] / 2

# CPU seconds (user + system) of this process and its children
cpu_s <- function() sum(proc.time()[c(1, 2, 4, 5)], na.rm = TRUE)
load1 <- function() as.numeric(strsplit(readLines("/proc/loadavg"), " ")[[1]][1])

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
  # per worker: CPU seconds so far and peak resident memory
  worker_stats <- function(w) {
    do.call(rbind, future.apply::future_lapply(seq_len(w), function(i) {
      st <- readLines("/proc/self/status")
      c(pid = Sys.getpid(), cpu = sum(proc.time()[1:2]),
        peak_mb = as.numeric(gsub("[^0-9]", "", grep("^VmHWM:", st, value = TRUE))) / 1024)
    }, future.scheduling = Inf))
  }
  res <- list()
  ref <- NULL
  for (w in c(1L, 2L)) {
    plan(cluster, workers = rep("localhost", w))
    s0 <- worker_stats(w)   # the workers start before the clock
    l0 <- load1()
    t <- system.time(fit <- rff_ridge(chunks, y = "y", kernel = gaussian_kernel(4),
                                      D = 1024, lambda = 1, seed = 1, nthreads = 1))[["elapsed"]]
    s1 <- worker_stats(w)
    if (is.null(ref)) ref <- fit else stopifnot(identical(ref$weights, fit$weights))
    tk <- system.time(km <- kernel_kmeans(kmchunks, 10, gaussian_kernel(4), D = 256,
                                          seed = 1, iter.max = km_iter, rounds = 2,
                                          seeding = "kmeans||", algorithm = "Lloyd",
                                          nthreads = 1))[["elapsed"]]
    s2 <- worker_stats(w)
    cpu_of <- function(a, b) sum(b[order(b[, "pid"]), "cpu"] - a[order(a[, "pid"]), "cpu"])
    passes <- 1 + 1 + 2 + 1 + (km$iter + 1)   # survey, first centre, rounds, weights, Lloyd
    res[[w]] <- data.frame(workers = w, load_before = l0, load_after = load1(),
                           ridge_s = t, ridge_worker_cpu_s = cpu_of(s0, s1),
                           ridge_rmse = fit$rmse, kmeans_s = tk,
                           kmeans_worker_cpu_s = cpu_of(s1, s2), kmeans_passes = passes,
                           kmeans_obj = km$tot.withinss,
                           worker_peak_mb = max(s2[, "peak_mb"]), master_peak_mb = peak_mb())
    print(res[[w]])
    plan(sequential)
  }
  out <- do.call(rbind, res)
  print(out)
  cat(sprintf("ridge: speed-up on 2 workers %.2f (elapsed); weights identical: TRUE\n",
              out$ridge_s[1] / out$ridge_s[2]))
  saveRDS(list(out = out, weights = ref$weights, scaling = ref$scaling),
          file.path(dir, "chunks-result.rds"))
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
  cat(sprintf(paste0("in memory: read %.1f s, rff_ridge %.1f s (2 threads), rmse %.5f, ",
                     "peak %.0f MB, load average %.1f\n"), t_read, t, fit$rmse, peak_mb(), load1()))
  # how much the solve can amplify rounding: the condition number of
  # Zc'Zc + lambda I, from the eigenvalues of Zc'Zc / n on the first file
  Z <- predict(fit$map, bochner:::rff_apply_scaling(x[seq_len(rows), ], fit$scaling))
  ev <- eigen(crossprod(scale(Z, scale = FALSE)) / rows, symmetric = TRUE,
              only.values = TRUE)$values
  cat(sprintf("eigenvalues of Zc'Zc / n: %.3g to %.3g; condition number at n = %.0f: %.3g\n",
              max(ev), min(ev), length(y), (length(y) * max(ev) + 1) / (length(y) * max(min(ev), 0) + 1)))
  f <- file.path(dir, "chunks-result.rds")
  if (file.exists(f)) {
    ch <- readRDS(f)
    cat(sprintf("max |weights (chunks) - weights (memory)| = %.3g (max |weight| %.3g)\n",
                max(abs(ch$weights - fit$weights)), max(abs(fit$weights))))
    if (!is.null(ch$scaling)) {
      cat(sprintf("scaling: max |centre diff| %.3g, max |scale diff| %.3g\n",
                  max(abs(ch$scaling$center - fit$scaling$center)),
                  max(abs(ch$scaling$scale - fit$scaling$scale))))
    }
  }
}

if (identical(mode, "svm")) {
  # The chunked rff_svm() against the in-memory one with the same defaults
  # (sigest bandwidth, D = 1024, one-vs-one) and probability = TRUE, on
  # 4 x 10^4 rows in 4 .rds files of 10^4 rows written by this step (the
  # rule of 'gen': class = y > 0.5), plan(sequential), 2 threads; accuracy
  # on 10^4 test rows.  SCALE_SVM_ROWS (40000), SCALE_SVM_CHUNKS (4),
  # SCALE_SVM_REPS (3: the runs alternate, the medians are reported).
  nsvm <- as.integer(Sys.getenv("SCALE_SVM_ROWS", "40000"))
  K <- as.integer(Sys.getenv("SCALE_SVM_CHUNKS", "4"))
  reps <- as.integer(Sys.getenv("SCALE_SVM_REPS", "3"))
  make <- function(seed, n) {
    set.seed(seed)
    x <- matrix(rnorm(n * d), n, d, dimnames = list(NULL, sprintf("x%02d", 1:d)))
    data.frame(x, class = factor(ifelse(truth(x) + rnorm(n, sd = 0.1) > 0.5, "high", "low")))
  }
  sdir <- tempfile("svm-chunks")
  dir.create(sdir)
  svm_files <- file.path(sdir, sprintf("part-%d.rds", seq_len(K)))
  for (i in seq_len(K)) saveRDS(make(i, nsvm / K), svm_files[i], compress = FALSE)
  all <- do.call(rbind, lapply(svm_files, readRDS))
  x <- as.matrix(all[, 1:d])
  test <- make(1000, 10000)
  xt <- as.matrix(test[, 1:d])
  chunks <- data_chunks(svm_files)
  t_mem <- t_ch <- c_mem <- c_ch <- numeric(reps)
  cpu <- function(t) t[["user.self"]] + t[["sys.self"]]
  for (r in seq_len(reps)) {
    tm <- system.time(mem <- rff_svm(x, all$class, probability = TRUE, seed = 1, nthreads = 2))
    tc <- system.time(ch <- rff_svm(chunks, y = "class", probability = TRUE, seed = 1,
                                    nthreads = 2))
    t_mem[r] <- tm[["elapsed"]]
    t_ch[r] <- tc[["elapsed"]]
    c_mem[r] <- cpu(tm)
    c_ch[r] <- cpu(tc)
  }
  acc <- function(f) mean(predict(f, xt) == test$class)
  logloss <- function(f) {
    p <- predict(f, xt, type = "prob")
    -mean(log(pmax(p[cbind(seq_len(nrow(p)), as.integer(test$class))], 1e-15)))
  }
  tr <- ch$trace[ch$trace$problem == 1L, ]
  cat(sprintf(paste0("%d rows in %d files, load %.1f: in memory %.2f s (median of %d), ",
                     "chunks %.2f s; ratio %.2f\n"),
              nsvm, K, load1(), median(t_mem), reps, median(t_ch), median(t_ch) / median(t_mem)))
  cat(sprintf("all runs: in memory %s; chunks %s\n", paste(round(t_mem, 2), collapse = ", "),
              paste(round(t_ch, 2), collapse = ", ")))
  cat(sprintf("CPU (user + system, all threads): in memory %.2f s, chunks %.2f s (medians); ratio %.2f\n",
              median(c_mem), median(c_ch), median(c_ch) / median(c_mem)))
  cat(sprintf("sigma: in memory %.4g, chunks %.4g; CoCoA+ rounds %s (passes in memory %s)\n",
              mem$kernel$sigma, ch$kernel$sigma, paste(ch$iter, collapse = ", "),
              paste(mem$iter, collapse = ", ")))
  cat(sprintf("test accuracy: in memory %.4f, chunks %.4f; test log-loss %.4f, %.4f\n",
              acc(mem), acc(ch), logloss(mem), logloss(ch)))
  cat(sprintf("relative duality gap of the main problem at the last round: %.4f\n",
              tr$gap[nrow(tr)] / tr$primal[nrow(tr)]))
  unlink(sdir, recursive = TRUE)
}

if (identical(mode, "kmeans")) {
  # Chunked kernel_kmeans() against the in-memory fit from the same seed:
  # the data of 'gen' (standard normal, d = 20), SCALE_KM_ROWS rows (1e5;
  # recorded with 4000) in 4 files, k = 10, D = 256, sigma = 4 (the 'chunks'
  # step's settings); rff and Nystrom features.  Both fits have their
  # defaults (below 1e5 rows: 10 starts of greedy k-means++, Lloyd,
  # Hartigan-Wong; the chunked fit replays them over the chunks), and the
  # same with algorithm = "Lloyd".  rff: the in-memory fit draws the same
  # map from the same seed; Nystrom: the chunked fit's landmarks (rows of
  # its survey's sample), given to both fits as 'map'.
  nkm <- as.integer(Sys.getenv("SCALE_KM_ROWS", "100000"))
  kth <- as.integer(Sys.getenv("SCALE_KM_THREADS", "2"))
  cpu <- function(t) t[["user.self"]] + t[["sys.self"]]
  K <- 4L
  kdir <- tempfile("km-chunks")
  dir.create(kdir)
  km_files <- file.path(kdir, sprintf("part-%d.rds", seq_len(K)))
  for (i in seq_len(K)) {
    set.seed(i)
    x <- matrix(rnorm(nkm / K * d), nkm / K, d, dimnames = list(NULL, sprintf("x%02d", 1:d)))
    saveRDS(as.data.frame(x), km_files[i], compress = FALSE)
  }
  x <- as.matrix(do.call(rbind, lapply(km_files, readRDS)))
  same_partition <- function(a, b) {
    tab <- table(a, b) > 0
    all(rowSums(tab) == 1L) && all(colSums(tab) == 1L)
  }
  for (method in c("rff", "nystrom")) {
    map <- if (method == "nystrom") {
      suppressWarnings(kernel_kmeans(data_chunks(km_files), 10, gaussian_kernel(4),
                                     method = method, D = 256, seed = 1, nthreads = kth,
                                     iter.max = 1, nstart = 1, algorithm = "Lloyd"))$map
      # (only its landmarks are used)
    }
    for (algorithm in c("Hartigan-Wong", "Lloyd")) {
      t_ch <- system.time(ch <- suppressWarnings(
        kernel_kmeans(data_chunks(km_files), 10, gaussian_kernel(4), method = method, D = 256,
                      seed = 1, map = map, algorithm = algorithm, nthreads = kth)))
      t_mem <- system.time(mem <- if (is.null(map)) {
        kernel_kmeans(x, 10, gaussian_kernel(4), method = "rff", D = 256, seed = 1,
                      algorithm = algorithm, nthreads = kth)
      } else {
        kernel_kmeans(x, 10, method = "rff", map = map, seed = 1, algorithm = algorithm,
                      nthreads = kth)
      })
      cl <- unlist(predict(ch, data_chunks(km_files)))
      cat(sprintf(paste0("%s, %s, %d rows, %d thread(s): chunks %.1f s (CPU %.1f s; %d Lloyd ",
                         "passes, %d Hartigan-Wong passes, %d moves), objective %.10g; in ",
                         "memory %.1f s (CPU %.1f s), objective %.10g; chunks / memory - 1 = ",
                         "%+.2e; starts: max relative difference %.2e; same partition: %s\n"),
                  method, algorithm, nkm, kth, t_ch[["elapsed"]], cpu(t_ch), ch$iter,
                  length(ch$trace) - ch$iter - 1L, ch$moves, ch$tot.withinss,
                  t_mem[["elapsed"]], cpu(t_mem), mem$tot.withinss,
                  ch$tot.withinss / mem$tot.withinss - 1,
                  max(abs(ch$start_objectives / mem$start_objectives - 1)),
                  same_partition(cl, predict(mem, x))))
    }
  }
  unlink(kdir, recursive = TRUE)
}

if (identical(mode, "falkon")) {
  # falkon() on the files of 'gen' (10^7 rows) on SCALE_WORKERS local
  # workers, one thread each: the centres, lambda and the iterations given,
  # so that the fit makes a known number of passes (survey, bandwidth rows
  # and centres, right-hand side, one per CG iteration, the training error)
  # and no held-out path; time, CPU of the workers, their peak memory.
  library(future)
  w <- as.integer(Sys.getenv("SCALE_WORKERS", "2"))
  m <- as.integer(Sys.getenv("SCALE_FALKON_CENTERS", "500"))
  it <- as.integer(Sys.getenv("SCALE_FALKON_ITER", "10"))
  plan(cluster, workers = rep("localhost", w))
  stats <- function() {
    do.call(rbind, future.apply::future_lapply(seq_len(w), function(i) {
      st <- readLines("/proc/self/status")
      c(pid = Sys.getpid(), cpu = sum(proc.time()[1:2]),
        hwm_mb = as.numeric(gsub("[^0-9]", "", grep("^VmHWM:", st, value = TRUE))) / 1024)
    }, future.scheduling = Inf))
  }
  s0 <- stats()
  l0 <- load1()
  t <- system.time(fit <- falkon(data_chunks(files), y = "y", kernel = gaussian_kernel(4),
                                 centers = m, lambda = 1e-6, iter = it, seed = 1,
                                 nthreads = 1))[["elapsed"]]
  s1 <- stats()
  cpu <- sum(s1[order(s1[, "pid"]), "cpu"] - s0[order(s0[, "pid"]), "cpu"])
  cat(sprintf(paste0("falkon, %d rows in %d files, %d centres, %d CG iterations, %d workers: ",
                     "%.1f s elapsed (load %.1f -> %.1f), %.1f s CPU of the workers, ",
                     "peak memory per worker %.0f MB (largest), main session %.0f MB; ",
                     "training rmse %.5f\n"),
              fit$n, length(files), m, it, w, t, l0, load1(), cpu, max(s1[, "hwm_mb"]),
              peak_mb(), fit$rmse))
  plan(sequential)
}

if (identical(mode, "clean")) unlink(dir, recursive = TRUE)

if (identical(mode, "all")) {
  script <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1L])
  rscript <- file.path(R.home("bin"), "Rscript")
  steps <- c(if (!all(file.exists(files))) "gen", "chunks", "memory", "svm", "kmeans", "clean")
  for (step in steps) {
    cat("\n== ", step, " (", format(Sys.time()), ")\n", sep = "")
    if (system2(rscript, c(script, step)) != 0) stop("step ", step, " failed")
  }
}
