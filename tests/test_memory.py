"""Memory management (资源管理/Pipe和Que框架, 内存管理, LocalTensor/GlobalTensor): pyasc kernels run through
run_local, outputs against numpy, misuse against the exact message. Each kernel is one build; `mode`
picks the case."""
import numpy as np
import pytest

import ascrun
import memory as mk
from conftest import PAST_THE_END, unsited

pytestmark = pytest.mark.kernel

UB = 192 * 1024


def fails(kernel, *args):
    with pytest.raises(ascrun.KernelError) as e:
        ascrun.run_local(kernel, 1, *args)
    assert e.value.kind == "runtime_error"
    return unsited(str(e.value))


# ---- TQue: a double-buffered pipeline, the queue queries and every misuse -------------------------

def queue_args(mode, tiles=4, tile=64):
    x = np.random.default_rng(tiles).standard_normal(tiles * tile).astype(np.float32)
    return x, np.zeros_like(x), np.zeros(16, np.int32), tiles, tile, mode


@pytest.mark.parametrize("tiles,tile", [(1, 8), (4, 64), (7, 256)])
def test_queue_pipeline(tiles, tile):
    x, z, q, *rest = queue_args(0, tiles, tile)
    ascrun.run_local(mk.queue_kernel, 2, x, z, q, tiles, tile, 0)  # two blocks, each its own UB and queues
    np.testing.assert_array_equal(z, x + np.float32(1))
    # count before, then after one EnQue (depth 2): count, has tensor, vacant, idle; after a second
    # AllocTensor: idle; after a second EnQue: vacant, count
    assert q[:8].tolist() == [0, 1, 1, 1, 1, 0, 0, 2]


@pytest.mark.parametrize("mode,message", [
    (1, "TQue<VECOUT, 1>::EnQue: the queue already holds 1 tensor, its depth (DeQue before enqueuing more; the "
        "device's EnQue would fail)"),
    (2, "TQue<VECOUT, 1>::DeQue: the queue is empty (no EnQue before this DeQue)"),
    (3, "TQue<VECOUT, 1>::FreeTensor: the tensor at UB offset 0x0 was not allocated from this queue"),
    (4, "TQue<VECOUT, 1>::AllocTensor: all 2 buffers are in use (missing FreeTensor?)"),
    (5, "Adds: src LocalTensor (UB offset 0x0) views a TQue buffer that was freed: used after FreeTensor, or after "
        "its TPipe was reset or destroyed"),
    (6, "TQue<VECIN, 2>::FreeTensor: the tensor's buffer (UB offset 0x0) was already freed (FreeTensor twice?)"),
    (7, "LocalTensor<float>::GetValue(0): the tensor (UB offset 0x0) views a TQue buffer that was freed: used after "
        "FreeTensor, or after its TPipe was reset or destroyed"),
    (8, "TQue<VECOUT, 1>::FreeTensor: the tensor (UB offset 0x200) is still in the queue (DeQue it first)"),
    (9, "TQue<VECOUT, 1>::EnQue: the tensor (UB offset 0x200) is already in the queue"),
    (10, "TQue<VECOUT, 1>::FreeTensor: the tensor's buffer (UB offset 0x200) was freed and allocated again since the "
         "tensor was taken from it (a stale tensor)"),
    (11, "Duplicate: dst LocalTensor (UB offset 0x200) views a TQue buffer that was freed: used after FreeTensor, or "
         "after its TPipe was reset or destroyed"),
    (12, "Duplicate: dst LocalTensor (UB offset 0x280) views a TQue buffer that was freed: used after FreeTensor, or "
         "after its TPipe was reset or destroyed"),
])
def test_queue_misuse(mode, message):
    # in_q: 2 x 256 bytes at 0x0 (the tile's tensor a in the first), out_q: 2 x 256 bytes at 0x200
    assert fails(mk.queue_kernel, *queue_args(mode)) == "block 0: " + message


def test_queue_misuse_keeps_what_was_written_before():
    x, z, q, *rest = queue_args(6)
    with pytest.raises(ascrun.KernelError):
        ascrun.run_local(mk.queue_kernel, 1, x, z, q, 4, 64, 6)
    assert q[:8].tolist() == [0, 1, 1, 1, 1, 0, 0, 2]  # GM writes before the fault stay, as on the device


# ---- in-place forms (depth 0), user positions, TQueBind ------------------------------------------

def forms(mode):
    x = np.linspace(-3, 3, 64).astype(np.float32)
    return x, np.zeros_like(x), 64, mode


def test_in_place_forms_and_user_positions():
    x, z, n, mode = forms(0)
    ascrun.run_local(mk.forms_kernel, 1, x, z, n, mode)
    np.testing.assert_array_equal(z, x * np.float32(2))


@pytest.mark.parametrize("mode,message", [
    (1, "TQue<VECIN, 0>::AllocTensor: a depth-0 queue takes the in-place form AllocTensor(tensor) "
        "(TQueBind/AllocTensor.md)"),
    (2, "TQue<VECIN, 0>::HasIdleBuffer: not supported on a depth-0 queue (the in-place tensor forms; see "
        "TQue/HasIdleBuffer.md)"),
    # pyasc's init_buffer takes a TQue only: a TQueBind it declares never gets buffers
    (3, "TQueBind<VECIN, VECOUT, 1>::AllocTensor: the queue has no buffers (call TPipe::InitBuffer for it first)"),
    (4, "TQue<VECOUT, 1>::DeQue: the tensor at the head of the queue was enqueued with other user positions (DeQue "
        "with the positions of its EnQue)"),
    (5, "TQue<VECIN, 1>::AllocTensor: 8 tensors are already allocated on TPosition VECIN across its queues (at most 8 "
        "at a time on Atlas A2/A3; FreeTensor some first)"),
])
def test_forms_misuse(mode, message):
    assert fails(mk.forms_kernel, *forms(mode)) == "block 0: " + message


# ---- TBufPool ------------------------------------------------------------------------------------

def pool(mode, n=64):
    x = np.arange(n, dtype=np.float32) - 7
    return x, np.zeros(3 * n, np.float32), np.zeros(8, np.uint64), n, mode


@pytest.mark.parametrize("n", [8, 64, 1000])
def test_pools_nested_shared_and_reset(n):
    x, z, addr, *_ = pool(0, n)
    ascrun.run_local(mk.pool_kernel, 1, x, z, addr, n, 0)
    np.testing.assert_array_equal(z[:n], x + np.float32(1))
    np.testing.assert_array_equal(z[n:2 * n], x * np.float32(3))
    # pool1's TBuf after pool1.Reset: undefined contents, the UB poison byte
    assert (z[2 * n:].view(np.uint32) == 0xA5A5A5A5).all()
    size = -(-n * 4 // 32) * 32
    pool0 = 32  # after the 32-byte TBuf from the TPipe
    # src_q at pool0's start, pool1 after it (its queue, then its TBuf), pool2's queue at pool1's start
    assert addr[:4].tolist() == [pool0, pool0 + size, pool0 + 2 * size, pool0 + size]


@pytest.mark.parametrize("mode,message", [
    (1, "TBufPool<VECCALC, 4>::InitBuffer(TBuf<VECCALC>, 32): 1 x 32 bytes from UB offset 0x320 do not fit in the "
        "pool's 512 bytes at UB offset 0x120 (0 left)"),
    (2, "TBufPool<VECCALC, 8>::InitBufPool(TBufPool<VECCALC, 8>, 32): the new pool's bufIDSize 8 exceeds the 7 buffer "
        "IDs this pool has left"),
    (3, "TBufPool<VECCALC, 8>::InitBufPool(TBufPool<VECCALC, 4>, 768, TBufPool<VECCALC, 4>): len is longer than the "
        "shared pool's 512 bytes"),
    (4, "TBufPool<VECCALC, 4>::Reset: TQue<VECOUT, 1> (UB offset 0x120) still holds a tensor (AllocTensor/FreeTensor "
        "and EnQue/DeQue must be paired before switching pools)"),
    (5, "TBufPool<VECCALC, 4>::InitBuffer(TBuf<VECCALC>, 32): the pool was Reset (its buffers stay usable; give it "
        "memory again with InitBufPool to allocate more)"),
    (6, "TQue<VECOUT, 1>::AllocTensor: the TBufPool that gave this queue its buffers was given memory again "
        "(InitBufPool after Reset) or destroyed: call InitBuffer for the queue again"),
])
def test_pool_misuse(mode, message):
    assert fails(mk.pool_kernel, *pool(mode)) == "block 0: " + message


# ---- TPipe: event IDs, limits, Destroy/Init ------------------------------------------------------

def test_event_ids_and_buffer_rounding():
    z = np.full(32, -1, np.int32)
    ascrun.run_local(mk.pipe_kernel, 1, z, 3, 2, 100, 0)
    assert z[:3].tolist() == [0, 1, 2]          # AllocEventID<V_S> x 3
    assert z[16:20].tolist() == [3, 0, 1, 1]    # Fetch V_S, Fetch MTE2_V, after ReleaseEventID(1): Fetch, Alloc
    assert z[20] == 32                          # 100 bytes round up to 128: 32 floats


def test_seven_event_ids_and_the_whole_unified_buffer():
    z = np.full(32, -1, np.int32)
    ascrun.run_local(mk.pipe_kernel, 1, z, 7, 1, UB, 0)
    assert z[:7].tolist() == list(range(7))
    assert z[16:20].tolist() == [7, 0, 1, 1]   # the last free ID; after releasing 1, 1 again
    assert z[20] == UB // 4                   # one VECIN buffer of the whole 192 KiB


@pytest.mark.parametrize("args,message", [
    ((9, 1, 32, 0), "TPipe::AllocEventID<HardEvent::V_S>: all 8 event IDs are in use (allocated and not released, or "
                    "with a SetFlag outstanding)"),
    ((3, 1, 32, 1), "TPipe::ReleaseEventID<HardEvent::V_S>(3): event ID 3 is not allocated (it must come from "
                    "AllocEventID<HardEvent::V_S> and be released once)"),
    ((3, 1, 32, 2), "TPipe::ReleaseEventID<HardEvent::V_S>(9): event ID 9 is out of range (event IDs are 0 to 7)"),
    ((8, 1, 32, 3), "TPipe::FetchEventID<HardEvent::V_S>: all 8 event IDs are in use (allocated and not released, or "
                    "with a SetFlag outstanding)"),
    ((0, 9, 32, 0), "TPipe::InitBuffer(TQue<VECIN, 1>, 9, 32): 9 TQue buffers on TPosition VECIN (at most 8 on "
                    "Atlas A2/A3, Ascend C's TQue简介.md \"TQue Buffer限制\": a freed buffer holds one of its "
                    "position's 8 hardware event IDs until it is allocated again)"),
    ((0, 1, UB + 1, 0), "TPipe::InitBuffer(TQue<VECIN, 1>, 1, 196609): 1 x 196640 bytes from UB offset 0x0 do not "
                        "fit in the Unified Buffer (0x30000 bytes, 0x30000 left)"),
    ((0, 2, 32, 4), "TPipe::InitBuffer(TBuf<VECCALC>, 32): a kernel may use at most 64 buffers in total"),
    ((0, 1, 32, 5), "TPipe::InitBuffer: this TPipe was destroyed"),
    ((0, 1, 32, 6), "TQue<VECIN, 1>::AllocTensor: the TPipe that allocated this queue's buffers was reset or "
                    "destroyed (call InitBuffer again)"),
])
def test_pipe_misuse(args, message):
    assert fails(mk.pipe_kernel, np.zeros(32, np.int32), *args) == "block 0: " + message


def test_destroy_then_init_gives_a_fresh_pipe():
    z = np.zeros(32, np.int32)
    with pytest.raises(ascrun.KernelError):  # mode 6 ends by using a queue of the destroyed pipe
        ascrun.run_local(mk.pipe_kernel, 1, z, 0, 1, 64, 6)
    assert z[21] == 0  # the revived TPipe hands out the Unified Buffer from offset 0 again


# ---- LocalMemAllocator ---------------------------------------------------------------------------

def test_local_mem_allocator():
    x = np.arange(64, dtype=np.float32)
    z, w = np.zeros_like(x), np.zeros(4, np.int64)
    ascrun.run_local(mk.allocator_kernel, 1, x, z, w, 64, 96, 0)
    np.testing.assert_array_equal(z, x + np.float32(1))
    assert w[:3].tolist() == [0, 96 * 4 + 64 * 4, 96 * 4]  # free address before, after; the second tensor


@pytest.mark.parametrize("args,message", [
    ((64, 100000, 0), "LocalMemAllocator<UB>::Alloc<VECIN, float>(100000): 400000 bytes from UB offset 0x0 exceed the "
                      "Unified Buffer (196608 bytes left)"),
    ((64, 3, 0), "LocalMemAllocator<UB>::Alloc<VECOUT, float>(64): the free address 0xc is not 32-byte aligned (an "
                 "earlier Alloc's tileSize * sizeof(T) was not a multiple of 32 bytes; LocalTensor addresses must be)"),
    ((64, 64, 1), "LocalMemAllocator<UB>: a second LocalMemAllocator was created while another exists (one per "
                  "hardware position at a time)"),
    ((64, 64, 2), "TPipe: a LocalMemAllocator exists (static tensor programming must not be mixed with TPipe)"),
])
def test_local_mem_allocator_misuse(args, message):
    x = np.arange(64, dtype=np.float32)
    assert fails(mk.allocator_kernel, x, np.zeros_like(x), np.zeros(4, np.int64), *args) == "block 0: " + message


def test_local_mem_allocator_exactly_fills_the_unified_buffer():
    x = np.arange(64, dtype=np.float32)
    first = UB // 4 - 64
    z, w = np.zeros_like(x), np.zeros(4, np.int64)
    ascrun.run_local(mk.allocator_kernel, 1, x, z, w, 64, first, 0)
    assert w[1] == UB
    msg = fails(mk.allocator_kernel, x, np.zeros_like(x), np.zeros(4, np.int64), 64, first + 8, 0)
    assert msg == ("block 0: LocalMemAllocator<UB>::Alloc<VECOUT, float>(64): 256 bytes from UB offset 0x2ff20 exceed "
                   "the Unified Buffer (224 bytes left)")


# ---- LocalTensor and GlobalTensor accessors ------------------------------------------------------

@pytest.mark.parametrize("n,off", [(64, 8), (64, 0), (16, 15), (200, 64)])
def test_tensor_accessors(n, off):
    x = (np.arange(n, dtype=np.float32) * 0.5 + 1)
    z, w = np.zeros_like(x), np.zeros(16, np.int64)
    ascrun.run_local(mk.tensor_kernel, 1, x, z, w, n, off, 0)
    t = x * np.float32(2)
    np.testing.assert_array_equal(z[off:], t[off:])  # GetValue/SetValue, operator[] on both sides
    assert (z[:off] == 0).all()
    assert w[:8].tolist() == [0, 4 * off, 4 * off, n - off, n, 0, 4 * off, (n - off) * 2]
    assert w[8] == t[off:off + 1].view(np.int16)[1]  # SetAddrWithOffset: int16 view of t from element off
    assert w[9] == t[:1].view(np.int32)[0]          # ReinterpretCast<int32_t>
    assert w[10] == n


@pytest.mark.parametrize("mode,message", [
    (1, "LocalTensor<float>::GetValue(64): the index is outside the tensor's 64 elements (UB offset 0x0)"),
    (2, "GlobalTensor::SetValue: elements [64, 65) of tensor argument 'z' are outside its 64 elements" + PAST_THE_END),
    (3, "LocalTensor<int16_t>::SetAddrWithOffset(LocalTensor<float>, 65): the offset is past the end of the source "
        "tensor's 64 elements (UB offset 0x0)"),
    (4, "GlobalTensor::GetValue: elements [72, 73) of tensor argument 'x' are outside its 64 elements" + PAST_THE_END),
])
def test_tensor_accessor_misuse(mode, message):
    x = np.arange(64, dtype=np.float32)
    assert fails(mk.tensor_kernel, x, np.zeros_like(x), np.zeros(16, np.int64), 64, 8, mode) == "block 0: " + message


def test_user_tags():
    # The tag is the buffer's (TBufType::usertag): -1 from InitBuffer, shared by sub-tensors and
    # reinterpreted views, kept across FreeTensor/AllocTensor of the same buffer.
    w = np.full(8, 100, np.int32)
    ascrun.run_local(mk.user_tag_kernel, 1, w, 0)
    assert w.tolist() == [-1, 7, 9, 9, -1, -5, 100, 100]


def test_user_tag_without_a_buffer():
    assert fails(mk.user_tag_kernel, np.zeros(8, np.int32), 1) == (
        "block 0: LocalTensor<float>::SetUserTag: the tensor has no buffer to hold a tag (the device dereferences a "
        "null buffer handle): only tensors from a TQue, TQueBind or TBuf have one, not those built from an address "
        "or a LocalMemAllocator")


def test_a_tbuf_used_as_a_queue_is_its_one_buffer():
    x = np.arange(256, dtype=np.float32)
    z = np.zeros_like(x)
    ascrun.run_local(mk.tbuf_as_queue_kernel, 1, x, z, 256)
    np.testing.assert_array_equal(z, x + 1)
