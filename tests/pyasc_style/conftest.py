"""pyasc-style tests (the shape of pyasc's python/test: kernels/ and generalization/), written for
ascrun: they run only against a pool, `pytest --ascrun-url URL tests/pyasc_style`, as
tests/test_pytest_plugin.py does. pyasc's own files are not copied here: their licence (CANN
Open Software License) limits them to use with Huawei's processors."""
import pytest

from asc.runtime import config


def pytest_ignore_collect(collection_path, config):
    if not config.getoption("ascrun_url", default=None):
        return True  # the project's own test run: these need a pool
    return None


def pytest_addoption(parser):
    parser.addoption("--backend", default=config.Backend.Model, help="runtime backend for testing")
    parser.addoption("--platform", default=config.Platform.Ascend910B1, help="runtime platform for testing")


@pytest.fixture
def backend(request):
    return request.config.getoption("--backend")


@pytest.fixture
def platform(request):
    return request.config.getoption("--platform")
