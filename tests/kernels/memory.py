"""Kernels for the memory-management tests (TPipe, TQue/TQueBind, TBuf, TBufPool, LocalMemAllocator,
LocalTensor and GlobalTensor accessors). `mode` selects a correct run (0) or one misuse, so that one
build serves many cases."""
import asc


@asc.jit
def queue_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, q: asc.GlobalAddress, tiles: int, tile: int, mode: int):
    """x -> VECIN queue (2 buffers) -> +1 into a VECOUT queue (2 buffers) -> z, tile by tile; q gets the
    queue queries of the first tile. mode > 0 breaks one queue rule."""
    pipe = asc.TPipe()
    x_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    q_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, tiles * tile)
    z_gm.set_global_buffer(z, tiles * tile)
    q_gm.set_global_buffer(q, 16)
    in_q = asc.TQue(asc.TPosition.VECIN, 2)
    out_q = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(in_q, 2, tile * x.dtype.sizeof())
    pipe.init_buffer(out_q, 2, tile * x.dtype.sizeof())
    q_gm.set_value(0, in_q.get_tensor_count_in_que())
    for i in range(tiles):
        a = in_q.alloc_tensor(x.dtype)
        asc.data_copy(a, x_gm[i * tile:], tile)
        in_q.enque(a)
        if i == 0:
            q_gm.set_value(1, in_q.get_tensor_count_in_que())
            q_gm.set_value(2, in_q.has_tensor_in_que())
            q_gm.set_value(3, in_q.vacant_in_que())
            q_gm.set_value(4, in_q.has_idle_buffer())
            b2 = in_q.alloc_tensor(x.dtype)
            q_gm.set_value(5, in_q.has_idle_buffer())
            in_q.enque(b2)
            q_gm.set_value(6, in_q.vacant_in_que())
            q_gm.set_value(7, in_q.get_tensor_count_in_que())
            a = in_q.deque(x.dtype)  # first in, first out
            b2 = in_q.deque(x.dtype)
            in_q.free_tensor(b2)
            in_q.enque(a)
        if mode == 1:
            extra = out_q.alloc_tensor(x.dtype)
            out_q.enque(extra)
            out_q.enque(out_q.alloc_tensor(x.dtype))  # depth 1
        if mode == 2:
            out_q.deque(x.dtype)
        if mode == 3:
            out_q.free_tensor(a)  # a is in_q's
        a = in_q.deque(x.dtype)
        c = out_q.alloc_tensor(x.dtype)
        if mode == 4:
            c2 = out_q.alloc_tensor(x.dtype)
            c3 = out_q.alloc_tensor(x.dtype)  # 2 buffers
        asc.adds(c, a, 1.0, tile)
        in_q.free_tensor(a)
        if mode == 5:
            asc.adds(c, a, 1.0, tile)  # a was freed
        if mode == 6:
            in_q.free_tensor(a)
        if mode == 7:
            q_gm.set_value(8, a.get_value(0))
        out_q.enque(c)
        if mode == 8:
            out_q.free_tensor(c)  # still queued
        if mode == 9:
            out_q.enque(c)
        c = out_q.deque(x.dtype)
        asc.data_copy(z_gm[i * tile:], c, tile)
        out_q.free_tensor(c)
        if mode == 10:
            d = out_q.alloc_tensor(x.dtype)
            d2 = out_q.alloc_tensor(x.dtype)
            out_q.free_tensor(c)  # c's buffer was allocated again
        if mode == 11:
            pipe.reset()
            asc.duplicate(c, 0.0, tile)
        if mode == 12:
            v = c[tile // 2:]
            asc.duplicate(v, 0.0, tile // 2)  # a sub-tensor of a freed buffer


@asc.jit
def forms_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int, mode: int):
    """The in-place forms on a depth-0 queue and EnQue/DeQue with user positions on a TQue; z = x * 2.
    mode > 0 breaks one of their rules (5: more than 8 tensors allocated on VECIN, from a TBufPool)."""
    pipe = asc.TPipe()
    x_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    z_gm.set_global_buffer(z, n)
    inplace = asc.TQue(asc.TPosition.VECIN, 0)
    pipe.init_buffer(inplace, 2, n * x.dtype.sizeof())
    user = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(user, 1, n * x.dtype.sizeof())
    bind = asc.TQueBind(asc.TPosition.VECIN, asc.TPosition.VECOUT, 1)
    a = asc.LocalTensor(x.dtype)
    inplace.alloc_tensor(a)
    asc.data_copy(a, x_gm, n)
    inplace.enque(a)
    if mode == 1:
        inplace.alloc_tensor(x.dtype)  # non-in-place form on a depth-0 queue
    if mode == 2:
        inplace.has_idle_buffer()
    if mode == 3:
        bind.alloc_tensor(x.dtype)
    inplace.deque(a)
    c = user.alloc_tensor(x.dtype)
    asc.muls(c, a, 2.0, n)
    inplace.free_tensor(a)
    user.enque(c, asc.TPosition.VECOUT, asc.TPosition.GM)
    if mode == 4:
        c = user.deque(x.dtype)  # plain DeQue of a user-position EnQue
    c = user.deque(x.dtype, asc.TPosition.VECOUT, asc.TPosition.GM)
    asc.data_copy(z_gm, c, n)
    user.free_tensor(c)
    if mode == 5:
        pool = asc.TBufPool(asc.TPosition.VECIN, 16)
        pipe.init_buf_pool(pool, 320)
        qa = asc.TQue(asc.TPosition.VECIN, 1)
        qb = asc.TQue(asc.TPosition.VECIN, 1)
        pool.init_buffer(qa, 5, 32)
        pool.init_buffer(qb, 5, 32)
        for k in range(5):
            qa.alloc_tensor(x.dtype)
        for k in range(4):
            qb.alloc_tensor(x.dtype)  # the 9th tensor allocated on VECIN


@asc.jit
def pool_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, addr: asc.GlobalAddress, n: int, mode: int):
    """TBufPool's example: pool0 from the TPipe; in it a VECIN queue and pool1; pool2 shares pool1's
    range. Stage 1 (pool1): z[:n] = x + 1; stage 2 (pool2, after pool1.Reset): z[n:2n] = x * 3; z[2n:]
    gets pool1's TBuf after the Reset. addr gets the UB addresses of the buffers; mode > 0 breaks one
    pool rule."""
    pipe = asc.TPipe()
    x_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    a_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    z_gm.set_global_buffer(z, 3 * n)
    a_gm.set_global_buffer(addr, 8)
    size = n * x.dtype.sizeof()
    head = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(head, 32)
    pool0 = asc.TBufPool(asc.TPosition.VECCALC, 8)
    pool1 = asc.TBufPool(asc.TPosition.VECCALC, 4)
    pool2 = asc.TBufPool(asc.TPosition.VECCALC, 4)
    pipe.init_buf_pool(pool0, size * 3)
    src_q = asc.TQue(asc.TPosition.VECIN, 1)
    pool0.init_buffer(src_q, 1, size)
    pool0.init_buf_pool(pool1, size * 2)
    pool0.init_buf_pool(pool2, size * 2, pool1)
    q1 = asc.TQue(asc.TPosition.VECOUT, 1)
    t1 = asc.TBuf(asc.TPosition.VECCALC)
    pool1.init_buffer(q1, 1, size)
    pool1.init_buffer(t1, size)
    if mode == 1:
        more = asc.TBuf(asc.TPosition.VECCALC)
        pool1.init_buffer(more, 32)  # pool1 is full
    if mode == 2:
        big = asc.TBufPool(asc.TPosition.VECCALC, 8)
        pool0.init_buf_pool(big, 32)  # pool0 has 7 buffer IDs left
    if mode == 3:
        wide = asc.TBufPool(asc.TPosition.VECCALC, 4)
        pool0.init_buf_pool(wide, size * 3, pool1)
    s = src_q.alloc_tensor(x.dtype)
    asc.data_copy(s, x_gm, n)
    src_q.enque(s)
    s = src_q.deque(x.dtype)
    o = q1.alloc_tensor(x.dtype)
    tmp = t1.get(x.dtype)
    asc.adds(tmp, s, 1.0, n)
    asc.data_copy(o, tmp, n)
    a_gm.set_value(0, s.get_phy_addr())
    a_gm.set_value(1, o.get_phy_addr())
    a_gm.set_value(2, tmp.get_phy_addr())
    q1.enque(o)
    if mode == 4:
        pool1.reset()  # o is still in q1
    o = q1.deque(x.dtype)
    asc.data_copy(z_gm, o, n)
    q1.free_tensor(o)
    pool1.reset()
    if mode == 5:
        pool1.init_buffer(t1, 32)
    q2 = asc.TQue(asc.TPosition.VECOUT, 1)
    pool2.init_buffer(q2, 1, size)
    o2 = q2.alloc_tensor(x.dtype)
    a_gm.set_value(3, o2.get_phy_addr())
    asc.data_copy(z_gm[2 * n:], t1.get(x.dtype), n)  # pool1's buffer after its Reset: undefined
    asc.muls(o2, s, 3.0, n)
    q2.enque(o2)
    o2 = q2.deque(x.dtype)
    asc.data_copy(z_gm[n:], o2, n)
    q2.free_tensor(o2)
    src_q.free_tensor(s)
    pool2.reset()
    if mode == 6:
        pool0.init_buf_pool(pool1, 64, pool2)  # pool1 was Reset: it may get memory again
        q1.alloc_tensor(x.dtype)  # but q1's buffers went with the old pool1


@asc.jit
def pipe_kernel(z: asc.GlobalAddress, count: int, num: int, length: int, mode: int):
    """Event IDs and the TPipe's limits: z[i] = the i-th AllocEventID<V_S> of `count`, then FetchEventID
    and the IDs after release; `num` buffers of `length` bytes for a VECIN queue; mode > 0 breaks a rule."""
    pipe = asc.TPipe()
    z_gm = asc.GlobalTensor()
    z_gm.set_global_buffer(z, 32)
    for i in range(count):
        z_gm.set_value(i, pipe.alloc_event_id(asc.HardEvent.V_S))
    z_gm.set_value(16, pipe.fetch_event_id(asc.HardEvent.V_S))
    z_gm.set_value(17, pipe.fetch_event_id(asc.HardEvent.MTE2_V))
    if count > 1:
        pipe.release_event_id(1, asc.HardEvent.V_S)
        z_gm.set_value(18, pipe.fetch_event_id(asc.HardEvent.V_S))
        z_gm.set_value(19, pipe.alloc_event_id(asc.HardEvent.V_S))
    if mode == 1:
        pipe.release_event_id(count, asc.HardEvent.V_S)  # never allocated
    if mode == 2:
        pipe.release_event_id(9, asc.HardEvent.V_S)
    if mode == 3:
        asc.get_tpipe_ptr().fetch_event_id(asc.HardEvent.V_S)
    que = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(que, num, length)
    t = que.alloc_tensor(asc.float32)
    z_gm.set_value(20, t.get_size())
    que.free_tensor(t)
    if mode == 4:
        for k in range(65):
            scratch = asc.TBuf(asc.TPosition.VECCALC)
            pipe.init_buffer(scratch, 32)
    if mode == 5:
        pipe.destroy()
        pipe.init_buffer(que, 1, 32)
    if mode == 6:
        pipe.destroy()
        pipe.init()
        que2 = asc.TQue(asc.TPosition.VECIN, 1)
        pipe.init_buffer(que2, 1, length)
        t2 = que2.alloc_tensor(asc.float32)
        z_gm.set_value(21, t2.get_phy_addr())
        que2.free_tensor(t2)
        que.alloc_tensor(asc.float32)  # its buffers went with the destroyed TPipe


@asc.jit
def allocator_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, w: asc.GlobalAddress, n: int, first: int,
                     mode: int):
    """LocalMemAllocator: `first` floats on VECIN, then n on VECOUT; z = x + 1 through them; w gets
    the free address before and after and the second tensor's address. mode > 0 breaks an allocator
    rule."""
    x_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    w_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    z_gm.set_global_buffer(z, n)
    w_gm.set_global_buffer(w, 4)
    allocator = asc.LocalMemAllocator()
    w_gm.set_value(0, asc.language.core.ir_value.PlainValue(allocator.get_cur_addr()))
    a = allocator.alloc(asc.TPosition.VECIN, asc.float32, first)
    b = allocator.alloc(asc.TPosition.VECOUT, asc.float32, n)
    asc.data_copy(a, x_gm, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.adds(b, a, 1.0, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(z_gm, b, n)
    w_gm.set_value(1, asc.language.core.ir_value.PlainValue(allocator.get_cur_addr()))
    w_gm.set_value(2, b.get_phy_addr())
    if mode == 1:
        other = asc.LocalMemAllocator()
    if mode == 2:
        pipe = asc.TPipe()


@asc.jit
def tensor_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, w: asc.GlobalAddress, n: int, off: int, mode: int):
    """LocalTensor and GlobalTensor accessors on a TBuf: z gets x through GetValue/SetValue and
    operator[]; w gets addresses, sizes and reinterpreted halves; mode > 0 goes out of range."""
    pipe = asc.TPipe()
    x_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    w_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    z_gm.set_global_buffer(z)
    w_gm.set_global_buffer(w, 16)
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, 2 * n * x.dtype.sizeof())
    t = buf.get(x.dtype, n)
    for i in range(n):
        t.set_value(i, x_gm.get_value(i) * 2)
    u = t[off:]
    w_gm.set_value(0, t.get_phy_addr())
    w_gm.set_value(1, t.get_phy_addr(off))
    w_gm.set_value(2, u.get_phy_addr())
    w_gm.set_value(3, u.get_size())
    w_gm.set_value(4, x_gm.get_size())
    w_gm.set_value(5, z_gm.get_size())
    v = buf.get(asc.int16)
    v.set_addr_with_offset(t, off)
    w_gm.set_value(6, v.get_phy_addr())
    w_gm.set_value(7, v.get_size())
    w_gm.set_value(8, v.get_value(1))  # the high half of t[off]
    r = t.reinterpret_cast(asc.int32)
    w_gm.set_value(9, r.get_value(0))
    w_gm.set_value(10, r.get_size())
    z_tail = z_gm[off:]
    for i in range(n - off):
        z_tail.set_value(i, u.get_value(i))
    if mode == 1:
        t.get_value(n)
    if mode == 2:
        z_gm.set_value(n, 1.0)
    if mode == 3:
        v.set_addr_with_offset(t, n + 1)
    if mode == 4:
        x_gm.get_value(n + off)


@asc.jit
def user_tag_kernel(w: asc.GlobalAddress, mode: int):
    """LocalTensor user tags: w gets the tags read back (see test_user_tags); mode 1 tags a tensor
    built from an address, which has no buffer to hold one."""
    pipe = asc.TPipe()
    w_gm = asc.GlobalTensor()
    w_gm.set_global_buffer(w, 8)
    que = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(que, 1, 256)
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, 256)
    t = que.alloc_tensor(asc.float32)
    w_gm.set_value(0, t.get_user_tag())
    t.set_user_tag(7)
    w_gm.set_value(1, t[8:].get_user_tag())
    t[8:].set_user_tag(9)
    w_gm.set_value(2, t.reinterpret_cast(asc.int16).get_user_tag())
    que.free_tensor(t)
    again = que.alloc_tensor(asc.float32)
    w_gm.set_value(3, again.get_user_tag())
    que.free_tensor(again)
    scratch = buf.get(asc.float32)
    w_gm.set_value(4, scratch.get_user_tag())
    scratch.set_user_tag(-5)
    w_gm.set_value(5, buf.get(asc.int32, 16).get_user_tag())
    if mode == 1:
        bare = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 1024, 8)
        bare.set_user_tag(1)


@asc.jit
def tbuf_as_queue_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n: asc.ConstExpr[int]):
    """A TBuf used through TQueBind's interface, as pyasc lets a kernel: alloc_tensor and deque
    are its whole buffer, enque and free_tensor do nothing (kernel_tbuf_impl.h). z = x + 1."""
    x_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    z_gm.set_global_buffer(z, n)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, n * 4)
    a = buf.alloc_tensor(x.dtype)
    asc.data_copy(a, x_gm, n)
    buf.enque(a)
    b = buf.deque(x.dtype)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.adds(b, b, 1.0, n)
    buf.free_tensor(b)
    c = buf.alloc_tensor(x.dtype)  # the same bytes again: freeing a TBuf's tensor releases nothing
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(z_gm, c, n)
    buf.free_tensor(c)
