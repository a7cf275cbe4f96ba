# Benchmark: the random Fourier feature transform, predict(map, x), against
# plain R, scikit-learn's RBFSampler.transform and the bare product x %*% W,
# over a grid of sizes, each under R's reference BLAS and under OpenBLAS, plus
# the throughput of the cosine alone.  Run from the package root after
# installing the package:
#   Rscript bench/transform.R        (or: make bench)
# It writes the data once (one file of random normals, read by every process),
# then starts one worker process per BLAS (this script again, with --worker,
# and bench/transform_sklearn.py under /usr/bin/python3), each with the
# environment that makes the dynamic linker load that BLAS, collects what
# they measured and writes the tables into bench/README.md between the
# transform markers.  Takes about 20 minutes on 2 cores.
#
# Contenders that would need more than MAX_BYTES of memory, or whose time
# estimated from a smaller size (same d; time scaled by n * D, which scales
# the flops and the output alike) exceeds MAX_SECONDS, are skipped and marked
# so.  A size estimated at up to SMALL_SECONDS is timed as the median of 3
# runs (after a warm-up run when under WARMUP_SECONDS), larger ones once.

GRID_N <- c(20000L, 200000L)
GRID_d <- c(8L, 64L, 512L)
GRID_D <- c(256L, 2048L, 8192L)
if (nzchar(Sys.getenv("BOCHNER_BENCH_QUICK"))) {  # a smoke test of the script itself
  GRID_N <- c(2000L, 20000L); GRID_d <- c(8L, 64L); GRID_D <- c(256L, 2048L)
}
HEADLINE <- c(n = 20000L, d = 64L, D = 2048L)
MAX_BYTES <- 18e9
MAX_SECONDS <- 60
SMALL_SECONDS <- 3
WARMUP_SECONDS <- 1
COS_N <- 1e7                      # entries for the cosine throughput
WARM_CHUNK <- 1e6                 # ... and for its warm variant, 10 calls
OPENBLAS_DIR <- "/usr/lib/x86_64-linux-gnu/openblas-pthread"

# ---------------------------------------------------------------------------
# helpers used by both the driver and the workers

# The BLAS shared objects the dynamic linker mapped into this process.
loaded_blas <- function() {
  maps <- readLines("/proc/self/maps")
  paths <- unique(sub("^.*[[:space:]](/[^[:space:]]+)$", "\\1", grep("/", maps, value = TRUE)))
  paths <- paths[grepl("blas", basename(paths), ignore.case = TRUE)]
  if (!length(paths)) return("none found")
  paste(sort(unique(normalizePath(paths))), collapse = ";")
}

median_time <- function(f, reps) {
  stats::median(vapply(seq_len(reps), function(i) system.time(f())[["elapsed"]], 0))
}

# ---------------------------------------------------------------------------
# worker: times the R contenders under the BLAS this process loaded

worker <- function(label, dir, which, do_cos) {
  suppressPackageStartupMessages(library(bochner))
  lim <- utils::read.csv(file.path(dir, "limits.csv"))
  lim <- stats::setNames(lim$value, lim$name)
  nmax <- lim[["nmax"]]; dmax <- lim[["dmax"]]
  plan <- utils::read.csv(file.path(dir, "plan.csv"))
  if (which == "headline") plan <- plan[plan$headline, ]
  xall <- readBin(file.path(dir, "x.bin"), "double", nmax * dmax)
  dim(xall) <- c(dmax, nmax)            # row-major n x dmax, as numpy reads it

  one_blas_thread <- label == "openblas1"
  contenders <- list(
    bochner_1t = list(mult = 1, envs = "all"),
    bochner_2t = list(mult = 1, envs = c("reference", "openblas")),
    plain_r    = list(mult = 4, envs = c("reference", "openblas")),
    product    = list(mult = 1, envs = "all"),
    alloc      = list(mult = 1, envs = "reference"))
  contenders <- Filter(function(k) "all" %in% k$envs || label %in% k$envs, contenders)

  rows <- list()
  measured <- list()                    # "contender/d" -> c(n * D, seconds)
  for (i in seq_len(nrow(plan))) {
    n <- plan$n[i]; d <- plan$d[i]; D <- plan$D[i]
    x <- t(xall[seq_len(d), seq_len(n), drop = FALSE])
    map <- readRDS(file.path(dir, sprintf("map_%d_%d.rds", d, D)))
    W <- map$omega; b <- map$phase
    # same answer from the C transform and from plain R (first rows)
    xs <- x[seq_len(64), , drop = FALSE]
    err <- max(abs(predict(map, xs, nthreads = 1L) - sqrt(2 / D) * cos(sweep(xs %*% W, 2, b, "+"))))
    if (!(err < 1e-10)) stop(sprintf("predict() and plain R disagree at n=%d d=%d D=%d: %g", n, d, D, err))
    fun <- list(
      bochner_1t = function() predict(map, x, nthreads = 1L),
      bochner_2t = function() predict(map, x, nthreads = 2L),
      plain_r    = function() sqrt(2 / D) * cos(sweep(x %*% W, 2, b, "+")),
      product    = function() x %*% W,
      alloc      = function() matrix(0, n, D))
    for (name in names(contenders)) {
      key <- paste(name, d)
      need <- contenders[[name]]$mult * 8 * n * D + 8 * (nmax * dmax + 2 * n * d)
      est <- if (is.null(measured[[key]])) NA_real_ else
        measured[[key]][2] * (as.double(n) * D) / measured[[key]][1]
      out <- data.frame(env = label, contender = name, n = n, d = d, D = D,
                        seconds = NA_real_, runs = 0L, status = "")
      if (need > MAX_BYTES) {
        out$status <- "skipped (memory)"
      } else if (!is.na(est) && est > MAX_SECONDS) {
        out$status <- "skipped (time)"
        out$seconds <- est
      } else {
        f <- fun[[name]]
        reps <- if (is.na(est) || est <= SMALL_SECONDS) 3L else 1L
        res <- tryCatch({
          if (is.na(est) || est <= WARMUP_SECONDS) invisible(f())
          median_time(f, reps)
        }, error = function(e) conditionMessage(e))
        if (is.numeric(res)) {
          out$seconds <- res; out$runs <- reps; out$status <- "ok"
          measured[[key]] <- c(as.double(n) * D, res)
        } else {
          out$status <- paste("failed:", res)
        }
      }
      invisible(gc(FALSE))
      rows[[length(rows) + 1L]] <- out
      cat(sprintf("  %-9s %-10s n=%6d d=%3d D=%4d  %8s %s\n", label, name, n, d, D,
                  if (is.na(out$seconds)) "" else sprintf("%.3f", out$seconds), out$status))
    }
    rm(x); invisible(gc(FALSE))
  }

  if (do_cos) {
    u <- readBin(file.path(dir, "u.bin"), "double", COS_N)
    uw <- u[seq_len(WARM_CHUNK)]
    n1 <- 20000L; D1 <- as.integer(COS_N / n1)           # d = 1 phase map, 1e7 entries
    x1 <- matrix(u[seq_len(n1)] / 8, n1, 1L)
    set.seed(3)
    map1 <- random_features(x1[1:10, , drop = FALSE], gaussian_kernel(sigma = 1), D = D1)
    x1w <- x1[seq_len(WARM_CHUNK / D1), , drop = FALSE]
    sincos <- function(v) .Call(bochner:::C_fast_sincos, v)
    cold <- list(
      alloc_cos_n   = function() numeric(COS_N),
      bochner_sincos = function() sincos(u),
      bochner_predict_d1 = function() predict(map1, x1, nthreads = 1L),
      alloc_predict = function() numeric(n1 * D1),
      r_cos         = function() cos(u))
    warm <- list(                                       # 10 calls on 1e6 entries
      bochner_sincos_warm = function() for (k in 1:10) sincos(uw),
      bochner_predict_d1_warm = function() for (k in 1:10) predict(map1, x1w, nthreads = 1L),
      r_cos_warm    = function() for (k in 1:10) cos(uw))
    for (name in names(cold)) {
      f <- cold[[name]]; invisible(f())
      rows[[length(rows) + 1L]] <- data.frame(
        env = label, contender = name, n = if (grepl("predict", name)) n1 * D1 else COS_N,
        d = 0L, D = 0L, seconds = median_time(f, 5L), runs = 5L, status = "ok")
    }
    for (name in names(warm)) {
      f <- warm[[name]]; invisible(f())
      rows[[length(rows) + 1L]] <- data.frame(
        env = label, contender = name, n = 10 * WARM_CHUNK, d = 0L, D = 0L,
        seconds = median_time(f, 5L), runs = 5L, status = "ok")
    }
  }

  utils::write.csv(do.call(rbind, rows), file.path(dir, sprintf("result_%s_r.csv", label)),
                   row.names = FALSE)
  writeLines(c(paste0("process\t", R.version.string, ", bochner ", utils::packageVersion("bochner")),
               paste0("blas\t", loaded_blas()),
               paste0("sessioninfo\t", utils::sessionInfo()$BLAS)),
             file.path(dir, sprintf("info_%s_r.txt", label)))
}

# ---------------------------------------------------------------------------
# driver

find_python <- function() {
  for (py in unique(c("/usr/bin/python3", Sys.which("python3")))) {
    if (nzchar(py) && file.exists(py) &&
        identical(suppressWarnings(system2(py, c("-c", shQuote("import sklearn, numpy")),
                                           stdout = FALSE, stderr = FALSE)), 0L)) return(unname(py))
  }
  ""
}

this_script <- function() {
  f <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  if (length(f) == 1L) normalizePath(f) else normalizePath(file.path("bench", "transform.R"))
}

read_info <- function(file) {
  if (!file.exists(file)) return(NULL)
  l <- strsplit(readLines(file), "\t", fixed = TRUE)
  stats::setNames(vapply(l, `[`, "", 2L), vapply(l, `[`, "", 1L))
}

fmt_secs <- function(r) {
  if (is.null(r) || !nrow(r)) return("")
  if (r$status == "ok") {
    s <- if (r$seconds < 10) sprintf("%.3f", r$seconds) else sprintf("%.1f", r$seconds)
    return(if (r$runs == 1L) paste0(s, "\u00b9") else s)
  }
  if (r$status == "skipped (time)") return(sprintf("skipped (time, ~%.0f s)", r$seconds))
  r$status
}

driver <- function() {
  t_start <- Sys.time()
  load_start <- readLines("/proc/loadavg")
  stopifnot(file.exists(file.path("bench", "README.md")))
  suppressPackageStartupMessages(library(bochner))
  script <- this_script()
  py_script <- file.path(dirname(script), "transform_sklearn.py")
  python <- find_python()
  if (!nzchar(python)) message("python3 with scikit-learn not found: no sklearn columns")
  have_openblas <- file.exists(file.path(OPENBLAS_DIR, "libblas.so.3"))
  dir <- tempfile("bochner-bench-")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)

  # the data, once for everybody: x is n x d normals, row-major in x.bin
  nmax <- max(GRID_N); dmax <- max(GRID_d)
  cat("writing the data to", dir, "\n")
  set.seed(1)
  xall <- stats::rnorm(as.double(nmax) * dmax)
  writeBin(xall, file.path(dir, "x.bin"))
  dim(xall) <- c(dmax, nmax)
  plan <- expand.grid(n = GRID_N, D = GRID_D, d = GRID_d)[, c("n", "d", "D")]
  plan <- plan[order(plan$d, as.double(plan$n) * plan$D), ]
  plan$headline <- plan$n == HEADLINE[["n"]] & plan$d == HEADLINE[["d"]] & plan$D == HEADLINE[["D"]]
  utils::write.csv(plan, file.path(dir, "plan.csv"), row.names = FALSE)
  for (d in GRID_d) for (D in GRID_D) {
    set.seed(1000 * d + D)
    xs <- t(xall[seq_len(d), seq_len(64), drop = FALSE])
    map <- random_features(xs, gaussian_kernel(sigma = sqrt(d)), D = D)
    saveRDS(map, file.path(dir, sprintf("map_%d_%d.rds", d, D)))
    writeBin(as.vector(t(map$omega)), file.path(dir, sprintf("w_%d_%d.bin", d, D)))
    writeBin(map$phase, file.path(dir, sprintf("b_%d_%d.bin", d, D)))
    writeBin(as.vector(t(predict(map, xs, nthreads = 1L))), file.path(dir, sprintf("z_%d_%d.bin", d, D)))
  }
  rm(xall); invisible(gc(FALSE))
  set.seed(2)
  writeBin(stats::runif(COS_N, -8 * pi, 8 * pi), file.path(dir, "u.bin"))
  utils::write.csv(data.frame(
    name = c("max_seconds", "max_bytes", "small_seconds", "warmup_seconds", "nmax", "dmax"),
    value = c(MAX_SECONDS, MAX_BYTES, SMALL_SECONDS, WARMUP_SECONDS, nmax, dmax)),
    file.path(dir, "limits.csv"), row.names = FALSE)

  # one R worker and one python worker per BLAS, one at a time
  rscript <- file.path(R.home("bin"), "Rscript")
  libs <- paste0("R_LIBS=", paste(.libPaths(), collapse = ":"))
  clear <- c("-u", "LD_LIBRARY_PATH", "-u", "R_LD_LIBRARY_PATH", "-u", "OPENBLAS_NUM_THREADS",
             "-u", "OMP_NUM_THREADS")
  envs <- list(
    reference = list(r = character(), py = character(), which = "all", cos = TRUE,
                     how = "R's default (`update-alternatives` libblas.so.3: Debian's reference BLAS); python: no `LD_LIBRARY_PATH`"),
    openblas  = list(r = paste0("R_LD_LIBRARY_PATH=", OPENBLAS_DIR, ":", R.home("lib")),
                     py = paste0("LD_LIBRARY_PATH=", OPENBLAS_DIR), which = "all", cos = FALSE,
                     how = sprintf("R: `R_LD_LIBRARY_PATH=%s:%s`; python: `LD_LIBRARY_PATH=%s`; OpenBLAS's default threads (all cores)",
                                   OPENBLAS_DIR, R.home("lib"), OPENBLAS_DIR)),
    openblas1 = list(r = c(paste0("R_LD_LIBRARY_PATH=", OPENBLAS_DIR, ":", R.home("lib")),
                           "OPENBLAS_NUM_THREADS=1"),
                     py = c(paste0("LD_LIBRARY_PATH=", OPENBLAS_DIR), "OPENBLAS_NUM_THREADS=1"),
                     which = "headline", cos = FALSE,
                     how = "as `openblas`, plus `OPENBLAS_NUM_THREADS=1` (headline size only)"))
  if (!have_openblas) envs <- envs["reference"]
  for (label in names(envs)) {
    e <- envs[[label]]
    cat(sprintf("\n== %s: R worker\n", label))
    st <- system2("env", c(clear, libs, e$r, rscript, shQuote(script), "--worker", label,
                           shQuote(dir), e$which, if (e$cos) "cos"))
    if (st != 0L) stop("the R worker for ", label, " failed")
    if (nzchar(python)) {
      cat(sprintf("== %s: python worker\n", label))
      st <- system2("env", c(clear, e$py, python, shQuote(py_script), label, shQuote(dir),
                             e$which, if (e$cos) "cos"))
      if (st != 0L) stop("the python worker for ", label, " failed")
    }
  }
  res <- do.call(rbind, lapply(list.files(dir, "^result_.*\\.csv$", full.names = TRUE),
                               utils::read.csv, stringsAsFactors = FALSE))
  minutes <- as.double(difftime(Sys.time(), t_start, units = "mins"))
  table <- report(res, envs, dir, python, minutes, load_start, readLines("/proc/loadavg"))
  cat("\n", table, sep = "\n")

  readme <- file.path("bench", "README.md")
  lines <- readLines(readme)
  start <- grep("<!-- transform:start -->", lines, fixed = TRUE)
  end <- grep("<!-- transform:end -->", lines, fixed = TRUE)
  if (length(start) == 1L && length(end) == 1L && end > start) {
    writeLines(c(lines[seq_len(start)], table, lines[end:length(lines)]), readme)
    cat("\nrecorded in", readme, "\n")
  } else {
    warning("no transform markers in ", readme, ": nothing recorded")
  }
}

# ---------------------------------------------------------------------------
# the markdown

report <- function(res, envs, dir, python, minutes, load_start, load_end) {
  get <- function(env, contender, n = NA, d = NA, D = NA) {
    r <- res[res$env == env & res$contender == contender, ]
    if (!is.na(n)) r <- r[r$n == n & r$d == d & r$D == D, ]
    r
  }
  secs <- function(...) { r <- get(...); if (nrow(r) && r$status == "ok") r$seconds else NA_real_ }
  ratio <- function(a, b) if (is.na(a) || is.na(b)) "n/a" else sprintf("%.2f", a / b)

  cpu <- sub("^[^:]*:[[:space:]]*", "", grep("^model name", readLines("/proc/cpuinfo"), value = TRUE)[1])
  flags <- strsplit(sub("^[^:]*:", "", grep("^flags", readLines("/proc/cpuinfo"), value = TRUE)[1]), " ")[[1]]
  simd <- intersect(c("avx2", "fma", "avx512f"), flags)
  mem <- as.numeric(gsub("[^0-9]", "", grep("^MemTotal", readLines("/proc/meminfo"), value = TRUE))) / 2^20
  h <- HEADLINE
  hs <- function(env, contender) secs(env, contender, h[["n"]], h[["d"]], h[["D"]])

  out <- c(
    sprintf("Recorded %s by `Rscript bench/transform.R` (`make bench`) from the package root; the whole run took %.1f minutes.",
            format(Sys.Date()), minutes),
    sprintf("Machine: %s (%s), %d cores, %.0f GiB; %s; load average %s at the start and %s at the end (the machine is shared, so timings are noisy).",
            cpu, paste(simd, collapse = ", "), parallel::detectCores(), mem, R.version.string,
            paste(strsplit(load_start, " ")[[1]][1:3], collapse = "/"),
            paste(strsplit(load_end, " ")[[1]][1:3], collapse = "/")),
    "",
    sprintf("### Headline: n = %d, d = %d, D = %d", h[["n"]], h[["d"]], h[["D"]]),
    "",
    "| comparison | bochner (s) | other (s) | ratio | target |",
    "|---|---:|---:|---:|---:|")
  hl <- function(what, a, b, target) sprintf("| %s | %s | %s | %s | %s |", what,
    if (is.na(a)) "n/a" else sprintf("%.3f", a), if (is.na(b)) "n/a" else sprintf("%.3f", b),
    ratio(a, b), target)
  out <- c(out,
    hl("bochner 1 thread / sklearn, reference BLAS (1 thread)", hs("reference", "bochner_1t"), hs("reference", "sklearn"), "<= 0.6"),
    hl("bochner 1 thread / sklearn, OpenBLAS (2 threads)", hs("openblas", "bochner_1t"), hs("openblas", "sklearn"), "<= 0.6"),
    hl("bochner 2 threads / sklearn, OpenBLAS (2 threads)", hs("openblas", "bochner_2t"), hs("openblas", "sklearn"), "<= 0.6"),
    hl("bochner 1 thread / sklearn, OpenBLAS (1 thread)", hs("openblas1", "bochner_1t"), hs("openblas1", "sklearn"), "<= 0.6"),
    hl("bochner 2 threads / x %*% W, OpenBLAS (2 threads)", hs("openblas", "bochner_2t"), hs("openblas", "product"), "<= 1.3"),
    hl("bochner 1 thread / x %*% W, OpenBLAS (1 thread)", hs("openblas1", "bochner_1t"), hs("openblas1", "product"), "<= 1.3"))
  cosr <- res[res$env == "reference" & res$d == 0, ]
  ns <- function(name) { r <- cosr[cosr$contender == name, ]; if (nrow(r)) 1e9 * r$seconds / r$n else NA_real_ }
  ns_net <- function(name, alloc, k = 1) ns(name) - k * ns(alloc)
  cos_head <- ns("bochner_predict_d1_warm")
  out <- c(out, sprintf("| cosine in predict() (phase map, d = 1, warm output), ns per entry | %s | | | <= 2 |",
                        if (is.na(cos_head)) "n/a" else sprintf("%.2f", cos_head)))

  # processes and their BLAS
  out <- c(out, "", "### Processes and the BLAS each one loaded", "",
           "Each process lists the BLAS shared objects mapped into it (`/proc/self/maps`); bochner's own product (src/gemm.c, AVX-512 here) calls no BLAS.", "",
           "| label | how the BLAS was selected | process | BLAS loaded | BLAS threads |", "|---|---|---|---|---|")
  for (label in names(envs)) for (kind in c("r", "python")) {
    info <- read_info(file.path(dir, sprintf("info_%s_%s.txt", label, kind)))
    if (is.null(info)) next
    threads <- if (kind == "python") info[["threads"]] else if (grepl("openblas", info[["blas"]])) {
      if (label == "openblas1") "1" else as.character(parallel::detectCores())
    } else "1 (reference BLAS)"
    out <- c(out, sprintf("| %s | %s | %s | `%s` | %s |", label, envs[[label]]$how, info[["process"]],
                          gsub(";", "`, `", info[["blas"]]), threads))
  }

  # the grid
  cols <- c(bochner_1t = "bochner 1 thread", bochner_2t = "bochner 2 threads",
            plain_r = "plain R", sklearn = "sklearn", product = "x %*% W")
  for (env in intersect(c("reference", "openblas"), names(envs))) {
    threads <- if (env == "reference") 1L else parallel::detectCores()
    same <- if (threads == 1L) "bochner_1t" else "bochner_2t"
    out <- c(out, "", sprintf("### Transform, %s BLAS: seconds", if (env == "reference") "reference" else "OpenBLAS"), "",
             paste0("| n | d | D | ", paste(cols, collapse = " | "),
                    " | allocate + fill n x D | bochner 1 thread / sklearn | bochner ", threads, if (threads == 1L) " thread" else " threads", " / x %*% W |"),
             paste0("|", strrep("---:|", length(cols) + 6L)))
    grid <- utils::read.csv(file.path(dir, "plan.csv"))
    grid <- grid[order(grid$n, grid$d, grid$D), ]
    for (i in seq_len(nrow(grid))) {
      g <- grid[i, ]
      cells <- vapply(names(cols), function(k) fmt_secs(get(env, k, g$n, g$d, g$D)), "")
      b1 <- secs(env, "bochner_1t", g$n, g$d, g$D)
      out <- c(out, sprintf("| %d | %d | %d | %s | %s | %s | %s |", g$n, g$d, g$D,
                            paste(cells, collapse = " | "),
                            fmt_secs(get("reference", "alloc", g$n, g$d, g$D)),
                            ratio(b1, secs(env, "sklearn", g$n, g$d, g$D)),
                            ratio(secs(env, same, g$n, g$d, g$D), secs(env, "product", g$n, g$d, g$D))))
    }
  }
  out <- c(out, "",
    sprintf("Median of 3 runs where a single run was estimated at <= %g s, else one run (marked \u00b9). plain R is `sqrt(2/D) * cos(sweep(x %%*%% W, 2, b, \"+\"))`; sklearn is `RBFSampler.transform` with bochner's W and b put in `random_weights_` / `random_offset_` (so all contenders compute the same Z; checked on the first 64 rows); x %%*%% W is R's product; \"allocate + fill\" is `matrix(0, n, D)` (measured once, under the reference BLAS; no BLAS involved). Skipped: estimated peak memory above %.0f GB (plain R counted at 4 outputs: the product, the phases sweep() spreads to n x D and its permuted copy, and the sum; others at 1) or estimated time above %g s (time of the largest smaller size with the same d, scaled by n D).",
            SMALL_SECONDS, MAX_BYTES / 1e9, MAX_SECONDS))

  # the cosine
  if (nrow(cosr)) {
    pr <- function(name, what, net_alloc = NA, k = 1, warm = NA, numpy = FALSE) {
      raw <- ns(name)
      net <- if (is.na(net_alloc)) "" else sprintf("%.2f", raw - k * ns(net_alloc))
      sprintf("| %s | %.2f | %s | %s |", what, raw, net, if (is.na(warm)) "" else sprintf("%.2f", ns(warm)))
    }
    out <- c(out, "", "### Cosine throughput: ns per entry (1e7 entries, uniform on [-8 pi, 8 pi], 1 thread)", "",
      "| operation | fresh output, 1e7 in one call | minus allocating + zeroing the output | warm: 10 calls on 1e6 entries |",
      "|---|---:|---:|---:|",
      pr("bochner_predict_d1", "bochner `predict()`, phase map with d = 1 (product, + b, cos, scale), per entry", "alloc_predict", 1, "bochner_predict_d1_warm"),
      pr("bochner_sincos", "bochner `.Call(C_fast_sincos, x)`, per (cos, sin) pair", "alloc_cos_n", 2, "bochner_sincos_warm"),
      pr("r_cos", "R `cos(x)`", "alloc_cos_n", 1, "r_cos_warm"),
      pr("numpy_cos_fresh", "numpy `np.cos(a)`", "alloc_cos_n", 1),
      pr("numpy_cos_inplace", "numpy `np.cos(a, out=a)`, in place (no allocation)", NA, 1, "numpy_cos_inplace_warm"),
      "",
      sprintf("Allocating and zeroing 1e7 doubles (`numeric(1e7)`, fresh pages from the kernel) costs %.2f ns per entry here; the middle column subtracts it (twice for the pair).", ns("alloc_cos_n")))
  }
  out
}

# ---------------------------------------------------------------------------

args <- commandArgs(trailingOnly = TRUE)
if (length(args) >= 4L && args[1] == "--worker") {
  worker(args[2], args[3], args[4], length(args) >= 5L && args[5] == "cos")
} else {
  driver()
}
