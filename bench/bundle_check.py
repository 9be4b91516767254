"""What a submitted bundle's check costs a pool process (server/bundle_checks.py's `signature`: the
gate and the entry's parameters), for the worst bundles a tenant may send under the byte cap, against
the largest kernel of the tests.

    python bench/bundle_check.py [--repeat 5]

Each row: the bundle's JSON size, the median CPU seconds of its check (time.process_time, in this
process: what it would hold a pool process), its ratio to the reference kernel's, and the check's
answer. The bounds (MAX_SOURCE_CHARS, MAX_NODES, MAX_STATEMENTS, MAX_DEPTH in shared/compiler/gate.py)
are what keeps the worst rows small; issue 25 measured ~5.5 s for "40k assignments" before them.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from ascrun.compiler import bundle as bundles
from ascrun.server.bundle_checks import signature

HEAD = "@asc.jit\ndef k(n: int):\n"


def _one(source: str) -> dict:
    return {"entry": "k", "functions": [{"name": "k", "source": source, "filename": "k.py", "lineno": 1}],
            "constants": {}, "modules": {"asc": "asc"}}


def cases() -> dict:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "kernels"))
    import vector_fused  # the tests' largest kernel: ~3 300 nodes, 255 statements
    chain = "".join(f"    v{i} = v{i - 1} + v{i - 1} + n\n" for i in range(1, 1400))
    return {
        "reference: tests' vector_fused": bundles.collect(vector_fused.fused_kernel).to_json(),
        "issue 25: 40k assignments": _one(HEAD + "".join(f"    v{i} = v{i - 1} + 1\n" for i in range(1, 40_000))
                                          + "    v0 = undefined_name\n"),
        "within bounds, refused last": _one(HEAD + "    v0 = 1\n" + chain + "    v0 = undefined_name\n"),
        "nodes: a 99 KB tuple": _one(HEAD + "    v = (" + ",".join(["n"] * 49_000) + ")\n"),
        "statements: 99 KB of pass": _one(HEAD + "    pass\n" * 11_000),
        "depth: 1+1+...": _one(HEAD + "    v = " + "+".join(["1"] * 40_000) + "\n"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    repeat = parser.parse_args().repeat
    rows, reference = [], None
    for name, bundle_json in cases().items():
        times = []
        for _ in range(repeat):
            start = time.process_time()
            refusal = signature(bundle_json)[0]
            times.append(time.process_time() - start)
        median = statistics.median(times)
        reference = reference or median
        rows.append((name, len(json.dumps(bundle_json)), median, refusal or "passed"))
    print(f"{'bundle':34} {'bytes':>9} {'CPU s':>8} {'x ref':>7}  answer")
    for name, size, median, answer in rows:
        print(f"{name:34} {size:9d} {median:8.3f} {median / reference:7.1f}  {answer[:90]}")


if __name__ == "__main__":
    main()
