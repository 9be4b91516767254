"""Port of asc2's operations/test_memory_ops.py: z = x + y over one tile of a 1-D or 2-D float32
tensor, its shape static (ConstExpr) or dynamic (runtime ints), the tile placed by tile id or by
offsets; scalar load and store; a one-element full stored at an offset; against torch. asctile's
copy_in/copy_out place a tile by offsets only: a tile id becomes offsets (id * tile shape), as
upstream's reference computes them. The 1-D and 2-D forms are kernels of their
own, each dimension an argument."""
import pytest
import torch

pytestmark = pytest.mark.kernel
asctile = pytest.importorskip("asc.experimental.asctile", reason="asctile comes with pyasc's nightly (pyasc-dev)")

# dim, tensor shape, tile shape, tile id, offsets, static
CASES = [
    (1, [64], [16], [0], None, True), (1, [64], [16], [3], None, True), (2, [128, 128], [32, 32], [0, 0], None, True),
    (2, [128, 128], [32, 32], [3, 3], None, True), (2, [1024, 512], [128, 64], [1, 2], None, True),
    (1, [37], [8], [3], None, True), (2, [123, 456], [13, 16], [2, 5], None, True),
    (1, [64], [16], None, [0], True), (1, [64], [16], None, [48], True), (2, [128, 128], [32, 32], None, [0, 0], True),
    (2, [128, 128], [32, 32], None, [96, 64], True), (2, [1024, 512], [128, 64], None, [256, 128], True),
    (1, [53], [16], None, [22], True), (2, [257, 511], [19, 24], None, [40, 64], True),
    (1, [32], [8], [1], None, False), (1, [32], [8], [3], None, False), (2, [16, 2048], [4, 512], [0, 3], None, False),
    (2, [16, 2048], [8, 256], [1, 7], None, False), (2, [512, 512], [64, 64], [4, 4], None, False),
    (1, [99], [16], [5], None, False), (2, [1000, 1000], [33, 40], [1, 1], None, False),
    (1, [32], [8], None, [16], False), (1, [32], [8], None, [24], False),
    (2, [16, 2048], [4, 512], None, [8, 1024], False), (2, [16, 2048], [12, 1024], None, [4, 0], False),
    (2, [512, 512], [64, 64], None, [128, 256], False), (1, [77], [24], None, [48], False),
    (2, [150, 300], [21, 40], None, [10, 20], False),
    (1, [32], None, None, [0], True), (2, [32, 32], None, None, [0, 0], True), (1, [1024], None, None, [0], True),
    (2, [512, 512], None, None, [0, 0], True),
]


@asctile.jit
def add_1d(x_ptr, y_ptr, z_ptr, n0, t0: asctile.ConstExpr[int], o0: asctile.ConstExpr[int]):
    xt = asctile.copy_in(asctile.global_tensor(x_ptr, [n0]), [o0], [t0])
    yt = asctile.copy_in(asctile.global_tensor(y_ptr, [n0]), [o0], [t0])
    asctile.copy_out(xt + yt, asctile.global_tensor(z_ptr, [n0]), [o0])


@asctile.jit
def add_2d(x_ptr, y_ptr, z_ptr, n0, n1, t0: asctile.ConstExpr[int], t1: asctile.ConstExpr[int],
           o0: asctile.ConstExpr[int], o1: asctile.ConstExpr[int]):
    xt = asctile.copy_in(asctile.global_tensor(x_ptr, [n0, n1]), [o0, o1], [t0, t1])
    yt = asctile.copy_in(asctile.global_tensor(y_ptr, [n0, n1]), [o0, o1], [t0, t1])
    asctile.copy_out(xt + yt, asctile.global_tensor(z_ptr, [n0, n1]), [o0, o1])


@asctile.jit
def kernel_static_1d(x_ptr, y_ptr, z_ptr, n0: asctile.ConstExpr[int], t0: asctile.ConstExpr[int],
                     o0: asctile.ConstExpr[int]):
    add_1d(x_ptr, y_ptr, z_ptr, n0, t0, o0)


@asctile.jit
def kernel_dynamic_1d(x_ptr, y_ptr, z_ptr, n0: int, t0: asctile.ConstExpr[int], o0: asctile.ConstExpr[int]):
    add_1d(x_ptr, y_ptr, z_ptr, n0, t0, o0)


@asctile.jit
def kernel_static_2d(x_ptr, y_ptr, z_ptr, n0: asctile.ConstExpr[int], n1: asctile.ConstExpr[int],
                     t0: asctile.ConstExpr[int], t1: asctile.ConstExpr[int], o0: asctile.ConstExpr[int],
                     o1: asctile.ConstExpr[int]):
    add_2d(x_ptr, y_ptr, z_ptr, n0, n1, t0, t1, o0, o1)


@asctile.jit
def kernel_dynamic_2d(x_ptr, y_ptr, z_ptr, n0: int, n1: int, t0: asctile.ConstExpr[int], t1: asctile.ConstExpr[int],
                      o0: asctile.ConstExpr[int], o1: asctile.ConstExpr[int]):
    add_2d(x_ptr, y_ptr, z_ptr, n0, n1, t0, t1, o0, o1)


@asctile.jit
def kernel_scalar_1d(x_ptr, y_ptr, z_ptr, n0: asctile.ConstExpr[int], o0: asctile.ConstExpr[int]):
    xs = asctile.copy_in(asctile.global_tensor(x_ptr, [n0]), [o0])
    ys = asctile.copy_in(asctile.global_tensor(y_ptr, [n0]), [o0])
    asctile.copy_out(xs + ys, asctile.global_tensor(z_ptr, [n0]), [o0])


@asctile.jit
def kernel_scalar_2d(x_ptr, y_ptr, z_ptr, n0: asctile.ConstExpr[int], n1: asctile.ConstExpr[int],
                     o0: asctile.ConstExpr[int], o1: asctile.ConstExpr[int]):
    xs = asctile.copy_in(asctile.global_tensor(x_ptr, [n0, n1]), [o0, o1])
    ys = asctile.copy_in(asctile.global_tensor(y_ptr, [n0, n1]), [o0, o1])
    asctile.copy_out(xs + ys, asctile.global_tensor(z_ptr, [n0, n1]), [o0, o1])


@pytest.mark.parametrize("dim, tensor_shape, tile_shape, tile_id, offsets, is_static", CASES, ids=str)
def test_load_store(run, dim, tensor_shape, tile_shape, tile_id, offsets, is_static):
    torch.manual_seed(0)
    x, y = torch.randn(tensor_shape), torch.randn(tensor_shape)
    z = torch.zeros(tensor_shape, dtype=torch.float32)
    if tile_id is not None:
        offsets = [i * s for i, s in zip(tile_id, tile_shape)]
    if tile_shape is None:
        run(kernel_scalar_1d if dim == 1 else kernel_scalar_2d, 1, x, y, z, *tensor_shape, *offsets)
        slices = tuple(offsets)
    else:
        kernel = {(1, True): kernel_static_1d, (1, False): kernel_dynamic_1d, (2, True): kernel_static_2d,
                  (2, False): kernel_dynamic_2d}[dim, is_static]
        run(kernel, 1, x, y, z, *tensor_shape, *tile_shape, *offsets)
        slices = tuple(slice(off, off + size) for off, size in zip(offsets, tile_shape))
    z_expected = torch.zeros_like(z)
    z_expected[slices] = x[slices] + y[slices]
    torch.testing.assert_close(z, z_expected, atol=1e-3, rtol=1e-3)


@asctile.jit
def store_1elem_1d(x_ptr, y_ptr, n0: asctile.ConstExpr[int], o0: asctile.ConstExpr[int]):
    s = asctile.copy_in(asctile.global_tensor(x_ptr, [n0]), [o0])
    asctile.copy_out(asctile.full([1], s), asctile.global_tensor(y_ptr, [n0]), [o0])


@asctile.jit
def store_1elem_2d(x_ptr, y_ptr, n0: asctile.ConstExpr[int], n1: asctile.ConstExpr[int], o0: asctile.ConstExpr[int],
                   o1: asctile.ConstExpr[int]):
    s = asctile.copy_in(asctile.global_tensor(x_ptr, [n0, n1]), [o0, o1])
    asctile.copy_out(asctile.full([1], s), asctile.global_tensor(y_ptr, [n0, n1]), [o0, o1])


@pytest.mark.parametrize("tensor_shape, offsets", (
    ((16,), (0,)), ((16,), (7,)), ((16, 16), (0, 0)), ((16, 16), (7, 7)),
), ids=str)
def test_store_1elem_tile(run, tensor_shape, offsets):
    torch.manual_seed(0)
    x = torch.randn(tensor_shape, dtype=torch.float32)
    y = torch.zeros_like(x)
    run(store_1elem_1d if len(tensor_shape) == 1 else store_1elem_2d, 1, x, y, *tensor_shape, *offsets)
    y_ref = torch.zeros_like(x)
    y_ref[offsets] = x[offsets]
    torch.testing.assert_close(y, y_ref)
