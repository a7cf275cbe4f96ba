# Chunked fits on mirai workers: future.mirai's plans (mirai_multisession,
# and mirai_cluster on daemons started by mirai::daemons()) give the fits
# of plan(sequential), bit for bit, and those equal the in-memory fits
# (helper-backends.R).

skip_if_no_mirai <- function() {
  skip_if_not_installed("future")
  skip_if_not_installed("future.apply")
  skip_if_not_installed("mirai")
  skip_if_not_installed("future.mirai")
  # the workers load the installed package
  skip_if(!nzchar(system.file(package = "bochner")), "bochner is not installed")
}

test_that("future.mirai plans and mirai daemons give the in-memory fits", {
  skip_if_no_mirai()
  fx <- backend_fixture("mirai")
  d <- fx$d
  dir <- fx$dir
  mem <- fx$mem
  ref <- fx$ref
  expect_backend_matches_memory(ref, mem, "sequential")

  # mirai_multisession: future.mirai starts its own local daemons
  future::plan(future.mirai::mirai_multisession, workers = 2)
  got <- backend_chunked_fits(d$files)
  expect_identical(got, ref)
  expect_backend_matches_memory(got, mem, "mirai_multisession")

  # daemons started with mirai::daemons() (as on a cluster with
  # mirai::cluster_config()), used through plan(future.mirai::mirai_cluster)
  future::plan(future::sequential)
  mirai::daemons(2)
  future::plan(future.mirai::mirai_cluster)
  got <- backend_chunked_fits(d$files)
  expect_identical(got, ref)
  expect_gt(mirai::status()$connections, 0)
  # a failing chunk on a daemon names its chunk
  bad <- data_chunks(c(d$files[1:2], file.path(dir, "missing.rds")))
  expect_error(rff_ridge(bad, y = "y", kernel = gaussian_kernel(1), D = 8),
               "chunk 3 \\(.*missing\\.rds\\) failed")
})
