# The bench harness: sourced (from the package root) by every suite in
# bench/suites/ and by the child process that times one fit.  Its pieces:
#   machine.R   the machine header (CPU, caches, BLAS, threads, load, version, commit)
#   fit.R       bench_fit(): one fit timed in a fresh R process (elapsed, CPU, peak RSS);
#               bench_time(): a short call timed in this process (best of runs)
#   data.R      data loaders: mlbench, kernlab, ggplot2 sets and seeded synthetic sets
#   peers.R     the peers' fits (kernlab, e1071, LiblineaR, glmnet, dHSIC, energy,
#               GauPro) and scikit-learn through /usr/bin/python3, each skipped with a
#               line when not installed
#   report.R    the suite's rows -> bench/results/<suite>.csv and bench/<suite>.md
# A suite starts with bench_start() and ends with bench_finish(); see
# bench/README.md.
if (!file.exists("bench/harness/harness.R")) stop("run from the package root")
for (f in c("machine.R", "fit.R", "data.R", "peers.R", "report.R")) {
  source(file.path("bench", "harness", f))
}
rm(f)
