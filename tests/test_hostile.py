"""Hostile tenants against a real stack (API server, a worker and its jails, Redis).

A kernel bundle's Python runs at compile time in the frontend's jail (pyasc's codegen calls what
a kernel names: `m = asc` then `m.runtime.compiler.os...` reaches the os module). Each attack
must be refused or contained: a marker file it tries to create stays absent, no secret comes
back, the worker lives, and the next job of another tenant is correct. The bundle gate refuses
these routes today (bundle_rejected, from the API); tests/test_jail.py runs the same attacks as a
compromised stage would, inside the jails themselves."""
import hashlib
import json
import os

import numpy as np
import pytest

import ascrun
from ascrun.compiler.bundle import KernelBundle, KernelFunction
from conftest import Service, start_redis

pytestmark = pytest.mark.service

TOKENS = {"alice": "alice-token-hostile", "mallory": "mallory-token-hostile"}
OS = "asc.runtime.compiler.os"


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("hostile")
    os.chmod(workdir, 0o755)  # readable by everyone outside the jails: the jails still cannot see it
    tenants = workdir / "tenants.json"
    tenants.write_text(json.dumps({"tenants": [
        {"name": name, "token_sha256": hashlib.sha256(token.encode()).hexdigest()} for name, token in TOKENS.items()]}))
    proc, url = start_redis(workdir)
    svc = Service(url, {"ASCRUN_TENANTS_FILE": str(tenants)})
    svc.add_worker()
    svc.workdir, svc.tenants = workdir, tenants
    yield svc
    svc.stop()
    proc.terminate()
    proc.wait(10)


def _attack_bundle(body: str) -> KernelBundle:
    source = f"@asc.jit\ndef attack(x: asc.GlobalAddress):\n    m = asc\n    {body}\n"
    return KernelBundle(entry="attack", constants=(), modules=(("asc", "asc"),),
                        functions=(KernelFunction("attack", source, "attack.py", 1),))


def _submit(stack, tenant: str, bundle: KernelBundle) -> dict:
    """The job's record; a submission the API refuses reads as a failed record with its error."""
    with ascrun.Client(stack.url, token=TOKENS[tenant]) as client:
        args, blobs = ascrun.service.submission.job_arguments(ascrun.args.prepare(["x"], [np.zeros(16, np.float32)]))
        try:
            job = client.submit_job({"bundle": bundle.to_json(), "core_num": 1, "args": args, "timeout": 60},
                                    blobs, wait=0)
        except ascrun.KernelError as e:
            return {"status": "failed", "error": {"kind": e.kind, "message": str(e)}}
        return client.wait(job["id"], 120)


def _other_tenant_is_served(stack, add_example):
    x = np.random.default_rng(0).random(8 * 2048, dtype=np.float32)
    y = np.random.default_rng(1).random(8 * 2048, dtype=np.float32)
    z = np.zeros_like(x)
    with ascrun.Client(stack.url, token=TOKENS["alice"]) as client:
        client.launch(add_example.vadd_kernel, 8, x, y, z, 2048, timeout=60)
    np.testing.assert_array_equal(z, x + y)


ATTACKS = {
    "shell command": f"m.runtime.compiler.os.system('touch {{marker}}')",
    "exec": f"m.runtime.compiler.os.execv('/bin/sh', ['sh', '-c', 'touch {{marker}}'])",
    "write a file": f"m.runtime.compiler.os.open('{{marker}}', 65)",
    "read the tenants file": f"assert False, m.runtime.compiler.os.read(m.runtime.compiler.os.open('{{tenants}}', 0), 9999)",
    "read the environment": "assert False, m.runtime.compiler.os.read(m.runtime.compiler.os.open('/proc/self/environ', 0), 9999)",
    "environ": "assert False, str(m.runtime.compiler.os.environ)",
    "signal the parent": "m.runtime.compiler.os.kill(m.runtime.compiler.os.getppid(), 9)",
    "signal everyone": "m.runtime.compiler.os.kill(-1, 9)",
    "fork": "m.runtime.compiler.os.fork()",
    "list inherited fds": "assert False, str(m.runtime.compiler.os.listdir('/proc/self/fd'))",
    "write to the worker's old Redis fd": "m.runtime.compiler.os.write(7, b'FLUSHALL\\r\\n')",
}


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_compile_time_attack_is_contained(stack, add_example, name):
    marker = stack.workdir / f"marker-{name.replace(' ', '-')}"
    body = ATTACKS[name].format(marker=marker, tenants=stack.tenants)
    record = _submit(stack, "mallory", _attack_bundle(body))
    said = json.dumps(record.get("error"))
    print(name, "->", record["status"], said)
    # refused (the gate, or an error inside the jail) or contained (os.system's fork fails: -1)
    assert record["status"] == "finished" or record["error"]["kind"] in ("bundle_rejected", "compile_error"), said
    for secret in ("token_sha256", "REDIS_URL", "redis://", hashlib.sha256(TOKENS["alice"].encode()).hexdigest()):
        assert secret not in said
    assert not marker.exists()
    assert all(w.poll() is None for w in stack.workers)  # the worker lives
    _other_tenant_is_served(stack, add_example)
