#' Kernel k-means
#'
#' Clusters data by k-means in the feature space of a kernel, where groups
#' that ordinary k-means cannot separate (concentric rings, interleaved
#' moons) become separable.  `method = "exact"` works on the Gram matrix;
#' `method = "rff"` maps the data to random Fourier features and
#' `method = "nystrom"` to a Nyström map, and runs k-means there, which
#' scales to millions of points.
#'
#' **The default bandwidth.**  `kernel_kmeans(x, centers)` without a kernel
#' uses the Gaussian kernel with \eqn{\sigma} the median, over the rows of an
#' evenly spaced subsample of at most 1000 rows, of the distance from a row
#' to its \eqn{m}-th nearest neighbour, \eqn{m = \max(5, \mathrm{round}(0.1
#' \times \mathrm{rows}))} (a local scale after Zelnik-Manor & Perona, 2004).
#' A neighbourhood of a tenth of the data lies inside a cluster while the
#' clusters are larger than that, so \eqn{\sigma} follows the scale within
#' clusters; the median heuristic (the median distance between any two
#' rows) follows the spread of the whole set and merges clusters such as
#' concentric rings.  Measured over 20 draws each (`bench/investigations/kmeans_bandwidth.R`,
#' results in `bench/investigations/kmeans.md`): adjusted Rand index 1 on every draw of
#' three kinds of noisy rings and of mlbench's smiley, where the median
#' heuristic scores about 0 and 0.85; on iris, banknote, thyroid and four
#' Gaussian clusters it is as good as the median heuristic or better, on
#' wdbc slightly worse (0.649 against 0.654).  Two noisy half-moons and
#' spirals are not separated by any Gaussian bandwidth: their true partition
#' does not minimise the kernel k-means objective.  The value is stored in
#' `bandwidth` and printed; it draws no random numbers.  A kernel given
#' explicitly, including `gaussian_kernel("median")`, keeps its meaning.
#'
#' **The objective.**  With feature map \eqn{\phi} and cluster means
#' \eqn{\mu_c}, kernel k-means minimises
#' \eqn{\sum_c \sum_{i \in c} \|\phi(x_i) - \mu_c\|^2}, where
#' \deqn{\|\phi(x_i) - \mu_c\|^2 = K_{ii} - \frac{2}{|c|} \sum_{j \in c} K_{ij}
#'   + \frac{1}{|c|^2} \sum_{j, l \in c} K_{jl}.}
#' `withinss`, `tot.withinss`, `totss` and `betweenss` are these sums of
#' squares in feature space (for `method = "rff"`, in the space of the random
#' features), not in the input space.
#'
#' **Seeding** is greedy kernel k-means++: the first centre is a point drawn
#' uniformly at random (in proportion to `weights` if given); for each
#' further centre, \eqn{2 + \lfloor \log k \rfloor} points are drawn with
#' probability proportional to their (weighted) squared feature-space
#' distance to the nearest centre chosen so far, and the one that lowers the
#' sum of those distances most is kept (as in scikit-learn: single draws
#' leave clusters split or merged more often); every point starts in the
#' cluster of its nearest centre.  Then assignment (each point to the nearest cluster mean; ties go
#' to the lowest cluster number) and update alternate until no point moves or
#' `max_iter` iterations (Lloyd).  With `algorithm = "Hartigan-Wong"` (the
#' default), passes of single-point moves follow: in the order of the
#' points, point \eqn{i} leaves its cluster \eqn{a} for the cluster \eqn{b}
#' that minimises \eqn{\frac{|b|}{|b|+1} d(i, b)} when that is less than
#' \eqn{\frac{|a|}{|a|-1} d(i, a)} (the exact change of the objective), and
#' both centres are updated at once; passes stop when no point moves.  Such
#' a partition is also one Lloyd's step leaves alone, and its objective is
#' never above Lloyd's from the same seeds.  No step can increase the
#' objective; the objective after seeding, after each Lloyd iteration and
#' after each Hartigan-Wong pass is kept in `trace`.
#' **k-means||** (Bahmani et al., 2012; `seeding = "kmeans||"`, the
#' default from 100 000 rows) replaces the \eqn{k} passes of k-means++ over
#' the data by 5 rounds: each takes every point independently with
#' probability \eqn{\min(1, 2k\,d^2(x) / \sum_y d^2(y))}, \eqn{d} the
#' distance to the nearest candidate so far, and one pass finds the new
#' candidates' distances; k-means++ on the candidates, weighted by the
#' number of points nearest to each, then picks the \eqn{k} seeds.  The
#' draws are serial, so the seeds do not depend on the number of threads.
#' With `nstart > 1` the whole procedure is repeated from new seeds and the
#' run with the lowest objective is returned.  A cluster that becomes empty
#' (from a poor initial assignment, or during the iterations) is re-seeded
#' with the point farthest from its own centre, taken from a cluster with at
#' least two points; nothing is ever divided by an empty cluster's size.
#'
#' **method = "exact"** computes the \eqn{n \times n} Gram matrix once, in
#' C (the package's own product for the inner products), and each
#' iteration makes one pass over
#' it: \eqn{O(n^2)} time per iteration (once few points move, only their
#' columns are revisited).  The Gram matrix takes \eqn{8 n^2} bytes: 200 MB
#' at \eqn{n = 5000}, 800 MB at 10 000, 3.2 GB at 20 000, 20 GB at 50 000;
#' the cluster sums \eqn{\sum_{j \in c} K_{ij}} another \eqn{8 n k}.  A
#' fit needing more than the memory available (on Linux, `MemAvailable` in
#' `/proc/meminfo`), or than `getOption("bochner.max_gram_bytes")` (else
#' `getOption("bochner.max_bytes")`) if that is set, is refused with a
#' message suggesting `method = "rff"`; the other methods refuse a `D` whose
#' features would not fit in the same way (see [bochner-package]).  Any
#' kernel works, including [polynomial_kernel()] and [min_kernel()].
#'
#' **method = "rff"** draws a phase map of `D` random Fourier features
#' ([random_features()] with `type = "phase"`), so that
#' \eqn{z(x) \cdot z(y) \approx k(x, y)}, and runs Lloyd's k-means with
#' k-means++ seeding on the \eqn{n \times D} feature matrix: \eqn{O(n D k)}
#' time per iteration and \eqn{8 n D} bytes (400 MB for a million points
#' with `D = 50`, 4 GB with the default `D = 500`).  The clusters
#' approximate those of the exact method, better as `D` grows; a few hundred
#' features usually suffice for well separated clusters.  Kernels that are
#' not shift-invariant use whatever map [random_features()] builds for them,
#' and are refused (pointing to `method = "exact"`) when it builds none.
#'
#' @param x Data: a numeric matrix, a data frame of numeric columns, a
#'   numeric vector (one column), or for `method = "rff"` a sparse
#'   `dgCMatrix` (see [sparse_input]).  No missing or infinite values.  The
#'   formula method takes a one-sided `formula = ~ a + b` with `data`
#'   instead, see [formula_interface].
#' @param centers The number of clusters \eqn{k} (between 1 and the number of
#'   rows), or an initial assignment: an integer vector (or factor) with one
#'   value in \eqn{1, \dots, k} per row of `x`, where \eqn{k} is its largest
#'   value (for a factor, its number of levels).  Clusters missing from an
#'   initial assignment are re-seeded as described in Details.
#' @param kernel A kernel object, or `NULL` (the default) for the Gaussian
#'   kernel with the clustering bandwidth described in Details (stored in
#'   `bandwidth` and printed).  A kernel given explicitly, including
#'   `gaussian_kernel("median")`, keeps its meaning.
#' @param method `"exact"` (the Gram matrix), `"rff"` (random Fourier
#'   features) or `"nystrom"` (a Nyström map on `min(m, n)` landmarks chosen
#'   by `landmarks`, [nystrom_features()]; Wang, Gittens & Mahoney, 2019,
#'   show that uniform ones approximate the kernel k-means objective within
#'   a factor \eqn{1 + \epsilon}).
#' @param map For `method = "rff"`, a feature map fitted beforehand (by
#'   [random_features()] with any `sampling`, or [nystrom_features()]) to
#'   use instead of drawing one: `kernel` and `D` are then the map's.
#' @param D For `method = "rff"`, the number of random features; ignored
#'   by the other methods.
#' @param m For `method = "nystrom"`, the number of landmarks (by default
#'   500, as `D`'s default; `D` given with `method = "nystrom"` still counts
#'   the landmarks for one release, with a message, see [bochner_arguments]).
#' @param landmarks For `method = "nystrom"`, how the landmarks are chosen:
#'   `"uniform"` (the default), `"kmeans"`, `"leverage"` or `"rpcholesky"`
#'   (randomly pivoted Cholesky), as in [nystrom_features()]; ignored by the
#'   other methods.
#' @param nstart Number of random starts; the best is kept.  The default, 10,
#'   found the rings of the examples on every one of 20 draws
#'   (`bench/investigations/kmeans.md`); on the Gram matrix a start costs a few passes over
#'   it while the matrix itself is computed once.  Ignored when `centers` is
#'   an initial assignment (with a warning if given).
#' @param algorithm `"Hartigan-Wong"` (Lloyd's iterations, then single-point
#'   moves, see Details) or `"Lloyd"` (the iterations alone).
#' @param batch `NULL` (the default), or for `method = "rff"` and
#'   `"nystrom"` the size of the mini-batches of mini-batch k-means
#'   (Sculley, 2010) for data whose features do not fit in memory: the
#'   centres start from k-means on the features of one batch (with `nstart`
#'   starts, `seeding` and `algorithm`), then each of at most `max_iter`
#'   steps maps a fresh random batch, assigns it and moves every centre to
#'   the running mean of the points it has been given; it stops early when
#'   no centre moves by more than 1e-3 of the batch's root mean square
#'   distance (`converged`; no warning otherwise).  A last pass over the rows
#'   in blocks assigns every point; `withinss`, `totss` and the last value of
#'   `trace` are exact for that assignment, the earlier values of `trace`
#'   are estimates from the batches.  Memory: the data, and features for one
#'   block of rows at a time.
#' @param weights `NULL`, or non-negative case weights, one per row of `x`:
#'   the objective becomes \eqn{\sum_i w_i \|\phi(x_i) - \mu_{c(i)}\|^2}
#'   with \eqn{\mu_c} the weighted mean of cluster \eqn{c}, for every
#'   method (seeding draws in proportion to \eqn{w_i d^2}; Hartigan-Wong
#'   moves use \eqn{W_b / (W_b + w_i)} and \eqn{W_a / (W_a - w_i)}, with
#'   \eqn{W} a cluster's total weight).  Integer weights give the fit of the
#'   data with each row repeated that many times.  Rows of weight 0 take no
#'   part in the fit and join their nearest cluster afterwards.
#' @param seeding `"kmeans++"`, `"kmeans||"` (see Details) or `"auto"`:
#'   k-means|| from 100 000 rows, k-means++ below.
#' @param max_iter Maximum number of iterations per start.  (`iter.max`, as
#'   [stats::kmeans()] calls it, still works for one release, with a message.)
#' @param seed `NULL` to use the current random number stream, or a number to
#'   draw from `set.seed(seed)` and leave the user's stream as it was.
#' @param nthreads Number of threads, see [bochner_threads()].  The result
#'   does not depend on it.
#' @param ... Passed from the formula method to the default method.
#' @return An object of class `"kernel_kmeans"`, a list with
#'   \item{cluster}{the cluster (1 to \eqn{k}) of each row of `x`;}
#'   \item{size}{the number of points in each cluster;}
#'   \item{withinss}{the within-cluster sum of squared feature-space
#'     distances to the cluster mean, per cluster;}
#'   \item{tot.withinss}{their sum, the objective;}
#'   \item{totss, betweenss}{the total sum of squares about the overall mean
#'     in feature space, and `totss - tot.withinss`;}
#'   \item{iter, converged}{the number of iterations of the returned run, and
#'     whether it stopped because no point moved;}
#'   \item{trace}{the objective after seeding and after each iteration of the
#'     returned run (non-increasing);}
#'   \item{start_objectives}{the final objective of every start;}
#'   \item{distance}{each point's squared feature-space distance to the mean
#'     of its cluster;}
#'   \item{reseeded}{how many times an empty cluster was re-seeded;}
#'   \item{moves}{the Hartigan-Wong moves of the returned run;}
#'   \item{bandwidth}{`NULL`, or for the default kernel a list with `sigma`,
#'     the `rule` in words, the `neighbour` order and the subsample's `rows`;}
#'   \item{algorithm, seeding}{as used;}
#'   \item{weights}{the case weights, or `NULL`; with weights, `withinss`,
#'     `tot.withinss`, `totss` and `trace` are weighted sums, `distance`
#'     stays each point's own squared distance;}
#'   \item{batch}{for mini-batch fits, the batch size (`iter` then counts
#'     the batches);}
#'   \item{k, kernel, method, nstart}{the settings (`kernel` with `sigma`
#'     resolved);}
#' and what [predict()][predict.kernel_kmeans] needs: for the exact method
#' the training data `x` and `centre_sqnorm`, the squared norms
#' \eqn{\frac{1}{|c|^2}\sum_{j,l \in c} K_{jl}} of the cluster means; for
#' `method = "rff"` the feature `map` (a [random_features()] object), `D` and
#' `centers`, the cluster means in feature space (one row per cluster, one
#' column per feature: `D` for the phase map).
#' @seealso [predict.kernel_kmeans()], [fitted.kernel_kmeans()],
#'   [plot.kernel_kmeans()],
#'   [stats::kmeans()] for k-means in the input space.
#' @examples
#' # two concentric rings: ordinary k-means cuts them in half
#' set.seed(1)
#' n <- 200
#' angle <- runif(2 * n, 0, 2 * pi)
#' radius <- rep(c(1, 3), each = n) + rnorm(2 * n, sd = 0.1)
#' rings <- cbind(x = radius * cos(angle), y = radius * sin(angle))
#' truth <- rep(1:2, each = n)
#' table(truth, kmeans(rings, 2, nstart = 5)$cluster)
#'
#' fit <- kernel_kmeans(rings, 2)   # the default bandwidth finds the rings
#' fit
#' table(truth, fit$cluster)
#' plot(fit)
#'
#' # the same with random features, and assignment of new points
#' fit2 <- kernel_kmeans(rings, 2, gaussian_kernel(sigma = 1),
#'                       method = "rff", D = 300, nstart = 5)
#' table(truth, fit2$cluster)
#' predict(fit2, rbind(c(0, 1), c(3, 0)))
#' fit4 <- kernel_kmeans(rings, 2, method = "nystrom", D = 100, seed = 1)
#' table(truth, fit4$cluster)
#'
#' # a formula with a data frame
#' fit3 <- kernel_kmeans(~ Petal.Length + Petal.Width, data = iris, centers = 3,
#'                       kernel = gaussian_kernel(1), nstart = 3)
#' table(iris$Species, fit3$cluster)
#' @md
#' @export
kernel_kmeans <- function(x, ...) UseMethod("kernel_kmeans")

#' @rdname kernel_kmeans
#' @export
kernel_kmeans.default <- function(x, centers, kernel = NULL,
                                  method = c("exact", "rff", "nystrom"), D = 500, m = NULL,
                                  landmarks = c("uniform", "kmeans", "leverage", "rpcholesky"),
                                  nstart = 10, max_iter = 100, seed = NULL, map = NULL,
                                  algorithm = c("Hartigan-Wong", "Lloyd"),
                                  seeding = c("auto", "kmeans++", "kmeans||"),
                                  batch = NULL, weights = NULL,
                                  nthreads = bochner_threads(), ...) {
  take_renamed(environment(), "kernel_kmeans()", ...)
  nstart_given <- !missing(nstart)
  x <- as_data_matrix(x, "x", sparse = TRUE)
  weights <- kkm_weights(weights, nrow(x))
  if (missing(centers)) {
    stop_arg("centers", "is required: the number of clusters, or an initial ",
             "assignment of the rows of 'x' to clusters 1..k")
  }
  bandwidth <- NULL
  if (is.null(kernel) && is.null(map)) {
    bandwidth <- kkm_bandwidth(x)
    kernel <- gaussian_kernel(bandwidth$sigma)
  }
  if (!is.null(kernel)) check_kernel(kernel)
  method <- kkm_method(method)
  D <- nystrom_count(method, m, D, !missing(D), "kernel_kmeans()")
  if (method == "exact" && is_sparse_matrix(x)) stop_sparse("x", "method = \"exact\" does not take; use method = \"rff\"")
  algorithm <- check_choice(algorithm, c("Hartigan-Wong", "Lloyd"), "algorithm")
  hartigan <- algorithm == "Hartigan-Wong"
  landmarks <- check_choice(landmarks, landmark_rules, "landmarks")
  seeding <- check_choice(seeding, c("auto", "kmeans++", "kmeans||"), "seeding")
  if (seeding == "auto") seeding <- if (nrow(x) >= kkm_parallel_from) "kmeans||" else "kmeans++"
  # what the C code is told: Hartigan-Wong moves, and k-means|| (1L) or ++ (0L)
  algo <- list(hartigan = hartigan, seeding = as.integer(seeding == "kmeans||"))
  start <- kkm_centers(centers, nrow(x))
  nstart <- check_count(nstart, "nstart")
  max_iter <- check_count(max_iter, "max_iter", upper = .Machine$integer.max - 1)
  nthreads <- check_threads(nthreads)
  if (!is.null(map)) {
    if (method != "rff") stop_arg("map", "is for method = \"rff\"")
    check_feature_map(map, ncol(x))
  } else if (method != "exact") {
    D <- check_count(D, "D")
  }
  if (!is.null(batch)) {
    if (method == "exact") stop_arg("batch", "is for method = \"rff\" or \"nystrom\"")
    if (!is.null(start$init)) stop_arg("batch", "cannot be used with an initial assignment")
    batch <- check_count(batch, "batch", lower = start$k)
    batch <- min(batch, nrow(x))
  }
  if (!is.null(start$init) && !nstart_given) {
    nstart <- 1L
  } else if (!is.null(start$init) && nstart > 1L) {
    warning("'nstart' is ignored when 'centers' is an initial assignment", call. = FALSE)
    nstart <- 1L
  }
  input <- input_description(x)
  # rows of weight 0 take no part in the fit; they join their nearest
  # cluster afterwards
  all_x <- x
  zero <- if (!is.null(weights)) which(weights == 0) else integer(0)
  if (length(zero)) {
    x <- x[-zero, , drop = FALSE]
    if (!is.null(start$init)) start$init <- start$init[-zero]
    weights <- weights[-zero]
    if (start$k > nrow(x)) {
      stop_arg("weights", "leave ", nrow(x), " row(s) of positive weight, fewer than the ",
               start$k, " clusters")
    }
  }
  algo$weights <- weights
  if (method == "exact") {
    fit <- kkm_fit_exact(x, start, kernel, nstart, max_iter, seed, nthreads, algo)
  } else if (method == "nystrom") {
    fit <- kkm_fit_nystrom(x, start, kernel, D, nstart, max_iter, seed, nthreads, algo, batch,
                           landmarks)
  } else {
    fit <- kkm_fit_rff(x, start, kernel, D, nstart, max_iter, seed, nthreads, map, algo, batch)
  }
  fit$algorithm <- algorithm
  fit$seeding <- seeding
  fit$input <- input
  fit$call <- generic_call(match.call())
  fit$bandwidth <- bandwidth
  fit$weights <- weights
  if (length(zero)) fit <- kkm_add_zero_weight_rows(fit, all_x, zero, nthreads)
  if (!fit$converged && is.null(batch)) {
    warning(sprintf("kernel k-means did not converge in %d iteration%s; increase 'max_iter'",
                    max_iter, if (max_iter == 1L) "" else "s"), call. = FALSE)
  }
  fit
}

#' @rdname formula_interface
#' @export
kernel_kmeans.formula <- function(formula, data = NULL, ..., subset, weights,
                                  na.action = stats::na.omit) {
  fit_formula(match.call(), parent.frame(), kernel_kmeans.default, na.action, ...,
              chunked = kernel_kmeans.data_chunks,
              no_response = "k-means uses no response")
}

kkm_method <- function(method) check_choice(method, c("exact", "rff", "nystrom"), "method")
