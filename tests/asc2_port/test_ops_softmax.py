"""Port of asc2's operations/test_softmax.py: asctile.softmax of a 1-D and a 2-D tile (float16 and
float32), src stored back unchanged, against torch; only on the C310 architecture, as upstream.
The shapes go as their dimensions."""
import pytest
import torch

from .conftest import require_c310

pytestmark = pytest.mark.kernel
asctile = pytest.importorskip("asc.experimental.asctile", reason="asctile comes with pyasc's nightly (pyasc-dev)")


@asctile.jit
def softmax_1d_kernel(dst_ptr, src_ptr, length: asctile.ConstExpr[int]):
    dst = asctile.global_tensor(dst_ptr, [length])
    src = asctile.global_tensor(src_ptr, [length])
    src_tile = asctile.copy_in(src, [0], [length])
    asctile.copy_out(asctile.softmax(src_tile), dst, [0])
    asctile.copy_out(src_tile, src, [0])


@asctile.jit
def softmax_2d_kernel(dst_ptr, src_ptr, rows: asctile.ConstExpr[int], cols: asctile.ConstExpr[int]):
    dst = asctile.global_tensor(dst_ptr, [rows, cols])
    src = asctile.global_tensor(src_ptr, [rows, cols])
    src_tile = asctile.copy_in(src, [0, 0], [rows, cols])
    asctile.copy_out(asctile.softmax(src_tile), dst, [0, 0])
    asctile.copy_out(src_tile, src, [0, 0])


@pytest.mark.parametrize("dtype, shape", [
    (torch.float16, [1, 16]), (torch.float16, [4, 1024]), (torch.float32, [1, 8]), (torch.float32, [4, 256]),
], ids=str)
def test_softmax_2d(run, soc, dtype, shape):
    require_c310(soc)
    torch.manual_seed(0)
    src = torch.rand(shape, dtype=dtype)
    dst = torch.zeros_like(src)
    run(softmax_2d_kernel, 1, dst, src, *shape)
    torch.testing.assert_close(dst, torch.softmax(src, dim=1))


@pytest.mark.parametrize("dtype, length", [
    (torch.float16, 16), (torch.float16, 1024), (torch.float32, 8), (torch.float32, 1024),
], ids=str)
def test_softmax_1d(run, soc, dtype, length):
    require_c310(soc)
    torch.manual_seed(0)
    src = torch.rand(length, dtype=dtype)
    dst = torch.zeros_like(src)
    run(softmax_1d_kernel, 1, dst, src, length)
    torch.testing.assert_close(dst, torch.softmax(src, dim=0))
