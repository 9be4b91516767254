"""The service's settings from the environment: the pool's liveness (what the tests shorten) keeps
production's values unless set, and a bad value stops the process saying which variable."""
import pytest

from ascrun.server.settings import Settings

pytestmark = pytest.mark.unit

LIVENESS = {"ASCRUN_JOB_HEARTBEAT": "job_heartbeat_s", "ASCRUN_JOB_HEARTBEAT_TTL": "job_heartbeat_ttl_s",
            "ASCRUN_UNQUEUED_GRACE": "unqueued_grace_s", "ASCRUN_WORKER_BEAT": "worker_beat_s",
            "ASCRUN_WORKER_TTL": "worker_ttl_s", "ASCRUN_QUEUE_REFRESH": "queue_refresh_s"}


@pytest.fixture
def environ(monkeypatch):
    for name in LIVENESS:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_liveness_defaults_are_production_s(environ):
    settings = Settings.from_env()
    assert {field: getattr(settings, field) for field in LIVENESS.values()} == {
        "job_heartbeat_s": 1.0, "job_heartbeat_ttl_s": 5, "unqueued_grace_s": 5.0, "worker_beat_s": 1.0,
        "worker_ttl_s": 5.0, "queue_refresh_s": 1}


def test_liveness_from_the_environment(environ):
    values = {"ASCRUN_JOB_HEARTBEAT": "0.2", "ASCRUN_JOB_HEARTBEAT_TTL": "2", "ASCRUN_UNQUEUED_GRACE": "1.5",
              "ASCRUN_WORKER_BEAT": "0.25", "ASCRUN_WORKER_TTL": "1", "ASCRUN_QUEUE_REFRESH": "3"}
    for name, value in values.items():
        environ.setenv(name, value)
    settings = Settings.from_env()
    assert {name: getattr(settings, field) for name, field in LIVENESS.items()} == {
        "ASCRUN_JOB_HEARTBEAT": 0.2, "ASCRUN_JOB_HEARTBEAT_TTL": 2, "ASCRUN_UNQUEUED_GRACE": 1.5,
        "ASCRUN_WORKER_BEAT": 0.25, "ASCRUN_WORKER_TTL": 1.0, "ASCRUN_QUEUE_REFRESH": 3}


@pytest.mark.parametrize("name, value, message", [
    ("ASCRUN_WORKER_TTL", "soon", "ASCRUN_WORKER_TTL must be a number, got 'soon'"),
    ("ASCRUN_WORKER_TTL", "0", "ASCRUN_WORKER_TTL must be a positive number of seconds, got '0'"),
    ("ASCRUN_JOB_HEARTBEAT", "nan", "ASCRUN_JOB_HEARTBEAT must be a positive number of seconds, got 'nan'"),
    ("ASCRUN_JOB_HEARTBEAT_TTL", "1.5", "ASCRUN_JOB_HEARTBEAT_TTL must be an integer, got '1.5'"),
])
def test_a_bad_value_names_its_variable(environ, name, value, message):
    environ.setenv(name, value)
    with pytest.raises(SystemExit) as stopped:
        Settings.from_env()
    assert str(stopped.value) == message
