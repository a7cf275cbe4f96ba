# Issue 38's "twice the cached rows": falkon()'s default centres are capped by a budget of
# K_nm entries (falkon_default_centers(): 4e8, what the default cache_bytes holds in
# double).  In float the cache holds twice as many, so the cap could double.  This fits the
# default falkon() at n training rows three ways: double with the budget as it is, single
# precision with twice the budget (K_nm cached in float) and double with twice the budget
# (K_nm then too large for the cache: every pass evaluates the kernel).  Test RMSE or
# accuracy, elapsed time, the centres' path.  The budget is changed in the package's
# namespace for the run (it is not an option).
# Usage: Rscript bench/investigations/falkon-twice-centres.R [--n=2e5] [--sets=synth_reg,friedman1,synth_class]
source("bench/harness/report.R")    # bench_arg()
source("bench/harness/machine.R")   # bench_lscpu(), bench_load()
opt <- function(name, default) bench_arg(name, default, split = TRUE)
suppressPackageStartupMessages(library(bochner))
source("bench/harness/data.R")
n <- as.numeric(opt("n", "2e5"))
sets <- list(
  synth_reg = function() { d <- bench_synth_reg(n + 2e4); bench_split(d$x, d$y, n_train = n, n_test = 2e4) },
  friedman1 = function() { d <- bench_friedman1(n + 2e4); bench_split(d$x, d$y, n_train = n, n_test = 2e4) },
  synth_class = function() { d <- bench_synth_class(n + 2e4); bench_split(d$x, d$y, n_train = n, n_test = 2e4) })
budget <- bochner:::falkon_kernel_budget
cat(sprintf("`Rscript bench/investigations/falkon-twice-centres.R --n=%g`, %s UTC; %s; 2 threads; load averages %s at the start.\n\n",
            n, format(Sys.time(), "%Y-%m-%d %H:%M", tz = "UTC"), bench_lscpu()$cpu, bench_load()))
cat("| set | n train | precision | budget (K_nm entries) | test RMSE / accuracy | elapsed s | centres path | lambda |\n|---|---:|---|---:|---:|---:|---|---:|\n")
for (nm in opt("sets", names(sets))) {
  d <- sets[[nm]]()
  for (v in list(list("double", budget), list("single", 2 * budget), list("double", 2 * budget))) {
    utils::assignInNamespace("falkon_kernel_budget", v[[2]], "bochner")
    gc()
    t <- system.time(f <- falkon(d$xtr, d$ytr, seed = 1, nthreads = 2,
                                 control = falkon_control(precision = v[[1]])))[["elapsed"]]
    p <- predict(f, d$xte)
    s <- if (is.factor(d$ytr)) mean(p == d$yte) else sqrt(mean((p - d$yte)^2))
    cat(sprintf("| %s | %g | %s | %g | %.5f | %.1f | %s | %g |\n", nm, n, f$precision, v[[2]], s, t,
                paste(f$centres_path$m, collapse = " > "), f$lambda))
  }
}
utils::assignInNamespace("falkon_kernel_budget", budget, "bochner")
cat(sprintf("\nLoad averages %s at the end.\n", bench_load()))
