"""asctile kernels (pyasc's nightly) for the runtime's APIs that asc2's ported tests found missing: the
tensor-scalar Subs/Divs, the high-level unary math (Ceil, Floor, Sin, Cos, Tan, Sinh, Cosh), ReduceProd and
the pattern reductions, the atomic stores, Broadcast. The op goes by name. Import only where asctile is
installed."""
from asc.experimental import asctile


@asctile.jit
def unary(x_ptr: asctile.GlobalAddress, z_ptr: asctile.GlobalAddress, n: asctile.ConstExpr[int],
          op: asctile.ConstExpr[str]):
    x = asctile.copy_in(asctile.global_tensor(x_ptr, [n]), [0], [n])
    if op == "ceil":
        z = asctile.ceil(x)
    elif op == "floor":
        z = asctile.floor(x)
    elif op == "sin":
        z = asctile.sin(x)
    elif op == "cos":
        z = asctile.cos(x)
    elif op == "tan":
        z = asctile.tan(x)
    elif op == "sinh":
        z = asctile.sinh(x)
    else:
        z = asctile.cosh(x)
    asctile.copy_out(z, asctile.global_tensor(z_ptr, [n]), [0])


@asctile.jit
def tile_scalar(x_ptr: asctile.GlobalAddress, s, z_ptr: asctile.GlobalAddress, n: asctile.ConstExpr[int],
                op: asctile.ConstExpr[str], scalar_first: asctile.ConstExpr[bool]):
    x = asctile.copy_in(asctile.global_tensor(x_ptr, [n]), [0], [n])
    if op == "sub":
        if scalar_first:
            z = asctile.sub(s, x)
        else:
            z = asctile.sub(x, s)
    elif scalar_first:
        z = asctile.div(s, x)
    else:
        z = asctile.div(x, s)
    asctile.copy_out(z, asctile.global_tensor(z_ptr, [n]), [0])


@asctile.jit
def reduce(x_ptr: asctile.GlobalAddress, z_ptr: asctile.GlobalAddress, rows: asctile.ConstExpr[int],
           cols: asctile.ConstExpr[int], dim: asctile.ConstExpr[int], op: asctile.ConstExpr[str]):
    x = asctile.copy_in(asctile.global_tensor(x_ptr, [rows, cols]), [0, 0], [rows, cols])
    if op == "prod":
        z = asctile.reduce_prod(x, dim)
    elif op == "max":
        z = asctile.reduce_max(x, dim)
    elif op == "min":
        z = asctile.reduce_min(x, dim)
    else:
        z = asctile.reduce_sum(x, dim)
    if dim == 0:
        asctile.copy_out(z, asctile.global_tensor(z_ptr, [cols]), [0])
    else:
        asctile.copy_out(z, asctile.global_tensor(z_ptr, [rows]), [0])


@asctile.jit
def atomic(x_ptr: asctile.GlobalAddress, z_ptr: asctile.GlobalAddress, tile: asctile.ConstExpr[int],
           op: asctile.ConstExpr[str]):
    x = asctile.copy_in(asctile.global_tensor(x_ptr, [tile * asctile.block_num()]), [asctile.block_idx() * tile],
                        [tile])
    z = asctile.global_tensor(z_ptr, [tile])
    if op == "add":
        asctile.atomic_add(x, z, [0])
    elif op == "max":
        asctile.atomic_max(x, z, [0])
    else:
        asctile.atomic_min(x, z, [0])


@asctile.jit(static_alloc=False)
def broadcast_rows(x_ptr: asctile.GlobalAddress, z_ptr: asctile.GlobalAddress, rows: asctile.ConstExpr[int],
                   cols: asctile.ConstExpr[int]):
    x = asctile.copy_in(asctile.global_tensor(x_ptr, [1, cols]), [0, 0], [1, cols])
    asctile.copy_out(asctile.broadcast_to(x, rows, cols), asctile.global_tensor(z_ptr, [rows, cols]), [0, 0])
