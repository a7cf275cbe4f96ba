# Data loaders: the real sets (mlbench, kernlab, ggplot2, datasets) and the
# synthetic generators, each with its seed, so that every suite and every
# peer sees the same rows.  A set is list(xtr, ytr, xte, yte).

bench_mlbench <- function(name) {
  e <- new.env()
  utils::data(list = name, package = "mlbench", envir = e)
  e[[name]]
}

bench_numeric <- function(df) {
  as.matrix(data.frame(lapply(df, function(v) as.numeric(as.character(v)))))
}

# 70 / 30 by set.seed(seed) (or n_train / n_test rows), complete rows, no
# constant columns; the split of bench/falkon.R.
bench_split <- function(x, y, frac = 0.7, n_train = NULL, n_test = NULL, seed = 1L) {
  keep <- stats::complete.cases(x)
  x <- x[keep, , drop = FALSE]
  y <- y[keep]
  x <- x[, apply(x, 2, stats::sd) > 0, drop = FALSE]
  if (is.factor(y)) y <- droplevels(y)
  set.seed(seed)
  idx <- sample(nrow(x))
  ntr <- if (is.null(n_train)) round(frac * nrow(x)) else min(n_train, nrow(x) - 1L)
  tr <- idx[seq_len(ntr)]
  te <- idx[-seq_len(ntr)]
  if (!is.null(n_test)) te <- te[seq_len(min(n_test, length(te)))]
  list(xtr = x[tr, , drop = FALSE], ytr = y[tr], xte = x[te, , drop = FALSE], yte = y[te])
}

# The first n training rows (a warm-up slice, or a reduced size).
bench_slice <- function(d, n) {
  n <- min(n, nrow(d$xtr))
  d$xtr <- d$xtr[seq_len(n), , drop = FALSE]
  d$ytr <- d$ytr[seq_len(n)]
  if (is.factor(d$ytr)) d$ytr <- droplevels(d$ytr)
  d
}

# 10^5-row classification (bench/falkon.R's synth_class_1e5): the side of a curved
# boundary with 10 % of the labels flipped, so the Bayes accuracy is 0.90 exactly.
bench_synth_class <- function(n = 1.2e5, seed = 23L) {
  set.seed(seed)
  x <- matrix(stats::rnorm(n * 10), n, 10)
  clean <- sin(2 * x[, 1]) + x[, 2] * x[, 3] + 0.5 * x[, 4] > 0
  flip <- stats::runif(n) < 0.1
  list(x = x, y = factor(ifelse(xor(clean, flip), "a", "b")))
}

# Regression with Gaussian noise of sd 0.5 (the best RMSE is 0.5), d = 20
# (bench/falkon.R's synth_1e6).
bench_synth_reg <- function(n, d = 20L, seed = 6L) {
  set.seed(seed)
  x <- matrix(stats::rnorm(n * d), n, d)
  f <- sin(x[, 1]) + cos(x[, 2]) + 0.5 * x[, 3] * x[, 4] + tanh(x[, 5] + x[, 6]) +
    0.3 * rowSums(x[, 7:10])
  list(x = x, y = f + 0.5 * stats::rnorm(n))
}

# Two noisy concentric rings (radii 1 and 3, sd 0.1), half the points on each.
bench_rings <- function(n, seed = n) {
  set.seed(seed)
  truth <- rep(1:2, length.out = n)
  r <- c(1, 3)[truth] + stats::rnorm(n, sd = 0.1)
  a <- stats::runif(n, 0, 2 * pi)
  list(x = cbind(r * cos(a), r * sin(a)), truth = truth)
}

# k Gaussian clusters in d dimensions, centres N(0, 3^2), unit spread.
bench_clusters <- function(n, d = 10L, k = 10L, seed = 1L) {
  set.seed(seed)
  centres <- matrix(stats::rnorm(k * d, sd = 3), k, d)
  truth <- sample.int(k, n, replace = TRUE)
  list(x = centres[truth, , drop = FALSE] + matrix(stats::rnorm(n * d), n, d), truth = truth)
}

# Friedman 1 (mlbench.friedman1 when installed, the same formula otherwise).
bench_friedman1 <- function(n, sd = 1, seed = 1L) {
  set.seed(seed)
  x <- matrix(stats::runif(n * 10), n, 10)
  y <- 10 * sin(pi * x[, 1] * x[, 2]) + 20 * (x[, 3] - 0.5)^2 + 10 * x[, 4] + 5 * x[, 5] +
    stats::rnorm(n, sd = sd)
  list(x = x, y = y)
}

# Friedman 1 as falkon-tune.R and falkon-objective.R draw it: per seed, n
# training rows then n test rows, sd 1 (mlbench's generator).
bench_friedman1_pairs <- function(seeds, n = 4000L) lapply(seeds, function(s) {
  set.seed(s)
  tr <- mlbench::mlbench.friedman1(n, sd = 1)
  te <- mlbench::mlbench.friedman1(n, sd = 1)
  list(xtr = tr$x, ytr = tr$y, xte = te$x, yte = te$y)
})

bench_diamonds <- function() {
  e <- new.env(); utils::data(diamonds, package = "ggplot2", envir = e)
  dm <- as.data.frame(e$diamonds)
  for (v in c("cut", "color", "clarity")) dm[[v]] <- factor(as.character(dm[[v]]))
  x <- stats::model.matrix(~ carat + cut + color + clarity + depth + table + x + y + z,
                           dm)[, -1]
  list(x = x, y = log(dm$price))
}

# The named sets of the machine and GP suites, split; NULL (with a skip line)
# when the package holding the set is not installed.
bench_set <- function(name) {
  need <- c(Vehicle = "mlbench", Vowel = "mlbench", DNA = "mlbench", Satellite = "mlbench",
            Shuttle = "mlbench", Letter = "mlbench", BostonHousing = "mlbench", spam = "kernlab",
            diamonds = "ggplot2")[name]
  if (!is.na(need) && !bench_have(need)) return(NULL)
  switch(name,
    Vehicle = { v <- bench_mlbench("Vehicle"); bench_split(as.matrix(v[, -19]), v$Class) },
    Vowel = { v <- bench_mlbench("Vowel"); bench_split(bench_numeric(v[, 2:10]), v$Class) },
    DNA = { v <- bench_mlbench("DNA"); bench_split(bench_numeric(v[, -181]), v$Class) },
    Satellite = { v <- bench_mlbench("Satellite"); bench_split(as.matrix(v[, -37]), v$classes) },
    Shuttle = { v <- bench_mlbench("Shuttle"); bench_split(as.matrix(v[, -10]), v$Class) },
    Letter = { v <- bench_mlbench("LetterRecognition"); bench_split(bench_numeric(v[, -1]), v$lettr) },
    spam = {
      e <- new.env(); utils::data(spam, package = "kernlab", envir = e)
      bench_split(as.matrix(e$spam[, -58]), e$spam$type)
    },
    BostonHousing = {
      v <- bench_mlbench("BostonHousing")
      bench_split(bench_numeric(v[, -14]), v$medv)
    },
    quakes = bench_split(as.matrix(datasets::quakes[, c("lat", "long", "depth")]),
                         datasets::quakes$mag),
    diamonds = { d <- bench_diamonds(); bench_split(d$x, d$y, n_train = 15000, n_test = 10000) },
    synth_class_1e5 = { d <- bench_synth_class(); bench_split(d$x, d$y, n_train = 1e5) },
    synth_class_1e4 = { d <- bench_synth_class(1.2e4); bench_split(d$x, d$y, n_train = 1e4) },
    synth_1e6 = { d <- bench_synth_reg(1.1e6); bench_split(d$x, d$y, n_train = 1e6, n_test = 1e5) },
    synth_1e5 = { d <- bench_synth_reg(1.1e5); bench_split(d$x, d$y, n_train = 1e5, n_test = 1e4) },
    friedman1 = { d <- bench_friedman1(1500); bench_split(d$x, d$y, n_train = 1000) },
    stop("unknown set ", name))
}
