# The workflow table: R modelling habits (formula methods, missing values,
# update(), predict() conventions) on bochner's machines beside
# kernlab::ksvm(), e1071::svm() and glmnet.  The checks are defined once,
# in tests/testthat/helper-workflow.R, and tests/testthat/test-workflow.R
# checks the recorded table against them.
#
# Run from the package root, with bochner installed (writes bench/investigations/workflow.md):
#   Rscript bench/investigations/workflow.R
suppressPackageStartupMessages(library(bochner))
source("tests/testthat/helper-workflow.R")
sink("bench/investigations/workflow.md")

tab <- workflow_table()
labels <- vapply(workflow_adapters()[colnames(tab)], function(a) a$label, "")
version <- function(pkg) {
  if (requireNamespace(pkg, quietly = TRUE)) as.character(utils::packageVersion(pkg)) else "-"
}
texts <- vapply(workflow_behaviours[rownames(tab)], function(b) b$text, "")

cat("# Workflow table: R modelling conventions\n\n")
cat("Each row is a habit of R's modelling functions (`lm()`, `ksvm()`), checked by running it;\n")
cat("\"n/a\": the package has no formula interface.  The checks are in\n")
cat("`tests/testthat/helper-workflow.R`; `tests/testthat/test-workflow.R` checks this table.\n\n")
cat(sprintf("Versions: bochner %s, kernlab %s, e1071 %s, glmnet %s; %s.\n\n",
            version("bochner"), version("kernlab"), version("e1071"), version("glmnet"),
            R.version.string))
cat("Command: `Rscript bench/investigations/workflow.R` (from the package root; writes this file).\n\n")
cat("| behaviour |", paste(sprintf("`%s`", labels), collapse = " | "), "|\n")
cat("|---|", paste(rep("---", ncol(tab)), collapse = "|"), "|\n", sep = "")
for (r in rownames(tab)) cat("|", texts[[r]], "|", paste(tab[r, ], collapse = " | "), "|\n")
cat("\nNotes.\n\n")
cat("- The checks use `airquality` (a class `Temp > 80` from Ozone, Solar.R and Wind, which have\n")
cat("  missing values) and `iris`.  glmnet takes matrices only, so the formula rows do not apply\n")
cat("  and its missing-value rows are fits on `x` with NA.\n")
cat("- ksvm and e1071::svm have class weights but no case weights.  bochner's \"weights\" row\n")
cat("  depends on the machines' case weights (`weights =` in `rff_svm()`/`rff_ridge()`).\n")
cat("- ksvm stores no call, so `update()` cannot refit it; e1071's predict() drops incomplete\n")
cat("  rows unless told `na.action = na.exclude`.\n")
sink()
