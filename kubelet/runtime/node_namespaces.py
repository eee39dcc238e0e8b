"""A node's own namespaces, which Pods with `hostNetwork`, `hostPID` or `hostIPC` share, as they share a real
node's: network, UTS (the node's name as hostname), IPC and PID, held by a pause process made at the first Pod
that asks. Following the networking rule, the machine's own namespace is never given to a Pod: the node's
network namespace has its own loopback (the node's 127.x address answers there) and a veth on the cluster
bridge with the node's address in its podCIDR (the first one, which IPAM keeps for the node), so its Pods reach
Pods, Services and cluster DNS as any Pod does, and are reached at that address. Like any Pod it routes the
cluster's loopback block (the other nodes' addresses) to the cluster network, all but its own node's address,
which stays local: the Pods' hostPorts are served there, on it and on 127.0.0.1 (kubelet/hostports.py)."""

from __future__ import annotations

import asyncio
import shlex
import subprocess
from typing import Any

from mini_kube.network.namespaces import Holder, run_in


class NodeNamespaces:
    def __init__(self, network: Any, name: str, ip: str, address: str = "") -> None:
        self.network = network
        self.name = name  # the node's name: its hostname
        self.ip = ip  # its address on the cluster network
        self.address = address  # the node's own (loopback) address, its Node's InternalIP
        self.holder: Holder | None = None
        self._lock = asyncio.Lock()

    @property
    def netns(self) -> str | None:
        return self.holder.netns if self.holder is not None else None

    @property
    def pidns(self) -> str:
        assert self.holder is not None
        return self.holder.pidns

    async def ensure(self) -> Holder:
        """The node's namespaces, made on first use. The holder is started from the event loop's thread (it dies
        with the thread that started it: an executor's may end first); the set-up runs in an executor."""
        async with self._lock:
            if self.holder is not None and self.holder.alive():
                return self.holder
            holder = Holder(uts=True, ipc=True, pid=True)
            try:
                await asyncio.get_running_loop().run_in_executor(None, self._set_up, holder)
            except BaseException:
                holder.close()
                raise
            self.holder = holder
            return holder

    def _set_up(self, holder: Holder) -> None:
        holder.wait_ready()
        host_side = f"n{self.ip.replace('.', '')[-12:]}"
        net = self.network
        run_in(net.netns, f"link add {host_side} type veth peer name eth0 netns {holder.pid}\n"
                          f"link set {host_side} master mk0 up\n")
        addresses = (f"link set lo up\naddr add {self.ip}/{net.prefix_length} dev eth0\n"
                     f"link set eth0 up\nroute add default via {net.gateway}\n")
        script = f"{net.pod_network_script(addresses, self.address)} && hostname {shlex.quote(self.name[:63])}"
        subprocess.run(["nsenter", f"--uts=/proc/{holder.pid}/ns/uts", f"--net={holder.netns}", "sh", "-c", script],
                       check=True, capture_output=True)

    def close(self) -> None:
        if self.holder is not None:
            self.holder.close()
            self.holder = None
