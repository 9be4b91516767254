"""The work horse's own limits: after forbid_processes_and_sockets, no process or socket can be
started, threads still run; resource limits hold. Checked in a forked child, as a horse is."""
import json
import os
import resource
import socket
import subprocess
import threading

from ascrun.server.workers import sandbox


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


def _attempt(action) -> str:
    try:
        action()
        return "allowed"
    except OSError as e:
        return f"errno {e.errno}"


def test_no_processes_or_sockets_but_threads_work():
    def body():
        sandbox.forbid_processes_and_sockets()
        ran = []
        thread = threading.Thread(target=lambda: ran.append(True))
        thread.start()
        thread.join()
        return {"fork": _attempt(os.fork), "exec": _attempt(lambda: subprocess.run(["true"])),
                "socket": _attempt(socket.socket), "thread": bool(ran)}

    assert _in_child(body) == {"fork": "errno 1", "exec": "errno 1", "socket": "errno 1", "thread": True}


def test_resource_limits():
    def body():
        sandbox.limit_resources(cpu_seconds=50, max_files=64, memory_bytes=2 << 30)
        try:
            bytearray(4 << 30)
            memory = "allocated"
        except MemoryError:
            memory = "MemoryError"
        return {"cpu": resource.getrlimit(resource.RLIMIT_CPU)[0], "files": resource.getrlimit(resource.RLIMIT_NOFILE)[0],
                "memory": memory}

    assert _in_child(body) == {"cpu": 50, "files": 64, "memory": "MemoryError"}
