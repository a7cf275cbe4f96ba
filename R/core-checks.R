# Shared argument validation.  Every check names the argument it refuses,
# so a user at the console knows what to fix.

stop_arg <- function(arg, ...) {
  stop(sprintf("'%s' %s", arg, paste0(...)), call. = FALSE)
}

# Coerce data to a finite double matrix (one row per observation).  For new
# data at predict time, 'na_ok' lets NA and NaN through (the caller predicts
# NA for those rows) and 'empty_ok' lets zero rows through; with
# sparse = TRUE a sparse matrix stays one (a dgCMatrix or dgRMatrix, R/sparse.R).
as_data_matrix <- function(x, arg = "x", na_ok = FALSE, empty_ok = FALSE, sparse = FALSE) {
  if (is_sparse_matrix(x)) {
    if (sparse) return(as_sparse_data_matrix(x, arg))
    stop_sparse(arg, "this function does not take")
  }
  if (is.data.frame(x)) {
    ok <- vapply(x, function(col) is.numeric(col) || is.logical(col), logical(1))
    if (!all(ok)) {
      stop_arg(arg, "has non-numeric columns (", paste(names(x)[!ok], collapse = ", "),
               "); convert them, or use the formula interface, which expands factors")
    }
    x <- as.matrix(x)
  } else if (is.null(dim(x)) && (is.numeric(x) || is.logical(x))) {
    x <- matrix(x, ncol = 1L, dimnames = list(names(x), NULL))
  }
  if (!is.matrix(x) || !(is.numeric(x) || is.logical(x))) {
    stop_arg(arg, "must be a numeric matrix, a data frame of numeric columns, or a numeric vector")
  }
  if (nrow(x) < 1L && !empty_ok) stop_arg(arg, "has no rows")
  if (ncol(x) < 1L) stop_arg(arg, "has no columns")
  if (storage.mode(x) != "double") storage.mode(x) <- "double"
  if ((!na_ok && anyNA(x)) || any(is.infinite(x))) {
    bad <- if (na_ok) is.infinite(x) else !is.finite(x)
    where <- which(bad, arr.ind = TRUE)[1L, ]
    stop_arg(arg, "contains NA, NaN or infinite values (the first at row ", where[1L],
             ", column ", where[2L], ")")
  }
  x
}

check_number <- function(x, arg, lower = -Inf, lower_open = FALSE, upper = Inf) {
  if (!is.numeric(x) || length(x) != 1L || is.na(x) || !is.finite(x)) {
    stop_arg(arg, "must be a single finite number")
  }
  if (x < lower || (lower_open && x == lower) || x > upper) {
    bound <- if (lower_open) sprintf("greater than %g", lower) else sprintf("at least %g", lower)
    if (is.finite(upper)) bound <- paste(bound, sprintf("and at most %g", upper))
    stop_arg(arg, "must be ", bound, " (got ", format(x), ")")
  }
  as.double(x)
}

check_positive <- function(x, arg) check_number(x, arg, lower = 0, lower_open = TRUE)

check_probability <- function(x, arg) {
  x <- check_number(x, arg)
  if (x <= 0 || x >= 1) stop_arg(arg, "must lie strictly between 0 and 1 (got ", format(x), ")")
  x
}

check_count <- function(x, arg, lower = 1, upper = .Machine$integer.max) {
  if (!is.numeric(x) || length(x) != 1L || is.na(x) || !is.finite(x)) {
    stop_arg(arg, "must be a single whole number")
  }
  if (x != round(x)) stop_arg(arg, "must be a whole number (got ", format(x), ")")
  if (x < lower) stop_arg(arg, "must be at least ", lower, " (got ", format(x), ")")
  if (x > upper) stop_arg(arg, "must be at most ", format(upper), " (got ", format(x), ")")
  as.integer(x)
}

check_flag <- function(x, arg) {
  if (!is.logical(x) || length(x) != 1L || is.na(x)) stop_arg(arg, "must be TRUE or FALSE")
  x
}

check_kernel <- function(kernel, arg = "kernel") {
  if (!inherits(kernel, "bochner_kernel")) {
    stop_arg(arg, "must be a kernel object such as gaussian_kernel(sigma = 1)",
             kernel_name_hint(kernel))
  }
  kernel
}

# '.who' names the function (e.g. "rff_svm()") for advice on arguments
# written out of kernlab's or e1071's habits (R/habits.R).
check_no_dots <- function(..., .who = NULL) {
  if (...length() > 0L) stop_unused_args(list(...), .who)
}

# Refuse an allocation of n x m doubles that cannot succeed, before trying:
# beyond R's dimension limit, or more than the guard allows (memory_allowed()).  'arg'
# names the argument whose size is to blame, so the message says what to
# change as well as how much memory it would take.
check_allocation <- function(n, m, what, arg = NULL) {
  fail <- function(...) {
    if (is.null(arg)) stop(paste0(...), call. = FALSE) else stop_arg(arg, "is too large: ", ...)
  }
  if (as.double(n) > .Machine$integer.max || as.double(m) > .Machine$integer.max) {
    fail(sprintf("%s would be %.0f x %.0f, beyond R's limit of 2^31 - 1 rows or columns",
                 what, n, m))
  }
  bytes <- 8 * as.double(n) * as.double(m)
  allowed <- memory_allowed()
  if (bytes > allowed) {
    fail(sprintf("%s (%.0f x %.0f) would need %s of memory; %s is allowed (see ?bochner_memory)",
                 what, n, m, format_bytes(bytes), format_bytes(allowed)))
  }
  invisible(bytes)
}

#' The memory guard
#'
#' Before allocating, every fit, map and test of the package ([rff_svm()],
#' [rff_ridge()], [rff_gp()], [falkon()], [kernel_kmeans()],
#' [random_features()], [nystrom_features()], the kernel statistics, and
#' their `predict()` methods, in memory and on chunks) estimates the largest
#' objects it will hold at once (features, \eqn{D \times D}{D x D} or
#' \eqn{n \times n}{n x n} systems, solver state) and refuses a computation
#' that would need more than the guard allows, with the estimate and the
#' argument to change (`D`, `m`, `x`, `newdata`).
#'
#' What the guard allows:
#' * `options(bochner.max_bytes = )`, when set: that many bytes, as given
#'   (`kernel_kmeans(method = "exact")` reads `bochner.max_gram_bytes`
#'   first).
#' * Otherwise a share, `getOption("bochner.memory_fraction", 0.5)`, of the
#'   memory this R process can still get: the least of what the system has
#'   available (Linux: `MemAvailable` in `/proc/meminfo`), what the process's
#'   control group (a container's or a batch job's memory limit) leaves, and
#'   what its address-space limit (`ulimit -v`) leaves.  The estimates
#'   count the objects a fit keeps, not R's transient copies (a transposed
#'   or subset matrix, a result being assembled, garbage not yet collected),
#'   which can double the peak: the default half leaves room for one copy.
#'   Where the system says nothing (not Linux, no limit), there is no guard
#'   beyond R's own.
#'
#' On Linux, large results (feature matrices, falkon's cached kernel matrix
#' and its \eqn{m \times m}{m x m} factor, from 4 MB) are placed on
#' transparent huge pages, which cost fewer page faults, except on a virtual
#' machine whose balloon device reports free memory to its host: there each
#' huge page is memory the host must supply afresh, and 4 KiB pages were
#' several times faster to fill.  The environment variable
#' `BOCHNER_HUGE_PAGES`, set before the package is loaded, forces the choice
#' (`0` never, `1` always).  Results are the same either way.
#'
#' @name bochner_memory
#' @examples
#' # a map that would need far more than any machine has is refused at once
#' try(random_features(matrix(rnorm(10), 5), D = 1e12))
#' # a smaller share of the available memory, for a shared machine
#' old <- options(bochner.memory_fraction = 0.25)
#' options(old)
NULL

# Refuse, before allocating anything, a computation whose estimated peak
# memory exceeds what the guard allows: one guard for every fit and map, so
# that a large 'D' or 'm' gets a message instead of the kernel's
# out-of-memory killer.  'parts' lists the big objects held at the same
# time, each as c(rows, columns) of doubles named by what it is; 'who' is
# the function; 'arg' the argument to blame; 'advice' what to do about it.
check_memory <- function(parts, who, arg, advice = sprintf("use a smaller '%s'", arg)) {
  if (as.double(length(parts)) == 0) return(invisible(0))
  doubles <- vapply(parts, function(p) prod(as.double(p)), numeric(1))
  bytes <- 8 * sum(doubles)
  limit <- memory_limit()
  allowed <- memory_allowed(limit)
  if (bytes <= allowed) return(invisible(bytes))
  big <- order(doubles, decreasing = TRUE)[seq_len(min(3L, length(parts)))]
  shown <- vapply(big, function(i) {
    sprintf("%s %s (%s)", names(parts)[i],
            paste(sprintf("%.0f", as.double(parts[[i]])), collapse = " x "),
            format_bytes(8 * doubles[i]))
  }, "")
  stop_arg(arg, "is too large: ", who, " would need ", format_bytes(bytes),
           " of memory at once (estimated: ", paste(shown, collapse = ", "),
           if (length(parts) > 3L) ", ...", "), but ", format_bytes(allowed), " is allowed",
           if (nzchar(attr(limit, "source"))) attr(limit, "source")
           else sprintf(" (%.0f%% of the %s available; options(bochner.memory_fraction) sets the share, options(bochner.max_bytes) the limit)",
                        100 * memory_fraction(), format_bytes(limit)),
           "; ", advice)
}

# What the guard lets one computation hold: a limit set by the user as it
# is; of the memory found available, only memory_fraction() of it.  The
# estimates count the big objects a fit holds, not R's transient copies
# (a transposed or subset matrix, a result being assembled, the garbage
# not yet collected), which can double the peak: half the available memory
# leaves room for one such copy.
memory_allowed <- function(limit = memory_limit()) {
  if (nzchar(attr(limit, "source"))) as.double(limit) else memory_fraction() * as.double(limit)
}

memory_fraction <- function() {
  f <- getOption("bochner.memory_fraction", 0.5)
  if (!is.numeric(f) || length(f) != 1L || is.na(f) || f <= 0 || f > 1) {
    stop_arg("options(bochner.memory_fraction)", "must be one number in (0, 1]")
  }
  f
}

# Bytes one computation may hold at once: the first of 'options' that is
# set (bytes), else the memory available now (available_memory()), else no
# limit.  Attribute "source" names the option used.
memory_limit <- function(options = "bochner.max_bytes") {
  for (o in options) {
    value <- getOption(o)
    if (!is.null(value)) {
      value <- check_positive(value, sprintf("options(%s)", o))
      return(structure(value, source = sprintf(" (options(%s))", o)))
    }
  }
  avail <- available_memory()
  structure(if (is.na(avail)) Inf else avail, source = "")
}

# The memory this process can still get: the least of what the system has
# available (Linux: MemAvailable), what its control group (a container's or
# a batch job's memory limit) leaves, and what the address-space limit
# (ulimit -v, RLIMIT_AS) leaves beyond the process's present size.  NA when
# none of them is known.
available_memory <- function() {
  found <- c(meminfo_available(), cgroup_available(), address_space_available())
  if (all(is.na(found))) NA_real_ else max(0, min(found, na.rm = TRUE))
}

# The first field of 'file' whose name matches 'key', as a number (the
# Linux /proc and /sys files: "Name: value kB" or "name value").
read_field <- function(file, key) {
  if (!file.exists(file)) return(NA_real_)
  lines <- tryCatch(readLines(file, warn = FALSE), error = function(e) character())
  hit <- grep(key, lines, value = TRUE)
  if (length(hit) == 0L) return(NA_real_)
  suppressWarnings(as.numeric(gsub("[^0-9]", "", hit[1L])))
}

meminfo_available <- function() 1024 * read_field("/proc/meminfo", "^MemAvailable:")

# cgroup v2 (memory.max, less the anonymous memory charged to it: the page
# cache is reclaimed before the limit bites), else v1.
cgroup_available <- function() {
  v2 <- "/sys/fs/cgroup/memory.max"
  if (file.exists(v2)) {
    max <- tryCatch(readLines(v2, n = 1L, warn = FALSE), error = function(e) "max")
    if (length(max) != 1L || identical(max, "max")) return(NA_real_)
    used <- read_field("/sys/fs/cgroup/memory.stat", "^anon ")
    return(as.numeric(max) - if (is.na(used)) 0 else used)
  }
  v1 <- "/sys/fs/cgroup/memory/memory.limit_in_bytes"
  max <- read_field(v1, ".")
  if (is.na(max) || max >= 2^60) return(NA_real_)   # v1 writes "no limit" as ~2^63
  used <- read_field("/sys/fs/cgroup/memory/memory.stat", "^total_rss ")
  max - if (is.na(used)) 0 else used
}

address_space_available <- function() {
  limit <- .Call(C_address_space_limit)
  if (!is.finite(limit)) return(NA_real_)
  size <- 1024 * read_field("/proc/self/status", "^VmSize:")
  limit - if (is.na(size)) 0 else size
}

# Case weights, one per row: finite, non-negative, not all zero.
check_weights <- function(w, n, arg = "weights") {
  if (!is.numeric(w) || !is.null(dim(w)) && !(is.matrix(w) && ncol(w) == 1L)) {
    stop_arg(arg, "must be a numeric vector, one weight per row")
  }
  w <- as.double(w)
  if (length(w) != n) stop_arg(arg, "has length ", length(w), " but the data have ", n, " row(s)")
  if (anyNA(w) || any(!is.finite(w))) stop_arg(arg, "must be finite (no NA)")
  if (any(w < 0)) stop_arg(arg, "must be non-negative")
  if (!any(w > 0)) stop_arg(arg, "are all zero")
  w
}

# Is this error R's refusal to allocate memory?  R translates that message,
# so it is matched against R's own templates in English and in the current
# language (each conversion such as %0.1f matching anything), not against
# one English phrase.
is_allocation_error <- function(e) {
  msg <- conditionMessage(e)
  templates <- c("cannot allocate vector of size %0.1f Gb",
                 "cannot allocate vector of size %0.1f Mb",
                 "cannot allocate vector of size %0.f Kb",
                 "cannot allocate memory block of size %0.1f Gb",
                 "cannot allocate memory block of size %0.f Tb",
                 "vector memory exhausted (limit reached?)")
  translated <- vapply(templates, function(t) gettext(t, domain = "R"), "", USE.NAMES = FALSE)
  any(vapply(unique(c(templates, translated)), matches_template, logical(1), msg = msg))
}

# Does msg read as the printf-style template, its conversions (%0.1f)
# standing for anything?  The literal pieces must appear in order.
matches_template <- function(template, msg) {
  pieces <- strsplit(template, "%[-+ #0-9.]*[a-zA-Z]")[[1L]]
  pieces <- pieces[nzchar(pieces)]
  rest <- msg
  for (p in pieces) {
    hit <- regexpr(p, rest, fixed = TRUE)
    if (hit < 0L) return(FALSE)
    rest <- substring(rest, hit + nchar(p))
  }
  length(pieces) > 0L
}

# One of a few strings (partial matching, like match.arg), or an error that
# names the argument; 'x' identical to 'choices' (the unset default) gives
# the first.  The one choice-matching helper of the package.
check_choice <- function(x, choices, arg) {
  if (identical(x, choices)) return(choices[1L])
  quoted <- paste0("\"", choices, "\"")
  allowed <- if (length(choices) == 2L) paste(quoted, collapse = " or ")
             else paste("one of", paste(quoted, collapse = ", "))
  if (!is.character(x) || length(x) != 1L || is.na(x)) stop_arg(arg, "must be ", allowed)
  hit <- pmatch(x, choices)
  if (is.na(hit)) stop_arg(arg, "must be ", allowed, " (got \"", x, "\")")
  choices[hit]
}

format_bytes <- function(bytes) {
  units <- c("bytes", "KB", "MB", "GB", "TB", "PB")
  p <- max(0, min(length(units) - 1, floor(log(max(bytes, 1), 1024))))
  sprintf("%.1f %s", bytes / 1024^p, units[p + 1])
}

# Run expr with the RNG seeded by `seed` (if not NULL), restoring the
# user's generator state afterwards.
with_seed <- function(seed, expr) {
  if (is.null(seed)) return(expr)
  seed <- check_count(seed, "seed", lower = -.Machine$integer.max)
  restore <- rng_restorer()
  on.exit(restore())
  set.seed(seed)
  expr
}

# R's generator state now, as a function that puts it back (and removes a
# state made since, when there was none): for code whose draws must not
# change the user's stream.
rng_restorer <- function() {
  genv <- globalenv()
  had <- exists(".Random.seed", envir = genv, inherits = FALSE)
  old <- if (had) get(".Random.seed", envir = genv, inherits = FALSE)
  function() {
    if (had) assign(".Random.seed", old, envir = genv)
    else if (exists(".Random.seed", envir = genv, inherits = FALSE)) rm(".Random.seed", envir = genv)
  }
}

# The size of a map: D for random features (2D columns for the pair map),
# m for Nystrom maps.
map_size <- function(map) if (is.null(map$D)) map$n_features else map$D

# A fitted feature map given to a fit ('map ='), for data with d columns.
check_feature_map <- function(map, d, arg = "map") {
  if (!inherits(map, "random_features")) {
    stop_arg(arg, "must be a feature map from random_features() or nystrom_features()")
  }
  if (!identical(as.integer(map$input$d), as.integer(d))) {
    stop_arg(arg, "was fitted on ", map$input$d, " column(s), but 'x' has ", d)
  }
  invisible(map)
}
