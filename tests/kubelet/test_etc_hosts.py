"""/etc/hosts and /etc/resolv.conf as upstream's kubelet and runtime give them: managed for a Pod with its own
network (hostAliases under one header), the node's own under the host-network header for a hostNetwork Pod, and
not at all where a container mounts a volume at that path (a volume's file wins)."""

from __future__ import annotations

from mini_kube.machinery.refs import CONFIGMAPS, PODS

from tests.helpers import kubectl

from .conftest import eventually, pod, status_of


def _sleeper(name: str, mounts: list[dict] | None = None) -> dict:
    return {"name": name, "image": "busybox", "command": ["sleep", "600"], "volumeMounts": mounts or []}


def _running(kube, ns: str, name: str) -> None:
    eventually(lambda: status_of(kube, ns, name).get("phase") == "Running", timeout=30)


def _cat(kube, ns: str, name: str, container: str, path: str) -> str:
    return kubectl(kube, "-n", ns, "exec", name, "-c", container, "--", "cat", path).stdout


def test_a_volume_at_etc_hosts_or_resolv_conf_wins(kube, ns, tmp_path):
    hosts = tmp_path / "hosts"
    hosts.write_text("10.1.2.3\tmine\n")
    kube.client.create(CONFIGMAPS, {"metadata": {"name": "dns"}, "data": {"resolv": "nameserver 10.9.9.9\n"}}, ns)
    volumes = [{"name": "hosts", "hostPath": {"path": str(hosts), "type": "File"}},
               {"name": "dns", "configMap": {"name": "dns"}}]
    spec = pod("mounts", _sleeper("managed"),
               _sleeper("own", [{"name": "hosts", "mountPath": "/etc/hosts"},
                                {"name": "dns", "mountPath": "/etc/resolv.conf", "subPath": "resolv"}]),
               volumes=volumes, hostAliases=[{"ip": "10.0.0.7", "hostnames": ["a", "b"]},
                                             {"ip": "10.0.0.8", "hostnames": ["c"]}])
    kube.client.create(PODS, spec, ns)
    _running(kube, ns, "mounts")
    managed = _cat(kube, ns, "mounts", "managed", "/etc/hosts")
    assert managed.startswith("# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n")
    assert managed.endswith("\n# Entries added by HostAliases.\n10.0.0.7\ta\tb\n10.0.0.8\tc\n")
    assert "nameserver 10.0.0.10" in _cat(kube, ns, "mounts", "managed", "/etc/resolv.conf")
    assert _cat(kube, ns, "mounts", "own", "/etc/hosts") == "10.1.2.3\tmine\n"
    assert _cat(kube, ns, "mounts", "own", "/etc/resolv.conf") == "nameserver 10.9.9.9\n"


def test_a_host_network_pod_gets_the_nodes_hosts_file(kube, ns):
    kube.client.create(PODS, pod("hostnet", _sleeper("main"), hostNetwork=True,
                                 hostAliases=[{"ip": "10.0.0.7", "hostnames": ["a"]}]), ns)
    _running(kube, ns, "hostnet")
    hosts = _cat(kube, ns, "hostnet", "main", "/etc/hosts")
    with open("/etc/hosts") as handle:
        own = handle.read()
    assert hosts.startswith("# Kubernetes-managed hosts file (host network).\n" + own)
    assert hosts.endswith("\n# Entries added by HostAliases.\n10.0.0.7\ta\n")
