"""Transpose (16 x 16 form) through run_local against numpy."""
import numpy as np
import pytest

import ascrun
import vector_transpose as vt


@pytest.mark.parametrize("dtype", [np.float16, np.int16, np.uint16])
def test_transpose_16x16(dtype):
    x = np.arange(256).astype(dtype)
    z = np.zeros(256, dtype)
    ascrun.run_local(vt.transpose_kernel, 1, x, z, False)
    np.testing.assert_array_equal(z, x.reshape(16, 16).T.reshape(-1))


def test_transpose_overlapping_operands_fail():
    x = np.arange(256).astype(np.float16)
    with pytest.raises(ascrun.KernelError) as e:
        ascrun.run_local(vt.transpose_kernel, 1, x, np.zeros_like(x), True)
    assert "Transpose: dst range [0x100, 0x300) overlaps src range [0x0, 0x200)" in str(e.value)
