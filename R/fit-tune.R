#' Choose D, sigma and cost or lambda by cross-validation
#'
#' Cross-validates [rff_svm()], [rff_ridge()] or [falkon()] over a grid of
#' the number of features `D` (for falkon, the number of centres `m`), the
#' bandwidth `sigma`, and `cost` (SVM) or `lambda` (ridge, falkon), in the
#' spirit of `e1071::tune()` and `kernlab::ksvm(cross =)`, and refits the
#' best combination on all the data.
#'
#' The work is shared as far as the grid allows.  The folds are drawn once
#' (stratified by class for classification) and are the same for every
#' combination.  For each `D` and `sigma` the feature map is drawn once and
#' the features of all rows computed once; then
#' * for the SVM, every `cost`, fold and binary problem is solved in one
#'   parallel call of the solver on those features;
#' * for ridge, each fold's normal equations are formed once and
#'   reduced once, which gives the fit at every `lambda` of the grid;
#' * for falkon (squared loss), for each `m` (centres), `sigma` and fold the
#'   centres are drawn once from the training rows and one conjugate-gradient
#'   run solves every `lambda` of the grid in the same passes over the data,
#'   for `iter` iterations (an argument in `...`; default 20, the same in the
#'   refit).
#'
#' **What is reported.**  The package reports one quantity per kind of
#' response, under its own name, in fits and in tuning alike: for classes
#' the *accuracy* (the fraction of held-out rows classified correctly,
#' column `accuracy`, as [rff_svm()]'s `cross_accuracy` and the fits'
#' training `accuracy`; kernlab's `cross()` and e1071's `tune()` report the
#' error, one minus it); for a numeric response the root mean squared
#' error (column `rmse`, as [rff_ridge()]'s training `rmse`).  Both are
#' pooled over the held-out rows of all folds; `sd` is the standard
#' deviation of the per-fold values.  The best row has the largest
#' accuracy or the smallest RMSE; ties go to the simplest model: the
#' smallest `D`, then the largest `lambda` or smallest `cost`, then the
#' first `sigma`.
#'
#' @param x,y The data and the response, as for [rff_svm()] (classes) or
#'   [rff_ridge()] (classes or numbers).
#' @param method `"svm"`, `"ridge"` or `"falkon"`.
#' @param kernel A shift-invariant kernel (its `sigma` is replaced by the
#'   values of `sigma` when given); `NULL` for the method's default
#'   ([rff_svm()]'s or [rff_ridge()]'s).
#' @param D Numbers of random features to try (`"svm"`, `"ridge"`); `NULL`
#'   (the default) for the machine's default, [rff_svm()]'s chosen from the
#'   rows and classes, [rff_ridge()]'s 1024.
#' @param m For `method = "falkon"`: numbers of centres to try (default
#'   [falkon_default_centers()] of the rows).  `D` given for them still
#'   works, with a message, until the next release.
#' @param sigma `NULL` (the kernel's own bandwidth, resolved on the
#'   standardised data), or bandwidths to try, on the scale of the
#'   standardised inputs when `scale = TRUE`.
#' @param cost SVM costs to try.
#' @param lambda Penalties to try, on the scale of a mean over the rows
#'   (see [rff_ridge()] and [falkon()]); for falkon the default is
#'   `falkon_control()$lambdas`.
#' @param folds Number of cross-validation folds, at least 2.
#' @param scale Standardise the inputs first, as in [rff_svm()].
#' @param seed `NULL`, or a number for reproducible folds, maps and solver
#'   orders, leaving the user's random stream as it was.
#' @param nthreads Number of threads, see [bochner_threads()].
#' @param ... Further arguments for the fits (for example `loss`,
#'   `multiclass` or `class.weights` for the SVM), used in the
#'   cross-validation and the refit.
#' @return An object of class `"rff_tune"`: `table` (a data frame with one
#'   row per combination: `D` (falkon: `m`), `sigma`, `cost` or `lambda`, then `accuracy`
#'   (classes) or `rmse` (numbers), and `sd`), `best` (the chosen row),
#'   `fit` (the model refitted on all the data with the best values; with
#'   the formula method a fit with the formula, so that `predict()` takes a
#'   data frame), `method`, `folds`, `measure` (the name of the reported
#'   column) and `edges`: the tuned values (`sigma` when given, `cost` or
#'   `lambda`) that the best sits at an end of a grid of three or more, in
#'   words; a warning and `print()` name them, since the best may lie
#'   beyond.  The formula method, `rff_tune(Species ~ ., data = iris)`,
#'   takes `subset` and `na.action` as [rff_svm()]'s does (see
#'   [formula_interface]); case weights are not supported.
#' @seealso [rff_svm()] (`cross =`), [rff_ridge()] (`lambda = "auto"`
#'   chooses `lambda` alone from the exact leave-one-out or GCV path).
#' @examples
#' tuned <- rff_tune(as.matrix(iris[, 1:4]), iris$Species, D = 128,
#'                   sigma = c(0.5, 1, 2, 4, 8), cost = c(0.1, 1, 10, 100), seed = 1)
#' tuned
#' head(tuned$table)
#' predict(tuned$fit, iris[c(1, 51, 101), 1:4])
#' # the formula method: the refitted model predicts from a data frame
#' tuned2 <- rff_tune(mpg ~ wt + hp, data = mtcars, method = "ridge", D = 64,
#'                    sigma = c(1, 2), lambda = c(1e-4, 1e-3), folds = 4, seed = 1)
#' tuned2
#' predict(tuned2$fit, mtcars[1:3, ])
#' @md
#' @export
rff_tune <- function(x, ...) UseMethod("rff_tune")

#' @rdname rff_tune
#' @export
rff_tune.default <- function(x, y, method = c("svm", "ridge", "falkon"), kernel = NULL,
                             D = NULL, m = NULL, sigma = NULL, cost = 10^(-1:2), lambda = 10^(-7:-2),
                             folds = 5, scale = TRUE, seed = NULL, nthreads = bochner_threads(),
                             ...) {
  if ("weights" %in% names(list(...))) tune_no_weights()
  method <- check_choice(method, c("svm", "ridge", "falkon"), "method")
  falkon <- method == "falkon"
  fitter <- switch(method, svm = rff_svm.default, ridge = rff_ridge.default,
                   falkon = falkon.default)
  if (is.null(kernel)) kernel <- formals(fitter)$kernel
  if (is.call(kernel)) kernel <- eval(kernel)
  x <- as_data_matrix(x, "x")
  n <- nrow(x)
  check_kernel(kernel)
  if (falkon && missing(lambda)) lambda <- falkon_control()$lambdas
  D <- tune_sizes(falkon, D, m, is.null(D), n)
  if (!is.null(sigma)) {
    if (!isTRUE(kernel$shift_invariant) || is.null(kernel$sigma)) {
      stop_arg("sigma", "needs a shift-invariant kernel with a bandwidth, such as gaussian_kernel()")
    }
    sigma <- tune_grid_values(sigma, "sigma")
  }
  penalty <- if (method == "svm") tune_grid_values(cost, "cost") else tune_grid_values(lambda, "lambda")
  folds <- check_count(folds, "folds", lower = 2, upper = n)
  scale <- rff_check_scale(kernel, check_flag(scale, "scale"))
  nthreads <- check_threads(nthreads)
  extra <- if (method == "svm") renamed_dots(NULL, "rff_svm()", ...) else list(...)
  if (falkon) {
    if (!is.null(extra$loss) && !identical(extra$loss, "squared")) {
      stop_arg("method", "= \"falkon\" tunes the squared loss only")
    }
    extra$iter <- if (is.null(extra$iter)) 20L else check_count(extra$iter, "iter")
  }
  y <- if (method == "svm") rff_class_response(y, n) else ridge_response(y, n)$y
  svm_settings <- if (method == "svm") tune_svm_settings(extra)
  # the feature map's options, checked once here as the machine checks them
  map_args <- if (!falkon) {
    do.call(rff_map_args, c(extra[names(extra) %in% c("type", "sampling", "method")],
                            list(who = "rff_tune()")))
  }
  classification <- is.factor(y)
  if (is.null(D)) {
    D <- if (method == "ridge") eval(formals(rff_ridge.default)$D)
         else tune_svm_default_D(n, ncol(x), y, svm_settings, kernel, map_args)
  }

  scaling <- if (scale) rff_scaling(x) else NULL
  xs <- rff_apply_scaling(x, scaling)
  kernels <- if (is.null(sigma)) list(resolve_kernel(kernel, xs))
             else lapply(sigma, function(s) utils::modifyList(kernel, list(sigma = s)))
  result <- with_seed(seed, {
    fold <- if (classification) svm_folds(y, folds) else sample(rep_len(seq_len(folds), n))
    table <- NULL
    for (d in D) {
      for (kern in kernels) {
        if (falkon) {
          err <- tune_falkon_errors(xs, y, fold, kern, d, penalty, extra, nthreads)
        } else {
          map <- rff_build_map(xs, kern, d, map_args)
          err <- if (method == "svm") tune_svm_errors(map, xs, y, fold, penalty, svm_settings, nthreads)
                 else tune_ridge_errors(map, xs, y, fold, penalty, nthreads)
        }
        table <- rbind(table, data.frame(D = d, sigma = kern$sigma, penalty = penalty,
                                         score = err$score, sd = err$sd))
      }
    }
    order_key <- if (method == "svm") table$penalty else -table$penalty
    best <- table[order(if (classification) -table$score else table$score,
                        table$D, order_key)[1L], ]
    names(table)[1L] <- names(best)[1L] <- if (falkon) "m" else "D"
    names(table)[3L] <- names(best)[3L] <- if (method == "svm") "cost" else "lambda"
    names(table)[4L] <- names(best)[4L] <- if (classification) "accuracy" else "rmse"
    list(table = table, best = best)
  })
  best <- result$best
  # the refit under the fit's own 'seed', so that calling the machine with
  # the best values and this seed (the formula method's fit$call, update())
  # gives the same fit
  args <- c(list(x = x, y = y, scale = scale, seed = seed, nthreads = nthreads),
            if (falkon) list(m = best$m) else list(D = best$D),
            if (is.null(sigma)) list(kernel = kernel)
            else list(kernel = utils::modifyList(kernel, list(sigma = best$sigma))),
            if (method == "svm") list(cost = best$cost) else list(lambda = best$lambda),
            extra)
  result$fit <- do.call(fitter, args)
  rownames(result$best) <- NULL
  result$edges <- tune_edges(result$table, result$best,
                             c(if (!is.null(sigma)) "sigma", names(result$best)[3L]))
  if (length(result$edges)) {
    warning("rff_tune(): ", paste(result$edges, collapse = "; "),
            ": the best may lie beyond it; widen the grid", call. = FALSE)
  }
  structure(c(result, list(method = method, folds = folds,
                           measure = if (classification) "accuracy" else "rmse")),
            class = "rff_tune")
}

# The tuned values ('params', columns of the table) that the best sits at
# an end of a grid of three or more values, in words (character(0) when
# none): a grid of two is a comparison, not a search.
tune_edges <- function(table, best, params) {
  out <- character()
  for (p in params) {
    grid <- sort(unique(table[[p]]))
    if (length(grid) < 3L) next
    at <- if (best[[p]] == grid[1L]) "smallest" else if (best[[p]] == grid[length(grid)]) "largest"
    if (!is.null(at)) {
      out <- c(out, sprintf("%s = %s is the %s of its grid (%s)", p, format(signif(best[[p]], 4)),
                            at, paste(vapply(signif(grid, 4), format, ""), collapse = ", ")))
    }
  }
  out
}

#' @rdname formula_interface
#' @export
rff_tune.formula <- function(formula, data = NULL, ..., subset, na.action = stats::na.omit) {
  call <- match.call()
  if (!is.null(call$weights)) tune_no_weights()
  tuned <- fit_formula(call, parent.frame(), rff_tune.default, na.action, ...,
                       response = "y ~ a + b")
  # the formula's records belong to the refitted model, for predict(),
  # formula() and model.frame(); its call refits the best values on the data
  fit <- tuned$fit
  fit$input$terms <- tuned$input$terms
  fit$input$xlevels <- tuned$input$xlevels
  fit$terms <- tuned$terms
  fit$na.action <- tuned$na.action
  fit$call <- tune_refit_call(tuned$call, tuned)
  tuned$fit <- fit
  tuned[c("input", "terms", "na.action")] <- NULL
  tuned
}

tune_no_weights <- function() {
  stop_arg("weights", "is not supported by rff_tune(): its cross-validation is unweighted")
}

# rff_svm(formula, data, ...) or rff_ridge(...) at the best values: the
# tuning call without the grid's arguments, with the chosen ones.
tune_refit_call <- function(call, tuned) {
  b <- tuned$best
  args <- as.list(call)[-1L]
  grid <- c("method", "D", "m", "sigma", "cost", "lambda", "folds")
  if (!is.null(call$sigma)) grid <- c(grid, "kernel")
  args <- args[setdiff(names(args), grid)]
  # a tuned sigma: the refit's kernel, which has it
  if (!is.null(call$sigma)) args$kernel <- tuned$fit$kernel
  best <- if (tuned$method == "svm") list(cost = b$cost) else list(lambda = b$lambda)
  if (tuned$method == "falkon") {
    return(as.call(c(list(as.name("falkon")), args, list(m = b$m), best)))
  }
  as.call(c(list(as.name(paste0("rff_", tuned$method))), args, list(D = b$D), best))
}

# The sizes of the grid: D (random features) for the SVM and ridge, m
# (centres, at most n) for falkon, where D given for them works for one
# release with a message.
tune_sizes <- function(falkon, D, m, D_missing, n) {
  if (!falkon) {
    if (!is.null(m)) stop_arg("m", "is falkon's number of centres: it needs method = \"falkon\"")
    return(if (!is.null(D)) tune_grid_values(D, "D", whole = TRUE))
  }
  arg <- "m"
  if (is.null(m) && !D_missing) {
    message("rff_tune(): falkon's numbers of centres are 'm'; 'D' for them works until the next release")
    m <- D
    arg <- "D"
  }
  m <- if (is.null(m)) falkon_default_centers(n) else tune_grid_values(m, arg, whole = TRUE)
  if (any(m > n)) stop_arg(arg, "(the numbers of centres) must be at most nrow(x) = ", n)
  m
}

# D = NULL for the SVM: rff_svm()'s default for these rows and classes.
tune_svm_default_D <- function(n, d, y, svm_settings, kernel, map_args) {
  k <- nlevels(y)
  svm_default_D(n, k, if (k == 2L) "binary" else svm_settings$multiclass,
                rff_feature_count(1, d, kernel, NULL, map_args))
}

tune_grid_values <- function(v, arg, whole = FALSE) {
  if (!is.numeric(v) || length(v) < 1L || anyNA(v) || any(!is.finite(v)) || any(v <= 0)) {
    stop_arg(arg, "must be positive numbers")
  }
  if (whole && any(v != round(v) | v > .Machine$integer.max)) stop_arg(arg, "must be whole numbers")
  sort(unique(as.double(v)))
}

# Held-out accuracy (classes) or RMSE (numbers) of every lambda of falkon (squared loss): per fold, the
# centres are drawn from the training rows and one CG run (falkon_cg, the
# fit's own solver) solves every lambda in the same passes over the rows.
tune_falkon_errors <- function(xs, y, fold, kernel, m, lambdas, extra, nthreads) {
  resp <- ridge_response(y, nrow(xs))
  landmarks <- if (is.null(extra$landmarks)) "uniform" else extra$landmarks
  control <- falkon_control_list(if (is.null(extra$control)) list() else extra$control)
  k <- ncol(resp$Y)
  err <- matrix(0, max(fold), length(lambdas))
  size <- tabulate(fold)
  for (f in seq_len(max(fold))) {
    tr <- which(fold != f)
    te <- which(fold == f)
    xt <- xs[tr, , drop = FALSE]
    centres <- falkon_centres(min(m, length(tr)), xt, kernel, landmarks, NULL, nthreads)
    prep <- falkon_prepare(kernel, centres, nthreads)
    Y <- resp$Y[tr, , drop = FALSE]
    offset <- colMeans(Y)
    rhs <- falkon_knm_apply(prep, xt, V = sweep(Y, 2L, offset), nthreads = nthreads) / length(tr)
    factors <- falkon_precond_all(prep, lambdas, nthreads)
    apply_knm <- function(U) falkon_knm_apply(prep, xt, U = U, nthreads = nthreads)
    # H = K_nm' K_nm where falkon() forms it for each lambda alone, so that
    # every lambda's column is the fit falkon() gives (falkon_fit_squared())
    if (falkon_use_gram(prep$m, k, 1L, extra$iter)) {
      apply_knm <- falkon_gram_operator(apply_knm, prep$m, nthreads)
    }
    res <- falkon_cg(apply_knm, rhs, prep, factors, lambdas, length(tr), extra$iter,
                     tol = control$tol, nthreads = nthreads)
    scores <- falkon_kernel_predict(prep, xs[te, , drop = FALSE], res$alpha, nthreads)
    for (g in seq_along(lambdas)) {
      pred <- sweep(scores[, (g - 1L) * k + seq_len(k), drop = FALSE], 2L, offset, "+")
      err[f, g] <- if (resp$type == "classification") {
        sum(max.col(pred, ties.method = "first") != as.integer(resp$y[te]))
      } else sum((pred - resp$Y[te, ])^2)
    }
  }
  if (resp$type == "classification") {
    list(score = 1 - colSums(err) / length(y), sd = apply(err / size, 2L, stats::sd))
  } else {
    list(score = sqrt(colSums(err) / length(y)), sd = apply(sqrt(err / size), 2L, stats::sd))
  }
}

# Held-out accuracy of every cost: the fold problems of every cost solved in
# one call of rff_svm()'s solver (svm_solve()), scored by its held-out
# decision values (svm_heldout_decision()), on features computed once.
tune_svm_errors <- function(map, xs, y, fold, costs, s, nthreads) {
  k <- nlevels(y)
  multiclass <- if (k == 2L) "binary" else s$multiclass
  cw <- rff_class_weights(s$class.weights, levels(y))
  zt <- rff_features_t(map, xs, nthreads)
  yi <- as.integer(y)
  base <- lapply(costs, function(cc) svm_problems(yi, k, multiclass, cc * cw[yi], cc, NULL))
  all <- svm_concatenate(do.call(c, lapply(base, svm_fold_parts, folds = fold)))
  res <- svm_solve(zt, all, s, nthreads)
  fake <- list(multiclass = multiclass, k = k, levels = levels(y), pairs = base[[1L]]$pairs)
  per_cost <- max(fold) * base[[1L]]$n
  wrong <- vapply(seq_along(costs), function(ci) {
    dec <- svm_heldout_decision(res, base[[ci]], fold, zt, nthreads, first = (ci - 1L) * per_cost)
    tabulate(fold[svm_classes(fake, dec) != y], max(fold))
  }, numeric(max(fold)))
  wrong <- matrix(wrong, max(fold))
  size <- tabulate(fold)
  list(score = 1 - colSums(wrong) / length(y), sd = apply(wrong / size, 2L, stats::sd))
}

# rff_svm()'s solver settings for the cross-validation: the values given in
# '...' or rff_svm()'s own defaults (read from its formals, so that the two
# cannot drift apart), checked as rff_svm() checks them, once, before any
# fold is solved.
tune_svm_settings <- function(extra) {
  f <- formals(rff_svm.default)
  get <- function(name) if (is.null(extra[[name]])) eval(f[[name]]) else extra[[name]]
  list(loss = check_choice(get("loss"), eval(f$loss), "loss"),
       multiclass = check_choice(get("multiclass"), eval(f$multiclass), "multiclass"),
       tol = check_positive(get("tol"), "tol"),
       max_iter = check_count(get("max_iter"), "max_iter"),
       shrinking = check_flag(get("shrinking"), "shrinking"),
       class.weights = extra$class.weights)
}

# Held-out accuracy (classes) or RMSE (numbers) of every lambda: per fold, the training rows' normal
# equations (the package's streamed product) and their eigendecomposition
# give the fit at all lambdas; the held-out rows are scored at each.
tune_ridge_errors <- function(map, xs, y, fold, lambdas, nthreads) {
  classification <- is.factor(y)
  Y <- if (classification) outer(as.integer(y), seq_len(nlevels(y)), "==") * 1
       else matrix(y, ncol = 1L)
  Z <- transform_features(map, xs, nthreads)
  err <- matrix(0, max(fold), length(lambdas))
  size <- tabulate(fold)
  for (f in seq_len(max(fold))) {
    tr <- which(fold != f)
    te <- which(fold == f)
    block <- function(i) list(Z[tr, , drop = FALSE], Y[tr, , drop = FALSE])
    ne <- moments_fold(block, 1L, nthreads)
    ev <- eigen(ne$zz, symmetric = TRUE)
    e <- pmax(ev$values, 0)
    cv <- crossprod(ev$vectors, ne$zy)
    Pte <- .Call(C_matprod, sweep(Z[te, , drop = FALSE], 2L, ne$zbar, check.margin = FALSE),
                 ev$vectors, nthreads)
    for (li in seq_along(lambdas)) {
      pred <- .Call(C_matprod, Pte, cv / (e + length(tr) * lambdas[li]), nthreads) +
        rep(ne$ybar, each = length(te))
      err[f, li] <- if (classification) sum(max.col(pred, ties.method = "first") != as.integer(y[te]))
                    else sum((pred - Y[te, ])^2)
    }
  }
  if (classification) {
    list(score = 1 - colSums(err) / length(y), sd = apply(err / size, 2L, stats::sd))
  } else {
    list(score = sqrt(colSums(err) / length(y)), sd = apply(sqrt(err / size), 2L, stats::sd))
  }
}

#' @export
print.rff_tune <- function(x, ...) {
  b <- x$best
  what <- if (x$method == "svm") sprintf("cost = %s", format(b$cost))
          else sprintf("lambda = %s", format(b$lambda))
  label <- if (x$measure == "accuracy") "accuracy" else "RMSE"
  falkon <- x$method == "falkon"
  cat(sprintf("Tuning of %s by %d-fold cross-validation over %d combinations\n",
              if (falkon) "falkon" else paste0("rff_", x$method), x$folds, nrow(x$table)))
  cat(sprintf("  best: %s = %d, sigma = %s, %s: cross-validated %s %.4g (sd %.2g across folds)\n",
              if (falkon) "m" else "D", as.integer(b[[1L]]), format(signif(b$sigma, 4)), what,
              label, b[[x$measure]], b$sd))
  if (length(x$edges)) cat(paste0("  note: ", x$edges, "\n"), sep = "")
  cat("Refitted on all the data with these values ($fit):\n")
  desc <- fit_description(x$fit)
  cat(paste0("  ", desc), sep = "\n")
  invisible(x)
}
