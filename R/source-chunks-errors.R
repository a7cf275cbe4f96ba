# Errors of per-chunk work (R/chunks.R): which chunk failed, and, when a
# worker has no bochner in its library, what to do about it.

chunk_error_message <- function(err, what) {
  sprintf("%s: chunk %d%s failed: %s", what, err$i,
          if (is.null(err$label)) "" else sprintf(" (%s)", err$label),
          missing_bochner_advice(err$message))
}

# A worker that cannot find bochner in its library says only "there is no
# package called 'bochner'" (R translates it, and quotes by locale, so it
# is matched against R's own template): say what that means and what to do,
# naming the library this session loaded bochner from.  Other messages are
# returned as they are.
missing_bochner_advice <- function(msg) {
  templates <- unique(c("there is no package called %s",
                        gettext("there is no package called %s", domain = "R-base")))
  missing <- any(vapply(templates, matches_template, logical(1), msg = msg)) ||
    grepl("namespace", msg, fixed = TRUE)
  if (!missing || !grepl("bochner", msg, fixed = TRUE)) return(msg)
  lib <- dirname(system.file(package = "bochner"))
  sprintf(paste0(
    "bochner is not installed in the R library of the worker that ran it (%s). ",
    "Workers look for packages in their own .libPaths(); this session loaded bochner from ",
    "\"%s\". Install bochner in a library the workers use, or point them at this one: ",
    "plan(multisession, rscript_libs = c(\"%s\", \"*\")) for local workers, or ",
    ".libPaths(c(\"%s\", .libPaths())) (or library(bochner, lib.loc = \"%s\")) in the workers' ",
    "start-up (their .Rprofile, or parallel::clusterCall() on a cluster)"),
    msg, lib, lib, lib, lib)
}

# The error of a future that failed as a whole, naming its chunks (from
# its label) and, when its worker has no bochner, what to do about it.
chunks_future_error <- function(e, X, size, what) {
  msg <- conditionMessage(e)
  hit <- regmatches(msg, regexec("bochner-chunks-([0-9]+)", msg))[[1L]]
  which <- if (length(hit) == 2L) {
    j <- as.integer(hit[2L])
    idx <- vapply(X, `[[`, integer(1), "i")[((j - 1L) * size + 1L):min(length(X), j * size)]
    lab <- X[[(j - 1L) * size + 1L]]$label
    if (length(idx) == 1L) {
      sprintf("chunk %d%s", idx, if (is.null(lab)) "" else sprintf(" (%s)", lab))
    } else sprintf("chunks %d to %d", idx[1L], idx[length(idx)])
  } else {
    sprintf("chunks %d to %d", X[[1L]]$i, X[[length(X)]]$i)
  }
  advice <- missing_bochner_advice(msg)
  stop(sprintf("%s: %s failed%s: %s", what, which,
               if (identical(advice, msg)) " (its worker failed or could not load bochner)" else "",
               advice), call. = FALSE)
}
