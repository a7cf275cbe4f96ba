# Fits store their call (update() needs it), which names arguments such as
# nthreads and seed; comparisons of fits made with different calls compare
# everything else.
drop_call <- function(fit) {
  fit$call <- NULL
  fit
}
