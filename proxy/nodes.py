"""Which node a client address belongs to, from the Nodes' pod CIDRs (`spec.podCIDRs`): all nodes' pods share
one cluster network here, so a ClusterIP connection's node is told by its source address, not by which proxy
accepted it."""

from __future__ import annotations

import ipaddress
from typing import Any

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class NodeCIDRs:
    """Kept current by a Node informer handler; `node_of(ip)` answers from a small cache."""

    def __init__(self) -> None:
        self._by_node: dict[str, tuple[Network, ...]] = {}
        self._texts: dict[str, tuple[str, ...]] = {}  # the CIDRs as the Node wrote them, parsed into _by_node
        self._cache: dict[str, str] = {}

    def changed(self, _event: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        """An informer handler for Nodes."""
        if new is None or _event == "delete":
            name = ((old or new or {}).get("metadata") or {}).get("name", "")
            self._texts.pop(name, None)
            if self._by_node.pop(name, None) is not None:
                self._cache.clear()
            return
        name = (new.get("metadata") or {}).get("name", "")
        spec = new.get("spec") or {}
        texts = tuple(spec.get("podCIDRs") or ([spec["podCIDR"]] if spec.get("podCIDR") else []))
        if name in self._by_node and self._texts.get(name) == texts:
            return  # a status write (most Node updates): nothing to parse
        cidrs = []
        for cidr in texts:
            try:
                cidrs.append(ipaddress.ip_network(cidr, strict=False))
            except ValueError:
                continue
        self._texts[name] = texts
        if self._by_node.get(name) != tuple(cidrs):
            self._by_node[name] = tuple(cidrs)
            self._cache.clear()

    def node_of(self, ip: str, default: str) -> str:
        """The node whose pod CIDR holds `ip`, else `default` (host-side addresses)."""
        found = self._cache.get(ip)
        if found is None:
            found = default
            try:
                address = ipaddress.ip_address(ip)
            except ValueError:
                address = None
            if address is not None:
                for name, cidrs in self._by_node.items():
                    if any(address in cidr for cidr in cidrs):
                        found = name
                        break
            if len(self._cache) > 65536:
                self._cache.clear()
            self._cache[ip] = found
        return found
