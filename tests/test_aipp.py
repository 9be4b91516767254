"""SetAippFunctions (SetAippFunctions.md): the checks of its constraints; its settings take effect only
in LoadImageToLocal, which the cpu target does not have (tests/pyasc_port/test_aipp.py: pyasc's use)."""
import numpy as np
import pytest

import ascrun
from conftest import unsited
import aipp

pytestmark = pytest.mark.kernel


def test_an_aligned_xrgb_image_is_accepted():
    ascrun.run_local(aipp.aipp_xrgb_kernel, 1, np.zeros(64, np.uint8), 4)


def test_an_xrgb_image_must_be_4_byte_aligned():
    with pytest.raises(ascrun.KernelError) as e:
        ascrun.run_local(aipp.aipp_xrgb_kernel, 1, np.zeros(64, np.uint8), 2)
    message = unsited(str(e.value))
    assert message == ("block 0: SetAippFunctions: src0 is not 4-byte aligned in GM (a XRGB8888_U8 image must "
                       "be)")


def test_a_yuv420sp_image_needs_its_uv_plane():
    with pytest.raises(ascrun.KernelError) as e:
        ascrun.run_local(aipp.aipp_yuv420sp_one_plane_kernel, 1, np.zeros(64, np.uint8))
    message = unsited(str(e.value))
    assert message == "block 0: SetAippFunctions: a YUV420SP_U8 image has two planes: pass its UV plane as src1"
