"""Every error names the kernel's Python file and line, as a compiler does: runtime faults (bounds,
alignment, queue misuse), hazard warnings (both accesses' lines), deadlocks, printf faults, a
compile-time assert and C++ build errors caused by the kernel. The generated C++ names each
statement's site (frontend.py), the runtime puts it before its message (core/site.h)."""
import numpy as np
import pytest

import ascrun
import faulty
from conftest import kernel_line, load_module
import python_lines as kernels
from kernels import hazards, report
from ascrun.compiler.frontend import name_sites, site_tokens, without_sites

pytestmark = pytest.mark.kernel


def fault(kernel, cores, *args) -> ascrun.KernelError:
    with pytest.raises(ascrun.KernelError) as info:
        ascrun.run_local(kernel, cores, *args)
    return info.value


def test_a_bounds_fault_names_its_line():
    e = fault(faulty.gm_overrun_kernel, 5, np.ones(1024, np.float32), np.zeros(1024, np.float32), 256)
    assert e.kind == "runtime_error"
    copy = kernel_line(faulty, 'asc.data_copy(x_local, x_gm, n)', 'def gm_overrun_kernel')
    assert str(e).startswith(f"{copy}: block 4: DataCopy(GM->UB): elements [1024, 1280) of tensor argument 'x' are "
                             "outside its 1024 elements")


def test_an_alignment_fault_names_its_line():
    e = fault(kernels.misaligned_kernel, 1, np.ones(64, np.float32), 64)
    assert str(e) == (f"{kernel_line(kernels, 'VECIN, 16, n)')}: block 0: LocalTensor<float>(VECIN, 0x10, 64): "
                      "the start address is not 32-byte aligned (LocalTensor addresses must be multiples of 32 bytes)")


def test_queue_misuse_names_its_line():
    e = fault(faulty.deque_empty_kernel, 1, np.zeros(256, np.float32), 256)
    assert str(e) == (f"{kernel_line(faulty, 'x_local = que.deque(x.dtype)')}: block 0: TQue<VECIN, 1>::DeQue: "
                      "the queue is empty (no EnQue before this DeQue)")


def test_a_printf_fault_names_its_line():
    e = fault(report.print_kernel, 1, np.ones(256, np.float32), np.ones(256, np.float16), np.ones(256, np.int32), 8, 3,
              0, 1.5)
    printf = kernel_line(report, r'asc.printf("%d\n", scale)')
    assert str(e) == f'{printf}: block 0: printf("%d\\n"): conversion 1 (%d) takes an integer'


def sync_variant(**variant):
    x = np.ones(2048, np.float32)
    args = dict(drop=0, wrong_id=0, extra_set=0)
    args.update(variant)
    return (hazards.vadd_sync_kernel, 1, x, x, np.zeros_like(x), 2048, 2, args["drop"], args["wrong_id"],
            args["extra_set"], 0)


def test_a_hazard_names_both_accesses_lines():
    e = fault(*sync_variant(drop=2))
    add = kernel_line(hazards, "asc.add(z_local")
    copy_x = kernel_line(hazards, "asc.data_copy(x_local[")
    copy_y = kernel_line(hazards, "asc.data_copy(y_local[")
    assert e.warnings == [
        f"{add}: block 0: V Add reads UB [0x0, 0x200) written by MTE2 DataCopy(GM->UB) at {copy_x} with no MTE2->V "
        "flag between them (2 times; the first shown)",
        f"{add}: block 0: V Add reads UB [0x400, 0x600) written by MTE2 DataCopy(GM->UB) at {copy_y} with no MTE2->V "
        "flag between them (2 times; the first shown)"]
    set_flag = kernel_line(hazards, "asc.set_flag(asc.HardEvent.MTE2_V, buf_id)")
    assert str(e) == (f"{set_flag}: block 0: SetFlag<HardEvent::MTE2_V>(0): set twice without a WaitFlag in between "
                      f"(first set at {set_flag}; undefined behaviour on the device; a later PipeBarrier would hang)")


def test_a_deadlock_names_the_wait_and_the_set():
    e = fault(*sync_variant(wrong_id=1))
    wait = kernel_line(hazards, "asc.wait_flag(asc.HardEvent.MTE2_V, 1 - buf_id)")
    assert str(e) == (f"{kernel_line(hazards, 'asc.set_flag(asc.HardEvent.MTE2_V, buf_id)')}: block 0: "
                      "SetFlag<HardEvent::MTE2_V>(1) is never reached: MTE2 runs it only after the "
                      f"WaitFlag<HardEvent::MTE2_V>(1) at {wait} on V that waits for it (through the flags between "
                      "the pipes: a deadlock, the device would hang)")


def test_a_flag_never_waited_for_names_its_set_flag():
    result = ascrun.run_local(*sync_variant(extra_set=1))
    assert result.warnings == [
        f"{kernel_line(hazards, 'asc.set_flag(asc.HardEvent.MTE3_MTE2, 0)')}: block 0: "
        "SetFlag<HardEvent::MTE3_MTE2>(0) is never waited for: no WaitFlag<HardEvent::MTE3_MTE2>(0) follows it "
        "before the kernel ends"]


def test_a_compile_time_assert_names_its_line():
    e = fault(kernels.checked_kernel, 1, np.ones(64, np.float32), 12)
    assert e.kind == "compile_error"
    where = kernel_line(kernels, "assert n % 8")
    line = int(where.rpartition(":")[2])
    assert str(e).startswith(f"pyasc could not compile the kernel: in kernel 'checked_kernel' at {where}: "
                             "AssertionError: n must be a multiple of 8\n")
    assert f'\n    {line} |     assert n % 8 == 0, "n must be a multiple of 8"\n       |     ^\n' in str(e)


def test_a_cpp_build_error_names_the_python_line_and_the_kernels_types():
    e = fault(kernels.mixed_copy_kernel, 1, np.ones(64, np.float32), np.ones(64, np.float16), 64)
    assert e.kind == "build_error"
    first = str(e).splitlines()[1]
    copy = kernel_line(kernels, 'asc.data_copy(x_local, y_gm, n)')
    assert first.startswith(f"{copy}: error: no matching function for call to ‘DataCopy(AscendC::LocalTensor<float>&, "
                            "AscendC::GlobalTensor<half>&, const int32_t&)’ (generated C++: kernel.cpp:")
    assert "ascrun::detail" not in str(e)


@pytest.mark.unit
def test_statements_pyasc_rewrites_keep_the_line_they_came_from(tmp_path):
    """pyasc turns `m += 1` into an assignment of its own making, without a line: the statement was
    marked as written (every kernel with one failed: 'Assign' object has no attribute 'lineno')."""
    path = tmp_path / "augmented.py"
    path.write_text("import asc\n\n\n@asc.jit\ndef k(n: int):\n    m = n\n    m += 1\n"
                    "    asc.printf(\"m=%d\\n\", m)\n")
    assert ascrun.run_local(load_module(path, "augmented").k, 1, 7).log == "[AIV Block 0/1] m=8\n"


def test_a_cpp_line_maps_to_the_statement_marked_above_it():
    source = "void k() {\n  ascrun::at(2);\n  AscendC::Add(a, b, c, 64);\n  ascrun::at(1);\n}\n"
    assert site_tokens(source)[:5] == [None, "py#2", "py#2", "py#1", "py#1"]
    sites = ("/a/k.py:28", "/b/helpers.py:30")
    assert name_sites("py#2: block 0: V Add reads UB written by MTE2 DataCopy at py#1", sites) == (
        "/b/helpers.py:30: block 0: V Add reads UB written by MTE2 DataCopy at /a/k.py:28")
    assert name_sites("py#0, py#3 and xpy#1", sites) == "py#0, py#3 and xpy#1"  # not sites of the kernel's
    assert without_sites(source) == "void k() {\n  AscendC::Add(a, b, c, 64);\n}\n"


@pytest.mark.unit
def test_removing_the_markers_cannot_turn_a_checked_comment_into_a_directive():
    """A compromised frontend's C++ that passes the source guard: a // comment whose marker follows a
    form feed (a line break to str.splitlines, spacing to a C++ compiler). Removing the markers for
    bisheng must not end the comment there, so that the #include below stays inside /* */."""
    from ascrun.compiler.source_guard import check_source
    source = 'void k() {\n// x\fascrun::at(1);\n/* \n#include "/etc/passwd"\n*/\n}\n'
    check_source(source, "k")
    assert without_sites(source) == source  # not a marker line: kept whole, the comment as checked
    assert site_tokens(source)[1] is None


@pytest.mark.unit
def test_a_site_token_of_any_length_is_text_not_a_failure():
    """Warnings come from the run jail: a token too long for a site is left as it is."""
    token = "py#" + "9" * 5000
    assert name_sites(token, ("/a/k.py:1",)) == token
