"""busybox's and alpine's `sh` is upstream busybox's ash, built by the install step (`python -m
mini_kube.build_ash`, kubelet/busybox_ash.py): its own words, its handling of the environment, its bash
extensions; through real kubectl on a process node."""

from __future__ import annotations

import json
import shutil

import pytest
from mini_kube.kubelet.busybox_ash import installed_ash

from tests.helpers import kubectl

from .conftest import eventually, status_of

BUSYBOX = "registry.k8s.io/e2e-test-images/busybox:1.36.1-1"


@pytest.fixture(autouse=True)
def built_ash() -> None:
    """Where a C compiler could build it, the installation must have it (the README's set-up commands build it)."""
    if installed_ash() is None:
        if shutil.which("gcc") and shutil.which("make"):
            pytest.fail("busybox ash is not built in this installation: run `python -m mini_kube.build_ash`")
        pytest.skip("no C compiler here to build busybox ash with")


def finished_logs(kube, ns: str, name: str) -> str:
    eventually(lambda: status_of(kube, ns, name).get("phase") in ("Succeeded", "Failed"), timeout=30)
    return kubectl(kube, "-n", ns, "logs", name).stdout


def pod(name: str, image: str, command: list[str], **container: object) -> str:
    """A Pod manifest (JSON is YAML) that runs `command` once."""
    spec = {"name": "c", "image": image, "command": command, **container}
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                       "spec": {"restartPolicy": "Never", "containers": [spec]}})


def test_read_only_root_is_reported_in_ash_words(kube, ns):
    """As the conformance suite's read-only busybox test wants it, byte for byte (bash says `/bin/sh: line 1:
    /file: Read-only file system`)."""
    kubectl(kube, "-n", ns, "apply", "-f", "-", input=pod(
        "ro", BUSYBOX, ["/bin/sh", "-c", "echo test > /file; echo after"],
        securityContext={"readOnlyRootFilesystem": True}))
    assert finished_logs(kube, ns, "ro") == "/bin/sh: can't create /file: Read-only file system\nafter\n"


def test_sh_on_path_is_ash_too(kube, ns):
    """`sh` found on PATH (kubectl run ... -- sh -c) is the same ash, named as called."""
    kubectl(kube, "-n", ns, "run", "p", "--image=busybox", "--restart=Never", "--", "sh", "-c",
            "echo x > /proc/no/such; [[ abc == a* ]] && echo glob; echo $((6 * 7)); type echo")
    assert finished_logs(kube, ns, "p") == ("sh: can't create /proc/no/such: nonexistent directory\n"
                                            "glob\n42\necho is a shell builtin\n")


def test_env_from_keeps_names_that_are_not_shell_names(kube, ns):
    """A ConfigMap key such as `data-1` reaches the container's environment through envFrom and stays in what
    ash passes on (Debian's busybox packages revert upstream's change keeping it, so theirs would drop it)."""
    kubectl(kube, "-n", ns, "create", "configmap", "cm", "--from-literal=data-1=value-1")
    kubectl(kube, "-n", ns, "apply", "-f", "-", input=pod(
        "e", "alpine", ["sh", "-c", "env | grep -x 'data-1=.*'"], envFrom=[{"configMapRef": {"name": "cm"}}]))
    assert finished_logs(kube, ns, "e") == "data-1=value-1\n"


def test_ash_runs_for_a_non_root_user(kube, ns):
    """The installation's ash is reachable for any user a Pod runs as."""
    kubectl(kube, "-n", ns, "apply", "-f", "-", input=pod(
        "u", "busybox", ["/bin/sh", "-c", "echo $(id -u) ${0##*/}"],
        securityContext={"runAsUser": 1234, "runAsNonRoot": True}))
    assert finished_logs(kube, ns, "u") == "1234 sh\n"


def test_the_nonroot_image_built_from_busybox_has_its_ash(kube, ns):
    """e2e-test-images/nonroot is built FROM busybox with USER 1234: its `sh` is the same ash, run as that user."""
    kubectl(kube, "-n", ns, "run", "n", "--image=registry.k8s.io/e2e-test-images/nonroot:1.4", "--restart=Never",
            "--", "sh", "-c", "echo x > /proc/no/such; id -u")
    assert finished_logs(kube, ns, "n") == "sh: can't create /proc/no/such: nonexistent directory\n1234\n"
