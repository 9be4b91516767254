"""Every test file of pyasc's asc2 tests has its port here, so that a file upstream adds is noticed.

pyasc's files are not part of ascrun (their licence): point ASCRUN_ASC2_TESTS at a checkout's
python/test/asc2, e.g.

    git -C PYASC archive HEAD python/test/asc2 | tar -x -C /tmp/pyasc && ASCRUN_ASC2_TESTS=/tmp/pyasc/python/test/asc2

kernels/test_X.py is ported as test_X.py, operations/test_X.py as test_ops_X.py."""
import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

HERE = Path(__file__).parent


def port_of(upstream: str) -> str:
    folder, name = upstream.split("/", 1)
    return {"kernels": name, "operations": name.replace("test_", "test_ops_", 1)}[folder]


def upstream_files(root: Path) -> list:
    return sorted(str(p.relative_to(root)) for p in root.rglob("test_*.py"))


def test_every_upstream_asc2_test_file_has_its_port():
    tests_dir = os.environ.get("ASCRUN_ASC2_TESTS")
    if not tests_dir:
        pytest.skip("ASCRUN_ASC2_TESTS is not set: point it at a pyasc checkout's python/test/asc2 "
                    "(pyasc's files are not part of ascrun)")
    root = Path(tests_dir).resolve()
    files = upstream_files(root)
    assert files, f"ASCRUN_ASC2_TESTS={root} has no test_*.py"
    unknown = [f for f in files if f.split("/", 1)[0] not in ("kernels", "operations")]
    assert unknown == [], f"files outside kernels/ and operations/ (give their ports a place in port_of): {unknown}"
    missing = [f for f in files if not (HERE / port_of(f)).is_file()]
    assert missing == [], f"asc2 test files without a port in {HERE}: {missing}"


def test_the_ports_are_the_upstream_names(tmp_path):
    """port_of on a made-up checkout: what the test above relies on."""
    for name in ("kernels/test_vadd.py", "operations/test_where.py", "kernels/test_new.py"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("")
    assert upstream_files(tmp_path) == ["kernels/test_new.py", "kernels/test_vadd.py", "operations/test_where.py"]
    assert [port_of(f) for f in upstream_files(tmp_path)] == ["test_new.py", "test_vadd.py", "test_ops_where.py"]
    assert not (HERE / "test_new.py").exists()  # so a new upstream file would be reported missing
