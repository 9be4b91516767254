"""asctile kernels (pyasc's nightly) for Ascend 950's dtype tables and compare/select behaviour in the cpu
runtime (tests/test_c310_dtypes.py): elementwise tile-tile and tile-scalar arithmetic, where(cmp(x, y), x, y)
and where(cmp(x, scalar), 0, 1); and, written with the asc API, the count forms of Compare and CompareScalar.
The op goes by name. Import only where asctile is installed."""
import asc
from asc.experimental import asctile


@asctile.jit
def compare(a, b, op: asctile.ConstExpr[str]):
    if op == "eq":
        return asctile.equal(a, b)
    if op == "ne":
        return asctile.not_equal(a, b)
    if op == "gt":
        return asctile.greater(a, b)
    if op == "ge":
        return asctile.greater_equal(a, b)
    if op == "lt":
        return asctile.less(a, b)
    return asctile.less_equal(a, b)


@asctile.jit
def tile_tile(x_ptr: asctile.GlobalAddress, y_ptr: asctile.GlobalAddress, z_ptr: asctile.GlobalAddress,
              n: asctile.ConstExpr[int], op: asctile.ConstExpr[str]):
    x = asctile.copy_in(asctile.global_tensor(x_ptr, [n]), [0], [n])
    y = asctile.copy_in(asctile.global_tensor(y_ptr, [n]), [0], [n])
    if op == "add":
        z = x + y
    elif op == "sub":
        z = x - y
    elif op == "mul":
        z = x * y
    elif op == "max":
        z = asctile.maximum(x, y)
    else:
        z = asctile.minimum(x, y)
    asctile.copy_out(z, asctile.global_tensor(z_ptr, [n]), [0])


@asctile.jit
def tile_scalar(x_ptr: asctile.GlobalAddress, s, z_ptr: asctile.GlobalAddress, n: asctile.ConstExpr[int],
                op: asctile.ConstExpr[str]):
    x = asctile.copy_in(asctile.global_tensor(x_ptr, [n]), [0], [n])
    if op == "adds":
        z = x + s
    elif op == "maxs":
        z = asctile.maximum(x, s)
    else:
        z = asctile.minimum(x, s)
    asctile.copy_out(z, asctile.global_tensor(z_ptr, [n]), [0])


@asctile.jit
def where_tiles(x_ptr: asctile.GlobalAddress, y_ptr: asctile.GlobalAddress, z_ptr: asctile.GlobalAddress,
                n: asctile.ConstExpr[int], op: asctile.ConstExpr[str]):
    x = asctile.copy_in(asctile.global_tensor(x_ptr, [n]), [0], [n])
    y = asctile.copy_in(asctile.global_tensor(y_ptr, [n]), [0], [n])
    asctile.copy_out(asctile.where(compare(x, y, op), x, y), asctile.global_tensor(z_ptr, [n]), [0])


@asctile.jit
def where_scalar(x_ptr: asctile.GlobalAddress, s, z_ptr: asctile.GlobalAddress, n: asctile.ConstExpr[int],
                 op: asctile.ConstExpr[str]):
    x = asctile.copy_in(asctile.global_tensor(x_ptr, [n]), [0], [n])
    z = asctile.where(compare(x, s, op), asctile.cast(0.0, x_ptr.dtype), asctile.cast(1.0, x_ptr.dtype))
    asctile.copy_out(z, asctile.global_tensor(z_ptr, [n]), [0])


# ---- written forms (pyasc's asc API): the count forms of Compare and CompareScalar ------------------------

@asc.jit
def compare_count(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, s, n: asc.ConstExpr[int],
                  count: asc.ConstExpr[int], scalar_form: asc.ConstExpr[int], mode: asc.ConstExpr[int]):
    """x, y: n elements at UB 0 and n * size; z: 256 bytes, read in first. Compare(z, x, y, mode, count) or
    CompareScalar(z, x, s, mode, count), mode LT GT EQ LE GE NE = 0..5; z written back."""
    x_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    y_gm.set_global_buffer(y, n)
    z_gm.set_global_buffer(z, 256)
    nb = n * x.dtype.sizeof()
    xl = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    yl = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, nb, n)
    zl = asc.LocalTensor(asc.uint8, asc.TPosition.VECOUT, 2 * nb, 256)
    asc.data_copy(xl, x_gm, n)
    asc.data_copy(yl, y_gm, n)
    asc.data_copy(zl, z_gm, 256)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    modes = [asc.CMPMODE.LT, asc.CMPMODE.GT, asc.CMPMODE.EQ, asc.CMPMODE.LE, asc.CMPMODE.GE, asc.CMPMODE.NE]
    if scalar_form == 1:
        asc.compare_scalar(zl, xl, s, modes[mode], count)
    else:
        asc.compare(zl, xl, yl, modes[mode], count)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(z_gm, zl, 256)
