# Developer entry points.  README.md has the two commands a new user needs.
R ?= R
RSCRIPT ?= Rscript

.PHONY: demo test install document check bench bench-transform clean sanitize sanitize-openblas valgrind

demo: install
	$(RSCRIPT) -e 'demo("convergence", package = "bochner", ask = FALSE, echo = FALSE)'

test:
	bash .ci/run

install:
	$(R) CMD INSTALL --preclean --no-multiarch .
	rm -f src/*.o src/*.so

document:
	$(RSCRIPT) -e 'roxygen2::roxygenise()'
	rm -f src/*.o src/*.so

check: test

# Every benchmark; each records its figures under bench/ (see bench/README.md).
bench: install
	$(RSCRIPT) bench/transform.R
	$(RSCRIPT) bench/cosine.R
	$(RSCRIPT) bench/kmeans.R
	$(RSCRIPT) bench/polynomial.R
	$(RSCRIPT) bench/svm.R
	$(RSCRIPT) bench/threads.R
	$(RSCRIPT) bench/default_transform.R
	$(RSCRIPT) bench/maps.R

bench-transform: install
	$(RSCRIPT) bench/transform.R

# The test suite against an ASan+UBSan build (gcc), see .ci/sanitize.
sanitize:
	bash .ci/sanitize

# The same under OpenBLAS (threaded), chosen for that run only (BOCHNER_BLAS,
# see .ci/sanitize and .ci/blas-dir); the machine's default BLAS is untouched.
sanitize-openblas:
	BOCHNER_BLAS=openblas bash .ci/sanitize

# The test suite under valgrind memcheck, see .ci/valgrind.
valgrind:
	bash .ci/valgrind

clean:
	rm -rf src/*.o src/*.so bochner_*.tar.gz bochner.Rcheck bochner-demo.png
