# Table-driven bad input: every exported function, every argument.
#
# Each case is list(fn, args, arg): calling fn with args must give an R error
# whose message names 'arg' (quoted, as stop_arg() writes it).  None may
# crash, return silently or warn instead.
#
# The table is built from `specs`: for each function, a set of valid
# arguments and, per argument, the family of bad values to try (see `bad`).
# To cover a new function (rff_svm(), rff_ridge(), ...) add one spec:
#   spec("rff_ridge", list(x = X, y = Y, kernel = K1, D = 10, lambda = 1),
#        x = "data", y = "response", D = "count", lambda = "positive", ...)
# or append hand-written rows to `extra_cases`.

X <- matrix(c(0.1, 0.5, 0.9, 0.3, 0.2, 0.8, 0.4, 0.7, 0.6, 0.05, 0.95, 0.15), 6, 2,
            dimnames = list(NULL, c("a", "b")))
K1 <- gaussian_kernel(1)
YC <- factor(c("u", "v", "u", "v", "u", "v"))
YN <- c(0.3, 1.2, -0.4, 0.8, 2.1, 0.5)

# Families of bad values.  Each is a named list, so a failure says which one.
bad_numbers <- list(`NA` = NA, NA_real = NA_real_, `NaN` = NaN, `Inf` = Inf, minus_Inf = -Inf,
                    character = "1", list = list(1), factor = factor(1),
                    length_2 = c(1, 2), length_0 = numeric(0), NULL_value = NULL,
                    logical = TRUE, complex = 1i)
bad <- list(
  # whole numbers >= 1 (sizes, counts)
  count = c(bad_numbers, list(zero = 0, negative = -3, fraction = 1.5, huge = 1e12)),
  # whole numbers >= 0 (degrees)
  count0 = c(bad_numbers, list(negative = -3, fraction = 1.5, huge = 1e12)),
  # positive real numbers
  positive = c(bad_numbers, list(zero = 0, negative = -1)),
  # non-negative real numbers
  nonnegative = c(bad_numbers, list(negative = -1)),
  # probabilities in (0, 1)
  probability = c(bad_numbers, list(zero = 0, one = 1, negative = -0.5, above = 1.5)),
  # data matrices (with the columns of X)
  data = list(`NA` = replace(X, 3, NA), `NaN` = replace(X, 4, NaN), `Inf` = replace(X, 5, Inf),
              minus_Inf = replace(X, 2, -Inf), character = matrix(as.character(X), 6),
              list = as.list(X), factor = factor(X), zero_rows = X[0, , drop = FALSE],
              zero_cols = X[, 0, drop = FALSE],
              df_character = data.frame(a = letters[1:6], b = X[, 2]),
              complex = X + 0i),
  # required data: the data family plus NULL
  data_required = list(NULL_value = NULL, `NA` = replace(X, 3, NA),
                       character = matrix(as.character(X), 6), zero_rows = X[0, , drop = FALSE]),
  # a second data matrix that must match the first's width
  data2 = list(`NA` = replace(X, 3, NA), `Inf` = replace(X, 5, Inf), character = matrix("a", 6, 2),
               list = list(1, 2), factor = factor(1:2), zero_rows = X[0, , drop = FALSE],
               zero_cols = X[, 0, drop = FALSE], wrong_width = cbind(X, X)),
  # new data for a model fitted on X: the data family plus the wrong width
  newdata = list(`NA` = replace(X, 3, NA), `NaN` = replace(X, 4, NaN), `Inf` = replace(X, 5, Inf),
                 character = matrix(as.character(X), 6), list = list(1, 2),
                 factor = factor(1:2), zero_rows = X[0, , drop = FALSE],
                 zero_cols = X[, 0, drop = FALSE], NULL_value = NULL,
                 wrong_width = cbind(X, X), wrong_names = `colnames<-`(X, c("p", "q"))),
  # new data for a machine fitted on X: rows with NA give NA predictions
  # (na.action = na.pass), zero rows an empty result and NULL the fitted
  # values, so those are not errors there
  newdata_model = list(`Inf` = replace(X, 5, Inf), character = matrix(as.character(X), 6),
                       list = list(1, 2), factor = factor(1:2), zero_cols = X[, 0, drop = FALSE],
                       wrong_width = cbind(X, X), wrong_names = `colnames<-`(X, c("p", "q")),
                       one_column = X[, 1, drop = FALSE]),
  na_action = list(number = 1, unknown_name = "no_such_na_action", NULL_value = NULL,
                   `NA` = NA, list = list(na.omit)),
  kernel = list(character = "gaussian", list = list(name = "gaussian", sigma = 1),
                number = 1, NULL_value = NULL, `NA` = NA, `function` = gaussian_kernel),
  # arguments that take one of a few strings
  choice = list(`NA` = NA_character_, unknown = "nonsense", number = 1, length_2 = c("a", "b"),
                list = list("exact"), factor = factor("x"), empty = character(0)),
  # case weights for the 6 rows of X
  case_weights = list(`NA` = c(1, NA, 1, 1, 1, 1), `NaN` = c(1, 1, NaN, 1, 1, 1),
                      `Inf` = c(Inf, 1, 1, 1, 1, 1), negative = c(1, -1, 1, 1, 1, 1),
                      all_zero = rep(0, 6), wrong_length = c(1, 2), character = rep("1", 6),
                      list = as.list(rep(1, 6)), matrix = matrix(1, 6, 2)),
  kernel_or_null = list(character = "gaussian", list = list(name = "gaussian", sigma = 1),
                        number = 1, `NA` = NA, `function` = gaussian_kernel),
  # grids of positive numbers (rff_tune)
  grid = c(bad_numbers[setdiff(names(bad_numbers), "length_2")],
           list(zero = 0, negative = -1, with_zero = c(1, 0))),
  grid_or_null = c(bad_numbers[setdiff(names(bad_numbers), c("length_2", "NULL_value"))],
                   list(zero = 0, negative = -1)),
  # lambda: "auto", or positive numbers
  lambda = c(bad_numbers[setdiff(names(bad_numbers), "length_2")],
             list(zero = 0, negative = -1, path_with_zero = c(1, 0), word = "gcv")),
  # seed: NULL or a whole number
  seed = list(`NA` = NA, `NaN` = NaN, `Inf` = Inf, character = "1", list = list(1),
              length_2 = c(1, 2), fraction = 1.5),
  # sigma: a positive number or "median"
  sigma = list(`NA` = NA, `NaN` = NaN, `Inf` = Inf, minus_Inf = -Inf, character = "mean",
               list = list(1), factor = factor(1), length_2 = c(1, 2), zero = 0,
               negative = -1, NULL_value = NULL, empty = numeric(0)),
  # the kernel constructors' sigma and gamma: one positive number, or one
  # per input column (ARD), each positive and finite
  ard_sigma = list(`NA` = NA, `NaN` = NaN, `Inf` = Inf, minus_Inf = -Inf, character = "mean",
                   list = list(1), factor = factor(1), zero = 0, negative = -1,
                   NULL_value = NULL, empty = numeric(0), vector_negative = c(1, -2),
                   vector_NA = c(1, NA), vector_Inf = c(2, Inf)),
  # a fitted object of the wrong kind
  object = list(list = list(), number = 1, NULL_value = NULL, kernel = K1),
  # coefficient vectors
  coef = list(`NA` = c(1, NA), `NaN` = c(1, NaN), `Inf` = c(1, Inf), character = c("1", "2"),
              list = list(1, 2), factor = factor(1:2), negative = c(1, -1),
              zero = c(0, 0), empty = numeric(0)),
  # initial assignments or cluster counts for kernel_kmeans (6 rows)
  centers = list(`NA` = NA, `NaN` = NaN, `Inf` = Inf, character = "2", list = list(2),
                 zero = 0, negative = -1, fraction = 1.5, too_many = 7,
                 wrong_length = c(1, 2, 1), NA_in_assignment = c(1, 2, NA, 1, 2, 1),
                 fraction_in_assignment = c(1, 2, 1.5, 1, 2, 1),
                 matrix = X, factor_wrong_length = factor(c("u", "v"))),
  # the min kernel needs non-negative data
  negative_data = list(negative = replace(X, 1, -1)),
  # TRUE or FALSE
  flag = list(`NA` = NA, character = "yes", number = 1, length_2 = c(TRUE, FALSE),
              NULL_value = NULL, list = list(TRUE), empty = logical(0)),
  # class labels for the 6 rows of X
  labels = list(`NA` = replace(YC, 2, NA), one_class = factor(rep("u", 6)),
                wrong_length = YC[1:5], NULL_value = NULL, list = as.list(YC),
                matrix = matrix(1:6, 3), fraction = c(1, 2, 1.5, 1, 2, 1),
                complex = rep(1i, 6)),
  # a numeric response (or labels) for the 6 rows of X
  response = list(`NA` = replace(YN, 2, NA), `NaN` = replace(YN, 2, NaN),
                  `Inf` = replace(YN, 3, Inf), wrong_length = YN[1:5], NULL_value = NULL,
                  list = as.list(YN), matrix = matrix(1:6, 3), one_class = factor(rep("u", 6)),
                  complex = rep(1i, 6)),
  # class weights for the classes of YC
  class_weights = list(unnamed = c(1, 2), `NA` = c(u = NA, v = 1), negative = c(u = -1, v = 1),
                       zero = c(u = 0, v = 1), unknown_class = c(w = 1), character = c(u = "1"),
                       duplicated = c(u = 1, u = 2), `Inf` = c(u = Inf))
)

# gamma, the inverse width of the shift-invariant kernels: as sigma (one or
# one per input), and NULL is its default (sigma is used)
bad$gamma <- bad$ard_sigma[names(bad$ard_sigma) != "NULL_value"]
# ranges of dials parameters, and their scales transformations
bad$range <- list(`NA` = c(1, NA), `Inf` = c(1, Inf), character = c("1", "2"),
                  list = list(1, 2), reversed = c(2, 1), length_1 = 1, empty = numeric(0))
bad$trans <- list(list = list(), number = 1, character = "log2", kernel = K1)
# positive numbers where NULL means "the default"
bad$positive_or_null <- bad$positive[names(bad$positive) != "NULL_value"]
# counts where NULL means "the rule" (rff_svm(D), rff_gp(D), numbers of centres)
bad$count_or_null <- bad$count[names(bad$count) != "NULL_value"]

# falkon()'s centres: a count up to nrow(x) or a matrix of centres (NULL is
# the default), and its control list
bad$falkon_centers <- c(bad$count[names(bad$count) != "NULL_value"],
                        list(too_many = 7, wrong_width = cbind(X, X),
                             NA_matrix = replace(X, 2, NA)))
bad$falkon_control <- list(number = 1, unknown = list(bogus = 1), unnamed = list(1),
                           bad_value = list(max_iter = 0), bad_lambdas = list(lambdas = -1))

case <- function(fn, args, arg, what) list(fn = fn, args = args, arg = arg, what = what)

# All cases for one function: each argument named in ... replaced by each
# value of its family, the others valid.
spec <- function(fn, valid, ...) {
  families <- list(...)
  out <- list()
  for (arg in names(families)) {
    fam <- bad[[families[[arg]]]]
    for (what in names(fam)) {
      args <- valid
      if (is.null(fam[[what]])) args[arg] <- list(NULL) else args[[arg]] <- fam[[what]]
      out[[length(out) + 1L]] <- case(fn, args, arg, paste(families[[arg]], what))
    }
  }
  out
}

# cases of a family that are valid for one function (NULL is kernel_kmeans'
# default kernel and plot()'s default data)
without <- function(cases, what) Filter(function(cc) cc$what != what, cases)

set.seed(1)
fit_map <- random_features(X, K1, D = 8)
fit_map_nystrom <- nystrom_features(X, K1, m = 3, seed = 1)
fit_km_exact <- kernel_kmeans(X, 2, K1, seed = 1)
fit_km_rff <- kernel_kmeans(X, 2, K1, method = "rff", D = 8, seed = 1)

fit_svm <- rff_svm(X, YC, K1, D = 8, seed = 1)
fit_ridge <- rff_ridge(X, YN, K1, D = 8, seed = 1)
fit_ridge_class <- rff_ridge(X, YC, K1, D = 8, seed = 1)
fit_falkon <- falkon(X, YN, K1, m = 3, lambda = 1e-3, iter = 5, seed = 1)
fit_falkon_class <- falkon(X, YC, K1, m = 3, lambda = 1e-3, iter = 5, seed = 1,
                           loss = "logistic")

specs <- c(
  spec("falkon", list(x = X, y = YN, kernel = K1, m = 3, lambda = 1e-3, loss = "squared",
                      landmarks = "uniform", iter = 5, weights = rep(1, 6), scale = TRUE,
                      seed = 1, control = list(), tune = "none", nthreads = 1),
       x = "data", y = "response", kernel = "kernel", m = "falkon_centers",
       lambda = "lambda", loss = "choice", landmarks = "choice", iter = "count",
       weights = "case_weights", scale = "flag", seed = "seed", control = "falkon_control",
       tune = "choice",
       nthreads = "count"),
  spec("falkon", list(x = X, y = YC, kernel = K1, m = 3, loss = "logistic", iter = 5),
       y = "labels"),
  spec("falkon", list(x = X, y = YN, kernel = K1), x = "data_required"),
  spec("predict.falkon", list(object = fit_falkon, newdata = X, type = "response", nthreads = 1),
       newdata = "newdata_model", type = "choice", nthreads = "count"),
  spec("predict.falkon", list(object = fit_falkon_class, newdata = X, type = "prob"),
       newdata = "newdata_model"),
  spec("predict.falkon", list(object = fit_falkon, newdata = replace(X, 3, NA),
                              na.action = stats::na.pass),
       na.action = "na_action"),
  spec("falkon_control", list(lambdas = 1e-3, max_iter = 5, patience = 2, validation = 0.2,
                              max_validation = 100, newton_steps = 1, tol = 1e-8,
                              block_rows = 0, start_centers = 10, grow_gain = 0.1),
       lambdas = "grid", max_iter = "count", patience = "count", validation = "probability",
       max_validation = "count", newton_steps = "count0", tol = "nonnegative",
       block_rows = "count0", start_centers = "count", grow_gain = "probability"),
  spec("falkon_default_centers", list(n = 100), n = "count"),
  spec("rff_svm", list(x = X, y = YC, kernel = K1, D = 8, cost = 1, loss = "hinge",
                       multiclass = "ovo", probability = FALSE, weights = rep(1, 6),
                       scale = TRUE, class.weights = c(u = 1, v = 2), tol = 0.1,
                       max_iter = 100, shrinking = TRUE, seed = 1, nthreads = 1),
       x = "data", y = "labels", kernel = "kernel", D = "count_or_null", cost = "positive",
       loss = "choice", multiclass = "choice", probability = "flag", weights = "case_weights",
       scale = "flag", class.weights = "class_weights",
       tol = "positive", max_iter = "count", shrinking = "flag", seed = "seed",
       nthreads = "count"),
  spec("rff_svm", list(x = X, y = YC, kernel = K1), x = "data_required"),
  spec("predict.rff_svm", list(object = fit_svm, newdata = X, type = "class", nthreads = 1),
       newdata = "newdata_model", type = "choice", nthreads = "count"),
  spec("predict.rff_svm", list(object = fit_svm, newdata = replace(X, 3, NA), type = "class",
                               na.action = stats::na.pass),
       na.action = "na_action"),
  spec("rff_ridge", list(x = X, y = YN, kernel = K1, D = 8, lambda = 1, criterion = "gcv",
                         weights = rep(1, 6), scale = TRUE, seed = 1, nthreads = 1),
       x = "data", y = "response", kernel = "kernel", D = "count", lambda = "lambda",
       criterion = "choice", weights = "case_weights",
       scale = "flag", seed = "seed", nthreads = "count"),
  spec("rff_ridge", list(x = X, y = YN, kernel = K1), x = "data_required"),
  spec("rff_tune", list(x = X, y = YC, method = "svm", kernel = K1, D = 8, sigma = 1, cost = 1,
                        folds = 2, scale = TRUE, seed = 1, nthreads = 1),
       x = "data", y = "labels", method = "choice", kernel = "kernel_or_null", D = "grid_or_null",
       sigma = "grid_or_null", cost = "grid", folds = "count", scale = "flag", seed = "seed",
       nthreads = "count"),
  spec("predict.rff_ridge", list(object = fit_ridge, newdata = X, type = "response",
                                 nthreads = 1),
       newdata = "newdata_model", type = "choice", nthreads = "count"),
  spec("predict.rff_ridge", list(object = fit_ridge_class, newdata = X, type = "class",
                                 nthreads = 1),
       newdata = "newdata_model", nthreads = "count"),
  spec("predict.rff_ridge", list(object = fit_ridge, newdata = replace(X, 3, NA),
                                 na.action = stats::na.pass),
       na.action = "na_action"),
  spec("gaussian_kernel", list(sigma = 1), sigma = "ard_sigma"),
  spec("laplace_kernel", list(sigma = 1), sigma = "ard_sigma"),
  spec("cauchy_kernel", list(sigma = 1), sigma = "ard_sigma"),
  spec("gaussian_kernel", list(gamma = 1), gamma = "gamma"),
  spec("laplace_kernel", list(gamma = 1), gamma = "gamma"),
  spec("cauchy_kernel", list(gamma = 1), gamma = "gamma"),
  spec("matern_kernel", list(sigma = 1, nu = 1.5), sigma = "ard_sigma", nu = "positive"),
  spec("exponential_dot_kernel", list(sigma = 1), sigma = "positive"),
  spec("min_kernel", list(offset = 1), offset = "nonnegative"),
  spec("polynomial_kernel", list(degree = 2, scale = 1, offset = 1),
       degree = "count0", scale = "positive", offset = "nonnegative"),
  spec("polynomial_kernel", list(coef = c(1, 2)), coef = "coef"),
  spec("kernel_matrix", list(kernel = K1, x = X, y = X, nthreads = 1),
       kernel = "kernel", x = "data", y = "data2", nthreads = "count"),
  spec("kernel_matrix", list(kernel = K1, x = X), x = "data_required"),
  spec("kernel_matrix", list(kernel = min_kernel(), x = X), x = "negative_data"),
  spec("kernel_matrix", list(kernel = min_kernel(), x = X, y = X), y = "negative_data"),
  spec("spectral_sample", list(kernel = K1, n = 5, d = 2),
       kernel = "kernel", n = "count", d = "count"),
  spec("random_features", list(x = X, kernel = K1, D = 8, type = "phase", seed = 1),
       x = "data", kernel = "kernel", D = "count", type = "choice", seed = "seed",
       sampling = "choice"),
  spec("random_features", list(x = X, kernel = K1, D = 8, sampling = "orthogonal", seed = 1),
       x = "data", kernel = "kernel", D = "count", type = "choice"),
  spec("random_features", list(x = X, kernel = K1, D = 8, sampling = "qmc", seed = 1),
       x = "data", kernel = "kernel", D = "count", type = "choice"),
  spec("random_features", list(x = X, kernel = K1, D = 8, sampling = "structured", seed = 1),
       x = "data", kernel = "kernel", D = "count", type = "choice"),
  spec("random_features", list(x = X, kernel = K1, D = 8), x = "data_required"),
  spec("random_features", list(x = X, kernel = polynomial_kernel(2), D = 8),
       method = "choice", projection = "choice"),
  spec("random_features", list(x = X, kernel = min_kernel(), D = 8), x = "negative_data"),
  spec("nystrom_features", list(x = X, kernel = K1, m = 3, landmarks = "uniform", seed = 1,
                                tol = 1e-10, nthreads = 1),
       x = "data", kernel = "kernel", m = "count", landmarks = "choice", seed = "seed",
       tol = "nonnegative", nthreads = "count"),
  spec("nystrom_features", list(x = X, kernel = K1, m = 3), x = "data_required"),
  spec("nystrom_features", list(x = X, kernel = min_kernel(), m = 3), x = "negative_data"),
  spec("predict.random_features", list(object = fit_map_nystrom, newdata = X, nthreads = 1),
       newdata = "newdata", nthreads = "count"),
  spec("predict.random_features", list(object = fit_map, newdata = X, nthreads = 1),
       newdata = "newdata", nthreads = "count"),
  spec("kernel_approx_error", list(map = fit_map, x = X, nthreads = 1),
       map = "object", x = "newdata", nthreads = "count"),
  spec("rff_dimension", list(eps = 0.1, delta = 0.05, kernel = K1, d = 2, diameter = 1),
       eps = "probability", delta = "probability", kernel = "kernel", d = "count",
       diameter = "positive"),
  spec("rff_dimension", list(eps = 0.1, kernel = K1, x = X), x = "data"),
  without(spec("kernel_kmeans", list(x = X, centers = 2, kernel = K1, method = "exact", D = 8,
                                     nstart = 1, max_iter = 10, seed = 1, nthreads = 1),
               x = "data", centers = "centers", kernel = "kernel", method = "choice",
               nstart = "count", max_iter = "count", seed = "seed", nthreads = "count"),
          "kernel NULL_value"),
  spec("kernel_kmeans", list(x = X, centers = 2, kernel = K1), x = "data_required"),
  spec("kernel_kmeans", list(x = X, centers = 2, kernel = K1, method = "rff", D = 8),
       D = "count", algorithm = "choice"),
  spec("kernel_kmeans", list(x = X, centers = 2, kernel = K1, method = "nystrom", m = 3),
       m = "count_or_null"),
  without(spec("kernel_kmeans", list(x = X, centers = 2, kernel = K1, method = "rff", D = 8,
                                     batch = 4), batch = "count", seeding = "choice"),
          "count NULL_value"),
  without(spec("plot.kernel_kmeans", list(x = fit_km_exact, data = X), data = "newdata",
               max_points = "count"), "newdata NULL_value"),
  spec("predict.kernel_kmeans", list(object = fit_km_exact, newdata = X, nthreads = 1),
       newdata = "newdata", type = "choice", nthreads = "count"),
  spec("predict.kernel_kmeans", list(object = fit_km_rff, newdata = X, nthreads = 1),
       newdata = "newdata", nthreads = "count"),
  spec("fitted.kernel_kmeans", list(object = fit_km_exact), method = "choice"),
  spec("bochner_parsnip_fit", list(x = X, y = YC, cost = 1, rbf_sigma = 1, num_features = 8,
                                   mode = "classification", seed = 1),
       x = "data", y = "labels", cost = "positive_or_null", rbf_sigma = "positive_or_null",
       num_features = "count_or_null", mode = "choice", seed = "seed"),
  spec("bochner_parsnip_fit", list(x = X, y = YN, num_features = 8, mode = "regression"),
       y = "response", cost = "positive_or_null"),
  spec("rff_num_features", list(range = c(6, 11)), range = "range", trans = "trans"),
  spec("rff_sigma", list(range = c(-1, 2)), range = "range", trans = "trans"),
  spec("step_rff", list(recipe = structure(list(), class = "recipe"), num_features = 8,
                        sigma = 1, kernel = "gaussian", sampling = "iid", seed = 1,
                        prefix = "r", keep_original_cols = FALSE),
       recipe = "object", num_features = "count", sigma = "sigma", kernel = "choice",
       sampling = "choice", seed = "seed", keep_original_cols = "flag"),
  spec("step_nystrom", list(recipe = structure(list(), class = "recipe"), num_features = 8,
                            sigma = 1, kernel = "gaussian", landmarks = "uniform", seed = 1,
                            prefix = "r", keep_original_cols = FALSE),
       recipe = "object", num_features = "count", sigma = "sigma", kernel = "choice",
       landmarks = "choice", seed = "seed", keep_original_cols = "flag")
)

big <- matrix(0.5, 1e5, 1)   # 0.8 MB of data, but the results below are huge
# the kernel statistics (R/mmd.R, R/hsic.R, R/kernel-pca.R, R/kernel-cca.R)
fit_kpca <- kernel_pca(X, K1, rank = 1, D = 8, seed = 1)
fit_kcca <- kernel_cca(X, YN, K1, K1, rank = 1, D = 8, seed = 1)
specs <- c(specs,
  spec("mmd_test", list(x = X, y = X + 0.1, kernel = K1, method = "rff", D = 8,
                        null = "permutation", B = 10, seed = 1, nthreads = 1),
       x = "data", y = "data2", kernel = "kernel_or_null", method = "choice", D = "count",
       null = "choice", B = "count", seed = "seed", nthreads = "count"),
  spec("hsic_test", list(x = X, y = YN, kernel_x = K1, kernel_y = K1, method = "rff", D = 8,
                         null = "permutation", B = 10, seed = 1, nthreads = 1),
       x = "data", y = "response", kernel_x = "kernel_or_null", kernel_y = "kernel_or_null",
       method = "choice", D = "count", null = "choice", B = "count", seed = "seed",
       nthreads = "count"),
  spec("kernel_pca", list(x = X, kernel = K1, rank = 1, method = "rff", D = 8, retx = TRUE,
                          seed = 1, nthreads = 1),
       x = "data", kernel = "kernel_or_null", rank = "count", method = "choice", D = "count",
       retx = "flag", seed = "seed", nthreads = "count"),
  spec("predict.kernel_pca", list(object = fit_kpca, newdata = X, nthreads = 1),
       newdata = "newdata_model", nthreads = "count"),
  spec("kernel_cca", list(x = X, y = YN, kernel_x = K1, kernel_y = K1, rank = 1, lambda = 0.1,
                          method = "rff", D = 8, seed = 1, nthreads = 1),
       x = "data", y = "response", kernel_x = "kernel_or_null", kernel_y = "kernel_or_null",
       rank = "count", lambda = "nonnegative", method = "choice", D = "count", seed = "seed",
       nthreads = "count"),
  spec("predict.kernel_cca", list(object = fit_kcca, newdata = X, newdata_y = YN, nthreads = 1),
       newdata = "newdata_model", nthreads = "count"))

# Gaussian processes (R/gp.R, R/spectral-mixture.R) and falkon's tidymodels
# entry points (R/falkon-tidymodels.R)
bad$flag_or_null <- bad$flag[names(bad$flag) != "NULL_value"]   # rff_gp(ard = NULL): the rule
fit_gp <- rff_gp(X, YN, K1, D = 8, optimize = FALSE, signal = 1, noise = 0.1, seed = 1)
specs <- c(specs,
  spec("rff_gp", list(x = X, y = YN, kernel = K1, D = 8, ard = FALSE, optimize = FALSE,
                      method = "rff", signal = 1, noise = 0.1, scale = TRUE, seed = 1,
                      nthreads = 1),
       x = "data", kernel = "kernel", D = "count_or_null", ard = "flag_or_null", optimize = "flag",
       method = "choice", signal = "positive_or_null", noise = "positive_or_null",
       scale = "flag", seed = "seed", nthreads = "count", weights = "case_weights",
       sampling = "choice", mean = "choice", laplace = "flag"),
  spec("rff_gp", list(x = X, y = YN, kernel = K1), x = "data_required"),
  spec("predict.rff_gp", list(object = fit_gp, newdata = X), newdata = "newdata_model"),
  spec("spectral_mixture_kernel", list(q = 2), q = "count"),
  spec("falkon_parsnip_fit", list(x = X, y = YN, cost = 1, rbf_sigma = 0.5, num_centers = 3,
                                  mode = "regression"),
       x = "data", cost = "positive_or_null", rbf_sigma = "positive_or_null",
       num_centers = "count_or_null", mode = "choice"),
  spec("falkon_num_centers", list(range = c(6, 11)), range = "range", trans = "trans"))

extra_cases <- list(
  # the mlr3 learners' tuning ranges: a learner of bochner, or its id
  case("bochner_search_space", list(learner = "classif.rpart"), "learner", "unknown learner"),
  case("bochner_search_space", list(learner = 1), "learner", "not a learner"),
  # sizes too large to allocate: refused before allocating, saying how much
  case("predict.random_features",
       list(object = random_features(big[1:10, , drop = FALSE], K1, D = 1e5, seed = 1),
            newdata = big), "newdata", "feature matrix beyond memory"),
  case("kernel_matrix", list(kernel = K1, x = matrix(0, 2e6, 1)), "x", "Gram matrix beyond memory"),
  case("kernel_matrix", list(kernel = K1, x = big, y = matrix(0, 2e5, 1)), "y",
       "kernel matrix beyond memory"),
  case("spectral_sample", list(kernel = K1, n = 2e9, d = 4), "n", "frequencies beyond memory"),
  case("random_features", list(x = matrix(0, 2, 5000), kernel = K1, D = 2e9), "D",
       "frequency matrix beyond memory"),
  case("random_features", list(x = matrix(0, 2, 1), kernel = K1, D = 2^31), "D",
       "D beyond the integer range"),
  case("kernel_kmeans", list(x = matrix(rnorm(4e5), 2e5), centers = 2, kernel = K1), "x",
       "Gram matrix of kernel k-means beyond memory"),
  case("kernel_kmeans", list(x = big, centers = 2, kernel = K1, method = "rff", D = 2e5),
       "D", "rff features of kernel k-means beyond memory"),
  # arguments that only make sense together
  case("random_features", list(x = X, kernel = K1, D = 8, method = "product"), "method",
       "method for a Fourier kernel"),
  case("random_features", list(x = X, kernel = min_kernel(), D = 8, type = "pair"), "type",
       "pair map for the min kernel"),
  case("random_features", list(x = X, kernel = K1, D = 8, foo = 1), "foo", "unknown option"),
  case("nystrom_features", list(x = X, kernel = K1, m = 7), "m", "more landmarks than rows"),
  case("nystrom_features", list(x = X, kernel = K1, m = 3, tol = 1), "tol", "tol of 1"),
  case("nystrom_features", list(x = X, kernel = K1, m = 3, foo = 1), "foo", "unknown option"),
  case("nystrom_features", list(x = y ~ a, data = data.frame(a = 1:3, y = 1:3), kernel = K1,
                                m = 2), "x", "two-sided formula"),
  case("random_features", list(x = ~ a + b, data = data.frame(a = c(1, NA), b = 1:2),
                               kernel = K1, D = 8, na.action = stats::na.fail), "data",
       "NA in formula data under na.fail"),
  case("rff_ridge", list(formula = y ~ a, data = data.frame(a = 1:6, y = replace(YN, 2, NA)),
                         kernel = K1, D = 8, na.action = stats::na.pass), "data",
       "NA in the response under na.pass"),
  case("rff_svm", list(formula = y ~ a, data = data.frame(a = 1:6, y = YC), kernel = K1, D = 8,
                       na.action = "no_such_na_action"), "na.action", "unknown na.action"),
  case("rff_svm", list(formula = y ~ a, data = data.frame(a = 1:6, y = YC), kernel = K1, D = 8,
                       weights = -(1:6)), "weights", "negative weights"),
  case("rff_ridge", list(formula = y ~ a, data = data.frame(a = 1:6, y = YN), kernel = K1,
                         D = 8, weights = c(1, NA, 1, 1, 1, 1), na.action = stats::na.pass),
       "weights", "NA weights under na.pass (na.omit drops the row, as lm)"),
  case("rff_ridge", list(formula = y ~ a, data = data.frame(a = 1:6, y = YN), kernel = K1,
                         D = 8, weights = letters[1:6]), "weights", "character weights"),
  case("rff_ridge", list(formula = y ~ a, data = data.frame(a = 1:6, y = YN), kernel = K1,
                         D = 8, weights = 1:3), "weights", "weights of the wrong length"),
  case("kernel_kmeans", list(formula = ~ a, data = data.frame(a = 1:6), centers = 2,
                             kernel = K1, weights = rep(0, 6)), "weights", "all-zero weights"),
  case("rff_svm", list(formula = y ~ a, data = data.frame(a = 1:6, y = YC), kernel = K1, D = 8,
                       subset = rep(FALSE, 6)), "data", "subset selecting no rows"),
  case("random_features", list(x = y ~ a, data = data.frame(a = 1:3, y = 1:3), kernel = K1,
                               D = 8), "x", "two-sided formula"),
  case("random_features", list(x = ~ a + b, data = 5, kernel = K1, D = 8), "data", "data a number"),
  case("random_features", list(x = ~ a + b, data = "df", kernel = K1, D = 8), "data", "data a string"),
  case("random_features", list(x = ~ a + b, data = data.frame(q = 1:3), kernel = K1, D = 8), "data",
       "data without the formula's variables"),
  case("kernel_kmeans", list(x = ~ a + b, data = NA, centers = 2, kernel = K1), "data", "data NA"),
  case("kernel_kmeans", list(x = ~ a + zz, data = data.frame(a = 1:6), centers = 2, kernel = K1),
       "data", "data without the formula's variables"),
  case("kernel_matrix", list(kernel = K1, x = X, y = X[, 1]), "y", "y of another width"),
  case("gaussian_kernel", list(sigma = 2, gamma = 1), "gamma", "sigma and gamma both"),
  case("laplace_kernel", list(sigma = "median", gamma = 1), "gamma", "sigma and gamma both"),
  case("random_features", list(x = X, kernel = laplace_kernel(1), D = 8, sampling = "orthogonal"),
       "sampling", "orthogonal sampling of a non-isotropic kernel"),
  case("rff_ridge", list(x = X, y = X[, 1], map = list()), "map", "map that is not a map"),
  case("rff_svm", list(x = X[, 1], y = factor(X[, 1] > 0.5), map = fit_map), "map",
       "map of another width"),
  case("spectral_sample", list(kernel = polynomial_kernel(2), n = 5, d = 2), "kernel",
       "kernel without spectral density"),
  case("spectral_sample", list(kernel = gaussian_kernel("median"), n = 5, d = 2), "kernel",
       "median sigma without data"),
  case("kernel_kmeans", list(x = X, kernel = K1), "centers", "missing centers"),
  case("plot.kernel_kmeans", list(x = fit_km_rff), "data", "no data for a fit on features"),
  case("kernel_kmeans", list(x = X, centers = 2, kernel = K1, weights = c(1, 1, 1, 1, 1, -1)),
       "weights", "a negative case weight"),
  case("kernel_kmeans", list(x = X, centers = 2, kernel = K1, weights = rep("1", 6)),
       "weights", "character case weights"),
  case("kernel_kmeans", list(x = X, centers = 2, kernel = K1, weights = c(1, NA, 1, 1, 1, 1)),
       "weights", "NA case weight"),
  case("kernel_kmeans", list(x = X, centers = 2, kernel = K1, weights = 1:5),
       "weights", "case weights of the wrong length"),
  case("kernel_kmeans", list(x = matrix(1, 6, 2), centers = 2), "x",
       "no bandwidth for identical rows"),
  case("kernel_kmeans", list(x = X, centers = 2, kernel = polynomial_kernel(2), method = "rff",
                             D = 8, projection = "nonsense"), "projection",
       "unknown option for kernel_kmeans"),
  case("predict.random_features", list(object = fit_map), "newdata", "missing newdata"),
  case("polynomial_kernel", list(degree = 2, coef = c(1, 1)), "coef", "both forms"),
  case("rff_dimension", list(eps = 0.1, kernel = laplace_kernel(1), d = 2, diameter = 1),
       "kernel", "uniform bound without a second moment"),
  case("rff_dimension", list(eps = 0.1, kernel = K1, d = 2), "diameter", "d without diameter"),
  case("matern_kernel", list(sigma = 1, nu = 1e300), "nu", "nu beyond 1000 (crashed R's Bessel code)"),
  case("matern_kernel", list(sigma = 1, nu = 3e9), "nu", "nu beyond 1000 (crashed R's Bessel code)"),
  case("rff_svm", list(x = X, y = YC, kernel = K1, D = 8, foo = 1), "foo", "unknown option"),
  case("rff_svm", list(x = ~ a + b, data = data.frame(a = 1:6, b = 6:1), kernel = K1, D = 8),
       "x", "one-sided formula"),
  case("rff_ridge", list(x = y ~ a + zz, data = data.frame(a = 1:6, y = YN), kernel = K1, D = 8),
       "data", "data without the formula's variables"),
  case("predict.rff_ridge", list(object = fit_ridge, newdata = X, type = "class"), "type",
       "class predictions from a regression"),
  case("rff_svm", list(x = big, y = rep(YC, length.out = nrow(big)), kernel = K1, D = 2e5),
       "D", "features of the SVM beyond memory"),
  case("rff_ridge", list(x = big, y = seq_len(nrow(big)), kernel = K1, D = 2e5),
       "D", "features of ridge beyond memory"),
  case("bochner_threads", list(), "options(bochner.threads)", "bad option"),
  # data in chunks (R/chunks.R, R/distributed.R)
  case("data_chunks", list(x = X), "x", "a single table"),
  case("data_chunks", list(x = list(X, 1:3)), "x", "a list with a non-table"),
  case("data_chunks", list(x = list()), "x", "an empty list"),
  case("data_chunks", list(x = 5), "x", "a number"),
  case("data_chunks", list(x = c("a.rds", NA)), "x", "a missing path"),
  case("data_chunks", list(x = "a.xyz"), "x", "a file type without a reader"),
  case("data_chunks", list(x = function(i) X), "n", "a function without n"),
  case("data_chunks", list(x = function(i) X, n = 0), "n", "zero chunks"),
  case("data_chunks", list(x = list(X, X), n = 3), "n", "n that does not match"),
  case("data_chunks", list(x = "a.rds", reader = "readRDS"), "reader", "a reader that is a string"),
  case("rff_ridge", list(x = data_chunks(list(cbind(X, y = YN))), kernel = K1, D = 8), "y",
       "chunks without y"),
  case("rff_ridge", list(x = data_chunks(list(cbind(X, y = YN))), y = 1, kernel = K1, D = 8),
       "y", "chunks with y a number"),
  case("rff_ridge", list(x = data_chunks(list(cbind(X, y = YN))), y = "y", kernel = K1,
                         D = 0), "D", "chunks with D = 0"),
  case("rff_ridge", list(x = data_chunks(list(cbind(X, y = YN))), y = "y", kernel = K1,
                         D = 8, lambda = -1), "lambda", "chunks with a negative lambda"),
  case("rff_svm", list(x = data_chunks(list(cbind(X, y = YN))), y = "y", kernel = K1, D = 8),
       "y", "chunks with a non-integer class column"),
  case("rff_svm", list(x = data_chunks(list(cbind(X, y = 1))), y = "y", kernel = K1, D = 8),
       "y", "chunks with one class"),
  case("rff_svm", list(x = data_chunks(list(cbind(X, y = 1:2))), y = "y", kernel = K1, D = 8,
                       rounds = 0), "rounds", "chunks with zero rounds"),
  case("kernel_kmeans", list(x = data_chunks(list(X)), centers = c(1, 2, 1, 2, 1, 2),
                             kernel = K1), "centers", "chunks with an initial assignment"),
  case("kernel_kmeans", list(x = data_chunks(list(X)), centers = 7, kernel = K1, D = 8),
       "centers", "chunks with more clusters than rows"),
  case("kernel_kmeans", list(x = data_chunks(list(X)), centers = 2, kernel = K1,
                             method = "exact"), "method", "chunks with the exact method")
)

cases <- c(specs, extra_cases)

run_case <- function(cs) {
  f <- get(cs$fn, envir = asNamespace("bochner"))
  if (cs$fn == "bochner_threads") {
    old <- options(bochner.threads = -1)
    on.exit(options(old))
  }
  tryCatch(
    withCallingHandlers({
      do.call(f, cs$args)
      "returned without an error"
    }, warning = function(w) invokeRestart("muffleWarning")),
    error = function(e) conditionMessage(e))
}

test_that("the table covers every exported function", {
  covered <- unique(sub("^(predict|fitted)\\..*", "\\1", vapply(cases, `[[`, "", "fn")))
  exported <- getNamespaceExports("bochner")
  # data exports (the caret model list rff_svm_caret) are not called
  exported <- exported[vapply(exported, function(f) is.function(getExportedValue("bochner", f)),
                              logical(1))]
  # S3 methods are exercised through their generics above
  expect_setequal(setdiff(exported, covered), character(0))
  expect_gt(length(cases), 300L)
})

test_that("every bad argument gives an error naming it", {
  for (cs in cases) {
    msg <- run_case(cs)
    label <- sprintf("%s(%s = <%s>): %s", cs$fn, cs$arg, cs$what, msg)
    expect_true(grepl(sprintf("'%s'", cs$arg), msg, fixed = TRUE), label = label)
  }
})

test_that("allocations beyond memory are refused with what they would need", {
  for (cs in extra_cases[grepl("beyond memory", vapply(extra_cases, `[[`, "", "what"))]) {
    msg <- run_case(cs)
    expect_match(msg, "would need [0-9.]+ [KMGTP]B", label = paste(cs$fn, cs$what, msg))
  }
})
