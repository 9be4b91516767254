"""Settings from the environment, in one place (shared/compiler/settings.py): the pool's liveness
(what the tests shorten) keeps production's values unless set, a bad value stops the process
saying which variable, no other module reads the environment by name, and README lists every name."""
import ast
from pathlib import Path

import pytest

from ascrun.compiler.settings import ENVIRONMENT, ClientSettings, HostSettings, ServiceSettings
from conftest import ROOT

pytestmark = pytest.mark.unit

LIVENESS = {"ASCRUN_JOB_HEARTBEAT": "job_heartbeat_s", "ASCRUN_JOB_HEARTBEAT_TTL": "job_heartbeat_ttl_s",
            "ASCRUN_UNQUEUED_GRACE": "unqueued_grace_s", "ASCRUN_WORKER_BEAT": "worker_beat_s",
            "ASCRUN_WORKER_TTL": "worker_ttl_s", "ASCRUN_QUEUE_REFRESH": "queue_refresh_s"}
PRODUCT = [ROOT / "client", ROOT / "server", ROOT / "shared"]


def test_liveness_defaults_are_production_s():
    settings = ServiceSettings.from_env({})
    assert {field: getattr(settings, field) for field in LIVENESS.values()} == {
        "job_heartbeat_s": 1.0, "job_heartbeat_ttl_s": 5, "unqueued_grace_s": 5.0, "worker_beat_s": 1.0,
        "worker_ttl_s": 5.0, "queue_refresh_s": 1}


def test_liveness_from_the_environment():
    values = {"ASCRUN_JOB_HEARTBEAT": "0.2", "ASCRUN_JOB_HEARTBEAT_TTL": "2", "ASCRUN_UNQUEUED_GRACE": "1.5",
              "ASCRUN_WORKER_BEAT": "0.25", "ASCRUN_WORKER_TTL": "1", "ASCRUN_QUEUE_REFRESH": "3"}
    settings = ServiceSettings.from_env(values)
    assert {name: getattr(settings, field) for name, field in LIVENESS.items()} == {
        "ASCRUN_JOB_HEARTBEAT": 0.2, "ASCRUN_JOB_HEARTBEAT_TTL": 2, "ASCRUN_UNQUEUED_GRACE": 1.5,
        "ASCRUN_WORKER_BEAT": 0.25, "ASCRUN_WORKER_TTL": 1.0, "ASCRUN_QUEUE_REFRESH": 3}


@pytest.mark.parametrize("name, value, message", [
    ("ASCRUN_WORKER_TTL", "soon", "ASCRUN_WORKER_TTL must be a number, got 'soon'"),
    ("ASCRUN_WORKER_TTL", "0", "ASCRUN_WORKER_TTL must be a positive number of seconds, got '0'"),
    ("ASCRUN_JOB_HEARTBEAT", "nan", "ASCRUN_JOB_HEARTBEAT must be a positive number of seconds, got 'nan'"),
    ("ASCRUN_JOB_HEARTBEAT_TTL", "1.5", "ASCRUN_JOB_HEARTBEAT_TTL must be an integer, got '1.5'"),
])
def test_a_bad_value_names_its_variable(name, value, message):
    with pytest.raises(SystemExit) as stopped:
        ServiceSettings.from_env({name: value})
    assert str(stopped.value) == message


def test_the_service_the_client_and_the_host_from_the_environment(tmp_path):
    url_file = tmp_path / "redis_url"
    url_file.write_text("redis://:secret@redis:6379/0\n")
    service = ServiceSettings.from_env({"REDIS_URL": "redis://elsewhere", "REDIS_URL_FILE": str(url_file),
                                        "ASCRUN_TENANTS": '{"tenants": []}'})
    assert (service.redis_url, service.tenants_source) == ("redis://:secret@redis:6379/0", "ASCRUN_TENANTS")
    assert ServiceSettings.from_env({"ASCRUN_TENANTS_FILE": "/etc/t.json"}).tenants_source == "/etc/t.json"
    client = ClientSettings.from_env({"ASCRUN_URL": "http://pool:8000/", "ASCRUN_TOKEN": "t",
                                      "XDG_CACHE_HOME": str(tmp_path)})
    assert (client.url, client.token, client.cache_dir) == ("http://pool:8000", "t", tmp_path / "ascrun")
    assert ClientSettings.from_env({"ASCRUN_CACHE_DIR": "/c"}).cache_dir == Path("/c")
    assert ClientSettings.from_env({}).url == "http://127.0.0.1:8000"
    assert HostSettings.from_env({"CXX": "clang++"}) == HostSettings(cxx="clang++")


def _environment_reads(path: Path):
    """(line, name) of each read of the environment by a literal name: os.environ.get("X"),
    os.environ["X"], os.getenv("X")."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args and \
                isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str) and (
                (node.func.attr == "get" and ast.unparse(node.func.value) == "os.environ") or
                ast.unparse(node.func) == "os.getenv"):
            yield node.lineno, node.args[0].value
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and \
                ast.unparse(node.value) == "os.environ" and isinstance(node.slice, ast.Constant):
            yield node.lineno, node.slice.value


def test_no_module_but_settings_reads_the_environment_by_name():
    settings = ROOT / "shared" / "compiler" / "settings.py"
    found = [f"{path.relative_to(ROOT)}:{line}: {name}" for folder in PRODUCT for path in folder.rglob("*.py")
             if path != settings for line, name in _environment_reads(path)]
    assert found == []


def test_every_name_settings_reads_is_listed_and_in_the_readme():
    source = (ROOT / "shared" / "compiler" / "settings.py").read_text()
    read = {node.args[1].value for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name) and node.func.id in ("_text", "_int", "_seconds")
            and len(node.args) > 1 and isinstance(node.args[1], ast.Constant)}
    assert read == set(ENVIRONMENT)
    readme = (ROOT / "README.md").read_text()
    assert [name for name in ENVIRONMENT if f"| `{name}` |" not in readme] == []
