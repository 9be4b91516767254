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

# The dashboard's browser tests drive Debian's chromium (Playwright's own browser downloads are not
# used): installed when missing and we are root with apt-get; without it those tests skip, saying why.
CHROMIUM := /usr/bin/chromium

.PHONY: demo test chromium
demo: $(STAMP)
	$(VENV)/bin/python examples/add_remote.py

chromium:
	@if [ ! -x $(CHROMIUM) ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing Debian's chromium for the dashboard's browser tests"; \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			chromium >/dev/null; } || echo "chromium could not be installed: the dashboard's browser tests will skip"; \
	fi

# Two processes (pytest-xdist); each test file runs whole in one, so a module's stack starts once.
test: $(STAMP) chromium
	$(VENV)/bin/python -m pytest -q -n 2 --dist loadfile
