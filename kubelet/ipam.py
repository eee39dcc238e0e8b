"""Pod IPs from the node's podCIDR (as the host-local IPAM plugin hands them out): the first address is kept
for the node, the rest go to Pods, each back in the pool when its Pod's sandbox is gone."""

from __future__ import annotations

import ipaddress


class Ipam:
    def __init__(self, cidr: str) -> None:
        self.network = ipaddress.ip_network(cidr)
        self._free = [str(ip) for ip in list(self.network.hosts())[1:]]
        self._free.reverse()
        self._used: dict[str, str] = {}

    def allocate(self, owner: str) -> str:
        if owner in self._used:
            return self._used[owner]
        if not self._free:
            raise OSError(f"no free IP in {self.network}")
        ip = self._used[owner] = self._free.pop()
        return ip

    def release(self, owner: str) -> None:
        ip = self._used.pop(owner, None)
        if ip is not None:
            self._free.insert(0, ip)  # reused last, as host-local does
