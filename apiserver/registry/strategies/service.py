"""Services: cluster IP and node port allocation, done by the API server as upstream does.

What is allocated is derived from the stored Services (the cache), plus reservations of writes in flight,
so a restart never double-allocates and no separate allocation state can drift from the objects.
"""

from __future__ import annotations

import ipaddress
import random
from typing import Any

from ... import errors
from ...errors import FieldError, invalid
from ...resources import ResourceType
from ...validation import validator_of
from ...validation.services import default_ingress_ip_mode, validate_service_status_update
from ..strategy import Strategy, WriteContext
from . import service_claims

NODE_PORT_TYPES = ("NodePort", "LoadBalancer")
CLAIM_ATTEMPTS = 10


def _node_ports(spec: dict[str, Any]) -> set[int]:
    return {p["nodePort"] for p in spec.get("ports") or () if isinstance(p, dict) and p.get("nodePort")}


def _externally_accessible(spec: dict[str, Any]) -> bool:
    kind = spec.get("type") or "ClusterIP"
    return kind in NODE_PORT_TYPES or (kind == "ClusterIP" and bool(spec.get("externalIPs")))


def _needs_health_port(spec: dict[str, Any]) -> bool:
    return spec.get("type") == "LoadBalancer" and spec.get("externalTrafficPolicy") == "Local"


def drop_type_dependent_fields(new: dict[str, Any], old: dict[str, Any]) -> None:
    """Upstream's dropTypeDependentFields: a Service whose type changes loses the fields the old type had that
    the new one cannot have, where the request left them as they were (a changed one is the user's, and
    validation judges it); the load-balancer status goes once the Service is not a LoadBalancer."""
    spec, before = new.setdefault("spec", {}), old.get("spec") or {}
    kind, was = spec.get("type") or "ClusterIP", before.get("type") or "ClusterIP"
    if was != "ExternalName" and kind == "ExternalName":
        if spec.get("clusterIP") == before.get("clusterIP") and spec.get("clusterIPs") == before.get("clusterIPs"):
            spec.pop("clusterIP", None)
            spec.pop("clusterIPs", None)
        for key in ("ipFamilies", "ipFamilyPolicy"):
            if spec.get(key) == before.get(key):
                spec.pop(key, None)
    if was in NODE_PORT_TYPES and kind not in NODE_PORT_TYPES and _node_ports(spec) == _node_ports(before):
        for port in spec.get("ports") or ():
            if isinstance(port, dict):
                port.pop("nodePort", None)
    if _needs_health_port(before) and not _needs_health_port(spec) and \
            spec.get("healthCheckNodePort") == before.get("healthCheckNodePort"):
        spec.pop("healthCheckNodePort", None)
    if was == "LoadBalancer" and kind != "LoadBalancer":
        for key in ("allocateLoadBalancerNodePorts", "loadBalancerClass"):
            if spec.get(key) == before.get(key):
                spec.pop(key, None)
    if _externally_accessible(before) and not _externally_accessible(spec) and \
            spec.get("externalTrafficPolicy") == before.get("externalTrafficPolicy"):
        spec.pop("externalTrafficPolicy", None)
    if kind != "LoadBalancer" and (new.get("status") or {}).get("loadBalancer"):
        new["status"] = {**new["status"], "loadBalancer": {}}


class ServiceStrategy(Strategy):
    def __init__(self, service_cidr: str, node_ports: tuple[int, int], *, returns_deleted_object: bool = False) -> None:
        super().__init__(returns_deleted_object=returns_deleted_object)
        self.network = ipaddress.ip_network(service_cidr)
        self.node_ports = node_ports
        self._ips_in_flight: set[str] = set()
        self._ports_in_flight: set[int] = set()

    def initial_status(self, resource: ResourceType, obj: dict[str, Any]) -> dict[str, Any] | None:
        return {"loadBalancer": {}}

    # -- what is taken ---------------------------------------------------------------------------
    def _services(self, ctx: WriteContext, exclude_uid: str | None) -> list[dict[str, Any]]:
        return [e.obj for e in ctx.registry.cache.list(ctx.resource.key_prefix)
                if e.obj["metadata"].get("uid") != exclude_uid]

    def _used_ips(self, ctx: WriteContext, exclude_uid: str | None) -> set[str]:
        used = set(self._ips_in_flight)
        for svc in self._services(ctx, exclude_uid):
            used.update((svc.get("spec") or {}).get("clusterIPs") or ())
        return used

    def _used_ports(self, ctx: WriteContext, exclude_uid: str | None) -> set[int]:
        used = set(self._ports_in_flight)
        for svc in self._services(ctx, exclude_uid):
            for port in (svc.get("spec") or {}).get("ports") or ():
                if port.get("nodePort"):
                    used.add(port["nodePort"])
            if (svc.get("spec") or {}).get("healthCheckNodePort"):
                used.add(svc["spec"]["healthCheckNodePort"])
        return used

    # -- allocation ------------------------------------------------------------------------------
    def _reserve_ip(self, ctx: WriteContext, ip: str) -> None:
        self._ips_in_flight.add(ip)
        ctx.release.append(lambda: self._ips_in_flight.discard(ip))

    def _reserve_port(self, ctx: WriteContext, port: int) -> None:
        self._ports_in_flight.add(port)
        ctx.release.append(lambda: self._ports_in_flight.discard(port))

    def _allocate_ip(self, ctx: WriteContext, spec: dict[str, Any], uid: str | None) -> list[FieldError]:
        requested = spec.get("clusterIP") or ((spec.get("clusterIPs") or [None])[0])
        if spec.get("type") == "ExternalName" or requested == "None":
            if requested == "None":
                spec["clusterIP"], spec["clusterIPs"] = "None", ["None"]
            return []
        used = self._used_ips(ctx, uid)
        if requested:
            try:
                address = ipaddress.ip_address(requested)
            except ValueError:
                return [invalid("spec.clusterIPs[0]", requested, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)")]
            if address not in self.network or address in (self.network.network_address,
                                                          self.network.broadcast_address):
                return [invalid("spec.clusterIPs", [requested],
                                f"failed to allocate IP {requested}: the provided IP ({requested}) is not in the "
                                f"valid range. The range of valid IPs is {self.network}")]
            if requested in used:
                return [invalid("spec.clusterIPs", [requested],
                                f"failed to allocate IP {requested}: provided IP is already allocated")]
            chosen = requested
        else:
            chosen = self._random_free_ip(used)
        self._reserve_ip(ctx, chosen)
        spec["clusterIP"], spec["clusterIPs"] = chosen, [chosen]
        return []

    def _random_free_ip(self, used: set[str]) -> str:
        """A free address, preferably in the upper part of the range (as upstream allocates dynamically): random
        guesses first, so a large range (a /16) costs no walk over all its addresses; a scan when it is full."""
        first, last = int(self.network.network_address) + 1, int(self.network.broadcast_address) - 1
        upper = min(first + 15, last)
        for _ in range(64):
            guess = str(ipaddress.ip_address(random.randint(upper, last)))
            if guess not in used:
                return guess
        hosts = [str(h) for h in self.network.hosts()]
        free = [h for h in hosts if h not in used]
        if not free:
            raise errors.StatusError(500, "InternalError", "Internal error occurred: failed to allocate a "
                                     "serviceIP: range is full")
        upper_free = [h for h in free if int(ipaddress.ip_address(h)) >= upper]
        return random.choice(upper_free or free)

    def _allocate_ports(self, ctx: WriteContext, spec: dict[str, Any], uid: str | None) -> list[FieldError]:
        if spec.get("type") not in NODE_PORT_TYPES:
            for port in spec.get("ports") or ():
                port.pop("nodePort", None)
            return []
        low, high = self.node_ports
        used = self._used_ports(ctx, uid)
        errs: list[FieldError] = []
        # a LoadBalancer with allocateLoadBalancerNodePorts false gets only the node ports it asks for
        only_asked = spec.get("type") == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is False
        for i, port in enumerate(spec.get("ports") or ()):
            wanted = port.get("nodePort")
            if not wanted and only_asked:
                continue
            if wanted:
                if not low <= wanted <= high:
                    errs.append(invalid(f"spec.ports[{i}].nodePort", wanted,
                                        f"provided port is not in the valid range. The range of valid ports is "
                                        f"{low}-{high}"))
                    continue
                if wanted in used:
                    errs.append(invalid(f"spec.ports[{i}].nodePort", wanted, "provided port is already allocated"))
                    continue
                chosen = wanted
            else:
                free = [p for p in range(low, high + 1) if p not in used]
                if not free:
                    raise errors.StatusError(500, "InternalError", "Internal error occurred: failed to allocate "
                                             "a nodePort: range is full")
                chosen = random.choice(free)
            used.add(chosen)
            self._reserve_port(ctx, chosen)
            port["nodePort"] = chosen
        return errs + self._allocate_health_port(ctx, spec, used)

    def _allocate_health_port(self, ctx: WriteContext, spec: dict[str, Any], used: set[int]) -> list[FieldError]:
        """`healthCheckNodePort`, from the node port range, for LoadBalancer Services whose
        externalTrafficPolicy is Local (dropped when the Service no longer needs one, as upstream does)."""
        if spec.get("type") != "LoadBalancer" or spec.get("externalTrafficPolicy") != "Local":
            spec.pop("healthCheckNodePort", None)
            return []
        low, high = self.node_ports
        wanted = spec.get("healthCheckNodePort")
        if wanted:
            if not low <= wanted <= high:
                return [invalid("spec.healthCheckNodePort", wanted, f"provided port is not in the valid range. "
                                f"The range of valid ports is {low}-{high}")]
            if wanted in used:
                return [invalid("spec.healthCheckNodePort", wanted, "provided port is already allocated")]
            chosen = wanted
        else:
            free = [p for p in range(low, high + 1) if p not in used]
            if not free:
                raise errors.StatusError(500, "InternalError", "Internal error occurred: failed to allocate "
                                         "a nodePort: range is full")
            chosen = random.choice(free)
        self._reserve_port(ctx, chosen)
        spec["healthCheckNodePort"] = chosen
        return []

    def prepare_for_update(self, ctx: WriteContext, new: dict[str, Any], old: dict[str, Any]) -> None:
        super().prepare_for_update(ctx, new, old)
        if ctx.subresource:
            default_ingress_ip_mode(new)  # a default of every decoded Service (the status one is written here)
            return
        # upstream carries allocated values the client did not send over to the new object
        spec, old_spec = new.setdefault("spec", {}), old.get("spec") or {}
        if old_spec.get("clusterIP") and not spec.get("clusterIP") and spec.get("type") != "ExternalName":
            spec["clusterIP"] = old_spec["clusterIP"]
            spec["clusterIPs"] = old_spec.get("clusterIPs") or [old_spec["clusterIP"]]
        old_ports = {(p.get("port"), p.get("protocol")): p.get("nodePort") for p in old_spec.get("ports") or ()}
        if spec.get("type") in NODE_PORT_TYPES:
            for port in spec.get("ports") or ():
                carried = old_ports.get((port.get("port"), port.get("protocol")))
                if not port.get("nodePort") and carried:
                    port["nodePort"] = carried
        if old_spec.get("healthCheckNodePort") and not spec.get("healthCheckNodePort"):
            spec["healthCheckNodePort"] = old_spec["healthCheckNodePort"]
        drop_type_dependent_fields(new, old)

    async def before_write(self, ctx: WriteContext, new: dict[str, Any], old: dict[str, Any] | None) -> None:
        spec = new.setdefault("spec", {})
        uid = new["metadata"].get("uid")
        errs: list[FieldError] = []
        requested_ip = spec.get("clusterIP")
        requested_ports = [p.get("nodePort") for p in spec.get("ports") or ()]
        if old is None or (not spec.get("clusterIP") and spec.get("type") != "ExternalName"):
            errs += self._allocate_ip(ctx, spec, uid)
        errs += self._allocate_ports(ctx, spec, uid)
        if not errs and ctx.registry.store.shared and not ctx.dry_run:
            errs += await self._claim(ctx, spec, old, uid or "", bool(requested_ip), requested_ports)
        if errs:
            raise errors.invalid_object("Service", "", new["metadata"].get("name", ""), errs)

    async def _claim(self, ctx: WriteContext, spec: dict[str, Any], old: dict[str, Any] | None, uid: str,
                     ip_requested: bool, requested_ports: list[int | None]) -> list[FieldError]:
        """On a store shared with other API servers, claim each newly allocated value; a value another
        server's Service holds is an error when it was asked for, else it is chosen again."""
        held = (old or {}).get("spec") or {}
        errs: list[FieldError] = []
        ip = (spec.get("clusterIPs") or [None])[0]
        if ip and ip != "None" and ip not in (held.get("clusterIPs") or ()):
            for _ in range(CLAIM_ATTEMPTS):
                if await self._claim_one(ctx, "ip", ip, uid):
                    break
                if ip_requested:
                    errs.append(invalid("spec.clusterIPs", [ip],
                                        f"failed to allocate IP {ip}: provided IP is already allocated"))
                    break
                spec.pop("clusterIP", None)
                spec.pop("clusterIPs", None)
                errs += self._allocate_ip(ctx, spec, uid)  # the lost one stays reserved: another is chosen
                ip = spec.get("clusterIP")
        old_ports = {p.get("nodePort") for p in held.get("ports") or ()}
        for index, port in enumerate(spec.get("ports") or ()):
            value = port.get("nodePort")
            if not value or value in old_ports:
                continue
            for _ in range(CLAIM_ATTEMPTS):
                if await self._claim_one(ctx, "port", value, uid):
                    break
                if requested_ports[index]:
                    errs.append(invalid(f"spec.ports[{index}].nodePort", value, "provided port is already allocated"))
                    break
                free = [p for p in range(self.node_ports[0], self.node_ports[1] + 1)
                        if p not in self._used_ports(ctx, uid)]
                if not free:
                    raise errors.StatusError(500, "InternalError", "Internal error occurred: failed to allocate "
                                             "a nodePort: range is full")
                value = random.choice(free)
                self._reserve_port(ctx, value)
                port["nodePort"] = value
        return errs

    async def _claim_one(self, ctx: WriteContext, kind: str, value: str | int, uid: str) -> bool:
        if await service_claims.claim(ctx, kind, value, uid):
            ctx.release.append(lambda: service_claims.release_if_unused(ctx, kind, value))
            return True
        return False

    async def after_delete(self, ctx: WriteContext, obj: dict[str, Any]) -> None:
        if ctx.registry.store.shared:
            await service_claims.release(ctx, obj.get("spec") or {})

    def validate_update(self, ctx: WriteContext, new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
        if ctx.subresource == "status":  # ValidateServiceStatusUpdate: metadata and the load-balancer status
            res = ctx.resource
            return (validator_of(res).metadata_errors(new, old, res.namespaced)
                    + validate_service_status_update(new, old))
        errs = super().validate_update(ctx, new, old)
        old_ip = (old.get("spec") or {}).get("clusterIP")
        new_ip = (new.get("spec") or {}).get("clusterIP")
        if old_ip and new_ip and old_ip != new_ip and (new.get("spec") or {}).get("type") != "ExternalName":
            errs.append(invalid("spec.clusterIPs[0]", new_ip, "may not change once set"))
        return errs
