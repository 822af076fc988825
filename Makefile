# Two commands (README): `make report` runs the nightly conformance matrix,
# `make test` runs the tests. Both build .venv on first use.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/pip --disable-pip-version-check -q
STAMP  := $(VENV)/.installed
# tosa-tools ships top-level Python packages named `conformance`, `checker`,
# `generator`, ... and pins its own numpy: it lives in a virtualenv of its own
# and we only call its binaries (tosa-opt, tosa_reference_model). Not
# `pip --target`: there its console shims overwrite the native binaries of the
# same names.
TOSA_TOOLS := $(VENV)/tosa-tools
TOSA_TOOLS_VERSION := 2026.8.0

.PHONY: install test report clean

install: $(STAMP)

$(STAMP): pyproject.toml Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	# torch first and pinned: any other torch would pull the CUDA build (gigabytes).
	$(PIP) install torch==2.13.0
	$(PIP) install -e '.[dev,ray]'
	test -f $(TOSA_TOOLS)/pyvenv.cfg || { rm -rf $(TOSA_TOOLS) && $(PYTHON) -m venv $(TOSA_TOOLS); }
	$(TOSA_TOOLS)/bin/pip --disable-pip-version-check -q install tosa-tools==$(TOSA_TOOLS_VERSION)
	scripts/install-browser
	touch $(STAMP)

test: $(STAMP)
	$(BIN)/pytest -n 2 tests
	# The golden backend must pass every registered case.
	$(BIN)/pytest --backend=eager -n 2 -q

report: $(STAMP)
	$(BIN)/conformance nightly

clean:
	rm -rf $(VENV) .conformance-cache build *.egg-info
