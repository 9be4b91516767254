"""A job's summary: the few fields a list shows, kept beside its record (summary:<id>) and rewritten
with it at every move, so that a list reads these and never a record (whose log, outputs and trace
weigh up to megabytes). Every field is clipped, so a summary's JSON never exceeds SUMMARY_MAX_BYTES
whatever the job printed or raised: a list of n jobs reads at most n of these."""
from __future__ import annotations

import json
from typing import Any, Dict, Optional

# JSON-encoded size caps of the text fields; the numbers and the fixed names fill the rest
FIELD_BYTES = {"tenant": 96, "kernel": 160, "worker": 128, "soc": 80, "target": 32, "stage": 16, "rq_job": 80,
               "status": 16, "bounds": 16, "hazards": 16}
HEADLINE_BYTES = 240  # the error's first line
KIND_BYTES = 32
MAX_MAP_ENTRIES = 8  # timings (queue, frontend, build, run, total) and cache (frontend, build): ours, few
MAP_TEXT_BYTES = 24
SUMMARY_MAX_BYTES = 2048  # what the caps add up to, with room (tests/test_job_list.py checks the worst case)


def clip(text: Any, limit: int) -> str:
    """`text` cut so that its JSON string (quotes and escapes included) takes at most `limit` bytes,
    marked with "…" where it was cut."""
    text = str(text)
    if len(json.dumps(text)) <= limit:
        return text
    low, high = 0, len(text)  # the longest prefix that fits with the mark
    while low < high:
        middle = (low + high + 1) // 2
        if len(json.dumps(text[:middle] + "…")) <= limit:
            low = middle
        else:
            high = middle - 1
    return text[:low] + "…"


def _numbers(values: Any) -> Dict[str, float]:
    items = list((values or {}).items())[:MAX_MAP_ENTRIES]
    return {clip(k, MAP_TEXT_BYTES): float(v) for k, v in items if isinstance(v, (int, float))}


def _error(error: Optional[Dict[str, Any]]) -> Optional[Dict[str, str]]:
    if not error:
        return None
    lines = str(error.get("message", "")).strip().splitlines()
    headline = lines[0] if lines else ""
    return {"kind": clip(error.get("kind", ""), KIND_BYTES), "headline": clip(headline, HEADLINE_BYTES)}


def summarize(record: Dict[str, Any]) -> str:
    """The summary of `record` (a job's record as stored), as JSON text."""
    summary: Dict[str, Any] = {"id": str(record["id"])[:64]}
    for name, limit in FIELD_BYTES.items():
        if record.get(name) is not None:
            summary[name] = clip(record[name], limit)
    if isinstance(record.get("core_num"), int):
        summary["core_num"] = record["core_num"]
    for name in ("created_at", "queued_at", "started_at", "ended_at"):
        if isinstance(record.get(name), (int, float)):
            summary[name] = record[name]
    summary["timings"] = _numbers(record.get("timings"))
    summary["cache"] = {clip(k, MAP_TEXT_BYTES): clip(v, MAP_TEXT_BYTES)
                        for k, v in list((record.get("cache") or {}).items())[:MAX_MAP_ENTRIES]}
    summary["warning_count"] = len(record.get("warnings") or [])
    summary["error"] = _error(record.get("error"))
    return json.dumps(summary)
