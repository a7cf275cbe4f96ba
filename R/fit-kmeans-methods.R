# Methods of a kernel_kmeans fit, in memory or on chunks: predict(),
# fitted(), print(), summary(), plot().

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
    train_cluster <- if (!is.null(object$x_cluster)) object$x_cluster else unname(object$cluster)
    train_weights <- if (!is.null(object$weights)) object$weights[object$weights > 0]
    .Call(C_kmeans_gram_distances, kernel_inputs(object$kernel, x),
          kernel_inputs(object$kernel, object$x), kernel_code(object$kernel),
          kernel_parameters(object$kernel), train_weights, train_cluster,
          tabulate(train_cluster, object$k),
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
  check_allocation(nrow(x), object$k, "the distance matrix", arg = "newdata")
  with_sparse_frequencies(object$map, x, transform_in_blocks(x, object$map$n_features, object$k,
                                                             function(xb) {
    Z <- transform_features(object$map, xb, nthreads)
    .Call(C_kmeans_centre_distances, Z, object$centers, nthreads)
  }))
}

# newdata as the numeric matrix the model was fitted on, or a clear error.
kkm_input_matrix <- function(object, newdata, arg = "newdata") {
  if (is_sparse_matrix(newdata) && object$method == "rff") return(sparse_newdata(object$input, newdata, arg))
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
          else if (inherits(x$map, "nystrom_features")) sprintf("on %d Nystr\u00f6m features", x$map$n_features)
          else sprintf("on %d random %sfeatures", x$map$n_features,
                       if (inherits(x$map, c("fourier_features", "structured_features"))) "Fourier " else "")
  kern <- kernel_summary(x$kernel)
  c(sprintf("Kernel k-means (%s): %d cluster%s of sizes %s", what, x$k,
            if (x$k == 1L) "" else "s", paste(x$size, collapse = ", ")),
    paste0("  ", kern, if (!is.null(x$bandwidth)) " (the clustering default)"),
    if (!is.null(x$bandwidth)) paste0("  sigma chosen as the ", x$bandwidth$rule),
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

#' Plot the clusters of a kernel k-means fit
#'
#' Two-dimensional data are drawn as they are, each point coloured by its
#' cluster.  Data with more columns are drawn on their first two principal
#' components in feature space, the space in which the clusters were found:
#' kernel principal components of the centred Gram matrix for
#' `method = "exact"`, principal components of the fit's features for
#' `method = "rff"` and `"nystrom"`.  Beyond `max_points` rows an evenly
#' spaced subsample is drawn (the Gram matrix of the points drawn is formed
#' for the exact method).
#'
#' @param x A fit from [kernel_kmeans()].
#' @param data The points to draw, with the columns the model was fitted on;
#'   clustered by [predict()][predict.kernel_kmeans].  The default, `NULL`,
#'   draws the training data, which exact fits keep; fits on features keep
#'   no data and need `data`.
#' @param max_points The most points drawn.
#' @param main,... Passed to [graphics::plot()].
#' @return The coordinates drawn, invisibly: a two-column matrix with the
#'   cluster of each point as attribute `cluster`.
#' @examples
#' set.seed(1)
#' angle <- runif(300, 0, 2 * pi)
#' radius <- rep(c(1, 3), each = 150) + rnorm(300, sd = 0.1)
#' rings <- cbind(radius * cos(angle), radius * sin(angle))
#' fit <- kernel_kmeans(rings, 2, seed = 1)
#' plot(fit)
#' # four columns: the first two feature-space components
#' plot(kernel_kmeans(iris[, 1:4], 3, seed = 1))
#' @md
#' @export
plot.kernel_kmeans <- function(x, data = NULL, max_points = 5000, main = NULL, ...) {
  max_points <- check_count(max_points, "max_points", lower = 2)
  if (is.null(data)) {
    if (is.null(x$x)) {
      stop_arg("data", "is required for a fit on features (method = \"", x$method,
               "\"), which keeps no training data")
    }
    pts <- x$x
    cluster <- if (!is.null(x$x_cluster)) x$x_cluster else unname(x$cluster)
  } else {
    pts <- kkm_input_matrix(x, data, arg = "data")
    cluster <- NULL
  }
  if (nrow(pts) > max_points) {
    keep <- unique(round(seq(1, nrow(pts), length.out = max_points)))
    pts <- pts[keep, , drop = FALSE]
    if (!is.null(cluster)) cluster <- cluster[keep]
  }
  if (is.null(cluster)) cluster <- unname(predict(x, pts))
  if (ncol(pts) == 2L) {
    coords <- pts
    labels <- if (is.null(colnames(pts))) c("x[, 1]", "x[, 2]") else colnames(pts)
  } else {
    coords <- kkm_feature_components(x, pts)
    labels <- c("feature-space component 1", "feature-space component 2")
  }
  if (is.null(main)) main <- sprintf("Kernel k-means, %d cluster%s", x$k, if (x$k == 1L) "" else "s")
  graphics::plot(coords[, 1], coords[, 2], col = cluster, pch = 20, xlab = labels[1],
                 ylab = labels[2], main = main, ...)
  coords <- unname(as.matrix(coords))
  attr(coords, "cluster") <- cluster
  invisible(coords)
}

# The first two principal components in feature space of the rows of pts:
# kernel PCA on the centred Gram matrix, or PCA of the features.
kkm_feature_components <- function(fit, pts) {
  if (fit$method == "exact") {
    K <- gram_matrix(fit$kernel, pts, nthreads = bochner_threads())
    Kc <- K - rowMeans(K) - rep(colMeans(K), each = nrow(K)) + mean(K)
    e <- eigen((Kc + t(Kc)) / 2, symmetric = TRUE)
    r <- min(2L, ncol(e$vectors))
    coords <- e$vectors[, seq_len(r), drop = FALSE] %*% diag(sqrt(pmax(e$values[seq_len(r)], 0)), r)
  } else {
    Z <- transform_features(fit$map, pts, 1L)
    coords <- stats::prcomp(Z, rank. = 2)$x
  }
  if (ncol(coords) < 2L) coords <- cbind(coords, 0)
  coords[, 1:2, drop = FALSE]
}
