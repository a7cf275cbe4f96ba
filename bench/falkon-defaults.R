# The evidence behind falkon()'s defaults (number of centres, lambda grid,
# patience): falkon() variants against kernlab::ksvm()'s defaults on real
# classification sets, each split 2/3 train, 1/3 test by a fixed seed.
# Run: R_LIBS=<lib with bochner> Rscript bench/falkon-defaults.R [sets...]
# Times are CPU seconds (user + system) on one thread (nthreads = 1;
# ksvm is single-threaded), so that the ratios hold on a shared machine.
suppressPackageStartupMessages({
  library(bochner)
  library(kernlab)
  library(mlbench)
})

sets <- list(
  Satellite = function() { data(Satellite, envir = environment())
    list(x = as.matrix(Satellite[, -37]), y = Satellite$classes) },
  Shuttle = function() { data(Shuttle, envir = environment())
    list(x = as.matrix(Shuttle[, -10]), y = droplevels(Shuttle$Class)) },
  Letter = function() { data(LetterRecognition, envir = environment())
    list(x = as.matrix(LetterRecognition[, -1]), y = LetterRecognition$lettr) },
  spam = function() { data(spam, package = "kernlab", envir = environment())
    list(x = as.matrix(spam[, -58]), y = spam$type) },
  Vehicle = function() { data(Vehicle, envir = environment())
    list(x = as.matrix(Vehicle[, -19]), y = Vehicle$Class) }
)

configs <- list(
  default = list(),
  m_fixed = list(centers = function(n) falkon_default_centers(n)),
  m_fixed_4lambdas = list(centers = function(n) falkon_default_centers(n),
                          control = list(lambdas = 10^c(-3, -5, -7, -9), patience = 8)),
  logistic = list(loss = "logistic")
)

cpu <- function(expr) {
  t0 <- proc.time()
  value <- force(expr)
  t <- proc.time() - t0
  list(value = value, cpu = unname(t[1] + t[2]), elapsed = unname(t[3]))
}

args <- commandArgs(TRUE)
which_sets <- if (length(args)) args else names(sets)
which_cfg <- strsplit(Sys.getenv("FALKON_CONFIGS", paste(names(configs), collapse = ",")), ",")[[1]]
rows <- list()
for (s in which_sets) {
  d <- sets[[s]]()
  set.seed(1)
  n <- nrow(d$x)
  test <- sample(n, round(n / 3))
  xtr <- d$x[-test, ]; ytr <- d$y[-test]; xte <- d$x[test, ]; yte <- d$y[test]
  k <- cpu(ksvm(xtr, ytr))
  acc_k <- mean(predict(k$value, xte) == yte)
  rows[[length(rows) + 1]] <- data.frame(set = s, n_train = nrow(xtr), method = "ksvm",
                                         m = NA, lambda = NA, iter = NA, accuracy = acc_k,
                                         cpu = k$cpu, elapsed = k$elapsed, ratio = 1)
  print(rows[[length(rows)]])
  for (cn in which_cfg) {
    cfg <- configs[[cn]]
    if (is.function(cfg$centers)) cfg$centers <- cfg$centers(nrow(xtr))
    f <- cpu(do.call(falkon, c(list(xtr, ytr, seed = 1, nthreads = 1), cfg)))
    acc <- mean(predict(f$value, xte, nthreads = 1) == yte)
    rows[[length(rows) + 1]] <- data.frame(set = s, n_train = nrow(xtr), method = cn,
                                           m = f$value$m, lambda = f$value$lambda,
                                           iter = f$value$iter, accuracy = acc, cpu = f$cpu,
                                           elapsed = f$elapsed, ratio = f$cpu / k$cpu)
    print(rows[[length(rows)]])
  }
}
res <- do.call(rbind, rows)
print(res, digits = 3)
saveRDS(res, sprintf("/tmp/falkon-defaults-%s.rds", paste(which_sets, collapse = "-")))
