"""Errors a kernel author sees. `kind` is the wire name of the failure (see DESIGN.md); KINDS is the
one table of what each kind means to the HTTP API (status), the CLI (exit code) and Python (class)."""
from __future__ import annotations

import enum
from typing import Dict, NamedTuple, Type


class Kind(str, enum.Enum):
    BAD_REQUEST = "bad_request"
    BUNDLE_REJECTED = "bundle_rejected"
    COMPILE_ERROR = "compile_error"
    BUILD_ERROR = "build_error"
    RUNTIME_ERROR = "runtime_error"
    WRONG_RESULT = "wrong_result"  # a self-test's outputs differ from numpy's
    TIMEOUT = "timeout"
    UNAVAILABLE = "unavailable"
    UNAUTHORIZED = "unauthorized"
    NOT_FOUND = "not_found"
    LIMIT = "limit"
    MISSING_BLOBS = "missing_blobs"  # the API's 409: upload these first (the client does, by itself)

    def __str__(self) -> str:
        return self.value


class AscrunError(Exception):
    """Base of every error ascrun raises on purpose."""


class KernelError(AscrunError):
    """A launch failed; `kind` says why (kernel could not be bundled, compiled, built or run, or the
    service refused or lost it). A kernel that faulted carries what it printed before (`log`) and
    its `warnings`, as a LaunchResult would."""
    kind = Kind.RUNTIME_ERROR.value

    def __init__(self, message: str, kind: str | None = None, log: str = "", warnings: list | None = None):
        super().__init__(message)
        if kind is not None:
            self.kind = str(kind)
        self.log = log
        self.warnings = list(warnings or [])

    @property
    def message(self) -> str:
        return str(self)

    @staticmethod
    def of(kind: str, message: str, log: str = "", warnings: list | None = None) -> "KernelError":
        """The error of `kind` as its class in KINDS (a KernelError for a kind this version does not know)."""
        row = KINDS.get(kind)
        return (row.error if row is not None else KernelError)(message, kind=kind, log=log, warnings=warnings)


class BundleRejected(KernelError):
    kind = Kind.BUNDLE_REJECTED.value


class CompileError(KernelError):
    kind = Kind.COMPILE_ERROR.value


class BuildError(KernelError):
    kind = Kind.BUILD_ERROR.value


class KernelRuntimeError(KernelError):
    kind = Kind.RUNTIME_ERROR.value


class ServiceUnreachable(KernelError, ConnectionError):
    """The service did not answer (connection refused, reset, or no answer in time): nothing is known
    of the kernel. A KernelError too, so that code catching every failed launch keeps working;
    catch ConnectionError (or this class) to tell it apart from what the service said."""


class KindRow(NamedTuple):
    status: int  # the HTTP API's status for a refusal of this kind (a call site may say a more exact one)
    exit_code: int  # the CLI's
    error: Type[KernelError]


# The CLI's exit codes
EXIT_OK, EXIT_KERNEL, EXIT_USAGE, EXIT_UNAVAILABLE = 0, 1, 2, 3

KINDS: Dict[str, KindRow] = {  # by Kind, or by its wire name: a Kind is its str
    Kind.BAD_REQUEST: KindRow(422, EXIT_USAGE, KernelError),
    Kind.BUNDLE_REJECTED: KindRow(422, EXIT_KERNEL, BundleRejected),
    Kind.COMPILE_ERROR: KindRow(422, EXIT_KERNEL, CompileError),
    Kind.BUILD_ERROR: KindRow(422, EXIT_KERNEL, BuildError),
    Kind.RUNTIME_ERROR: KindRow(500, EXIT_KERNEL, KernelRuntimeError),
    Kind.WRONG_RESULT: KindRow(500, EXIT_KERNEL, KernelError),
    Kind.TIMEOUT: KindRow(504, EXIT_UNAVAILABLE, KernelError),
    Kind.UNAVAILABLE: KindRow(503, EXIT_UNAVAILABLE, KernelError),
    Kind.UNAUTHORIZED: KindRow(401, EXIT_USAGE, KernelError),
    Kind.NOT_FOUND: KindRow(404, EXIT_USAGE, KernelError),
    Kind.LIMIT: KindRow(429, EXIT_USAGE, KernelError),
    Kind.MISSING_BLOBS: KindRow(409, EXIT_USAGE, KernelError),
}


def exit_code(error: KernelError) -> int:
    """The CLI's exit code for a failed launch (EXIT_KERNEL for a kind this version does not know)."""
    row = KINDS.get(error.kind)
    return row.exit_code if row is not None else EXIT_KERNEL
