"""Real images from archives (issue #27, part 3): the test builds a small image itself (the host's dash, cat,
ls and id with their libraries, in two layers, the second deleting a file of the first), saves it as
`docker save` and as an OCI layout would, loads it with `mini-kube image load` as a user types it, and runs it
with real kubectl: the container sees only the image's files, its Entrypoint/Cmd, Env, WorkingDir and User
apply as upstream combines them with the Pod's, and the status' imageID is the image's digest."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import kubectl

from .conftest import eventually, process_cluster_or_skip, status_of
from .image_archives import docker_archive, image_config, oci_archive, sha256, shell_image_layers

MINI_KUBE = str(Path(sys.executable).with_name("mini-kube"))
SCRIPT = ('echo "greeting=$GREETING pwd=$(pwd) uid=$(id -u) home=$HOME"; ls /; ls /etc; cat hello.txt; '
          'cat /etc/removed.txt 2>/dev/null || echo removed-is-gone; '
          'cat /etc/hostname 2>/dev/null || echo no-host-hostname; ls /usr 2>/dev/null || echo no-host-usr')


def mini_kube_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([MINI_KUBE, *args], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def images(tmp_path_factory) -> Iterator[tuple[Path, dict[str, str]]]:
    """A data dir with the shell image loaded twice (docker-save as shell:1, OCI as example.com/shell:oci);
    the image IDs by name."""
    work = tmp_path_factory.mktemp("images")
    layers = shell_image_layers()
    config = image_config(layers, Entrypoint=["/bin/sh", "-c"], Cmd=["echo from-cmd"],
                          Env=["PATH=/bin", "GREETING=hello-from-image"], WorkingDir="/app", User="app",
                          ExposedPorts={"8080/tcp": {}})
    docker_archive(work / "shell.tar", layers, config, ["shell:1"])
    oci_archive(work / "shell-oci.tar", layers, config, "example.com/shell:oci")
    for archive in ("shell.tar", "shell-oci.tar"):
        loaded = mini_kube_cli("image", "load", str(work / archive), "--data-dir", str(work / "data"))
        assert loaded.returncode == 0, loaded.stderr
        assert loaded.stdout.startswith("Loaded image: "), loaded.stdout
    yield work / "data", {"shell:1": sha256(config), "example.com/shell:oci": sha256(config)}
    shutil.rmtree(work, ignore_errors=True)


@pytest.fixture(scope="module")
def kube(images) -> Iterator:
    process_cluster_or_skip()
    from mini_kube.testing import MiniKube

    data, _ = images
    with MiniKube(nodes=1, node_runtime="process", image_store=str(data / "images"),
                  node_options={"unknown_images": "fail"}) as cluster:
        yield cluster



def finished(kube, ns: str, name: str) -> dict:
    eventually(lambda: status_of(kube, ns, name).get("phase") in ("Succeeded", "Failed"), timeout=60)
    return status_of(kube, ns, name)


def test_image_ls_and_rm_as_crictl(images, tmp_path):
    data, ids = images
    listed = mini_kube_cli("image", "ls", "--data-dir", str(data)).stdout.splitlines()
    assert listed[0].split() == ["IMAGE", "TAG", "IMAGE", "ID", "SIZE"]
    rows = {tuple(line.split()[:3]) for line in listed[1:]}
    assert ("docker.io/library/shell", "1", ids["shell:1"][7:20]) in rows
    assert ("example.com/shell", "oci", ids["shell:1"][7:20]) in rows
    assert mini_kube_cli("image", "ls", "-q", "--data-dir", str(data)).stdout == f"{ids['shell:1']}\n"
    shown = json.loads(mini_kube_cli("image", "inspect", "example.com/shell:oci", "--data-dir", str(data)).stdout)
    assert (shown["id"], shown["names"]) == (ids["shell:1"], ["docker.io/library/shell:1", "example.com/shell:oci"])
    assert shown["config"]["ExposedPorts"] == {"8080/tcp": {}} and shown["config"]["User"] == "app"
    # a copy of the store: removing both names removes the image and its layers
    copy = tmp_path / "data"
    subprocess.run(["cp", "-a", str(data), str(copy)], check=True)  # whiteouts are device nodes: not copytree
    assert mini_kube_cli("image", "rm", "shell:1", "--data-dir", str(copy)).stdout == \
        "Deleted: docker.io/library/shell:1\n"
    assert len(list((copy / "images" / "layers").iterdir())) > 1
    gone = mini_kube_cli("image", "rm", ids["shell:1"][7:19], "--data-dir", str(copy))
    assert gone.stdout == "Deleted: example.com/shell:oci\n", gone.stderr
    assert [p.name for p in (copy / "images" / "layers").iterdir()] == ["empty"]
    missing = mini_kube_cli("image", "rm", "shell:1", "--data-dir", str(copy))
    assert missing.returncode == 1 and missing.stderr == "mini-kube: image rm: no such image: shell:1\n"


@pytest.mark.parametrize("image", ["shell:1", "example.com/shell:oci"])
def test_loaded_image_runs_with_its_own_root_and_config(kube, ns, images, image):
    _, ids = images
    kubectl(kube, "-n", ns, "run", "p", f"--image={image}", "--restart=Never", "--", SCRIPT)
    status = finished(kube, ns, "p")
    logs = kubectl(kube, "-n", ns, "logs", "p").stdout.splitlines()
    assert status["phase"] == "Succeeded", (status, logs)
    # Entrypoint ["/bin/sh", "-c"] with the Pod's args as its script; Env, WorkingDir and User of the image
    assert logs[0] == "greeting=hello-from-image pwd=/app uid=1000 home=/app", logs  # HOME: the user's, as runc
    listing = logs[1:logs.index("hello from the image")]
    assert set(listing) == {"app", "bin", "dev", "etc", "lib", "lib64", "proc", "sys", "tmp",  # ls /
                            "var",  # made for the service account token's mount, as runtimes make mount points
                            "group", "hosts", "passwd", "resolv.conf"}, listing  # ls /etc: removed.txt whited out
    assert logs[-3:] == ["removed-is-gone", "no-host-hostname", "no-host-usr"], logs
    container = status["containerStatuses"][0]
    assert container["imageID"] == ids[image]  # the config's digest, as containerd reports a loaded image
    assert container["image"] == ("docker.io/library/shell:1" if image == "shell:1" else image)


def test_command_replaces_entrypoint_and_cmd_applies_alone(kube, ns):
    kubectl(kube, "-n", ns, "run", "cmd", "--image=shell:1", "--restart=Never")
    kubectl(kube, "-n", ns, "run", "own", "--image=shell:1", "--restart=Never", "--command", "--",
            "/bin/cat", "/app/hello.txt")
    for name, expected in (("cmd", "from-cmd\n"), ("own", "hello from the image\n")):
        assert finished(kube, ns, name)["phase"] == "Succeeded"
        assert kubectl(kube, "-n", ns, "logs", name).stdout == expected


def test_run_as_non_root_refuses_a_named_user_as_upstream(kube, ns):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "nonroot"},
           "spec": {"securityContext": {"runAsNonRoot": True},
                    "containers": [{"name": "c", "image": "shell:1", "args": ["true"]}]}}
    kubectl(kube, "-n", ns, "apply", "-f", "-", input=json.dumps(pod))
    waiting = eventually(lambda: ((status_of(kube, ns, "nonroot").get("containerStatuses") or [{}])[0]
                                  .get("state", {}).get("waiting", {}).get("reason") == "CreateContainerConfigError"
                                  and status_of(kube, ns, "nonroot")["containerStatuses"][0]["state"]["waiting"]))
    assert waiting["message"].startswith("container has runAsNonRoot and image has non-numeric user (app), "
                                         "cannot verify user is non-root")


def test_exec_runs_in_the_image(kube, ns):
    kubectl(kube, "-n", ns, "run", "ex", "--image=shell:1", "--", "while :; do cat hello.txt >/dev/null; done")
    eventually(lambda: status_of(kube, ns, "ex").get("phase") == "Running", timeout=60)
    out = kubectl(kube, "-n", ns, "exec", "ex", "--", "/app/shell", "-c", "id -u; pwd; echo $GREETING; ls /usr",
                  check=False)
    assert out.stdout == "1000\n/app\nhello-from-image\n"
    assert out.returncode == 2 and "cannot access '/usr'" in out.stderr  # the image has no /usr: ls fails
    missing = kubectl(kube, "-n", ns, "exec", "ex", "--", "python3", "-V", check=False)
    assert missing.returncode != 0 and 'exec: "python3": executable file not found in $PATH' in missing.stderr


def test_a_loaded_image_runs_in_the_pods_user_namespace(kube, ns):
    """hostUsers: false: the image's files are root's inside (its layers mounted through the Pod's mapping),
    root in the Pod changes them in its own writable layer, where the host sees the Pod's unprivileged ID."""
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "mapped"},
            "spec": {"hostUsers": False, "restartPolicy": "Never", "securityContext": {"runAsUser": 0},
                     "containers": [{"name": "main", "image": "shell:1", "command": ["/bin/sh", "-c"],
                                     "args": ["cat /proc/self/uid_map; id -u; ls -ln /app/hello.txt /etc/passwd; "
                                              "echo changed > /app/hello.txt && cat /app/hello.txt; "
                                              "ls -ln /app/hello.txt; ls -lnd /"]}]}}
    kubectl(kube, "-n", ns, "apply", "-f", "-", input=json.dumps(body))
    status = finished(kube, ns, "mapped")
    logs = kubectl(kube, "-n", ns, "logs", "mapped").stdout.splitlines()
    assert status["phase"] == "Succeeded", (status, logs)
    inside, host, length = (int(n) for n in logs[0].split())
    assert (inside, length) == (0, 65536) and host >= 65536 and logs[1] == "0"
    owners = [line.split()[2:4] for line in logs[2:4]]
    assert owners == [["0", "0"], ["0", "0"]], logs  # the layers' files: root's, through the mapping
    assert logs[4] == "changed" and logs[5].split()[2:4] == ["0", "0"] and logs[6].split()[2:4] == ["0", "0"]
