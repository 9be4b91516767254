"""Packaging: the package-dir mapping works editable and as a wheel; bare ascrun needs only httpx, numpy and tenacity."""
import subprocess
import sys
import tomllib
import zipfile

import pytest

from conftest import ROOT

pytestmark = pytest.mark.kernel

PACKAGES = {"ascrun": "client", "ascrun.compiler": "shared/compiler", "ascrun.server": "server",
            "ascrun.server.workers": "server/workers"}


def test_editable_install_maps_every_package_to_its_folder():
    import importlib
    for package, folder in PACKAGES.items():
        module = importlib.import_module(package)
        assert module.__file__ == str(ROOT / folder / "__init__.py"), package


def test_the_packages_list_names_every_folder_it_ships():
    """Each folder under a package-dir mapping is a package of its own (the runtime's headers, the
    dashboard's files and the stand-in asc included): one left out is what setuptools warns about
    at every install."""
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = {".".join([package, *path.relative_to(ROOT / folder).parts])
               for package, folder in tool["package-dir"].items()
               for path in [ROOT / folder, *(ROOT / folder).rglob("*")] if path.is_dir() and path.name != "__pycache__"}
    assert sorted(tool["packages"]) == sorted(folders)


def test_the_build_prints_no_setuptools_warning(wheel):
    """A quiet pip (make demo's) shows the build backend's warnings, each naming setuptools' file: none."""
    log = (wheel.parent / "pip.log").read_text()
    assert "setuptools" not in log, log[:2000]


def _installed(requirement: str, tmp_path):
    """The python of a fresh venv with `requirement` pip-installed (by this environment's pip, which
    resolves and installs it as the venv's own would: the venv needs no pip of its own)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-compile",
                              requirement], capture_output=True, text=True)
    assert install.returncode == 0, install.stderr
    return python


@pytest.fixture(scope="module")
def wheel(ascrun_wheel):
    return ascrun_wheel  # the session's (tests/conftest.py): the venvs without pyasc install it


def test_wheel_ships_packages_and_runtime_headers(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for package in PACKAGES:
        assert package.replace(".", "/") + "/__init__.py" in names
    runtime = ROOT / "shared" / "compiler" / "targets" / "cpu" / "runtime"
    sources = {f"ascrun/compiler/targets/cpu/runtime/{path.relative_to(runtime)}" for path in runtime.rglob("*")
               if path.suffix in (".h", ".cpp")}
    assert "ascrun/compiler/targets/cpu/runtime/ascrun/launch/launch.cpp" in sources and sources <= names


def test_wheel_ships_the_dashboard(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    page = {f"ascrun/server/dashboard/{path.name}" for path in (ROOT / "server" / "dashboard").iterdir()}
    assert "ascrun/server/dashboard/index.html" in page and page <= names


def _run_and_list(python, check: str, cwd) -> tuple:
    """What `check` printed in the installed environment (it must succeed), and the distributions there."""
    out = subprocess.run([str(python), "-c", check], capture_output=True, text=True, cwd=cwd)
    assert out.returncode == 0, out.stderr
    deps = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "list", "--format=freeze"],
                          capture_output=True, text=True)
    assert deps.returncode == 0, deps.stderr
    return out.stdout, {line.split("==")[0].lower() for line in deps.stdout.split()}


def test_bare_wheel_imports_without_pyasc_or_fastapi(bare_python, tmp_path):
    python = bare_python  # the session's venv of the wheel alone (and pytest), as `pip install ascrun-*.whl` makes it
    check = ("import importlib.util, sys\n"
             "import ascrun, ascrun.compiler.bundle, ascrun.server, ascrun.server.workers\n"
             "assert importlib.util.find_spec('asc') is None and importlib.util.find_spec('fastapi') is None\n"
             "print(sorted(m for m in sys.modules if m.split('.')[0] in ('asc', 'fastapi', 'rq', 'redis')))\n"
             "print(ascrun.run_local.__name__, ascrun.KernelError.__mro__[1].__name__)\n")
    stdout, installed = _run_and_list(python, check, tmp_path)
    assert stdout.split("\n")[:2] == ["[]", "run_local AscrunError"]
    assert {"httpx", "numpy", "tenacity", "ascrun"} <= installed and "pyasc" not in installed


def test_server_only_install_creates_the_app_without_worker_packages(wheel, tmp_path):
    python = _installed(f"{wheel}[server]", tmp_path)
    check = ("import importlib.util, sys\n"
             "from ascrun.server.app import create_app\n"
             "app = create_app()\n"
             "assert '/v1/jobs' in app.openapi()['paths']\n"  # (FastAPI keeps an included router as one route)
             "from ascrun.server.routers.dashboard import FILES\n"
             "assert {'index.html', 'app.js'} <= FILES, FILES\n"
             "print([m for m in ('asc', 'seccomp', 'pyseccomp') if importlib.util.find_spec(m)])\n")
    stdout, installed = _run_and_list(python, check, tmp_path)
    assert stdout == "[]\n"
    assert {"fastapi", "uvicorn", "redis", "rq", "ascrun"} <= installed
    assert not {"pyasc", "pyseccomp"} & installed
