"""The route that sends a Pod's traffic for the nodes' loopback addresses to the cluster network
(`ClusterNetwork.pod_network_script`), run as the runtime runs it, in a namespace made here: the block goes to the
gateway with route_localnet on eth0 and a node's own address stays local; where /proc/sys is read-only the Pod
is set up without it rather than not at all."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from mini_kube.network.cluster import ClusterNetwork

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("ip"),
                                reason="making namespaces needs root, unshare and ip")

NETWORK = ClusterNetwork({"loopbackBlock": "127.201.7", "serviceCIDR": "10.0.0.0/24", "dnsIP": "10.0.0.10"})
POD_SIDE = ("ip link set lo up && ip link add eth0 type veth peer name peer0 && ip link set peer0 up && "
            "ip addr add 10.244.1.5/16 dev eth0 && ip link set eth0 up")
SHOW = "echo rc=$?; ip route show table local; cat /proc/sys/net/ipv4/conf/eth0/route_localnet"


def in_new_namespace(script: str) -> str:
    done = subprocess.run(["unshare", "--net", "--mount", "--propagation", "private", "sh", "-c", script],
                          capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_block_goes_to_the_gateway_and_a_node_keeps_its_own_address() -> None:
    out = in_new_namespace(f"{POD_SIDE} && {NETWORK.pod_network_script('', '127.201.7.10')}; {SHOW}")
    assert "rc=0" in out
    assert "127.201.7.0/24 via 10.244.0.1 dev eth0" in out
    assert "local 127.201.7.10 dev lo" in out
    assert out.split()[-1] == "1"  # route_localnet on eth0


def test_a_read_only_proc_sys_leaves_the_block_alone() -> None:
    own = NETWORK.pod_network_script("route add 10.9.0.0/16 via 10.244.0.1\n")  # the Pod's own lines
    out = in_new_namespace(f"{POD_SIDE} && mount --bind -o ro /proc/sys /proc/sys && {own}; {SHOW}; ip route")
    assert "rc=0" in out
    assert "127.201.7.0/24" not in out
    assert "10.9.0.0/16 via 10.244.0.1" in out  # still applied
    assert "\n0\n" in out  # route_localnet untouched


def test_no_route_when_the_block_holds_localhost() -> None:
    network = ClusterNetwork({"loopbackBlock": "127.0.0", "serviceCIDR": "10.0.0.0/24", "dnsIP": "10.0.0.10"})
    assert "127.0.0" not in network.pod_network_script("link set lo up\n")
