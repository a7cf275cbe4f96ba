#' Kernel k-means
#'
#' Clusters data by k-means in the feature space of a kernel, where groups
#' that ordinary k-means cannot separate (concentric rings, interleaved
#' moons) become separable.  `method = "exact"` works on the Gram matrix;
#' `method = "rff"` maps the data to random Fourier features and runs Lloyd's
#' k-means there, which scales to millions of points.
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
#' **Seeding** is kernel k-means++: the first centre is a point drawn
#' uniformly at random, each further centre a point drawn with probability
#' proportional to its squared feature-space distance to the nearest centre
#' chosen so far, and every point starts in the cluster of its nearest
#' centre.  Then assignment (each point to the nearest cluster mean; ties go
#' to the lowest cluster number) and update alternate until no point moves or
#' `iter.max` iterations.  Neither step can increase the objective; the
#' objective after seeding and after each iteration is kept in `trace`.
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
#' `/proc/meminfo`), or than `getOption("bochner.max_gram_bytes")` if that
#' is set, is refused with a message suggesting `method = "rff"`.  Any
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
#'   numeric vector (one column), or a one-sided formula such as `~ a + b`
#'   with `data` (factors are one-hot coded).  No missing or infinite values.
#' @param centers The number of clusters \eqn{k} (between 1 and the number of
#'   rows), or an initial assignment: an integer vector (or factor) with one
#'   value in \eqn{1, \dots, k} per row of `x`, where \eqn{k} is its largest
#'   value (for a factor, its number of levels).  Clusters missing from an
#'   initial assignment are re-seeded as described in Details.
#' @param kernel A kernel object; the default is [gaussian_kernel()] with the
#'   median heuristic.  Well separated non-convex clusters such as rings
#'   usually need a `sigma` smaller than the median distance.
#' @param method `"exact"` (the Gram matrix) or `"rff"` (random Fourier
#'   features).
#' @param map For `method = "rff"`, a feature map fitted beforehand (by
#'   [random_features()] with any `sampling`, or [nystrom_features()]) to
#'   use instead of drawing one: `kernel` and `D` are then the map's.
#' @param D For `method = "rff"`, the number of random features; ignored by
#'   the exact method.
#' @param nstart Number of random starts; the best is kept.  Ignored (with a
#'   warning) when `centers` is an initial assignment.
#' @param iter.max Maximum number of iterations per start.
#' @param seed `NULL` to use the current random number stream, or a number to
#'   draw from `set.seed(seed)` and leave the user's stream as it was.
#' @param nthreads Number of threads, see [bochner_threads()].  The result
#'   does not depend on it.
#' @param data A data frame, for the formula method.
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
#'   \item{k, kernel, method, nstart}{the settings (`kernel` with `sigma`
#'     resolved);}
#' and what [predict()][predict.kernel_kmeans] needs: for the exact method
#' the training data `x` and `centre_sqnorm`, the squared norms
#' \eqn{\frac{1}{|c|^2}\sum_{j,l \in c} K_{jl}} of the cluster means; for
#' `method = "rff"` the feature `map` (a [random_features()] object), `D` and
#' `centers`, the cluster means in feature space (one row per cluster, one
#' column per feature: `D` for the phase map).
#' @seealso [predict.kernel_kmeans()], [fitted.kernel_kmeans()],
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
#' fit <- kernel_kmeans(rings, 2, gaussian_kernel(sigma = 1), nstart = 5)
#' fit
#' table(truth, fit$cluster)
#'
#' # the same with random features, and assignment of new points
#' fit2 <- kernel_kmeans(rings, 2, gaussian_kernel(sigma = 1),
#'                       method = "rff", D = 300, nstart = 5)
#' table(truth, fit2$cluster)
#' predict(fit2, rbind(c(0, 1), c(3, 0)))
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
kernel_kmeans.default <- function(x, centers, kernel = gaussian_kernel("median"),
                                  method = c("exact", "rff"), D = 500, nstart = 1,
                                  iter.max = 100, seed = NULL, map = NULL,
                                  nthreads = bochner_threads(), ...) {
  check_no_dots(...)
  x <- as_data_matrix(x, "x")
  if (missing(centers)) {
    stop_arg("centers", "is required: the number of clusters, or an initial ",
             "assignment of the rows of 'x' to clusters 1..k")
  }
  check_kernel(kernel)
  method <- kkm_method(method)
  start <- kkm_centers(centers, nrow(x))
  nstart <- check_count(nstart, "nstart")
  iter.max <- check_count(iter.max, "iter.max", upper = .Machine$integer.max - 1)
  nthreads <- check_threads(nthreads)
  if (!is.null(map)) {
    if (method != "rff") stop_arg("map", "is for method = \"rff\"")
    check_feature_map(map, ncol(x))
  } else if (method == "rff") {
    D <- check_count(D, "D")
  }
  if (!is.null(start$init) && nstart > 1L) {
    warning("'nstart' is ignored when 'centers' is an initial assignment", call. = FALSE)
    nstart <- 1L
  }
  input <- input_description(x)
  if (method == "exact") {
    fit <- kkm_fit_exact(x, start, kernel, nstart, iter.max, seed, nthreads)
  } else {
    fit <- kkm_fit_rff(x, start, kernel, D, nstart, iter.max, seed, nthreads, map)
  }
  fit$input <- input
  if (!fit$converged) {
    warning(sprintf("kernel k-means did not converge in %d iteration%s; increase 'iter.max'",
                    iter.max, if (iter.max == 1L) "" else "s"), call. = FALSE)
  }
  fit
}

#' @rdname kernel_kmeans
#' @export
kernel_kmeans.formula <- function(x, data = NULL, ...) {
  fit_formula(x, data, kernel_kmeans.default, no_response = "k-means uses no response", ...)
}

kkm_method <- function(method) {
  choices <- c("exact", "rff")
  if (identical(method, choices)) return("exact")
  if (!is.character(method) || length(method) != 1L || is.na(method)) {
    stop_arg("method", "must be \"exact\" or \"rff\"")
  }
  hit <- pmatch(method, choices)
  if (is.na(hit)) stop_arg("method", "must be \"exact\" or \"rff\" (got \"", method, "\")")
  choices[hit]
}

# `centers` as the number of clusters or an initial assignment.
kkm_centers <- function(centers, n) {
  if (is.matrix(centers) || is.data.frame(centers)) {
    stop_arg("centers", "must be the number of clusters or an initial assignment; ",
             "initial centres given as points are not supported (kernel k-means ",
             "centres live in feature space)")
  }
  if (is.factor(centers)) {
    if (length(centers) != n) {
      stop_arg("centers", "as a factor must have one value per row of 'x' (", n,
               "), not ", length(centers))
    }
    if (anyNA(centers)) stop_arg("centers", "contains NA")
    k <- nlevels(centers)
    if (k > n) stop_arg("centers", "has ", k, " levels but 'x' has only ", n, " row(s)")
    return(list(k = k, init = as.integer(centers)))
  }
  if (!is.numeric(centers) || length(centers) < 1L) {
    stop_arg("centers", "must be the number of clusters or an initial assignment (integers 1..k)")
  }
  if (length(centers) == 1L) {
    k <- check_count(centers, "centers")
    if (k > n) {
      stop_arg("centers", "asks for ", k, " clusters but 'x' has only ", n, " row(s)")
    }
    return(list(k = k, init = NULL))
  }
  if (length(centers) != n) {
    stop_arg("centers", "must be the number of clusters, or an initial assignment with ",
             "one value per row of 'x' (", n, "); it has length ", length(centers))
  }
  if (anyNA(centers) || any(!is.finite(centers))) stop_arg("centers", "contains NA or infinite values")
  if (any(centers != round(centers)) || any(centers < 1)) {
    stop_arg("centers", "as an initial assignment must hold whole numbers 1..k")
  }
  k <- max(centers)
  if (k > n) {
    stop_arg("centers", "assigns points to cluster ", k, " but 'x' has only ", n, " row(s)")
  }
  list(k = as.integer(k), init = as.integer(centers))
}

# Bytes the exact method may spend on its Gram matrix.
kkm_gram_limit <- function() {
  opt <- getOption("bochner.max_gram_bytes")
  if (!is.null(opt)) return(check_positive(opt, "options(bochner.max_gram_bytes)"))
  avail <- kkm_available_memory()
  if (is.na(avail)) Inf else avail
}

kkm_available_memory <- function() {
  if (!file.exists("/proc/meminfo")) return(NA_real_)
  lines <- tryCatch(readLines("/proc/meminfo", warn = FALSE), error = function(e) character())
  hit <- grep("^MemAvailable:", lines, value = TRUE)
  if (length(hit) == 0L) return(NA_real_)
  kb <- suppressWarnings(as.numeric(gsub("[^0-9]", "", hit[1L])))
  if (is.na(kb)) NA_real_ else kb * 1024
}

kkm_gram_refusal <- function(n, k, why) {
  stop(sprintf(paste0("method = \"exact\" needs the %d x %d Gram matrix and the %d x %d ",
                      "cluster sums, %s (8 n (n + k) bytes), %s; use method = \"rff\", ",
                      "which needs 8 n D bytes (%s with D = 500), or cluster a subsample"),
               n, n, n, k, format_bytes(kkm_gram_bytes(n, k)), why,
               format_bytes(8 * 500 * as.double(n))), call. = FALSE)
}

kkm_gram_bytes <- function(n, k) 8 * as.double(n) * (as.double(n) + k)

kkm_fit_exact <- function(x, start, kernel, nstart, iter.max, seed, nthreads) {
  n <- nrow(x)
  if (kernel$name == "min" && any(x < 0)) stop_arg("x", "must be non-negative for the min kernel")
  check_allocation(n, n, "the Gram matrix", arg = "x")
  limit <- kkm_gram_limit()
  if (kkm_gram_bytes(n, start$k) > limit) {
    where <- if (is.null(getOption("bochner.max_gram_bytes"))) "" else " (options(bochner.max_gram_bytes))"
    kkm_gram_refusal(n, start$k, sprintf("but only %s is available%s", format_bytes(limit), where))
  }
  resolved <- resolve_kernel(kernel, x)
  res <- with_seed(seed, tryCatch(
    .Call(C_kmeans_gram, x, kernel_code(resolved), kernel_parameters(resolved),
          start$k, start$init, nstart, iter.max, nthreads),
    error = function(e) {
      if (grepl("cannot allocate", conditionMessage(e))) {
        kkm_gram_refusal(n, start$k, "and allocating them failed")
      }
      stop(e)
    }))
  train <- x
  dimnames(train) <- list(NULL, colnames(x))
  fit <- kkm_result(res, x, start$k, resolved, "exact", nstart)
  fit$x <- train
  fit$centre_sqnorm <- res$centre_sqnorm
  fit
}

kkm_fit_rff <- function(x, start, kernel, D, nstart, iter.max, seed, nthreads, map = NULL) {
  if (!is.null(map)) {
    return(with_seed(seed, kkm_lloyd_on_map(x, start, map, nstart, iter.max, nthreads,
                                            "the features of 'x'", arg = "map")))
  }
  fourier <- isTRUE(kernel$shift_invariant)
  if (!fourier && is.null(utils::getS3method("build_feature_map", class(kernel)[1L],
                                             optional = TRUE))) {
    stop_arg("kernel", "must be shift-invariant for method = \"rff\" (random Fourier ",
             "features); the ", kernel$name, " kernel has no random feature map here: ",
             "use method = \"exact\"")
  }
  resolved <- resolve_kernel(kernel, x)
  # one stream: the map's draws, then the seeding
  with_seed(seed, {
    map <- if (fourier) random_features(x, resolved, D = D, type = "phase")
           else random_features(x, resolved, D = D)
    kkm_lloyd_on_map(x, start, map, nstart, iter.max, nthreads,
                     "the random features of 'x'", arg = "D")
  })
}

# Lloyd's k-means on the features of x under a map ('what' and 'arg' say what
# would not fit in memory, and which argument to change).
kkm_lloyd_on_map <- function(x, start, map, nstart, iter.max, nthreads, what, arg) {
  check_allocation(nrow(x), map$n_features, what, arg = arg)
  Z <- stats::predict(map, x, nthreads = nthreads)
  res <- .Call(C_kmeans_lloyd, Z, start$k, start$init, nstart, iter.max, nthreads)
  fit <- kkm_result(res, x, start$k, map$kernel, "rff", nstart)
  fit$map <- map
  fit$D <- map_size(map)
  fit$centers <- res$centers
  dimnames(fit$centers) <- list(seq_len(start$k), NULL)
  fit
}

kkm_result <- function(res, x, k, kernel, method, nstart) {
  cluster <- res$cluster
  names(cluster) <- rownames(x)
  tot <- sum(res$withinss)
  structure(list(cluster = cluster, size = res$size, withinss = res$withinss,
                 tot.withinss = tot, totss = res$totss,
                 betweenss = max(0, res$totss - tot),
                 iter = res$iter, converged = res$converged, trace = res$trace,
                 start_objectives = res$start_objectives, distance = res$distance,
                 reseeded = res$reseeded, k = k, kernel = kernel, method = method,
                 nstart = nstart),
            class = "kernel_kmeans")
}

#' Assign new points to the clusters of a kernel k-means fit
#'
#' For `method = "exact"`, the squared feature-space distance from a new
#' point \eqn{y} to cluster \eqn{c} is
#' \eqn{k(y, y) - \frac{2}{|c|}\sum_{j \in c} k(y, x_j) + \frac{1}{|c|^2}
#' \sum_{j, l \in c} K_{jl}}, computed against the stored training data in
#' row blocks of `newdata` (never one \eqn{m \times n} matrix): \eqn{O(m n)}
#' kernel evaluations.  For `method = "rff"`, it is the squared Euclidean
#' distance from the new point's random features to the cluster means in
#' feature space, \eqn{O(m D k)}.  Each point goes to the nearest cluster
#' (ties to the lowest number), so predicting the training data of a
#' converged fit reproduces its clusters.
#'
#' @param object A fit from [kernel_kmeans()].
#' @param newdata Data with the columns the model was fitted on (matched by
#'   name where both have names), or a data frame with the formula's
#'   variables for a fit with a formula.  Without `newdata`, the fitted
#'   clusters.
#' @param type `"cluster"` for the cluster numbers, or `"distance"` for the
#'   matrix of squared feature-space distances to every cluster mean (one row
#'   per point, one column per cluster).
#' @param nthreads Number of threads, see [bochner_threads()].
#' @param ... Unused.
#' @return An integer vector of clusters, or a numeric matrix of distances.
#' @examples
#' set.seed(2)
#' x <- rbind(matrix(rnorm(100, 0), 50), matrix(rnorm(100, 4), 50))
#' fit <- kernel_kmeans(x, 2, gaussian_kernel(2), nstart = 3)
#' predict(fit, rbind(c(0, 0), c(4, 4), c(2, 2)))
#' predict(fit, rbind(c(0, 0), c(4, 4)), type = "distance")
#' @md
#' @export
predict.kernel_kmeans <- function(object, newdata, type = c("cluster", "distance"),
                                  nthreads = bochner_threads(), ...) {
  if (!missing(newdata) && inherits(newdata, "data_chunks")) {
    return(predict_chunks(object, newdata, type = type, ...,
                          nthreads = if (missing(nthreads)) chunks_threads() else nthreads))
  }
  check_no_dots(...)
  type <- check_choice(type, c("cluster", "distance"), "type")
  if (missing(newdata)) {
    if (type == "cluster") return(object$cluster)
    stop_arg("newdata", "is required for type = \"distance\"")
  }
  x <- kkm_input_matrix(object, newdata)
  nthreads <- check_threads(nthreads)
  dist <- if (object$method == "exact") {
    if (object$kernel$name == "min" && any(x < 0)) {
      stop_arg("newdata", "must be non-negative for the min kernel")
    }
    .Call(C_kmeans_gram_distances, x, object$x, kernel_code(object$kernel),
          kernel_parameters(object$kernel), unname(object$cluster), object$size,
          object$centre_sqnorm, nthreads)
  } else {
    kkm_rff_distances(object, x, nthreads)
  }
  if (type == "distance") {
    dimnames(dist) <- list(rownames(x), seq_len(ncol(dist)))
    return(dist)
  }
  cluster <- max.col(-dist, ties.method = "first")
  names(cluster) <- rownames(x)
  cluster
}

# Distances to the feature-space centroids, mapping newdata in row blocks of
# at most 32 MB of features.
kkm_rff_distances <- function(object, x, nthreads) {
  m <- nrow(x)
  rows <- max(1L, min(m, 2^22 %/% object$map$n_features))
  check_allocation(m, object$k, "the distance matrix", arg = "newdata")
  dist <- matrix(0, m, object$k)
  for (i0 in seq(1L, m, by = rows)) {
    idx <- i0:min(m, i0 + rows - 1L)
    Z <- transform_features(object$map, x[idx, , drop = FALSE], nthreads)
    dist[idx, ] <- .Call(C_kmeans_centre_distances, Z, object$centers, nthreads)
  }
  dist
}

# newdata as the numeric matrix the model was fitted on, or a clear error.
kkm_input_matrix <- function(object, newdata, arg = "newdata") {
  newdata_matrix(object$input, newdata, arg, fitted = "the model")
}

#' Fitted clusters of a kernel k-means fit
#'
#' @param object A fit from [kernel_kmeans()].
#' @param method `"classes"` for the cluster of each training point, or
#'   `"distances"` for each point's squared feature-space distance to the
#'   mean of its cluster (large values flag points far from every cluster).
#' @param ... Unused.
#' @return An integer vector of clusters, or a numeric vector of distances,
#'   one value per training point.
#' @examples
#' fit <- kernel_kmeans(faithful, 2, gaussian_kernel("median"))
#' table(fitted(fit))
#' head(fitted(fit, "distances"))
#' @md
#' @export
fitted.kernel_kmeans <- function(object, method = c("classes", "distances"), ...) {
  check_no_dots(...)
  method <- check_choice(method, c("classes", "distances"), "method")
  if (method == "classes") return(object$cluster)
  stats::setNames(object$distance, names(object$cluster))
}

kkm_description <- function(x) {
  what <- if (x$method == "exact") "exact, on the Gram matrix"
          else sprintf("on %d random %sfeatures", x$map$n_features,
                       if (inherits(x$map, c("fourier_features", "structured_features"))) "Fourier " else "")
  kern <- kernel_summary(x$kernel)
  c(sprintf("Kernel k-means (%s): %d cluster%s of sizes %s", what, x$k,
            if (x$k == 1L) "" else "s", paste(x$size, collapse = ", ")),
    paste0("  ", kern),
    sprintf("  %s after %d iteration%s%s", if (x$converged) "converged" else "did not converge",
            x$iter, if (x$iter == 1L) "" else "s",
            if (x$nstart > 1L) sprintf(", best of %d starts", x$nstart) else ""))
}

#' @export
print.kernel_kmeans <- function(x, ...) {
  cat(kkm_description(x), sep = "\n")
  cat("\nWithin-cluster sum of squares by cluster, in feature space:\n")
  print(signif(x$withinss, 5))
  if (x$totss > 0) {
    cat(sprintf(" (between_SS / total_SS = %5.1f %%)\n", 100 * x$betweenss / x$totss))
  }
  cat("\nClustering vector:\n")
  print(utils::head(x$cluster, 50))
  if (length(x$cluster) > 50L) cat(" ... (", length(x$cluster), " points)\n", sep = "")
  cat("\nAvailable components:\n")
  print(names(x))
  invisible(x)
}

#' @export
summary.kernel_kmeans <- function(object, ...) {
  clusters <- data.frame(size = object$size, withinss = object$withinss,
                         mean_distance = object$withinss / object$size,
                         max_distance = vapply(seq_len(object$k), function(c) {
                           max(object$distance[object$cluster == c])
                         }, numeric(1)))
  rownames(clusters) <- seq_len(object$k)
  structure(list(description = kkm_description(object), clusters = clusters,
                 tot.withinss = object$tot.withinss, totss = object$totss,
                 betweenss = object$betweenss, trace = object$trace,
                 start_objectives = object$start_objectives,
                 reseeded = object$reseeded),
            class = "summary.kernel_kmeans")
}

#' @export
print.summary.kernel_kmeans <- function(x, ...) {
  cat(x$description, sep = "\n")
  cat("\nClusters (squared distances in feature space):\n")
  print(signif(x$clusters, 4))
  cat(sprintf("\nObjective (tot.withinss) %.6g of total %.6g; between / total = %.1f %%\n",
              x$tot.withinss, x$totss,
              if (x$totss > 0) 100 * x$betweenss / x$totss else 0))
  tr <- signif(x$trace, 6)
  if (length(tr) > 8L) tr <- c(utils::head(tr, 4), NA, utils::tail(tr, 3))
  cat("Objective by iteration:", paste(ifelse(is.na(tr), "...", format(tr)), collapse = " "), "\n")
  if (length(x$start_objectives) > 1L) {
    cat(sprintf("Final objective over %d starts: min %.6g, median %.6g, max %.6g\n",
                length(x$start_objectives), min(x$start_objectives),
                stats::median(x$start_objectives), max(x$start_objectives)))
  }
  if (x$reseeded > 0L) cat("Empty clusters re-seeded:", x$reseeded, "\n")
  invisible(x)
}
