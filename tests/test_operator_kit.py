"""deploy/'s operator kit: the Prometheus alert rules and the Grafana dashboard. Every PromQL
expression in them parses (promql-parser) and names only series a real scrape of the service
shows (or Prometheus's own `up`), with labels their samples carry; the rules file has Prometheus's rule-file structure; the
dashboard shows every metric family the service exports."""
import base64
import json
import re
import shutil
import subprocess

import httpx
import numpy as np
import promql_parser
import pytest
from prometheus_client.parser import text_string_to_metric_families

import ascrun
import deploy_files as files
import ops

PROMETHEUS_OWN = {"up"}  # the series Prometheus adds for each scrape target
DURATION = re.compile(r"^(\d+(ms|s|m|h|d|w|y))+$")
RULE_KEYS = {"alert": {"alert", "expr", "for", "keep_firing_for", "labels", "annotations"},
             "record": {"record", "expr", "labels"}}
GROUP_KEYS = {"name", "interval", "limit", "query_offset", "rules"}
GRAFANA_INTERVALS = re.compile(r"\$__(rate_interval|interval|range)\b")  # Grafana's, in a range selector
LABEL_VALUES = re.compile(r"^label_values\((\w+),\s*(\w+)\)$")  # a Grafana template variable's query


@pytest.fixture(scope="module")
def exported(service) -> tuple:
    """({series name: the label names its samples show}, {family name}) of a scrape of the real
    service after a job (so that the jobs' series have samples): open mode's one tenant is the
    operator, who sees them all."""
    x = np.ones(256, np.float32)
    with ascrun.Client(service.url) as client:
        client.launch(ops.binary_kernel, 1, x, x, np.zeros_like(x), 256, "add")
    response = httpx.get(f"{service.url}/metrics", timeout=10)
    response.raise_for_status()
    suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_count", "_sum"), "gauge": ("",)}
    series, families = {}, set()
    for family in text_string_to_metric_families(response.text):
        if not family.name.endswith("_created"):  # prometheus-client's creation times of its own counters
            families.add(family.name)
        for end in suffixes.get(family.type, ("",)):
            series.setdefault(family.name + end, set())
        for sample in family.samples:
            series.setdefault(sample.name, set()).update(sample.labels)
    return series, families


def selected(expression: str) -> dict:
    """{metric name: the label names its matchers name} of an expression's vector selectors
    (parsed, not pattern-matched)."""
    tree = promql_parser.parse(GRAFANA_INTERVALS.sub("5m", expression))
    names = {}

    def visit(node):
        if isinstance(node, promql_parser.VectorSelector):
            names.setdefault(node.name, set()).update(m.name for m in node.matchers.matchers)

    promql_parser.walk(tree, visit)
    assert None not in names, f"a selector without a metric name: {expression}"
    return names


def assert_exported(named: dict, series: dict) -> None:
    """Each name is a series we export, and each label its matchers name is one its samples carry
    (where the scrape had samples of it)."""
    assert set(named) <= set(series), set(named) - set(series)
    for name, labels in named.items():
        assert not series[name] or labels <= series[name], (name, labels - series[name])


def alert_rules() -> list:
    return [rule for group in files.alert_rules()["groups"] for rule in group["rules"]]


def dashboard_expressions() -> list:
    board = files.grafana_dashboard()
    return [target["expr"] for panel in board["panels"] for target in panel.get("targets", [])]


@pytest.mark.unit
def test_the_rules_file_has_prometheus_rule_file_structure():
    spec = files.alert_rules()
    assert set(spec) == {"groups"}
    names = [group["name"] for group in spec["groups"]]
    assert len(names) == len(set(names))
    for group in spec["groups"]:
        assert set(group) <= GROUP_KEYS and group["rules"], group["name"]
        for rule in group["rules"]:
            [kind] = {"alert", "record"} & set(rule)
            assert set(rule) <= RULE_KEYS[kind] and isinstance(rule["expr"], str), rule
            assert all(DURATION.match(rule[key]) for key in ("for", "keep_firing_for") if key in rule), rule
            assert all(isinstance(v, str) for v in {**rule.get("labels", {}), **rule.get("annotations", {})}.values())
            if kind == "alert":
                assert re.fullmatch(r"[A-Za-z_]\w*", rule["alert"]) and rule["labels"]["severity"] in (
                    "warning", "critical") and rule["annotations"]["summary"], rule


@pytest.mark.service
def test_there_is_an_alert_for_each_failure_an_operator_watches(exported):
    series, _ = exported
    watched = {}
    for rule in alert_rules():
        for name, labels in selected(rule["expr"]).items():
            watched.setdefault(name, set()).update(labels)
    assert {"up", "ascrun_workers_live", "ascrun_queue_oldest_age_seconds", "ascrun_http_requests_total",
            "ascrun_jobs_total", "ascrun_redis_used_memory_bytes", "ascrun_jails_failed_total"} <= set(watched)
    assert_exported({name: labels for name, labels in watched.items() if name not in PROMETHEUS_OWN}, series)


@pytest.mark.service
def test_every_dashboard_expression_names_series_we_export(exported):
    series, families = exported
    board = files.grafana_dashboard()
    named = {}
    for expression in dashboard_expressions():
        for name, labels in selected(expression).items():
            named.setdefault(name, set()).update(labels)
    for variable in board["templating"]["list"]:
        if variable["type"] == "query":
            name, label = LABEL_VALUES.match(variable["query"]["query"]).groups()
            named.setdefault(name, set()).add(label)
    assert_exported(named, series)
    shown = {family for family in families for name in named if name.startswith(family)}
    assert shown == families, families - shown  # every family the service exports is on the dashboard


@pytest.mark.unit
def test_the_dashboard_panels_are_placed_and_use_the_datasource_variable():
    board = files.grafana_dashboard()
    ids = [panel["id"] for panel in board["panels"]]
    assert len(ids) == len(set(ids)) and board["uid"] and board["title"]
    for panel in board["panels"]:
        assert {"h", "w", "x", "y"} <= set(panel["gridPos"]), panel["title"]
        if panel["type"] != "row":
            assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, panel["title"]
            assert [t["refId"] for t in panel["targets"]] == [chr(ord("A") + i) for i in range(len(panel["targets"]))]


@pytest.mark.unit
@pytest.mark.parametrize("expression", ["ascrun_jobs_total{", "sum(rate(ascrun_jobs_total[5m])"])
def test_a_broken_expression_does_not_parse(expression):
    with pytest.raises(ValueError):
        selected(expression)


@pytest.mark.unit
@pytest.mark.skipif(shutil.which("kubectl") is None, reason="needs kubectl (kubectl kustomize)")
@pytest.mark.parametrize("where", ["base", "overlays/single-node"])
def test_kubernetes_gets_the_kit_as_config_maps(tmp_path, where):
    maps = {doc["metadata"]["name"]: doc for doc in files.kustomize(where, tmp_path) if doc["kind"] == "ConfigMap"}
    assert maps["ascrun-prometheus-rules"]["data"] == {"alerts.yaml": files.ALERT_RULES.read_text()}
    dashboard = maps["ascrun-grafana-dashboard"]
    assert dashboard["data"] == {"ascrun.json": files.GRAFANA_DASHBOARD.read_text()}
    assert dashboard["metadata"]["labels"]["grafana_dashboard"] == "1"  # what Grafana's dashboard sidecar looks for
    assert dashboard["metadata"]["namespace"] == "ascrun"


@pytest.mark.unit
@pytest.mark.skipif(shutil.which("kubectl") is None or shutil.which("openssl") is None, reason="needs kubectl, openssl")
def test_the_readmes_secret_commands_make_the_bases_secret(tmp_path):
    """The README's commands for the k8s secret files, run as written from a copy's root: the
    rendered Secret holds a password and the two Redis URLs made with it."""
    readme = (files.DEPLOY.parent / "README.md").read_text()
    [commands] = re.findall(r"```sh\n(mkdir -p deploy/k8s/base/secrets.*?)```", readme, re.S)
    shutil.copytree(files.DEPLOY, tmp_path / "deploy")
    done = subprocess.run(["bash", "-e", "-c", commands], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (tmp_path / "deploy" / "k8s" / "base" / "secrets").iterdir()) == sorted(
        files.SECRET_FILES)
    [secret] = [doc for doc in files.kustomize("base", tmp_path) if doc["kind"] == "Secret"]
    data = {key: base64.b64decode(value).decode() for key, value in secret["data"].items()}
    password = data["redis-password"].strip()
    assert len(password) == 48 and secret["metadata"]["name"] == "ascrun-secrets"
    assert data["redis-url"] == f"redis://:{password}@redis:6379/0"
    assert data["cache-redis-url"] == f"redis://:{password}@redis-cache:6379/0"
    assert json.loads(data["tenants.json"]) == {"tenants": []}
