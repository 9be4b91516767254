"""What a compromised stage would try, run inside a stage's own jail as its code runs there (a
child of the tenant's zygote, the tenant's run jail): reads, writes, connects, signals, new
processes, and `find`, which looks for other tenants' bytes and the broker's secrets in everything
the stage can reach. --check-jail (check.py) and the isolation tests read the answers.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

from . import bwrap


def _attempt(action) -> str:
    try:
        action()
        return "allowed"
    except OSError as e:
        return f"refused ({os.strerror(e.errno) if e.errno else e})"


def _connect(host: str, port: int) -> None:
    import socket
    with socket.create_connection((host, port), timeout=2):
        pass


def _fork_and_exit() -> None:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)


def _exec() -> None:
    import subprocess
    subprocess.run(["/bin/true"], check=True)


def _inherited_fds(own: Sequence[int]) -> str:
    """Open fds past stdio but the stage's own channel to the broker (`own`)."""
    fds = sorted(int(n) for n in os.listdir("/proc/self/fd") if int(n) > 2 and int(n) not in own)
    return "none" if len(fds) <= 1 else f"open: {fds}"  # one is listdir's own


def _write(path: str) -> None:
    with open(path, "w") as f:
        f.write("jail")


SCAN_CHUNK = 16 << 20
UNREADABLE_MAPPINGS = ("[vvar]", "[vsyscall]", "[vvar_vclock]")


def _readable_regions() -> List[Tuple[int, int]]:
    with open("/proc/self/maps") as maps:
        regions = [line.split() for line in maps]
    return [tuple(int(x, 16) for x in fields[0].split("-")) for fields in regions
            if "r" in fields[1] and not (len(fields) > 5 and fields[5] in UNREADABLE_MAPPINGS)]


def _own_memory(address: int, size: int) -> bytes | None:
    """`size` bytes of this process's memory at `address`, as a kernel's code would read them (a
    jailed stage is not dumpable: /proc/self/mem is not its to open). Copied by write(2) into a
    memfd, which fails (EFAULT) rather than crashing where nothing is mapped."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.write.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t]
    libc.write.restype = ctypes.c_ssize_t
    fd = os.memfd_create("scan")
    try:
        if libc.write(fd, address, size) != size:
            return None
        return os.pread(fd, size, 0)
    finally:
        os.close(fd)


def find(needles: Sequence[Sequence[str]]) -> str:
    """Where any of `needles` appears in what this process can reach: its whole memory, every
    /proc/*/environ and cmdline, its open files, the files under the scratch, its environment. Each
    needle comes in two halves, matched one after the other, so this process never holds it whole
    (the request itself would be found). "nowhere", or the places."""
    halves = [(a.encode(), b.encode()) for a, b in needles]
    places: List[str] = []

    def search(data: bytes, where: str) -> None:
        for a, b in halves:
            at = data.find(a)
            while at >= 0:
                if data[at + len(a):at + len(a) + len(b)] == b:
                    places.append(where)
                    return
                at = data.find(a, at + 1)

    overlap = max((len(a) + len(b) for a, b in halves), default=0)
    for start, end in _readable_regions():
        for at in range(start, end, SCAN_CHUNK):
            data = _own_memory(at, min(SCAN_CHUNK + overlap, end - at))
            if data is None:
                break  # a guard page, or a mapping gone meanwhile
            search(data, "memory")
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        for name in ("environ", "cmdline"):
            try:
                search(Path(f"/proc/{pid}/{name}").read_bytes(), f"/proc/{pid}/{name}")
            except OSError:
                pass
    for fd in os.listdir("/proc/self/fd"):
        try:
            if stat.S_ISREG(os.fstat(int(fd)).st_mode):
                search(os.pread(int(fd), 1 << 30, 0), f"fd {fd}")
        except OSError:
            pass
    for folder, _, files in os.walk(bwrap.SCRATCH):
        for name in files:
            path = os.path.join(folder, name)
            search(path.encode(), path)
            try:
                search(Path(path).read_bytes(), path)
            except OSError:
                pass
    search("\0".join(f"{k}={v}" for k, v in os.environ.items()).encode(), "os.environ")
    return ", ".join(sorted(set(places))) or "nowhere"


def probes(request: Dict[str, Any], own_fds: Sequence[int] = ()) -> Dict[str, str]:
    """What a compromised stage can do; each value "allowed", "refused (...)" or a finding.
    `own_fds`: the stage's channel to the broker, past stdio (a zygote child's answer pipe)."""
    results = {
        "environment": "empty" if not {k for k in os.environ if k not in ("PATH", "TMPDIR", "HOME")}
        else f"has {sorted(os.environ)}",
        "inherited fds": _inherited_fds(own_fds),
        "write scratch": _attempt(lambda: _write("/tmp/probe")),
        "see other processes": "no" if sorted(int(p) for p in os.listdir("/proc") if p.isdigit()) == [1, os.getpid()]
        or all(int(p) in (1, 2, os.getpid(), os.getppid()) for p in os.listdir("/proc") if p.isdigit())
        else f"yes: {sorted(p for p in os.listdir('/proc') if p.isdigit())}",
        "signal parent": _attempt(lambda: os.kill(os.getppid(), 0)),
        "signal everyone": _attempt(lambda: os.kill(-1, 0)),
        "fork": _attempt(_fork_and_exit),
        "exec": _attempt(_exec),
    }
    for path in request.get("read", []):
        results[f"read {path}"] = _attempt(lambda: open(path, "rb").read(1))
    for path in request.get("write", []):
        results[f"write {path}"] = _attempt(lambda: _write(path))
    for host, port in request.get("connect", []):
        results[f"connect {host}:{port}"] = _attempt(lambda: _connect(host, port))
    if "find" in request:
        results["found"] = find(request["find"])
    return results
