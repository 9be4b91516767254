"""`ascrun worker --check-jail`: real probes (probes.py) in a real jail of each stage profile
(frontend, build, run), against what the stage is designed to allow."""
from __future__ import annotations

import ast
import os
import subprocess
import uuid
from typing import Dict, List, Tuple
from urllib.parse import urlparse

from ..settings import ServiceSettings
from ..targets.cpu.toolchain import CpuToolchain
from . import confine
from .bwrap import command, popen
from .jail import PythonJail

BUILD_PROBE = """
import os, socket, sys
def attempt(action):
    try:
        action()
        return "allowed"
    except OSError as e:
        return "refused (" + os.strerror(e.errno) + ")"
def connect(host, port):
    socket.create_connection((host, port), timeout=2).close()
def write(path):
    open(path, "w").write("jail")
def fork():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
request = eval(sys.argv[1])  # a literal from the broker, not from a tenant
out = {"environment": "has " + str(sorted(os.environ)), "write scratch": attempt(lambda: write("/tmp/probe")),
       "fork": attempt(fork), "exec": attempt(lambda: os.execv("/bin/true", ["true"]) if os.fork() == 0 else None),
       "signal everyone": attempt(lambda: os.kill(-1, 0)), "socket": attempt(lambda: socket.socket().close())}
for path in request["read"]:
    out["read " + path] = attempt(lambda: open(path, "rb").read(1))
for path in request["write"]:
    out["write " + path] = attempt(lambda: write(path))
for host, port in request["connect"]:
    out["connect %s:%d" % (host, port)] = attempt(lambda: connect(host, port))
print(repr(out))
"""
# What each stage needs and so may do; everything else a probe tries must be refused.
ALLOWED = {"write scratch": "allowed", "see other processes": "no", "inherited fds": "none"}
JAIL_ENVIRONMENT = {"HOME", "LC_CTYPE", "PATH", "PWD", "TMPDIR"}  # what bwrap, sh and Python set in a jail
BUILD_ALLOWED = {"fork": "allowed", "exec": "allowed", "signal everyone": "allowed"}  # the compiler's own processes


def check(settings: ServiceSettings) -> Tuple[List[str], bool]:
    """Real probes in real jails, one per stage profile: (report lines, all contained)."""
    redis = urlparse(settings.redis_url)
    secrets = [p for p in (settings.tenants_file,) if p]
    # a host path: the jail may see a folder of that name in its own scratch (bwrap makes mount
    # points there), so what counts is that nothing appears on the host
    marker = f"{os.getcwd()}/ascrun-jail-probe-{uuid.uuid4().hex[:8]}"
    request = {"read": ["/etc/passwd", "/etc/shadow", *secrets], "write": [marker, "/usr/probe"],
               "connect": [[redis.hostname or "127.0.0.1", redis.port or 6379], ["1.1.1.1", 53]]}
    results: Dict[str, Dict[str, str]] = {}
    limits = {"memory": 4 << 30, "cpu": 60, "files": 64}
    for profile in ("frontend", "run"):
        probe = PythonJail(f"probe:{profile}", limits)
        try:
            results[profile], _ = probe.request(request, [], 120)
        finally:
            probe.close()
    toolchain = CpuToolchain()
    filter_fd = confine.build_filter()  # as a build jail has it
    try:
        process = popen(command(["/usr/bin/python3", "-I", "-c", BUILD_PROBE, repr(request)],
                                toolchain.read_only_paths(), seccomp=filter_fd),
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=[filter_fd])
    finally:
        os.close(filter_fd)
    out, err = process.communicate(timeout=120)
    results["build"] = ast.literal_eval(out.decode()) if process.returncode == 0 else {"probe": err.decode()[-300:]}
    lines, ok = [], True
    for profile, found in results.items():
        lines.append(f"{profile} jail:")
        for what, outcome in found.items():
            expected = {**ALLOWED, **(BUILD_ALLOWED if profile == "build" else {})}.get(what)
            if what == "environment":  # only what the jail itself sets: nothing of the broker's passes
                contained = outcome == "empty" or \
                    set(ast.literal_eval(outcome.removeprefix("has "))) <= JAIL_ENVIRONMENT
            elif expected is not None:
                contained = outcome == expected
            elif what == f"write {marker}":
                contained = not os.path.exists(marker)
                if contained and not outcome.startswith("refused"):
                    outcome += " (inside the jail's own scratch: nothing on the host)"
            else:
                contained = outcome.startswith("refused")
            ok &= contained
            lines.append(f"  {'ok  ' if contained else 'FAIL'} {what}: {outcome}")
    return lines, ok
