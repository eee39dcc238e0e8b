"""The agnhost image on a node: `kubectl run --image=registry.k8s.io/e2e-test-images/agnhost:2.53 x -- netexec`
runs mini-kube's Python agnhost with the container's args as its subcommand (the image's ENTRYPOINT is
`/agnhost`), and a command naming `/agnhost-2` runs it as that binary."""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import time
import urllib.request

import pytest
from mini_kube.kubelet.entrypoints import container_argv

from tests.helpers import kubectl

from .conftest import eventually, new_namespace, pod_log, status_of

AGNHOST = "registry.k8s.io/e2e-test-images/agnhost:2.53"


def test_container_argv_maps_the_agnhost_entrypoint_only() -> None:
    assert container_argv(AGNHOST, [], ["pause"])[-2:] == ["--argv0=/agnhost", "pause"]
    assert container_argv(AGNHOST, [], [])[-2:] == ["--argv0=/agnhost", "pause"]  # the image's CMD
    assert container_argv(AGNHOST, ["/agnhost"], [])[-1] == "--argv0=/agnhost"  # a command drops the CMD
    assert container_argv(AGNHOST, ["/agnhost-2", "entrypoint-tester"], ["a"])[-3:] == [
        "--argv0=/agnhost-2", "entrypoint-tester", "a"]
    assert container_argv(AGNHOST, ["/bin/sh", "-c", "true"], []) == ["/bin/sh", "-c", "true"]
    assert container_argv("busybox", [], ["netexec"]) == ["netexec"]
    assert container_argv("example.com/not-agnhost:1", ["/agnhost"], []) == ["/agnhost"]


@pytest.mark.slow
def test_kubectl_run_agnhost_netexec_answers_its_hostname_through_port_forward(process_cluster) -> None:
    kube, ns = process_cluster, new_namespace(process_cluster)
    kubectl(kube, "-n", ns, "run", f"--image={AGNHOST}", "x", "--", "netexec", "--http-port=8080")
    eventually(lambda: status_of(kube, ns, "x").get("phase") == "Running")
    # kubectl port-forward ends at its first failed connection: start it once netexec listens
    eventually(lambda: "Started HTTP server on port 8080" in pod_log(kube, ns, "x"), timeout=30)
    forward = subprocess.Popen(["kubectl", "--kubeconfig", kube.kubeconfig, "-n", ns, "port-forward", "pod/x",
                                ":8080"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        port = int(forward.stdout.readline().split("127.0.0.1:")[1].split(" ")[0])

        def hostname() -> str:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/hostname", timeout=5) as resp:
                    return resp.read().decode()
            except (OSError, http.client.HTTPException):
                return ""

        assert eventually(lambda: hostname() == "x", timeout=30)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/echo?msg=hi", timeout=5) as resp:
            assert resp.read() == b"hi"
    finally:
        forward.terminate()
        forward.wait(10)


@pytest.mark.slow
def test_a_command_naming_agnhost_2_runs_entrypoint_tester_as_that_binary(process_cluster) -> None:
    kube, ns = process_cluster, new_namespace(process_cluster)
    kubectl(kube, "-n", ns, "run", f"--image={AGNHOST}", "--restart=Never", "--command", "ep", "--",
            "/agnhost-2", "entrypoint-tester", "override", "arguments")
    eventually(lambda: status_of(kube, ns, "ep").get("phase") == "Succeeded")
    assert kubectl(kube, "-n", ns, "logs", "ep").stdout == "[/agnhost-2 entrypoint-tester override arguments]\n"


@pytest.mark.slow
def test_agnhost_without_command_or_args_pauses_as_its_image_cmd_says(process_cluster) -> None:
    kube, ns = process_cluster, new_namespace(process_cluster)
    kubectl(kube, "-n", ns, "run", f"--image={AGNHOST}", "idle")
    eventually(lambda: status_of(kube, ns, "idle").get("phase") == "Running")
    eventually(lambda: pod_log(kube, ns, "idle") == "Paused\n", timeout=30)
    assert kubectl(kube, "-n", ns, "logs", "idle").stdout == "Paused\n"
    assert status_of(kube, ns, "idle")["containerStatuses"][0]["restartCount"] == 0


@pytest.mark.slow
def test_agnhost_binaries_print_the_pods_dns_settings_and_hosts_file(process_cluster) -> None:
    """`kubectl exec POD -- /agnhost dns-suffix`: the image's binaries are files in the container, and the dns
    subcommands read its resolv.conf and hosts file as upstream's do."""
    kube, ns = process_cluster, new_namespace(process_cluster)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "dns"}, "spec": {
        "dnsPolicy": "None", "dnsConfig": {"nameservers": ["1.1.1.1", "8.8.8.8"], "searches": ["resolv.conf.local"]},
        "hostAliases": [{"ip": "123.45.67.89", "hostnames": ["foo", "bar"]}],
        "terminationGracePeriodSeconds": 0, "containers": [{"name": "c", "image": AGNHOST}]}}
    kubectl(kube, "-n", ns, "apply", "-f", "-", input=json.dumps(pod))
    eventually(lambda: status_of(kube, ns, "dns").get("phase") == "Running")
    assert kubectl(kube, "-n", ns, "exec", "dns", "--", "/agnhost", "dns-suffix").stdout == "resolv.conf.local\n"
    assert kubectl(kube, "-n", ns, "exec", "dns", "--", "/agnhost", "dns-server-list").stdout == "1.1.1.1\n"
    hosts = kubectl(kube, "-n", ns, "exec", "dns", "--", "cat", "/etc/hosts").stdout
    assert "123.45.67.89\tfoo\tbar" in hosts
    assert kubectl(kube, "-n", ns, "exec", "dns", "--", "/agnhost-2", "etc-hosts").stdout == hosts + "\n"


@pytest.mark.slow
def test_agnhost_etc_hosts_logs_the_hosts_file_with_its_aliases(process_cluster) -> None:
    kube, ns = process_cluster, new_namespace(process_cluster)
    overrides = {"spec": {"hostAliases": [{"ip": "123.45.67.89", "hostnames": ["foo", "bar"]}]}}
    kubectl(kube, "-n", ns, "run", f"--image={AGNHOST}", "--restart=Never", "--overrides", json.dumps(overrides),
            "hosts", "--", "etc-hosts")
    eventually(lambda: status_of(kube, ns, "hosts").get("phase") == "Succeeded", timeout=30)
    logs = kubectl(kube, "-n", ns, "logs", "hosts").stdout
    assert logs.startswith("# Kubernetes-managed hosts file.\n") and logs.endswith("123.45.67.89\tfoo\tbar\n\n"), logs



@pytest.mark.slow
def test_agnhost_grpc_health_checking_keeps_a_grpc_liveness_probe_passing(process_cluster) -> None:
    kube, ns = process_cluster, new_namespace(process_cluster)
    # the suite's probe waits 15 s; 5 here, time enough for the interpreter to start on a loaded machine
    probe = {"grpc": {"port": 5000}, "initialDelaySeconds": 5, "periodSeconds": 1, "failureThreshold": 1}
    overrides = {"spec": {"containers": [{"name": "g", "image": AGNHOST, "livenessProbe": probe,
                                          "args": ["grpc-health-checking"]}]}}
    kubectl(kube, "-n", ns, "run", f"--image={AGNHOST}", "g", "--overrides", json.dumps(overrides))
    eventually(lambda: status_of(kube, ns, "g").get("phase") == "Running")
    eventually(lambda: "gRPC server starting to listen on :5000" in pod_log(kube, ns, "g"), timeout=30)
    time.sleep(8)  # a few probes past the initial delay
    assert status_of(kube, ns, "g")["containerStatuses"][0]["restartCount"] == 0


@pytest.mark.slow
def test_agnhost_port_forward_tester_serves_one_client_through_kubectl_port_forward(process_cluster) -> None:
    kube, ns = process_cluster, new_namespace(process_cluster)
    env = {"BIND_PORT": "8080", "EXPECTED_CLIENT_DATA": "abc", "CHUNKS": "3", "CHUNK_SIZE": "10",
           "CHUNK_INTERVAL": "100"}
    kubectl(kube, "-n", ns, "run", f"--image={AGNHOST}", "--restart=Never", *(f"--env={k}={v}" for k, v in env.items()),
            "pft", "--", "port-forward-tester")
    eventually(lambda: status_of(kube, ns, "pft").get("phase") == "Running")
    def attempt() -> bytes:
        """One forward and one client (a forward ends at its first refused connection: the listener may come up
        after Running)."""
        forward = subprocess.Popen(["kubectl", "--kubeconfig", kube.kubeconfig, "-n", ns, "port-forward", "pod/pft",
                                    ":8080"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        received = b""
        try:
            port = int(forward.stdout.readline().split("127.0.0.1:")[1].split(" ")[0])
            with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
                sock.sendall(b"abc")
                while chunk := sock.recv(1024):
                    received += chunk
        except OSError:
            pass
        finally:
            forward.terminate()
            forward.wait(10)
        return received

    assert eventually(attempt, timeout=30) == b"x" * 30
    eventually(lambda: status_of(kube, ns, "pft").get("phase") == "Succeeded", timeout=30)
    assert kubectl(kube, "-n", ns, "logs", "pft").stdout == (
        "Accepted client connection\nReceived expected client data\nShutting down connection\nDone\n")


@pytest.mark.slow
def test_agnhost_netexec_serves_https_with_the_images_localhost_certificate(process_cluster) -> None:
    """The suite's HTTPS netexec: `--tls-cert-file /localhost.crt --tls-private-key-file /localhost.key`, files the
    agnhost image ships, readable by any user."""
    kube, ns = process_cluster, new_namespace(process_cluster)
    overrides = {"spec": {"securityContext": {"runAsUser": 1000}, "containers": [{
        "name": "tls", "image": AGNHOST, "args": ["netexec", "--http-port=9090", "--udp-port=-1",
                                                  "--tls-cert-file", "/localhost.crt",
                                                  "--tls-private-key-file", "/localhost.key"]}]}}
    kubectl(kube, "-n", ns, "run", f"--image={AGNHOST}", "tls", "--overrides", json.dumps(overrides))
    eventually(lambda: "Started HTTP server on port 9090" in pod_log(kube, ns, "tls"), timeout=30)
    answer = kubectl(kube, "-n", ns, "exec", "tls", "--", "curl", "-s", "--cacert", "/localhost.crt",
                     "https://localhost:9090/echo?msg=secure")
    assert answer.stdout == "secure"


@pytest.mark.slow
def test_an_https_readiness_probe_speaks_tls_to_the_container(process_cluster) -> None:
    """scheme: HTTPS probes (and hooks) over TLS without verifying, as upstream's prober."""
    kube, ns = process_cluster, new_namespace(process_cluster)
    probe = {"httpGet": {"path": "/echo?msg=ready", "port": 9090, "scheme": "HTTPS"}, "periodSeconds": 1}
    overrides = {"spec": {"containers": [{
        "name": "tls", "image": AGNHOST, "readinessProbe": probe,
        "args": ["netexec", "--http-port=9090", "--udp-port=-1", "--tls-cert-file", "/localhost.crt",
                 "--tls-private-key-file", "/localhost.key"]}]}}
    kubectl(kube, "-n", ns, "run", f"--image={AGNHOST}", "tls", "--overrides", json.dumps(overrides))
    eventually(lambda: (status_of(kube, ns, "tls").get("containerStatuses") or [{}])[0].get("ready"), timeout=40)
