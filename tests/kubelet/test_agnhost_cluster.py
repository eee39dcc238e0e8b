"""agnhost subcommands that use the cluster (issue #27): the API server through the Pod's in-cluster
configuration (TLS, its ServiceAccount's token), other Pods and Services by name; through real kubectl."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterator

import pytest

from tests.helpers import kubectl

from .conftest import eventually, new_namespace, pod_log, status_of, tls_dns_cluster

AGNHOST = "registry.k8s.io/e2e-test-images/agnhost:2.53"


@pytest.fixture(scope="module")
def kube() -> Iterator:
    yield from tls_dns_cluster()


def proxied(kube, ns: str, pod: str, path: str) -> str:
    """GET `path` of the Pod's port 8080 through the API server's pods/proxy ("" while it fails)."""
    done = kubectl(kube, "get", "--raw", f"/api/v1/namespaces/{ns}/pods/{pod}:8080/proxy{path}", check=False)
    return done.stdout if done.returncode == 0 else ""


@pytest.mark.slow
def test_agnhost_nettest_records_writes_and_contacts_its_services_endpoints(kube) -> None:
    """nettest finds its Service's endpoints through the API server (in-cluster config, the Pod's token), writes
    to each (itself here) and passes; another Pod's POST to /write is counted under its Source."""
    ns = new_namespace(kube)
    kubectl(kube, "-n", ns, "create", "rolebinding", "read", "--clusterrole=view", f"--serviceaccount={ns}:default")
    kubectl(kube, "-n", ns, "run", f"--image={AGNHOST}", "--port=8080", "--labels=app=nettest", "server", "--",
            "nettest", "--peers=1", "--service=peers", f"--namespace={ns}")
    kubectl(kube, "-n", ns, "expose", "pod", "server", "--name=peers", "--port=8080")
    ip = eventually(lambda: status_of(kube, ns, "server").get("podIP"), timeout=30)
    eventually(lambda: proxied(kube, ns, "server", "/status"), timeout=30)  # listening (Running comes before)
    kubectl(kube, "-n", ns, "run", "--image=busybox", "--restart=Never", "writer", "--", "wget", "-q", "-O-",
            '--post-data={"Source": "prestop"}', f"http://{ip}:8080/write")
    eventually(lambda: status_of(kube, ns, "writer").get("phase") == "Succeeded", timeout=30,
               explain=lambda: json.dumps(status_of(kube, ns, "writer")) + kubectl(kube, "-n", ns, "logs", "writer", check=False).stdout)
    assert kubectl(kube, "-n", ns, "logs", "writer").stdout == '{"Hostname":"server"}\n'
    assert eventually(lambda: proxied(kube, ns, "server", "/status") == "pass", timeout=30, explain=lambda: proxied(
        kube, ns, "server", "/read") + kubectl(kube, "-n", ns, "logs", "server").stdout)
    state = json.loads(proxied(kube, ns, "server", "/read"))
    assert state["Hostname"] == "server" and state["Received"] == {"prestop": 1, "server": 1} | {
        "server": state["Received"]["server"]}, state
    assert state["Sent"]["server"] >= 1 and state["Errors"] is None and state["StillContactingPeers"] is True
    assert proxied(kube, ns, "server", "/read").startswith('{\n\t"Hostname": "server",\n\t"Sent": {\n')


def test_agnhost_inclusterclient_polls_healthz_with_the_pods_token(kube) -> None:
    ns = new_namespace(kube)
    kubectl(kube, "-n", ns, "run", f"--image={AGNHOST}", "poller", "--", "inclusterclient", "--poll-interval=1")

    def polled() -> list[str]:
        return [line for line in pod_log(kube, ns, "poller").splitlines() if "authz_header=" in line]

    lines = eventually(lambda: len(found := polled()) >= 2 and found, timeout=30)
    token = kubectl(kube, "-n", ns, "exec", "poller", "--", "cat",
                    "/var/run/secrets/kubernetes.io/serviceaccount/token").stdout.strip()
    digest = base64.urlsafe_b64encode(hashlib.sha256(f"salt|Bearer {token}".encode()).digest()).decode().rstrip("=")
    assert lines[0].startswith("I") and lines[0].endswith(f"] authz_header={digest}"), lines
    logs = kubectl(kube, "-n", ns, "logs", "poller").stdout
    assert "status=failed" not in logs and "] started\n" in logs and "] calling /healthz\n" in logs, logs


@pytest.mark.slow
def test_agnhost_guestbook_stores_through_primary_and_reads_from_its_replica(kube) -> None:
    """The conformance suite's guestbook: a frontend Service proxying to agnhost-primary and agnhost-replica by
    name; a set through the frontend reaches the replica, which registered with the primary at start."""
    ns = new_namespace(kube)
    for name, port, args in (("agnhost-primary", "6379", ["--http-port", "6379"]),
                             ("agnhost-replica", "6379", ["--replicaof", "agnhost-primary", "--http-port", "6379"]),
                             ("frontend", "80", ["--backend-port", "6379"])):
        if name == "agnhost-replica":  # registering needs the primary's Service: created before, as in the suite
            eventually(lambda: status_of(kube, ns, "agnhost-primary").get("phase") == "Running", timeout=30)
        kubectl(kube, "-n", ns, "run", f"--image={AGNHOST}", f"--port={port}", f"--labels=app={name}", name, "--",
                "guestbook", *args)
        kubectl(kube, "-n", ns, "expose", "pod", name, f"--port={port}")

    def ask(cmd: str, value: str = "") -> str:
        path = f"/api/v1/namespaces/{ns}/services/frontend/proxy/guestbook?cmd={cmd}&key=messages&value={value}"
        done = kubectl(kube, "get", "--raw", path, check=False)
        return done.stdout if done.returncode == 0 else done.stderr

    assert eventually(lambda: ask("get") == '{"data":""}', timeout=60, explain=lambda: ask("get"))
    assert ask("set", "TestEntry") == '{"message":"Updated"}'
    assert ask("get") == '{"data":"TestEntry"}'
    logs = kubectl(kube, "-n", ns, "logs", "agnhost-replica").stdout
    assert "Registered to node: agnhost-primary" in logs and "GET /set?key=messages&value=TestEntry" in logs, logs


@pytest.mark.parametrize("image", [AGNHOST, "registry.k8s.io/e2e-test-images/jessie-dnsutils:1.7"])
@pytest.mark.slow
def test_dig_answers_from_the_cluster_dns_in_the_images_that_have_it(kube, image) -> None:
    """The suite's DNS probes: `dig +notcp|+tcp +noall +answer +search NAME A` and `dig +short`, answered by the
    cluster DNS (mini-kube's dig where the host has none)."""
    ns = new_namespace(kube)
    script = ("dig +notcp +noall +answer +search kubernetes.default A; echo udp=$?; "
              "dig +tcp +noall +answer +search kubernetes.default A; echo tcp=$?; "
              "dig +short kubernetes.default.svc.cluster.local; dig +short +search no-such-name; echo done")
    kubectl(kube, "-n", ns, "run", f"--image={image}", "--restart=Never", "--command", "prober", "--",
            "sh", "-c", script)
    eventually(lambda: status_of(kube, ns, "prober").get("phase") in ("Succeeded", "Failed"), timeout=60)
    lines = kubectl(kube, "-n", ns, "logs", "prober").stdout.splitlines()
    answer = "kubernetes.default.svc.cluster.local.\t\t{}\tIN\tA\t10.0.0.1"
    assert lines[0].split("\t")[0] == "kubernetes.default.svc.cluster.local." and lines[0].endswith("\tIN\tA\t10.0.0.1")
    assert lines[1:] == ["udp=0", answer.format(lines[0].split("\t")[2]), "tcp=0", "10.0.0.1", "done"], lines


@pytest.mark.parametrize("picture", ["nautilus", "kitten"])
def test_update_demo_images_serve_their_data_json(kube, picture) -> None:
    """The update demo's images are agnhost's with CMD test-webserver and a data.json naming their picture."""
    ns = new_namespace(kube)
    kubectl(kube, "-n", ns, "run", f"--image=registry.k8s.io/e2e-test-images/{picture}:1.7", "--port=80", "demo")
    eventually(lambda: status_of(kube, ns, "demo").get("phase") == "Running", timeout=60)

    def data() -> str:
        done = kubectl(kube, "get", "--raw", f"/api/v1/namespaces/{ns}/pods/demo/proxy/data.json", check=False)
        return done.stdout if done.returncode == 0 else ""

    assert json.loads(eventually(data, timeout=30)) == {"image": f"{picture}.jpg"}
    assert kubectl(kube, "-n", ns, "exec", "demo", "--", "cat", "/data.json").stdout == \
        f'{{\n  "image": "{picture}.jpg"\n}}\n'


@pytest.mark.parametrize(("image", "separator"), [(AGNHOST, "#"), ("registry.k8s.io/e2e-test-images/busybox:1.36.1-1", ":")])
def test_nslookup_answers_from_the_cluster_dns_in_the_images_that_have_it(kube, image, separator) -> None:
    """`nslookup NAME` as the suite's ExternalName checks run it: found through the search list (exit 0), a
    missing name NXDOMAIN (exit 1), in BIND's layout (agnhost) or busybox's."""
    ns = new_namespace(kube)
    kubectl(kube, "-n", ns, "run", f"--image={image}", "looker", "--command", "--", "sleep", "3600")
    eventually(lambda: status_of(kube, ns, "looker").get("phase") == "Running", timeout=60)
    server = kubectl(kube, "-n", ns, "exec", "looker", "--", "cat", "/etc/resolv.conf").stdout.split(
        "nameserver ")[1].split()[0]
    for name in ("kubernetes.default", "kubernetes.default.svc.cluster.local"):
        found = kubectl(kube, "-n", ns, "exec", "looker", "--", "nslookup", name, check=False)
        assert found.returncode == 0 and found.stdout == (
            f"Server:\t\t{server}\nAddress:\t{server}{separator}53\n\n"
            "Name:\tkubernetes.default.svc.cluster.local\nAddress: 10.0.0.1\n\n"), found
    missing = kubectl(kube, "-n", ns, "exec", "looker", "--", "nslookup", "no-such.default.svc.cluster.local",
                      check=False)
    assert missing.returncode == 1 and "** server can't find no-such.default.svc.cluster.local: NXDOMAIN" in \
        missing.stdout, missing


def test_agnhost_verifies_its_token_through_the_issuers_oidc_discovery(kube) -> None:
    """test-service-account-issuer-discovery: the Pod's projected token (its own audience) verifies against the
    issuer's /.well-known/openid-configuration and key set, fetched in-cluster by the issuer's name."""
    ns = new_namespace(kube)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "oidc"}, "spec": {
        "restartPolicy": "Never",
        "containers": [{"name": "oidc", "image": AGNHOST, "args": [
            "test-service-account-issuer-discovery", "--token-path", "/var/run/secrets/tokens/sa-token",
            "--audience", "oidc-discovery-test"],
            "volumeMounts": [{"name": "token", "mountPath": "/var/run/secrets/tokens", "readOnly": True}]}],
        "volumes": [{"name": "token", "projected": {"sources": [{"serviceAccountToken": {
            "path": "sa-token", "expirationSeconds": 600, "audience": "oidc-discovery-test"}}]}}]}}
    kubectl(kube, "-n", ns, "create", "-f", "-", input=json.dumps(pod))

    def logs() -> str:
        return kubectl(kube, "-n", ns, "logs", "oidc", check=False).stdout

    phase = eventually(lambda: status_of(kube, ns, "oidc").get("phase") in ("Succeeded", "Failed")
                       and status_of(kube, ns, "oidc")["phase"], timeout=60, explain=logs)
    out = logs()
    assert phase == "Succeeded", out
    for line in ("OK: Got token", "OK: got issuer https://kubernetes.default.svc.cluster.local",
                 "OK: Constructed OIDC provider", "OK: Validated signature on JWT", "OK: Got valid claims from token!"):
        assert line in out, out
