"""asctile-style code (pyasc's nightly: asc.experimental.asctile) written for ascrun: a script and a
test as an asctile user writes them, run only against a pool (`ascrun exec vadd.py`, `pytest
--ascrun-url URL tests/asctile_style`), as tests/test_asctile_exec.py does."""


def pytest_ignore_collect(collection_path, config):
    if not config.getoption("ascrun_url", default=None):
        return True  # the project's own test run: these need a pool
    return None
