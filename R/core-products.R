# Folds over row blocks on the package's products (src/products.c): R
# drives the loop and computes each block, C adds it to the accumulators;
# C never calls back into R.

# Z'WZ, Z'WY, their weighted means and sums of squares, centred, over the
# blocks block(1), ..., block(nblocks), each list(z, y) or list(z, y, w):
# list(zz, zy, zbar, ybar, n, yy, rows), the same for any blocking after the
# first block and any thread count.  single: each block's centred features
# rounded to float and Z'WZ the float product summed in double (src/products.c,
# bochner_moments_add()), the same for any thread count; blockings then agree
# within that product's bound.
moments_fold <- function(block, nblocks, nthreads, single = FALSE) {
  state <- NULL
  for (i in seq_len(nblocks)) {
    b <- block(i)
    state <- .Call(C_moments_step, state, b[[1L]], b[[2L]],
                   if (length(b) > 2L) b[[3L]], single, nthreads)
  }
  .Call(C_moments_finish, state, nthreads)
}
