"""Choosing an endpoint for a new connection: round robin, or the client's previous endpoint under
`sessionAffinity: ClientIP` while its record is younger than the timeout (renewed on every use)."""

from __future__ import annotations

import time
from collections.abc import Callable

from .model import Endpoint


class Balancer:
    """The endpoint sets of one ServicePort (`internal` for ClusterIP traffic, `external` for NodePort
    traffic) and its round-robin positions and affinity records. Updated in place by the proxy's sync; the
    listeners read it on every new connection, so a change applies to the next connection."""

    __slots__ = ("internal", "external", "affinity_timeout", "_next", "_affinity", "_clock")

    def __init__(self, affinity_timeout: float = 0, clock: Callable[[], float] = time.monotonic) -> None:
        self.internal: list[Endpoint] = []
        self.external: list[Endpoint] = []
        self.affinity_timeout = affinity_timeout
        self._next = {"internal": 0, "external": 0}
        self._affinity: dict[str, tuple[Endpoint, float]] = {}
        self._clock = clock

    def update(self, internal: list[Endpoint], external: list[Endpoint], affinity_timeout: float) -> None:
        self.internal, self.external = internal, external
        if affinity_timeout != self.affinity_timeout:
            self._affinity.clear()
        self.affinity_timeout = affinity_timeout
        if self._affinity:
            alive = set(internal) | set(external)
            self._affinity = {ip: rec for ip, rec in self._affinity.items() if rec[0] in alive}

    def endpoints(self, kind: str) -> list[Endpoint]:
        return self.internal if kind == "internal" else self.external

    def pick(self, kind: str, client_ip: str, exclude: tuple[Endpoint, ...] = (),
             candidates: list[Endpoint] | None = None) -> Endpoint | None:
        """The endpoint for a new connection of `kind` from `client_ip`, skipping `exclude` (endpoints that
        just refused it), among `candidates` when given (else the endpoints of `kind`)."""
        if candidates is None:
            candidates = self.internal if kind == "internal" else self.external
        if exclude:
            candidates = [e for e in candidates if e not in exclude]
        if not candidates:
            return None
        now = self._clock() if self.affinity_timeout else 0.0
        if self.affinity_timeout:
            record = self._affinity.get(client_ip)
            if record is not None and now - record[1] < self.affinity_timeout and record[0] in candidates:
                self._affinity[client_ip] = (record[0], now)
                return record[0]
        index = self._next.get(kind, 0) % len(candidates)
        self._next[kind] = index + 1
        chosen = candidates[index]
        if self.affinity_timeout:
            self._affinity[client_ip] = (chosen, now)
            if len(self._affinity) > 4096:
                self._expire(now)
        return chosen

    def _expire(self, now: float) -> None:
        self._affinity = {ip: rec for ip, rec in self._affinity.items() if now - rec[1] < self.affinity_timeout}
