"""A jailed stage's own limits (sandbox/confine.py, applied inside its jail): after confine, no
process, program or socket can be started and no other process signalled, threads still run;
resource limits hold. Checked in a forked child."""
import json
import os
import resource
import socket
import subprocess
import threading

import pytest

from ascrun.compiler.sandbox import confine
from ascrun.compiler.sandbox.probes import _attempt

pytestmark = pytest.mark.kernel


def _in_child(body) -> dict:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            result = body()
        except BaseException as e:  # report, never escape the child
            result = {"crash": repr(e)}
        os.write(write, json.dumps(result).encode())
        os._exit(0)
    os.close(write)
    data = os.read(read, 65536)
    os.waitpid(pid, 0)
    return json.loads(data)


def test_no_processes_or_sockets_but_threads_work():
    def body():
        confine.confine(allow_fork=False)
        ran = []
        thread = threading.Thread(target=lambda: ran.append(True))
        thread.start()
        thread.join()
        return {"fork": _attempt(os.fork), "exec": _attempt(lambda: subprocess.run(["true"])),
                "socket": _attempt(socket.socket), "thread": bool(ran), "kill parent": _attempt(
                    lambda: os.kill(os.getppid(), 0)), "kill group": _attempt(lambda: os.kill(0, 0)),
                "kill self": _attempt(lambda: os.kill(os.getpid(), 0))}

    eperm = "refused (Operation not permitted)"
    assert _in_child(body) == {"fork": eperm, "exec": eperm, "socket": eperm, "thread": True,
                               "kill parent": eperm, "kill group": eperm, "kill self": "allowed"}


def test_a_zygote_forks_but_execs_nothing():
    def body():
        confine.confine(allow_fork=True)
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            confine.confine(allow_fork=False)  # stacked: the stricter answer wins
            os.write(write, json.dumps({"fork": _attempt(os.fork), "exec": _attempt(lambda: os.execv("/bin/true", ["true"]))}).encode())
            os._exit(0)
        os.close(write)
        child = json.loads(os.read(read, 4096))
        os.waitpid(pid, 0)
        return {"zygote exec": _attempt(lambda: subprocess.run(["true"])), **child}

    eperm = "refused (Operation not permitted)"
    assert _in_child(body) == {"zygote exec": eperm, "fork": eperm, "exec": eperm}


def test_resource_limits():
    def body():
        confine.limit_resources(cpu_seconds=50, max_files=64, memory_bytes=2 << 30)
        try:
            bytearray(4 << 30)
            memory = "allocated"
        except MemoryError:
            memory = "MemoryError"
        return {"cpu": resource.getrlimit(resource.RLIMIT_CPU)[0], "files": resource.getrlimit(resource.RLIMIT_NOFILE)[0],
                "memory": memory}

    assert _in_child(body) == {"cpu": 50, "files": 64, "memory": "MemoryError"}
