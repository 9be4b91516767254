"""A smaller run of bench/faults.py: 10 clients, SIGKILL of a worker, of the API server (three times:
a kill between a job's creation and its enqueue is a narrow window) and of Redis, each restarted."""
import pytest

from conftest import LIVENESS_ENV, ROOT, _free_port, load_module

pytestmark = [pytest.mark.service, pytest.mark.slow]

faults = load_module(ROOT / "bench" / "faults.py", "bench_faults")


def test_every_accepted_job_ends_once_through_sigkills_of_worker_server_and_redis(monkeypatch):
    for name, value in LIVENESS_ENV.items():  # the stack bench/faults.py starts runs with the tests' liveness
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(faults, "_free_port", _free_port)  # and its ports from this xdist worker's block
    counts = faults.run_faults(clients=10, phase_s=3, workers=2, bound_s=30,
                               faults=("worker", "server", "server", "server", "redis"), log=lambda _: None)
    summary = {k: v for k, v in counts.items() if k != "workdir_logs"}
    problems = faults.broken(counts)
    assert not problems, "\n".join(problems + [str(summary)])
    assert counts["verified"] > 0, summary
    assert counts["finished"] + sum(counts["failed"].values()) == counts["accepted"], summary
    assert counts["verified"] == counts["finished"], summary
