# A suite's rows and page.  bench_start() reads the command line and the
# machine; bench_add() records one fit and repetition; bench_finish() writes
# <out>/results/<suite>.csv (one row per fit and repetition, replaced by each
# run: history is in git) and <out>/<suite>.md, generated from that file, whose
# first screen is the current table (figure, peer, ratio, CPU, BLAS, threads,
# load, command).  <out> is bench/ unless --out=DIR.

.bench <- new.env()

# The value of --name=VALUE on the command line (with split, its comma-separated
# parts), or 'default' when it is not there.  The suites' and the investigations'.
bench_arg <- function(name, default, split = FALSE, args = commandArgs(trailingOnly = TRUE)) {
  hit <- grep(paste0("^--", name, "="), args, value = TRUE)
  if (!length(hit)) return(default)
  value <- sub(paste0("^--", name, "="), "", hit[1L])
  if (split) strsplit(value, ",")[[1L]] else value
}

# Command line of a suite: --quick (reduced sizes, the `make bench-quick` run),
# --tiny (the smallest, for tests/testthat/test-bench.R), --reps=N, --out=DIR,
# --render (no fit: the page regenerated from <out>/results/<suite>.csv, its size,
# load and commit, e.g. after a change of the headline or the page).
# reps: repetitions per size (full, quick, tiny); --reps=N overrides.
bench_start <- function(suite, title, reps = c(full = 3L, quick = 2L, tiny = 1L),
                        args = commandArgs(trailingOnly = TRUE)) {
  opt <- function(name, default) bench_arg(name, default, args = args)
  size <- if ("--tiny" %in% args) "tiny" else if ("--quick" %in% args) "quick" else "full"
  .bench$out <- opt("out", "bench")
  .bench$render <- NULL
  if ("--render" %in% args) {
    .bench$render <- utils::read.csv(file.path(.bench$out, "results", paste0(suite, ".csv")),
                                     stringsAsFactors = FALSE,
                                     # a commit of digits and one 'e' (21340e8) reads as a number
                                     colClasses = c(more = "character", commit = "character"))
    size <- .bench$render$size[1L]   # (repetitions: the suite's, or the run's --reps=N again)
  }
  .bench$suite <- suite
  .bench$title <- title
  .bench$size <- size
  .bench$reps <- as.integer(opt("reps", reps[[size]]))
  # (--render: the CSV's rows, for suites whose headline reads them)
  .bench$rows <- if (is.null(.bench$render)) list() else
    lapply(seq_len(nrow(.bench$render)), function(i) .bench$render[i, , drop = FALSE])
  .bench$started <- Sys.time()
  .bench$machine <- bench_machine()
  .bench$command <- paste0("Rscript bench/run.R ", suite,
                           c(full = "", quick = " --quick", tiny = " --tiny")[[size]])
  m <- .bench$machine
  if (!is.null(.bench$render)) {
    r <- .bench$render[1L, ]
    m$load_start <- r$load_start; m$load_end <- r$load_end; m$commit <- r$commit; m$bochner <- r$bochner
    .bench$machine <- m
  }
  cat(sprintf("== suite %s (%s sizes, %d repetitions): %s, %d cores; %s; load %s; bochner %s (%s)\n",
              suite, size, .bench$reps, m$cpu, m$cores, m$blas, m$load_start, m$bochner, m$commit))
  invisible(list(size = size, quick = size != "full", tiny = size == "tiny", reps = .bench$reps))
}

# Pick by size: bench_size(full, quick, tiny = quick).
bench_size <- function(full, quick, tiny = quick) {
  switch(.bench$size, full = full, quick = quick, tiny = tiny)
}

# One fit and repetition.  res: a row of bench_fit(), bench_time() or
# bench_sklearn() (NULL: nothing recorded, e.g. a peer skipped).  metric /
# value: the figure of merit when res does not carry one; other columns of
# res (the score's extra figures) go to `more` as name=value pairs.
bench_add <- function(question, case, method, role = c("bochner", "peer", "baseline"),
                      res, rep = 1L, metric = NULL, value = NULL) {
  role <- match.arg(role)
  if (is.null(res) || !is.null(.bench$render)) return(invisible())
  base <- c("elapsed", "cpu", "peak_mb", "blas", "threads", "status", "runs", "metric", "value")
  extra <- setdiff(names(res), base)
  more <- if (length(extra)) {
    paste(sprintf("%s=%s", extra, vapply(extra, function(k) format(signif(as.numeric(res[[k]][1L]), 5)), "")),
          collapse = ";")
  } else ""
  row <- data.frame(
    suite = .bench$suite, size = .bench$size, question = question, case = case,
    method = method, role = role, rep = rep,
    metric = metric %||% (if (!is.null(res$metric)) as.character(res$metric[1L]) else "none"),
    value = value %||% (if (!is.null(res$value)) as.numeric(res$value[1L]) else NA_real_),
    elapsed = res$elapsed[1L], cpu = res$cpu[1L], peak_mb = res$peak_mb[1L],
    blas = res$blas[1L], threads = res$threads[1L], status = res$status[1L], more = more,
    stringsAsFactors = FALSE)
  .bench$rows[[length(.bench$rows) + 1L]] <- row
  cat(sprintf("  %-22s %-26s %-22s %s = %s  %.3f s (CPU %.3f)  peak %s MB  %s, %s thr  %s\n",
              question, case, method, row$metric, format(signif(row$value, 4)), row$elapsed,
              row$cpu, format(round(row$peak_mb, 1)), row$blas, row$threads, row$status))
  invisible(row)
}

# a ratio to two decimals, below 0.1 to two significant digits (0.0042, not 0.00)
bench_ratio <- function(x) formatC(x, format = if (abs(x) < 0.1) "fg" else "f", digits = 2)

bench_fmt <- function(v, digits = 3) {
  ifelse(is.na(v), "-", ifelse(v != 0 & abs(v) < 1e-3, formatC(v, format = "e", digits = digits - 1), ifelse(abs(v) >= 100, formatC(v, format = "f", digits = 0),
                               formatC(signif(v, digits), format = "fg", digits = digits, flag = "#"))))
}

# Medians over repetitions, one row per question, case, method, BLAS and threads.
bench_summary <- function(r) {
  key <- paste(r$question, r$case, r$method, r$blas, r$threads, sep = "\r")
  do.call(rbind, lapply(split(r, factor(key, unique(key))), function(s) {
    med <- function(v) if (all(is.na(v))) NA_real_ else stats::median(v, na.rm = TRUE)
    data.frame(s[1L, c("question", "case", "method", "role", "metric", "blas", "threads")],
               value = med(s$value), elapsed = med(s$elapsed), cpu = med(s$cpu),
               peak_mb = med(s$peak_mb), reps = nrow(s),
               status = paste(unique(sub("^failed \\(exit status 143\\)$", "stopped (SIGTERM)", s$status)),
                              collapse = ", "), more = s$more[nrow(s)],
               stringsAsFactors = FALSE)
  }))
}

# headline: list of figures, each list(figure, question, case, ours, peer = NULL,
#   measure = "elapsed" | "cpu" | "value" | "peak_mb", threads = NULL, blas = NULL
#   (the rows whose BLAS name starts with it: "OpenBLAS" or "OpenBLAS 0.3.21")):
#   the median of the bochner method's measure, the peer's, and bochner / peer.
# about: lines of markdown saying what the suite measures (after the table).
bench_finish <- function(headline = list(), about = character()) {
  m <- .bench$machine
  csv <- file.path(.bench$out, "results", paste0(.bench$suite, ".csv"))
  if (is.null(.bench$render)) {
    rows <- do.call(rbind, .bench$rows)
    if (is.null(rows)) stop("suite ", .bench$suite, " recorded no rows")
    load_end <- bench_load()
    minutes <- as.numeric(difftime(Sys.time(), .bench$started, units = "mins"))
    for (k in c("value", "elapsed", "cpu", "peak_mb")) rows[[k]] <- signif(rows[[k]], 5)
    rows$cpu_model <- m$cpu
    rows$load_start <- m$load_start
    rows$load_end <- load_end
    rows$bochner <- m$bochner
    rows$commit <- m$commit
    rows$date <- format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC")
    dir.create(file.path(.bench$out, "results"), showWarnings = FALSE, recursive = TRUE)
    utils::write.csv(rows, csv, row.names = FALSE)
    took <- sprintf("run took %.1f minutes", minutes)
  } else {
    rows <- .bench$render   # the CSV is the record: read, not rewritten
    load_end <- m$load_end
    took <- "page regenerated from the CSV (`--render`)"
  }

  s <- bench_summary(rows)
  pick <- function(method, h) {
    k <- s[s$question == h$question & s$case == h$case & s$method == method, , drop = FALSE]
    if (!is.null(h$threads)) k <- k[k$threads %in% h$threads, , drop = FALSE]
    if (!is.null(h$blas)) k <- k[!is.na(k$blas) & startsWith(k$blas, h$blas), , drop = FALSE]
    k[!is.na(k[[h$measure %||% "elapsed"]]), , drop = FALSE][1L, ]
  }
  load <- sprintf("%s at the start, %s at the end", m$load_start, load_end)
  hl <- vapply(headline, function(h) {
    meas <- h$measure %||% "elapsed"
    o <- pick(h$ours, h)
    ov <- o[[meas]]
    if (is.null(h$peer)) {
      p <- "-"; pv <- NA_real_
    } else {
      # the peer under the same BLAS as bochner's row when the figure names none (a
      # suite that runs both BLAS has both rows; ratios across BLAS are not ratios)
      pr <- if (is.null(h$blas) && !is.na(o$blas)) pick(h$peer, utils::modifyList(h, list(blas = o$blas)))
      if (is.null(pr) || is.na(pr[[meas]])) pr <- pick(h$peer, h)
      # a peer that calls no BLAS may have run under one BLAS only
      if (is.na(pr[[meas]])) pr <- pick(h$peer, utils::modifyList(h, list(blas = NULL)))
      pv <- pr[[meas]]
      p <- if (is.na(pv)) sprintf("%s: not measured in this run", h$peer) else sprintf("%s %s", h$peer, bench_fmt(pv))
    }
    sprintf("| %s | %s | %s | %s | %s | %s | %s | %s | `%s` |", h$figure, bench_fmt(ov), p,
            if (is.na(pv) || is.na(ov)) "-" else bench_ratio(ov / pv),
            m$cpu, if (is.na(o$blas)) "-" else o$blas, if (is.na(o$threads)) "-" else o$threads,
            paste0(m$load_start, " / ", load_end), .bench$command)
  }, "")
  size_line <- switch(.bench$size,
    full = "Full sizes.",
    quick = paste("**Quick sizes** (`--quick`, `make bench-quick`): reduced data and repetitions, a check",
                  "that every measurement runs; do not quote these figures, rerun at full size."),
    tiny = "**Tiny sizes** (`--tiny`, the harness test): not figures at all.")
  page <- c(
    paste0("# ", .bench$title), "",
    sprintf("Generated by `%s` from `bench/results/%s.csv`; do not edit (history is in git). %s",
            .bench$command, .bench$suite, size_line),
    sprintf("Median of %d repetition(s); ratio = bochner / peer (below 1: bochner is faster or smaller).",
            .bench$reps),
    # the load is recorded, not judged: the suite's own 2-thread fits raise it
    # to about 2, so only its start says whether other work was running
    sprintf("Load average %s (1/5/15 min; the suite's own 2-thread fits raise it).", load), "",
    "| figure | bochner | peer | ratio | CPU | BLAS | threads | load (start / end) | command |",
    "|---|---:|---|---:|---|---|---:|---|---|",
    hl, "",
    if (length(about)) c(about, ""),
    "## Machine and run", "",
    sprintf("- CPU: %s (%s; %s), %d cores, %s GiB", m$cpu, m$caches, m$simd, m$cores, m$ram_gb),
    sprintf("- BLAS of the suite's process: %s (LAPACK %s); each row names its own process's BLAS", m$blas, m$lapack),
    sprintf("- R %s; bochner %s from %s; commit %s", m$r, m$bochner, m$bochner_lib, m$commit),
    sprintf("- load average %s; %s; recorded %s", load, took, rows$date[1L]),
    "- elapsed and CPU (user + system) seconds of the call alone; peak = resident high-water mark",
    "  (VmHWM) during the fit beyond the mark before it, for fits in a fresh process (`-` otherwise)",
    "", "## Every measurement", "",
    "| question | case | method | role | figure | elapsed (s) | CPU (s) | peak (MB) | BLAS | threads | reps | status | more |",
    "|---|---|---|---|---:|---:|---:|---:|---|---:|---:|---|---|",
    sprintf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d | %s | %s |", s$question, s$case,
            s$method, s$role, ifelse(s$metric == "none", "-", paste(s$metric, bench_fmt(s$value, 4))),
            bench_fmt(s$elapsed), bench_fmt(s$cpu), bench_fmt(s$peak_mb), s$blas,
            ifelse(is.na(s$threads), "-", s$threads), s$reps, s$status, gsub(";", "; ", s$more)),
    "")
  skips <- sort(ls(bench_skips))
  if (length(skips)) page <- c(page, "## Skipped", "", paste("-", skips), "")
  md <- file.path(.bench$out, paste0(.bench$suite, ".md"))
  writeLines(page, md)
  cat(sprintf("== suite %s: %d rows -> %s, %s (%s; load %s)\n", .bench$suite,
              nrow(rows), csv, md, took, load))
  invisible(rows)
}

# The head of an investigation's page run on two threads: its title, the command that
# wrote it, the machine and BLAS, the load averages at start (start_load) and now, a note
# on the columns and the table.
bench_page_head <- function(title, script, start_load, note, tab) {
  c(paste("#", title), "", sprintf("Generated by `Rscript %s`.", script), "",
    sprintf("Machine: %s, %s, two threads; load average at start %s, at end %s.",
            bench_lscpu()$cpu, bench_blas(), start_load, bench_load()), "",
    note, "", knitr::kable(tab, format = "pipe", row.names = FALSE), "")
}
