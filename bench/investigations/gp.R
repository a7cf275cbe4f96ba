# Gaussian processes on random features: rff_gp() against its exact method,
# kernlab::gausspr() and GauPro on the same data, and the goals of issue 27.
# Run from the repository root (bochner installed):
#   Rscript bench/investigations/gp.R [sections]     sections: accuracy convergence hyper large optim co2
#                                      co2hyper (not in the default set)
#                                      (default: all; prints the tables of bench/investigations/gp.md)
#   BOCHNER_BENCH_THREADS=1 Rscript bench/investigations/gp.R accuracy convergence hyper
suppressPackageStartupMessages({
  library(bochner)
  library(mlbench)
})
args <- commandArgs(TRUE)
sections <- if (length(args)) args else c("accuracy", "convergence", "hyper", "large", "optim", "co2")
has_kernlab <- requireNamespace("kernlab", quietly = TRUE)
has_gaupro <- requireNamespace("GauPro", quietly = TRUE)
# BOCHNER_BENCH_THREADS=1 for the small sections on a busy machine (the
# results are the same for any thread count, only the times change)
if (nzchar(Sys.getenv("BOCHNER_BENCH_THREADS"))) {
  options(bochner.threads = as.integer(Sys.getenv("BOCHNER_BENCH_THREADS")))
}
threads <- bochner_threads()
cat("cores:", threads, " CPU:", { source("bench/harness/machine.R"); bench_lscpu()$cpu },
    " BLAS:", extSoftVersion()[["BLAS"]], "\n")
# elapsed seconds, and CPU seconds of all the process's threads: on a
# machine shared with other jobs the CPU time / threads is closer to what
# the elapsed time would be on dedicated cores
timed <- function(expr) {
  t <- system.time(v <- expr)
  list(value = v, time = t[["elapsed"]], cpu = t[["user.self"]] + t[["sys.self"]])
}

# ---- accuracy, 95 % prediction interval coverage and time ----------------
sets <- list(
  BostonHousing = function() {
    data(BostonHousing, package = "mlbench", envir = environment())
    x <- BostonHousing[, -14]
    x$chas <- as.numeric(as.character(x$chas))
    list(x = as.matrix(x), y = BostonHousing$medv)
  },
  quakes = function() list(x = as.matrix(datasets::quakes[, c("lat", "long")]),
                           y = datasets::quakes$depth),
  friedman1 = function() {
    set.seed(27)
    d <- mlbench.friedman1(1000, sd = 1)
    list(x = d$x, y = d$y)
  })

interval_stats <- function(y, fit, lwr, upr) {
  c(rmse = sqrt(mean((y - fit)^2)), coverage = mean(y >= lwr & y <= upr))
}

methods <- list(
  rff_gp = function(x, y, xt) {
    f <- rff_gp(x, y, D = 256, seed = 1)
    p <- predict(f, xt, interval = "prediction")
    list(fit = p[, 1], lwr = p[, 2], upr = p[, 3])
  },
  rff_gp_ard = function(x, y, xt) {
    f <- rff_gp(x, y, D = 256, ard = TRUE, seed = 1)
    p <- predict(f, xt, interval = "prediction")
    list(fit = p[, 1], lwr = p[, 2], upr = p[, 3])
  },
  exact = function(x, y, xt) {
    f <- rff_gp(x, y, method = "exact")
    p <- predict(f, xt, interval = "prediction")
    list(fit = p[, 1], lwr = p[, 2], upr = p[, 3])
  },
  gausspr = function(x, y, xt) {
    if (!has_kernlab) return(NULL)
    f <- kernlab::gausspr(x, y, kernel = "rbfdot", variance.model = TRUE)
    m <- as.vector(kernlab::predict(f, xt))
    s <- as.vector(kernlab::predict(f, xt, type = "sdeviation"))
    list(fit = m, lwr = m - 1.96 * s, upr = m + 1.96 * s)
  },
  GauPro = function(x, y, xt) {
    if (!has_gaupro) return(NULL)
    # inputs scaled as rff_gp scales them; Gaussian kernel, nugget estimated
    f <- GauPro::GauPro_kernel_model$new(x, y, kernel = GauPro::Gaussian$new(D = ncol(x)),
                                         nug.est = TRUE, verbose = 0)
    p <- f$pred(xt, se.fit = TRUE, mean_dist = FALSE)
    list(fit = p$mean, lwr = p$mean - 1.96 * p$se, upr = p$mean + 1.96 * p$se)
  })

if ("accuracy" %in% sections) {
  cat("\n## accuracy (2 random 80/20 splits; RMSE, 95 % prediction interval coverage, fit time)\n")
  rows <- list()
  for (s in names(sets)) {
    d <- sets[[s]]()
    n <- nrow(d$x)
    for (split in 1:2) {
      set.seed(100 + split)
      te <- sample(n, round(0.2 * n))
      sc <- scale(d$x[-te, ])
      xs <- scale(d$x, attr(sc, "scaled:center"), attr(sc, "scaled:scale"))
      for (m in names(methods)) {
        r <- tryCatch(timed(methods[[m]](xs[-te, ], d$y[-te], xs[te, ])),
                      error = function(e) { message(m, ": ", conditionMessage(e)); NULL })
        if (is.null(r) || is.null(r$value)) next
        st <- interval_stats(d$y[te], r$value$fit, r$value$lwr, r$value$upr)
        rows[[length(rows) + 1L]] <- data.frame(set = s, split = split, method = m,
                                                rmse = st[["rmse"]], coverage = st[["coverage"]],
                                                time = r$time)
        print(rows[[length(rows)]], row.names = FALSE)   # each as it comes
      }
    }
  }
  tab <- do.call(rbind, rows)
  agg <- aggregate(cbind(rmse, coverage, time) ~ set + method, tab, mean)
  agg <- agg[order(agg$set, agg$method), ]
  print(format(agg, digits = 3), row.names = FALSE)
}

# ---- convergence to the exact GP at the same hyperparameters -------------
if ("convergence" %in% sections) {
  cat("\n## convergence to the exact GP (same hyperparameters; RMS over 200 test points and 8 maps)\n")
  set.seed(1)
  d <- mlbench.friedman1(300, sd = 1)
  x <- d$x; y <- d$y
  xt <- mlbench.friedman1(200, sd = 1)$x
  # noise variance a quarter of the signal's: the approximation error of
  # the kernel, O(1/sqrt(D)), is soon small against it
  args <- list(x, y, kernel = gaussian_kernel(2), optimize = FALSE, signal = 4, noise = 2)
  ex <- predict(do.call(rff_gp, c(args, method = "exact")), xt, se.fit = TRUE)
  res <- t(sapply(c(32, 128, 512, 1024), function(D) {
    e <- sapply(1:8, function(s) {
      p <- predict(do.call(rff_gp, c(args, D = D, seed = s)), xt, se.fit = TRUE)
      c(mean((p$fit - ex$fit)^2), mean((p$se.fit^2 - ex$se.fit^2)^2))
    })
    c(D = D, mean_err = sqrt(mean(e[1, ])), var_err = sqrt(mean(e[2, ])))
  }))
  res <- cbind(res, mean_err_sqrtD = res[, 2] * sqrt(res[, 1]),
               var_err_sqrtD = res[, 3] * sqrt(res[, 1]))
  print(cbind(D = res[, 1], signif(res[, -1], 3)))
  cat("log-log slopes (mean, variance):",
      signif(coef(lm(log(res[, 2]) ~ log(res[, 1])))[2], 3),
      signif(coef(lm(log(res[, 3]) ~ log(res[, 1])))[2], 3), "\n")
}

# ---- learned hyperparameters at n = 500 against exact maximum likelihood --
if ("hyper" %in% sections) {
  cat("\n## hyperparameters at n = 500: rff_gp against exact ML (method = \"exact\", GauPro)\n")
  set.seed(2)
  d <- mlbench.friedman1(500, sd = 1)
  ex <- rff_gp(d$x, d$y, method = "exact")
  out <- list(exact = unlist(ex$hyper))
  # the default D (4096 at n = 500, in the n x n form), then D = 512 with
  # iid, orthogonal and qmc draws
  for (s in 1:5) {
    r <- timed(rff_gp(d$x, d$y, seed = s))
    out[[sprintf("rff default D=%d seed %d", r$value$D, s)]] <- unlist(r$value$hyper)
    cat(sprintf("default D, seed %d: %.1f s elapsed, %.1f s CPU\n", s, r$time, r$cpu))
  }
  for (smp in c("iid", "orthogonal", "qmc")) {
    for (s in 1:3) {
      out[[sprintf("rff D=512 %s seed %d", smp, s)]] <-
        unlist(rff_gp(d$x, d$y, D = 512, seed = s, sampling = smp)$hyper)
    }
  }
  tab <- do.call(rbind, out)
  rel <- sweep(tab, 2, tab["exact", ], "/") - 1
  print(signif(cbind(tab, rel_lengthscale = rel[, 1], rel_signal = rel[, 2], rel_noise = rel[, 3]), 3))
  if (has_gaupro) {
    xs <- scale(d$x)
    g <- GauPro::GauPro_kernel_model$new(xs, (d$y - mean(d$y)) / sd(d$y),
                                         kernel = GauPro::Gaussian$new(D = 1, useC = TRUE),
                                         nug.est = TRUE, verbose = 0)
    cat("GauPro (isotropic Gaussian, standardised y): beta =", g$kernel$beta, " (length scale",
        signif(sqrt(1 / (2 * 10^g$kernel$beta)), 4), "), s2 =", signif(g$kernel$s2, 4),
        ", nugget =", signif(g$nug, 4), " (noise sd", signif(sqrt(g$nug * g$kernel$s2) * sd(d$y), 4), ")\n")
  }
}

# ---- n = 1e6, d = 10, fixed hyperparameters ------------------------------
# BOCHNER_BENCH_LARGE_N (default 1e6) and BOCHNER_BENCH_LARGE_D (default
# "512,1024").  Also times the Z'Z pass alone (C_gp_stats: features of a
# block of rows, then the upper triangle of Z'Z on the package's product
# kernel) and reports its rate: n (2D)^2 flops (the triangle's n (2D)^2 / 2
# multiply-adds).
if ("large" %in% sections) {
  n <- as.numeric(Sys.getenv("BOCHNER_BENCH_LARGE_N", "1e6"))
  cat(sprintf("\n## n = %g, d = 10, fixed hyperparameters, %d threads\n", n, threads))
  set.seed(3)
  x <- matrix(runif(n * 10), n, 10)
  y <- 10 * sin(pi * x[, 1] * x[, 2]) + 20 * (x[, 3] - 0.5)^2 + 10 * x[, 4] + 5 * x[, 5] + rnorm(n)
  for (D in as.integer(strsplit(Sys.getenv("BOCHNER_BENCH_LARGE_D", "512,1024"), ",")[[1]])) {
    w <- matrix(rnorm(10 * D), 10, D)
    p <- timed(.Call(bochner:::C_gp_stats, x, w, rep(1 / sqrt(D), D), y, NULL, FALSE, threads))
    cat(sprintf("D = %d: Z'Z pass %.1f s elapsed, %.1f s CPU: %.1f GFLOPS elapsed, %.1f per CPU second\n",
                D, p$time, p$cpu, n * (2 * D)^2 / p$time / 1e9, n * (2 * D)^2 / p$cpu / 1e9))
    r <- timed(rff_gp(x, y, kernel = gaussian_kernel(2), D = D, optimize = FALSE, noise = 1,
                      seed = 1))
    cat(sprintf("D = %d (%d features): fit %.1f s elapsed, %.1f s CPU, training RMSE %.3f\n", D,
                2 * D, r$time, r$cpu, sqrt(mean(r$value$residuals^2))))
  }
  cat("load average:", system("cat /proc/loadavg", intern = TRUE), "\n")
}

# ---- optimisation at n = 1e5 ---------------------------------------------
if ("optim" %in% sections) {
  cat("\n## hyperparameters by marginal likelihood at n = 1e5, d = 10\n")
  set.seed(4)
  n <- 1e5
  d <- mlbench.friedman1(n, sd = 1)
  for (D in as.integer(strsplit(Sys.getenv("BOCHNER_BENCH_OPTIM_D", "256"), ",")[[1]])) {
    r <- timed(rff_gp(d$x, d$y, D = D, seed = 1))
    cat(sprintf("D = %d: %.1f s elapsed, %.1f s CPU, %d evaluations, length scale %.3f, noise %.3f (true 1)\n",
                D, r$time, r$cpu, r$value$optim$counts[[1]], r$value$hyper$lengthscale,
                r$value$hyper$noise))
  }
}

# ---- co2: spectral mixture against the Gaussian kernel, several draws -----
if ("co2" %in% sections) {
  cat("\n## co2: trained on 1959-1987, forecast 1988-1997 (RMSE ppm, 95 % band coverage)\n")
  t <- as.numeric(time(co2))
  y <- as.numeric(co2)
  train <- t < 1988
  score <- function(fit) {
    p <- predict(fit, t[!train], interval = "prediction")
    c(RMSE = sqrt(mean((p[, "fit"] - y[!train])^2)),
      coverage = mean(y[!train] >= p[, "lwr"] & y[!train] <= p[, "upr"]),
      logLik = as.numeric(logLik(fit)))
  }
  # the prior mean: "centred" (the default) and explicit basis functions
  # (BOCHNER_BENCH_CO2_MEANS, e.g. "centred,linear,quadratic"); the
  # mixture's D (BOCHNER_BENCH_CO2_D, e.g. "100,200")
  means <- strsplit(Sys.getenv("BOCHNER_BENCH_CO2_MEANS", "centred,linear"), ",")[[1]]
  Ds <- as.integer(strsplit(Sys.getenv("BOCHNER_BENCH_CO2_D", "200"), ",")[[1]])
  rows <- list()
  for (mean in means) {
    for (D in Ds) {
      for (s in 1:5) {
        r <- timed(rff_gp(t[train], y[train], kernel = spectral_mixture_kernel(q = 4), D = D,
                          scale = FALSE, seed = s, mean = mean))
        rows[[sprintf("SM q=4 D=%d %s seed %d", D, mean, s)]] <- c(score(r$value), time = r$time,
                                                                   cpu = r$cpu)
      }
    }
    for (s in 1:2) {
      r <- timed(rff_gp(t[train], y[train], D = 100, scale = FALSE, seed = s, mean = mean))
      rows[[sprintf("Gaussian D=100 %s seed %d", mean, s)]] <- c(score(r$value), time = r$time,
                                                                 cpu = r$cpu)
    }
  }
  print(round(do.call(rbind, rows), 3))
}

# ---- co2hyper: the band with the hyperparameters' uncertainty (Laplace) ---
# rff_gp(laplace = TRUE): theta ~ N(theta_hat, H^-1) and the delta method
# add J H^-1 J' to the predictive variance (see ?rff_gp); same fits as the
# centred D = 200 rows of "co2" otherwise.
if ("co2hyper" %in% sections) {
  cat("\n## co2: plug-in band and band with the hyperparameters' uncertainty (laplace = TRUE)\n")
  t <- as.numeric(time(co2))
  y <- as.numeric(co2)
  train <- t < 1988
  for (mean in strsplit(Sys.getenv("BOCHNER_BENCH_CO2_MEANS", "centred"), ",")[[1]]) {
    for (s in 1:5) {
      r <- timed(rff_gp(t[train], y[train], kernel = spectral_mixture_kernel(q = 4), D = 200,
                        scale = FALSE, seed = s, mean = mean, laplace = TRUE))
      fit <- r$value
      p1 <- predict(fit, t[!train], se.fit = TRUE)
      fit$laplace <- NULL
      p0 <- predict(fit, t[!train], se.fit = TRUE)
      yt <- y[!train]
      z <- qnorm(0.975)
      v0 <- p0$se.fit^2 + p0$residual.scale^2
      v1 <- p1$se.fit^2 + p1$residual.scale^2
      cat(sprintf("%s seed %d: RMSE %.3f, coverage plug-in %.3f, laplace %.3f; sd ratio in 1997 %.2f; %d of %d parameters free; %.1f s CPU\n",
                  mean, s, sqrt(mean((yt - p1$fit)^2)), mean(abs(yt - p0$fit) <= z * sqrt(v0)),
                  mean(abs(yt - p1$fit) <= z * sqrt(v1)), sqrt(v1 / v0)[length(yt)],
                  length(r$value$laplace$free), length(fit$theta), r$cpu))
    }
  }
}
