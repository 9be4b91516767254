"""Fails on purpose: pyasc's ceil-divided tiling for 1000 elements on 16 cores makes the last
block copy past the end of x. Hardware would not notice; ascrun's cpu runtime refuses it, and
the remote message reaches the caller. A script for `ascrun exec` and a test for the plugin."""
import sys
from pathlib import Path

import numpy as np

import asc.runtime.config as config

sys.path.insert(0, str(Path(__file__).parent))  # as a script and as a test of the pyasc_style package
from test_vadd import vadd_launch  # noqa: E402


def test_vadd_1000_elements():
    config.set_platform(config.Backend.Model)
    x = np.ones(1000, dtype=np.float32)
    z = vadd_launch(x, x)
    np.testing.assert_allclose(z, x + x)


if __name__ == "__main__":
    test_vadd_1000_elements()
