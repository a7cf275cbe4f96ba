# One vocabulary (?bochner_arguments): every exported function and every
# method of an exported generic, read through its formals.

exported_formals <- function() {
  ns <- asNamespace("bochner")
  ex <- getNamespaceExports("bochner")
  fs <- sort(ex[vapply(ex, function(e) is.function(get(e, envir = ns)), TRUE)])
  objs <- ls(ns, all.names = TRUE)
  meths <- unlist(lapply(fs, function(f) {
    grep(paste0("^", gsub(".", "[.]", f, fixed = TRUE), "[.]"), objs, value = TRUE)
  }))
  all <- unique(c(fs, meths))
  stats::setNames(lapply(all, function(f) names(formals(get(f, envir = ns)))), all)
}

test_that("the formals of the exports speak one vocabulary", {
  fl <- exported_formals()
  expect_gt(length(fl), 60)
  has <- function(arg) names(fl)[vapply(fl, function(a) arg %in% a, TRUE)]
  # names the page gives another word for, nowhere
  for (synonym in c("centres", "iter.max", "maxit", "iterations", "tolerance", "threads",
                    "n_threads", "num_threads", "random_state", "n_centers", "landmark_count",
                    "n_features", "num_landmarks")) {
    expect_identical(has(synonym), character(0), label = synonym)
  }
  # centers = clusters: kernel_kmeans() only
  expect_setequal(has("centers"), c("kernel_kmeans.default", "kernel_kmeans.data_chunks"))
  # m = Nystrom centres: the Nystrom map, falkon and every method = "nystrom"
  expect_setequal(has("m"), c("nystrom_features.default", "falkon.default",
                              "falkon.data_chunks", "kernel_kmeans.default",
                              "kernel_kmeans.data_chunks", "kernel_pca.default", "kernel_cca",
                              "mmd_test.default", "hsic_test.default", "mmd_test.data_chunks",
                              "hsic_test.data_chunks", "rff_tune.default"))
  # epsilon would be e1071's insensitive loss: no function has it; the SVM's
  # tolerance is tol, on chunks too, whose outer rounds stop at gap_tol
  expect_identical(has("epsilon"), character(0))
  expect_setequal(has("gap_tol"), "rff_svm.data_chunks")
  # seeds and threads under one name each, wherever a function draws or threads
  for (f in names(fl)) {
    a <- fl[[f]]
    expect_false(any(c("rng_seed", "set_seed", "random_seed") %in% a), label = f)
    expect_false(any(c("cores", "ncores", "n_cores", "num_cores") %in% a), label = f)
  }
  # every kernel argument is called kernel (or kernel_x / kernel_y for two samples)
  expect_identical(has("kern"), character(0))
})

test_that("a renamed argument still works for one release, with a message naming the new one", {
  renamed <- bochner:::renamed_arguments
  fl <- exported_formals()
  for (who in names(renamed)) {
    f <- sub("()", "", who, fixed = TRUE)
    for (old in names(renamed[[who]])) {
      new <- renamed[[who]][[old]]
      for (meth in grep(paste0("^", f, "[.](default|data_chunks)$"), names(fl), value = TRUE)) {
        expect_true(new %in% fl[[meth]], label = paste(meth, new))
        expect_false(old %in% fl[[meth]], label = paste(meth, old))
      }
    }
  }
  x <- as.matrix(mtcars[, c("wt", "hp")])
  expect_message(old <- falkon(x, mtcars$mpg, centers = 10, seed = 1), "'centers' is now called 'm'")
  expect_identical(old$alpha, falkon(x, mtcars$mpg, m = 10, seed = 1)$alpha)
  expect_message(old <- kernel_kmeans(x, 2, gaussian_kernel(1), iter.max = 5, seed = 1),
                 "'iter.max' is now called 'max_iter'")
  expect_identical(old$cluster, kernel_kmeans(x, 2, gaussian_kernel(1), max_iter = 5, seed = 1)$cluster)
  y2 <- factor(mtcars$am)
  expect_message(old <- rff_svm(x, y2, D = 16, epsilon = 0.01, seed = 1), "'epsilon' is now called 'tol'")
  expect_identical(old$weights, rff_svm(x, y2, D = 16, tol = 0.01, seed = 1)$weights)
  expect_identical(old$tol, 0.01)
  cars <- transform(mtcars, am = factor(am))
  ch <- data_chunks(list(cars[1:16, ], cars[17:32, ]))
  expect_message(suppressWarnings(rff_svm(ch, "am", D = 8, epsilon = 0.2, rounds = 1, seed = 1)),
                 "'tol'")
  expect_message(t1 <- rff_tune(x, y2, D = 8, cost = 1, folds = 2, epsilon = 0.01, seed = 1), "'tol'")
  expect_identical(t1$scores, rff_tune(x, y2, D = 8, cost = 1, folds = 2, tol = 0.01, seed = 1)$scores)
  # D for the landmarks of method = "nystrom": m, with a message for one release
  expect_message(old <- kernel_kmeans(x, 2, gaussian_kernel(1), method = "nystrom", D = 12,
                                      seed = 1), "the number of landmarks is 'm'")
  new <- kernel_kmeans(x, 2, gaussian_kernel(1), method = "nystrom", m = 12, seed = 1)
  expect_identical(old$cluster, new$cluster)
  expect_identical(new$map$m, 12L)
  expect_error(kernel_kmeans(x, 2, gaussian_kernel(1), method = "rff", m = 12), "'m'")
  # an unknown argument is still refused
  expect_error(falkon(x, mtcars$mpg, centres = 10), "unused argument")
})

test_that("no internal function re-enters an exported one (validation once, at the entry)", {
  ns <- asNamespace("bochner")
  exported <- getNamespaceExports("bochner")
  # value constructors and settings, cheap and side-effect free: the
  # documented exceptions (kernel objects, falkon_control(), the thread
  # default, the default centre count, and spectral_sample(), the one draw
  # of frequencies)
  allowed <- c("gaussian_kernel", "laplace_kernel", "cauchy_kernel", "matern_kernel",
               "spectral_mixture_kernel", "polynomial_kernel", "falkon_control",
               "bochner_threads", "falkon_default_centers", "spectral_sample")
  calls_in <- function(e) {
    out <- character()
    walk <- function(x) {
      if (is.call(x)) {
        if (is.name(x[[1L]])) out <<- c(out, as.character(x[[1L]]))
        for (a in as.list(x)) if (!missing(a)) walk(a)
      }
    }
    walk(e)
    unique(out)
  }
  offenders <- character()
  for (name in ls(ns, all.names = TRUE)) {
    f <- get(name, envir = ns)
    if (!is.function(f) || name %in% exported) next
    generic <- sub("\\..*$", "", name)
    hits <- setdiff(intersect(calls_in(body(f)), exported), c(allowed, generic))
    if (length(hits)) offenders <- c(offenders, paste0(name, ": ", paste(hits, collapse = ", ")))
  }
  expect_identical(offenders, character(0))
})

test_that("a machine's entry (its .default method) is reached only by delegation", {
  # The formula methods hand their model frame to it once; the framework
  # adapters (parsnip's fit functions) are the user's call of it; rff_tune()
  # refits the best values through it, so that the refit is the machine's
  # own fit; tune_svm_settings() reads its defaults from its formals.
  # Everything else calls the workers behind it (validation once).
  ns <- asNamespace("bochner")
  entries <- paste0(getNamespaceExports("bochner"), ".default")
  symbols <- function(e) {
    out <- character()
    walk <- function(x) {
      if (is.name(x)) out <<- c(out, as.character(x))
      else if (is.call(x) || is.pairlist(x)) for (a in as.list(x)) if (!missing(a)) walk(a)
    }
    walk(e)
    unique(out)
  }
  delegates <- c("bochner_parsnip_fit", "falkon_parsnip_fit", "rff_tune.default",
                 "tune_svm_settings")
  offenders <- character()
  for (name in ls(ns, all.names = TRUE)) {
    f <- get(name, envir = ns)
    if (!is.function(f) || grepl("[.]formula$", name) || name %in% delegates) next
    hits <- intersect(symbols(body(f)), entries)
    if (length(hits)) offenders <- c(offenders, paste0(name, ": ", paste(hits, collapse = ", ")))
  }
  expect_identical(offenders, character(0))
  # and the delegates reach only the machine they adapt
  expect_setequal(intersect(symbols(body(ns$rff_tune.default)), entries),
                  c("rff_svm.default", "rff_ridge.default", "falkon.default"))
})
