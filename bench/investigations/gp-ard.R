# Should rff_gp() learn one length scale per input (ard = TRUE) by default
# wherever d > 1 (issue 39)?  Test RMSE, median absolute error, coverage of
# the 95 % prediction intervals and time of rff_gp(ard = FALSE) (today's
# default) and rff_gp(ard = TRUE), each with its default D and starting values,
# on five 80 / 20 splits (seeds 101-105) of:
#   BostonHousing (mlbench; medv on 13 inputs, 506 rows)
#   quakes (datasets; depth on latitude and longitude, 1000 rows)
#   Friedman 1 (mlbench.friedman1, sd 1, 3000 rows: 5 of 10 inputs noise)
#   Friedman 2 (mlbench.friedman2, sd 125, 3000 rows: 4 inputs)
#   diamonds (ggplot2; log price on 9 predictors, factors one-hot: 23
#     columns; 6000 rows drawn with seed 9)
#   synth (bench_synth_reg(6000, d = 20): 10 of 20 inputs unused)
# "loo_rmse" is the fit's closed-form leave-one-out RMSE on its training rows
# (residual / (1 - h_ii), h_ii = var f(x_i) / s_n^2): whether a check
# without held-out rows could tell when ARD will lose.  Every fit runs with
# the package's threads; elapsed seconds, with the load average before each.
# Writes gp-ard.md and gp-ard.csv beside this file (RENDER_ONLY=1: the page
# again from the CSV, no fit).
# Run: R_LIBS=<lib with bochner> Rscript bench/investigations/gp-ard.R
suppressPackageStartupMessages(library(bochner))
source("bench/harness/data.R")
source("bench/harness/machine.R")

sets <- list(
  BostonHousing = function() {
    e <- new.env()
    utils::data(BostonHousing, package = "mlbench", envir = e)
    list(x = data.matrix(e$BostonHousing[, -14]), y = e$BostonHousing$medv)
  },
  quakes = function() list(x = as.matrix(datasets::quakes[, 1:2]), y = datasets::quakes$depth),
  friedman1 = function() {
    set.seed(7)
    f <- mlbench::mlbench.friedman1(3000, sd = 1)
    list(x = f$x, y = f$y)
  },
  friedman2 = function() {
    set.seed(8)
    f <- mlbench::mlbench.friedman2(3000, sd = 125)
    list(x = f$x, y = f$y)
  },
  diamonds = function() {
    e <- new.env()
    utils::data(diamonds, package = "ggplot2", envir = e)
    set.seed(9)
    dd <- as.data.frame(e$diamonds[sample(nrow(e$diamonds), 6000), ])
    list(x = stats::model.matrix(~ carat + cut + color + clarity + depth + table + x + y + z,
                                 dd)[, -1], y = log(dd$price))
  },
  synth = function() bench_synth_reg(6000, d = 20, seed = 10)
)

loo_rmse <- function(fit, x, y) {
  p <- predict(fit, x, se.fit = TRUE)
  h <- p$se.fit^2 / p$residual.scale^2
  sqrt(mean(((y - p$fit) / (1 - h))^2))
}
load_now <- function() as.numeric(strsplit(readLines("/proc/loadavg"), " ")[[1L]][1L])

out <- "bench/investigations"
if (nzchar(Sys.getenv("RENDER_ONLY"))) {
  res <- utils::read.csv(file.path(out, "gp-ard.csv"))
} else {
  rows <- list()
  for (s in names(sets)) {
    d <- sets[[s]]()
    for (split in 1:5) {
      set.seed(100 + split)
      tr <- sample(nrow(d$x), round(0.8 * nrow(d$x)))
      for (ard in c(FALSE, TRUE)) {
        ld <- load_now()
        set.seed(1)
        t <- system.time(fit <- rff_gp(d$x[tr, ], d$y[tr], ard = ard))[["elapsed"]]
        p <- predict(fit, d$x[-tr, ], interval = "prediction")
        e <- d$y[-tr] - p[, 1]
        r <- data.frame(set = s, n_train = length(tr), d = ncol(d$x), split, ard,
                        rmse = sqrt(mean(e^2)), mae = stats::median(abs(e)),
                        coverage = mean(d$y[-tr] >= p[, 2] & d$y[-tr] <= p[, 3]),
                        loo_rmse = loo_rmse(fit, d$x[tr, ], d$y[tr]), seconds = t,
                        evaluations = fit$optim$counts[[1L]], D = fit$D, load = ld)
        rows[[length(rows) + 1L]] <- r
        print(r, digits = 4)
      }
    }
  }

  res <- do.call(rbind, rows)
  utils::write.csv(res, file.path(out, "gp-ard.csv"), row.names = FALSE)
}

m <- bench_machine()
m$load_start <- paste(range(res$load), collapse = "-")
lscpu <- system2("lscpu", stdout = TRUE)
family <- function(f) trimws(sub("^[^:]*:", "", grep(paste0("^", f, ":"), lscpu, value = TRUE)[1L]))
m$cpu <- sprintf("%s, CPU family %s, model %s", m$cpu, family("CPU family"), family("Model"))
wide <- merge(res[!res$ard, ], res[res$ard, ], by = c("set", "n_train", "d", "split"),
              suffixes = c("_iso", "_ard"))
wide <- wide[order(match(wide$set, names(sets)), wide$split), ]
change <- function(a, b) sprintf("%+.1f %%", 100 * (b / a - 1))
fmt <- function(v) formatC(v, digits = 4, format = "g")
split_tab <- with(wide, data.frame(
  set, n = n_train, d, split, `RMSE iso` = fmt(rmse_iso), `RMSE ard` = fmt(rmse_ard),
  change = change(rmse_iso, rmse_ard), `median abs. error change` = change(mae_iso, mae_ard),
  `LOO RMSE change` = change(loo_rmse_iso, loo_rmse_ard),
  `coverage iso / ard` = sprintf("%.3f / %.3f", coverage_iso, coverage_ard),
  `s iso / ard` = sprintf("%.1f / %.1f", seconds_iso, seconds_ard),
  `evaluations iso / ard` = paste(evaluations_iso, "/", evaluations_ard),
  check.names = FALSE))
means <- do.call(rbind, lapply(split(wide, factor(wide$set, names(sets))), function(w) data.frame(
  set = w$set[1], `RMSE iso` = fmt(mean(w$rmse_iso)), `RMSE ard` = fmt(mean(w$rmse_ard)),
  change = change(mean(w$rmse_iso), mean(w$rmse_ard)),
  `splits better / worse by > 1 %` = paste(sum(w$rmse_ard < 0.99 * w$rmse_iso), "/",
                                           sum(w$rmse_ard > 1.01 * w$rmse_iso)),
  `coverage iso / ard` = sprintf("%.3f / %.3f", mean(w$coverage_iso), mean(w$coverage_ard)),
  `time ratio ard / iso` = sprintf("%.1f", sum(w$seconds_ard) / sum(w$seconds_iso)),
  check.names = FALSE)))
md <- function(df) {
  c(paste0("| ", paste(names(df), collapse = " | "), " |"),
    paste0("|", paste(rep("---", ncol(df)), collapse = "|"), "|"),
    apply(df, 1L, function(r) paste0("| ", paste(r, collapse = " | "), " |")))
}
lost <- wide$rmse_ard > 1.01 * wide$rmse_iso
won <- wide$rmse_ard < 0.99 * wide$rmse_iso
loo_blind <- sum(lost & wide$loo_rmse_ard < wide$loo_rmse_iso)
mae_ok <- sum(lost & wide$mae_ard <= wide$mae_iso)
reading <- c(
  sprintf(paste("ARD lowers the test RMSE by more than 1 %% on %d of %d splits and raises it by",
                "more than 1 %% on %d (by up to %.0f %%), at %.1f times the isotropic fit's",
                "time over all fits (%.1f to %.1f per set)."),
          sum(won), nrow(wide), sum(lost),
          100 * max(c(0, (wide$rmse_ard / wide$rmse_iso - 1)[lost])),
          sum(wide$seconds_ard) / sum(wide$seconds_iso),
          min(tapply(wide$seconds_ard, wide$set, sum) / tapply(wide$seconds_iso, wide$set, sum)),
          max(tapply(wide$seconds_ard, wide$set, sum) / tapply(wide$seconds_iso, wide$set, sum))),
  sprintf(paste("On %d of those %d splits the fit's own leave-one-out RMSE favoured ARD, so it",
                "cannot guard the choice; on %d of them ARD's median absolute error is no",
                "worse: the loss is in a few test rows."), loo_blind, sum(lost), mae_ok))
page <- c(
  "# rff_gp(): one length scale per input by default?", "",
  "Generated by `Rscript bench/investigations/gp-ard.R` (issue 39: make `ard = TRUE` the",
  "default wherever d > 1 if its starting values and speed allow; measure it).", "",
  sprintf("Machine: %s (%s), %d cores, %s; bochner %s (%s); load average %s before the fits.",
          m$cpu, m$simd, m$cores, m$blas, m$bochner, m$commit, m$load_start), "",
  "Five 80 / 20 splits of each set; `rff_gp(x, y, ard = FALSE)` (today's default, one",
  "length scale) against `ard = TRUE` (the shared scale's optimum first, then one per",
  "input from there), both with the default D and starts, `set.seed(1)` before each fit;",
  "elapsed seconds with the package's threads.", "",
  "## Means over the splits", "", md(means), "",
  "## Every split", "",
  "RMSE and coverage of the 95 % prediction intervals on the test rows; the median",
  "absolute error's change and the change of the fit's own leave-one-out RMSE on its",
  "training rows.", "", md(split_tab), "",
  "## Reading", "", reading)
writeLines(page, file.path(out, "gp-ard.md"))
