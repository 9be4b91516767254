"""The frontend's jail: pyasc runs in a child of a jailed zygote, one child per compile.

The zygote imports and warms pyasc, then for each request forks a child that runs frontend.run
under a stricter filter (no fork) and its own CPU limit. The zygote never parses a request: it
passes the frames to the child and relays the child's answer, with how the child ended. It is not
dumpable, so a child cannot write its memory, and children share no writable place (each writes
its answer to a pipe of its own). JailedFrontend is the broker's side.
"""
from __future__ import annotations

import json
import os
import resource
import signal
import time
from typing import Dict, List

from .. import frontend
from ..bundle import KernelBundle, KernelFunction
from ..errors import KernelError
from . import bwrap, confine, probes
from .framing import MAX_HEADER_BYTES, frames_of, parse_message, read_frames, write_frames, write_message
from .inside import BROKER_REQUEST_CAP, STDIN, STDOUT, announce_ready
from .jail import Deadline, JailCrashed, JailTimeout, PythonJail, error_reply, in_protocol, kernel_error

MAX_ANSWER_BYTES = 64 << 20  # a child's answer, as the zygote relays it


class JailedFrontend:
    """frontend.run in a child of a jailed zygote. A child's fork copies its zygote's memory, and a
    zygote has read every request it relayed: so a zygote serves one tenant, as a run jail does,
    and the least recently used goes when there are more than `size`. The zygote warmed before the
    worker's first job (`start`) goes to its first tenant; another tenant's first compile on this
    worker starts one of its own (about a second of CPU, once). A zygote that fails is replaced."""
    START_S = 120  # importing and warming pyasc

    def __init__(self, limits: Dict, size: int = 4):
        self.limits, self.size = limits, size
        self.zygotes: Dict[str, PythonJail] = {}
        self.spare: PythonJail | None = None
        self.deadline = Deadline(3600)
        self.tenant = ""

    def for_tenant(self, tenant: str) -> "JailedFrontend":
        self.tenant = tenant
        return self

    def start(self) -> None:
        """A zygote warm before any job: the worker's first compile is then as fast as its next ones."""
        if self.spare is None or not self.spare.alive:
            self.spare = PythonJail("frontend", self.limits)
        self.spare.wait_ready(time.monotonic() + min(self.START_S, self.deadline.left()))

    def _zygote(self) -> PythonJail:
        zygote = self.zygotes.pop(self.tenant, None)
        if zygote is None or not zygote.alive:
            spare, self.spare = self.spare, None
            zygote = spare if spare is not None and spare.alive else PythonJail("frontend", self.limits)
        self.zygotes[self.tenant] = zygote  # most recent last
        while len(self.zygotes) > self.size:
            self.zygotes.pop(next(iter(self.zygotes))).close()
        return zygote

    def _ask(self, request: Dict) -> Dict:
        """One child's answer to `request` (parsed, not yet read as the protocol says)."""
        try:
            zygote = self._zygote()
            zygote.wait_ready(time.monotonic() + min(self.START_S, self.deadline.left()))
            header, blobs = zygote.request(request, [], self.deadline.left(), MAX_HEADER_BYTES + MAX_ANSWER_BYTES)
        except JailTimeout:
            raise self.deadline.expired() from None
        except JailCrashed as e:
            raise KernelError(f"the frontend's jail failed: {e}", kind="runtime_error") from None
        if not blobs or not blobs[0]:
            raise KernelError(f"the frontend crashed its jail: {header.get('ended')}", kind="compile_error")
        try:
            reply, _ = parse_message(frames_of(blobs[0]))
        except ValueError:
            raise KernelError(f"the frontend's jail answered out of protocol ({header.get('ended')})",
                              kind="compile_error") from None
        if "error" in reply:
            raise kernel_error(reply, "frontend")
        return reply

    def __call__(self, bundle, args, options, soc=None):
        reply = self._ask({"bundle": bundle.to_json(), "args": [a.to_json() for a in args], "options": options,
                           "soc": soc})
        with in_protocol("frontend"):
            return frontend.FrontendResult.from_json(reply["ok"])

    def probe(self, request: Dict) -> Dict[str, str]:
        """check.probes run in a child of this tenant's zygote, as a kernel's compile would run."""
        with in_protocol("frontend"):
            return dict(self._ask({"probe": request})["ok"])

    def close(self) -> None:
        for zygote in [*self.zygotes.values(), *([self.spare] if self.spare else [])]:
            zygote.close()
        self.zygotes.clear()
        self.spare = None


# ---------------------------------------------------------------------------------------------
# inside the jail: the zygote

def _warm_up() -> None:
    """pyasc's first compile in a process sets up MLIR (about 2 s): paid once, by the zygote."""
    warm = KernelBundle(entry="ascrun_warm_up", constants=(), modules=(("asc", "asc"),), functions=(
        KernelFunction("ascrun_warm_up", "@asc.jit\ndef ascrun_warm_up(x: asc.GlobalAddress):\n"
                       "    asc.pipe_barrier(asc.PipeID.PIPE_ALL)\n", "<ascrun warm-up>", 1),))
    frontend.run(warm, [frontend.ArgSpec("tensor", "float32")])


def _child(frames: List[bytes], answer: int, cpu_s: int) -> None:
    os.close(STDIN)
    os.close(STDOUT)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s))
    confine.confine(allow_fork=False)
    try:
        header, _ = parse_message(frames)
        if "probe" in header:  # the broker's, never a tenant's: --check-jail and the isolation tests
            reply = {"ok": probes.probes(header["probe"], own_fds=[answer])}
        else:
            result = frontend.run(KernelBundle.from_json(header["bundle"]),
                                  [frontend.ArgSpec(a["kind"], a["dtype"], a.get("value")) for a in header["args"]],
                                  header["options"], header.get("soc"))
            reply = {"ok": result.to_json()}
    except BaseException as e:  # noqa: BLE001 - everything becomes the answer
        reply = error_reply(e)
    write_message(answer, reply)
    os._exit(0)


def clear_scratch(folder: str, keep) -> None:
    """Remove what a previous child left in the scratch (all but the names in `keep`), so nothing
    passes from one job (tenant) to the next; a child cannot fork, so nothing of it still writes."""
    for name in set(os.listdir(folder)) - keep:
        _remove(os.path.join(folder, name))


def _remove(path: str) -> None:
    """Like rmtree, but a folder the child made unreadable (chmod 000) is opened up first, not
    left behind with what it holds; links are removed, never followed."""
    if os.path.isdir(path) and not os.path.islink(path):
        os.chmod(path, 0o700)
        for entry in os.listdir(path):
            _remove(os.path.join(path, entry))
        os.rmdir(path)
    else:
        os.unlink(path)


def serve(limits: Dict[str, int]) -> None:
    """The zygote (inside.STAGES "frontend")."""
    confine.apply_limits(dict(limits, cpu=resource.RLIM_INFINITY))
    _warm_up()
    import gc
    gc.freeze()  # the children's GC leaves the warm pages shared
    confine.not_dumpable()
    confine.confine(allow_fork=True)
    announce_ready()
    warm = set(os.listdir(bwrap.SCRATCH))
    while True:
        try:
            frames = read_frames(STDIN, cap=BROKER_REQUEST_CAP)
        except EOFError:
            return
        clear_scratch(bwrap.SCRATCH, warm)
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            _child(frames, write, limits["cpu"])
        os.close(write)
        answer = bytearray()  # relayed unparsed: the broker checks it
        while len(answer) <= MAX_ANSWER_BYTES:
            chunk = os.read(read, 1 << 20)
            if not chunk:
                break
            answer += chunk
        os.close(read)
        if len(answer) > MAX_ANSWER_BYTES:
            os.kill(pid, signal.SIGKILL)
            answer = bytearray()
        _, status = os.waitpid(pid, 0)
        ended = (f"killed by {signal.Signals(os.WTERMSIG(status)).name}" if os.WIFSIGNALED(status)
                 else f"exited with status {os.WEXITSTATUS(status)}")
        write_frames(STDOUT, [json.dumps({"ended": ended}).encode(), bytes(answer)])
