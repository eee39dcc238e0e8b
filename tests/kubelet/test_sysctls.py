"""A Pod's sysctls as the kubelet and runtime handle them: the safe ones are set in the Pod's own IPC and network
namespaces (the node's stay as they were), busybox's /bin/sysctl reads them; an unsafe one gets the Pod rejected
with upstream's SysctlForbidden."""

from __future__ import annotations

from mini_kube.machinery.refs import PODS

from tests.helpers import kubectl

from .conftest import eventually, pod, status_of


def _read(path: str) -> str:
    with open(path) as handle:
        return handle.read()


def test_safe_sysctls_are_set_in_the_pods_namespaces(kube, ns):
    before = (_read("/proc/sys/kernel/shm_rmid_forced"), _read("/proc/sys/net/ipv4/ip_local_port_range"))
    main = {"name": "main", "image": "registry.k8s.io/e2e-test-images/busybox:1.36.1-1",
            "command": ["sh", "-c", "/bin/sysctl kernel.shm_rmid_forced; cat /proc/sys/net/ipv4/ip_local_port_range"]}
    sysctls = [{"name": "kernel.shm_rmid_forced", "value": "1"},
               {"name": "net/ipv4/ip_local_port_range", "value": "20000 30000"}]
    kube.client.create(PODS, pod("safe", main, restartPolicy="Never", securityContext={"sysctls": sysctls}), ns)
    eventually(lambda: status_of(kube, ns, "safe").get("phase") in ("Succeeded", "Failed"), timeout=30)
    assert status_of(kube, ns, "safe")["phase"] == "Succeeded"
    assert kubectl(kube, "-n", ns, "logs", "safe").stdout.split("\n")[:2] == ["kernel.shm_rmid_forced = 1",
                                                                             "20000\t30000"]
    assert (_read("/proc/sys/kernel/shm_rmid_forced"), _read("/proc/sys/net/ipv4/ip_local_port_range")) == before


def test_an_unsafe_sysctl_gets_the_pod_rejected(kube, ns):
    main = {"name": "main", "image": "busybox", "command": ["true"]}
    kube.client.create(PODS, pod("unsafe", main, restartPolicy="Never",
                                 securityContext={"sysctls": [{"name": "kernel.msgmax", "value": "10000000000"}]}), ns)
    status = eventually(lambda: (s := status_of(kube, ns, "unsafe")).get("phase") == "Failed" and s, timeout=30)
    assert (status["reason"], status["message"]) == (
        "SysctlForbidden", 'Pod was rejected: forbidden sysctl: "kernel.msgmax" not allowlisted')
