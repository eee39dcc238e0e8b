"""Startup, liveness and readiness probes (exec, httpGet, tcpSocket; grpc as a TCP check) really run against the
container, with upstream's timing fields, thresholds, events and consequences: a failed startup or liveness
probe restarts the container; readiness decides `ready`. Without probes a running container is started and
ready at once. On the simulated runtime every probe succeeds."""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

from . import actions
from .records import ContainerRecord


class ProbedPod(Protocol):
    """What probes use of their Pod's worker."""

    def target(self, spec: dict[str, Any]) -> actions.Target: ...

    def mark_dirty(self) -> None: ...

    def container_event(self, record: ContainerRecord, reason: str, message: str, type_: str = "Normal") -> None: ...

    def restart(self, record: ContainerRecord, message: str) -> None: ...


class ProbeRunner:
    """The probe loops of one Pod's containers."""

    def __init__(self, pod: ProbedPod) -> None:
        self.pod = pod
        self.tasks: dict[str, asyncio.Task[None]] = {}

    def start(self, record: ContainerRecord, spec: dict[str, Any]) -> None:
        self.stop(record)
        self.tasks[record.name] = asyncio.create_task(self._run(record, spec))

    def stop(self, record: ContainerRecord) -> None:
        task = self.tasks.pop(record.name, None)
        if task is not None:
            task.cancel()

    def stop_all(self) -> None:
        for task in self.tasks.values():
            task.cancel()
        self.tasks.clear()

    async def _run(self, record: ContainerRecord, spec: dict[str, Any]) -> None:
        simulated = not self.pod.target(spec).runtime.runs_processes  # nothing to probe: every probe succeeds
        startup = None if simulated else spec.get("startupProbe")
        liveness = None if simulated else spec.get("livenessProbe")
        readiness = None if simulated else spec.get("readinessProbe")
        if startup and not await self._until(record, spec, startup, "Startup"):
            return
        record.started = True
        if not readiness:
            record.ready = True
        self.pod.mark_dirty()
        loops = []
        if liveness:
            loops.append(self._liveness(record, spec, liveness))
        if readiness:
            loops.append(self._readiness(record, spec, readiness))
        if loops:
            await asyncio.gather(*loops)

    async def _until(self, record: ContainerRecord, spec: dict[str, Any], probe: dict[str, Any], kind: str) -> bool:
        """Startup: probe until it succeeds; failureThreshold failures restart the container."""
        await asyncio.sleep(probe.get("initialDelaySeconds", 0))
        failures = 0
        while True:
            ok, why = await self.check(spec, probe)
            if ok:
                return True
            failures += 1
            self._unhealthy(record, kind, why)
            if failures >= probe.get("failureThreshold", 3):
                self._restart(record, f"Container {record.name} failed startup probe, will be restarted")
                return False
            await asyncio.sleep(probe.get("periodSeconds", 10))

    async def _liveness(self, record: ContainerRecord, spec: dict[str, Any], probe: dict[str, Any]) -> None:
        await asyncio.sleep(probe.get("initialDelaySeconds", 0))
        failures = 0
        while True:
            ok, why = await self.check(spec, probe)
            failures = 0 if ok else failures + 1
            if not ok:
                self._unhealthy(record, "Liveness", why)
                if failures >= probe.get("failureThreshold", 3):
                    self._restart(record, f"Container {record.name} failed liveness probe, will be restarted")
                    return
            await asyncio.sleep(probe.get("periodSeconds", 10))

    async def _readiness(self, record: ContainerRecord, spec: dict[str, Any], probe: dict[str, Any]) -> None:
        await asyncio.sleep(probe.get("initialDelaySeconds", 0))
        successes = failures = 0
        while True:
            ok, why = await self.check(spec, probe)
            if ok:
                successes, failures = successes + 1, 0
                if not record.ready and successes >= probe.get("successThreshold", 1):
                    record.ready = True
                    self.pod.mark_dirty()
            else:
                successes, failures = 0, failures + 1
                self._unhealthy(record, "Readiness", why)
                if record.ready and failures >= probe.get("failureThreshold", 3):
                    record.ready = False
                    self.pod.mark_dirty()
            await asyncio.sleep(probe.get("periodSeconds", 10))

    def _unhealthy(self, record: ContainerRecord, kind: str, why: str) -> None:
        self.pod.container_event(record, "Unhealthy", f"{kind} probe failed: {why}", "Warning")

    def _restart(self, record: ContainerRecord, message: str) -> None:
        self.pod.restart(record, message)

    async def check(self, spec: dict[str, Any], probe: dict[str, Any]) -> tuple[bool, str]:
        """One probe: (success, why it failed, in the words of upstream's prober)."""
        timeout = probe.get("timeoutSeconds", 1)
        target = self.pod.target(spec)
        if "exec" in probe:
            command = probe["exec"].get("command") or []
            if target.container is None:
                return False, "container not running"
            try:
                code, output = await asyncio.wait_for(actions.run_exec(target, command), timeout)
            except TimeoutError:
                return False, f'command "{" ".join(command)}" timed out'
            except (OSError, ValueError, NotImplementedError) as exc:
                return False, str(exc) or type(exc).__name__
            return code == 0, output.decode(errors="replace")  # the command's output, as upstream (may be empty)
        action = probe.get("httpGet") or probe.get("tcpSocket") or probe.get("grpc") or {}
        try:
            host, port = actions.address(target, action)
        except ValueError as exc:
            return False, str(exc)
        where = f"{host}:{port}"
        url = actions.url(action, host, port)
        try:
            async with asyncio.timeout(timeout):  # the whole probe: connection, request and answer
                return await actions.connect(target, host, port, action, http="httpGet" in probe)
        except TimeoutError:
            if "httpGet" in probe:
                return False, f'Get "{url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)'
            return False, f"dial tcp {where}: i/o timeout"
        except OSError as exc:
            dial = f"dial tcp {where}: {actions.go_dial_error(exc)}"
            return False, f'Get "{url}": {dial}' if "httpGet" in probe else dial
        except (ValueError, NotImplementedError) as exc:
            return False, str(exc) or type(exc).__name__
