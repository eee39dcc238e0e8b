"""`mini-kube trace URL`: send one request and show its hops from the components' own records.

1. the name, asked of the cluster DNS (127.A.B.2, or `--dns`);
2. the request, from a source address we know;
3. the load balancer that took it (the cloud-controller-manager's `/connections` on 127.A.B.1:10258): the
   node and NodePort it chose, and its own address towards that node;
4. the node's kube-proxy (`/connections` on <node InternalIP>:10256), which saw that address as its client:
   the endpoint it chose;
(both records are served only with the control plane's node token, which trace reads through the API: an
admin's kubeconfig can, others see no records)
5. the Pod with that address (the API).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import dns.asyncquery
import dns.message
import dns.rdatatype
from mini_kube.client import ApiClient, NotFound
from mini_kube.client.node_token import node_token
from mini_kube.machinery.refs import CONFIGMAPS, NODES, PODS

from .status import STATUS_PORT

PROXY_PORT = 10256


@dataclass
class Hop:
    component: str
    text: str
    record: dict[str, Any] = field(default_factory=dict)


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return False


async def _records(session: aiohttp.ClientSession, url: str, token: str | None) -> list[dict[str, Any]]:
    """A component's records, asked with the node token (which only admins can read through the API)."""
    if token is None:
        return []
    try:
        async with session.get(url, headers={"Authorization": f"Bearer {token}"},
                               timeout=aiohttp.ClientTimeout(total=3)) as answer:
            return list(await answer.json()) if answer.status == 200 else []
    except (aiohttp.ClientError, TimeoutError, ValueError):
        return []


async def _request(ip: str, port: int, host: str, path: str) -> tuple[str, str]:
    """One HTTP/1.1 GET; returns (our address "ip:port", the answer's status line and first body line)."""
    reader, writer = await asyncio.wait_for(asyncio.open_connection(ip, port), 5)
    local = writer.get_extra_info("sockname")
    try:
        writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        raw = await asyncio.wait_for(reader.read(1 << 20), 5)
        while len(raw) < 1 << 20 and (more := await asyncio.wait_for(reader.read(1 << 20), 5)):
            raw += more  # the answer ends when the server closes (Connection: close)
    finally:
        writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    status = head.split(b"\r\n", 1)[0].decode(errors="replace")
    first = body.strip().split(b"\n", 1)[0].decode(errors="replace")[:80]
    return f"{local[0]}:{local[1]}", f"{status}" + (f": {first}" if first else "")


async def trace(client: ApiClient, url: str, *, dns_server: str = "", ccm_status: str = "") -> list[Hop]:
    """Send a GET to `url` and follow it hop by hop; every hop found is returned (the last may be missing)."""
    parsed = urllib.parse.urlsplit(url if "://" in url else f"http://{url}")
    host, port = parsed.hostname or "", parsed.port or 80
    block = ""
    with contextlib.suppress(NotFound):
        block = ((await client.get(CONFIGMAPS, "mini-kube-network", "kube-system")).get("data") or {}).get(
            "loopbackBlock", "")
    hops: list[Hop] = []
    ip = host
    if not _is_ip(host):
        server, _, dns_port = (dns_server or f"{block}.2:53").rpartition(":")
        answer = await dns.asyncquery.udp(dns.message.make_query(host, "A"), server, port=int(dns_port), timeout=3)
        found = [r.to_text() for rrset in answer.answer if rrset.rdtype == dns.rdatatype.A for r in rrset]
        if not found:
            hops.append(Hop("dns", f"{host}: no address (asked {server}:{dns_port})"))
            return hops
        ip = found[0]
        hops.append(Hop("dns", f"{host} -> {ip} (cluster DNS {server}:{dns_port})"))
    source, result = await _request(ip, port, host, parsed.path or "/")
    hops.append(Hop("client", f"{source} -> {ip}:{port}"))
    token = await node_token(client)
    async with aiohttp.ClientSession() as session:
        status = ccm_status or f"{block}.1:{STATUS_PORT}"
        relayed = [r for r in await _records(session, f"http://{status}/connections", token)
                   if r.get("client") == source]
        node_address, proxy_client = f"{ip}:{port}", source
        if relayed:
            lb = relayed[-1]
            node_address, proxy_client = lb["backend"], lb["via"]
            hops.append(Hop("load balancer", f"{lb['listener']} (Service {lb['service']}) -> node {lb['backend']}, "
                                             f"from {lb['via']}", lb))
        node_ip = node_address.rsplit(":", 1)[0]
        nodes = (await client.list(NODES)).get("items") or []
        node = next((n["metadata"]["name"] for n in nodes for a in (n.get("status") or {}).get("addresses") or ()
                     if a.get("address") == node_ip), node_ip)
        proxied = [r for r in await _records(session, f"http://{node_ip}:{PROXY_PORT}/connections", token)
                   if r.get("client") == proxy_client]
        if proxied:
            hop = proxied[-1]
            hops.append(Hop("kube-proxy", f"node {node} {hop['via']} {hop['listener']} (Service {hop['service']}) "
                                          f"-> {hop['endpoint'] or 'refused: no endpoint'}", hop))
            endpoint_ip = (hop.get("endpoint") or "").rsplit(":", 1)[0]
            pods = (await client.list(PODS, None, fieldSelector=f"status.podIP={endpoint_ip}")).get("items") or []
            for pod in pods:
                meta = pod["metadata"]
                hops.append(Hop("pod", f"{meta['namespace']}/{meta['name']} ({endpoint_ip}) on node "
                                       f"{(pod.get('spec') or {}).get('nodeName', '?')}"))
    hops.append(Hop("answer", result))
    return hops
