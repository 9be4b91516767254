"""One launch's outputs on two targets, diffed: what `compare=` (Client.launch, `ascrun exec --compare`) reports.

Integer and bool outputs must be equal. Float outputs may differ by |a - b| <= atol + rtol * max(|a|, |b|),
NaN matching NaN, with TOLERANCES (torch.testing.assert_close's defaults for these dtypes): a target's
float units may round or approximate differently, while its integer arithmetic may not.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Tuple

import numpy as np

# dtype name -> (rtol, atol). bfloat16 applies where numpy knows the dtype: a launch's bfloat16
# outputs are ml_dtypes.bfloat16 arrays where ml_dtypes is installed, else their bits (uint16),
# which are compared exactly.
TOLERANCES: Dict[str, Tuple[float, float]] = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
}
SHOWN = 10  # differing elements listed in a Comparison
CHUNK = 1 << 20  # elements diffed at once: memory stays bounded for GiB outputs


@dataclass
class Difference:
    """One element that differs beyond tolerance: `value` on the primary target, `other` on the second."""
    output: str
    index: Tuple[int, ...]
    value: Any
    other: Any

    def __str__(self) -> str:
        return f"{self.output}[{', '.join(map(str, self.index))}]: {self.value!r} vs {self.other!r}"


@dataclass
class Comparison:
    """`differing`: per output, how many elements differ beyond tolerance. `first`: the first SHOWN of
    them, output by output in C order. `problems`: outputs that cannot be compared element-wise."""
    target: str
    other: str
    differing: Dict[str, int] = field(default_factory=dict)
    first: List[Difference] = field(default_factory=list)
    problems: List[str] = field(default_factory=list)

    @property
    def matches(self) -> bool:
        return not self.problems and not any(self.differing.values())

    def summary(self) -> str:
        head = f"{self.target} vs {self.other}: "
        if self.matches:
            return head + f"match ({len(self.differing)} output(s) within tolerance)"
        counts = [f"{n} element(s) of {name} differ" for name, n in self.differing.items() if n]
        return "\n  ".join([head + "MISMATCH: " + "; ".join(self.problems + counts)] + [str(d) for d in self.first])

    def to_json(self) -> Dict[str, Any]:
        return {"target": self.target, "other": self.other, "matches": self.matches, "differing": self.differing,
                "first": [{"output": d.output, "index": list(d.index), "value": d.value, "other": d.other}
                          for d in self.first], "problems": self.problems}


def differing(a: np.ndarray, b: np.ndarray, tolerances: Dict[str, Tuple[float, float]] = TOLERANCES) -> np.ndarray:
    """The mask of the elements of a and b (same dtype and shape) that differ beyond the dtype's
    tolerance (exactly, for a dtype `tolerances` does not name)."""
    if a.dtype.name not in tolerances:
        return a != b
    rtol, atol = tolerances[a.dtype.name]
    x, y = a.astype(np.float64), b.astype(np.float64)
    # isclose is relative to its second argument: both ways is relative to the larger magnitude
    return ~(np.isclose(x, y, rtol, atol, equal_nan=True) | np.isclose(y, x, rtol, atol, equal_nan=True))


def compare_outputs(outputs: Dict[str, np.ndarray], others: Dict[str, np.ndarray], target: str,
                    other: str, tolerances: Dict[str, Tuple[float, float]] = TOLERANCES) -> Comparison:
    """`outputs` (the primary run's, by parameter name) against `others` (the second run's)."""
    result = Comparison(target, other)
    for name in sorted(outputs.keys() ^ others.keys()):
        result.problems.append(f"{name} written on {target if name in outputs else other} only")
    for name in (n for n in outputs if n in others):
        a, b = outputs[name], others[name]
        if (a.dtype, a.shape) != (b.dtype, b.shape):
            result.problems.append(f"{name} is {a.dtype.name}{list(a.shape)} vs {b.dtype.name}{list(b.shape)}")
            continue
        flat_a, flat_b = a.reshape(-1), b.reshape(-1)
        result.differing[name] = 0
        for start in range(0, flat_a.size, CHUNK):
            hits = np.flatnonzero(differing(flat_a[start:start + CHUNK], flat_b[start:start + CHUNK],
                                            tolerances)) + start
            result.differing[name] += len(hits)
            for i in hits[:SHOWN - len(result.first)]:
                index = tuple(int(j) for j in np.unravel_index(i, a.shape))
                result.first.append(Difference(name, index, flat_a[i].item(), flat_b[i].item()))
    return result
