"""The HTTP API's JSON shapes (pydantic), as the OpenAPI docs show them."""
from __future__ import annotations

import binascii
import math
from typing import Annotated, Any, Dict, List, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator
from pydantic_core import PydanticCustomError

from ..compiler import benchmark as bench, structs
from ..compiler.targets import NAMES as TARGETS
from ..compiler.targets.contract import BOUNDS, HAZARDS
from ..job_status import JobStatus
from ..launch_checks import MAX_TUPLE_ITEMS, SCALAR_DTYPES, TENSOR_DTYPES, scalar_problem, storage_dtype
from .store.jobs import INLINE_BYTES

Digest = str  # lowercase hex sha256
SOC_PATTERN = r"^[A-Za-z0-9_.]{1,64}$"
MAX_LINENO = 100_000  # pyasc pads a function's source to its line: the line costs memory in the worker


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


Name = Annotated[str, Field(max_length=256)]  # a Python identifier, a dotted module, a struct's name
# Bounds on what a client sends, far above any real kernel's and checked before anything is kept or
# parsed further; the tenant's max_bundle_bytes bounds the whole bundle besides.
MAX_SOURCE_CHARS = 4 << 20
MAX_FUNCTIONS = 256
MAX_NAMES = 1024  # constants, modules, structs or annotations of a bundle
MAX_LITERAL_CHARS = 64 << 10  # a constant's Python literal


class BundleFunction(Strict):
    name: Name
    source: str = Field(max_length=MAX_SOURCE_CHARS)
    filename: str = Field(max_length=4096, pattern=r"^[^\x00-\x1f\x7f]*$")  # no NUL, newline or other control
    lineno: int = Field(ge=1, le=MAX_LINENO)


class StructMember(Strict):
    """A Field (`dtype`, and its `name=`/`enum=` as `ir_name`/`enum` if given) or a StructField
    (`struct`: the nested struct's name)."""
    name: str = Field(max_length=256)
    dtype: Optional[Literal[tuple(structs.FIELD_CTYPES)]] = None  # type: ignore[valid-type]
    struct: Optional[str] = Field(default=None, max_length=256)
    ir_name: Optional[str] = Field(default=None, max_length=256)
    enum: Optional[str] = Field(default=None, max_length=256)


class StructDefinition(Strict):
    """A pyasc Struct class: its `pack` and its fields in order."""
    pack: int
    fields: List[StructMember] = Field(min_length=1, max_length=structs.MAX_FIELDS)


class Bundle(Strict):
    entry: Name
    functions: List[BundleFunction] = Field(min_length=1, max_length=MAX_FUNCTIONS)
    constants: Dict[Name, Annotated[str, Field(max_length=MAX_LITERAL_CHARS)]] = Field({}, max_length=MAX_NAMES)
    modules: Dict[Name, Name] = Field({}, max_length=MAX_NAMES)
    structs: Dict[Name, StructDefinition] = Field({}, max_length=MAX_NAMES)
    # typing forms the annotations name: local name -> e.g. "Tuple"
    annotations: Dict[Name, Name] = Field({}, max_length=MAX_NAMES)


class TensorArg(Strict):
    """A tensor's bytes: uploaded first as `blob`, (up to INLINE_BYTES) inline as base64 `data`, or
    `zeros` (every byte 0, as an output buffer usually is: nothing to send, whatever its size)."""
    kind: Literal["tensor"]
    blob: Optional[Digest] = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    data: Optional[str] = Field(default=None, max_length=4 * math.ceil(INLINE_BYTES / 3),
                                description=f"base64 of the tensor's bytes, at most {INLINE_BYTES} bytes")
    zeros: Optional[Literal[True]] = Field(default=None, description="true: every byte of the tensor is 0")
    dtype: Literal[TENSOR_DTYPES]  # type: ignore[valid-type]
    shape: List[Annotated[int, Field(ge=0, le=2 ** 62)]] = Field(max_length=32)
    _raw: Optional[bytes] = PrivateAttr(None)  # `data` decoded: what the API stores for the worker

    @model_validator(mode="after")
    def _bytes(self) -> "TensorArg":
        if [self.blob, self.data, self.zeros].count(None) != 2:
            raise PydanticCustomError("tensor_bytes", "a tensor has one of a blob, inline data or zeros")
        if self.data is not None:
            try:
                self._raw = binascii.a2b_base64(self.data, strict_mode=True)
            except (binascii.Error, ValueError):
                raise PydanticCustomError("tensor_data", "data is not base64") from None
            size = len(self._raw)
            expected = self.nbytes
            if size != expected:
                raise PydanticCustomError("tensor_data", "{dtype}{shape} needs {expected} bytes but data has {size}",
                                          {"dtype": self.dtype, "shape": self.shape, "expected": expected,
                                           "size": size})
        return self

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * storage_dtype(self.dtype).itemsize

    @property
    def raw(self) -> Optional[bytes]:
        return self._raw


class ScalarArg(Strict):
    """A Python or numpy scalar; `value` must be one of its dtype: int dtypes an integer in range,
    float dtypes any number (NaN and infinities too, as a Python float can be), bool true or false,
    str a string, tuple a list of integers (a shape), dtype a pyasc dtype's name (the last three for a
    ConstExpr parameter)."""
    kind: Literal["scalar"]
    dtype: Literal[SCALAR_DTYPES]  # type: ignore[valid-type]
    value: Union[bool, int, float, Annotated[str, Field(max_length=MAX_LITERAL_CHARS)],
                 Annotated[List[Any], Field(max_length=MAX_TUPLE_ITEMS)]]  # a tuple's: scalar_problem checks

    @model_validator(mode="after")
    def _value_of_dtype(self) -> "ScalarArg":
        problem = scalar_problem(self.dtype, self.value)
        if problem:
            raise PydanticCustomError("scalar_value", "scalar of dtype {dtype}: {problem}",
                                      {"dtype": self.dtype, "problem": problem})
        return self


class StructArg(Strict):
    """A pyasc Struct: `dtype` names one of the bundle's structs, `value` holds every field's value
    (a nested struct's as an object)."""
    kind: Literal["struct"]
    dtype: Name
    value: Dict[Name, Any] = Field(max_length=structs.MAX_FIELDS)


class BenchmarkPolicy(Strict):
    """A benchmark job: warm-up runs, then timed repeats of the launch in this one job until the
    relative standard error (stderr/mean) is at or under `target_rel_error` (once `min_repeats` are
    in), `max_repeats` are done or `budget_seconds` are spent, whichever comes first. Unset: the
    defaults; the budget must be under the job's timeout (default: 10 s, at most half the timeout)."""
    warmup: Optional[int] = Field(default=None, ge=0, le=bench.MAX_WARMUP)
    min_repeats: Optional[int] = Field(default=None, ge=1, le=bench.MAX_REPEATS)
    max_repeats: Optional[int] = Field(default=None, ge=1, le=bench.MAX_REPEATS)
    target_rel_error: Optional[float] = Field(default=None, ge=bench.MIN_TARGET_REL_ERROR, le=1.0)
    budget_seconds: Optional[float] = Field(default=None, gt=0, le=bench.MAX_BUDGET_S)

    @model_validator(mode="after")
    def _consistent(self) -> "BenchmarkPolicy":
        low, high = self.min_repeats, self.max_repeats or bench.Policy.max_repeats  # unset: at most max_repeats
        if low is not None and low > high:
            raise PydanticCustomError("benchmark_repeats", "min_repeats ({low}) exceeds max_repeats ({high})",
                                      {"low": low, "high": high})
        return self


class CompileOptions(Strict):
    """The pyasc options a job may set, as @asc.jit(...) would (asc.runtime.compiler's CompileOptions,
    asc.runtime.jit's CodegenOptions): a closed set of typed values. Not among them: kernel_type
    (name it in the kernel's @asc.jit), bisheng_options (the pool's compiler flags are the
    operator's), auto_sync_log (a file path), print_ir_before_all and always_compile. The last four are
    asctile's (asc.experimental.asctile's CompileOptions, pyasc's nightly; with insert_sync): an asc
    kernel, or a pyasc without asctile, refuses them as unknown compile options."""
    debug: Optional[bool] = None
    strip_loc: Optional[bool] = None
    verify_sync: Optional[bool] = None
    run_passes: Optional[bool] = None
    opt_level: Optional[int] = Field(default=None, ge=0, le=3)
    auto_sync: Optional[bool] = None
    insert_sync: Optional[bool] = None
    matmul_cube_only: Optional[bool] = None
    capture_exceptions: Optional[bool] = None
    ir_multithreading: Optional[bool] = None
    cv_ratio: Optional[Literal[1, 2]] = None  # vector cores per cube core
    static_alloc: Optional[bool] = None
    reuse_alloc: Optional[int] = Field(default=None, ge=0, le=2)  # 0 off, 1 legacy, 2 modern
    vf_fusion: Optional[bool] = None  # C310 (Ascend950) only: pyasc refuses it for another arch


LaunchArg = Annotated[Union[TensorArg, ScalarArg, StructArg], Field(discriminator="kind")]


class JobRequest(Strict):
    bundle: Bundle
    core_num: int = Field(ge=1, le=65535)
    target: Literal[TARGETS] = "cpu"  # type: ignore[valid-type]
    soc: Optional[str] = Field(default=None, pattern=SOC_PATTERN, description=(
        "the SOC to run on (e.g. Ascend910B1): only workers serving it take the job; none: any worker of the target"))
    args: List[LaunchArg] = Field(max_length=1024)
    options: CompileOptions = CompileOptions()
    timeout: Optional[float] = Field(default=None, gt=0)
    bounds: Literal[BOUNDS] = Field(default="fault", description=(  # type: ignore[valid-type]
        "fault: an access out of its operand stops the launch; warn: one the device would perform (past a "
        "tensor argument into a guard zone, past a LocalTensor inside the Unified Buffer) is a warning"))
    hazards: Literal[HAZARDS] = Field(default="warn", description=(  # type: ignore[valid-type]
        "the cpu target's check of races between a core's pipes (MTE2, V, MTE3, ...) that no SetFlag/WaitFlag "
        "orders, and a SetFlag never waited for: warn (default): each is a warning; fault: the first fails the "
        "launch; off: no check. "
        "sim and npu ignore it"))
    model: bool = Field(default=True, description=(
        "the cpu target's modeled timeline: true (default): the result has model and trace; false: neither, "
        "and the run is faster (the hazard check does not depend on it). sim and npu ignore it"))
    benchmark: Optional[BenchmarkPolicy] = Field(default=None, description=(
        "repeat the launch in this job and record statistics (JobResult.benchmark); the outputs are the last "
        "repeat's, checked bit for bit against the first run's"))


class CitedFunction(BaseModel):
    """A kernel's Python function that a job's error cites: its source, from its file's line `lineno`."""
    name: str
    filename: str
    lineno: int
    source: str


class ErrorInfo(BaseModel):
    kind: str
    message: str
    # a failed job's: the kernel's functions holding a line the message cites (a compile error's: at
    # least the kernel's own), for the dashboard to show beside the message
    python: Optional[List[CitedFunction]] = None
    missing: Optional[List[Digest]] = None  # kind "missing_blobs": the blobs to upload first
    served: Optional[List[str]] = None  # a job for a SOC no live worker serves: the SOCs that are


class OutputRef(BaseModel):
    """An output's bytes: a blob to download, or (up to INLINE_BYTES) inline as base64 `data`."""
    blob: Optional[Digest] = None
    data: Optional[str] = None
    dtype: str
    shape: List[int]


class StageDone(BaseModel):
    """A stage of a job (build: frontend and toolchain; run) and the worker that did it."""
    worker: str
    seconds: float


class JobFields(BaseModel):
    """What a job's record and its summary both begin with."""
    id: str
    status: Literal[tuple(s.value for s in JobStatus)]  # type: ignore[valid-type]
    tenant: str
    target: str
    soc: Optional[str] = None
    core_num: int
    kernel: str
    bounds: str = "fault"
    hazards: str = "warn"


class JobResult(JobFields):
    """A job's state; outputs, timings, cache and ir_hash once finished, error once failed; log and
    warnings once the kernel ran (also when it faulted), in GET /v1/jobs/{id} only (null in lists);
    model once a cpu job finished, also only there."""
    created_at: float
    worker: Optional[str] = None
    # a queued job: its place in its tenant's queue (1: next) and that queue's length; workers
    # take the tenants' queues in turn, so other tenants' jobs are not counted
    queue_position: Optional[int] = None
    queue_depth: Optional[int] = None
    started_at: Optional[float] = None
    ended_at: Optional[float] = None
    outputs: Dict[str, OutputRef] = {}
    timings: Dict[str, float] = {}
    stages: Dict[str, StageDone] = {}  # build and run, by one worker or (a compile/run split) by two
    cache: Dict[str, str] = {}
    ir_hash: Optional[str] = None
    log: Optional[str] = None  # what printf/DumpTensor printed, block by block
    warnings: List[str] = []
    error: Optional[ErrorInfo] = None
    # a finished cpu job's modeled timeline: {"cycles" (slowest core), "clock_ghz", "cores": [{"core",
    # "cycles", "instructions", "busy" and "critical_path" (cycles by pipe)}], "unlisted_cores", "hazards"
    # (the hazard check's findings; absent with hazards "off")};
    # null on sim/npu and in lists. The same as a Perfetto trace: GET /v1/jobs/{id}/trace
    model: Optional[Dict[str, Any]] = None
    # a benchmark job's outcome (compiler/benchmark.py Measured.to_json): statistics {n, mean, std,
    # stderr, rel_error, median, min, max} in seconds, repeats, warmup, stopped_by, measure, cycles, hazards,
    # samples
    benchmark: Optional[Dict[str, Any]] = None


class ErrorHeadline(BaseModel):
    kind: str
    headline: str  # the message's first line, clipped (ending "…" if it was): GET /v1/jobs/{id} has it whole


class JobSummary(JobFields):
    """A job as lists show it (store/summary.py): a few hundred bytes at most, however much the job
    printed or output; text fields are clipped (ending "…" where cut). queue_position and
    queue_depth as in JobResult."""
    stage: Optional[str] = None  # a job handed on between workers: the stage it is queued for or ran
    worker: Optional[str] = None
    queue_position: Optional[int] = None
    queue_depth: Optional[int] = None
    created_at: float
    queued_at: Optional[float] = None
    started_at: Optional[float] = None
    ended_at: Optional[float] = None
    timings: Dict[str, float] = {}
    cache: Dict[str, str] = {}
    warning_count: int = 0
    error: Optional[ErrorHeadline] = None


class JobList(BaseModel):
    jobs: List[JobSummary]


class MissingBlobsRequest(Strict):
    digests: List[Digest] = Field(max_length=4096)


class MissingBlobs(BaseModel):
    missing: List[Digest]


class Caller(BaseModel):
    """Whose token this is: its tenant, and whether it is an operator's (it sees the whole pool)."""
    tenant: str
    operator: bool


class WorkerState(BaseModel):
    """A live worker as an operator sees it."""
    name: str
    last_beat: float  # its last heartbeat, epoch seconds
    serves: Dict[str, Dict[str, Any]]  # target -> what it said: stages, socs, jails (their stages and limits)...
    running: List[str] = []  # the ids of the jobs it runs now


class TenantFigures(BaseModel):
    """A tenant of the tenants file: its ended jobs by status (as the metrics count them), its jobs
    queued or running, its requests refused by reason (a limit's name, else the error's kind)."""
    name: str
    jobs: Dict[str, int]
    active: int
    refusals: Dict[str, int]


class PoolOverview(BaseModel):
    workers: List[WorkerState]
    tenants: List[TenantFigures]


class Health(BaseModel):
    status: Literal["ok"]
    redis: str
    workers: Dict[str, int]
    open_mode: bool  # true: no tokens are configured, anyone may use the service


class TargetWorker(BaseModel):
    """A live worker of a target, as its heartbeat describes it (Target.capabilities)."""
    name: str
    socs: List[str] = []
    stages: List[str] = []  # build, run or both
    kernel_types: List[str] = []
    pyasc: Optional[str] = None
    cann: Optional[str] = None
    cores: Optional[int] = None


class TargetState(BaseModel):
    name: str
    description: str
    workers: int
    socs: Dict[str, int]  # SOC -> its live workers
    queued: int  # jobs waiting in the target's queues: the caller's own (an operator's: every tenant's)
    oldest_queued_s: Optional[float]  # how long the oldest of them has waited
    live: List[TargetWorker]


class Targets(BaseModel):
    targets: List[TargetState]


class ErrorResponse(BaseModel):
    error: ErrorInfo
