# Suite transform: the feature transform and the feature maps.
#   transform  predict() on a Gaussian random Fourier feature map,
#              Z = sqrt(2/D) cos(x W + b), at 1 and 2 threads, against the
#              same computation in plain R, the bare product x %*% W (the floor
#              for any implementation on the same BLAS), allocating the n x D
#              result alone, and scikit-learn's RBFSampler (fit_transform, its
#              own W) on the same x; one child process per BLAS (full: the
#              reference BLAS and OpenBLAS; quick: the machine's default).
#              Ported from bench/transform.R (+ transform_sklearn.py).
#   maps       every feature map (iid, orthogonal, structured, qmc; Nystrom
#              uniform, k-means++, leverage) against D: the error of Z Z'
#              against the exact Gram matrix (kernel_approx_error()) on a
#              sample of spam, and the time to fit the map.  Ported from
#              bench/maps.R section 1 (spam, Gaussian, phase map).
source("bench/harness/harness.R")
o <- bench_start("transform", "The feature transform and the feature maps")
suppressPackageStartupMessages(library(bochner))

plan <- bench_size(
  rbind(expand.grid(n = 20000L, d = c(8L, 64L, 512L), D = c(256L, 2048L, 8192L)),
        expand.grid(n = 200000L, d = c(8L, 64L), D = 2048L)),
  data.frame(n = c(5000L, 20000L), d = c(8L, 64L), D = c(256L, 2048L)),
  data.frame(n = 2000L, d = 8L, D = 256L))
plan <- plan[order(plan$n, plan$d, plan$D), , drop = FALSE]
blases <- bench_size(c("reference", "openblas"), "default", "default")

measure <- function(d, a) {
  rows <- list()
  for (i in seq_len(nrow(a$plan))) {
    n <- a$plan$n[i]; dd <- a$plan$d[i]; D <- a$plan$D[i]
    set.seed(i)
    x <- matrix(stats::rnorm(n * dd), n, dd)
    map <- random_features(x[1:10, , drop = FALSE], gaussian_kernel(sigma = 1), D = D, seed = 1)
    W <- map$omega; b <- map$phase
    xs <- x[seq_len(64), , drop = FALSE]
    err <- max(abs(predict(map, xs, nthreads = 1L) - sqrt(2 / D) * cos(sweep(xs %*% W, 2, b, "+"))))
    case <- sprintf("n = %d, d = %d, D = %d", n, dd, D)
    fns <- list(
      bochner_1thread = function() predict(map, x, nthreads = 1L),
      bochner_2threads = function() predict(map, x, nthreads = 2L),
      plain_R = function() sqrt(2 / D) * cos(sweep(x %*% W, 2, b, "+")),
      x_times_W = function() x %*% W,
      allocate_nD = function() matrix(0, n, D))
    for (nm in names(fns)) {
      t <- bench_time(fns[[nm]], a$runs)
      t$case <- case; t$method <- nm
      t$threads <- if (nm == "bochner_2threads") 2L else 1L
      t$max_error <- err
      rows[[length(rows) + 1L]] <- t
    }
  }
  do.call(rbind, rows)
}
for (blas in blases) {
  res <- bench_in_child(bench_job(measure, plan = plan, runs = o$reps), threads = 1L, blas = blas)
  if (!nrow(res)) next   # --render: no rows, they come from the CSV
  if (is.null(res$case)) {
    bench_skip(sprintf("transform under the %s BLAS", blas), sprintf("child failed (%s)", res$status))
    next
  }
  for (i in seq_len(nrow(res))) {
    r <- res[i, ]
    role <- if (startsWith(r$method, "bochner")) "bochner" else "baseline"
    bench_add("transform", r$case, r$method, role, r[, c("elapsed", "cpu", "peak_mb", "blas", "threads", "status")],
              metric = "max |predict - plain R|", value = r$max_error)
  }
  # scikit-learn's RBFSampler on the same x (its own W: the same work)
  for (i in seq_len(nrow(plan))) {
    set.seed(i)
    x <- matrix(stats::rnorm(plan$n[i] * plan$d[i]), plan$n[i], plan$d[i])
    bench_add("transform", sprintf("n = %d, d = %d, D = %d", plan$n[i], plan$d[i], plan$D[i]),
              "sklearn_RBFSampler", "peer",
              bench_sklearn("rbf_sampler", list(xtr = x, ytr = numeric(nrow(x))), threads = 1L,
                            blas = blas, components = plan$D[i]))
  }
}

# maps: the error of Z Z' on a sample of spam (standardised), Gaussian kernel
# with the median distance as sigma
if (bench_have("kernlab")) {
  e <- new.env(); utils::data(spam, package = "kernlab", envir = e)
  x <- scale(as.matrix(e$spam[, -58]))
  x[!is.finite(x)] <- 0
  set.seed(1)
  xs <- x[sample(nrow(x), bench_size(1000L, 400L, 150L)), , drop = FALSE]
  sigma <- stats::median(stats::dist(xs))
  k <- gaussian_kernel(sigma)
  schemes <- c("iid", "orthogonal", "structured", "qmc", "nystrom_uniform", "nystrom_kmeans", "nystrom_leverage")
  for (D in bench_size(c(64L, 256L, 1024L), c(64L, 256L), 64L)) {
    for (seed in seq_len(bench_size(3L, 1L, 1L))) {
      for (s in schemes) {
        map <- NULL
        t <- tryCatch(bench_time(function() {
          map <<- if (startsWith(s, "nystrom")) {
            nystrom_features(x, k, m = D, landmarks = sub("nystrom_", "", s), seed = seed)
          } else random_features(x, k, D = D, sampling = s, seed = seed)
        }, runs = 1L), error = function(e) { bench_skip(sprintf("map %s", s), conditionMessage(e)); NULL })
        if (is.null(t)) next
        err <- kernel_approx_error(map, xs)
        t$max_error <- err$max
        bench_add("maps: rms error of Z Z' (spam)", sprintf("D = %d", D), s, "bochner", t, seed,
                  metric = "rms error", value = err$rms)
      }
    }
  }
}

h <- if (o$quick) plan[nrow(plan), ] else data.frame(n = 20000L, d = 64L, D = 2048L)
case <- sprintf("n = %d, d = %d, D = %d", h$n, h$d, h$D)
bl <- if (o$quick) NULL else "OpenBLAS 0.3.21"
Dm <- bench_size(1024L, 256L, 64L)
bench_finish(headline = c(
  list(
    list(figure = sprintf("transform %s, 1 thread: seconds", case), question = "transform", case = case,
         ours = "bochner_1thread", peer = "sklearn_RBFSampler"),
    list(figure = sprintf("transform %s, 2 threads: seconds", case), question = "transform", case = case,
         ours = "bochner_2threads", peer = "sklearn_RBFSampler"),
    list(figure = sprintf("transform %s, 1 thread / x %%*%% W: seconds", case), question = "transform",
         case = case, ours = "bochner_1thread", peer = "x_times_W"),
    list(figure = sprintf("transform %s, 1 thread / plain R: seconds", case), question = "transform",
         case = case, ours = "bochner_1thread", peer = "plain_R")),
  lapply(c("orthogonal", "structured", "qmc", "nystrom_leverage"), function(s)
    list(figure = sprintf("rms error of Z Z' on spam, D = %d: %s against iid", Dm, s),
         question = "maps: rms error of Z Z' (spam)", case = sprintf("D = %d", Dm), ours = s, peer = "iid",
         measure = "value"))),
  about = c(
    "Transform: x ~ N(0, 1), Gaussian sigma = 1 map fitted once (D frequencies W, phases b); each",
    "figure the best of the runs; plain R is `sqrt(2/D) * cos(sweep(x %*% W, 2, b, \"+\"))`;",
    "`max |predict - plain R|` on 64 rows checks that both compute the same.  sklearn: `RBFSampler(n_components = D).fit_transform(x)`.",
    "Maps: `kernel_approx_error(map, xs)` on a sample xs of standardised spam, Gaussian kernel with the",
    "median distance of the sample as sigma; time = fitting the map on all 4601 rows; the mean over seeds."))
