"""Pods with `hostUsers: false` (issue #24), with real kubectl as a namespace admin: each runs in a user
namespace of its own, 65536 IDs mapped from a block no other Pod on the machine has, so root in the Pod is an
unprivileged ID on the host; its volumes are mounted through the mapping (root's files are root's inside, the
fsGroup is the group); its block comes free when it goes; and nothing it can do, with every capability the
Pod may ask for, reaches the host's root."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from mini_kube.kubelet.userns import kernel_supports

from tests.helpers import kubectl

from .conftest import eventually
from .test_isolation import Tenant, tenants_cluster

LOCKS = Path("/run/mini-kube/userns")


@pytest.fixture(scope="module")
def kube(tmp_path_factory):
    with tenants_cluster(tmp_path_factory, "userns") as kube:
        yield kube


@pytest.fixture
def tenant(kube, tmp_path):
    return Tenant(kube, tmp_path)


def uid_map(tenant: Tenant, pod: str) -> list[int]:
    return [int(n) for n in tenant.sh(pod, "cat /proc/self/uid_map", check=True).stdout.split()]


def host_pid(tenant: Tenant, pod: str) -> int:
    """The host's PID of the Pod's `sleep 300`, found by its network namespace."""
    netns = tenant.sh(pod, "readlink /proc/self/ns/net", check=True).stdout.strip()
    for entry in Path("/proc").iterdir():
        try:
            if (entry / "cmdline").read_bytes() == b"sleep\x00300\x00" and os.readlink(entry / "ns/net") == netns:
                return int(entry.name)
        except OSError:
            continue
    raise AssertionError(f"no sleep of {pod} on the host")


def host_uids() -> set[int]:
    """The real user IDs of the host's processes."""
    uids = set()
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            uids |= {int(line.split()[1]) for line in status.read_text().splitlines() if line.startswith("Uid:")}
        except OSError:
            continue
    return uids


def test_each_pod_gets_its_own_mapping_and_root_in_it_is_an_unprivileged_host_id(kube, tenant):
    for name in ("one", "two"):
        tenant.run(name, "touch /tmp/made-as-root; sleep 300", hostUsers=False)
    tenant.run("host", "sleep 300")
    for name in ("one", "two", "host"):
        tenant.running(name)
    one, two = uid_map(tenant, "one"), uid_map(tenant, "two")
    assert uid_map(tenant, "host") == [0, 0, 4294967295]  # the host's users, as any Pod by default
    for inside, host, length in (one, two):
        assert inside == 0 and length == 65536 and host >= 65536 and host % 65536 == 0
    assert abs(one[1] - two[1]) >= 65536  # disjoint ranges
    assert tenant.sh("one", "id -u; cat /proc/self/gid_map", check=True).stdout.split() == ["0", "0", str(one[1]),
                                                                                           "65536"]
    # on the host, root in the Pod is the first ID of its block: its process, and what it writes in its root
    status = Path(f"/proc/{host_pid(tenant, 'one')}/status").read_text()
    assert f"Uid:\t{one[1]}\t{one[1]}" in status and f"Gid:\t{one[1]}\t{one[1]}" in status
    pod_uid = tenant.pod("one")["metadata"]["uid"]
    made = list(Path(kube.nodes.kubelets[0].root).glob(f"pods/{pod_uid}/rootfs/main/*/tmp/made-as-root"))
    assert made and made[0].stat().st_uid == one[1] and made[0].stat().st_gid == one[1]
    # the files of the container's own root and the host's directories it sees are root's inside too
    owners = tenant.sh("one", "stat -c '%u:%g' / /tmp /usr/bin/env /etc/passwd", check=True).stdout.split()
    assert owners == ["0:0"] * 4


def test_volumes_are_mounted_through_the_mapping(kube, tenant):
    tenant.kubectl("create", "configmap", "cfg", "--from-literal=a=1", "--from-literal=b=2")
    tenant.kubectl("create", "secret", "generic", "sec", "--from-literal=s=3")
    volumes = [{"name": "cfg", "configMap": {"name": "cfg"}}, {"name": "sec", "secret": {"secretName": "sec"}},
               {"name": "down", "downwardAPI": {"items": [{"path": "name",
                                                           "fieldRef": {"fieldPath": "metadata.name"}}]}},
               {"name": "scratch", "emptyDir": {}}]
    mounts = [{"name": v["name"], "mountPath": f"/vol/{v['name']}"} for v in volumes]
    tenant.run("vols", "sleep 300", hostUsers=False, volumes=volumes, container={"volumeMounts": mounts})
    tenant.run("grouped", "sleep 300", hostUsers=False, securityContext={"fsGroup": 200},
               volumes=volumes[:1], container={"volumeMounts": mounts[:1]})
    tenant.running("vols")
    tenant.running("grouped")
    # as upstream's e2e checks them: every file's group is root's inside, or the fsGroup
    groups = tenant.sh("vols", "stat -c '%u:%g' $(find /vol/ -type f)", check=True).stdout.split()
    assert groups == ["0:0"] * 4
    assert tenant.sh("grouped", "stat -c '%g' $(find /vol/ -type f)", check=True).stdout.split() == ["200", "200"]
    # root in the Pod writes its emptyDir; the file is the Pod's root's inside
    out = tenant.sh("vols", "echo hi > /vol/scratch/f && stat -c '%u:%g' /vol/scratch/f", check=True)
    assert out.stdout.split() == ["0:0"]


def test_blocks_come_free_when_pods_go(kube, tenant):
    tenant.run("first", "sleep 300", hostUsers=False)
    tenant.running("first")
    first = uid_map(tenant, "first")[1]
    assert (LOCKS / str(first)).exists()  # held on the machine while the Pod runs
    tenant.kubectl("delete", "pod", "first", "--wait=true")
    eventually(lambda: not (LOCKS / str(first)).exists())
    assert first not in host_uids()  # and its processes with it


def test_root_in_the_pod_reaches_nothing_of_the_hosts_root(tenant):
    """With every capability (allowed where the namespace is privileged), root in a user-namespaced Pod is
    root only over what its namespace owns: it cannot trace or signal the Pod's pause process (the host's
    root's), read through its root, mount, or change the host's files it sees."""
    tenant.run("caps", "sleep 300", hostUsers=False,
               container={"securityContext": {"capabilities": {"add": ["ALL"]}}})
    tenant.running("caps")
    out = tenant.sh("caps", "grep CapEff /proc/self/status; ls /proc/1/root/ && echo pause-root-seen; "
                            "cat /proc/1/environ && echo pause-environ-read; kill -9 1 && echo pause-killed; "
                            "mount -t tmpfs t /mnt && echo mounted; touch /usr/owned && echo wrote-usr; "
                            "chown 0 /etc/passwd && echo chowned; ip link add d0 type bridge && echo own-net-admin")
    assert "CapEff:\t000001ffffffffff" in out.stdout  # every capability... in its own user namespace
    for seen in ("pause-root-seen", "pause-environ-read", "pause-killed", "mounted", "wrote-usr", "chowned"):
        assert seen not in out.stdout, out.stdout + out.stderr
    assert "own-net-admin" in out.stdout  # its network namespace is its own user namespace's


def test_host_namespaces_with_host_users_false_are_refused(tenant):
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "mixed"},
            "spec": {"hostUsers": False, "hostPID": True,
                     "containers": [{"name": "main", "image": "busybox"}]}}
    result = tenant.kubectl("apply", "-f", "-", input=json.dumps(body), check=False)
    assert result.returncode != 0
    assert 'spec.HostPID: Forbidden: when `pod.Spec.HostUsers` is false' in result.stderr


def test_exec_runs_in_the_pods_user_namespace(kube, tenant):
    tenant.run("execd", "sleep 300", hostUsers=False, securityContext={"runAsUser": 1000, "runAsGroup": 1000})
    tenant.running("execd")
    ns = tenant.sh("execd", "readlink /proc/self/ns/user; id -u; cat /proc/self/uid_map", check=True).stdout.split()
    assert ns[0] != os.readlink("/proc/self/ns/user") and ns[1] == "1000" and ns[2:4] == ["0", ns[3]]
    assert int(ns[3]) >= 65536
    assert kubectl(kube, "get", "pod", "-n", tenant.ns, "execd", "-o", "jsonpath={.spec.hostUsers}").stdout == "false"


def test_the_containers_user_may_open_its_stdout_again(tenant):
    """As runc gives the container's user its stdio: `echo > /dev/stdout` works for a non-root user and for root
    in a user namespace (both were refused: the kubelet's pipes were the host root's, mode 0600), in the
    container and in kubectl exec."""
    script = "echo to-stdout > /dev/stdout; echo to-stderr > /dev/stderr; sleep 300"
    tenant.run("nonroot", script, securityContext={"runAsUser": 1000})
    tenant.run("mapped", script, hostUsers=False)
    for name in ("nonroot", "mapped"):
        tenant.running(name)
        logs = eventually(lambda n=name: (out := tenant.kubectl("logs", n).stdout).count("\n") >= 2 and out)
        assert sorted(logs.split()) == ["to-stderr", "to-stdout"], logs
        out = tenant.sh(name, "echo via-exec > /dev/stdout && echo err-via-exec > /dev/stderr")
        assert out.stdout == "via-exec\n" and out.stderr == "err-via-exec\n", (out.stdout, out.stderr)


def test_a_container_whose_init_fails_says_why_as_a_start_error(tenant):
    """What the runtime cannot do for a container (a volume on a filesystem that cannot be mapped; a user the
    Pod's namespace does not map) fails its start with the reason, as a runtime's container init: StartError,
    exit code 128, the message in the status and the Failed event; no traceback in the log."""
    tenant.run("proc", "true", hostUsers=False, restartPolicy="Never",
               volumes=[{"name": "proc", "hostPath": {"path": "/proc"}}],
               container={"volumeMounts": [{"name": "proc", "mountPath": "/host-proc"}]})
    tenant.run("unmapped", "true", hostUsers=False, restartPolicy="Never", securityContext={"runAsUser": 70000})
    expected = {"proc": "error during container init: idmapped mount of /proc: Invalid argument",
                "unmapped": "error during container init: setresuid 70000: Invalid argument"}
    for name, message in expected.items():
        pod = eventually(lambda n=name: (p := tenant.pod(n))["status"].get("phase") == "Failed" and p, timeout=30)
        state = pod["status"]["containerStatuses"][0]["state"]["terminated"]
        assert (state["reason"], state["exitCode"], state["message"]) == ("StartError", 128, message), state
        assert "Traceback" not in tenant.kubectl("logs", name).stdout


def test_proc_mount_unmasked_in_a_user_namespace_has_no_masked_paths(tenant):
    """procMount: Unmasked (allowed only with hostUsers: false) leaves /proc as the kernel shows it, as runc with
    no masked or read-only paths; Default keeps the runtime's."""
    script = "awk '$2 ~ \"^/proc/(kcore|timer_list|sys|sysrq-trigger)$\" {print $2}' /proc/mounts; sleep 300"
    tenant.run("unmasked", script, hostUsers=False, container={"securityContext": {"procMount": "Unmasked"}})
    tenant.run("default", script, hostUsers=False)
    for name in ("unmasked", "default"):
        tenant.running(name)
    masked = eventually(lambda: tenant.kubectl("logs", "default").stdout.split())
    assert {"/proc/timer_list", "/proc/sys"} <= set(masked)  # those of the list this kernel has
    assert tenant.kubectl("logs", "unmasked").stdout == ""
    refused = tenant.kubectl("run", "hostusers", "--image=busybox", "--overrides", json.dumps(
        {"spec": {"containers": [{"name": "c", "image": "busybox", "securityContext": {"procMount": "Unmasked"}}]}}),
        check=False)
    assert "`hostUsers` must be false to use `Unmasked`" in refused.stderr


def test_the_node_says_its_runtime_runs_user_namespaces(kube, tenant):
    """As a 1.32 kubelet reports its runtime's handlers: userNamespaces where the kernel can (Linux 6.3+, idmapped
    tmpfs), recursive read-only mounts not made."""
    node = json.loads(kubectl(kube, "get", "node", kube.nodes.kubelets[0].name, "-o", "json").stdout)
    assert node["status"]["runtimeHandlers"] == [{"name": "", "features": {
        "recursiveReadOnlyMounts": False, "userNamespaces": kernel_supports(os.uname().release)}}]
    permitted = int(Path("/proc/sys/user/max_user_namespaces").read_text()) > 0
    assert kernel_supports("6.18.44-fc") is permitted
    assert not kernel_supports("6.2.0") and not kernel_supports("5.15.0-91-generic") and not kernel_supports("x")
