"""What the cluster DNS knows, kept from informer events as plain lookup tables, and the answers to questions
(Kubernetes DNS-Based Service Discovery, as CoreDNS's kubernetes plugin serves it):

- `<svc>.<ns>.svc.<zone>`: A/AAAA of the ClusterIPs; for a headless Service the ready endpoints' addresses;
  ExternalName Services as a CNAME. `<host>.<svc>.<ns>.svc.<zone>` for a headless Service's endpoints (their
  hostname, else the address with dashes). SRV `_<port>._<proto>.<svc>.<ns>.svc.<zone>` (and on the Service's
  own name, every port).
- `<a-b-c-d>.<ns>.pod.<zone>` for a Pod of that namespace with that IP.
- PTR for ClusterIPs and headless endpoints; `dns-version.<zone>` TXT.
- `<svc>.<ns>.lb.mini-kube.local`: the load balancer addresses a Service's status shows for that hostname.
- Names in these zones that do not exist are NXDOMAIN, names without the asked type NODATA, both with the
  zone's SOA; names outside them are REFUSED.
"""

from __future__ import annotations

import ipaddress
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import dns.exception
import dns.name
import dns.rcode
import dns.rdataclass
import dns.rdatatype
import dns.rdtypes.IN.A
import dns.rdtypes.IN.AAAA
import dns.reversename
import dns.rrset
from mini_kube.machinery.meta import meta

LB_ZONE = "lb.mini-kube.local"
SCHEMA_VERSION = "1.1.0"
Key = tuple[str, str]  # (namespace, name)
ADDRESS_TYPES = {dns.rdatatype.A: dns.rdtypes.IN.A.A, dns.rdatatype.AAAA: dns.rdtypes.IN.AAAA.AAAA}


@dataclass(frozen=True)
class ServiceInfo:
    kind: str  # "ClusterIP" (any Service with cluster IPs), "Headless" or "ExternalName"
    ips: tuple[str, ...] = ()
    external_name: str = ""
    ports: tuple[tuple[str, str, int], ...] = ()  # (name, protocol, port)


@dataclass(frozen=True)
class EndpointInfo:
    ip: str
    hostname: str
    ready: bool
    ports: tuple[tuple[str, str, int], ...]


@dataclass
class Answer:
    rcode: dns.rcode.Rcode = dns.rcode.NOERROR
    answer: list[dns.rrset.RRset] = field(default_factory=list)
    authority: list[dns.rrset.RRset] = field(default_factory=list)
    additional: list[dns.rrset.RRset] = field(default_factory=list)


def _key(obj: dict[str, Any]) -> Key:
    return meta(obj).get("namespace", ""), meta(obj).get("name", "")


def service_info(svc: dict[str, Any]) -> ServiceInfo:
    spec = svc.get("spec") or {}
    ports = tuple((p.get("name") or "", (p.get("protocol") or "TCP").lower(), int(p.get("port") or 0))
                  for p in spec.get("ports") or ())
    if spec.get("type") == "ExternalName":
        return ServiceInfo("ExternalName", external_name=spec.get("externalName") or "", ports=ports)
    ips = tuple(ip for ip in spec.get("clusterIPs") or ([spec["clusterIP"]] if spec.get("clusterIP") else [])
                if ip and ip != "None")
    return ServiceInfo("ClusterIP" if ips else "Headless", ips=ips, ports=ports)


def _dashed(ip: str) -> str:
    return ip.replace(".", "-").replace(":", "-")


def _family(ip: str) -> dns.rdatatype.RdataType:
    return dns.rdatatype.AAAA if ":" in ip else dns.rdatatype.A


class ClusterRecords:
    """Lookup tables fed by the Service, EndpointSlice and Pod informers; `resolve` answers one question."""

    def __init__(self, domain: str = "cluster.local", ttl: int = 30) -> None:
        self.domain = dns.name.from_text(domain)
        self.lb_zone = dns.name.from_text(LB_ZONE)
        self.reverse_zone = dns.name.from_text("in-addr.arpa")
        self.reverse6_zone = dns.name.from_text("ip6.arpa")
        self.ttl = ttl
        self.serial = 1
        self.services: dict[Key, ServiceInfo] = {}
        self.by_cluster_ip: dict[str, set[Key]] = defaultdict(set)
        self.headless: set[Key] = set()
        self.namespaces: dict[str, int] = defaultdict(int)  # Services per namespace
        self.slices: dict[Key, tuple[Key, list[EndpointInfo]]] = {}  # slice -> (service, endpoints)
        self.slices_of: dict[Key, set[Key]] = defaultdict(set)
        self.pods: dict[tuple[str, str], int] = defaultdict(int)  # (namespace, ip) -> Pods
        self.lb_names: dict[str, tuple[str, ...]] = {}  # lowercased hostname -> addresses
        self.lb_of: dict[Key, tuple[str, ...]] = {}  # Service -> its load balancer hostnames

    # -- informer handlers -----------------------------------------------------------------------------------
    def on_service(self, event: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        self.serial += 1
        key = _key(new or old or {})
        previous = self.services.pop(key, None)
        if previous is not None:
            self.namespaces[key[0]] -= 1
            self.headless.discard(key)
            for ip in previous.ips:
                self.by_cluster_ip[ip].discard(key)
                if not self.by_cluster_ip[ip]:
                    del self.by_cluster_ip[ip]
        for name in self.lb_of.pop(key, ()):
            self.lb_names.pop(name, None)
        if event == "delete" or new is None:
            return
        info = self.services[key] = service_info(new)
        self.namespaces[key[0]] += 1
        for ip in info.ips:
            self.by_cluster_ip[ip].add(key)
        if info.kind == "Headless":
            self.headless.add(key)
        names: dict[str, list[str]] = defaultdict(list)
        for ingress in ((new.get("status") or {}).get("loadBalancer") or {}).get("ingress") or ():
            if ingress.get("hostname") and ingress.get("ip"):
                names[ingress["hostname"].lower().rstrip(".")].append(ingress["ip"])
        self.lb_of[key] = tuple(names)
        self.lb_names.update({name: tuple(ips) for name, ips in names.items()})

    def on_slice(self, event: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        self.serial += 1
        key = _key(new or old or {})
        previous = self.slices.pop(key, None)
        if previous is not None:
            self.slices_of[previous[0]].discard(key)
            if not self.slices_of[previous[0]]:
                del self.slices_of[previous[0]]
        if event == "delete" or new is None:
            return
        service = (meta(new).get("labels") or {}).get("kubernetes.io/service-name")
        if not service:
            return
        ports = tuple((p.get("name") or "", (p.get("protocol") or "TCP").lower(), int(p.get("port") or 0))
                      for p in new.get("ports") or ())
        endpoints = []
        for endpoint in new.get("endpoints") or ():
            ready = (endpoint.get("conditions") or {}).get("ready") is not False
            for ip in endpoint.get("addresses") or ():
                endpoints.append(EndpointInfo(ip, (endpoint.get("hostname") or "").lower(), ready, ports))
        owner = (key[0], service)
        self.slices[key] = (owner, endpoints)
        self.slices_of[owner].add(key)

    def on_pod(self, event: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        self.serial += 1
        for obj, step in ((old, -1), (new, 1)):
            if obj is None or (step == 1 and event == "delete"):
                continue
            namespace = meta(obj).get("namespace", "")
            status = obj.get("status") or {}
            for ip in {p.get("ip") for p in status.get("podIPs") or ()} | {status.get("podIP")}:
                if ip:
                    self.pods[(namespace, ip)] += step
                    if self.pods[(namespace, ip)] <= 0:
                        del self.pods[(namespace, ip)]

    # -- lookups ---------------------------------------------------------------------------------------------
    def endpoints(self, key: Key) -> list[EndpointInfo]:
        found: dict[str, EndpointInfo] = {}
        for slice_key in sorted(self.slices_of.get(key, ())):
            for endpoint in self.slices[slice_key][1]:
                if endpoint.ready:
                    found.setdefault(endpoint.ip, endpoint)
        return list(found.values())

    def _rrset(self, name: dns.name.Name, rdtype: dns.rdatatype.RdataType, values: list[str]) -> dns.rrset.RRset:
        if rdtype in ADDRESS_TYPES:  # made directly: parsing text costs most of an answer
            make = ADDRESS_TYPES[rdtype]
            return dns.rrset.from_rdata_list(name, self.ttl, [make(dns.rdataclass.IN, rdtype, v) for v in values])
        return dns.rrset.from_text_list(name, self.ttl, dns.rdataclass.IN, rdtype, values)

    def _soa(self, zone: dns.name.Name) -> dns.rrset.RRset:
        text = f"ns.dns.{zone.to_text()} hostmaster.{zone.to_text()} {self.serial % (1 << 32)} 7200 1800 86400 {self.ttl}"
        return self._rrset(zone, dns.rdatatype.SOA, [text])

    def _addresses(self, name: dns.name.Name, qtype: int, ips: list[str] | tuple[str, ...], out: Answer) -> None:
        for rdtype in (dns.rdatatype.A, dns.rdatatype.AAAA):
            if qtype in (rdtype, dns.rdatatype.ANY):
                chosen = [ip for ip in ips if _family(ip) == rdtype]
                if chosen:
                    out.answer.append(self._rrset(name, rdtype, chosen))

    def resolve(self, qname: dns.name.Name, qtype: int) -> Answer:
        """The answer to one question (qname absolute, any case)."""
        name = qname.canonicalize()
        for zone, handler in ((self.domain, self._cluster), (self.lb_zone, self._lb),
                              (self.reverse_zone, self._reverse), (self.reverse6_zone, self._reverse)):
            if name.is_subdomain(zone):
                out = Answer()
                try:
                    labels = [label.decode() for label in name.relativize(zone).labels]
                except UnicodeDecodeError:  # no object has such a name (CoreDNS answers NXDOMAIN too)
                    labels = None
                exists = labels is not None and handler(name, labels, qtype, out)
                if not exists:
                    out.rcode = dns.rcode.NXDOMAIN
                if not out.answer:
                    out.authority.append(self._soa(zone))
                return out
        return Answer(rcode=dns.rcode.REFUSED)

    def _cluster(self, name: dns.name.Name, labels: list[str], qtype: int, out: Answer) -> bool:
        if not labels:  # the zone apex
            if qtype in (dns.rdatatype.SOA, dns.rdatatype.ANY):
                out.answer.append(self._soa(self.domain))
            if qtype in (dns.rdatatype.NS, dns.rdatatype.ANY):
                out.answer.append(self._rrset(name, dns.rdatatype.NS, [f"ns.dns.{self.domain.to_text()}"]))
            return True
        if labels == ["dns-version"]:
            if qtype in (dns.rdatatype.TXT, dns.rdatatype.ANY):
                out.answer.append(self._rrset(name, dns.rdatatype.TXT, [f'"{SCHEMA_VERSION}"']))
            return True
        kind, rest = labels[-1], labels[:-1]
        if kind == "svc":
            return self._svc(name, rest, qtype, out)
        if kind == "pod":
            if not rest:
                return True
            if len(rest) == 1:
                return rest[0] in self.namespaces or any(ns == rest[0] for ns, _ in self.pods)
            if len(rest) == 2:
                ip = rest[0].replace("-", ".")
                if (rest[1], ip) in self.pods:
                    self._addresses(name, qtype, [ip], out)
                    return True
        return False

    def _svc(self, name: dns.name.Name, rest: list[str], qtype: int, out: Answer) -> bool:
        if len(rest) <= 1:  # svc.<zone>, <ns>.svc.<zone>
            return not rest or self.namespaces.get(rest[0], 0) > 0
        key = (rest[-1], rest[-2])
        info = self.services.get(key)
        if info is None:
            return False
        target = dns.name.from_text(f"{key[1]}.{key[0]}.svc", self.domain)
        if len(rest) == 2:
            self._service(name, key, info, qtype, out)
            return True
        if len(rest) == 3:
            if rest[0].startswith("_"):  # _<proto>.<svc>...: exists when a port has that protocol
                return any(f"_{proto}" == rest[0] for _, proto, _ in info.ports)
            if info.kind != "Headless":
                return False
            endpoint = next((e for e in self.endpoints(key) if (e.hostname or _dashed(e.ip)) == rest[0]), None)
            if endpoint is None:
                return False
            self._addresses(name, qtype, [endpoint.ip], out)
            return True
        if len(rest) == 4 and rest[0].startswith("_") and rest[1].startswith("_"):
            port_name, proto = rest[0][1:], rest[1][1:]
            ports = [p for p in info.ports if p[0] == port_name and p[1] == proto]
            if not ports:
                return False
            if qtype in (dns.rdatatype.SRV, dns.rdatatype.ANY):
                self._srv(name, key, info, target, ports, out)
            return True
        return False

    def _service(self, name: dns.name.Name, key: Key, info: ServiceInfo, qtype: int, out: Answer) -> None:
        target = name
        if info.kind == "ExternalName":
            if info.external_name:
                cname = dns.name.from_text(info.external_name)
                out.answer.append(self._rrset(name, dns.rdatatype.CNAME, [cname.to_text()]))
                if qtype not in (dns.rdatatype.CNAME, dns.rdatatype.ANY) and cname != name:
                    chased = self.resolve(cname, qtype)  # a target in our own zones is answered too
                    out.answer += [r for r in chased.answer if r.name != name]
            return
        if qtype == dns.rdatatype.SRV:
            self._srv(name, key, info, target, list(info.ports), out)
            return
        ips = list(info.ips) if info.kind == "ClusterIP" else [e.ip for e in self.endpoints(key)]
        self._addresses(name, qtype, ips, out)

    def _srv(self, name: dns.name.Name, key: Key, info: ServiceInfo, target: dns.name.Name,
             ports: list[tuple[str, str, int]], out: Answer) -> None:
        if info.kind == "ExternalName":
            return
        records: list[str] = []
        extra: list[dns.rrset.RRset] = []
        if info.kind == "ClusterIP":
            records = [f"0 100 {port} {target.to_text()}" for _, _, port in ports]
            extra = [self._rrset(target, _family(ip), [ip]) for ip in info.ips]
        else:
            endpoints = self.endpoints(key)
            weight = max(100 // max(len(endpoints), 1), 1)
            for endpoint in endpoints:
                host = dns.name.from_text(endpoint.hostname or _dashed(endpoint.ip), target)
                wanted = {(n, p) for n, p, _ in ports}
                numbers = [number for n, p, number in endpoint.ports if (n, p) in wanted]
                records += [f"0 {weight} {number} {host.to_text()}" for number in numbers]
                if numbers:
                    extra.append(self._rrset(host, _family(endpoint.ip), [endpoint.ip]))
        if records:
            out.answer.append(self._rrset(name, dns.rdatatype.SRV, sorted(set(records))))
            out.additional += extra

    def _lb(self, name: dns.name.Name, labels: list[str], qtype: int, out: Answer) -> bool:
        if len(labels) <= 1:
            return not labels or any(n.endswith(f".{labels[0]}.{LB_ZONE}") for n in self.lb_names)
        ips = self.lb_names.get(".".join(labels) + f".{LB_ZONE}")
        if ips is None:
            return False
        self._addresses(name, qtype, ips, out)
        return True

    def _reverse(self, name: dns.name.Name, labels: list[str], qtype: int, out: Answer) -> bool:
        try:
            ip = dns.reversename.to_address(name)
        except (dns.exception.SyntaxError, ValueError):
            return True  # a partial reverse name: an empty non-terminal
        names = self._ptr_names(str(ipaddress.ip_address(ip)))
        if not names:
            return False
        if qtype in (dns.rdatatype.PTR, dns.rdatatype.ANY):
            out.answer.append(self._rrset(name, dns.rdatatype.PTR, names))
        return True

    def _ptr_names(self, ip: str) -> list[str]:
        zone = self.domain.to_text()
        names = [f"{svc}.{namespace}.svc.{zone}" for namespace, svc in sorted(self.by_cluster_ip.get(ip, ()))]
        for namespace, svc in sorted(self.headless):
            for endpoint in self.endpoints((namespace, svc)):
                if endpoint.ip == ip and endpoint.hostname:
                    names.append(f"{endpoint.hostname}.{svc}.{namespace}.svc.{zone}")
        return names

