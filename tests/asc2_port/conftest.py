"""Ports of compiler-team-ru/pyasc's asc2 tests (python/test/asc2) to asctile (pyasc's nightly:
asc.experimental.asctile), our own code: one test file per upstream file (kernels/test_X.py ->
test_X.py, operations/test_X.py -> test_ops_X.py). pyasc's files are not copied (their licence);
test_coverage.py checks a checkout's list against these ports.

The mapping: asc2.load(t, shape, offsets=o, location=L) -> asctile.copy_in(t, o, shape, L);
asc2.store -> asctile.copy_out; asc2.copy(src, shape, offsets=o, location=L) -> asctile.copy(src, o,
shape, L); asc2.TileLocation -> asctile.TensorLocation; asc2.tensor -> asctile.global_tensor;
asc2.matmul_acc(a, b, acc) -> asctile.matmul_acc(acc, a, b); range(..., parallel=True) has no
asctile form (asctile.range keeps unroll_factor).

Each case runs in process (ascrun.run_local) on each SOC of SOCS and is checked against numpy, or
torch where the original uses it. A case that cannot build or run on a SOC for a reason outside the
port is in KNOWN with the first line of its error: it runs, and is skipped with that reason and line
only when its error's first line begins so (g++'s "did you mean" hint aside); any other failure
fails, and an entry whose case now passes fails too, so that the entry goes. A case that runs to
wrong results is in WRONG_RESULTS: a strict xfail, which fails the day the results are right.
test_through_the_pool.py sends a few of these cases through the service (Client.launch) per SOC."""
import re

import pytest

import ascrun

SOCS = ("Ascend910B1", "Ascend950PR_9599")

NIGHTLY_910B = "pyasc's nightly lowers this for Ascend910B1 (c220) to"
PASS_FAILS = ("pyasc's nightly fails to compile asctile.range(k_tiles, unroll_factor=2) over copies to L0A/L0B "
              "and matmul_acc for k_tiles > 2 (its pass pipeline)")
DOMINATE = "error: operand #1 does not dominate this use"
SCALAR_WHY = (f"{NIGHTLY_910B} a tile-scalar op (Adds, Muls, Maxs, Mins, ShiftLeft, ShiftRight) in the count form with "
              "isSetMask = false without SetMaskCount, whose count the device ignores (Adds.md, Muls.md)")
SCALAR_COUNT = re.compile(r"(Adds|Muls|Maxs|Mins|ShiftLeft|ShiftRight): the count form with isSetMask = false takes "
                          r"its element count from the mask register in counter mode")
COMPARE_WHY = (f"{NIGHTLY_910B} Compare/CompareScalar over 32-element tiles, where Atlas A2's count form works in "
               "whole 256-byte repeats (Compare.md): it reads past the tile, and its mask overlaps a source")
COMPARE_PAST = re.compile(r"(Compare|CompareScalar): src0: (64|128) elements from UB offset 0x[0-9a-f]+ exceed the "
                          r"LocalTensor's 32 elements$")
MULS_COUNT = ("Muls: the count form with isSetMask = false takes its element count from the mask register in counter "
              "mode; call SetMaskCount and SetVectorMask first (in normal mode the count is undefined)")
MULS_WHY = (f"{NIGHTLY_910B} Muls in the count form with isSetMask = false without SetMaskCount, whose count the "
            "device ignores (Muls.md)")
ANY_SOC = "*"
SOC950 = "Ascend950PR_9599"
COMPARE_950_WHY = ("pyasc's nightly passes Compare's mask + repeat form a whole repeat's mask (64 elements of 32 "
                   "bits, 128 of 16 bits) and one repeat over 32-element tiles; on the Ascend950 the mask applies "
                   "(Compare.md), so the device compares a whole repeat, reading past both tiles")
# (file::case pattern without the SOC, SOC or ANY_SOC) -> (why, the error's first line as it must begin, or a
# regular expression it must match at its start); a case's entry is the first that matches it
KNOWN = {
    ("test_matmul_tiled.py::test_matmul_tiled[4]", "Ascend910B1"): (PASS_FAILS, DOMINATE),
    ("test_matmul_tiled.py::test_matmul_tiled[8]", "Ascend910B1"): (PASS_FAILS, DOMINATE),
    ("test_matmul_l0c_to_l1.py::*", "Ascend910B1"): (
        f"{NIGHTLY_910B} Fixpipe L0C->L1 with a FixpipeConfig of two fields, the second the 950's (3510) only",
        "error: too many initializers for 'const AscendC::FixpipeConfig'"),
    ("test_matmul_*.py::*", "Ascend910B1"): (
        f"{NIGHTLY_910B} the C310 cube API (LoadData with LoadData2DParamsV2), the Ascend950's only",
        "error: static assertion failed: LoadData(LoadData2DParamsV2): Ascend 950 (__NPU_ARCH__ 3510) only"),
    ("test_gelu.py::test_gelu[*]", "Ascend910B1"): (MULS_WHY, MULS_COUNT),
    ("test_softmax.py::test_softmax", "Ascend910B1"): (
        "the nightly's ReduceMax for Ascend910B1 (c220) has a sharedTmpBuffer below the minimum the runtime takes "
        "from ReduceMax.md (which side is right is not settled)",
        "ReduceMax: sharedTmpBuffer holds 16 elements; this call needs at least 32 (the reference's minimum for "
        "its repeat count)"),
    ("test_leaky_relu.py::test_leaky_relu", "Ascend910B1"): (
        f"{NIGHTLY_910B} CompareScalar, Muls and Select on bfloat16, which Atlas A2 has not (CompareScalar.md)",
        "error: static assertion failed: CompareScalar: T must be half, float or int32_t (Atlas A2/A3; int32_t with EQ "
        "only)"),
    ("test_ops_unary_ops.py::test_unary_operations[negative]", "Ascend910B1"): (MULS_WHY, MULS_COUNT),
    **{(f"test_ops_binary_ops.py::test_binary_operations[{op}-{form}-torch.{dtype}]", "Ascend910B1"):
       (SCALAR_WHY, SCALAR_COUNT)
       for op in ("add", "mul", "maximum", "minimum") for form in ("VS", "SV") for dtype in ("float32", "int32")},
    **{(f"test_ops_binary_ops.py::test_binary_operations[{op}-VS-torch.int32]", "Ascend910B1"):
       (SCALAR_WHY, SCALAR_COUNT) for op in ("left_shift", "right_shift")},
    ("test_ops_where.py::test_where_*", "Ascend910B1"): (COMPARE_WHY, COMPARE_PAST),
    ("test_ops_reduce_ops.py::test_reduce[*]", "Ascend910B1"): (
        f"{NIGHTLY_910B} ReduceProd/ReduceMax/ReduceMin/ReduceSum<T, Pattern> with a sharedTmpBuffer TBuf of 0 bytes "
        "and srcInnerPad false, which Atlas A2 takes true only (ReduceProd.md, ReduceMax-91.md)",
        "TPipe::InitBuffer(TBuf<VECCALC>, 0): num and len must be positive"),
    ("test_ops_atomic_ops.py::test_atomic_op[*]", "Ascend910B1"): (SCALAR_WHY, SCALAR_COUNT),
    # the Ascend950
    ("test_ops_where.py::test_where_ops[*-torch.bfloat16]", SOC950): (COMPARE_950_WHY, COMPARE_PAST),
    **{(f"test_ops_where.py::test_where_ops[*-torch.{dtype}]", SOC950): (COMPARE_950_WHY, COMPARE_PAST)
       for dtype in ("float16", "float32")},
    **{(f"test_ops_where.py::test_where_ops[{op}-torch.{dtype}]", SOC950): (COMPARE_950_WHY, COMPARE_PAST)
       for op in ("greater", "greater_equal", "less", "less_equal") for dtype in ("int16", "int32")},
}


# (file::case pattern without the SOC, SOC) -> why the case's results are wrong: a strict xfail, so that the case
# fails the run the day it passes
WRONG_RESULTS = {}


def pytest_collection_modifyitems(items):
    for item in items:
        soc = getattr(item, "callspec", None) and item.callspec.params.get("soc")
        why = soc and known_in(WRONG_RESULTS, _case(item), soc)
        if why:
            item.add_marker(pytest.mark.xfail(strict=True, raises=AssertionError, reason=why))


@pytest.fixture(params=SOCS)
def soc(request):
    return request.param


def _case(node) -> str:
    """'file::test[params]' without the SOC part, e.g. test_gelu.py::test_gelu[True]."""
    ids = [part for part in node.callspec.id.split("-") if part not in SOCS] if hasattr(node, "callspec") else []
    return f"{node.path.name}::{node.originalname}" + (f"[{'-'.join(ids)}]" if ids else "")


def known_in(table: dict, case: str, soc: str):
    """The entry of this case on this SOC in `table` ('*' in a pattern: any text), or None."""
    def matches(pattern):
        return re.fullmatch(re.escape(pattern).replace(r"\*", ".*"), case) is not None
    return next((why for (pattern, on), why in table.items() if on in (soc, ANY_SOC) and matches(pattern)), None)


def known(case: str, soc: str):
    return known_in(KNOWN, case, soc)


def first_error_line(error: ascrun.KernelError) -> str:
    """The error's first line that says what went wrong, without its site ('file:line: ' and a
    runtime fault's 'block N: '), with plain quotes (g++ quotes as its locale says: ‘x’ or 'x')."""
    lines = str(error).splitlines()
    line = next((line for line in lines if "error:" in line), lines[0] if lines else "")
    line = re.sub(r" \(generated C\+\+: [^)]*\)$", "", line)
    line = re.sub(r"^\S+?:\d+(:\d+)?: ", "", line)
    return re.sub(r"^block \d+: ", "", line).replace("\u2018", "'").replace("\u2019", "'")


def runner(case: str, soc: str, launch):
    """run(kernel, core_num, *args) through `launch`, the KNOWN entry of `case` on `soc` applied."""
    entry = known(case, soc)

    def run_kernel(kernel, core_num, *args):
        try:
            result = launch(kernel, core_num, *args)
        except ascrun.KernelError as e:
            line = first_error_line(e)
            if entry and (entry[1].match(line) if isinstance(entry[1], re.Pattern) else line.startswith(entry[1])):
                pytest.skip(f"{entry[0]}: {line}")
            raise
        if entry:
            pytest.fail(f"KNOWN lists {case} on {soc} ({entry[0]}), but it built and ran: remove the entry")
        return result

    return run_kernel


@pytest.fixture
def run(request, soc):
    """run(kernel, core_num, *args): ascrun.run_local on this case's SOC (any access past a tensor
    faults), this case's KNOWN entry applied."""
    return runner(_case(request.node), soc,
                  lambda kernel, core_num, *args: ascrun.run_local(kernel, core_num, *args, soc=soc))


C310_SOCS = (SOC950,)


def require_c310(soc: str) -> None:
    """Upstream's require_c310: the case runs on the C310 architecture (the Ascend950) only."""
    if soc not in C310_SOCS:
        pytest.skip(f"upstream runs this case only on the C310 architecture (require_c310), not on {soc}")
