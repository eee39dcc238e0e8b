"""Seccomp as containerd applies it (issue #24), through real kubectl as a namespace admin: `RuntimeDefault`
filters the container (`Seccomp: 2` in /proc/self/status) so that it can neither make namespaces nor mount nor
use the kernel keyring, for its command and for what `kubectl exec` runs in it; `Unconfined` (and no profile at
all, upstream's default) leaves it unfiltered; a `Localhost` profile is read from the node's seccomp directory,
and one that is missing keeps the container from being created, as containerd refuses it."""

from __future__ import annotations

import json
import platform
import subprocess
from pathlib import Path

import pytest

from .conftest import eventually, process_cluster_or_skip
from .test_isolation import Tenant

pytestmark = pytest.mark.slow  # each test here takes more than a few seconds


@pytest.fixture(scope="module")
def kube(tmp_path_factory):
    process_cluster_or_skip()
    from mini_kube.testing import MiniKube

    data = tmp_path_factory.mktemp("seccomp") / "data"
    with MiniKube(insecure_http=False, data_dir=str(data), nodes=1, node_runtime="process",
                  node_options={"backoff_base": 0.3, "config_retry": 0.3}) as kube:
        kube.data_dir = data
        yield kube


@pytest.fixture
def tenant(kube, tmp_path):
    return Tenant(kube, tmp_path)


KEYCTL_NR = {"x86_64": 250, "aarch64": 219}.get(platform.machine(), 250)
# keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0): a keyring id unless the call is refused
KEYCTL = (f"import ctypes; r = ctypes.CDLL(None, use_errno=True).syscall({KEYCTL_NR}, 0, -3, 0); "
          f"print(\"keyring-reached\" if r >= 0 else \"keyctl: errno %d\" % ctypes.get_errno())")
PROBE = ("grep -E '^(Seccomp|NoNewPrivs):' /proc/self/status; "
         "unshare -U true 2>&1 && echo made-user-namespace; "
         "unshare -m true 2>&1 && echo made-mount-namespace; "
         "mount -t tmpfs none /mnt 2>&1 && echo mounted; "
         f"python3 -c '{KEYCTL}'; "
         "echo probed")


def finished_log(tenant: Tenant, name: str) -> str:
    eventually(lambda: tenant.pod(name)["status"].get("phase") in ("Succeeded", "Failed"), timeout=60)
    return tenant.kubectl("logs", name).stdout


def unprivileged_user_namespaces() -> bool:
    """Whether this machine lets a process without capabilities make a user namespace (what the default
    profile must stop)."""
    return subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", "unshare", "-U",
                           "true"], capture_output=True).returncode == 0


def test_runtime_default_filters_the_command_and_exec_and_refuses_namespaces_and_mounts(tenant):
    tenant.run("filtered", f"{PROBE}; sleep 300", restartPolicy="Never",
               securityContext={"seccompProfile": {"type": "RuntimeDefault"}})
    tenant.running("filtered")
    log = eventually(lambda: (text := tenant.kubectl("logs", "filtered").stdout) and "probed" in text and text)
    assert "Seccomp:\t2" in log
    for escaped in ("made-user-namespace", "made-mount-namespace", "mounted", "keyring-reached"):
        assert escaped not in log, log
    assert "Operation not permitted" in log
    # what kubectl exec runs in the container is under the same filter
    out = tenant.sh("filtered", PROBE, check=True).stdout
    assert "Seccomp:\t2" in out and "probed" in out
    for escaped in ("made-user-namespace", "made-mount-namespace", "mounted", "keyring-reached"):
        assert escaped not in out, out
    # a root container with RuntimeDefault can still do what containers do: files, processes, sockets, threads
    work = tenant.sh("filtered", "mkdir /tmp/d && echo x > /tmp/d/f && cat /tmp/d/f && ls / > /dev/null && "
                                 "python3 -c 'import threading; t = threading.Thread(target=print, args=(1,)); "
                                 "t.start(); t.join()' && echo worked", check=True).stdout
    assert work.split() == ["x", "1", "worked"]


def test_unconfined_and_no_profile_leave_the_container_unfiltered(tenant):
    tenant.run("default", f"{PROBE}", restartPolicy="Never")
    tenant.run("unconfined", f"{PROBE}", restartPolicy="Never",
               securityContext={"seccompProfile": {"type": "RuntimeDefault"}},
               container={"securityContext": {"seccompProfile": {"type": "Unconfined"}}})
    tenant.run("privileged", f"{PROBE}", restartPolicy="Never",
               securityContext={"seccompProfile": {"type": "RuntimeDefault"}},
               container={"securityContext": {"privileged": True}})
    for name in ("default", "unconfined", "privileged"):
        log = finished_log(tenant, name)
        assert "Seccomp:\t0" in log, (name, log)
        if unprivileged_user_namespaces() and name != "privileged":
            assert "made-user-namespace" in log, (name, log)  # what RuntimeDefault takes away


def test_a_localhost_profile_is_read_from_the_nodes_seccomp_directory(kube, tenant):
    node_root = Path(kube.nodes.kubelets[0].config.root)  # the node's root dir, as upstream's /var/lib/kubelet
    profiles = node_root / "seccomp" / "profiles"
    profiles.mkdir(parents=True, exist_ok=True)
    (profiles / "no-mkdir.json").write_text(json.dumps({
        "defaultAction": "SCMP_ACT_ALLOW",
        "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 13}]}))
    tenant.run("local", "grep ^Seccomp: /proc/self/status; mkdir /tmp/d 2>&1 || echo refused; "
                        "unshare -U true && echo made-user-namespace; echo done", restartPolicy="Never",
               container={"securityContext": {"seccompProfile": {"type": "Localhost",
                                                                 "localhostProfile": "profiles/no-mkdir.json"}}})
    log = finished_log(tenant, "local")
    assert "Seccomp:\t2" in log and "Permission denied" in log and "refused" in log  # errnoRet 13: EACCES
    tenant.run("missing", "true", restartPolicy="Never",
               container={"securityContext": {"seccompProfile": {"type": "Localhost",
                                                                 "localhostProfile": "profiles/none.json"}}})
    waiting = eventually(lambda: ((tenant.pod("missing")["status"].get("containerStatuses") or [{}])[0]
                                  .get("state", {}).get("waiting") or {}).get("reason") == "CreateContainerError"
                         and tenant.pod("missing")["status"]["containerStatuses"][0]["state"]["waiting"])
    assert "cannot load seccomp profile" in waiting["message"] and "profiles/none.json" in waiting["message"]
    assert "no such file or directory" in waiting["message"]


def test_the_containers_environment_reaches_only_the_exec_command_not_the_host_helper(tenant):
    """What kubectl exec starts on the host to enter the container must not read the container's environment:
    LD_PRELOAD or LD_LIBRARY_PATH there would load code of the Pod's choosing into a root process on the host's
    files. LD_DEBUG shows every program the dynamic loader starts with the variable set."""
    tenant.run("env", "sleep 300", container={"env": [{"name": "LD_DEBUG", "value": "libs"}]})
    tenant.running("env")
    out = tenant.kubectl("exec", "env", "--", "true")
    programs = {line.split("initialize program:")[1].strip() for line in out.stderr.splitlines()
                if "initialize program:" in line}
    assert programs == {"true"}, out.stderr[-2000:]
