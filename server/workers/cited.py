"""The kernel's Python functions an error's message cites (`file.py:line`), kept with the failed
job's error so that the dashboard shows the message beside them, the cited lines marked: the
launch spec that holds them is deleted when the job ends."""
from __future__ import annotations

import json
import re
from typing import Any, Dict, List

from ...compiler.bundle import KernelBundle
from ...compiler.errors import Kind

CITATION = re.compile(r"([^\s:'\"()]{1,4096}\.py):([0-9]{1,9})")
MAX_CITED_BYTES = 64 << 10  # of functions kept with one error, as the job's record stores them (JSON)
MAX_MESSAGE_READ = 64 << 10  # of the message searched for citations: a kernel's error can be long


def cited_functions(bundle: KernelBundle, kind: str, message: str) -> List[Dict[str, Any]]:
    """The bundle's functions (name, filename, lineno: their first line, source) that contain a line
    `message` cites, in the bundle's order; a compile error citing none: the kernel's own function.
    One that would take what is kept past MAX_CITED_BYTES is left out."""
    cited = {(path, int(line)) for path, line in CITATION.findall(message[:MAX_MESSAGE_READ])}

    def cites(function) -> bool:
        last = function.lineno + function.source.rstrip("\n").count("\n")
        return any(path == function.filename and function.lineno <= line <= last for path, line in cited)

    chosen = [f for f in bundle.functions if cites(f)]
    if not chosen and kind == Kind.COMPILE_ERROR:
        chosen = [f for f in bundle.functions if f.name == bundle.entry]
    kept, size = [], 0
    for function in chosen:
        stored = len(json.dumps(function.to_json()))
        if size + stored <= MAX_CITED_BYTES:
            size += stored
            kept.append(function.to_json())
    return kept
