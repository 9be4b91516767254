# Two entry points, both from a fresh clone: `make demo` (the Add example on the cpu target)
# and `make test` (the whole suite). Each creates .venv and installs the project first.
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed-stamp

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[worker,server,dev]'
	touch $(STAMP)

.PHONY: demo test
demo: $(STAMP)
	$(VENV)/bin/python examples/add_remote.py

test: $(STAMP)
	$(VENV)/bin/python -m pytest -q
