"""Kernels for the cube instructions on the cpu target: DataCopy GM -> L1 (ND2NZ), LoadData L1 -> L0A/L0B,
Mmad, Fixpipe L0C -> GM. AIC_ONLY kernels (pyasc would make them AIV_ONLY: they have no Matmul object), one block, one build per dtype pair.

matmul_kernel: C (m x n) = A (m x k) x B (k x n), repeated `rounds` times into L0C (the first Mmad starts
C at 0, the others accumulate unless `init_all`), then Fixpipe to c. How A and B reach L0A (Zz) and
L0B (Zn) fractals:
  a_trans 0: `a` is A (m x k) ND; ND2NZ into A1 (column blocks of K0 = 32 B / sizeof(T), m rounded to
             16 rows each), then per row of fractals one LoadData (repeat K1, srcStride M1);
          1: `a` is A^T (k x m) ND (b16 only); ND2NZ gives 16 x 16 fractals of A^T in L0A's order:
             one LoadData with ifTranspose over all M1 * K1 fractals.
          2: GEMV (m = 1, k a multiple of K0): `a` is A (1 x k), copied by ND2NZ as a K1 x K0 matrix,
             so that its k elements lie contiguous in L1 and, after one LoadData, in L0A.
  b_trans 0: `b` is B (k x n) ND (b16 only); ND2NZ, then per row of fractals one LoadData with
             ifTranspose (repeat N1, srcStride K1);
          1: `b` is B^T (n x k) ND; ND2NZ already gives Zn fractals in L0B's order: one LoadData.
  quant  0 NoQuant, 1 F322F16, 2 F322BF16; relu: Fixpipe's reluEn; nz: 1 CFG_NZ (dst_stride is then
         in 32-byte blocks), else CFG_ROW_MAJOR (dst_stride in elements).
Buffers: A1 and B1 64 KiB, A2 and B2 32 KiB, CO1 64 KiB (TQue, so the queues' rules hold too).

fault_kernel: one misuse per `case` (half A/B, float C), each with the fault test_cube_ops.py asserts:
  1 LoadData into an A1 tensor; 2 a 64 KiB + 32 B A2 buffer (L0A holds 64 KiB); 3 LoadData past its
  A2 tensor; 4 Mmad with fm at L0A offset 32; 5 Mmad reading past its B2 tensor; 6 DataCopy GM -> UB's
  count form with an A2 dst; 7 Mmad with unitFlag 1 (pyasc's bool unit_flag); 8 Fixpipe F322BF16
  to float; 9 ND2NZ rows that overlap in L1; 11 GetValue of an A1 tensor. Case 0 runs clean: X (the first 16 x 16 of a) goes to L1
  by ND2NZ, to L0A as is and to L0B transposed, so c = X @ X; case 10 is case 0 with DataCopy's count
  form GM -> L1 (the same bytes for one 16 x 16 half fractal).
"""
import asc
import asc.runtime.config as config


@asc.jit(kernel_type=config.KernelType.AIC_ONLY)
def matmul_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress, m: int, n: int, k: int,
                  k0: int, a_trans: int, b_trans: int, rounds: int, init_all: int, quant: int, relu: int,
                  nz: int, dst_stride: int):
    a_gm = asc.GlobalTensor()
    b_gm = asc.GlobalTensor()
    c_gm = asc.GlobalTensor()
    a_gm.set_global_buffer(a)
    b_gm.set_global_buffer(b)
    c_gm.set_global_buffer(c)
    pipe = asc.TPipe()
    q_a1 = asc.TQue(asc.TPosition.A1, 1)
    q_b1 = asc.TQue(asc.TPosition.B1, 1)
    q_a2 = asc.TQue(asc.TPosition.A2, 1)
    q_b2 = asc.TQue(asc.TPosition.B2, 1)
    q_co1 = asc.TQue(asc.TPosition.CO1, 1)
    pipe.init_buffer(q_a1, 1, 65536)
    pipe.init_buffer(q_b1, 1, 65536)
    pipe.init_buffer(q_a2, 1, 32768)
    pipe.init_buffer(q_b2, 1, 32768)
    pipe.init_buffer(q_co1, 1, 65536)
    m1 = (m + 15) // 16
    n1 = (n + 15) // 16
    k1 = (k + k0 - 1) // k0
    frac = 16 * k0  # elements of a 512-byte fractal

    a1 = q_a1.alloc_tensor(a.dtype)
    b1 = q_b1.alloc_tensor(b.dtype)
    if a_trans == 1:
        asc.data_copy(a1, a_gm, asc.Nd2NzParams(1, k, m, 0, m, k1 * 16, 1, 0))
    elif a_trans == 2:
        asc.data_copy(a1, a_gm, asc.Nd2NzParams(1, k1, k0, 0, k0, (k1 + 15) // 16 * 16, 1, 0))
    else:
        asc.data_copy(a1, a_gm, asc.Nd2NzParams(1, m, k, 0, k, m1 * 16, 1, 0))
    if b_trans == 1:
        asc.data_copy(b1, b_gm, asc.Nd2NzParams(1, n, k, 0, k, n1 * 16, 1, 0))
    else:
        asc.data_copy(b1, b_gm, asc.Nd2NzParams(1, k, n, 0, n, k1 * 16, 1, 0))
    q_a1.enque(a1)
    q_b1.enque(b1)
    a1 = q_a1.deque(a.dtype)
    b1 = q_b1.deque(b.dtype)

    a2 = q_a2.alloc_tensor(a.dtype)
    b2 = q_b2.alloc_tensor(b.dtype)
    if a_trans == 1:
        asc.load_data(a2, a1, asc.LoadData2DParams(0, m1 * k1, 1, 0, 0, True, 0))
    elif a_trans == 2:
        asc.load_data(a2, a1, asc.LoadData2DParams(0, (k1 + 15) // 16, 1, 0, 0, False, 0))
    else:
        for i in range(m1):
            asc.load_data(a2[i * k1 * frac], a1[i * frac], asc.LoadData2DParams(0, k1, m1, 0, 0, False, 0))
    if b_trans == 1:
        asc.load_data(b2, b1, asc.LoadData2DParams(0, k1 * n1, 1, 0, 0, False, 0))
    else:
        for i in range(k1):
            asc.load_data(b2[i * n1 * frac], b1[i * frac], asc.LoadData2DParams(0, n1, k1, 0, 0, True, 0))
    q_a2.enque(a2)
    q_b2.enque(b2)
    q_a1.free_tensor(a1)
    q_b1.free_tensor(b1)
    a2 = q_a2.deque(a.dtype)
    b2 = q_b2.deque(b.dtype)

    if a.dtype.sizeof() == 1:
        c1 = q_co1.alloc_tensor(asc.int32)
        multiply(c1, a2, b2, m, n, k, rounds, init_all)
        q_co1.enque(c1)
        c1 = q_co1.deque(asc.int32)
        move_out(c_gm, c1, m, n, quant, relu, nz, dst_stride)
        q_co1.free_tensor(c1)
    else:
        c1 = q_co1.alloc_tensor(asc.float32)
        multiply(c1, a2, b2, m, n, k, rounds, init_all)
        q_co1.enque(c1)
        c1 = q_co1.deque(asc.float32)
        move_out(c_gm, c1, m, n, quant, relu, nz, dst_stride)
        q_co1.free_tensor(c1)
    q_a2.free_tensor(a2)
    q_b2.free_tensor(b2)


@asc.jit
def multiply(c1, a2, b2, m: int, n: int, k: int, rounds: int, init_all: int):
    """The first Mmad starts C at 0; the others accumulate unless init_all."""
    asc.mmad(c1, a2, b2, asc.MmadParams(m, n, k, unit_flag=0, cmatrix_source=False, cmatrix_init_val=True))
    for _ in range(1, rounds):
        asc.mmad(c1, a2, b2, asc.MmadParams(m, n, k, unit_flag=0, cmatrix_source=False,
                                            cmatrix_init_val=init_all == 1))


@asc.jit
def move_out(c_gm, c1, m: int, n: int, quant: int, relu: int, nz: int, dst_stride: int):
    src_stride = (m + 15) // 16 * 16
    if quant == 1:
        params = asc.FixpipeParamsV220(n, m, src_stride, dst_stride, asc.QuantModes.F322F16, relu_en=relu == 1)
        if nz == 1:
            asc.fixpipe(c_gm, c1, params, asc.FixpipeConfig(asc.CO2Layout.NZ))
        else:
            asc.fixpipe(c_gm, c1, params, asc.FixpipeConfig(asc.CO2Layout.ROW_MAJOR))
    elif quant == 2:
        params = asc.FixpipeParamsV220(n, m, src_stride, dst_stride, asc.QuantModes.F322BF16, relu_en=relu == 1)
        if nz == 1:
            asc.fixpipe(c_gm, c1, params, asc.FixpipeConfig(asc.CO2Layout.NZ))
        else:
            asc.fixpipe(c_gm, c1, params, asc.FixpipeConfig(asc.CO2Layout.ROW_MAJOR))
    else:
        params = asc.FixpipeParamsV220(n, m, src_stride, dst_stride, asc.QuantModes.NoQuant, relu_en=relu == 1)
        if nz == 1:
            asc.fixpipe(c_gm, c1, params, asc.FixpipeConfig(asc.CO2Layout.NZ))
        else:
            asc.fixpipe(c_gm, c1, params, asc.FixpipeConfig(asc.CO2Layout.ROW_MAJOR))


@asc.jit(kernel_type=config.KernelType.AIC_ONLY)
def fault_kernel(a: asc.GlobalAddress, c: asc.GlobalAddress, case: int):
    a_gm = asc.GlobalTensor()
    c_gm = asc.GlobalTensor()
    a_gm.set_global_buffer(a)
    c_gm.set_global_buffer(c)
    pipe = asc.TPipe()
    q_a1 = asc.TQue(asc.TPosition.A1, 1)
    q_a2 = asc.TQue(asc.TPosition.A2, 1)
    q_b2 = asc.TQue(asc.TPosition.B2, 1)
    q_co1 = asc.TQue(asc.TPosition.CO1, 1)
    pipe.init_buffer(q_a1, 1, 4096)
    if case == 2:
        pipe.init_buffer(q_a2, 1, 65536 + 32)
    else:
        pipe.init_buffer(q_a2, 1, 2048)
    pipe.init_buffer(q_b2, 1, 512)
    pipe.init_buffer(q_co1, 1, 1024)
    a1 = q_a1.alloc_tensor(a.dtype)
    a2 = q_a2.alloc_tensor(a.dtype)
    b2 = q_b2.alloc_tensor(a.dtype)
    c1 = q_co1.alloc_tensor(c.dtype)
    if case == 9:
        asc.data_copy(a1, a_gm, asc.Nd2NzParams(1, 16, 32, 0, 32, 8, 1, 0))
    elif case == 10:
        asc.data_copy(a1, a_gm, 256)
    else:
        asc.data_copy(a1, a_gm, asc.Nd2NzParams(1, 16, 16, 0, 16, 16, 1, 0))
    if case == 1:
        asc.load_data(a1, a1, asc.LoadData2DParams(0, 1, 0, 0, 0, False, 0))
    elif case == 3:
        asc.load_data(a2, a1, asc.LoadData2DParams(0, 5, 0, 0, 0, False, 0))
    elif case == 6:
        asc.data_copy(a2, a_gm, 256)
    elif case == 11:
        a1.set_value(0, a1.get_value(1))
    asc.load_data(a2, a1, asc.LoadData2DParams(0, 1, 0, 0, 0, False, 0))
    asc.load_data(b2, a1, asc.LoadData2DParams(0, 1, 0, 0, 0, True, 0))
    if case == 4:
        asc.mmad(c1, a2[16], b2, asc.MmadParams(16, 16, 16, unit_flag=0, cmatrix_source=False, cmatrix_init_val=True))
    elif case == 5:
        asc.mmad(c1, a2, b2, asc.MmadParams(16, 16, 32, unit_flag=0, cmatrix_source=False, cmatrix_init_val=True))
    elif case == 7:
        asc.mmad(c1, a2, b2, asc.MmadParams(16, 16, 16, unit_flag=2, cmatrix_source=False, cmatrix_init_val=True))
    else:
        asc.mmad(c1, a2, b2, asc.MmadParams(16, 16, 16, unit_flag=0, cmatrix_source=False, cmatrix_init_val=True))
    if case == 8:
        asc.fixpipe(c_gm, c1, asc.FixpipeParamsV220(16, 16, 16, 16, asc.QuantModes.F322BF16),
                    asc.FixpipeConfig(asc.CO2Layout.ROW_MAJOR))
    else:
        asc.fixpipe(c_gm, c1, asc.FixpipeParamsV220(16, 16, 16, 16, asc.QuantModes.NoQuant),
                    asc.FixpipeConfig(asc.CO2Layout.ROW_MAJOR))
    q_a1.free_tensor(a1)
    q_a2.free_tensor(a2)
    q_b2.free_tensor(b2)
    q_co1.free_tensor(c1)
