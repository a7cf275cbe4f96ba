# Running per-chunk work (see R/source-chunks.R for data_chunks() itself):
# the handles, the read on a worker, the schedule under the user's plan and
# the fold of the results in chunk order.

# One handle per chunk: what a worker needs to read it (the table itself for
# a list, so that each worker receives only its own chunks).
chunk_handles <- function(chunks, which = seq_len(chunks$n)) {
  lapply(which, function(i) {
    switch(chunks$type,
      list = list(i = i, n = chunks$n, data = chunks$source[[i]], label = NULL),
      files = list(i = i, n = chunks$n, path = chunks$source[[i]], label = chunks$source[[i]]),
      list(i = i, n = chunks$n, label = NULL))
  })
}

# Read the chunk of a handle: a numeric matrix or data frame.
chunk_read <- function(handle, source, reader) {
  raw <- if (!is.null(handle$data)) {
    handle$data
  } else if (!is.null(handle$path)) {
    path <- handle$path
    if (!is.null(reader)) {
      reader(path)
    } else {
      if (!file.exists(path)) stop("file not found", call. = FALSE)
      switch(chunk_extension(path),
        rds = readRDS(path),
        csv = utils::read.csv(path, check.names = FALSE),
        stop("no reader for this file type; give data_chunks(reader =)", call. = FALSE))
    }
  } else {
    source(handle$i)
  }
  if (is.null(dim(raw)) && is.numeric(raw)) raw <- matrix(raw, ncol = 1L)
  if (!(is.matrix(raw) || is.data.frame(raw))) {
    stop("is a ", class(raw)[1L], ", not a matrix or data frame", call. = FALSE)
  }
  if (nrow(raw) < 1L) stop("has no rows", call. = FALSE)
  raw
}

# The work of one chunk, on a worker: read it, run task(raw, i, ...).  An
# error becomes a value naming the chunk, so that the session can stop with
# a clear message once all are back.  The task draws (set.seed() of its
# seeds) from the session's generators ('rng_kind', RNGkind()), whatever the
# worker's: mirai's daemons run L'Ecuyer-CMRG, under which the same seeds
# would draw other numbers.  The worker's generator comes back after.
chunk_worker <- function(handle, task, args, source, reader, progress, what, rng_kind = NULL) {
  if (!is.null(rng_kind) && !identical(RNGkind(), rng_kind)) {
    restore <- rng_restorer()
    on.exit(restore())
    suppressWarnings(RNGkind(rng_kind[1L], rng_kind[2L], rng_kind[3L]))
  }
  res <- tryCatch({
    raw <- chunk_read(handle, source, reader)
    if (!is.null(handle$extra)) args <- c(args, handle$extra)
    do.call(task, c(list(raw, handle$i), args))
  }, error = function(e) {
    structure(list(i = handle$i, label = handle$label, message = conditionMessage(e)),
              class = "bochner_chunk_error")
  })
  if (isTRUE(progress) && !inherits(res, "bochner_chunk_error")) {
    message(sprintf("bochner %s: chunk %d of %d done", what, handle$i, handle$n))
  }
  res
}

# Apply task(raw, i, <args>) to the chunks 'which' through future.apply (in
# this session without it), in waves of at most 'wave' chunks, folding each
# result into the accumulator with combine(acc, result, i) in chunk order;
# without 'combine', the results in a list, in chunk order.  The fold order
# is fixed, so the result is the same for every plan and wave size.
# 'per_chunk' (a list indexed by chunk number, of lists of arguments) sends
# each chunk's own arguments to its worker only.
chunks_apply <- function(chunks, task, args = list(), what, combine = NULL, init = NULL,
                         which = seq_len(chunks$n), wave = NULL, per_chunk = NULL) {
  if (is.null(wave)) wave <- chunks_wave()
  progress <- isTRUE(getOption("bochner.progress"))
  source <- if (chunks$type == "function") chunks$source else NULL
  acc <- init
  out <- if (is.null(combine)) vector("list", length(which)) else NULL
  starts <- seq(1L, length(which), by = wave)
  for (s in starts) {
    idx <- which[s:min(length(which), s + wave - 1L)]
    handles <- chunk_handles(chunks, idx)
    if (!is.null(per_chunk)) {
      for (j in seq_along(idx)) handles[[j]]$extra <- per_chunk[[idx[j]]]
    }
    res <- chunks_lapply(handles, chunk_worker, task = task, args = args, source = source,
                         reader = chunks$reader, progress = progress, what = what,
                         rng_kind = RNGkind())
    failed <- vapply(res, inherits, logical(1), "bochner_chunk_error")
    if (any(failed)) stop(chunk_error_message(res[[which(failed)[1L]]], what), call. = FALSE)
    for (j in seq_along(idx)) {
      if (is.null(combine)) {
        out[[s + j - 1L]] <- res[[j]]
      } else {
        acc <- combine(acc, res[[j]], idx[j])
      }
      res[j] <- list(NULL)
    }
  }
  if (is.null(combine)) out else acc
}

# lapply through future.apply when it is installed (under the user's plan).
# A future that fails as a whole (its worker died, or could not load
# bochner) is named by its label, which gives its chunk.
chunks_lapply <- function(X, FUN, ...) {
  # under plan(sequential) (the default) future would run the same code in
  # this session after a few ms of bookkeeping per chunk: run it directly
  if (!requireNamespace("future.apply", quietly = TRUE) || chunks_sequential()) {
    return(lapply(X, FUN, ...))
  }
  lapply_fn <- getExportedValue("future.apply", "future_lapply")
  size <- chunks_per_future()
  # the fits draw from this session's stream around the passes; a backend
  # that draws from it too (batchtools names its jobs with R's generator)
  # must not change the fit, so the stream is put back as it was
  genv <- globalenv()
  if (exists(".Random.seed", envir = genv, inherits = FALSE)) {
    rng <- get(".Random.seed", envir = genv, inherits = FALSE)
    on.exit(assign(".Random.seed", rng, envir = genv), add = TRUE)
  }
  tryCatch(
    # one future per chunk by default: the workers take chunks as they come
    # free; several per future (one batch job for several chunks) by option
    lapply_fn(X, FUN, ..., future.seed = NULL, future.packages = "bochner",
              future.chunk.size = size, future.label = "bochner-chunks-%d"),
    error = function(e) chunks_future_error(e, X, size, list(...)$what))
}

# Chunks per wave: enough to keep every worker busy several times over, and
# a bound (64) on the summaries held at once in this session.
chunks_wave <- function() {
  opt <- getOption("bochner.chunks_per_wave")
  if (!is.null(opt)) return(check_count(opt, "options(bochner.chunks_per_wave)"))
  as.integer(min(64, max(16, 4 * chunks_workers())))
}

chunks_sequential <- function() {
  inherits(getExportedValue("future", "plan")(), "sequential")
}

chunks_per_future <- function() {
  opt <- getOption("bochner.chunks_per_future")
  if (is.null(opt)) 1L else check_count(opt, "options(bochner.chunks_per_future)")
}

# Workers of the plan (Inf for schedulers such as future.batchtools).
chunks_workers <- function() {
  if (!requireNamespace("future", quietly = TRUE)) return(1)
  as.numeric(getExportedValue("future", "nbrOfWorkers")())
}

# Threads per worker: the user's nthreads, or by default one per worker
# under a plan with several workers (they share the cores), all otherwise.
chunks_threads <- function() {
  if (chunks_workers() > 1) 1L else bochner_threads()
}

# The combine of a pass whose chunks return sums: added in chunk order (a
# list of sums element by element).
chunks_add <- function(acc, part, i) {
  if (is.null(acc)) part else if (is.list(part)) Map(`+`, acc, part) else acc + part
}
