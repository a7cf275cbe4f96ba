library(testthat)
library(bochner)

test_check("bochner")
