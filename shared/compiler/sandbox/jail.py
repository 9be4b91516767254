"""The broker's side of a jail: a long-lived Python stage answering one message with one message
(PythonJail), the job's deadline, the protocol's errors both ways, and what every jailed
toolchain shares. A jail's answer is untrusted: read as the protocol says, or the job fails.
"""
from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from .. import socs
from ..errors import KernelError, Kind
from . import bwrap
from .framing import MAX_BLOB_BYTES, MAX_HEADER_BYTES, Sink, read_message, read_streamed, write_message

log = logging.getLogger("ascrun.jail")

MAX_ARTIFACT_BYTES = 256 << 20
STDERR_TAIL_CHARS = 2000


class JailTimeout(Exception):
    pass


class JailCrashed(Exception):
    pass


# Called (stage, "start" or "crash") when a jail dies before it said it was ready, or after: a worker
# counts these in the pool's metrics (server/workers/worker.py sets it); in process (run_local) it is None.
failure_hook: Optional[Callable[[str, str], None]] = None


class PythonJail:
    """A long-lived jailed Python stage answering one message with one message."""

    def __init__(self, stage: str, limits: Dict, ro_paths: Sequence[str] = (), devices: Sequence[str] = (),
                 environment: Mapping[str, str] | None = None):
        self.stage = stage.split(":")[0]  # "cann-build:<SOC>" counts as cann-build
        self.artifacts: Dict[str, bool] = {}  # a run jail's: digests of the artifacts it holds, oldest first
        self.cpu_s = 0.0  # its stage's CPU time so far, as /proc showed it after its last request
        self.threads: frozenset = frozenset()  # its stage's threads once ready (bwrap.usage)
        self.stage_pid = 0
        self.process = bwrap.popen(bwrap.python_command(stage, limits, ro_paths, devices, environment),
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.ready = False
        self.stderr_tail = ""  # what it wrote before it died, if it died before it was ready

    def wait_ready(self, deadline: float) -> None:
        if not self.ready:
            header, _ = self._read(deadline, MAX_HEADER_BYTES)
            if header.get("ready") is not True:
                self.close(grace_s=2.0)
                raise self._crashed("the jail did not start")
            self.process.stderr.close()  # the stage writes to no one from now on (inside.announce_ready)
            self.ready = True
            self.stage_pid = bwrap.stage_pid(self.process)
            self.threads = bwrap.usage(self.stage_pid).threads

    def _read(self, deadline: float, cap: int = MAX_BLOB_BYTES, sink_for: Optional[Callable[..., Sink]] = None):
        try:
            if sink_for is not None:
                return read_streamed(self.process.stdout.fileno(), sink_for, deadline, cap), []
            return read_message(self.process.stdout.fileno(), deadline, cap)
        except TimeoutError:
            self.close()
            raise JailTimeout from None
        except (EOFError, ValueError):
            self.close(grace_s=2.0)
            raise self._crashed(bwrap.describe_exit(self.process.returncode)) from None

    def _crashed(self, why: str) -> JailCrashed:
        if failure_hook is not None:
            try:
                failure_hook(self.stage, "crash" if self.ready else "start")
            except Exception:  # noqa: BLE001 - counting a failure must not replace it
                log.exception("counting a %s jail's failure", self.stage)
        if not self.ready and self.stderr_tail:  # why it died at start, as close() kept it
            why = f"{why}; its stderr ends: {self.stderr_tail}"
        return JailCrashed(why)

    def request(self, header: Dict, blobs: Sequence[bytes], timeout_s: float, max_reply: int = MAX_BLOB_BYTES,
                sink_for: Optional[Callable[..., Sink]] = None) -> Tuple[Dict, List[bytes]]:
        """The reply is refused (JailCrashed) once it would be over `max_reply` bytes. `blobs` may be
        framing.Streamed; with `sink_for` the reply's byte frames go to sinks (framing.read_streamed)
        and none are returned."""
        deadline = time.monotonic() + timeout_s
        try:
            self.wait_ready(deadline)
            try:
                write_message(self.process.stdin.fileno(), header, blobs, deadline)
            except TimeoutError:
                self.close()
                raise JailTimeout from None
            except OSError:
                self.close(grace_s=2.0)
                raise self._crashed(bwrap.describe_exit(self.process.returncode)) from None
            return self._read(deadline, max_reply, sink_for)
        except BaseException:
            self.close()  # whatever broke off the exchange, the pipes are out of step: never reuse this jail
            raise

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self, grace_s: float = 0.0) -> None:
        """Kill the jail; after `grace_s` for it to exit by itself (a crash being reported)."""
        try:
            self.process.wait(grace_s)
        except subprocess.TimeoutExpired:
            pass
        bwrap.kill(self.process)
        if not self.process.stderr.closed:  # it died before it was ready: keep why, for wait_ready to say
            os.set_blocking(self.process.stderr.fileno(), False)
            try:
                text = (self.process.stderr.read() or b"").decode(errors="replace")  # a pipe holds 1 MiB at most
            except OSError:
                text = ""
            self.stderr_tail = text.strip()[-STDERR_TAIL_CHARS:]
        for pipe in (self.process.stdin, self.process.stdout, self.process.stderr):
            try:
                pipe.close()
            except OSError:
                pass




class Deadline:
    """The job's deadline, shared by the stages of one job (the broker's clock, not the jail's)."""

    def __init__(self, timeout_s: float):
        self.timeout_s = timeout_s
        self.at = time.monotonic() + timeout_s

    def left(self) -> float:
        left = self.at - time.monotonic()
        if left <= 0:
            raise self.expired()
        return left

    def expired(self) -> KernelError:
        return KernelError(f"the job ran longer than its {self.timeout_s:g} s timeout and was stopped", kind="timeout")


# The kinds a stage may say its work ended with: a timeout is the broker's deadline, never a jail's
# word, and anything else a jail says is a runtime_error (a kind becomes a job's status and a label
# of the pool's metrics).
STAGE_KINDS = frozenset({Kind.BAD_REQUEST, Kind.BUNDLE_REJECTED, Kind.COMPILE_ERROR, Kind.BUILD_ERROR,
                         Kind.RUNTIME_ERROR, Kind.LIMIT, Kind.UNAVAILABLE})


def kernel_error(reply: Dict, stage: str) -> KernelError:
    with in_protocol(stage):
        error = reply["error"]
        kind = str(error["kind"])
        return KernelError.of(kind if kind in STAGE_KINDS else Kind.RUNTIME_ERROR.value, str(error["message"]),
                              log=str(error.get("log", "")), warnings=[str(w) for w in error.get("warnings", [])])


def out_of_protocol(stage: str) -> KernelError:
    return KernelError(f"the {stage} jail answered out of protocol", kind="runtime_error")


@contextlib.contextmanager
def in_protocol(stage: str):
    """A reply's fields read as the protocol says, or the job fails: a jail's answer is untrusted."""
    try:
        yield
    except (KeyError, TypeError, ValueError, AttributeError):
        raise out_of_protocol(stage) from None


def error_reply(e: BaseException) -> Dict[str, Any]:
    """What a stage answers for an exception (kernel_error reads it back in the broker)."""
    if isinstance(e, KernelError):
        return {"error": {"kind": e.kind, "message": str(e), "log": e.log, "warnings": e.warnings}}
    if isinstance(e, MemoryError):
        return {"error": {"kind": "limit", "message": "the stage ran out of its jail's memory"}}
    return {"error": {"kind": "runtime_error", "message": f"internal error in the jail: {e.__class__.__name__}: {e}"}}


class JailedToolchain:
    """A toolchain whose every build runs in a fresh jail under a worker's `limits` and the job's
    deadline; a target's subclass says how (`build`). Its id is the toolchain's: a binary built
    in a jail is the binary built in this process."""

    def __init__(self, toolchain, limits: Dict[str, int]):
        self.toolchain, self.limits, self.id = toolchain, limits, toolchain.id
        self.deadline = Deadline(3600)

    def warm(self) -> None:
        self.toolchain.warm()

    def build(self, source: str, kernel_name: str, kernel_type: str = "AIV_ONLY",
              npu_arch: int = socs.DEFAULT_NPU_ARCH) -> bytes:
        raise NotImplementedError
