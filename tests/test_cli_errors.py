"""The CLI's errors as a user meets them: one line naming what is wrong and where, never a
traceback (a kernel file that does not import, a mistake in the tenants, a reader of stdout gone,
a missing or wrong token, a busy port for `ascrun up`)."""
import hashlib
import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ascrun.cli.main import main
from ascrun_cli import ascrun
from conftest import Service, _free_port

pytestmark = pytest.mark.kernel

NOWHERE = "http://127.0.0.1:9"  # the kernel file fails before any request
TOKEN = "cli-errors-token"
CLEAN_ENV = {k: v for k, v in os.environ.items()  # no token, no tenants, no service named
             if k not in ("ASCRUN_TOKEN", "ASCRUN_URL", "ASCRUN_TENANTS", "ASCRUN_TENANTS_FILE")}


@pytest.mark.parametrize("command, source, error", [
    ("launch", "import asc\n\n@asc.jit\ndef k(x: asc.GlobalAddress):\n    y = = 1\n",
     "kernel.py:5:9: SyntaxError: invalid syntax"),
    ("bench", "import asc\nimport numpy\nscale = numpy.nosuch\n",
     "kernel.py:3: AttributeError: module 'numpy' has no attribute 'nosuch'"),
])
def test_a_kernel_file_that_does_not_import_is_one_line(tmp_path, command, source, error):
    (tmp_path / "kernel.py").write_text(source)
    out = ascrun(command, "kernel.py::k", "--cores", 1, "--url", NOWHERE, cwd=tmp_path)
    assert (out.returncode, out.stdout, out.stderr) == (2, "", f"ascrun: usage: {error}\n")


@pytest.mark.parametrize("command, tenants, error", [
    ("server", '{"tenants": [{"name": "a", "token_sha256": "ab"}\n',
     "not JSON: Expecting ',' delimiter at line 2 column 1"),
    ("up", '{"tenants": [{"name": "a"}]}', 'tenant #1 needs a "name" and a "token_sha256"'),
])
def test_a_mistake_in_the_tenants_file_stops_the_service_in_one_line(tmp_path, command, tenants, error):
    (tmp_path / "tenants.json").write_text(tenants)
    env = dict(CLEAN_ENV, ASCRUN_TENANTS_FILE="tenants.json", REDIS_URL="redis://127.0.0.1:9/0")
    out = ascrun(command, "--port", 0, cwd=tmp_path, env=env)
    assert (out.returncode, out.stdout, out.stderr) == (1, "", f"ASCRUN_TENANTS_FILE tenants.json: {error}\n")


@pytest.mark.unit
@pytest.mark.parametrize("tenants, error", [
    ('{"limits": {"max_active_jobs": "many"}}', 'limits must be integers: {"max_active_jobs": "many"}'),
    ('{"limits": {"requests_per_second": 0}}', "rates must be at least 1: requests_per_second"),
    ('{"tenants": {"name": "a"}}', 'expected {"limits": {...}, "tenants": [{"name": ..., "token_sha256": ...}, ...]}'),
    ('{"tenants": [{"name": "a", "token_sha256": "ab"}]}', "tenant 'a': token_sha256 must be 64 hex digits"),
    (None, "cannot read it: No such file or directory"),
])
def test_each_mistake_in_the_tenants_file_is_said_in_one_line(tmp_path, tenants, error):
    from ascrun.compiler.settings import ServiceSettings
    from ascrun.server.tenants import Tenants
    path = tmp_path / "tenants.json"
    if tenants is not None:
        path.write_text(tenants)
    with pytest.raises(SystemExit) as stopped:
        Tenants.from_settings(ServiceSettings(tenants_file=str(path)))
    assert str(stopped.value) == f"ASCRUN_TENANTS_FILE {path}: {error}"


@pytest.mark.service
def test_a_reader_of_stdout_gone_ends_the_command_quietly(service):
    """`ascrun jobs | head -1`: here the reader is gone before the first byte, so the write meets it."""
    cli = subprocess.Popen([sys.executable, "-m", "ascrun.cli", "jobs", "--url", service.url, "--limit", "500"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=CLEAN_ENV, text=True)
    cli.stdout.close()
    stderr = cli.stderr.read()
    assert (cli.wait(60), stderr) == (141, "")


@pytest.fixture(scope="module")
def tenant_server(redis_url):
    """An API server with one tenant (no worker is needed to refuse a token)."""
    config = {"tenants": [{"name": "cli-errors", "token_sha256": hashlib.sha256(TOKEN.encode()).hexdigest()}]}
    svc = Service(redis_url, {"ASCRUN_TENANTS": json.dumps(config)})
    svc.wait_for_workers(None)
    yield svc
    svc.stop()


@pytest.mark.service
@pytest.mark.parametrize("token, error", [
    (None, "no token: this service needs a bearer token (Authorization: Bearer <token>; ascrun takes it from "
           "--token or $ASCRUN_TOKEN)"),
    ("not-the-token", "token not recognised: no tenant of this service has it (check --token or $ASCRUN_TOKEN, or "
                      "ask the operator for one)"),
])
def test_a_missing_and_a_wrong_token_are_told_apart(tenant_server, monkeypatch, capsys, token, error):
    """`ascrun jobs` as the command runs it (main), in this process: ASCRUN_TOKEN gives the token."""
    monkeypatch.delenv("ASCRUN_TOKEN", raising=False)
    if token:
        monkeypatch.setenv("ASCRUN_TOKEN", token)
    assert main(["jobs", "--url", tenant_server.url, "--retries", "0"]) == 2
    assert capsys.readouterr() == ("", f"ascrun: unauthorized: {error}\n")


class Health(BaseHTTPRequestHandler):
    """What an ascrun server already on the port answers: healthy, with workers."""

    def do_GET(self):
        body = json.dumps({"redis": "ok", "workers": {"cpu": 8}, "open_mode": True}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.mark.service
def test_up_on_a_busy_port_never_says_it_is_up(tmp_path):
    """Another server answering health on the port is not ours: `ascrun up` stops before starting anything."""
    port = _free_port()
    busy = ThreadingHTTPServer(("127.0.0.1", port), Health)
    threading.Thread(target=busy.serve_forever, daemon=True).start()
    try:
        out = ascrun("up", "--port", port, "--workers", 1, cwd=tmp_path, env=CLEAN_ENV)
    finally:
        busy.shutdown()
        busy.server_close()
    assert (out.returncode, out.stdout) == (1, "")
    assert out.stderr == f"ascrun: 127.0.0.1:{port} is in use (another `ascrun up`?); --port 0 picks a free port\n"
