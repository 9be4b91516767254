"""Port of asc2's kernels/test_matmul_mnblock.py: c = a @ b in m_tile x n_tile tiles spread over
the blocks (each block n_tiles_per_block columns of tiles and the m tiles that make its share),
straight into L0A/L0B, against torch."""
import pytest
import torch

pytestmark = pytest.mark.kernel
asctile = pytest.importorskip("asc.experimental.asctile", reason="asctile comes with pyasc's nightly (pyasc-dev)")


@asctile.jit
def matmul_kernel(a_ptr: asctile.GlobalAddress, b_ptr: asctile.GlobalAddress, c_ptr: asctile.GlobalAddress,
                  a_shape: asctile.ConstExpr, b_shape: asctile.ConstExpr, c_shape: asctile.ConstExpr,
                  m_tile: asctile.ConstExpr[int], m_tiles_per_block: asctile.ConstExpr[int],
                  n_tile: asctile.ConstExpr[int], n_tiles_per_block: asctile.ConstExpr[int]):
    a_gm = asctile.global_tensor(a_ptr, a_shape)
    b_gm = asctile.global_tensor(b_ptr, b_shape)
    c_gm = asctile.global_tensor(c_ptr, c_shape)
    block_id = asctile.block_idx()
    m_elems_per_block = m_tile * m_tiles_per_block
    m_base_off = (m_elems_per_block * block_id) % a_shape[0]
    n_base_off = ((m_elems_per_block * block_id) // a_shape[0]) * (n_tile * n_tiles_per_block)
    for j in asctile.range(n_tiles_per_block):
        b_offset = n_base_off + j * n_tile
        b_j = asctile.copy_in(b_gm, [0, b_offset], [b_shape[0], n_tile], asctile.TensorLocation.L0B)
        for i in asctile.range(m_tiles_per_block):
            a_offset = m_base_off + i * m_tile
            a_i = asctile.copy_in(a_gm, [a_offset, 0], [m_tile, a_shape[1]], asctile.TensorLocation.L0A)
            asctile.copy_out(a_i @ b_j, c_gm, [a_offset, b_offset])


def m_tiles_per_block(m, k, n, core_num, m_tile, n_tile, n_tiles_per_block, element_size=2):
    """The original's tiling checks (eval_tiles): every tile whole, the tiles even over the blocks."""
    assert m_tile % 16 == 0 and n_tile % 16 == 0
    assert m_tile * k * element_size <= 64 * 1024 and n_tile * k * element_size <= 64 * 1024  # L0A/L0B: 64 KiB
    assert m % m_tile == 0 and n % n_tile == 0
    m_tiles, n_tiles = m // m_tile, n // n_tile
    assert (m_tiles * n_tiles) % core_num == 0
    tiles_per_core = m_tiles * n_tiles // core_num
    assert n_tiles % n_tiles_per_block == 0 and tiles_per_core % n_tiles_per_block == 0
    per_block = tiles_per_core // n_tiles_per_block
    assert m_tiles % per_block == 0
    return per_block


@pytest.mark.parametrize("m, k, n, core_num, m_tile, n_tile, n_tiles_per_block", [
    (16, 16, 16, 1, 16, 16, 1),
    (16, 160, 16, 1, 16, 16, 1),
    (32, 16, 16, 2, 16, 16, 1),
    (16, 16, 32, 2, 16, 16, 1),
    (32, 16, 32, 2, 16, 16, 1),
    (32, 16, 32, 2, 16, 16, 2),
    (32, 16, 32, 4, 16, 16, 1),
    (480, 224, 1344, 30, 48, 32, 7),
])
def test_matmul_mnblock(run, m, k, n, core_num, m_tile, n_tile, n_tiles_per_block):
    torch.manual_seed(0)
    a = torch.rand((m, k), dtype=torch.float16)
    b = torch.rand((k, n), dtype=torch.float16)
    c = torch.zeros((m, n), dtype=torch.float32)
    per_block = m_tiles_per_block(m, k, n, core_num, m_tile, n_tile, n_tiles_per_block)
    run(matmul_kernel, core_num, a, b, c, a.shape, b.shape, c.shape, m_tile, per_block, n_tile,
        n_tiles_per_block)
    torch.testing.assert_close(c, a.to(torch.float32) @ b.to(torch.float32))
