"""Expects x - y from the vadd kernel: the script's own assert must fail on the remote result."""
import sys
from pathlib import Path

import numpy as np

import asc.runtime.config as config

sys.path.insert(0, str(Path(__file__).parent))  # as a script and as a test of the pyasc_style package
from test_vadd import vadd_launch  # noqa: E402

if __name__ == "__main__":
    config.set_platform(config.Backend.Model)
    x = np.full(8192, 3, dtype=np.float32)
    y = np.full(8192, 1, dtype=np.float32)
    z = vadd_launch(x, y)
    assert np.array_equal(z, x - y), f"z[:4] = {z[:4]}, expected x - y = {(x - y)[:4]}"
