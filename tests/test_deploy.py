"""deploy/, checked as far as a machine without a container engine allows: the Dockerfile passes
hadolint, the compose file the Compose spec, every manifest the Kubernetes schemas of
K8S_VERSION; and the invariants the pool relies on hold in all of them."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import deploy_files as files

pytestmark = pytest.mark.unit

K8S_VERSION = "1.31.0"
BIN = Path(sys.executable).parent
FINAL_STAGES = ("server", "worker-cpu", "worker-cann")


def _run(*argv) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=300)


@pytest.mark.kernel
def test_the_dockerfile_passes_hadolint():
    done = _run(BIN / "hadolint", "--failure-threshold", "info", files.DOCKERFILE)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.kernel
def test_the_compose_file_follows_the_compose_spec():
    done = _run(BIN / "check-jsonschema", "--builtin-schema", "vendor.compose-spec", files.COMPOSE)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.kernel
def test_every_manifest_follows_the_kubernetes_schemas():
    manifests = [p for p in sorted(files.K8S_BASE.glob("*.yaml")) if p.name != "kustomization.yaml"]
    done = _run(BIN / "kubernetes-validate", "--strict", "--kubernetes-version", K8S_VERSION, *manifests)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("INFO") >= len(manifests), done.stdout  # each file was validated, none skipped


def test_images_are_non_root_healthy_pinned_and_built_from_the_wheel():
    stages = files.stages()
    assert set(FINAL_STAGES) <= set(stages)
    for name in FINAL_STAGES:
        said = stages[name]
        kinds = [i for i, _ in said]
        assert ("USER", "10001") in said, name
        assert "HEALTHCHECK" in kinds and "ENTRYPOINT" in kinds, name
        assert any(i == "COPY" and a.startswith("--from=wheel /wheels") for i, a in said), name
    server = " ".join(a for _, a in stages["server"])
    assert "apt-get" not in server and "g++" not in server and "build" not in server  # no build tools
    for line in files.DOCKERFILE.read_text().splitlines():  # the base images: a tag each, never latest
        if line.startswith(("ARG PYTHON_IMAGE=", "ARG CANN_IMAGE=")):
            reference = line.split("=", 1)[1]
            assert ":" in reference and not reference.endswith(":latest"), reference


def test_compose_runs_redis_with_aof_and_secrets_from_files():
    spec = files.compose()
    redis = " ".join(spec["services"]["redis"]["command"])
    assert "--appendonly yes" in redis and "--maxmemory-policy noeviction" in redis
    assert all("file" in secret for secret in spec["secrets"].values())
    assert spec["services"]["worker-cpu"]["deploy"]["replicas"] == 2
    assert spec["services"]["worker-cann"]["profiles"] == ["cann"]
    for name, service in spec["services"].items():
        environment = service.get("environment") or {}
        assert not any(k in environment for k in ("REDIS_URL", "ASCRUN_TENANTS")), name  # the secret files say them
        assert service.get("healthcheck") or name != "redis"


def _pods(documents):
    for name, doc in documents:
        if doc["kind"] in ("Deployment", "StatefulSet"):
            yield name, doc, doc["spec"]["template"]["spec"]


def test_every_pod_is_non_root_limited_probed_and_pinned():
    pods = list(_pods(files.k8s_documents()))
    assert len(pods) >= 6
    for name, doc, pod in pods:
        assert pod["securityContext"]["runAsNonRoot"] is True, doc["metadata"]["name"]
        for container in pod["containers"]:
            where = f"{doc['metadata']['name']}/{container['name']}"
            for bound in ("requests", "limits"):
                assert {"cpu", "memory"} <= set(container["resources"][bound]), where
            assert "readinessProbe" in container and "livenessProbe" in container, where
            image = container["image"]
            assert ":" in image and not image.endswith(":latest"), where
            assert container["securityContext"]["allowPrivilegeEscalation"] is False, where


def test_workers_reach_only_redis_and_nothing_reaches_them():
    policies = {doc["metadata"]["name"]: doc["spec"] for _, doc in files.k8s_documents()
                if doc["kind"] == "NetworkPolicy"}
    assert policies["default-deny"] == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}
    workers = policies["workers"]
    assert workers["podSelector"] == {"matchLabels": {"app.kubernetes.io/name": "ascrun-worker"}}
    assert "ingress" not in workers  # with default-deny: no ingress at all
    assert [rule["to"] for rule in workers["egress"]] == [[{"podSelector": {"matchLabels":
                                                                            {"app.kubernetes.io/name": "redis"}}}]]
    assert {"ascrun-server", "ascrun-worker"} == {
        s["podSelector"]["matchLabels"]["app.kubernetes.io/name"] for s in policies["redis"]["ingress"][0]["from"]}
    for _, doc, pod in _pods(files.k8s_documents()):  # every worker pod is one the policy selects
        labels = doc["spec"]["template"]["metadata"]["labels"]
        if "worker" in doc["metadata"]["name"]:
            assert labels["app.kubernetes.io/name"] == "ascrun-worker"


def test_tenants_and_redis_come_from_the_secret_and_cann_pools_are_one_deployment_per_soc():
    kustomization = yaml.safe_load((files.K8S_BASE / "kustomization.yaml").read_text())
    [secret] = kustomization["secretGenerator"]
    assert secret["name"] == "ascrun-secrets" and any(f.startswith("tenants.json=") for f in secret["files"])
    documents = files.k8s_documents()
    for _, doc, pod in _pods(documents):
        for container in pod["containers"]:
            assert not any(e["name"] in ("REDIS_URL", "ASCRUN_TENANTS") for e in container.get("env", []))
    npu = [(doc, pod) for _, doc, pod in _pods(documents)
           if doc["spec"]["template"]["metadata"]["labels"].get("ascrun.dev/stage") == "run"]
    socs = [pod["nodeSelector"]["ascrun.dev/soc"] for _, pod in npu]
    assert len(socs) == len(set(socs)) >= 2  # one Deployment per SOC
    for doc, pod in npu:
        [container] = pod["containers"]
        assert container["resources"]["limits"]["huawei.com/Ascend910"] == 1
        assert container["args"] == ["--only", "run"]
    kinds = {(doc["kind"], doc["metadata"]["name"]) for _, doc in documents}
    assert ("HorizontalPodAutoscaler", "ascrun-server") in kinds and ("StatefulSet", "redis") in kinds


@pytest.mark.parametrize("stage", FINAL_STAGES)
def test_each_image_command_is_one_the_cli_takes(stage):
    command = files.entrypoint(stage)
    if stage == "worker-cann":  # its entrypoint script picks the target, then runs `ascrun worker`
        assert command == ["ascrun-worker-cann"]
        script = (files.DEPLOY / "docker" / "worker-cann-entrypoint.sh").read_text()
        assert "exec ascrun worker --target npu" in script and "exec ascrun worker --target sim" in script
        return
    assert command[0] == "ascrun"
    from ascrun.cli.main import main
    with pytest.raises(SystemExit) as e:
        main([*command[1:], "--help"])
    assert e.value.code == 0


@pytest.mark.service
def test_the_worker_health_check_sees_this_hosts_live_workers(service, tmp_path):
    """What the images' HEALTHCHECK and the pods' probes run, with the Redis URL in a file."""
    from conftest import start_redis
    url_file = tmp_path / "redis_url"
    url_file.write_text(service.env["REDIS_URL"] + "\n")
    env = {k: v for k, v in service.env.items() if k != "REDIS_URL"}
    healthy = subprocess.run([sys.executable, "-m", "ascrun.cli", "worker", "--healthy"], capture_output=True,
                             text=True, timeout=60, env=dict(env, REDIS_URL_FILE=str(url_file)))
    assert healthy.returncode == 0 and healthy.stdout.startswith(f"live: ascrun-{os.uname().nodename}-"), healthy
    (tmp_path / "empty").mkdir()
    proc, empty = start_redis(tmp_path / "empty")
    try:
        url_file.write_text(empty)
        alone = subprocess.run([sys.executable, "-m", "ascrun.cli", "worker", "--healthy"], capture_output=True,
                               text=True, timeout=60, env=dict(env, REDIS_URL_FILE=str(url_file)))
    finally:
        proc.terminate()
        proc.wait(10)
    assert alone.returncode == 1 and alone.stdout == "unhealthy: no live worker of this host in the pool\n"
