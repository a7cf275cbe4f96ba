# Investigation (issue 38's time and memory targets): default falkon() (and with
# landmarks = "rpcholesky", issue 39's centres) against
# kernlab::ksvm() at its default cost and at C = 10 on Shuttle (the harness's 70/30
# split, 40 600 training rows) and Letter (mlbench's LetterRecognition, 70/30 by
# set.seed(1), 14 000 rows), under OpenBLAS and the reference BLAS; falkon on 2 threads
# and 1, ksvm on 2 (it is single-threaded itself; OpenBLAS threads its few BLAS calls).
# Then the issue's large fit: falkon(m = 1e4) on bench_synth_reg()'s 10^6 rows, d = 20
# (test RMSE on 2 10^4 fresh rows), on 2 threads and 1, with its peak memory beyond the
# data.  Each fit runs in a fresh process (bench_fit(): elapsed and CPU seconds of the
# training call, peak resident memory beyond the data).
# Every fit also counts its minor page faults (/proc/self/stat), and the machine's cost
# of one is measured by touching 400 MB of fresh memory in a fresh process: on a VM
# whose host backs each new page on first touch that cost is tens of times a bare
# machine's, and a fit that allocates its cache afresh pays it serially.
# Markdown on stdout.
#   Rscript bench/investigations/falkon-ksvm-time.R            (from the package root)
#   Rscript bench/investigations/falkon-ksvm-time.R --no-1e6   (without the large fit)
# After the table, Shuttle's default fit and its uniform-centre fit on seeds 1-5 (the
# centres and the held-out slice; the split stays), each under both BLAS, against the
# table's ksvm time: landmarks = "auto" picks RPCholesky centres on Shuttle, and
# how far its growth goes depends on the draw (--no-seeds: without it).
# --reps=N runs every fit N times, each in a fresh process, and reports the median
# run's figures with the range of the elapsed times (this VM's timings of one fit vary
# by about 20 % from run to run); the ratios are of medians.
source("bench/harness/harness.R")
if (!bench_have("mlbench") || !bench_have("kernlab")) stop("needs mlbench and kernlab")
big <- !("--no-1e6" %in% commandArgs(trailingOnly = TRUE))
reps <- as.integer(bench_arg("reps", "1"))
by_seed <- !("--no-seeds" %in% commandArgs(trailingOnly = TRUE))

# minor page faults of this process so far: field 10 of /proc/self/stat, the 8th after
# the command name's closing parenthesis
minflt <- function() {
  s <- sub("^.*\\) ", "", readLines("/proc/self/stat"))
  as.numeric(strsplit(s, " ")[[1L]][8L])
}
# microseconds per fault: 400 MB zero-filled by numeric() in a fresh process
fault_cost <- function(d) {
  invisible(gc())
  a <- minflt()
  t <- system.time(v <- numeric(5e7))[["elapsed"]]
  1e6 * t / (minflt() - a)
}
fits <- list(falkon = function(d) falkon(d$xtr, d$ytr),
             ksvm = function(d) kernlab::ksvm(d$xtr, d$ytr),
             ksvm_C10 = function(d) kernlab::ksvm(d$xtr, d$ytr, C = 10),
             falkon_m1e4 = function(d) falkon(d$xtr, d$ytr, m = 1e4),
             # the same with randomly pivoted Cholesky centres (issue 39)
             falkon_rpc = function(d) falkon(d$xtr, d$ytr, landmarks = "rpcholesky"),
             # the default's centres before landmarks = "auto" (the seeds' table)
             falkon_uniform = function(d) falkon(d$xtr, d$ytr, landmarks = "uniform"))
counted <- function(d, a) {
  f0 <- minflt()
  obj <- fits[[a$m]](d)
  list(obj = obj, faults = minflt() - f0)
}
score <- function(r, d) {
  obj <- r$obj
  p <- if (inherits(obj, "ksvm")) kernlab::predict(obj, d$xte) else stats::predict(obj, d$xte)
  s <- if (is.factor(d$yte)) mean(as.character(p) == as.character(d$yte))
       else sqrt(mean((p - d$yte)^2))
  list(score = s, faults = r$faults)
}
# the same, with the centres the fit kept
score_m <- function(r, d) c(score(r, d), list(m = r$obj$m))
warm <- function(d) fits$falkon(bench_slice(d, 300))
pkg <- function(m) if (startsWith(m, "falkon")) "bochner" else "kernlab"
# bench_fit() 'reps' times: the median run (the lower one for even reps), with the
# range of the elapsed times
fit_reps <- function(...) {
  rs <- lapply(seq_len(reps), function(i) bench_fit(...))
  el <- vapply(rs, `[[`, 0, "elapsed")
  r <- rs[[order(el)[ceiling(reps / 2)]]]
  r$lo <- min(el)
  r$hi <- max(el)
  r
}
# elapsed seconds as the table shows them: with reps, the median and the range
secs <- function(r) {
  if (reps > 1L) sprintf("%.2f (%.2f-%.2f)", r$elapsed, r$lo, r$hi)
  else sprintf("%.2f", r$elapsed)
}

us <- vapply(1:3, function(i) bench_in_child(fault_cost), 0)
cpu <- bench_lscpu()$cpu
cat(sprintf("`Rscript bench/investigations/falkon-ksvm-time.R%s`, %s, commit %s; %s; load average %s at the start.%s\n\n",
            if (reps > 1L) paste0(" --reps=", reps) else "",
            format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC"),
            system("git rev-parse --short HEAD", intern = TRUE), paste(cpu, collapse = ", "),
            strsplit(readLines("/proc/loadavg"), " ")[[1L]][1L],
            if (reps > 1L) {
              sprintf(paste("  Every fit ran %d times, each in a fresh process: the median",
                            "run's figures, the elapsed range in brackets; ratios of medians."),
                      reps)
            } else ""))
# the package's choice at load (src/memory.c): large outputs on huge pages or not
huge <- bench_in_child(function(d) .Call(bochner:::C_huge_pages))
cat(sprintf("One minor page fault costs %s us here (400 MB touched afresh, three fresh processes).\n",
            paste(sprintf("%.1f", us), collapse = ", ")))
cat(sprintf("Large outputs (the K_nm cache, the m x m factor) %s (src/memory.c).\n\n",
            if (huge) "advised onto huge pages" else "on 4 KiB pages: this VM reports its free pages to the host"))
per_fault <- stats::median(us) * 1e-6

# ours: the 2-thread elapsed seconds of falkon and falkon_rpc (NA: not a peer's row)
row <- function(nm, n, r, m, th, ours) {
  ratio <- function(o) if (!is.na(o)) sprintf("%.2f", o / r$elapsed) else ""
  cat(sprintf("| %s | %d | %s | %s | %d | %s | %.2f | %.0f | %.0f | %.2f | %.4f | %s | %s |\n",
              nm, n, r$blas, m, th, secs(r), r$cpu, r$peak_mb, r$faults / 1e3,
              r$faults * per_fault, r$score, ratio(ours[1L]), ratio(ours[2L])))
}
cat("| set | n train | BLAS | fit | threads | elapsed s | CPU s | peak MB | faults (1000s) |",
    "faulting s (est.) | accuracy / RMSE | falkon / this | falkon_rpc / this |\n")
cat("|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
ksvm_s <- list()   # Shuttle's ksvm (default cost) elapsed, by BLAS
for (nm in c("Shuttle", "Letter")) {
  d <- bench_set(nm)
  f <- bench_data_file(d)
  for (blas in c("openblas", "reference")) {
    ours <- c(falkon = NA_real_, falkon_rpc = NA_real_)
    for (m in c("falkon", "falkon_rpc", "ksvm", "ksvm_C10")) {
      for (th in if (m == "falkon") c(2L, 1L) else 2L) {
        r <- fit_reps(bench_job(counted, m = m), f, score, warm, threads = th, blas = blas,
                      packages = pkg(m))
        peer <- !startsWith(m, "falkon")
        row(nm, nrow(d$xtr), r, m, th, if (peer) ours else c(NA_real_, NA_real_))
        if (!peer && th == 2L) ours[[m]] <- r$elapsed
        if (nm == "Shuttle" && m == "ksvm") ksvm_s[[blas]] <- r$elapsed
      }
    }
  }
  if (nm == "Shuttle") shuttle <- f else unlink(f)
}
if (by_seed) {
  cat("\nShuttle, falkon(seed = 1, ..., 5) on 2 threads, each in a fresh process: elapsed s,",
      "test error (%) and the centres kept; the mean time over ksvm's default time above,",
      "same BLAS.\n\n")
  cat("| BLAS | fit | elapsed s | mean s | mean / ksvm | test error (%) | mean error (%) | m |\n")
  cat("|---|---|---|---:|---:|---|---:|---|\n")
  for (blas in names(ksvm_s)) for (m in c("falkon", "falkon_uniform")) {
    rs <- lapply(1:5, function(sd) {
      fit_reps(bench_job(counted, m = m), shuttle, score_m, warm, threads = 2L, blas = blas,
               packages = "bochner", seed = sd)
    })
    el <- vapply(rs, `[[`, 0, "elapsed")
    er <- 100 * (1 - vapply(rs, `[[`, 0, "score"))
    cat(sprintf("| %s | %s | %s | %.2f | %.2f | %s | %.3f | %s |\n", rs[[1]]$blas,
                if (m == "falkon") "falkon (default)" else "landmarks = \"uniform\"",
                paste(sprintf("%.2f", el), collapse = ", "), mean(el), mean(el) / ksvm_s[[blas]],
                paste(sprintf("%.3f", er), collapse = ", "), mean(er),
                paste(vapply(rs, function(r) format(r$m), ""), collapse = ", ")))
  }
}
unlink(shuttle)
if (big) {
  s <- bench_synth_reg(1e6)
  te <- bench_synth_reg(2e4, seed = 7L)
  f <- bench_data_file(list(xtr = s$x, ytr = s$y, xte = te$x, yte = te$y))
  rm(s, te)
  # falkon's work is the package's C (no BLAS): the machine's default BLAS only
  for (th in c(2L, 1L)) {
    r <- fit_reps(bench_job(counted, m = "falkon_m1e4"), f, score, warm, threads = th,
                  packages = "bochner")
    row("synth 10^6, d = 20", 1e6, r, "falkon_m1e4", th, c(NA_real_, NA_real_))
  }
  unlink(f)
}
cat(sprintf("\nLoad average %s at the end.\n", strsplit(readLines("/proc/loadavg"), " ")[[1L]][1L]))
