# mmd_test() and hsic_test() on data_chunks(): the in-memory statistics'
# folds applied to each chunk, their sums added in chunk order.
#
# MMD: the pooled sample is the first sample's rows, then the second's,
# each in chunk order, as rbind() would make it in memory.  The splits are
# drawn in this session (bits, (m + n) B / 8 bytes) and each chunk gets the
# words that cover its rows; its fold returns S = Z'L, q, s and Q over its
# rows, sums, so the chunks' folds add up to the in-memory fold.  The gamma
# null adds the chunks' centred cross products (moments_merge()).
#
# HSIC: the gamma null needs the centred cross product of the paired
# features, added over chunks the same way.  Its permutations pair each
# row's x with another row's y, anywhere in the data: they need the rows
# together, which null = "auto" asks only for small problems (B n Dx Dy <=
# 2^35); then the rows are fetched and the test runs in memory.

#' @rdname mmd_test
#' @param group For data in chunks ([data_chunks()]): the name of a column
#'   with two values that splits each chunk's rows into the two samples
#'   (the formula `value ~ group` on chunks gives it); else `y` is the
#'   second sample's chunks.
#' @export
mmd_test.data_chunks <- function(x, y = NULL, kernel = NULL, method = c("rff", "nystrom", "exact"),
                                 D = 256, m = NULL, null = c("permutation", "gamma"), B = 200,
                                 seed = NULL, precision = c("auto", "double", "single"),
                                 nthreads = chunks_threads(), group = NULL, ...) {
  data.name <- paste(deparse1(substitute(x)), "and",
                     if (is.null(group)) deparse1(substitute(y)) else paste("split by", group))
  D <- nystrom_count(stat_method(method), m, D, !missing(D), "mmd_test()")
  o <- stat_test_options(method, null, D, B, nthreads, precision = precision)
  stat_chunks_method(o$method)
  o$opts <- feature_map_options(...)
  if (!is.null(kernel)) check_shift_invariant(kernel)
  sets <- mmd_chunk_sets(x, y, group)
  sv <- mmd_chunk_survey(sets)
  if (sv$m < 2) stop_arg("x", "needs at least 2 rows")
  if (sv$n < 2) stop_arg(if (is.null(group)) "y" else "group", "needs at least 2 rows in the second sample")
  if (!is.null(group)) data.name <- mmd_group_name(sv, group)
  pick <- function(k) unique(round(seq(1, k, length.out = min(k, 500L))))
  got <- stat_chunk_fetch(sets, sv, list(pick(sv$m), pick(sv$n)))
  kernel <- stat_kernel(kernel, rbind(got[[1L]], got[[2L]]), "kernel")
  with_seed(seed, mmd_chunk_run(sets, sv, got[[1L]], kernel, o, data.name))
}

#' @rdname hsic_test
#' @export
hsic_test.data_chunks <- function(x, y, kernel_x = NULL, kernel_y = NULL,
                                  method = c("rff", "nystrom", "exact"), D = 256, m = NULL,
                                  null = c("auto", "permutation", "gamma"), B = 200, seed = NULL,
                                  precision = c("auto", "double", "single"),
                                  nthreads = chunks_threads(), ...) {
  if (missing(y) || !is.character(y) || !length(y) || anyNA(y)) {
    stop_arg("y", "must name the columns of the second variable in every chunk")
  }
  data.name <- paste(deparse1(substitute(x)), "and", paste(y, collapse = ", "))
  D <- nystrom_count(stat_method(method), m, D, !missing(D), "hsic_test()")
  o <- stat_test_options(method, null, D, B, nthreads, auto = TRUE, precision)
  stat_chunks_method(o$method)
  o$opts <- feature_map_options(...)
  for (k in c("kernel_x", "kernel_y")) {
    kern <- get(k)
    if (!is.null(kern)) check_shift_invariant(kern, k)
    if (identical(kern$name, "spectral_mixture") && !sm_resolved(kern)) {
      stop_arg(k, "= spectral_mixture_kernel() starts from all rows in memory; on ",
               "data_chunks() give its parameters or use a standard kernel")
    }
  }
  set <- list(chunks = check_chunks(x, "x"), sample = 1L, pair = y)
  sv <- mmd_chunk_survey(list(set))
  if (sv$m < 6) stop_arg("x", "needs at least 6 rows")
  n <- sv$m
  bw <- if (n > 1000L) unique(round(seq(1, n, length.out = 1000L))) else seq_len(n)
  got <- stat_chunk_fetch(list(set), sv, list(bw, integer()), pair = TRUE)
  kx <- stat_kernel(kernel_x, got$x, "kernel_x")
  ky <- stat_kernel(kernel_y, got$y, "kernel_y")
  with_seed(seed, hsic_chunk_run(set, sv, got, kx, ky, o, data.name))
}

# The name the in-memory formula value ~ group gives the data.
mmd_group_name <- function(sv, group) {
  v <- if (length(sv$names) == 1L) sv$names else paste0("cbind(", paste(sv$names, collapse = ", "), ")")
  paste(v, "by", group, sprintf("(%s vs %s)", sv$levels[1L], sv$levels[2L]))
}

# The formula value ~ group (or cbind(a, b) ~ group) on chunks.
mmd_chunks_formula <- function(formula, data, ..., extra) {
  if (extra) stop_arg("data", "holds chunks: 'subset' is not supported there")
  if (!inherits(formula, "formula") || length(formula) != 3L) {
    stop_arg("formula", "must be a two-sided formula such as value ~ group")
  }
  lhs <- formula[[2L]]
  cols <- if (is.call(lhs) && identical(lhs[[1L]], as.name("cbind"))) as.list(lhs)[-1L] else list(lhs)
  plain <- function(e) is.name(e) && nzchar(as.character(e))
  if (!all(vapply(cols, plain, logical(1))) || !plain(formula[[3L]])) {
    stop_arg("formula", "on chunks takes column names: value ~ group or cbind(a, b) ~ group")
  }
  cols <- vapply(cols, as.character, "")
  g <- as.character(formula[[3L]])
  mmd_test.data_chunks(chunks_select(data, c(cols, g)), group = g, ...)
}

check_chunks <- function(x, arg) {
  if (!inherits(x, "data_chunks")) stop_arg(arg, "must be data in chunks, from data_chunks()")
  x
}

# Only random Fourier features fold over chunks: the exact statistics need
# the Gram matrix of all rows, Nystrom landmarks are drawn from them.
stat_chunks_method <- function(method) {
  if (method == "exact") {
    stop_arg("method", "= \"exact\" needs the Gram matrix of all rows in memory; on ",
             "data_chunks() use method = \"rff\"")
  }
  if (method == "nystrom") {
    stop_arg("method", "= \"nystrom\" draws its landmarks from all rows in memory; on ",
             "data_chunks() use method = \"rff\"")
  }
}

# The chunk sets of a two-sample test: the first sample's chunks then the
# second's (each set's rows all in one sample), or one set whose column
# 'group' splits each chunk.
mmd_chunk_sets <- function(x, y, group) {
  check_chunks(x, "x")
  if (!is.null(group)) {
    if (!is.null(y)) stop_arg("y", "must be NULL when 'group' splits the chunks")
    if (!is.character(group) || length(group) != 1L || is.na(group)) {
      stop_arg("group", "must be the name of a column of every chunk")
    }
    return(list(list(chunks = x, group = group)))
  }
  if (is.null(y)) stop_arg("y", "is required: the second sample (data_chunks()), or give 'group'")
  if (!inherits(y, "data_chunks")) y <- new_data_chunks("list", list(as_data_matrix(y, "y")), 1L, NULL)
  list(list(chunks = x, sample = 1L), list(chunks = y, sample = 2L))
}

# A chunk's rows as the two samples (a set of one sample gives the other
# none), or for a pair set list(x, y) of the paired variables.
stat_chunk_split <- function(raw, set, levels = NULL, names = NULL) {
  if (!is.null(set$pair)) {
    miss <- setdiff(set$pair, colnames(raw))
    if (length(miss)) stop("lacks column(s) ", paste(miss, collapse = ", "), call. = FALSE)
    keep <- setdiff(colnames(raw), set$pair)
    if (!length(keep)) stop("has no columns besides 'y'", call. = FALSE)
    return(list(x = chunk_xy(raw[, keep, drop = FALSE], NULL, names)$x,
                y = chunk_xy(raw[, set$pair, drop = FALSE])$x))
  }
  if (is.null(set$group)) {
    x <- chunk_xy(raw, NULL, names)$x
    return(if (set$sample == 1L) list(x, x[0L, , drop = FALSE]) else list(x[0L, , drop = FALSE], x))
  }
  xy <- chunk_xy(raw, set$group, names)
  if (anyNA(xy$y)) stop("the column '", set$group, "' contains NA", call. = FALSE)
  if (is.null(levels)) return(xy)
  g <- as.character(xy$y)
  list(xy$x[g == levels[1L], , drop = FALSE], xy$x[g == levels[2L], , drop = FALSE])
}

# The survey of the chunk sets: the rows of each sample in each chunk
# (the two group values resolved as factor() resolves them in memory), the
# columns, and the first sample's and the second's sizes m and n.
mmd_chunk_survey <- function(sets) {
  task <- function(raw, i, set) {
    s <- stat_chunk_split(raw, set)
    if (!is.null(set$group)) {
      u <- unique(s$y)
      return(list(values = u, counts = tabulate(match(s$y, u), length(u)), names = colnames(s$x)))
    }
    x <- if (!is.null(set$pair)) s$x else s[[set$sample]]
    list(rows = c(nrow(s[[1L]]), if (is.null(set$pair)) nrow(s[[2L]])), names = colnames(x),
         d = c(ncol(x), if (!is.null(set$pair)) ncol(s$y)))
  }
  parts <- lapply(sets, function(set) chunks_apply(set$chunks, task, list(set = set), "survey"))
  first <- parts[[1L]][[1L]]
  for (k in seq_along(parts)) {
    for (i in seq_along(parts[[k]])) {
      p <- parts[[k]][[i]]
      if (!identical(p$names, first$names) || !identical(p$d, first$d)) {
        stop_arg(if (k == 1L) "x" else "y", "chunk ", i, " has other columns than the first chunk")
      }
    }
  }
  levels <- NULL
  if (!is.null(sets[[1L]]$group)) {
    levels <- levels(factor(do.call(c, lapply(parts[[1L]], `[[`, "values"))))
    if (length(levels) != 2L) {
      stop_arg("group", "needs exactly two values in the chunks (", sets[[1L]]$group, " has ",
               length(levels), ")")
    }
    parts[[1L]] <- lapply(parts[[1L]], function(p) {
      v <- as.character(p$values)
      c(p, list(rows = c(sum(p$counts[v == levels[1L]]), sum(p$counts[v == levels[2L]]))))
    })
  }
  rows <- do.call(rbind, lapply(unlist(parts, recursive = FALSE), function(p) p$rows))
  list(parts = lapply(parts, function(pp) lapply(pp, `[[`, "rows")), levels = levels,
       names = first$names, d = first$d, m = as.double(sum(rows[, 1L])),
       n = if (ncol(rows) > 1L) as.double(sum(rows[, 2L])) else 0)
}

# Where each chunk's rows of each sample start in their sample: a list by
# set of matrices (chunk x sample) of offsets.
stat_chunk_offsets <- function(sv) {
  run <- c(0, 0)
  lapply(sv$parts, function(pp) {
    t(vapply(pp, function(r) {
      r <- c(r, 0)[1:2]
      at <- run
      run <<- run + r
      at
    }, numeric(2)))
  })
}

# The rows 'want[[k]]' (indices within sample k) of the two samples, or of
# a pair set's two variables (pair = TRUE: want[[1]] for both), fetched in
# one pass per set.
stat_chunk_fetch <- function(sets, sv, want, pair = FALSE) {
  off <- stat_chunk_offsets(sv)
  out <- list(NULL, NULL)
  for (k in seq_along(sets)) {
    per <- lapply(seq_along(sv$parts[[k]]), function(i) {
      r <- c(sv$parts[[k]][[i]], 0)[1:2]
      list(local = lapply(1:2, function(s) {
        w <- want[[s]]
        w[w > off[[k]][i, s] & w <= off[[k]][i, s] + r[s]] - off[[k]][i, s]
      }))
    })
    task <- function(raw, i, set, levels, names, local) {
      s <- stat_chunk_split(raw, set, levels, names)
      if (!is.null(set$pair)) return(list(s$x[local[[1L]], , drop = FALSE], s$y[local[[1L]], , drop = FALSE]))
      list(s[[1L]][local[[1L]], , drop = FALSE], s[[2L]][local[[2L]], , drop = FALSE])
    }
    got <- chunks_apply(sets[[k]]$chunks, task, list(set = sets[[k]], levels = sv$levels,
                                                     names = sv$names), "fetch", per_chunk = per)
    for (s in 1:2) out[[s]] <- rbind(out[[s]], do.call(rbind, lapply(got, `[[`, s)))
  }
  if (pair) names(out) <- c("x", "y")
  out
}

# The MMD on chunks after the survey: the map drawn as in memory (from the
# first sample's columns), then the splits, then one pass.
mmd_chunk_run <- function(sets, sv, rows, kernel, o, data.name) {
  m <- sv$m
  n <- sv$n
  map <- stat_chunk_map(rows, kernel, o, m)
  if (o$null == "permutation") {
    bits <- .Call(C_mmd_draw, m + n, m, o$B)
    r <- mmd_perm_result(stat_chunk_fold(sets, sv, map, o, bits), m, n, o$nthreads)
  } else {
    mo <- stat_chunk_moments(sets, sv, map, NULL, o)
    r <- mmd_gamma_result(mo[[1L]], mo[[2L]], m, n)
  }
  mmd_htest(r, kernel, "rff", map, o$null, o$B, m, n, data.name)
}

# The Fourier map of a statistic on chunks: stat_map()'s, whose shift-
# invariant maps look at the columns of their rows only.
stat_chunk_map <- function(rows, kernel, o, n) {
  map <- draw_feature_map(rows, kernel, o$D, o$opts$type, o$opts$sampling, o$opts$method,
                          o$opts$opts)
  map$input$n <- n
  map
}

# The MMD fold's sums over all chunks: each chunk's rows of each sample
# folded from the words of the splits that cover them (their place in the
# pooled rows: the first sample's, then the second's), added in chunk order.
stat_chunk_fold <- function(sets, sv, map, o, bits) {
  off <- stat_chunk_offsets(sv)
  start <- c(0, sv$m)
  acc <- NULL
  for (k in seq_along(sets)) {
    per <- lapply(seq_along(sv$parts[[k]]), function(i) {
      r <- c(sv$parts[[k]][[i]], 0)[1:2]
      list(folds = lapply(1:2, function(s) {
        if (r[s] == 0) return(NULL)
        g0 <- start[s] + off[[k]][i, s]
        w0 <- g0 %/% 64
        list(bits = .Call(C_mmd_bits_slice, bits, o$B, w0, (g0 + r[s] - 1) %/% 64),
             r0 = g0 - 64 * w0, N = g0 - 64 * w0 + r[s], m = sv$m - 64 * w0)
      }))
    })
    acc <- chunks_apply(sets[[k]]$chunks, mmd_chunk_task,
                        list(set = sets[[k]], levels = sv$levels, names = sv$names, map = map,
                             B = o$B, rows = stat_block_rows(max(sv$m, sv$n), map$n_features + o$B + 1L),
                             nthreads = o$nthreads),
                        "mmd_test", combine = chunks_add, init = acc, per_chunk = per)
  }
  acc
}

# A chunk's part of the MMD fold, on its worker (the in-memory fold).
mmd_chunk_task <- function(raw, i, set, levels, names, map, B, rows, nthreads, folds) {
  s <- stat_chunk_split(raw, set, levels, names)
  out <- NULL
  for (k in 1:2) {
    f <- folds[[k]]
    if (is.null(f)) next
    st <- .Call(C_mmd_fold_start, f$bits, f$r0, f$N, f$m, B, map$n_features)
    st <- mmd_fold_rows(st, s[[k]], map, rows, nthreads)
    out <- chunks_add(out, .Call(C_mmd_fold_finish, st))
  }
  out
}

# The feature moments (stat_feature_moments()) of each sample, or with a
# second map of the pair of variables side by side, over all chunks: each
# chunk's own, merged in chunk order.  The precision is chosen as in memory,
# from each sample's rows in all chunks.
stat_chunk_moments <- function(sets, sv, map, map2, o) {
  D <- map$n_features + if (is.null(map2)) 0L else map2$n_features
  single <- c(stat_single(o$precision, sv$m, D), stat_single(o$precision, sv$n, D))
  task <- function(raw, i, set, levels, names, map, map2, nthreads, single) {
    s <- stat_chunk_split(raw, set, levels, names)
    if (!is.null(map2)) {
      return(list(stat_feature_moments(map, s$x, nthreads, map2, s$y, single[1L])))
    }
    Map(function(x, sg) if (nrow(x)) stat_feature_moments(map, x, nthreads, single = sg),
        s, single[seq_along(s)])
  }
  add <- function(acc, part, i) {
    if (is.null(acc)) return(part)
    Map(stat_moments_add, acc, part)
  }
  acc <- NULL
  for (set in sets) {
    acc <- chunks_apply(set$chunks, task, list(set = set, levels = sv$levels, names = sv$names,
                                               map = map, map2 = map2, nthreads = o$nthreads,
                                               single = single),
                        "moments", combine = add, init = acc)
  }
  acc
}

# Two parts' centred cross products, means and rows merged (Chan, Golub
# and LeVeque's update, moments_merge()).
stat_moments_add <- function(a, b) {
  if (is.null(a)) return(b)
  if (is.null(b)) return(a)
  u <- moments_merge(a$n, a$zbar, b$n, b$zbar)
  list(zz = a$zz + b$zz + u$f * outer(u$delta, u$delta), zbar = u$mean, n = u$n)
}

# HSIC on chunks after the survey: the maps drawn as in memory, then the
# gamma null's moments in one pass, or (permutations) the rows fetched and
# the in-memory test.
hsic_chunk_run <- function(set, sv, got, kx, ky, o, data.name) {
  n <- sv$m
  map_x <- stat_chunk_map(got$x, kx, o, n)
  map_y <- stat_chunk_map(got$y, ky, o, n)
  null <- o$null
  B <- o$B
  if (null == "auto") {
    null <- hsic_auto_null(n, map_x$n_features, map_y$n_features, B)
    if (null == "gamma") B <- 0L
  }
  if (B > 0L) {
    check_allocation(n, sum(sv$d), "the rows of both variables (permutations need them together)",
                     arg = "x")
    all <- stat_chunk_fetch(list(set), sv, list(seq_len(n), integer()), pair = TRUE)
    r <- hsic_feature_permutations(all$x, all$y, map_x, map_y, B, o$nthreads)
  } else {
    mo <- stat_chunk_moments(list(set), sv, map_x, map_y, o)[[1L]]
    r <- hsic_moments_result(mo, n, map_x$n_features, map_y$n_features)
  }
  hsic_htest(r$statistic, r$null, r$moments, null, B, n, kx, ky, "rff", map_x, map_y, data.name)
}
