# Case weights: NULL (every row counts once) or one non-negative, finite
# number per row, not all zero.  Weights of exactly 1 everywhere become
# NULL, so that the unweighted code path (and its exact results) is used.
check_case_weights <- function(weights, n, arg = "weights") {
  if (is.null(weights)) return(NULL)
  if (!is.numeric(weights) || !is.null(dim(weights)) && length(dim(weights)) > 1L &&
      ncol(weights) != 1L) {
    stop_arg(arg, "must be a numeric vector with one weight per row of 'x'")
  }
  weights <- as.double(weights)
  if (length(weights) != n) {
    stop_arg(arg, "has length ", length(weights), " but 'x' has ", n, " row(s)")
  }
  if (anyNA(weights)) stop_arg(arg, "contains NA (at position ", which(is.na(weights))[1L], ")")
  if (any(!is.finite(weights)) || any(weights < 0)) {
    stop_arg(arg, "must be non-negative and finite")
  }
  if (!any(weights > 0)) stop_arg(arg, "are all zero")
  if (all(weights == 1)) return(NULL)
  weights
}
