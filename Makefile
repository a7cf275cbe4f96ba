# Developer entry points.  README.md has the two commands a new user needs.
R ?= R
RSCRIPT ?= Rscript

.PHONY: demo test install install-quick document check site site-check bench bench-quick bench-transform clean sanitize sanitize-openblas valgrind test-deps

# The plot goes to bochner-demo.png here (git-ignored, removed by make
# clean), or to BOCHNER_DEMO_PNG when that is set.
demo: install-quick
	BOCHNER_DEMO_PNG="$${BOCHNER_DEMO_PNG:-$(CURDIR)/bochner-demo.png}" \
	  $(RSCRIPT) -e 'demo("convergence", package = "bochner", ask = FALSE, echo = FALSE)'

test:
	bash .ci/run

# As CRAN users get it: build the tarball (which renders the vignettes), then
# install it, so that vignette() finds them.  Without pandoc, knitr or
# rmarkdown the vignettes cannot be rendered: then it says so and installs
# the package without them.
install:
	@tmp=$$(mktemp -d) && root=$$(pwd) && opts="" && \
	if ! command -v pandoc >/dev/null 2>&1 || \
	   ! $(RSCRIPT) -e 'quit(status = !all(sapply(c("knitr", "rmarkdown"), requireNamespace, quietly = TRUE)))' >/dev/null 2>&1; then \
	  echo "== pandoc, knitr or rmarkdown missing: installing without the vignettes"; opts="--no-build-vignettes"; \
	fi; \
	(cd "$$tmp" && $(R) CMD build $$opts "$$root" && \
	  $(R) CMD INSTALL --no-multiarch bochner_*.tar.gz); status=$$?; rm -rf "$$tmp"; exit $$status

# The package alone, without vignettes: quicker, for development.
install-quick:
	$(R) CMD INSTALL --preclean --no-multiarch .
	rm -f src/*.o src/*.so

document:
	$(RSCRIPT) -e 'roxygen2::roxygenise()'
	rm -f src/*.o src/*.so   # roxygen compiles at -O0 in place

check: test

# The pkgdown site (see _pkgdown.yml) in docs/, not committed: the package is
# built (without vignettes: pkgdown renders them itself) and installed into a
# private library, so the site shows this tree, not whatever is installed;
# any pkgdown warning fails the build (.ci/site-build.R).
SITE_DIR ?= docs
site:
	@tmp=$$(mktemp -d) && root=$$(pwd) && start=$$(date +%s) && \
	(cd "$$tmp" && $(R) CMD build --no-build-vignettes --no-manual "$$root" >build.log 2>&1 && \
	  mkdir lib && $(R) CMD INSTALL --no-multiarch -l lib bochner_*.tar.gz >install.log 2>&1) || \
	  { cat "$$tmp"/*.log; rm -rf "$$tmp"; exit 1; }; \
	echo "== bochner installed into a private library ($$(( $$(date +%s) - start )) s)"; \
	R_LIBS="$$tmp/lib$${R_LIBS:+:$$R_LIBS}" $(RSCRIPT) .ci/site-build.R "$(SITE_DIR)"; status=$$?; \
	rm -rf "$$tmp"; echo "== make site: $$(( $$(date +%s) - start )) s"; exit $$status

# Every page of the built site loaded in headless Chromium (.ci/site-check):
# titles, images, figures; screenshots into SITE_SHOTS.
SITE_SHOTS ?= /tmp/bochner-site-shots
site-check:
	python3 .ci/site-check "$(SITE_SHOTS)" "$(SITE_DIR)"

# The benchmarks (bench/README.md): every suite of bench/suites/ through the one
# entry point bench/run.R, each writing bench/results/<suite>.csv and the page
# bench/<suite>.md; bench-quick at reduced sizes (every suite, <= 15 minutes on
# 2 cores); one suite: `Rscript bench/run.R kmeans [--quick]`.
bench: install-quick
	$(RSCRIPT) bench/run.R

bench-quick: install-quick
	$(RSCRIPT) bench/run.R --quick

bench-transform: install-quick
	$(RSCRIPT) bench/run.R transform

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
	rm -rf src/*.o src/*.so bochner_*.tar.gz bochner.Rcheck bochner-demo.png docs

# The dependency step of .ci/run, offline on made-up packages (.ci/test-deps):
# what it reports as not installed must be what a fresh R process cannot load.
test-deps:
	bash .ci/test-deps
