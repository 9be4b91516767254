"""The kernel's Python functions an error's message cites (`file.py:line`), kept with the failed
job's error so that the dashboard shows the message beside them, the cited lines marked: the
launch spec that holds them is deleted when the job ends."""
from __future__ import annotations

import re
from typing import Any, Dict, List

from ...compiler.bundle import KernelBundle
from ...compiler.errors import Kind

CITATION = re.compile(r"([^\s:'\"()]+\.py):(\d+)")
MAX_CITED_CHARS = 64 << 10  # of source kept with one error (it is part of the job's record while it is kept)


def cited_functions(bundle: KernelBundle, kind: str, message: str) -> List[Dict[str, Any]]:
    """The bundle's functions (name, filename, lineno: their first line, source) that contain a line
    `message` cites, in the bundle's order; a compile error citing none: the kernel's own function.
    One that would take the kept source past MAX_CITED_CHARS is left out."""
    cited = {(path, int(line)) for path, line in CITATION.findall(message)}

    def cites(function) -> bool:
        last = function.lineno + function.source.rstrip("\n").count("\n")
        return any(path == function.filename and function.lineno <= line <= last for path, line in cited)

    chosen = [f for f in bundle.functions if cites(f)]
    if not chosen and kind == Kind.COMPILE_ERROR:
        chosen = [f for f in bundle.functions if f.name == bundle.entry]
    kept, chars = [], 0
    for function in chosen:
        if chars + len(function.source) <= MAX_CITED_CHARS:
            chars += len(function.source)
            kept.append(function.to_json())
    return kept
