"""LaunchResult: what a launch returns, locally (run_local) or from the service."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

import numpy as np

from .compare import Comparison


@dataclass
class LaunchResult:
    """outputs: the tensors the kernel wrote, by parameter name (also copied into the caller's
    arrays). timings: seconds per stage. cache: "hit"/"miss" for "frontend" and "build".
    log: what the kernel printed (printf, DumpTensor), block after block, as the host prints it
    after an NPU run. warnings: what the device would do silently (deduplicated, capped).
    source: the Ascend C pyasc generated (fetched on first use for remote launches).
    comparison: with `compare=`, these outputs against the same launch's on the second target.
    model: the cpu target's modeled timeline ({"cycles", "clock_ghz", "cores": [{"core", "cycles",
    "instructions", "busy", "critical_path"}], "hazards": the hazard check's findings, absent with
    hazards "off"; None on other targets). trace: the same as a
    Chrome/Perfetto trace (JSON text; fetched on first use for remote launches)."""
    outputs: Dict[str, np.ndarray]
    timings: Dict[str, float]
    cache: Dict[str, str]
    ir_hash: str
    job_id: Optional[str] = None
    log: str = ""
    warnings: List[str] = field(default_factory=list)
    comparison: Optional[Comparison] = None
    model: Optional[Dict[str, Any]] = None
    _source: Optional[str] = field(default=None, repr=False)
    _fetch_source: Optional[Callable[[], str]] = field(default=None, repr=False, compare=False)
    _trace: Optional[str] = field(default=None, repr=False)
    _fetch_trace: Optional[Callable[[], Optional[str]]] = field(default=None, repr=False, compare=False)

    @property
    def trace(self) -> Optional[str]:
        if self._trace is None and self._fetch_trace is not None:
            self._trace = self._fetch_trace()
        return self._trace

    @property
    def source(self) -> str:
        if self._source is None and self._fetch_source is not None:
            self._source = self._fetch_source()
        return self._source or ""
