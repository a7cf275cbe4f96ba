# Benchmark: thread scaling of bochner's C routines under two BLAS, reference
# and OpenBLAS, in one run.  For each task below it times the call at 1, 2,
# 4, ... threads up to all cores (parallel::detectCores(), the maximum itself
# included), passing the count as the `nthreads =` argument of every call,
# and records per row: task, size, BLAS, threads, seconds (the best of 3 runs,
# of 2 when the first run took over SLOW_SECONDS), speedup against 1 thread
# under the same BLAS, parallel efficiency (speedup / threads), and whether
# every run's result is identical() to the first 1-thread run's (so the
# 1-thread row checks that repeated runs agree).  Every run starts from the
# same set.seed(), so every thread count does the same work.
#
# Tasks (sizes at BOCHNER_BENCH_SCALE = 1; about 2-8 s each at 1 thread on a
# 2-core Xeon under the reference BLAS):
#   transform       predict(random_features(x, gaussian_kernel(1), D), x): n = 2e5, d = 64, D = 2048
#   kernel_matrix   kernel_matrix(gaussian_kernel(1), x): n = 1e4, d = 16
#   kmeans_exact    kernel_kmeans(x, 10, method = "exact", nstart = 3): n = 8000, d = 10
#   kmeans_rff      kernel_kmeans(x, 10, method = "rff", D = 256, iter.max = 10): n = 2e5, d = 10
#                   (iter.max fixes the work; its "did not converge" warning is muffled)
#   rff_ridge       rff_ridge(x, y, D = 2048): n = 5e4, d = 20.  Its time is mostly the
#                   normal equations Z'Z (n D^2 flops), formed on the package's own
#                   product (before commit f161a42 it was R's crossprod(), the BLAS's:
#                   about 2 minutes per fit under the reference BLAS)
#   rff_svm         rff_svm(x, y, D = 1024): n = 5e4, d = 20, four classes (one-vs-rest:
#                   the four binary problems run on the threads)
#   rff_svm_binary  the same with n = 1e5 and two classes: one binary problem, whose
#                   solver is sequential by nature (only the features are threaded)
#   ridge_predict   predict(<rff_ridge fit, n = 1e4, D = 2048>, newdata): 4e5 new rows, d = 20
# BOCHNER_BENCH_SCALE (default 1) multiplies the work of every task: the number
# of rows n of the linear tasks by SCALE, that of the two Gram-matrix tasks
# (kernel_matrix, kmeans_exact: time and memory ~ n^2) by sqrt(SCALE).  Memory
# at SCALE = 1: about 10 GB at peak (transform: the 1-thread result, 3.3 GB,
# is kept for the identical() check while the next one is computed).
# The full run takes about 8 minutes on 2 cores.
#
# Usage 1, the default (this machine): from the package root, after installing
# the package (`make bench` does both),
#     Rscript bench/investigations/threads.R
# starts one child R process per BLAS, this script again with --blas-here,
# with R_LD_LIBRARY_PATH=<BLAS dir>:<R's lib>:/usr/lib/x86_64-linux-gnu
# (reference: /usr/lib/x86_64-linux-gnu/blas and .../lapack; OpenBLAS:
# /usr/lib/x86_64-linux-gnu/openblas-pthread; a BLAS whose directory is
# missing is skipped, and the table says so), merges their results, writes
# the table to bench/investigations/threads.md and prints it, and writes all rows as CSV to
# $BOCHNER_BENCH_CSV (default: $TMPDIR/bochner-threads-<host>.csv, outside
# the repository; the path is printed).
#
# Usage 2, one BLAS per process, where child processes cannot be started
# with another BLAS, e.g. under ../shared/tools/portable-r, whose R.sh runs R
# through an explicit loader that children do not inherit:
#     R.sh ref bench/investigations/threads.R
#     R.sh openblas bench/investigations/threads.R
# (or `Rscript bench/investigations/threads.R --blas-here`, or BOCHNER_BENCH_BLAS_HERE=1).
# Each run measures only the BLAS of its own process (as reported by
# extSoftVersion()["BLAS"] and La_library(); labelled "openblas" when that or
# a mapped library names OpenBLAS, "reference" otherwise, or --label NAME),
# writes its rows to $BOCHNER_BENCH_CSV (default:
# $TMPDIR/bochner-threads-<host>-<label>.csv) and then writes bench/investigations/threads.md
# from its own rows plus those of the other default-named per-BLAS files for
# this host in the same directory with the same scale and package version, so
# the two runs above end with one table of both BLAS (each BLAS's date is in
# the table).  Running with R's loader through a bare ld-linux*.so
# (/proc/self/exe is the loader) selects this mode by itself.
# Merging result files by hand, anywhere:
#     Rscript bench/investigations/threads.R --merge A.csv B.csv
#
# Threads: bochner's threads are set only through the nthreads argument; no
# OMP_* variable is set.  OpenBLAS runs with its default number of threads
# (all cores): the children are started with OPENBLAS_NUM_THREADS,
# GOTO_NUM_THREADS and OMP_NUM_THREADS unset (with --blas-here they are
# whatever the caller's environment says; the table records them, and the
# threads the process had before bochner ran, which for OpenBLAS is its pool).
#
# Other settings: BOCHNER_BENCH_THREADS ("1,2,4": the thread counts instead of
# the powers of 2 up to all cores), BOCHNER_BENCH_TASKS ("transform,rff_svm":
# a subset of the tasks), BOCHNER_BENCH_MD (the markdown file; default
# bench/investigations/threads.md), BOCHNER_BENCH_NOTE (a line of text put under the title, e.g.
# which build was measured).  A scale below 1 marks the table as a smoke run.

SLOW_SECONDS <- 5                 # a first run longer than this: best of 2, else of 3
LIB_DIR <- "/usr/lib/x86_64-linux-gnu"
BLAS_DIRS <- list(reference = file.path(LIB_DIR, c("blas", "lapack")),
                  openblas  = file.path(LIB_DIR, "openblas-pthread"))

# ---------------------------------------------------------------------------
# settings and small helpers (no system() anywhere but in the driver)

env_flag <- function(name) {
  v <- tolower(Sys.getenv(name))
  nzchar(v) && !v %in% c("0", "false", "no")
}

bench_scale <- function() {
  s <- Sys.getenv("BOCHNER_BENCH_SCALE", "1")
  v <- suppressWarnings(as.numeric(s))
  if (length(v) != 1L || !is.finite(v) || v <= 0) stop("BOCHNER_BENCH_SCALE must be a positive number, not '", s, "'")
  v
}

n_cores <- function() {
  n <- tryCatch(parallel::detectCores(), error = function(e) NA_integer_)
  if (is.na(n) || n < 1L) n <- length(grep("^processor", readLines("/proc/cpuinfo")))
  max(1L, as.integer(n))
}

thread_counts <- function(cores) {
  s <- Sys.getenv("BOCHNER_BENCH_THREADS")
  if (nzchar(s)) {
    v <- suppressWarnings(as.integer(strsplit(s, "[ ,]+")[[1]]))
    if (anyNA(v) || any(v < 1L)) stop("BOCHNER_BENCH_THREADS must list positive integers, not '", s, "'")
    return(sort(unique(c(1L, v))))
  }
  sort(unique(c(as.integer(2^(0:floor(log2(cores)))), cores)))
}

host_name <- function() {
  h <- Sys.info()[["nodename"]]
  gsub("[^A-Za-z0-9._-]", "_", if (nzchar(h)) h else "unknown")
}

tmp_root <- function() {
  d <- Sys.getenv("TMPDIR", "/tmp")
  if (nzchar(d) && dir.exists(d)) d else dirname(tempdir())
}

cpu_model <- function() {
  l <- tryCatch(readLines("/proc/cpuinfo"), error = function(e) character())
  m <- grep("^model name", l, value = TRUE)
  if (!length(m)) return("unknown CPU")
  flags <- strsplit(sub("^[^:]*:", "", grep("^flags", l, value = TRUE)[1]), " ")[[1]]
  isa <- intersect(c("avx2", "fma", "avx512f"), flags)
  paste0(sub("^[^:]*:[[:space:]]*", "", m[1]), if (length(isa)) paste0(" (", paste(isa, collapse = ", "), ")"))
}

mem_gib <- function() {
  l <- tryCatch(readLines("/proc/meminfo"), error = function(e) character())
  t <- grep("^MemTotal:", l, value = TRUE)
  if (!length(t)) return(NA_real_)
  as.numeric(gsub("[^0-9]", "", t)) / 2^20
}

load_avg <- function() {
  l <- tryCatch(readLines("/proc/loadavg"), error = function(e) "")
  paste(strsplit(l, " ")[[1]][1:3], collapse = "/")
}

# The BLAS/LAPACK shared objects mapped into this process.
mapped_blas <- function() {
  maps <- tryCatch(readLines("/proc/self/maps"), error = function(e) character())
  paths <- unique(sub("^.*[[:space:]](/[^[:space:]]+)$", "\\1", grep("/", maps, value = TRUE)))
  paths[grepl("blas|lapack|mkl|blis", basename(paths), ignore.case = TRUE)]
}

threads_now <- function() {
  n <- length(list.files("/proc/self/task"))
  if (n) n else NA_integer_
}

# Run with a bare dynamic loader (portable-r's R.sh): children would not get it.
run_by_loader <- function() {
  exe <- tryCatch(Sys.readlink("/proc/self/exe"), error = function(e) "")
  length(exe) == 1L && grepl("^ld([-.]|64)", basename(exe))
}

this_script <- function() {
  f <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  if (length(f) == 1L && file.exists(f)) normalizePath(f) else normalizePath(file.path("bench", "threads.R"))
}

md_path <- function() {
  p <- Sys.getenv("BOCHNER_BENCH_MD")
  if (nzchar(p)) return(p)
  if (dir.exists("bench")) return(file.path("bench", "threads.md"))
  p <- file.path(tmp_root(), "bochner-threads.md")
  message("no bench/ here (run from the package root): the table goes to ", p)
  p
}

# ---------------------------------------------------------------------------
# the tasks: setup(scale) makes the data (fixed seeds), run(data, nthreads) is timed

mixture <- function(n, d, k, sd = 3) {
  centres <- matrix(stats::rnorm(k * d, sd = sd), k)
  centres[sample.int(k, n, replace = TRUE), , drop = FALSE] + matrix(stats::rnorm(n * d), n)
}

lin <- function(n, scale) max(100L, as.integer(round(n * scale)))
quad <- function(n, scale) max(100L, as.integer(round(n * sqrt(scale))))

muffle_nonconvergence <- function(expr) {
  withCallingHandlers(expr, warning = function(w) {
    if (grepl("did not converge", conditionMessage(w))) invokeRestart("muffleWarning")
  })
}

# rff_svm on n rows, d = 20, D = 1024: classes from cutting
# x1 x2 + x3 at 'breaks' (one-vs-rest beyond two classes).
svm_task <- function(n, breaks) {
  k <- length(breaks) - 1L
  list(
    size = function() sprintf("n = %d, d = 20, D = 1024, %d classes", n, k),
    setup = function() {
      set.seed(6)
      x <- matrix(stats::rnorm(n * 20), ncol = 20)
      list(x = x, y = cut(x[, 1] * x[, 2] + x[, 3], breaks, labels = letters[seq_len(k)]))
    },
    run = function(s, nthreads) {
      set.seed(61)
      rff_svm(s$x, s$y, gaussian_kernel(4), D = 1024, nthreads = nthreads)
    })
}

make_tasks <- function(scale) {
  list(
    transform = list(
      size = function() sprintf("n = %d, d = 64, D = 2048", lin(2e5, scale)),
      setup = function() {
        set.seed(1)
        x <- matrix(stats::rnorm(lin(2e5, scale) * 64), ncol = 64)
        list(x = x, map = random_features(x, gaussian_kernel(1), D = 2048))
      },
      run = function(s, nthreads) predict(s$map, s$x, nthreads = nthreads)),
    kernel_matrix = list(
      size = function() sprintf("n = %d, d = 16", quad(1e4, scale)),
      setup = function() {
        set.seed(2)
        list(x = matrix(stats::rnorm(quad(1e4, scale) * 16), ncol = 16))
      },
      run = function(s, nthreads) kernel_matrix(gaussian_kernel(1), s$x, nthreads = nthreads)),
    kmeans_exact = list(
      size = function() sprintf("n = %d, d = 10, k = 10, nstart = 3", quad(8000, scale)),
      setup = function() { set.seed(3); list(x = mixture(quad(8000, scale), 10, 10)) },
      run = function(s, nthreads) {
        set.seed(31)
        kernel_kmeans(s$x, 10, gaussian_kernel(2), method = "exact", nstart = 3, nthreads = nthreads)
      }),
    kmeans_rff = list(
      size = function() sprintf("n = %d, d = 10, k = 10, D = 256, iter.max = 10", lin(2e5, scale)),
      setup = function() { set.seed(4); list(x = mixture(lin(2e5, scale), 10, 10)) },
      run = function(s, nthreads) {
        set.seed(41)
        muffle_nonconvergence(kernel_kmeans(s$x, 10, gaussian_kernel(2), method = "rff", D = 256,
                                            iter.max = 10, nthreads = nthreads))
      }),
    rff_ridge = list(
      size = function() sprintf("n = %d, d = 20, D = 2048", lin(5e4, scale)),
      setup = function() {
        set.seed(5)
        n <- lin(5e4, scale)
        x <- matrix(stats::rnorm(n * 20), ncol = 20)
        list(x = x, y = sin(x[, 1]) + x[, 2]^2 / 4 + stats::rnorm(n, sd = 0.1))
      },
      run = function(s, nthreads) {
        set.seed(51)
        rff_ridge(s$x, s$y, gaussian_kernel(4), D = 2048, nthreads = nthreads)
      }),
    rff_svm = svm_task(lin(5e4, scale), c(-Inf, -1, 0, 1, Inf)),
    rff_svm_binary = svm_task(lin(1e5, scale), c(-Inf, 0, Inf)),
    ridge_predict = list(
      size = function() sprintf("fit n = %d, D = 2048; newdata n = %d, d = 20", lin(1e4, scale), lin(4e5, scale)),
      setup = function() {
        set.seed(7)
        n <- lin(1e4, scale)
        x <- matrix(stats::rnorm(n * 20), ncol = 20)
        y <- sin(x[, 1]) + x[, 2]^2 / 4 + stats::rnorm(n, sd = 0.1)
        fit <- rff_ridge(x, y, gaussian_kernel(4), D = 2048, nthreads = 1L)
        list(fit = fit, newdata = matrix(stats::rnorm(lin(4e5, scale) * 20), ncol = 20))
      },
      run = function(s, nthreads) predict(s$fit, s$newdata, nthreads = nthreads)))
}

selected_tasks <- function(tasks) {
  s <- Sys.getenv("BOCHNER_BENCH_TASKS")
  if (!nzchar(s)) return(tasks)
  want <- strsplit(s, "[ ,]+")[[1]]
  bad <- setdiff(want, names(tasks))
  if (length(bad)) stop("unknown task(s) in BOCHNER_BENCH_TASKS: ", paste(bad, collapse = ", "),
                        "; the tasks are ", paste(names(tasks), collapse = ", "))
  tasks[want]
}

# ---------------------------------------------------------------------------
# measuring the BLAS of this process

blas_label <- function(blas, lapack, mapped) {
  all <- c(blas, lapack, mapped)
  if (any(grepl("openblas", all, ignore.case = TRUE))) return("openblas")
  if (any(grepl("mkl", all, ignore.case = TRUE))) return("mkl")
  if (any(grepl("blis", all, ignore.case = TRUE))) return("blis")
  if (any(grepl("accelerate|veclib", all, ignore.case = TRUE))) return("accelerate")
  "reference"
}

measure_here <- function(label = NULL, csv = NULL, expect = NULL, write_md = TRUE) {
  t_start <- Sys.time()
  threads_at_start <- threads_now()       # before bochner starts any OpenMP thread
  load_start <- load_avg()
  suppressPackageStartupMessages(library(bochner))
  scale <- bench_scale()
  blas <- unname(extSoftVersion()[["BLAS"]])
  lapack <- tryCatch(La_library(), error = function(e) "")
  si_blas <- tryCatch(utils::sessionInfo()$BLAS, error = function(e) "")
  if (is.null(si_blas)) si_blas <- ""
  mapped <- mapped_blas()
  if (!nzchar(blas)) blas <- si_blas
  if (is.null(label) || !nzchar(label)) label <- blas_label(blas, lapack, mapped)
  if (!is.null(expect) && nzchar(expect)) {
    dirs <- normalizePath(strsplit(expect, ":", fixed = TRUE)[[1]], mustWork = FALSE)
    if (!any(startsWith(normalizePath(blas, mustWork = FALSE), dirs)) &&
        !any(vapply(dirs, function(d) any(startsWith(mapped, d)), TRUE))) {
      stop(sprintf("asked for the BLAS in %s, but this process loaded %s (mapped: %s)",
                   expect, blas, paste(mapped, collapse = ", ")))
    }
  }
  host <- host_name()
  if (is.null(csv) || !nzchar(csv)) {
    csv <- Sys.getenv("BOCHNER_BENCH_CSV")
    if (!nzchar(csv)) csv <- file.path(tmp_root(), sprintf("bochner-threads-%s-%s.csv", host, label))
  }
  cores <- n_cores()
  threads <- thread_counts(cores)
  tasks <- selected_tasks(make_tasks(scale))
  cat(sprintf("== BLAS %s: %s (LAPACK %s); threads in the process at start: %d\n",
              label, blas, lapack, threads_at_start))
  cat(sprintf("   scale %g, threads %s, tasks %s\n", scale, paste(threads, collapse = ", "),
              paste(names(tasks), collapse = ", ")))

  rows <- list()
  add_row <- function(task, size, nthreads, seconds, runs, identical, status) {
    rows[[length(rows) + 1L]] <<- data.frame(
      task = task, size = size, blas = label, threads = as.integer(nthreads),
      seconds = seconds, runs = as.integer(runs), identical = identical, status = status,
      stringsAsFactors = FALSE)
  }
  for (name in names(tasks)) {
    task <- tasks[[name]]
    size <- task$size()
    t0 <- Sys.time()
    data <- tryCatch(task$setup(), error = function(e) e)
    if (inherits(data, "error")) {
      msg <- paste("setup failed:", conditionMessage(data))
      cat(sprintf("   %-14s %s\n", name, msg))
      add_row(name, size, NA_integer_, NA_real_, 0L, NA, msg)
      next
    }
    # one untimed run first: the first touch of fresh memory in a new process
    # (or a new virtual machine) costs far more than the call itself and
    # would be charged to whichever thread count came first
    warm <- tryCatch(task$run(data, max(threads)), error = function(e) NULL)
    rm(warm); invisible(gc(FALSE))
    ref <- NULL
    for (nt in threads) {
      secs <- numeric(); same <- TRUE; reps <- 3L; err <- NULL
      while (length(secs) < reps) {
        invisible(gc(FALSE))
        res <- NULL
        t <- tryCatch(system.time(res <- task$run(data, nt))[["elapsed"]], error = function(e) e)
        if (inherits(t, "error")) { err <- conditionMessage(t); break }
        secs <- c(secs, t)
        if (length(secs) == 1L && t > SLOW_SECONDS) reps <- 2L
        if (is.null(ref)) ref <- res else same <- same && identical(res, ref)
        rm(res)
      }
      if (!is.null(err)) {
        cat(sprintf("   %-14s threads = %2d: failed: %s\n", name, nt, err))
        add_row(name, size, nt, NA_real_, length(secs), NA, paste("failed:", err))
        next
      }
      cat(sprintf("   %-14s threads = %2d: %7.3f s (best of %d)%s\n", name, nt, min(secs), length(secs),
                  if (same) "" else "  NOT identical to the 1-thread result"))
      add_row(name, size, nt, min(secs), length(secs), same, "ok")
    }
    rm(data, ref); invisible(gc(FALSE))
    cat(sprintf("   %-14s done in %.0f s\n", name, as.double(difftime(Sys.time(), t0, units = "secs"))))
  }
  res <- do.call(rbind, rows)
  res <- add_speedup(res)
  meta <- list(
    date = format(Sys.time(), "%Y-%m-%d %H:%M:%S %Z"), host = host, cpu = cpu_model(), cores = cores,
    mem_gib = round(mem_gib(), 1), r_version = R.version.string,
    bochner_version = as.character(utils::packageVersion("bochner")), scale = scale,
    bochner_built = package_built(),
    blas_library = blas, lapack_library = lapack, mapped_blas = paste(mapped, collapse = ";"),
    threads_at_start = threads_at_start,
    blas_env = blas_env_text(),
    mode = if (!is.null(expect)) "child" else "here",
    load_start = load_start, load_end = load_avg(),
    minutes = round(as.double(difftime(Sys.time(), t_start, units = "mins")), 2))
  for (m in names(meta)) res[[m]] <- meta[[m]]
  dir.create(dirname(csv), showWarnings = FALSE, recursive = TRUE)
  utils::write.csv(res, csv, row.names = FALSE)
  cat(sprintf("== BLAS %s: %d rows written to %s (%.1f minutes)\n", label, nrow(res), csv, meta$minutes))
  if (write_md) {
    files <- c(csv, sibling_results(csv, host, label, scale, meta$bochner_version))
    write_report(read_results(files), how = "here", files = files)
  }
  invisible(res)
}

# Where the package was loaded from and when it was installed.
package_built <- function() {
  built <- tryCatch(utils::packageDescription("bochner")$Built, error = function(e) NULL)
  when <- if (is.null(built)) "unknown" else trimws(strsplit(built, ";")[[1]][3])
  sprintf("installed %s in %s", when, dirname(find.package("bochner")))
}

blas_env_text <- function() {
  vars <- c("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS", "OMP_THREAD_LIMIT")
  vals <- Sys.getenv(vars)
  set <- nzchar(vals)
  if (!any(set)) return("none of OPENBLAS_NUM_THREADS, GOTO_NUM_THREADS, OMP_NUM_THREADS, OMP_THREAD_LIMIT set")
  paste(paste0(vars[set], "=", vals[set]), collapse = ", ")
}

add_speedup <- function(res) {
  res$speedup <- NA_real_
  res$efficiency <- NA_real_
  for (i in seq_len(nrow(res))) {
    one <- res$seconds[res$task == res$task[i] & res$blas == res$blas[i] &
                       !is.na(res$threads) & res$threads == 1L]
    if (length(one) == 1L && !is.na(one) && !is.na(res$seconds[i]) && res$seconds[i] > 0) {
      res$speedup[i] <- one / res$seconds[i]
      res$efficiency[i] <- res$speedup[i] / res$threads[i]
    }
  }
  res
}

# Default-named per-BLAS files of other BLAS for this host, same scale and version.
sibling_results <- function(csv, host, label, scale, version) {
  pat <- sprintf("^bochner-threads-%s-(.+)\\.csv$", gsub(".", "\\.", host, fixed = TRUE))
  if (!grepl(pat, basename(csv))) return(character())
  files <- list.files(dirname(csv), pattern = pat, full.names = TRUE)
  files <- files[normalizePath(files) != normalizePath(csv)]
  keep <- character()
  for (f in files) {
    r <- tryCatch(utils::read.csv(f, stringsAsFactors = FALSE), error = function(e) NULL)
    if (is.null(r) || !nrow(r) || any(r$blas == label)) next
    if (!isTRUE(all.equal(r$scale[1], scale)) || !identical(as.character(r$bochner_version[1]), version)) {
      cat("   not merging", f, "(another scale or package version)\n")
      next
    }
    cat("   merging", f, sprintf("(BLAS %s, %s)\n", r$blas[1], r$date[1]))
    keep <- c(keep, f)
  }
  keep
}

read_results <- function(files) {
  res <- do.call(rbind, lapply(files, utils::read.csv, stringsAsFactors = FALSE))
  res$identical <- as.logical(res$identical)
  res
}

# ---------------------------------------------------------------------------
# driver: one child process per BLAS

driver <- function() {
  t_start <- Sys.time()
  load_start <- load_avg()
  scale <- bench_scale()
  script <- this_script()
  rscript <- file.path(R.home("bin"), "Rscript")
  host <- host_name()
  dir <- tempfile("bochner-threads-")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  clear <- c("-u", "LD_LIBRARY_PATH", "-u", "R_LD_LIBRARY_PATH", "-u", "OPENBLAS_NUM_THREADS",
             "-u", "GOTO_NUM_THREADS", "-u", "OMP_NUM_THREADS")
  libs <- paste0("R_LIBS=", paste(.libPaths(), collapse = ":"))
  cat(sprintf("bench/investigations/threads.R: scale %g, %d cores; one child R per BLAS\n", scale, n_cores()))
  files <- character(); notes <- character(); how <- character()
  for (label in names(BLAS_DIRS)) {
    dirs <- BLAS_DIRS[[label]]
    missing <- dirs[!dir.exists(dirs)]
    if (length(missing)) {
      msg <- sprintf("%s BLAS skipped: %s missing", label, paste(missing, collapse = ", "))
      cat(msg, "\n"); notes <- c(notes, msg)
      next
    }
    ldpath <- paste(c(dirs, R.home("lib"), LIB_DIR), collapse = ":")
    how[[label]] <- sprintf("`R_LD_LIBRARY_PATH=%s`", ldpath)
    csv <- file.path(dir, sprintf("%s.csv", label))
    st <- system2("env", c(clear, libs, paste0("R_LD_LIBRARY_PATH=", ldpath), shQuote(rscript),
                           shQuote(script), "--blas-here", "--label", label, "--csv", shQuote(csv),
                           "--expect", shQuote(paste(dirs, collapse = ":")), "--no-md"))
    if (st != 0L || !file.exists(csv)) {
      msg <- sprintf("%s BLAS: the child process failed (exit status %s); no rows", label, st)
      cat(msg, "\n"); notes <- c(notes, msg)
      next
    }
    files <- c(files, csv)
  }
  if (!length(files)) stop("no BLAS measured")
  res <- read_results(files)
  out <- Sys.getenv("BOCHNER_BENCH_CSV")
  if (!nzchar(out)) out <- file.path(tmp_root(), sprintf("bochner-threads-%s.csv", host))
  utils::write.csv(res, out, row.names = FALSE)
  minutes <- as.double(difftime(Sys.time(), t_start, units = "mins"))
  write_report(res, how = "children", notes = notes, selected = how, minutes = minutes,
               load = c(load_start, load_avg()))
  cat("CSV of all rows:", out, "\n")
}

merge_files <- function(files) {
  if (!length(files)) stop("--merge needs result files")
  write_report(read_results(files), how = "merge", files = files)
}

# ---------------------------------------------------------------------------
# the markdown

fmt_num <- function(x, digits = 2) ifelse(is.na(x), "n/a", formatC(x, format = "f", digits = digits))
fmt_secs <- function(x) ifelse(is.na(x), "n/a", ifelse(x < 10, sprintf("%.3f", x), sprintf("%.1f", x)))

write_report <- function(res, how, notes = character(), selected = character(), files = character(),
                         minutes = NA_real_, load = NULL) {
  first <- function(col) res[[col]][1]
  scale <- first("scale")
  blas_order <- unique(c(intersect(c("reference", "openblas"), res$blas), res$blas))
  task_order <- unique(res$task)
  res <- res[order(match(res$task, task_order), match(res$blas, blas_order), res$threads), ]
  if (is.na(minutes)) minutes <- sum(tapply(res$minutes, res$blas, `[`, 1))
  cmd <- switch(how,
    children = "`Rscript bench/investigations/threads.R` (`make bench`) from the package root, one child R process per BLAS",
    here = "`bench/investigations/threads.R` once per BLAS, each measuring its own process's BLAS (`--blas-here`)",
    merge = "`bench/investigations/threads.R --merge` of per-BLAS result files")
  cores <- first("cores")
  out <- c("# Thread scaling: `bench/investigations/threads.R`", "",
           "<!-- written by bench/investigations/threads.R; rerun it rather than editing -->", "")
  note <- Sys.getenv("BOCHNER_BENCH_NOTE")
  if (nzchar(note)) out <- c(out, note, "")
  if (scale < 1) {
    out <- c(out, sprintf(paste0("> **Smoke run, not a recording.** `BOCHNER_BENCH_SCALE=%g`: every task ",
                                 "is scaled down (see the sizes), so the timings are far below the ",
                                 "intended 2-8 s at 1 thread and say little about scaling; it only shows ",
                                 "that the script runs end to end."), scale), "")
  }
  out <- c(out,
    sprintf("Recorded %s by %s; %s; `BOCHNER_BENCH_SCALE=%g`.",
            substr(first("date"), 1, 10), cmd,
            if (how == "children") sprintf("the whole run took %.1f minutes", minutes)
            else sprintf("the BLAS runs took %.1f minutes together", minutes), scale),
    sprintf("Machine: %s, %d cores (`parallel::detectCores()`), %s GiB; %s; bochner %s (%s); host `%s`.",
            first("cpu"), as.integer(cores), first("mem_gib"), first("r_version"), first("bochner_version"),
            first("bochner_built"), first("host")))
  if (!is.null(load)) {
    out <- c(out, sprintf("Load average %s at the start and %s at the end (the machine may be shared, so timings are noisy).",
                          load[1], load[2]))
  }
  out <- c(out, "", "| BLAS | selected by | BLAS library (`extSoftVersion()`) | LAPACK (`La_library()`) | threads in the process at start | thread variables | measured |",
           "|---|---|---|---|---:|---|---|")
  for (b in blas_order) {
    r <- res[res$blas == b, ][1, ]
    sel <- if (!is.na(selected[b])) selected[[b]] else "the process's own (`--blas-here`)"
    out <- c(out, sprintf("| %s | %s | `%s` | `%s` | %s | %s | %s, load %s to %s |", b, sel, r$blas_library,
                          r$lapack_library, r$threads_at_start, r$blas_env, r$date, r$load_start, r$load_end))
  }
  out <- c(out, "",
    paste0("OpenBLAS runs with its default number of threads (all cores; for OpenBLAS the threads in the ",
           "process at start are its pool), the reference BLAS on one. bochner's threads are set only by ",
           "the `nthreads =` argument of each call; no `OMP_*` variable is set. ",
           "Each time is the best of 3 runs (2 where the first run took over ", SLOW_SECONDS, " s: `runs`), ",
           "every run after the same `set.seed()`; speedup is against 1 thread under the same BLAS, ",
           "efficiency is speedup / threads; identical: every run's result is `identical()` to the first ",
           "1-thread run's (at 1 thread: the repeated runs agree)."))
  if (length(notes)) out <- c(out, "", paste0("- ", notes))
  if (length(files) && how != "children") out <- c(out, "", "Merged from:", "", paste0("- `", files, "`"))
  bad <- res[res$status != "ok", ]
  if (nrow(bad)) {
    out <- c(out, "", "Failures:", "",
             sprintf("- %s (%s BLAS%s): %s", bad$task, bad$blas,
                     ifelse(is.na(bad$threads), "", sprintf(", %d threads", bad$threads)), bad$status))
  }

  # headline: speedup at the most threads, per task and BLAS
  maxt <- max(res$threads, na.rm = TRUE)
  out <- c(out, "", sprintf("## Speedup at %d threads", maxt), "",
           paste0("| task | ", paste(blas_order, collapse = " | "), " |"),
           paste0("|---|", strrep("---:|", length(blas_order))))
  for (t in task_order) {
    cells <- vapply(blas_order, function(b) {
      r <- res[res$task == t & res$blas == b & !is.na(res$threads) & res$threads == maxt, ]
      if (!nrow(r) || is.na(r$speedup[1])) "n/a" else sprintf("%.2f (%s s)", r$speedup[1], fmt_secs(r$seconds[1]))
    }, "")
    out <- c(out, sprintf("| %s | %s |", t, paste(cells, collapse = " | ")))
  }

  ok <- res[!is.na(res$threads), ]
  out <- c(out, "", "## All timings", "",
           "| task | size | BLAS | threads | seconds | runs | speedup | efficiency | identical to 1 thread |",
           "|---|---|---|---:|---:|---:|---:|---:|---|")
  out <- c(out, sprintf("| %s | %s | %s | %d | %s | %d | %s | %s | %s |", ok$task, ok$size, ok$blas, ok$threads,
                        fmt_secs(ok$seconds), ok$runs, fmt_num(ok$speedup), fmt_num(ok$efficiency),
                        ifelse(is.na(ok$identical), "n/a", ifelse(ok$identical, "TRUE", "**FALSE**"))))
  out <- c(out, "", paste0("Tasks: transform = `predict(random_features(x, gaussian_kernel(1), D), x)` ",
                           "(the map built once, untimed); kernel_matrix = `kernel_matrix(gaussian_kernel(1), x)`; ",
                           "kmeans_exact / kmeans_rff = `kernel_kmeans(x, 10, gaussian_kernel(2), method = ...)` ",
                           "on a mixture of 10 Gaussians (rff: `iter.max = 10` fixes the work); ",
                           "rff_ridge = `rff_ridge(x, y, gaussian_kernel(4), D = 2048)`, whose time is mostly the ",
                           "normal equations Z'Z, formed and factored on the package's own product; rff_svm = `rff_svm(x, y, gaussian_kernel(4), D = 1024)` ",
                           "with four classes (the one-vs-rest problems run in parallel); rff_svm_binary = the same with ",
                           "two classes, whose one problem's solver is sequential (only the features are threaded); ridge_predict = `predict()` of an ",
                           "`rff_ridge()` fit (fitted once, untimed) on new rows. CSV of every row: see the run's output ",
                           "(`BOCHNER_BENCH_CSV`)."))
  md <- md_path()
  writeLines(out, md)
  cat("\n", out, sep = "\n")
  cat("\ntable written to", md, "\n")
  invisible(out)
}

# ---------------------------------------------------------------------------

main <- function(args) {
  opt <- function(name) {
    i <- match(name, args)
    if (is.na(i) || i == length(args)) NULL else args[i + 1L]
  }
  if ("--merge" %in% args) return(merge_files(args[-seq_len(match("--merge", args))]))
  here <- "--blas-here" %in% args || env_flag("BOCHNER_BENCH_BLAS_HERE") || run_by_loader()
  if (here) {
    if (!"--blas-here" %in% args && !env_flag("BOCHNER_BENCH_BLAS_HERE"))
      cat("R runs through a bare dynamic loader: measuring this process's BLAS only (--blas-here)\n")
    label <- opt("--label")
    if (is.null(label)) label <- Sys.getenv("BOCHNER_BENCH_BLAS_LABEL")
    measure_here(label = label, csv = opt("--csv"), expect = opt("--expect"),
                 write_md = !"--no-md" %in% args)
  } else {
    driver()
  }
}

main(commandArgs(trailingOnly = TRUE))
