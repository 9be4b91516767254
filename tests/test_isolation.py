"""Strangers stay strangers when a stage is theirs: attacker code runs in each jail exactly as the
stage runs (probes.py's `find`, in a child of the tenant's zygote and in the tenant's run jail,
where its kernels run) after a canary tenant's job planted unique markers in its source, comments,
file name, constants and tensors; it must find none of them, in memory, /proc, fds, files or
environments. The canary's own jails find them: the search works."""
import uuid

import numpy as np
import pytest

from ascrun.compiler import pipeline
from ascrun.compiler.bundle import collect
from ascrun.compiler.frontend import ArgSpec
from ascrun.compiler.sandbox.frontend import JailedFrontend
from ascrun.compiler.sandbox.jail import Deadline
from ascrun.compiler.targets.cpu.jailed import JailedRunners
from conftest import load_module

pytestmark = pytest.mark.kernel

LIMITS = {"memory": 8 << 30, "cpu": 60, "files": 64}
MARK = uuid.uuid4().hex[:12]
MARKERS = {"comment": f"canary-comment-{MARK}", "file": f"canary_file_{MARK}", "string": f"canary-string-{MARK}",
           "constant": f"canary-constant-{MARK}", "tensor": f"canary-tensor-{MARK}"}
SPECS = [ArgSpec("tensor", "float32")] * 3 + [ArgSpec("scalar", "int", 64)]


def _halves(markers):
    """Each marker in two halves: the attacker's request never holds one whole (probes.find)."""
    return [[m[:len(m) // 2], m[len(m) // 2:]] for m in markers]


@pytest.fixture(scope="module")
def canary(tmp_path_factory):
    """The canary tenant's kernel: its markers in a comment, its file name, a printed string and a
    constant's name; its tensor holds one as bytes."""
    path = tmp_path_factory.mktemp("canary") / f"{MARKERS['file']}.py"
    path.write_text(f"""import asc

# {MARKERS['comment']}
SCALE_{MARK} = 3


@asc.jit
def canary_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, n: int):
    asc.printf("{MARKERS['string']} %d\\n", n * SCALE_{MARK})
    x_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    x_local = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    asc.data_copy(x_local, x_gm, n)
    z_gm = asc.GlobalTensor()
    z_gm.set_global_buffer(z, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(z_gm, x_local, n)
""")
    MARKERS["constant"] = f"SCALE_{MARK}"
    return collect(load_module(path).canary_kernel)


def _tensor() -> np.ndarray:
    data = (MARKERS["tensor"] * 16).encode()[:256]
    return np.frombuffer(data, np.float32).copy()


def test_a_frontend_zygote_holds_nothing_of_another_tenant(canary):
    frontend = JailedFrontend(LIMITS)
    try:
        frontend.start()
        frontend.deadline = Deadline(120)
        result = frontend.for_tenant("canary")(canary, SPECS, {})
        assert MARKERS["string"] in result.source
        wanted = {"find": _halves(MARKERS[k] for k in ("comment", "file", "string", "constant"))}
        assert frontend.for_tenant("attacker").probe(wanted)["found"] == "nowhere"
        assert "memory" in frontend.for_tenant("canary").probe(wanted)["found"]  # the search finds what is there
    finally:
        frontend.close()


def test_a_run_jail_holds_nothing_of_another_tenant(canary):
    target = pipeline.get_target("cpu")
    result = target.frontend(canary, SPECS, {})
    artifact = target.toolchain.build(result.source, result.kernel_name, result.kernel_type)
    runners = JailedRunners(LIMITS)
    try:
        runners.deadline = Deadline(60)
        x, z = _tensor(), np.zeros(64, np.float32)
        ran = runners.for_tenant("canary").run(artifact, 1, result.params, result.kernel_args,
                                               [x, np.zeros_like(x), z, 64])
        assert MARKERS["string"] in ran.log and z.tobytes() == x.tobytes()
        wanted = {"find": _halves([MARKERS["tensor"], MARKERS["string"]])}
        assert runners.for_tenant("attacker").probe(wanted)["found"] == "nowhere"
        assert "memory" in runners.for_tenant("canary").probe(wanted)["found"]
    finally:
        runners.close()
