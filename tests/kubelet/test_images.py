"""Built-in images decide what a container runs (issue #27, first step), on a node that fails to pull unknown
images as a real node does (`unknown_images="fail"`, `mini-kube serve`'s default); through real kubectl."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests.helpers import kubectl

from .conftest import eventually, process_cluster_or_skip, status_of

AGNHOST = "registry.k8s.io/e2e-test-images/agnhost:2.53"


@pytest.fixture(scope="module")
def kube() -> Iterator:
    process_cluster_or_skip()
    from mini_kube.testing import MiniKube

    with MiniKube(nodes=1, node_runtime="process", node_options={"unknown_images": "fail"}) as cluster:
        yield cluster



def finished_logs(kube, ns: str, name: str) -> str:
    eventually(lambda: status_of(kube, ns, name).get("phase") in ("Succeeded", "Failed"))
    assert status_of(kube, ns, name)["phase"] == "Succeeded", status_of(kube, ns, name)
    return kubectl(kube, "-n", ns, "logs", name).stdout


def events(kube, ns: str, name: str) -> list[str]:
    out = kubectl(kube, "-n", ns, "get", "events", "--field-selector", f"involvedObject.name={name}", "-o", "json")
    return [f"{e['type']} {e['reason']} {e['message']}" for e in json.loads(out.stdout)["items"]]


def test_busybox_sh_accepts_what_ash_accepts(kube, ns):
    kubectl(kube, "-n", ns, "run", "b", "--image=busybox", "--restart=Never", "--", "sh", "-c",
            '[[ 1 == 1 ]] && echo ok')
    assert finished_logs(kube, ns, "b") == "ok\n"
    pulled = [e for e in events(kube, ns, "b") if e.startswith("Normal Pulled ")]
    assert pulled and all("stand-in" not in e for e in pulled), pulled  # built in: upstream's words


def test_busybox_bin_sh_named_by_path_accepts_what_ash_accepts(kube, ns):
    """A command naming /bin/sh itself (as the conformance suite's Jobs do) gets ash's `[[ ]]` too, where the
    host's /bin/sh is dash; a Debian image's /bin/sh stays the host's, as Debian's is dash."""
    kubectl(kube, "-n", ns, "run", "b", "--image=registry.k8s.io/e2e-test-images/busybox:1.36.1-1",
            "--restart=Never", "--command", "--", "/bin/sh", "-c", "if [[ -d / ]]; then echo ok; fi")
    assert finished_logs(kube, ns, "b") == "ok\n"
    if os.path.basename(os.path.realpath("/bin/sh")) == "dash":
        kubectl(kube, "-n", ns, "run", "d", "--image=debian", "--restart=Never", "--command", "--",
                "/bin/sh", "-c", "if [[ -d / ]] 2>/dev/null; then echo bash; else echo dash; fi")
        assert finished_logs(kube, ns, "d") == "dash\n"


def test_python_image_has_python(kube, ns):
    kubectl(kube, "-n", ns, "run", "py", "--image=python:3.12-slim", "--restart=Never", "--", "python", "-c",
            "print(1)")
    assert finished_logs(kube, ns, "py") == "1\n"


def forwarded(kube, ns: str, name: str, *paths: str, port: int = 80) -> list[str]:
    """`curl -i` of each path through `kubectl port-forward` to the Pod's `port` (a Pod without a readiness probe
    is Running once started, maybe before its server listens: a forward whose connection was refused ends, so
    it is tried again)."""

    def attempt() -> list[str] | None:
        forward = subprocess.Popen(["kubectl", "--kubeconfig", kube.kubeconfig, "-n", ns, "port-forward",
                                    f"pod/{name}", f":{port}"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            local = int(forward.stdout.readline().split("127.0.0.1:")[1].split(" ")[0])
            answers = [subprocess.run(["curl", "-si", "-m", "5", f"http://127.0.0.1:{local}{path}"],
                                      capture_output=True, text=True).stdout.replace("\r\n", "\n") for path in paths]
            return answers if all(a.startswith("HTTP/") for a in answers) else None
        finally:
            forward.terminate()
            forward.wait(10)

    return eventually(attempt)


def running(kube, ns: str, name: str) -> None:
    eventually(lambda: status_of(kube, ns, name).get("phase") == "Running" and all(
        c.get("ready") for c in status_of(kube, ns, name).get("containerStatuses") or [{}]))


@pytest.mark.parametrize(("image", "server", "page", "missing"), [
    ("nginx:1.27", "Server: nginx/", "<h1>Welcome to nginx!</h1>", "<center>nginx/"),
    ("httpd", "Server: Apache/", "<html><body><h1>It works!</h1></body></html>\n", "<p>The requested URL was not"),
])
def test_web_server_images_serve_their_default_page(kube, ns, image, server, page, missing):
    kubectl(kube, "-n", ns, "run", "web", f"--image={image}", "--port=80")
    running(kube, ns, "web")
    root, absent = forwarded(kube, ns, "web", "/", "/nothing-here")
    assert root.startswith("HTTP/1.1 200 OK\n") and f"\n{server}" in root and page in root.split("\n\n", 1)[1], root
    assert absent.startswith("HTTP/1.1 404 Not Found\n") and missing in absent, absent


def test_pause_image_runs_pause(kube, ns):
    kubectl(kube, "-n", ns, "run", "p", "--image=registry.k8s.io/pause:3.10")
    running(kube, ns, "p")
    assert kubectl(kube, "-n", ns, "logs", "p").stdout == ""  # no stand-in's "running" line: pause says nothing
    # as any user (the conformance suite runs it restricted): nothing of the serving installation is needed
    restricted = {"spec": {"securityContext": {"runAsNonRoot": True, "runAsUser": 1000}, "containers": [{
        "name": "pause", "image": "registry.k8s.io/pause:3.10", "securityContext": {
            "allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}}]}}
    kubectl(kube, "-n", ns, "run", "q", "--image=registry.k8s.io/pause:3.10", "--overrides", json.dumps(restricted))
    running(kube, ns, "q")


def test_unknown_image_fails_to_pull(kube, ns):
    kubectl(kube, "-n", ns, "run", "u", "--image=foo:non-existent")

    def waiting(reason: str) -> dict:
        statuses = status_of(kube, ns, "u").get("containerStatuses") or [{}]
        return statuses[0].get("state", {}).get("waiting", {}).get("reason") == reason and statuses[0]

    pulling = eventually(lambda: waiting("ErrImagePull"))
    error = ('rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/library/foo:non-existent": '
             'failed to resolve reference "docker.io/library/foo:non-existent": docker.io/library/foo:non-existent: '
             "not found")
    assert pulling["state"]["waiting"]["message"] == error
    backing_off = eventually(lambda: waiting("ImagePullBackOff"))
    assert backing_off["state"]["waiting"]["message"] == f'Back-off pulling image "foo:non-existent": ErrImagePull: {error}'
    assert status_of(kube, ns, "u")["phase"] == "Pending"
    seen = events(kube, ns, "u")
    for line in ['Normal Pulling Pulling image "foo:non-existent"',
                 f'Warning Failed Failed to pull image "foo:non-existent": {error}', "Warning Failed Error: ErrImagePull",
                 'Normal BackOff Back-off pulling image "foo:non-existent"', "Warning Failed Error: ImagePullBackOff"]:
        assert line in seen, seen
    described = kubectl(kube, "-n", ns, "describe", "pod", "u").stdout
    assert "ImagePullBackOff" in described and "Back-off pulling image" in described


def test_an_image_run_by_the_stand_in_says_so(kube, ns):
    kubectl(kube, "-n", ns, "run", "a", "--image=traefik/whoami:v1.10", "--port=8080")
    running(kube, ns, "a")
    assert ('Normal Pulled Container image "traefik/whoami:v1.10" already present on machine '
            "(run by mini-kube's stand-in: the image is not built in)") in events(kube, ns, "a")


NON_ROOT = {"runAsNonRoot": True, "runAsUser": 1000, "seccompProfile": {"type": "RuntimeDefault"}}
RESTRICTED = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}


def test_python_image_runs_python_as_any_user(kube, ns):
    """The interpreter lives where a non-root user may not look (under /root here): the container still reaches
    it, and nothing else of that directory."""
    script = ("import os, sys; print(os.getuid(), sys.version)\n"
              "try: os.listdir('/root')\nexcept PermissionError: pass\nelse: print('root listed')")
    overrides = {"spec": {"securityContext": NON_ROOT, "containers": [{
        "name": "py", "image": "python:3.12", "command": ["python", "-c", script], "securityContext": RESTRICTED}]}}
    kubectl(kube, "-n", ns, "run", "py", "--image=python:3.12", "--restart=Never", "--overrides",
            json.dumps(overrides))
    assert finished_logs(kube, ns, "py") == f"1000 {sys.version}\n"  # the serving interpreter, the host's or not


def test_agnhost_runs_as_a_non_root_user(kube, ns):
    restricted = {"spec": {"securityContext": NON_ROOT, "containers": [{
        "name": "x", "image": AGNHOST, "args": ["netexec", "--http-port=8080"], "securityContext": RESTRICTED}]}}
    kubectl(kube, "-n", ns, "run", "x", f"--image={AGNHOST}", "--overrides", json.dumps(restricted))
    running(kube, ns, "x")
    [answer] = forwarded(kube, ns, "x", "/hostname", port=8080)
    assert answer.startswith("HTTP/1.1 200 OK\n") and answer.endswith("\n\nx"), answer
