"""An emptyDir of medium Memory is a tmpfs of its own, mode 0777, sized as upstream's kubelet sizes it (the
volume's sizeLimit, else the Pod's memory limit, else the node's allocatable memory), writable by the container."""

from __future__ import annotations

from mini_kube.machinery.refs import PODS

from tests.helpers import kubectl

from .conftest import eventually, pod, status_of


def test_a_memory_empty_dir_is_a_sized_tmpfs(kube, ns):
    script = ("stat -f -c '%T %b %S' /cache /unlimited; stat -c %a /cache; "
              "head -c 3000000 /dev/zero > /cache/big 2>/dev/null || echo full; echo ok > /unlimited/f; "
              "cat /unlimited/f")
    main = {"name": "main", "image": "busybox", "command": ["sh", "-c", script],
            "volumeMounts": [{"name": "cache", "mountPath": "/cache"}, {"name": "unlimited", "mountPath": "/unlimited"}]}
    spec = pod("mem", main, restartPolicy="Never",
               volumes=[{"name": "cache", "emptyDir": {"medium": "Memory", "sizeLimit": "2Mi"}},
                        {"name": "unlimited", "emptyDir": {"medium": "Memory"}}])
    kube.client.create(PODS, spec, ns)
    eventually(lambda: status_of(kube, ns, "mem").get("phase") == "Succeeded", timeout=30)
    lines = kubectl(kube, "-n", ns, "logs", "mem").stdout.splitlines()
    kind, blocks, block_size = lines[0].split()
    assert kind == "tmpfs" and int(blocks) * int(block_size) == 2 * 1024 * 1024
    assert lines[1].split()[0] == "tmpfs"
    assert lines[2:] == ["777", "full", "ok"]
