# Chunked fits through a real scheduler: future.batchtools::batchtools_slurm
# with the template that vignette("scale-out") prints
# (inst/templates/slurm.tmpl), on the Slurm cluster that answers `sinfo`.
# CI starts a one-node cluster on its own machine (.ci/slurm start, as root
# on Debian; .ci/run does it); elsewhere these tests skip, saying why.  The
# jobs run R on the cluster's nodes with the submitting environment (sbatch
# passes it on), so they load the bochner this session loaded (R_LIBS).

skip_if_no_slurm <- function() {
  skip_if_not_installed("future")
  skip_if_not_installed("future.apply")
  skip_if_not_installed("future.batchtools")
  skip_if(!nzchar(system.file(package = "bochner")), "bochner is not installed")
  how <- "bash .ci/slurm start (as root, on Debian) starts a one-node cluster"
  skip_if(!nzchar(Sys.which("sbatch")) || !nzchar(Sys.which("sinfo")) ||
            !nzchar(Sys.which("scontrol")),
          paste0("Slurm is not installed (no sbatch, sinfo, scontrol): ", how))
  # scontrol ping answers at once; sinfo waits for a controller that is down
  ping <- suppressWarnings(system2("scontrol", "ping", stdout = TRUE, stderr = TRUE))
  skip_if(!any(grepl("is UP", ping)),
          paste0("no Slurm controller answers (scontrol ping): ", how))
  state <- suppressWarnings(tryCatch(
    system2("timeout", c("10", "sinfo", "-h", "-o", "%t"), stdout = TRUE, stderr = FALSE),
    error = function(e) character()))
  skip_if(!any(grepl("^(idle|mix|alloc)", state)),
          paste0("no Slurm node is up (sinfo shows none idle or in use): ", how))
}

# Jobs still known to Slurm whose job script lies under 'dir' (the
# batchtools registries of this test), after waiting up to 'wait' seconds
# for them to leave.
slurm_jobs_left <- function(dir, wait = 30) {
  deadline <- Sys.time() + wait
  repeat {
    jobs <- suppressWarnings(system2("squeue", c("-h", "-o", "'%i %T %o'"), stdout = TRUE))
    ours <- grep(dir, jobs, fixed = TRUE, value = TRUE)
    if (!length(ours) || Sys.time() > deadline) return(ours)
    Sys.sleep(1)
  }
}

# Jobs submitted to the cluster so far (sdiag's counter).
slurm_submitted <- function() {
  out <- suppressWarnings(system2("sdiag", stdout = TRUE, stderr = FALSE))
  hit <- grep("^\\s*Jobs submitted:", out, value = TRUE)
  if (length(hit)) as.integer(sub(".*:\\s*", "", hit[1L])) else NA_integer_
}

# batchtools lists a user's jobs with squeue --user=$USER; where USER is
# unset (a container, a service) that lists none, and running jobs would
# count as expired
slurm_user <- function(envir = parent.frame()) {
  if (nzchar(Sys.getenv("USER"))) return(invisible())
  Sys.setenv(USER = Sys.info()[["effective_user"]])
  do.call(on.exit, list(quote(Sys.unsetenv("USER")), add = TRUE), envir = envir)
  invisible()
}

slurm_plan <- function() {
  future::plan(future.batchtools::batchtools_slurm,
               template = system.file("templates", "slurm.tmpl", package = "bochner"),
               resources = list(ncpus = 1, memory = "1G", walltime = 600,
                                # R CMD check puts an Rscript that refuses to run
                                # first on the PATH the jobs inherit
                                rscript = file.path(R.home("bin"), "Rscript")))
}

test_that("falkon, rff_ridge and kernel_kmeans through Slurm are the in-memory fits", {
  skip_if_no_slurm()
  fx <- backend_fixture("slurm")
  d <- fx$d
  dir <- fx$dir
  mem <- fx$mem
  ref <- fx$ref
  # one job per pass over the chunks (each pass is a round of jobs)
  opts <- options(future.cache.path = file.path(dir, "registry"), bochner.chunks_per_future = 4)
  on.exit(options(opts), add = TRUE)
  slurm_user()
  slurm_plan()
  t0 <- proc.time()[["elapsed"]]
  n0 <- slurm_submitted()
  got <- backend_chunked_fits(d$files)
  jobs <- slurm_submitted() - n0
  took <- proc.time()[["elapsed"]] - t0
  expect_identical(got, ref)
  expect_backend_matches_memory(got, mem, "Slurm")
  # the passes went through Slurm, one job each
  if (!is.na(jobs)) expect_gt(jobs, 10L)
  expect_length(slurm_jobs_left(dir), 0L)
  cat(sprintf(paste0("bochner-slurm: falkon, rff_ridge and kernel_kmeans on 4 chunks through ",
                     "batchtools_slurm (%s jobs, %.0f s): identical to plan(sequential), equal ",
                     "to the in-memory fits: %s\n"),
              jobs, took, if (identical(got, ref)) "yes" else "NO"), file = stderr())
})

test_that("a chunk that fails on a Slurm worker is named, and no job is left", {
  skip_if_no_slurm()
  dir <- tempfile("slurm")
  dir.create(dir)
  old <- future::plan()
  opts <- options(future.cache.path = file.path(dir, "registry"), bochner.chunks_per_future = 4,
                  bochner.progress = TRUE)
  on.exit({
    future::plan(old)
    options(opts)
    unlink(dir, recursive = TRUE)
  })
  d <- backend_data(dir)
  slurm_user()
  slurm_plan()
  # chunk 3's file becomes unreadable (to root too: a directory in its
  # place) once the survey has read all four chunks, so that the next pass
  # fails on the worker
  survey_done <- 0L
  broken <- FALSE
  err <- tryCatch(withCallingHandlers(
    suppressWarnings(rff_ridge(data_chunks(d$files), y = "y", kernel = gaussian_kernel(1), D = 8,
                               seed = 1)),
    message = function(m) {
      if (grepl("chunk [0-9]+ of 4 done", conditionMessage(m))) survey_done <<- survey_done + 1L
      if (survey_done == 4L && !broken) {
        unlink(d$files[3])
        dir.create(d$files[3])
        broken <<- TRUE
      }
      invokeRestart("muffleMessage")
    }), error = identity)
  expect_true(broken)
  expect_s3_class(err, "error")
  expect_match(conditionMessage(err), "rff_ridge: chunk 3 \\(.*piece-3\\.rds\\) failed")
  expect_length(slurm_jobs_left(dir), 0L)

  # a job whose R process dies: the future fails as a whole, named by its chunk
  options(bochner.chunks_per_future = 1, bochner.progress = FALSE)
  dies <- function(i) {
    if (i == 2) quit(save = "no", status = 1)
    data.frame(a = c(0.1, 0.5, 0.9), b = c(1, 0, 1), y = c(0, 1, 0))
  }
  expect_error(rff_ridge(data_chunks(dies, n = 3), y = "y", kernel = gaussian_kernel(1), D = 8),
               "rff_ridge: chunk 2 failed")
  expect_length(slurm_jobs_left(dir), 0L)
  cat("bochner-slurm: a chunk failing on a worker is named in the error; no job left in squeue\n",
      file = stderr())
})

test_that("mirai daemons started through sbatch (cluster_config) give the in-memory fits", {
  skip_if_no_slurm()
  skip_if_not_installed("mirai")
  skip_if_not_installed("future.mirai")
  fx <- backend_fixture("slurm")
  d <- fx$d
  dir <- fx$dir
  mem <- fx$mem
  ref <- fx$ref
  # two daemons, each a Slurm job, dialling back to this session; the
  # commands of vignette("scale-out")
  t0 <- proc.time()[["elapsed"]]
  mirai::daemons(2, url = mirai::host_url(), remote = mirai::cluster_config(
    command = "sbatch",
    options = paste("#SBATCH --job-name=bochner-mirai", "#SBATCH --mem=1G",
                    "#SBATCH --cpus-per-task=1", "#SBATCH --time=10",
                    sprintf("#SBATCH --output=%s/mirai-%%j.out", dir), sep = "\n"),
    rscript = file.path(R.home("bin"), "Rscript")))
  for (i in 1:240) {
    if (mirai::status()$connections >= 2L) break
    Sys.sleep(0.5)
  }
  expect_identical(mirai::status()$connections, 2L)
  future::plan(future.mirai::mirai_cluster)
  got <- backend_chunked_fits(d$files)
  expect_identical(got, ref)
  expect_backend_matches_memory(got, mem, "mirai on Slurm")
  # the daemons' jobs end with the daemons
  future::plan(future::sequential)
  mirai::daemons(0)
  jobs <- character()
  for (i in 1:60) {
    jobs <- suppressWarnings(system2("squeue", c("-h", "-n", "bochner-mirai", "-o", "%i"),
                                     stdout = TRUE))
    if (!length(jobs)) break
    Sys.sleep(0.5)
  }
  expect_length(jobs, 0L)
  cat(sprintf(paste0("bochner-slurm: the same fits on 2 mirai daemons started through sbatch ",
                     "(%.0f s): identical to plan(sequential), equal to the in-memory fits: %s\n"),
              proc.time()[["elapsed"]] - t0, if (identical(got, ref)) "yes" else "NO"),
      file = stderr())
})
