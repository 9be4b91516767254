"""asctile kernels whose element-wise chains pyasc's nightly fuses into one VF (the register API:
`__VEC_SCOPE__`, `AscendC::Reg::*`) when compiled with vf_fusion for an Ascend950 SOC. One 1-D
tensor split over the blocks, each block's part in tiles of `tile` elements. Import only where
asctile is installed."""
from asc.experimental import asctile


@asctile.jit
def chain(x_ptr: asctile.GlobalAddress, y_ptr: asctile.GlobalAddress, w_ptr: asctile.GlobalAddress,
          z_ptr: asctile.GlobalAddress, n: asctile.ConstExpr[int], tile: asctile.ConstExpr[int],
          op: asctile.ConstExpr[str]):
    x_gm = asctile.global_tensor(x_ptr, [n])
    y_gm = asctile.global_tensor(y_ptr, [n])
    w_gm = asctile.global_tensor(w_ptr, [n])
    z_gm = asctile.global_tensor(z_ptr, [n])
    per_block = n // asctile.block_num()
    for i in asctile.range(per_block // tile):
        offset = asctile.block_idx() * per_block + i * tile
        x = asctile.copy_in(x_gm, [offset], [tile])
        y = asctile.copy_in(y_gm, [offset], [tile])
        w = asctile.copy_in(w_gm, [offset], [tile])
        if op == "add_mul":
            z = (x + y) * w
        elif op == "exp_relu":
            z = asctile.relu(asctile.exp(x) - y) * w
        elif op == "scalar":
            z = x * 2.0 + w
        elif op == "max_min":
            z = asctile.minimum(asctile.maximum(x, y), w)
        elif op == "sum":  # a reduction in the VF, broadcast back over the tile
            z = asctile.full_like(x, asctile.reduce_sum(x * y)) + w
        elif op == "softmax":
            z = asctile.exp(x - asctile.reduce_max(x)) * w
        elif op == "bits":
            z = (x & y) | (x ^ w)
        elif op == "shift":
            z = (x << 2) + y * w
        elif op == "div":
            z = (x - y) / w
        else:
            z = asctile.sqrt(asctile.abs(x)) + asctile.log(asctile.abs(y)) * w
        asctile.copy_out(z, z_gm, [offset])


@asctile.jit
def shift_by(x_ptr: asctile.GlobalAddress, z_ptr: asctile.GlobalAddress, n: asctile.ConstExpr[int],
             count: int):
    """z = (x << count) + x, fused; `count` is a runtime scalar."""
    x = asctile.copy_in(asctile.global_tensor(x_ptr, [n]), [0], [n])
    asctile.copy_out((x << count) + x, asctile.global_tensor(z_ptr, [n]), [0])


@asctile.jit
def rows(x_ptr: asctile.GlobalAddress, b_ptr: asctile.GlobalAddress, z_ptr: asctile.GlobalAddress,
         r: asctile.ConstExpr[int], c: asctile.ConstExpr[int], op: asctile.ConstExpr[str]):
    """One r x c tile: a softmax of each row, or relu(x + b) * x with b one row broadcast."""
    x = asctile.copy_in(asctile.global_tensor(x_ptr, [r, c]), [0, 0], [r, c])
    b = asctile.copy_in(asctile.global_tensor(b_ptr, [1, c]), [0, 0], [1, c])
    if op == "softmax":
        e = asctile.exp(x - asctile.reduce_max(x, 1, keep_dims=True))
        z = e / asctile.reduce_sum(e, 1, keep_dims=True)
    else:
        z = asctile.relu(x + b) * x
    asctile.copy_out(z, asctile.global_tensor(z_ptr, [r, c]), [0, 0])


@asctile.jit(vf_fusion=True)
def add_mul_fused(x_ptr: asctile.GlobalAddress, y_ptr: asctile.GlobalAddress, w_ptr: asctile.GlobalAddress,
                  z_ptr: asctile.GlobalAddress, n: asctile.ConstExpr[int]):
    """z = (x + y) * w in one tile, vf_fusion asked for by the kernel itself."""
    x = asctile.copy_in(asctile.global_tensor(x_ptr, [n]), [0], [n])
    y = asctile.copy_in(asctile.global_tensor(y_ptr, [n]), [0], [n])
    w = asctile.copy_in(asctile.global_tensor(w_ptr, [n]), [0], [n])
    asctile.copy_out((x + y) * w, asctile.global_tensor(z_ptr, [n]), [0])
