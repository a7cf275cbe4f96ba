# The workflow table of bench/investigations/workflow.md (definitions and recorded values
# in helper-workflow.R) is what the packages do: bochner's columns always,
# the others where installed.

check_columns <- function(cols, rows = rownames(workflow_expected)) {
  tab <- workflow_table(workflow_adapters()[cols])
  expect_identical(tab[rows, cols, drop = FALSE], workflow_expected[rows, cols, drop = FALSE])
}

test_that("bochner's machines follow every convention of the table", {
  check_columns(c("rff_svm", "rff_ridge"), setdiff(rownames(workflow_expected), "weights"))
})

test_that("bochner's machines take case weights", {
  check_columns(c("rff_svm", "rff_ridge"), "weights")
})

test_that("kernlab::ksvm() behaves as the table records", {
  skip_if_not_installed("kernlab")
  check_columns("ksvm")
})

test_that("e1071::svm() behaves as the table records", {
  skip_if_not_installed("e1071")
  check_columns("svm")
})

test_that("glmnet behaves as the table records", {
  skip_if_not_installed("glmnet")
  check_columns("glmnet")
})
