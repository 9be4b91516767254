"""Small asctile kernels (pyasc's nightly: asc.experimental.asctile), one 1-D tensor split over the
blocks, each block's part in tiles of `tile` elements. Import only where asctile is installed."""
from asc.experimental import asctile


@asctile.jit
def vadd(x_ptr: asctile.GlobalAddress, y_ptr: asctile.GlobalAddress, z_ptr: asctile.GlobalAddress,
         n: asctile.ConstExpr[int], tile: asctile.ConstExpr[int]):
    x_gm = asctile.global_tensor(x_ptr, [n])
    y_gm = asctile.global_tensor(y_ptr, [n])
    z_gm = asctile.global_tensor(z_ptr, [n])
    per_block = n // asctile.block_num()
    for i in asctile.range(per_block // tile):
        offset = asctile.block_idx() * per_block + i * tile
        x = asctile.copy_in(x_gm, [offset], [tile])
        y = asctile.copy_in(y_gm, [offset], [tile])
        asctile.copy_out(x + y, z_gm, [offset])


@asctile.jit
def unary(x_ptr: asctile.GlobalAddress, z_ptr: asctile.GlobalAddress, n: asctile.ConstExpr[int],
          tile: asctile.ConstExpr[int], op: asctile.ConstExpr[str]):
    x_gm = asctile.global_tensor(x_ptr, [n])
    z_gm = asctile.global_tensor(z_ptr, [n])
    per_block = n // asctile.block_num()
    for i in asctile.range(per_block // tile):
        offset = asctile.block_idx() * per_block + i * tile
        x = asctile.copy_in(x_gm, [offset], [tile])
        if op == "abs":
            z = asctile.abs(x)
        elif op == "relu":
            z = asctile.relu(x)
        elif op == "exp":
            z = asctile.exp(x)
        elif op == "erf":
            z = asctile.erf(x)
        elif op == "scale":
            z = x * 2.0
        else:
            z = asctile.tanh(x)
        asctile.copy_out(z, z_gm, [offset])


@asctile.jit(insert_sync=True, static_alloc=False, reuse_alloc=2, cv_ratio=1, vf_fusion=False)
def vsub_with_options(x_ptr: asctile.GlobalAddress, y_ptr: asctile.GlobalAddress, z_ptr: asctile.GlobalAddress,
                      n: asctile.ConstExpr[int]):
    x_gm = asctile.global_tensor(x_ptr, [n])
    y_gm = asctile.global_tensor(y_ptr, [n])
    z_gm = asctile.global_tensor(z_ptr, [n])
    x = asctile.copy_in(x_gm, [0], [n])
    y = asctile.copy_in(y_gm, [0], [n])
    asctile.copy_out(x - y, z_gm, [0])


@asctile.jit
def vmax3(x_ptr: asctile.GlobalAddress, y_ptr: asctile.GlobalAddress, w_ptr: asctile.GlobalAddress,
          z_ptr: asctile.GlobalAddress, n: asctile.ConstExpr[int]):
    """asctile's builtins: max and sum of tiles (its codegen's own, not Python's)."""
    x = asctile.copy_in(asctile.global_tensor(x_ptr, [n]), [0], [n])
    y = asctile.copy_in(asctile.global_tensor(y_ptr, [n]), [0], [n])
    w = asctile.copy_in(asctile.global_tensor(w_ptr, [n]), [0], [n])
    asctile.copy_out(max(x, y, w) + sum([x, y], w), asctile.global_tensor(z_ptr, [n]), [0])


@asctile.jit
def sum_rows(x_ptr: asctile.GlobalAddress, z_ptr: asctile.GlobalAddress, n: asctile.ConstExpr[int],
             rows: asctile.ConstExpr[int]):
    """z = the sum of x's `rows` rows of n: the nightly gives each row's tile its own VECIN queue, all
    alive until the end (one TQue buffer per row on TPosition VECIN)."""
    x_gm = asctile.global_tensor(x_ptr, [rows * n])
    acc = asctile.copy_in(x_gm, [0], [n])
    for i in asctile.static_range(1, rows):
        acc = acc + asctile.copy_in(x_gm, [i * n], [n])
    asctile.copy_out(acc, asctile.global_tensor(z_ptr, [n]), [0])
