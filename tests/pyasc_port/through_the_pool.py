"""Every case of tests/pyasc_port through the service: brings up the embedded stack (`ascrun up`:
redis-server, API server, two cpu workers), runs the cases with the ascrun pytest plugin (each
launch a job on the pool, outputs written back into the test's tensors), prints
"pyasc kernel tests on cpu: P of N cases pass", then stops the stack.

    python tests/pyasc_port/through_the_pool.py [--url URL] [pytest options...]   # --url: a running pool
"""
import argparse
import re
import signal
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def run_cases(url: str, pytest_args: list) -> int:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", str(HERE),
                           "--ascrun-url", url, "--ascrun-target", "cpu", "--ascrun-bounds", "warn",
                           "--ascrun-hazards", "fault", *pytest_args],
                          cwd=ROOT).returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="a running ascrun service (default: start the embedded stack)")
    opts, pytest_args = parser.parse_known_args()
    if opts.url:
        raise SystemExit(run_cases(opts.url, pytest_args))
    up = subprocess.Popen([sys.executable, "-m", "ascrun.cli", "up", "--port", "0", "--workers", "2"],
                          stdout=subprocess.PIPE, text=True)
    try:
        line = up.stdout.readline()
        print(line.strip(), flush=True)
        match = re.search(r"up at (http://\S+)", line)
        if not match:
            raise SystemExit("the embedded stack did not start")
        code = run_cases(match.group(1), pytest_args)
    finally:
        up.send_signal(signal.SIGTERM)
        up.wait(60)
    raise SystemExit(code)


if __name__ == "__main__":
    main()
