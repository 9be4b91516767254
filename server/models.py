"""The HTTP API's JSON shapes (pydantic), as the OpenAPI docs show them."""
from __future__ import annotations

from typing import Annotated, Any, Dict, List, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

from ..compiler import structs
from ..compiler.errors import BundleRejected, KernelError
from ..compiler.pipeline import BOUNDS, TARGETS

Digest = str  # lowercase hex sha256
TENSOR_DTYPES = ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16",
                 "float32", "float64")
SCALAR_DTYPES = ("int", "float", "bool", "str") + TENSOR_DTYPES


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class BundleFunction(Strict):
    name: str = Field(max_length=256)
    source: str
    filename: str = Field(max_length=4096)
    lineno: int = Field(ge=1)


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
    entry: str = Field(max_length=256)
    functions: List[BundleFunction] = Field(min_length=1)
    constants: Dict[str, str] = {}
    modules: Dict[str, str] = {}
    structs: Dict[str, StructDefinition] = {}


class TensorArg(Strict):
    kind: Literal["tensor"]
    blob: Digest = Field(pattern=r"^[0-9a-f]{64}$")
    dtype: Literal[TENSOR_DTYPES]  # type: ignore[valid-type]
    shape: List[int] = Field(max_length=32)


class ScalarArg(Strict):
    kind: Literal["scalar"]
    dtype: Literal[SCALAR_DTYPES]  # type: ignore[valid-type]
    value: Union[bool, int, float, str]


class StructArg(Strict):
    """A pyasc Struct: `dtype` names one of the bundle's structs, `value` holds every field's value
    (a nested struct's as an object)."""
    kind: Literal["struct"]
    dtype: str = Field(max_length=256)
    value: Dict[str, Any]


LaunchArg = Annotated[Union[TensorArg, ScalarArg, StructArg], Field(discriminator="kind")]


class JobRequest(Strict):
    bundle: Bundle
    core_num: int = Field(ge=1, le=65535)
    target: Literal[TARGETS] = "cpu"  # type: ignore[valid-type]
    args: List[LaunchArg] = Field(max_length=1024)
    options: Dict[str, Union[bool, int, float, str, None]] = {}
    timeout: Optional[float] = Field(default=None, gt=0)
    bounds: Literal[BOUNDS] = Field(default="fault", description=(  # type: ignore[valid-type]
        "fault: an access out of its operand stops the launch; warn: one the device would perform (past a "
        "tensor argument into a guard zone, past a LocalTensor inside the Unified Buffer) is a warning"))

    @field_validator("args")
    @classmethod
    def _struct_values(cls, args: List[Any], info: Any) -> List[Any]:
        """Each struct argument names a struct of the bundle and gives each field a value of its
        dtype (the worker would otherwise pack a wrapped or truncated value)."""
        bundle = info.data.get("bundle")
        struct_args = [(i, a) for i, a in enumerate(args) if a.kind == "struct"]
        if bundle is None or not struct_args:
            return args
        try:
            defs = structs.definitions_from_json({n: d.model_dump() for n, d in bundle.structs.items()})
        except BundleRejected as e:
            raise PydanticCustomError("struct_definition", str(e)) from None
        for i, arg in struct_args:
            if arg.dtype not in defs:
                raise PydanticCustomError("struct_argument", "argument {index} is a struct {name}, which the bundle "
                                          "does not define", {"index": i, "name": arg.dtype})
            try:
                structs.check_value(defs, arg.dtype, arg.value)
            except KernelError as e:
                raise PydanticCustomError("struct_argument", "argument {index}: {problem}",
                                          {"index": i, "problem": str(e)}) from None
        return args


class ErrorInfo(BaseModel):
    kind: str
    message: str
    missing: Optional[List[Digest]] = None  # kind "missing_blobs": the blobs to upload first


class OutputRef(BaseModel):
    blob: Digest
    dtype: str
    shape: List[int]


class JobResult(BaseModel):
    """A job's state; outputs, timings, cache and ir_hash once finished, error once failed; log and
    warnings once the kernel ran (also when it faulted), in GET /v1/jobs/{id} only (null in lists)."""
    id: str
    status: Literal["queued", "started", "finished", "failed", "timed_out"]
    tenant: str
    target: str
    core_num: int
    kernel: str
    bounds: str = "fault"
    created_at: float
    worker: Optional[str] = None
    started_at: Optional[float] = None
    ended_at: Optional[float] = None
    outputs: Dict[str, OutputRef] = {}
    timings: Dict[str, float] = {}
    cache: Dict[str, str] = {}
    ir_hash: Optional[str] = None
    log: Optional[str] = None  # what printf/DumpTensor printed, block by block
    warnings: List[str] = []
    error: Optional[ErrorInfo] = None


class JobList(BaseModel):
    jobs: List[JobResult]


class MissingBlobsRequest(Strict):
    digests: List[Digest] = Field(max_length=4096)


class MissingBlobs(BaseModel):
    missing: List[Digest]


class Health(BaseModel):
    status: Literal["ok"]
    redis: str
    workers: Dict[str, int]
    open_mode: bool  # true: no tokens are configured, anyone may use the service


class ErrorResponse(BaseModel):
    error: ErrorInfo
