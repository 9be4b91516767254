"""LaunchResult: what a launch returns, locally (run_local) or from the service."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict

import numpy as np


@dataclass
class LaunchResult:
    """outputs: the tensors the kernel wrote, by parameter name (also copied into the caller's
    arrays). timings: seconds per stage. cache: "hit"/"miss" for "frontend" and "build"."""
    outputs: Dict[str, np.ndarray]
    timings: Dict[str, float]
    cache: Dict[str, str]
    ir_hash: str
    source: str
