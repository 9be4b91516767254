# Two entry points, both from a fresh clone: `make demo` (the Add example on the cpu target)
# and `make test` (the whole suite). Each creates .venv and installs the project first: the demo
# what it runs (the service and a cpu worker), the tests the dev extras too (torch, Playwright...).
PYTHON ?= python3
VENV := .venv
DEMO_STAMP := $(VENV)/.demo-stamp
STAMP := $(VENV)/.installed-stamp
# setuptools' one note on an editable install of a package-dir mapping (it imports through a finder,
# as intended here); any other warning of the build still shows
QUIET_EDITABLE := PYTHONWARNINGS='ignore:Editable installation'

$(VENV)/bin/pip:
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip

$(DEMO_STAMP): pyproject.toml | $(VENV)/bin/pip
	$(QUIET_EDITABLE) $(VENV)/bin/pip install --quiet -e '.[worker,server]'
	touch $@

$(STAMP): pyproject.toml | $(VENV)/bin/pip
	$(QUIET_EDITABLE) $(VENV)/bin/pip install --quiet -e '.[worker,server,dev]'
	touch $@

# The dashboard's browser tests drive Debian's chromium (Playwright's own browser downloads are not
# used): installed when missing and we are root with apt-get; without it those tests skip, saying why.
CHROMIUM := /usr/bin/chromium

.PHONY: demo test test-pythons test-nightly chromium
demo: $(DEMO_STAMP)
	$(VENV)/bin/python examples/add_remote.py

chromium:
	@if [ ! -x $(CHROMIUM) ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing Debian's chromium for the dashboard's browser tests"; \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			chromium >/dev/null; } || echo "chromium could not be installed: the dashboard's browser tests will skip"; \
	fi

# Two processes (pytest-xdist); each test file runs whole in one, so a module's stack starts once.
# Then the Python-facing tests on the other Pythons pyasc supports.
test: $(STAMP) chromium
	$(VENV)/bin/python -m pytest -q -n 2 --dist loadfile
	$(MAKE) --no-print-directory test-pythons
	$(MAKE) --no-print-directory test-nightly

# The bundle's namespace and pyasc's frontend change with the interpreter (3.12 imports where 3.11
# does not): their tests run on 3.10 and 3.12 too (3.11 is .venv's), from pyenv. In process only:
# a jail runs the system python3.X of the worker's version (pyenv's is under /root, which the jail's
# user cannot read), and Debian 12 has 3.11 alone.
OTHER_PYTHONS := 3.10 3.12
PYTHON_FACING_TESTS := tests/test_bundle.py tests/test_frontend.py

.venv-%/.installed-stamp: pyproject.toml
	"$(VENV_PYTHON)" -m venv .venv-$*
	.venv-$*/bin/pip install --quiet --upgrade pip
	.venv-$*/bin/pip install --quiet -e '.[worker,server]' 'pytest>=8' 'pytest-xdist==3.8.0'
	touch $@

# Each version's Python: pyenv's newest of it, else python3.X on PATH; a version not found is
# skipped, saying so (on this project's machines pyenv has them all).
test-pythons:
	@for version in $(OTHER_PYTHONS); do \
		latest="$$(pyenv latest $$version 2>/dev/null)"; \
		python="$${latest:+$$(pyenv prefix $$latest 2>/dev/null)/bin/python}"; \
		[ -x "$$python" ] || python="$$(command -v python$$version)"; \
		if [ -z "$$python" ] || ! "$$python" -c pass 2>/dev/null; then \
			echo "Python $$version not found (pyenv, python$$version): its Python-facing tests are skipped"; \
			continue; \
		fi; \
		$(MAKE) --no-print-directory .venv-$$version/.installed-stamp VENV_PYTHON="$$python" || exit 1; \
		echo "Python-facing tests on Python $$version"; \
		.venv-$$version/bin/python -m pytest -q -n 2 -p no:cacheprovider -m "not service" $(PYTHON_FACING_TESTS) \
			|| exit 1; \
	done

# pyasc's nightly (the `nightly` extra, distribution pyasc-dev) in place of pyasc 1.1.1: the tests that
# drive pyasc in process (the frontend, the bundle's namespace, the cpu runs) run against it too; the
# service's tests stay on .venv's pyasc 1.1.1, so that make test keeps within its time, but for
# asctile's, bfloat16 tensors' and the Ascend 950's (the nightly's alone; they skip on 1.1.1), which run
# whole here.
NIGHTLY_TESTS := $(PYTHON_FACING_TESTS) tests/test_cpu_run.py tests/test_asctile.py tests/test_bf16_args.py \
	tests/test_soc950.py tests/test_vf_fusion.py tests/test_cann.py tests/test_python_lines.py tests/test_c310_api.py \
	tests/test_vector_math_ext.py tests/test_c310_dtypes.py
NIGHTLY_SERVICE_TESTS := tests/test_asctile.py tests/test_bf16_args.py tests/test_asctile_exec.py tests/test_soc950.py
# pyasc's asc2 tests ported to asctile (tests/asc2_port), on both SOCs
NIGHTLY_TESTS += tests/asc2_port
# where the nightly writes another C++ than 1.1.1 (its bool arguments, MulCast's isSetMask, MmadParams'
# unit_flag), about 19 s together; the rest of the in-process suite passes on the nightly too (about 9
# minutes on two processes: `.venv-nightly/bin/python -m pytest -n 2 --dist loadfile -m "not service" tests`)
NIGHTLY_TESTS += tests/test_vector_gather.py tests/test_vector_bilinear.py tests/test_vector_fused.py \
	tests/test_cube_ops.py
NIGHTLY_SERVICE_TESTS += tests/asc2_port/test_through_the_pool.py

# --clear: on a venv made before, the first install would put pyasc 1.1.1's files over the nightly's
# (one `asc` package) and the uninstall then delete them, leaving an `asc` without asc.language.
# The dev extras as .venv's (torch: torch.bfloat16 tensors run only on the nightly, which has a bfloat16
# dtype), so that any test file runs here too.
.venv-nightly/.installed-stamp: pyproject.toml
	$(PYTHON) -m venv --clear .venv-nightly
	.venv-nightly/bin/pip install --quiet --upgrade pip
	$(QUIET_EDITABLE) .venv-nightly/bin/pip install --quiet -e '.[worker,server,dev]'
	.venv-nightly/bin/pip uninstall --quiet --yes pyasc
	$(QUIET_EDITABLE) .venv-nightly/bin/pip install --quiet -e '.[nightly,bfloat16]'
	touch $@

test-nightly: .venv-nightly/.installed-stamp
	@echo "pyasc-facing tests on pyasc's nightly"
	.venv-nightly/bin/python -m pytest -q -n 2 -p no:cacheprovider -m "not service" $(NIGHTLY_TESTS)
	.venv-nightly/bin/python -m pytest -q -p no:cacheprovider -m service $(NIGHTLY_SERVICE_TESTS)
