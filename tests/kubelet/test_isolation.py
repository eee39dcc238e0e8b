"""Containers as a container runtime makes them (issue #24), tried as an attacker with only namespace-scoped
rights would: a ServiceAccount bound to the `admin` ClusterRole in one namespace creates Pods and execs into
them with real kubectl, against a TLS cluster with RBAC whose data dir holds the CA key. The container runs with
its securityContext's user, groups and capabilities (containerd's default set otherwise), cannot remount or
unmount anything, and sees neither the server's data dir, nor the node's root dir, nor other Pods' volumes, nor
mini-kube's own files as writable."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from mini_kube.client import ResourceRef
from mini_kube.machinery.refs import NAMESPACES, PODS, ROLEBINDINGS, SERVICEACCOUNTS

from tests.helpers import kubectl_binary

from .conftest import eventually, process_cluster_or_skip

NODES = ResourceRef("", "v1", "nodes", namespaced=False)
DEFAULT_CAPS = 0xA80425FB  # containerd's default bounding set: CHOWN ... AUDIT_WRITE, SETFCAP
NET_BIND_SERVICE = 1 << 10


class Tenant:
    """A namespace admin: kubectl with a ServiceAccount token bound to `admin` in its namespace only."""

    def __init__(self, kube, directory: Path) -> None:
        self.kube = kube
        self.ns = f"tenant-{uuid.uuid4().hex[:8]}"
        # made by the cluster's admin, as `kubectl create namespace|serviceaccount|rolebinding|token` make them
        kube.client.create(NAMESPACES, {"metadata": {"name": self.ns}})
        kube.client.create(SERVICEACCOUNTS, {"metadata": {"name": "owner"}}, self.ns)
        kube.client.create(ROLEBINDINGS, {
            "metadata": {"name": "owner"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "admin"},
            "subjects": [{"kind": "ServiceAccount", "name": "owner", "namespace": self.ns}]}, self.ns)
        token = kube.client.request("POST", f"/api/v1/namespaces/{self.ns}/serviceaccounts/owner/token", body={
            "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}})["status"]["token"]
        admin = yaml.safe_load(Path(kube.kubeconfig).read_text())
        cluster = admin["clusters"][0]["cluster"]
        self.kubeconfig = directory / f"{self.ns}.kubeconfig"
        self.kubeconfig.write_text(yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "current-context": "t",
            "clusters": [{"name": "c", "cluster": cluster}], "users": [{"name": "u", "user": {"token": token}}],
            "contexts": [{"name": "t", "context": {"cluster": "c", "user": "u", "namespace": self.ns}}]}))

    def kubectl(self, *args: str, input: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
        result = subprocess.run([kubectl_binary(), "--kubeconfig", str(self.kubeconfig), *args], input=input,
                                capture_output=True, text=True, timeout=60)
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({result.returncode}):\n{result.stderr}")
        return result

    def run(self, name: str, script: str, *, container: dict | None = None, **spec) -> None:
        body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                "spec": {"terminationGracePeriodSeconds": 0, **spec,
                         "containers": [{"name": "main", "image": "busybox", "command": ["sh", "-c", script],
                                         **(container or {})}]}}
        self.kubectl("apply", "-f", "-", input=json.dumps(body))

    def pod(self, name: str) -> dict:
        return json.loads(self.kubectl("get", "pod", name, "-o", "json").stdout)

    def running(self, name: str) -> dict:
        """The Pod as the tenant's kubectl shows it once it runs and is ready (waited for in-process: each
        `kubectl get` costs a process start, ~0.1 s of CPU)."""
        eventually(lambda: (s := self.kube.client.get(PODS, name, self.ns).get("status") or {}).get(
            "phase") == "Running" and all(c.get("ready") for c in s.get("containerStatuses") or [{}]))
        return self.pod(name)

    def sh(self, name: str, script: str, check: bool = False) -> subprocess.CompletedProcess[str]:
        return self.kubectl("exec", name, "--", "sh", "-c", script, check=check)


@contextlib.contextmanager
def tenants_cluster(tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[Any]:
    """A TLS cluster with one process node and a data dir of its own (`kube.data_dir`), for tenants' attacks."""
    process_cluster_or_skip()
    from mini_kube.testing import MiniKube

    data = tmp_path_factory.mktemp(name) / "data"
    with MiniKube(insecure_http=False, data_dir=str(data), nodes=1, node_runtime="process",
                  node_options={"housekeeping_interval": 0.3, "backoff_base": 0.3}) as kube:
        kube.data_dir = data
        yield kube


@pytest.fixture(scope="module")
def kube(tmp_path_factory):
    with tenants_cluster(tmp_path_factory, "isolation") as kube:
        yield kube


@pytest.fixture
def tenant(kube, tmp_path):
    return Tenant(kube, tmp_path)


def status_caps(text: str) -> dict[str, int]:
    return {line.split(":")[0]: int(line.split()[1], 16) for line in text.splitlines() if line.startswith("Cap")}


@pytest.mark.slow
def test_a_container_gets_the_runtimes_default_capabilities_and_cannot_remount_the_host(tenant):
    tenant.run("plain", "sleep 300")
    tenant.running("plain")
    out = tenant.sh("plain", "id -u; grep ^Cap /proc/self/status; grep NoNewPrivs /proc/self/status", check=True)
    caps = status_caps(out.stdout)
    assert out.stdout.split()[0] == "0"  # the image's user: root
    assert caps["CapBnd"] == DEFAULT_CAPS and caps["CapEff"] == DEFAULT_CAPS and caps["CapAmb"] == 0
    assert "NoNewPrivs:\t0" in out.stdout
    # no CAP_SYS_ADMIN: nothing can be remounted writable or unmounted to reveal what is under it
    attack = tenant.sh("plain", "mount -o remount,bind,rw /usr && echo remounted; umount /etc && echo unmounted; "
                                "touch /usr/owned && echo wrote")
    assert "remounted" not in attack.stdout and "unmounted" not in attack.stdout and "wrote" not in attack.stdout
    # a device node made in a writable directory cannot be opened (nodev): no raw access to the host's disk
    disk = tenant.sh("plain", "mknod /tmp/disk b 8 0 && head -c1 /tmp/disk > /dev/null && echo read-disk")
    assert "read-disk" not in disk.stdout


def test_security_context_sets_user_groups_capabilities_and_no_new_privs(tenant):
    tenant.run("ctx", "sleep 300", securityContext={"runAsUser": 1000, "runAsGroup": 3000, "fsGroup": 2000,
                                                    "supplementalGroups": [4000]},
               volumes=[{"name": "scratch", "emptyDir": {}}],
               container={"securityContext": {"allowPrivilegeEscalation": False,
                                               "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}},
                          "volumeMounts": [{"name": "scratch", "mountPath": "/data"}]})
    tenant.running("ctx")
    out = tenant.sh("ctx", "id; grep -E '^(CapBnd|CapEff|NoNewPrivs)' /proc/self/status; "
                           "touch /data/f && stat -c '%g' /data /data/f", check=True)
    lines = out.stdout.splitlines()
    assert lines[0].startswith("uid=1000") and "gid=3000" in lines[0]
    assert {g.split("(")[0] for g in lines[0].split("groups=")[1].split(",")} == {"3000", "2000", "4000"}
    caps = status_caps(out.stdout)
    assert caps["CapBnd"] == NET_BIND_SERVICE and caps["CapEff"] == 0  # a non-root user keeps none at exec
    assert "NoNewPrivs:\t1" in out.stdout
    assert lines[-2:] == ["2000", "2000"]  # fsGroup owns the volume, and what is made in it (set-gid directory)
    # the main process too, not only exec'd ones
    main = tenant.sh("ctx", "grep -E '^(Uid|Gid|CapBnd)' /proc/$(pgrep -o -f 'slee[p] 300')/status", check=True)
    assert "\t1000\t1000\t1000\t1000" in main.stdout and "0000000000000400" in main.stdout


def test_run_as_non_root_with_an_image_of_root_is_refused_as_upstream(tenant):
    tenant.run("nonroot", "sleep 300", securityContext={"runAsNonRoot": True})
    pod = eventually(lambda: (p := tenant.pod("nonroot"))["status"].get("containerStatuses") and (
        p["status"]["containerStatuses"][0]["state"].get("waiting") or {}).get("reason") != "ContainerCreating" and p)
    waiting = pod["status"]["containerStatuses"][0]["state"]["waiting"]
    assert waiting["reason"] == "CreateContainerConfigError"
    assert waiting["message"] == (f"container has runAsNonRoot and image will run as root (pod: "
                                  f"\"nonroot_{tenant.ns}({pod['metadata']['uid']})\", container: main)")


@pytest.mark.slow
def test_privileged_gets_every_capability_and_read_only_root_is_read_only(tenant):
    tenant.run("priv", "sleep 300", container={"securityContext": {"privileged": True}})
    tenant.run("ro", "sleep 300", volumes=[{"name": "scratch", "emptyDir": {}}],
               container={"securityContext": {"readOnlyRootFilesystem": True},
                          "volumeMounts": [{"name": "scratch", "mountPath": "/data"}]})
    tenant.running("priv")
    tenant.running("ro")
    host = status_caps(Path("/proc/self/status").read_text())["CapBnd"]
    assert status_caps(tenant.sh("priv", "grep ^Cap /proc/self/status", check=True).stdout)["CapBnd"] == host
    out = tenant.sh("ro", "touch /x && echo root-written; touch /tmp/x && echo tmp-written; "
                          "touch /data/x && echo volume-written")
    assert out.stdout.split() == ["volume-written"]


@pytest.mark.slow
def test_the_host_and_other_pods_are_not_visible(kube, tenant, tmp_path):
    other = Tenant(kube, tmp_path)
    other.run("victim", "sleep 300")
    tenant.run("thief", "sleep 300")
    victim = other.running("victim")
    tenant.running("thief")
    node_root = str(kube.nodes.kubelets[0].root)
    data = str(kube.data_dir)
    installed = str(Path(__file__).resolve().parents[2] / "kubelet" / "containerinit.py")
    script = (f"ls {data} && echo data-dir-seen; cat {data}/pki/ca.key && echo ca-key-read; "
              f"ls {node_root} && echo node-root-seen; ls /proc/1/root/ > /dev/null && echo pause-root-seen; "
              f"cat {node_root}/pods/{victim['metadata']['uid']}/*/*/token && echo token-stolen; "
              f"ls /tmp | grep -c . ; ls /root | grep -v pyenv; "
              f"echo '# edited' >> {installed} && echo installation-edited; "
              f"test -s /etc/shadow && echo shadow-read; cat /etc/ssh/ssh_host_*_key 2>/dev/null | grep -q . && "
              f"echo host-key-read; test -r /var/run/secrets/kubernetes.io/serviceaccount/token && echo own-token")
    out = tenant.sh("thief", script)
    assert out.stdout.split() == ["0", "own-token"], out.stdout
    # the Pod's own token is on a tmpfs only its own mount namespace has: nothing of it on the node's disk
    assert not list(Path(node_root).glob(f"pods/{victim['metadata']['uid']}/**/token"))


def test_proc_sys_and_dev_are_the_runtimes_defaults(tenant):
    tenant.run("kernel", "sleep 300")
    tenant.running("kernel")
    out = tenant.sh("kernel", "ls /dev | tr '\\n' ' '; echo; "
                              "echo 1 > /proc/sysrq-trigger && echo sysrq; echo x > /proc/sys/kernel/hostname && "
                              "echo sysctl; ls /sys/firmware | grep -c .; wc -c < /proc/timer_list; "
                              "echo x > /sys/kernel/uevent_helper && echo sysfs; mknod /dev/sda b 8 0 && echo dev; "
                              "ps -o comm= | sort -u | tr '\\n' ' '")
    lines = out.stdout.splitlines()
    assert set(lines[0].split()) == {"fd", "full", "null", "ptmx", "pts", "random", "shm", "stderr", "stdin",
                                     "stdout", "termination-log", "tty", "urandom", "zero"}  # as a runtime's
    assert lines[1:3] == ["0", "0"], out.stdout  # firmware hidden, timer_list empty
    assert set(lines[3].split()) <= {"sleep", "sh", "ps", "sort", "tr"}, out.stdout  # only the Pod's processes
    for attack in ("sysrq", "sysctl", "sysfs", "dev"):
        assert attack not in lines


@pytest.mark.slow
def test_host_network_pods_share_the_nodes_namespaces_not_the_machines(kube, tenant):
    node = kube.client.get(NODES, "mini-kube")
    tenant.run("hostnet", "sleep 300", hostNetwork=True, hostPID=True, hostIPC=True)
    tenant.run("hostnet2", "sleep 301", hostNetwork=True, hostPID=True, hostIPC=True)
    tenant.run("own", "sleep 302")
    pod = tenant.running("hostnet")
    tenant.running("hostnet2")
    address = next(a["address"] for a in node["status"]["addresses"] if a["type"] == "InternalIP")
    assert pod["status"]["podIP"] == address
    out = tenant.sh("hostnet", "hostname; ip -4 -o addr show eth0 | awk '{print $4}'; pgrep -f 'slee[p] 301' | wc -l",
                    check=True)
    lines = out.stdout.split()
    assert lines[0] == "mini-kube" and lines[1].startswith("10.244.1.1/") and int(lines[2]) >= 1
    # not the machine's own namespace: none of its addresses or interfaces
    machine = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout.count("\n")
    links = tenant.sh("hostnet", "ip -o link | wc -l", check=True).stdout.strip()
    assert int(links) == 2 and machine != 2
    tenant.running("own")
    ipc = {name: tenant.sh(name, "readlink /proc/self/ns/ipc", check=True).stdout.strip()
           for name in ("hostnet", "hostnet2", "own")}
    assert ipc["hostnet"] == ipc["hostnet2"] != ipc["own"] and os.readlink("/proc/self/ns/ipc") not in ipc.values()


@pytest.mark.slow
def test_secret_volumes_live_on_the_pods_own_tmpfs(tenant):
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
              "data": {"k": base64.b64encode(b"secret-value").decode()}}
    tenant.kubectl("apply", "-f", "-", input=json.dumps(secret))
    tenant.run("sec", "sleep 300", volumes=[{"name": "s", "secret": {"secretName": "s"}}],
               container={"volumeMounts": [{"name": "s", "mountPath": "/s"}]})
    pod = tenant.running("sec")
    out = tenant.sh("sec", "cat /s/k; echo; awk '$2 == \"/s\" {print $3, $4}' /proc/mounts; "
                           "echo x > /s/k && echo written", check=False)
    lines = out.stdout.splitlines()
    assert lines[0] == "secret-value" and lines[1].startswith("tmpfs ro,") and "written" not in out.stdout
    root = Path(tenant.kube.nodes.kubelets[0].root) / "pods" / pod["metadata"]["uid"]
    assert not [p for p in root.rglob("*") if p.is_file() and p.read_bytes() == b"secret-value"]


@pytest.mark.slow
def test_a_pods_processes_and_the_nodes_pods_are_limited(kube, tenant):
    tenant.run("pids", "sleep 300")
    pod = tenant.running("pids")
    cgroups = kube.nodes.kubelets[0].runtime.cgroups
    if cgroups is None:
        pytest.skip("no writable cgroup hierarchy here")
    pod_dirs = cgroups.driver.directories(cgroups.pod_path(pod))
    assert any((d / "pids.max").exists() and (d / "pids.max").read_text().strip() == "1024" for d in pod_dirs)
    kubepods = cgroups.driver.directories(f"{cgroups.base}/kubepods")
    memory = [d / "memory.limit_in_bytes" for d in kubepods] + [d / "memory.max" for d in kubepods]
    node = kube.client.get(NODES, "mini-kube")
    allocatable = node["status"]["allocatable"]["memory"]
    assert allocatable.endswith("Ki")
    assert any(m.exists() and int(m.read_text()) == int(allocatable[:-2]) * 1024 for m in memory)


def evicted(tenant, name: str) -> dict:
    return eventually(lambda: (p := tenant.pod(name))["status"].get("phase") == "Failed" and p, timeout=30)


@pytest.mark.slow
def test_an_empty_dir_over_its_size_limit_is_evicted(tenant):
    tenant.run("fill", "dd if=/dev/zero of=/data/f bs=1024 count=2048 2>/dev/null; sleep 300",
               volumes=[{"name": "data", "emptyDir": {"sizeLimit": "1Mi"}}],
               container={"volumeMounts": [{"name": "data", "mountPath": "/data"}]})
    pod = evicted(tenant, "fill")
    assert pod["status"]["reason"] == "Evicted"
    assert pod["status"]["message"] == 'Usage of EmptyDir volume "data" exceeds the limit "1Mi". '
    events = json.loads(tenant.kubectl("get", "events", "--field-selector", "reason=Evicted", "-o", "json").stdout)
    assert [e["type"] for e in events["items"]] == ["Warning"]


@pytest.mark.slow
def test_a_pod_over_its_ephemeral_storage_limit_is_evicted(tenant):
    tenant.run("disk", "dd if=/dev/zero of=/tmp/f bs=1024 count=2048 2>/dev/null; sleep 300",
               container={"resources": {"limits": {"ephemeral-storage": "1Mi"}}})
    pod = evicted(tenant, "disk")
    assert pod["status"]["reason"] == "Evicted"
    assert pod["status"]["message"] == "Pod ephemeral local storage usage exceeds the total limit of containers 1Mi. "


@pytest.mark.slow
def test_a_container_over_its_own_ephemeral_storage_limit_is_evicted(tenant):
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "two"}, "spec": {
        "terminationGracePeriodSeconds": 0, "containers": [
            {"name": "small", "image": "busybox", "resources": {"limits": {"ephemeral-storage": "1Mi"}},
             "command": ["sh", "-c", "dd if=/dev/zero of=/tmp/f bs=1024 count=2048 2>/dev/null; sleep 300"]},
            {"name": "roomy", "image": "busybox", "resources": {"limits": {"ephemeral-storage": "10Mi"}},
             "command": ["sleep", "300"]}]}}
    tenant.kubectl("apply", "-f", "-", input=json.dumps(body))
    pod = evicted(tenant, "two")
    assert pod["status"]["message"] == 'Container small exceeded its local ephemeral storage limit "1Mi". '


@pytest.mark.slow
def test_an_exited_containers_writable_layer_is_removed(kube, tenant):
    tenant.run("again", "dd if=/dev/zero of=/tmp/f bs=1024 count=1024 2>/dev/null; exit 1")
    pod = eventually(lambda: (p := tenant.pod("again"))["status"].get("containerStatuses") and (
        p["status"]["containerStatuses"][0]["restartCount"] >= 2) and p, timeout=30)
    layers = Path(kube.nodes.kubelets[0].root) / "pods" / pod["metadata"]["uid"] / "rootfs" / "main"
    assert len(list(layers.iterdir())) <= 1  # the running one at most: each exited run's layer is gone



@pytest.mark.slow
def test_a_host_network_pods_probes_and_other_pods_reach_it_in_the_nodes_namespace(tenant):
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "hostweb"},
            "spec": {"hostNetwork": True, "terminationGracePeriodSeconds": 0, "containers": [
                {"name": "web", "image": "busybox", "ports": [{"containerPort": 8081}],
                 "readinessProbe": {"httpGet": {"port": 8081}, "periodSeconds": 1}}]}}
    tenant.kubectl("apply", "-f", "-", input=json.dumps(body))
    tenant.running("hostweb")  # Ready: the kubelet's probe reached the node's namespace
    tenant.run("client", "sleep 300")
    tenant.running("client")  # other Pods reach it at the node's address on the cluster bridge
    answer = tenant.sh("client", "wget -qO- -T 5 http://10.244.1.1:8081/", check=True)
    assert answer.stdout.strip() == "hostweb"
