import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent / "kernels"))


def load_module(path: Path, name: str | None = None):
    """Import a kernel file by path (examples are scripts, not packages)."""
    name = name or f"{path.stem}_{abs(hash(str(path)))}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session", autouse=True)
def _private_cache(tmp_path_factory):
    """run_local's on-disk cache goes to a fresh folder: tests start cold and leave $HOME alone."""
    mp = pytest.MonkeyPatch()
    mp.setenv("ASCRUN_CACHE_DIR", str(tmp_path_factory.mktemp("ascrun-cache")))
    yield
    mp.undo()


@pytest.fixture(scope="session")
def add_example():
    return load_module(ROOT / "examples" / "add.py", "example_add")


@pytest.fixture(scope="session")
def framework_example():
    return load_module(ROOT / "examples" / "add_framework.py", "example_add_framework")
