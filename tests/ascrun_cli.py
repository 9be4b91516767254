"""The `ascrun` command run as a user runs it: a subprocess, its exit code, stdout and stderr."""
import subprocess
import sys
from pathlib import Path

PYASC_STYLE = Path(__file__).parent / "pyasc_style"
NO_SIM_NOTICE = ("ascrun: backend Model maps to target 'sim', which has no worker in the pool: running on 'cpu' "
                 "(--target chooses)")
NO_NPU_NOTICE = ("ascrun: backend NPU maps to target 'npu', which has no worker in the pool: running on 'cpu' "
                 "(--target chooses)")


def ascrun(*args, python=sys.executable, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([str(python), "-m", "ascrun.cli", *map(str, args)], capture_output=True, text=True,
                          timeout=300, **kwargs)


def launch_line(path: Path, marker: str) -> int:
    """The first line of `path` that contains `marker` (e.g. where a script launches its kernel)."""
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if marker in line)
