"""`ascrun token NAME`: a new token, and the tenants file entry that lets it in."""
import json

import pytest

from ascrun.cli.main import main

pytestmark = pytest.mark.unit


def _token(capsys, name):
    assert main(["token", name]) == 0
    token_line, entry_line = capsys.readouterr().out.splitlines()
    assert token_line.startswith("token: ") and entry_line.startswith("tenants file entry: ")
    return token_line[len("token: "):], json.loads(entry_line[len("tenants file entry: "):])


def test_the_printed_entry_lets_the_printed_token_in_and_no_other(capsys):
    from ascrun.server.tenants import Tenants
    token, entry = _token(capsys, "ci")
    other, _ = _token(capsys, "ci")
    assert entry["name"] == "ci" and token != other and len(token) >= 40
    tenants = Tenants.from_json({"tenants": [entry]})
    assert tenants.authenticate(f"Bearer {token}").name == "ci"
    assert tenants.authenticate(f"Bearer {other}") is None
