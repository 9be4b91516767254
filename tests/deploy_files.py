"""deploy/ as data: the images' entrypoints (from the Dockerfile), the compose services and the
Kubernetes manifests, for test_deploy.py and test_deploy_netns.py."""
import json
import re
import shutil
import subprocess
from pathlib import Path

import yaml

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"
DOCKERFILE = DEPLOY / "docker" / "Dockerfile"
COMPOSE = DEPLOY / "docker" / "compose.yaml"
K8S_BASE = DEPLOY / "k8s" / "base"


def stages() -> dict:
    """Build stage name -> its instructions, each (INSTRUCTION, arguments) with continuations joined."""
    text = re.sub(r"\\\n\s*", " ", DOCKERFILE.read_text())
    found, current = {}, None
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        instruction, _, rest = line.partition(" ")
        if instruction.upper() == "FROM":
            current = rest.split(" AS ")[-1].strip() if " AS " in rest else rest
            found[current] = []
        if current is not None:
            found[current].append((instruction.upper(), rest.strip()))
    return found


def entrypoint(stage: str) -> list:
    """The image's command: its ENTRYPOINT then its CMD (exec form), as `docker run` starts it."""
    said = dict(stages()[stage])
    return json.loads(said["ENTRYPOINT"]) + json.loads(said.get("CMD", "[]"))


def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def service_environment(name: str) -> dict:
    """A compose service's environment, its anchors merged in."""
    return dict(compose()["services"][name].get("environment") or {})


def k8s_documents() -> list:
    """(file name, document) of every manifest in the base."""
    return [(path.name, doc) for path in sorted(K8S_BASE.glob("*.yaml")) if path.name != "kustomization.yaml"
            for doc in yaml.safe_load_all(path.read_text()) if doc]


ALERT_RULES = DEPLOY / "monitoring" / "prometheus" / "alerts.yaml"
GRAFANA_DASHBOARD = DEPLOY / "monitoring" / "grafana" / "ascrun.json"


def alert_rules() -> dict:
    return yaml.safe_load(ALERT_RULES.read_text())


def grafana_dashboard() -> dict:
    return json.loads(GRAFANA_DASHBOARD.read_text())

SECRET_FILES = ("redis-password", "redis-url", "cache-redis-url", "tenants.json")  # the base's secretGenerator's


def kustomize(where: str, workdir: Path) -> list:
    """Every document `kubectl kustomize` builds of deploy/k8s/`where` in `workdir`/deploy (a copy of
    deploy/ unless there is one; each of the base's secret files not there written), or
    AssertionError with kubectl's words."""
    if not (workdir / "deploy").exists():
        shutil.copytree(DEPLOY, workdir / "deploy")
    secrets = workdir / "deploy" / "k8s" / "base" / "secrets"
    secrets.mkdir(exist_ok=True)
    for name in SECRET_FILES:
        if not (secrets / name).exists():
            (secrets / name).write_text("x\n")
    built = subprocess.run(["kubectl", "kustomize", str(workdir / "deploy" / "k8s" / where)], capture_output=True,
                           text=True, timeout=60)
    assert built.returncode == 0, built.stderr
    return list(yaml.safe_load_all(built.stdout))
