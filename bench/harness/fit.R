# Timing.  bench_fit() runs one fit in a fresh Rscript process (bench/harness/child.R),
# so that its peak resident memory is its own: the high-water mark (VmHWM) during the
# fit beyond the mark once the data were read and the warm-up ran.  Elapsed and CPU
# (user + system) seconds are those of the fit call alone.
# bench_time() times a short call in this process, best of `runs`, for the
# micro-benchmarks (products, transforms) where a process per call would
# measure the start-up.

bench_hwm_mb <- function() {
  s <- readLines("/proc/self/status")
  as.numeric(gsub("[^0-9]", "", grep("^VmHWM", s, value = TRUE))) / 1024
}

# R_LD_LIBRARY_PATH for a BLAS: "default" (the machine's: libblas.so.3's
# alternative), "reference" or "openblas" (found or fetched by .ci/blas-dir).
bench_blas_path <- local({
  cache <- list()
  function(kind) {
    if (kind == "default") return(Sys.getenv("R_LD_LIBRARY_PATH"))
    if (is.null(cache[[kind]])) {
      p <- suppressWarnings(system2("bash", c(".ci/blas-dir", kind, file.path(tempdir(), "blas")),
                                    stdout = TRUE, stderr = FALSE))
      if (length(p) == 0L || !nzchar(p[1L])) stop("no ", kind, " BLAS found by .ci/blas-dir")
      cache[[kind]] <<- p[1L]
    }
    cache[[kind]]
  }
})

# Save data for the children once; returns the file.
bench_data_file <- function(d) {
  f <- tempfile("bench-data-", fileext = ".rds")
  saveRDS(d, f, compress = FALSE)
  f
}

# One fit in a fresh process.
#   fit(d)          the timed call; d = readRDS(data) (NULL without data)
#   score(obj, d)   after the clock: a named list of figures (accuracy, rmse, ...)
#   warmup(d)       before the clock (lazy loading, first touch); default: none
#   threads         options(bochner.threads), OMP_NUM_THREADS and OPENBLAS_NUM_THREADS
#   blas            "default", "reference" or "openblas" (see bench_blas_path())
#   packages        attached in the child before the fit
# Functions defined at a suite's top level travel with the suite's small
# global objects (bench_capture()); the child has sourced the harness;
# closures travel with their environment (keep big data out: pass it as `data`).
# Returns a one-row data.frame: elapsed, cpu, peak_mb, blas, threads, status and
# the score's figures (NA when the child failed).
bench_fit <- function(fit, data = NULL, score = NULL, warmup = NULL, threads = 1L,
                      blas = "default", packages = character(), seed = 1L,
                      timeout = 3600, keep = FALSE) {
  if (!is.null(.bench$render)) return(NULL)   # --render: no fit, the rows come from the CSV
  job <- tempfile("bench-job-", fileext = ".rds")
  out <- tempfile("bench-out-", fileext = ".rds")
  fit <- bench_capture(fit); score <- bench_capture(score); warmup <- bench_capture(warmup)
  saveRDS(list(fit = fit, data = data, score = score, warmup = warmup, threads = threads,
               packages = packages, seed = seed, keep = keep), job)
  lib <- paste(.libPaths(), collapse = ":")
  env <- c(sprintf("R_LD_LIBRARY_PATH=%s", bench_blas_path(blas)),
           sprintf("OPENBLAS_NUM_THREADS=%d", threads), sprintf("OMP_NUM_THREADS=%d", threads),
           sprintf("R_LIBS=%s", lib))
  status <- suppressWarnings(system2(
    "timeout", c(timeout, file.path(R.home("bin"), "Rscript"), "--no-init-file",
                 "bench/harness/child.R", job, out),
    env = env, stdout = "", stderr = ""))
  unlink(job)
  if (!file.exists(out)) {
    return(data.frame(elapsed = NA_real_, cpu = NA_real_, peak_mb = NA_real_,
                      blas = blas, threads = threads,
                      status = if (identical(as.integer(status), 124L)) sprintf("stopped at the %g s limit", timeout)
                               else sprintf("failed (exit status %s)", status)))
  }
  r <- readRDS(out)
  unlink(out)
  if (keep) return(r$obj)
  row <- data.frame(elapsed = r$elapsed, cpu = r$cpu, peak_mb = r$peak_mb, blas = r$blas,
                    threads = threads, status = "ok")
  if (length(r$score)) row <- cbind(row, as.data.frame(r$score, check.names = FALSE))
  row
}

# f() run in a fresh process under a BLAS and threads (as bench_fit()), its
# value returned: for suites whose child times many short calls with
# bench_time() (one process per BLAS setting) and returns their rows.
bench_in_child <- function(f, threads = 1L, blas = "default", timeout = 3600) {
  if (!is.null(.bench$render)) return(data.frame(task = character()))   # --render: no rows
  bench_fit(f, threads = threads, blas = blas, timeout = timeout, keep = TRUE)
}

# f with the suite's small global objects (functions, lists of functions,
# settings; under 1 MB each, not the harness's bench_*) in an environment of
# its own, so that f and what it calls exist in the child process, which has
# only the harness in its global environment.
bench_capture <- function(f) {
  if (!is.function(f) || !identical(environment(f), globalenv())) return(f)
  e <- new.env(parent = globalenv())
  for (nm in ls(globalenv())) {
    if (startsWith(nm, "bench_") || nm == "%||%") next
    v <- get(nm, envir = globalenv())
    if (is.environment(v) || utils::object.size(v) > 1e6) next
    if (is.function(v) && identical(environment(v), globalenv())) environment(v) <- e
    assign(nm, v, envir = e)
  }
  environment(f) <- e
  f
}

# A job for bench_fit() / bench_in_child(): function(d) f(d, args), where the
# suite's own f travels inside the closure (a function of the suite's global
# environment would not exist in the child) and args = list(...).
bench_job <- function(f, ...) {
  f <- bench_capture(f)
  args <- list(...)
  function(d) f(d, args)
}

# A call timed here, best of `runs` (one run when it takes over `slow`
# seconds): elapsed and CPU time taken separately (the machine may be shared;
# the CPU time of a 1-thread call is its cost whatever the load).
bench_time <- function(f, runs = 3L, slow = 15) {
  e <- c(); cp <- c()
  for (r in seq_len(runs)) {
    gc()
    t0 <- proc.time()
    f()
    t <- proc.time() - t0
    e <- c(e, t[["elapsed"]]); cp <- c(cp, t[["user.self"]] + t[["sys.self"]])
    if (t[["elapsed"]] > slow) break
  }
  data.frame(elapsed = min(e), cpu = min(cp), peak_mb = NA_real_, blas = bench_blas(),
             threads = getOption("bochner.threads", NA_integer_), status = "ok", runs = length(e))
}
