# The one entry point of the benchmarks, from the package root (bochner installed):
#   Rscript bench/run.R                      every suite, full sizes (make bench)
#   Rscript bench/run.R --quick              every suite, reduced sizes (make bench-quick)
#   Rscript bench/run.R kmeans gp [--quick]  some suites
#   options passed to the suites: --quick, --tiny, --reps=N, --out=DIR,
#   --render (no fit: each page regenerated from its bench/results/<suite>.csv)
# Each suite runs in its own Rscript process (bench/suites/<suite>.R) and writes
# bench/results/<suite>.csv and bench/<suite>.md; a failed suite is reported
# and the others still run; the exit status is 1 when any failed.
if (!file.exists("bench/run.R")) stop("run from the package root")
args <- commandArgs(trailingOnly = TRUE)
suites <- c("transform", "products", "kmeans", "machines", "gp", "statistics", "scale")
suites <- suites[file.exists(file.path("bench", "suites", paste0(suites, ".R")))]
opts <- grep("^--", args, value = TRUE)
want <- setdiff(args, opts)
if (length(want) == 0L) want <- suites
bad <- setdiff(want, suites)
if (length(bad)) stop("unknown suite(s): ", paste(bad, collapse = ", "),
                      "; suites: ", paste(suites, collapse = ", "))
t0 <- Sys.time()
status <- integer()
for (s in want) {
  t1 <- Sys.time()
  status[s] <- system2(file.path(R.home("bin"), "Rscript"),
                       c("--no-init-file", file.path("bench", "suites", paste0(s, ".R")), opts))
  cat(sprintf("== %s: %s in %.1f minutes\n", s, if (status[s] == 0L) "done" else "FAILED",
              as.numeric(difftime(Sys.time(), t1, units = "mins"))))
}
cat(sprintf("== bench/run.R %s: %d suite(s), %d failed, %.1f minutes\n", paste(args, collapse = " "),
            length(want), sum(status != 0L), as.numeric(difftime(Sys.time(), t0, units = "mins"))))
quit(status = as.integer(any(status != 0L)))
