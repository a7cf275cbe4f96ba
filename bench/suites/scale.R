# Suite scale: data in chunks (data_chunks()) on local workers.  n rows,
# d = 20, in .rds files under a temporary directory; rff_ridge (D = 1024)
# and rff kernel_kmeans (D = 256, k = 10, Lloyd, k-means|| seeding) from the
# files on 1 and 2 local workers (future's PSOCK cluster), against the
# in-memory rff_ridge on all rows.  Each fit in a fresh process: elapsed and
# CPU of the master, peak memory of the master and (in `more`) of the
# workers, and their CPU seconds.  Ported from bench/scale.R (gen, chunks,
# memory); its SVM, k-means-replay, falkon and Slurm projection steps are
# investigations (bench/investigations/scale.R).
source("bench/harness/harness.R")
o <- bench_start("scale", "Data in chunks on local workers", reps = c(full = 2L, quick = 1L, tiny = 1L))
for (p in c("future", "future.apply")) if (!bench_have(p)) quit(status = 0)

nfiles <- bench_size(100L, 4L, 4L)
rows <- bench_size(100000L, 25000L, 2000L)
dir <- tempfile("bench-scale-")
dir.create(dir)
files <- file.path(dir, sprintf("part-%03d.rds", seq_len(nfiles)))
truth <- function(x) sin(x[, 1]) + cos(x[, 2]) * x[, 3] / 2
for (i in seq_len(nfiles)) {
  set.seed(i)
  x <- matrix(stats::rnorm(rows * 20), rows, 20, dimnames = list(NULL, sprintf("x%02d", 1:20)))
  saveRDS(data.frame(x, y = truth(x) + stats::rnorm(rows, sd = 0.1)), files[i], compress = FALSE)
}
cat(sprintf("%d files of %d rows, %.2f GB in %s\n", nfiles, rows, sum(file.size(files)) / 2^30, dir))
f <- bench_data_file(list(files = files))

# d = list(files, workers): one data file per worker count
start_workers <- function(d) {
  future::plan(future::cluster, workers = rep("localhost", d$workers))
  invisible(future.apply::future_lapply(seq_len(d$workers), function(i) Sys.getpid(), future.scheduling = Inf))
}
# after the clock: the figure of the fit, the workers' CPU seconds and peak resident memory
chunk_score <- function(obj, d) {
  w <- do.call(rbind, future.apply::future_lapply(seq_len(d$workers), function(i) {
    st <- readLines("/proc/self/status")
    c(cpu = sum(proc.time()[1:2]), peak = as.numeric(gsub("[^0-9]", "", grep("^VmHWM:", st, value = TRUE))) / 1024)
  }, future.scheduling = Inf))
  future::plan(future::sequential)
  fig <- if (!is.null(obj$rmse)) list(metric = "train_rmse", value = obj$rmse)
         else list(metric = "tot.withinss", value = obj$tot.withinss)
  c(fig, list(worker_cpu_s = sum(w[, "cpu"]), worker_peak_mb = max(w[, "peak"])))
}
fits <- list(
  ridge = function(d) {
    rff_ridge(data_chunks(d$files), y = "y", kernel = gaussian_kernel(4), D = 1024, lambda = 1e-6, seed = 1, nthreads = 1)
  },
  kmeans = function(d) {
    ch <- data_chunks(d$files, reader = function(p) readRDS(p)[, -21L])
    kernel_kmeans(ch, 10, gaussian_kernel(4), D = 256, seed = 1, max_iter = 3, rounds = 2,
                  seeding = "kmeans||", algorithm = "Lloyd", nthreads = 1)
  })
case <- sprintf("n = %.0e in %d files, d = 20", nfiles * rows, nfiles)
for (w in c(1L, 2L)) {
  fw <- bench_data_file(list(files = files, workers = w))
  for (what in names(fits)) {
    for (r in seq_len(o$reps)) {
      bench_add(sprintf("%s from chunks", what), case, sprintf("%s_%dworker%s", what, w, if (w > 1) "s" else ""),
                "bochner", suppressWarnings(bench_fit(fits[[what]], fw, chunk_score, warmup = start_workers, threads = 1L)), r)
    }
  }
  unlink(fw)
}
# in memory: read every file, then one rff_ridge on all rows, 2 threads
mem <- function(d) {
  all <- do.call(rbind, lapply(d$files, readRDS))
  rff_ridge(as.matrix(all[, 1:20]), all$y, kernel = gaussian_kernel(4), D = 1024, lambda = 1e-6, seed = 1, nthreads = 2)
}
for (r in seq_len(o$reps)) {
  bench_add("ridge from chunks", case, "ridge_in_memory_2threads", "baseline",
            bench_fit(mem, f, function(obj, d) list(metric = "train_rmse", value = obj$rmse), threads = 2L), r)
}
unlink(c(f, dir), recursive = TRUE)

bench_finish(headline = list(
  list(figure = sprintf("rff_ridge D = 1024 from chunks (%s), 2 workers / 1 worker: seconds", case),
       question = "ridge from chunks", case = case, ours = "ridge_2workers", peer = "ridge_1worker"),
  list(figure = "rff_ridge from chunks, 2 workers / in memory (2 threads, reading included): seconds",
       question = "ridge from chunks", case = case, ours = "ridge_2workers", peer = "ridge_in_memory_2threads"),
  list(figure = "rff_ridge from chunks, 2 workers / in memory: master's peak MB",
       question = "ridge from chunks", case = case, ours = "ridge_2workers", peer = "ridge_in_memory_2threads",
       measure = "peak_mb"),
  list(figure = "rff kernel_kmeans D = 256 from chunks, 2 workers / 1 worker: seconds",
       question = "kmeans from chunks", case = case, ours = "kmeans_2workers", peer = "kmeans_1worker")),
  about = c(
    "The peers here are bochner's own other ways: one worker, and the in-memory fit (which reads all files",
    "inside its timing).  The rows of a chunked fit are identical to the in-memory fit's (`train_rmse`).",
    "Master's peak: the fitting process; the workers' peak and CPU seconds are in the `more` column."))
