"""A smaller run of bench/load.py: concurrent clients, every job terminal, verified, none lost or doubled."""
import pytest

from conftest import ROOT, load_module

pytestmark = pytest.mark.service


def test_concurrent_clients_lose_and_duplicate_nothing(client):
    load = load_module(ROOT / "bench" / "load.py", "bench_load")
    report = load.run_load(client.url, clients=20, launches=100)
    assert report["errors"] == []
    assert report["completed"] == 100 and report["distinct_jobs"] == 100
