"""`ascrun worker --check-jail`: real probes (probes.py) in each stage's own jails (a frontend child,
a run jail, a build jail), against what the stage is designed to allow, after a canary tenant's job
planted a marker there: the probing tenant must find neither it nor the worker's secrets."""
from __future__ import annotations

import ast
import os
import subprocess
import uuid
from typing import Dict, List, Sequence, Tuple
from urllib.parse import urlparse

import numpy as np

from .. import targets
from ..bundle import KernelBundle, KernelFunction
from ..frontend import ArgSpec
from ..settings import ServiceSettings
from . import confine
from .bwrap import command, popen
from .frontend import JailedFrontend
from .jail import Deadline

CANARY, PROBING = "ascrun-check-canary", "ascrun-check-probe"  # the two tenants of the check

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
found = set()  # the needles come in halves, as probes.find takes them
for pid in [p for p in (os.listdir("/proc") if os.path.isdir("/proc") else []) if p.isdigit()]:
    for name in ("environ", "cmdline"):
        try:
            text = open("/proc/%s/%s" % (pid, name), "rb").read()
        except OSError:
            continue
        found.update("/proc/%s/%s" % (pid, name) for a, b in request["find"] if a.encode() + b.encode() in text)
out["found"] = ", ".join(sorted(found)) or "nowhere"
print(repr(out))
"""
# What each stage needs and so may do; everything else a probe tries must be refused.
ALLOWED = {"write scratch": "allowed", "see other processes": "no", "inherited fds": "none", "found": "nowhere"}
JAIL_ENVIRONMENT = {"HOME", "LC_CTYPE", "PATH", "PWD", "TMPDIR"}  # what bwrap, sh and Python set in a jail
BUILD_ALLOWED = {"fork": "allowed", "exec": "allowed", "signal everyone": "allowed"}  # the compiler's own processes


def _halves(needles: Sequence[str]) -> List[List[str]]:
    return [[n[:len(n) // 2], n[len(n) // 2:]] for n in needles]


def _plant(canary: str, frontend: JailedFrontend, target) -> None:
    """The canary tenant's job: `canary` in its source, its file name and its tensor."""
    source = f'@asc.jit\ndef ascrun_check_canary(x: asc.GlobalAddress, n: int):\n    asc.printf("{canary} %d\\n", n)\n'
    bundle = KernelBundle(entry="ascrun_check_canary", constants=(), modules=(("asc", "asc"),),
                          functions=(KernelFunction("ascrun_check_canary", source, f"{canary}.py", 1),))
    frontend.for_tenant(CANARY).deadline = target.toolchain.deadline = target.runner.deadline = Deadline(300)
    result = frontend(bundle, [ArgSpec("tensor", "uint8"), ArgSpec("scalar", "int", 1)], {})
    artifact = target.toolchain.build(result.source, result.kernel_name, result.kernel_type)
    tensor = np.frombuffer(canary.encode(), np.uint8).copy()
    target.runner.for_tenant(CANARY).run(artifact, 1, result.params, result.kernel_args, [tensor, 1])


def check(settings: ServiceSettings) -> Tuple[List[str], bool]:
    """Real probes in each stage's real jails: (report lines, all contained)."""
    redis = urlparse(settings.redis_url)
    secrets = [p for p in (settings.tenants_file,) if p]
    canary = f"ascrun-check-canary-{uuid.uuid4().hex}"
    hidden = [v for v in (settings.redis_url, redis.password, settings.tenants_json) if v]  # the jail never knew
    # a host path: the jail may see a folder of that name in its own scratch (bwrap makes mount
    # points there), so what counts is that nothing appears on the host
    marker = f"{os.getcwd()}/ascrun-jail-probe-{uuid.uuid4().hex[:8]}"
    request = {"read": ["/etc/passwd", "/etc/shadow", *secrets], "write": [marker, "/usr/probe"],
               "connect": [[redis.hostname or "127.0.0.1", redis.port or 6379], ["1.1.1.1", 53]],
               "find": _halves([canary, *hidden])}
    results: Dict[str, Dict[str, str]] = {}
    limits = {"memory": 4 << 30, "cpu": 60, "files": 64}
    target, frontend = targets.jailed("cpu", limits), JailedFrontend(limits)
    try:
        _plant(canary, frontend, target)  # a run jail that kept a thread of it would have failed the run
        results["frontend"] = frontend.for_tenant(PROBING).probe(request)
        results["run"] = target.runner.for_tenant(PROBING).probe(request)
    finally:
        frontend.close()
        target.close()
    filter_fd = confine.build_filter()  # as a build jail has it
    try:
        process = popen(command(["/usr/bin/python3", "-I", "-c", BUILD_PROBE, repr(request)],
                                target.compiler.read_only_paths(), seccomp=filter_fd),
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
