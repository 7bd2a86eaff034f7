# Two set-up commands on a fresh machine with Python >= 3.10 and pip:
#   make demo   create .venv, install the package, run the quick-start analysis
#   make test   install the test extras (and the R extra when R is installed), run the suite
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip
PYTEST_ARGS ?=

.PHONY: demo test bench install install-test clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(PIP) install --quiet -e .
	touch $@

install: $(VENV)/.installed

demo: install
	$(BIN)/selective demo

# R packages that Debian lacks (selectiveInference) go into a library of the project's own,
# .r-lib (.ci/run makes it from the R source packages); when it exists R is pointed at it.
R_LIB := $(CURDIR)/.r-lib
ifneq ($(wildcard $(R_LIB)),)
ifeq ($(findstring $(R_LIB),$(R_LIBS)),)
export R_LIBS := $(R_LIB)$(if $(R_LIBS),:$(R_LIBS))
endif
endif

# The R extra (rpy2) is installed only where R itself is (R tests skip with a reason elsewhere).
install-test: install
	$(PIP) install --quiet -e '.[test]'
	@if command -v R >/dev/null 2>&1; then \
		echo "R found: installing the r extra (rpy2)"; \
		$(PIP) install --quiet -e '.[r]' || echo "warning: rpy2 did not install; R tests will skip"; \
	fi

# pytest exits 5 when it collected no test: treat that as the failure it is.
# Two worker processes (pytest-xdist): the suite's statistical tests are CPU-bound and CI has 2 cores.
PYTEST_WORKERS ?= 2

test: install-test
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) $(PYTEST_ARGS); status=$$?; \
	if [ $$status -eq 5 ]; then echo "no tests were collected"; exit 1; fi; exit $$status

bench: install
	$(PIP) install --quiet -e '.[bench]'
	$(BIN)/python benchmarks/run_all.py

# The documentation: API reference, theory sheet and the executed vignettes; warnings are errors.
.PHONY: docs
docs: install
	$(PIP) install --quiet -e '.[docs]'
	$(BIN)/python -m sphinx -W --keep-going -b html docs docs/_build/html
	@echo "documentation in docs/_build/html/index.html"

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
