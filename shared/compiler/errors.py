"""Errors a kernel author sees. `kind` is the wire name of the failure (see DESIGN.md)."""


class AscrunError(Exception):
    """Base of every error ascrun raises on purpose."""


class KernelError(AscrunError):
    """A kernel could not be bundled, compiled, built or run; `kind` says which. A kernel that
    faulted carries what it printed before (`log`) and its `warnings`, as a LaunchResult would."""
    kind = "runtime_error"

    def __init__(self, message: str, kind: str | None = None, log: str = "", warnings: list | None = None):
        super().__init__(message)
        if kind is not None:
            self.kind = kind
        self.log = log
        self.warnings = list(warnings or [])

    @property
    def message(self) -> str:
        return str(self)


class BundleRejected(KernelError):
    kind = "bundle_rejected"


class CompileError(KernelError):
    kind = "compile_error"


class BuildError(KernelError):
    kind = "build_error"


class KernelRuntimeError(KernelError):
    kind = "runtime_error"
