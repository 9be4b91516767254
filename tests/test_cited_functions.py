"""What a failed job keeps of its kernel's Python for the dashboard (workers/cited.py): the functions
holding a line its message cites, as pyasc and MLIR cite them."""
import pytest

from ascrun.compiler.bundle import KernelBundle
from ascrun.server.workers.cited import MAX_CITED_BYTES, cited_functions

pytestmark = pytest.mark.unit

KERNEL = {"name": "k", "source": "@asc.jit\ndef k(x):\n    helper(x)\n", "filename": "/src/kern.py", "lineno": 10}
HELPER = {"name": "helper", "source": "@asc.jit\ndef helper(x):\n    asc.exp(x)\n", "filename": "/src/lib.py",
          "lineno": 3}


def bundle(*functions) -> KernelBundle:
    return KernelBundle.from_json({"entry": "k", "functions": list(functions), "constants": {}, "modules": {}})


def test_the_functions_holding_a_cited_line_are_kept():
    both = bundle(KERNEL, HELPER)
    assert cited_functions(both, "compile_error", "in kernel 'k' at /src/lib.py:5: at <source>:3:4:") == [HELPER]
    # MLIR's form (file:line:column), two files
    mlir = "/src/kern.py:12:5: error: op failed\n/src/lib.py:3:1: note: here"
    assert cited_functions(both, "runtime_error", mlir) == [HELPER, KERNEL]  # the bundle's order: by name


def test_a_line_outside_every_function_cites_none_but_a_compile_error_keeps_the_kernel():
    both = bundle(KERNEL, HELPER)
    assert cited_functions(both, "runtime_error", "/src/lib.py:6: past the helper's last line") == []
    assert cited_functions(both, "runtime_error", "block 3: DataCopy out of bounds") == []
    assert cited_functions(both, "compile_error", "takes 5 arguments, got 2") == [KERNEL]


def test_what_is_kept_is_bounded():
    huge = dict(HELPER, source="@asc.jit\ndef helper(x):\n" + "    pass\n" * (MAX_CITED_BYTES // 9))
    assert cited_functions(bundle(KERNEL, huge), "compile_error", "/src/kern.py:12 and /src/lib.py:4") == [KERNEL]
    # counted as the record stores it: a non-ASCII character is 6 bytes of JSON
    wide = dict(HELPER, source="@asc.jit\ndef helper(x):\n    # " + "\u4e00" * (MAX_CITED_BYTES // 4) + "\n")
    assert cited_functions(bundle(KERNEL, wide), "compile_error", "/src/kern.py:12 and /src/lib.py:4") == [KERNEL]
