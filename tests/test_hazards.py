"""The cpu target's pipe model, in process: the hazard check (races between a core's pipes that no
flag orders, sync hygiene, deadlocks) and the modeled timeline, on pyasc's 01_add tutorial with its
synchronization varied by runtime arguments (tests/kernels/hazards.py: one artifact for all).

One block per launch, so that messages and counts do not depend on which block faults first."""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import ascrun
from conftest import kernel_line
from kernels import hazards
from kernels.hazards import scalar_read_kernel, vadd_sync_kernel

pytestmark = pytest.mark.kernel

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import add_framework  # noqa: E402  (pyasc's 02_add_framework: TQue double buffering)

BLOCK = 2048  # floats per block: 16 tiles of 128 (512 bytes = UB [0x0, 0x200) for x's first tile)


def launch(drop=0, wrong_id=0, extra_set=0, pipelined=0, buffer_num=2, block_length=BLOCK, hazards="warn"):
    rng = np.random.default_rng(7)
    x = rng.random(block_length, dtype=np.float32)
    y = rng.random(block_length, dtype=np.float32)
    z = np.zeros_like(x)
    result = ascrun.run_local(vadd_sync_kernel, 1, x, y, z, block_length, buffer_num, drop, wrong_id, extra_set,
                              pipelined, hazards=hazards)
    np.testing.assert_array_equal(z, x + y)
    return result


def failure(**variant) -> ascrun.KernelError:
    with pytest.raises(ascrun.KernelError) as info:
        launch(**variant)
    assert info.value.kind == "runtime_error"
    return info.value


# Where the messages say each call of the vadd_sync_kernel is (its non-pipelined form).
COPY_X, COPY_Y, ADD, COPY_Z = (kernel_line(hazards, text) for text in (
    "asc.data_copy(x_local[", "asc.data_copy(y_local[", "asc.add(z_local", "asc.data_copy(z_gm["))
SET_MTE2_V, WAIT_MTE2_V, SET_V_MTE3, WAIT_V_MTE3 = (
    kernel_line(hazards, f"asc.{call}(asc.HardEvent.{event}, buf_id)")
    for call, event in (("set_flag", "MTE2_V"), ("wait_flag", "MTE2_V"), ("set_flag", "V_MTE3"),
                        ("wait_flag", "V_MTE3")))
SET_MTE3_MTE2 = kernel_line(hazards, "asc.set_flag(asc.HardEvent.MTE3_MTE2, buf_id)", after="if drop != 5")
WAIT_MTE3_MTE2 = kernel_line(hazards, "asc.wait_flag(asc.HardEvent.MTE3_MTE2, buf_id)", after="if drop != 6")

RACE_X = (f"{ADD}: block 0: V Add reads UB [0x0, 0x200) written by MTE2 DataCopy(GM->UB) at {COPY_X} with no MTE2->V "
          "flag between them")
RACE_Y = (f"{ADD}: block 0: V Add reads UB [0x400, 0x600) written by MTE2 DataCopy(GM->UB) at {COPY_Y} with no "
          "MTE2->V flag between them")
WAR_X = (f"{COPY_X}: block 0: MTE2 DataCopy(GM->UB) writes UB [0x0, 0x200) read by V Add at {ADD} with no V->MTE2 "
         "flag between them")
WAR_Y = (f"{COPY_Y}: block 0: MTE2 DataCopy(GM->UB) writes UB [0x400, 0x600) read by V Add at {ADD} with no V->MTE2 "
         "flag between them")
RAW_Z = (f"{COPY_Z}: block 0: MTE3 DataCopy(UB->GM) reads UB [0x800, 0xa00) written by V Add at {ADD} with no "
         "V->MTE3 flag between them")
WAR_Z = (f"{ADD}: block 0: V Add writes UB [0x800, 0xa00) read by MTE3 DataCopy(UB->GM) at {COPY_Z} with no MTE3->V "
         "flag between them")
HANG = "(the device would hang)"


def twice(set_flag: str) -> str:
    return (f"set twice without a WaitFlag in between (first set at {set_flag}; undefined behaviour on the device; a "
            "later PipeBarrier would hang)")


def second_wait(wait_flag: str, event: str) -> str:
    return (f"{wait_flag}: block 0: WaitFlag<HardEvent::{event}>(0): a second WaitFlag while the first at {wait_flag} "
            f"still waits for its SetFlag {HANG}")


def test_the_tutorial_as_written_has_no_hazards_and_a_serial_timeline():
    result = launch()
    assert result.warnings == []
    [core] = result.model["cores"]
    assert core["core"] == "block 0"
    # its set_flag/wait_flag pairs wait for each tile's copy-out before the next copy-in: one chain
    # through every instruction, so the critical path holds every pipe's busy cycles
    for pipe in ("MTE2", "V", "MTE3"):
        assert core["critical_path"][pipe] == core["busy"][pipe] > 0
    assert result.model["cycles"] == core["cycles"] == sum(core["critical_path"].values())


# The six set_flag/wait_flag calls of the loop body, each left out in turn.
# (Each race is counted by its two calls: x's and y's copy are two.)
@pytest.mark.parametrize("drop, error, warnings", [
    (1, second_wait(WAIT_MTE2_V, "MTE2_V"), []),
    (2, f"{SET_MTE2_V}: block 0: SetFlag<HardEvent::MTE2_V>(0): {twice(SET_MTE2_V)}",
     [f"{RACE_X} (2 times; the first shown)", f"{RACE_Y} (2 times; the first shown)"]),
    (3, second_wait(WAIT_V_MTE3, "V_MTE3"), []),
    (4, f"{SET_V_MTE3}: block 0: SetFlag<HardEvent::V_MTE3>(0): {twice(SET_V_MTE3)}",
     [f"{RAW_Z} (2 times; the first shown)", WAR_X, WAR_Y]),
    (5, second_wait(WAIT_MTE3_MTE2, "MTE3_MTE2"), []),
    (6, f"{SET_MTE3_MTE2}: block 0: SetFlag<HardEvent::MTE3_MTE2>(0): {twice(SET_MTE3_MTE2)}", [WAR_X, WAR_Y, WAR_Z]),
])
def test_each_flag_left_out_is_reported(drop, error, warnings):
    e = failure(drop=drop)
    assert str(e) == error
    assert e.warnings == warnings


def test_hazards_fault_stops_at_the_first_race_and_off_reports_none():
    assert str(failure(drop=2, hazards="fault")) == RACE_X + ' (hazards="fault")'
    quiet = failure(drop=2, hazards="off")
    assert str(quiet) == f"{SET_MTE2_V}: block 0: SetFlag<HardEvent::MTE2_V>(0): {twice(SET_MTE2_V)}"
    assert quiet.warnings == []


def test_a_wait_on_the_wrong_event_id_is_a_deadlock():
    # V waits for ID 1 while MTE2 sets ID 0: V's add, hence MTE3's copy-out, hence MTE2's next
    # copy-in (its MTE3->MTE2 wait) all wait for the SetFlag of ID 1 that MTE2 issues after them
    assert str(failure(wrong_id=1)) == (
        f"{SET_MTE2_V}: block 0: SetFlag<HardEvent::MTE2_V>(1) is never reached: MTE2 runs it only after the "
        f"WaitFlag<HardEvent::MTE2_V>(1) at {kernel_line(hazards, 'MTE2_V, 1 - buf_id)')} on V that waits for it "
        "(through the flags between the pipes: a deadlock, the device would hang)")


def test_a_set_flag_never_waited_for_is_reported():
    assert launch(extra_set=1).warnings == [
        f"{kernel_line(hazards, 'asc.set_flag(asc.HardEvent.MTE3_MTE2, 0)')}: block 0: "
        "SetFlag<HardEvent::MTE3_MTE2>(0) is never waited for: no WaitFlag<HardEvent::MTE3_MTE2>(0) follows it "
        "before the kernel ends"]


def test_a_scalar_read_needs_a_flag_after_the_vector_write():
    x = np.arange(64, dtype=np.float32)
    get_value = kernel_line(hazards, "x_local.get_value(0)")
    adds = kernel_line(hazards, "asc.adds(x_local")
    for synced, warnings in ((0, [f"{get_value}: block 0: S GetValue reads UB [0x0, 0x4) written by V Adds at {adds} "
                                  "with no V->S flag between them"]), (1, [])):
        out = np.zeros(64, np.float32)
        result = ascrun.run_local(scalar_read_kernel, 1, x, out, 64, synced)
        assert out[0] == 1.0
        assert result.warnings == warnings


def overlap(trace: dict, a: str, b: str) -> bool:
    """Whether some instruction of pipe `a` runs while one of pipe `b` does (block 0)."""
    spans = {a: [], b: []}
    for e in trace["traceEvents"]:
        if e["ph"] == "X" and e["pid"] == 0 and e["cat"] in spans:
            spans[e["cat"]].append((e["args"]["cycle"], e["args"]["cycle"] + e["args"]["cycles"]))
    return any(s < t_end and t < s_end for s, s_end in spans[a] for t, t_end in spans[b])


def test_double_buffering_overlaps_and_one_buffer_is_serial_and_slower():
    # the tutorial with its MTE3->MTE2 wait moved to guard the reuse of a tile's buffers: the next
    # tile's copy-in runs during this tile's add and copy-out. 8 KiB tiles, where transfers outweigh
    # each DataCopy's fixed cost.
    double = launch(pipelined=1, block_length=32768)
    single = launch(pipelined=1, buffer_num=1, block_length=32768)
    assert double.warnings == single.warnings == []
    assert overlap(json.loads(double.trace), "MTE2", "V")
    assert overlap(json.loads(double.trace), "MTE2", "MTE3")
    assert not overlap(json.loads(single.trace), "MTE2", "V")
    assert single.model["cycles"] > double.model["cycles"]
    [core] = single.model["cores"]
    assert core["cycles"] == sum(core["critical_path"].values())  # one chain
    assert double.model["cores"][0]["critical_path"]["V"] < double.model["cores"][0]["busy"]["V"]
    # deterministic: the same artifact and inputs give the same cycles
    assert launch(pipelined=1, block_length=32768).model == double.model


def test_the_queue_framework_tutorial_is_clean_and_overlaps():
    x = np.random.default_rng(3).random(16384, dtype=np.float32)
    z = np.zeros_like(x)
    result = ascrun.run_local(add_framework.vadd_framework_kernel, 8, x, x, z, 2048, 2048 // 8 // 2)
    np.testing.assert_array_equal(z, x + x)
    assert result.warnings == []
    assert [c["core"] for c in result.model["cores"]] == [f"block {i}" for i in range(8)]
    assert overlap(json.loads(result.trace), "MTE2", "V")
    # every block does the same work: the same cycles
    assert {c["cycles"] for c in result.model["cores"]} == {result.model["cycles"]}


def test_an_unknown_policy_is_a_bad_request():
    with pytest.raises(ascrun.KernelError) as info:
        launch(hazards="bogus")
    assert info.value.kind == "bad_request"
    assert str(info.value) == "hazards must be 'off', 'warn' or 'fault', got 'bogus'"


def test_the_trace_names_cores_pipes_and_apis():
    trace = json.loads(launch().trace)
    names = {(e["pid"], e.get("tid")): e["args"]["name"] for e in trace["traceEvents"] if e["ph"] == "M"}
    assert names[(0, None)] == "block 0"
    assert {names[(0, t)] for t in (1, 4, 5)} == {"V", "MTE2", "MTE3"}
    apis = {(e["cat"], e["name"]) for e in trace["traceEvents"] if e["ph"] == "X"}
    assert apis == {("MTE2", "DataCopy(GM->UB)"), ("V", "Add"), ("MTE3", "DataCopy(UB->GM)")}
