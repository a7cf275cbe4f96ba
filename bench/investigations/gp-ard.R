# Should rff_gp() learn one length scale per input (ard = TRUE) by default
# wherever d > 1 (issue 39)?  Test RMSE, median absolute error, coverage of
# the 95 % prediction intervals and time of rff_gp(ard = FALSE) and
# rff_gp(ard = TRUE), each with its default D and starting values.
# Small sets, five 80 / 20 splits each (seeds 101-105):
#   BostonHousing (mlbench; medv on 13 inputs, 506 rows)
#   quakes (datasets; depth on latitude and longitude, 1000 rows)
#   Friedman 1 (mlbench.friedman1, sd 1, 3000 rows: 5 of 10 inputs noise)
#   Friedman 2 (mlbench.friedman2, sd 125, 3000 rows: 4 inputs)
#   diamonds (ggplot2; bench_diamonds(): log price on 9 predictors, the
#     factors one-hot as in the machines suite, 23 columns; 6000 rows drawn
#     with seed 9)
#   synth (bench_synth_reg(6000, d = 20): 10 of 20 inputs unused)
# Large sets (the size the package is for):
#   diamonds_43k: bench_diamonds(), 43 000 training rows drawn (seeds 201,
#     202), the other 10 940 the test rows
#   friedman1_1e5, friedman2_1e5, synth_1e5: 10^5 training and 2 x 10^4
#     test rows (seeds 31, 32 and bench_synth_reg()'s 11)
# "loo_rmse" is the fit's closed-form leave-one-out RMSE on its training rows
# (residual / (1 - h_ii), h_ii = var f(x_i) / s_n^2): whether a check
# without held-out rows could tell when ARD will lose.  Every fit runs with
# the package's threads; elapsed seconds, with the load average before each.
# Writes gp-ard.md and gp-ard.csv beside this file.  RENDER_ONLY=1: the page
# again from the CSV, no fit; PART=small, PART=large or PART=<set>,<set>:
# fit those sets only, their rows replacing theirs in the CSV.
# Run: R_LIBS=<lib with bochner> Rscript bench/investigations/gp-ard.R
suppressPackageStartupMessages(library(bochner))
source("bench/harness/data.R")
source("bench/harness/machine.R")

data_sets <- list(
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
    dm <- bench_diamonds()
    set.seed(9)
    i <- sample(nrow(dm$x), 6000)
    list(x = dm$x[i, ], y = dm$y[i])
  },
  synth = function() bench_synth_reg(6000, d = 20, seed = 10)
)

# five 80 / 20 splits of a small set (the harness's bench_split()); the
# first n rows of a simulated large set for training, the rest for test
split5 <- function(d) lapply(1:5, function(split) {
  bench_split(d$x, d$y, frac = 0.8, seed = 100 + split)
})
first <- function(d, n) {
  tr <- seq_len(n)
  list(list(xtr = d$x[tr, ], ytr = d$y[tr], xte = d$x[-tr, ], yte = d$y[-tr]))
}
small <- lapply(data_sets, function(f) function() split5(f()))
large <- list(
  diamonds_43k = function() {
    dm <- bench_diamonds()
    lapply(1:2, function(split) bench_split(dm$x, dm$y, n_train = 43000, seed = 200 + split))
  },
  friedman1_1e5 = function() {
    set.seed(31)
    f <- mlbench::mlbench.friedman1(1.2e5, sd = 1)
    first(f, 1e5)
  },
  friedman2_1e5 = function() {
    set.seed(32)
    f <- mlbench::mlbench.friedman2(1.2e5, sd = 125)
    first(f, 1e5)
  },
  synth_1e5 = function() first(bench_synth_reg(1.2e5, d = 20, seed = 11), 1e5)
)
sets <- c(small, large)

loo_rmse <- function(fit, x, y) {
  p <- predict(fit, x, se.fit = TRUE)
  h <- p$se.fit^2 / p$residual.scale^2
  sqrt(mean(((y - p$fit) / (1 - h))^2))
}
load_now <- function() as.numeric(strsplit(readLines("/proc/loadavg"), " ")[[1L]][1L])

out <- "bench/investigations"
part <- Sys.getenv("PART")
csv <- file.path(out, "gp-ard.csv")
if (nzchar(Sys.getenv("RENDER_ONLY"))) {
  res <- utils::read.csv(csv)
} else {
  run <- if (!nzchar(part)) sets
         else switch(part, small = small, large = large,
                     sets[intersect(names(sets), strsplit(part, ",")[[1L]])])
  if (!length(run)) stop("PART names no set: ", part)
  rows <- list()
  for (s in names(run)) {
    splits <- run[[s]]()
    for (split in seq_along(splits)) {
      d <- splits[[split]]
      for (ard in c(FALSE, TRUE)) {
        ld <- load_now()
        set.seed(1)
        t <- system.time(fit <- rff_gp(d$xtr, d$ytr, ard = ard))[["elapsed"]]
        p <- predict(fit, d$xte, interval = "prediction")
        e <- d$yte - p[, 1]
        r <- data.frame(set = s, n_train = nrow(d$xtr), d = ncol(d$xtr), split, ard,
                        rmse = sqrt(mean(e^2)), mae = stats::median(abs(e)),
                        coverage = mean(d$yte >= p[, 2] & d$yte <= p[, 3]),
                        loo_rmse = loo_rmse(fit, d$xtr, d$ytr), seconds = t,
                        evaluations = fit$optim$counts[[1L]], D = fit$D, load = ld)
        rows[[length(rows) + 1L]] <- r
        print(r, digits = 4)
      }
    }
  }
  res <- do.call(rbind, rows)
  if (nzchar(part) && file.exists(csv)) {
    old <- utils::read.csv(csv)
    res <- rbind(old[!old$set %in% names(run), ], res)
  }
  res <- res[order(match(res$set, names(sets)), res$split, res$ard), ]
  utils::write.csv(res, csv, row.names = FALSE)
}

m <- bench_machine()
m$load_start <- paste(range(res$load), collapse = "-")
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
means <- do.call(rbind, lapply(split(wide, factor(wide$set, intersect(names(sets), wide$set))), function(w) data.frame(
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
# what ARD did on the splits w: better and worse by over 1 %, time ratio
verdict <- function(w, label) {
  lost <- w$rmse_ard > 1.01 * w$rmse_iso
  won <- w$rmse_ard < 0.99 * w$rmse_iso
  ratio <- tapply(w$seconds_ard, w$set, sum) / tapply(w$seconds_iso, w$set, sum)
  c(sprintf(paste("%s: ARD lowers the test RMSE by more than 1 %% on %d of %d splits (by up to",
                  "%.0f %%) and raises it by more than 1 %% on %d (by up to %.0f %%), at %.1f",
                  "times the isotropic fit's time over these fits (%.1f to %.1f per set)."),
            label, sum(won), nrow(w), 100 * max(c(0, (1 - w$rmse_ard / w$rmse_iso)[won])),
            sum(lost), 100 * max(c(0, (w$rmse_ard / w$rmse_iso - 1)[lost])),
            sum(w$seconds_ard) / sum(w$seconds_iso), min(ratio), max(ratio)),
    if (any(lost)) sprintf(paste("On %d of those %d splits the fit's own leave-one-out RMSE",
                                 "favoured ARD; on %d ARD's median absolute error is no worse."),
                           sum(lost & w$loo_rmse_ard < w$loo_rmse_iso), sum(lost),
                           sum(lost & w$mae_ard <= w$mae_iso)),
    "")
}
big <- wide$n_train >= 10000
reading <- c(verdict(wide[!big, ], "Under 10 000 training rows"),
             verdict(wide[big, ], "From 10 000 training rows"),
             sprintf(paste("The default (`ard = NULL`) takes ARD from 10 000 training rows,",
                           "where it lost by over 1 %% on %d of %d splits."),
                     sum(wide$rmse_ard[big] > 1.01 * wide$rmse_iso[big]), sum(big)))
page <- c(
  "# rff_gp(): one length scale per input by default?", "",
  "Generated by `Rscript bench/investigations/gp-ard.R` (issue 39: make `ard = TRUE` the",
  "default wherever d > 1 if its starting values and speed allow; measure it).", "",
  sprintf("Machine: %s (%s), %d cores, %s; bochner %s (%s); load average %s before the fits.",
          m$cpu, m$simd, m$cores, m$blas, m$bochner, m$commit, m$load_start), "",
  "Five 80 / 20 splits of each small set, one or two fixed splits of each large one",
  "(the script's header); `rff_gp(x, y, ard = FALSE)` (one length scale) against",
  "`ard = TRUE` (the shared scale's optimum first, then one per input from there), both",
  "with the default D and starts, `set.seed(1)` before each fit; elapsed seconds with",
  "the package's threads.", "",
  "## Means over the splits", "", md(means), "",
  "## Every split", "",
  "RMSE and coverage of the 95 % prediction intervals on the test rows; the median",
  "absolute error's change and the change of the fit's own leave-one-out RMSE on its",
  "training rows.", "", md(split_tab), "",
  "## Reading", "", reading)
writeLines(page, file.path(out, "gp-ard.md"))
