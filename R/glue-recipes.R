# recipes steps that replace numeric columns by kernel features: random
# Fourier features (step_rff) or Nystrom features (step_nystrom).  recipes
# is a suggested package; the prep/bake/tunable methods are registered on
# its generics lazily (S3method(recipes::prep, ...) in NAMESPACE).

#' Random Fourier and Nyström features as recipes steps
#'
#' `step_rff()` replaces the selected numeric columns by `num_features`
#' random Fourier features of a kernel ([random_features()], phase map) and
#' `step_nystrom()` by the features of a Nyström map with `num_features`
#' landmarks ([nystrom_features()]), fitted on the training data when the
#' recipe is prepared.  A linear model on the new columns (logistic
#' regression, `parsnip::linear_reg()`, ...) is then a kernel machine.
#' `num_features` and `sigma` are tunable ([rff_num_features()],
#' [rff_sigma()]).
#'
#' @param recipe A recipe.
#' @param ... Selectors of the columns to map, as in other recipes steps
#'   (e.g. `recipes::all_numeric_predictors()`).
#' @param role Role of the new columns.
#' @param trained Whether the step is trained (set by `prep()`).
#' @param num_features `D` for `step_rff()` (the number of frequencies and of
#'   new columns), the number of landmarks `m` for `step_nystrom()`.
#' @param sigma The kernel's length scale in bochner's convention
#'   ([gaussian_kernel()]: \eqn{\exp(-\|x - y\|^2 / (2\sigma^2))}{exp(-||x -
#'   y||^2 / (2 sigma^2))}), or `"median"` for the median heuristic on the
#'   training data.
#' @param kernel `"gaussian"`, `"laplace"`, `"cauchy"` or `"matern"` (with
#'   `nu = 1.5`), the kernel of the map.
#' @param sampling For `step_rff()`, how frequencies are drawn (see
#'   [random_features()]).
#' @param landmarks For `step_nystrom()`, how landmarks are chosen (see
#'   [nystrom_features()]).
#' @param seed The seed of the map's draws, so that `prep()` is reproducible.
#' @param prefix Prefix of the new columns' names (followed by 1, 2, ...).
#' @param keep_original_cols Keep the selected columns besides the features.
#' @param map The fitted map (set by `prep()`).
#' @param columns The selected columns (set by `prep()`).
#' @param skip,id As in other recipes steps.
#' @return The recipe with the step added.
#' @examples
#' if (requireNamespace("recipes", quietly = TRUE)) {
#'   rec <- recipes::recipe(Species ~ ., data = iris)
#'   rec <- recipes::step_normalize(rec, recipes::all_numeric_predictors())
#'   rec <- step_rff(rec, recipes::all_numeric_predictors(), num_features = 20, seed = 1)
#'   baked <- recipes::bake(recipes::prep(rec), new_data = NULL)
#'   dim(baked)
#'   rec2 <- step_nystrom(recipes::recipe(Species ~ ., data = iris),
#'                        recipes::all_numeric_predictors(), num_features = 10, seed = 1)
#'   head(recipes::bake(recipes::prep(rec2), new_data = iris[1:3, ]))
#' }
#' @export
step_rff <- function(recipe, ..., role = "predictor", trained = FALSE, num_features = 256,
                     sigma = "median", kernel = "gaussian",
                     sampling = c("iid", "orthogonal", "qmc"),
                     seed = sample.int(10^5, 1), prefix = "rff_", keep_original_cols = FALSE,
                     map = NULL, columns = NULL, skip = FALSE, id = NULL) {
  check_step_args(recipe, num_features, sigma, kernel, seed, prefix, keep_original_cols)
  sampling <- check_choice(sampling, c("iid", "orthogonal", "qmc"), "sampling")
  need_package("recipes", "step_rff()")
  recipes::add_step(recipe, recipes::step(
    subclass = "rff", terms = rlang::enquos(...), role = role, trained = trained,
    num_features = num_features, sigma = sigma, kernel = kernel, sampling = sampling,
    seed = seed, prefix = prefix, keep_original_cols = keep_original_cols, map = map,
    columns = columns, skip = skip, id = if (is.null(id)) recipes::rand_id("rff") else id))
}

#' @rdname step_rff
#' @export
step_nystrom <- function(recipe, ..., role = "predictor", trained = FALSE, num_features = 100,
                         sigma = "median", kernel = "gaussian",
                         landmarks = c("uniform", "kmeans", "leverage", "rpcholesky"),
                         seed = sample.int(10^5, 1), prefix = "nystrom_",
                         keep_original_cols = FALSE, map = NULL, columns = NULL,
                         skip = FALSE, id = NULL) {
  check_step_args(recipe, num_features, sigma, kernel, seed, prefix, keep_original_cols)
  landmarks <- check_choice(landmarks, landmark_rules, "landmarks")
  need_package("recipes", "step_nystrom()")
  recipes::add_step(recipe, recipes::step(
    subclass = "nystrom", terms = rlang::enquos(...), role = role, trained = trained,
    num_features = num_features, sigma = sigma, kernel = kernel, landmarks = landmarks,
    seed = seed, prefix = prefix, keep_original_cols = keep_original_cols, map = map,
    columns = columns, skip = skip,
    id = if (is.null(id)) recipes::rand_id("nystrom") else id))
}

# The settings of a step, checked when it is added (a tune() placeholder
# passes: it is checked when the tuned value arrives at prep()).
check_step_args <- function(recipe, num_features, sigma, kernel, seed, prefix,
                            keep_original_cols) {
  if (!inherits(recipe, "recipe")) stop_arg("recipe", "must be a recipe from recipes::recipe()")
  placeholder <- function(v) is.call(v)
  if (!placeholder(num_features)) check_count(num_features, "num_features")
  if (!placeholder(sigma) && !identical(sigma, "median")) {
    if (is.character(sigma)) stop_arg("sigma", "must be a positive number or \"median\"")
    check_positive(sigma, "sigma")
  }
  check_choice(kernel, c("gaussian", "laplace", "cauchy", "matern"), "kernel")
  if (!is.null(seed)) check_count(seed, "seed", lower = -.Machine$integer.max)
  if (!is.character(prefix) || length(prefix) != 1L || is.na(prefix)) {
    stop_arg("prefix", "must be a single string")
  }
  check_flag(keep_original_cols, "keep_original_cols")
  invisible(NULL)
}

# The kernel object of a step's settings.
step_kernel <- function(kernel, sigma) {
  kernel <- check_choice(kernel, c("gaussian", "laplace", "cauchy", "matern"), "kernel")
  switch(kernel, gaussian = gaussian_kernel(sigma), laplace = laplace_kernel(sigma),
         cauchy = cauchy_kernel(sigma), matern = matern_kernel(sigma, nu = 1.5))
}

step_columns <- function(x, training, info) {
  cols <- recipes::recipes_eval_select(x$terms, training, info)
  if (length(cols) == 0L) stop("step_", class(x)[1L], ": no columns were selected", call. = FALSE)
  cols
}

#' @exportS3Method recipes::prep
prep.step_rff <- function(x, training, info = NULL, ...) {
  cols <- step_columns(x, training, info)
  data <- as_data_matrix(as.data.frame(training[, cols, drop = FALSE]), "training data")
  kernel <- step_kernel(x$kernel, x$sigma)
  D <- check_count(x$num_features, "num_features")
  o <- feature_map_options(sampling = x$sampling)
  x$map <- with_seed(x$seed, draw_feature_map(data, resolve_kernel(kernel, data), D,
                                              sampling = o$sampling))
  x$columns <- cols
  x$trained <- TRUE
  x
}

#' @exportS3Method recipes::prep
prep.step_nystrom <- function(x, training, info = NULL, ...) {
  cols <- step_columns(x, training, info)
  data <- as_data_matrix(as.data.frame(training[, cols, drop = FALSE]), "training data")
  m <- min(check_count(x$num_features, "num_features"), nrow(data))
  kernel <- step_kernel(x$kernel, x$sigma)
  o <- nystrom_options(landmarks = x$landmarks)
  nystrom_check_data(data, kernel, m, o$landmarks, "num_features")
  x$map <- with_seed(x$seed, draw_nystrom_map(data, resolve_kernel(kernel, data), m,
                                              o$landmarks, nthreads = bochner_threads()))
  x$columns <- cols
  x$trained <- TRUE
  x
}

# bake: the map's features as new columns, the mapped columns dropped
# unless kept.
bake_kernel_step <- function(object, new_data) {
  cols <- object$columns
  missing_cols <- setdiff(cols, names(new_data))
  if (length(missing_cols) > 0L) {
    stop("the new data lack column(s) the step was prepared on: ",
         paste(missing_cols, collapse = ", "), call. = FALSE)
  }
  Z <- stats::predict(object$map, as.data.frame(new_data[, cols, drop = FALSE]))
  colnames(Z) <- paste0(object$prefix, seq_len(ncol(Z)))
  rownames(Z) <- NULL
  keep <- if (isTRUE(object$keep_original_cols)) names(new_data)
          else setdiff(names(new_data), cols)
  tibble::as_tibble(cbind(as.data.frame(new_data)[, keep, drop = FALSE], as.data.frame(Z)))
}

#' @exportS3Method recipes::bake
bake.step_rff <- function(object, new_data, ...) bake_kernel_step(object, new_data)

#' @exportS3Method recipes::bake
bake.step_nystrom <- function(object, new_data, ...) bake_kernel_step(object, new_data)

#' @export
print.step_rff <- function(x, width = max(20, options()$width - 30), ...) {
  cat(sprintf("Random Fourier features (D = %s) from ", format(x$num_features)))
  cat(if (isTRUE(x$trained)) paste(x$columns, collapse = ", ") else "selected columns", "\n")
  invisible(x)
}

#' @export
print.step_nystrom <- function(x, width = max(20, options()$width - 30), ...) {
  cat(sprintf("Nystrom features (m = %s) from ", format(x$num_features)))
  cat(if (isTRUE(x$trained)) paste(x$columns, collapse = ", ") else "selected columns", "\n")
  invisible(x)
}

kernel_step_tunable <- function(x) {
  tibble::tibble(name = c("num_features", "sigma"),
                 call_info = list(list(pkg = "bochner", fun = "rff_num_features"),
                                  list(pkg = "bochner", fun = "rff_sigma")),
                 source = "recipe", component = class(x)[1L], component_id = x$id)
}

#' @exportS3Method generics::tunable
tunable.step_rff <- function(x, ...) kernel_step_tunable(x)

#' @exportS3Method generics::tunable
tunable.step_nystrom <- function(x, ...) kernel_step_tunable(x)

#' @exportS3Method generics::required_pkgs
required_pkgs.step_rff <- function(x, ...) "bochner"

#' @exportS3Method generics::required_pkgs
required_pkgs.step_nystrom <- function(x, ...) "bochner"

#' @exportS3Method generics::tidy
tidy.step_rff <- function(x, ...) kernel_step_tidy(x)

#' @exportS3Method generics::tidy
tidy.step_nystrom <- function(x, ...) kernel_step_tidy(x)

kernel_step_tidy <- function(x) {
  terms <- if (isTRUE(x$trained)) x$columns else vapply(x$terms, rlang::as_label, "")
  tibble::tibble(terms = unname(terms), id = x$id)
}
