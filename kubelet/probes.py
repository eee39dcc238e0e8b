"""Startup, liveness and readiness probes (exec, httpGet, tcpSocket; grpc as a TCP check) really run against the
container, with upstream's timing fields, thresholds, events and consequences: a failed startup or liveness
probe restarts the container; readiness decides `ready`. Without probes a running container is started and
ready at once. On the simulated runtime every probe succeeds."""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Any

from .records import ContainerRecord

if TYPE_CHECKING:
    from .pod_worker import PodWorker


def _port(value: Any, container: dict[str, Any]) -> int:
    if isinstance(value, int) or str(value).isdigit():
        return int(value)
    for port in container.get("ports") or ():
        if port.get("name") == value:
            return int(port["containerPort"])
    raise ValueError(f"port {value} not found")


def _go_error(exc: OSError) -> str:
    """A failed connection as Go's net package words it (`connect: connection refused`)."""
    if exc.errno is None:
        return str(exc) or type(exc).__name__
    text = os.strerror(exc.errno)
    return "connect: " + text[:1].lower() + text[1:]


class ProbeRunner:
    """The probe loops of one Pod's containers."""

    def __init__(self, worker: PodWorker) -> None:
        self.worker = worker
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
        simulated = self.worker.kubelet.runtime.name == "simulated"
        startup = None if simulated else spec.get("startupProbe")
        liveness = None if simulated else spec.get("livenessProbe")
        readiness = None if simulated else spec.get("readinessProbe")
        if startup and not await self._until(record, spec, startup, "Startup"):
            return
        record.started = True
        if not readiness:
            record.ready = True
        self.worker.mark_dirty()
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
                    self.worker.mark_dirty()
            else:
                successes, failures = 0, failures + 1
                self._unhealthy(record, "Readiness", why)
                if record.ready and failures >= probe.get("failureThreshold", 3):
                    record.ready = False
                    self.worker.mark_dirty()
            await asyncio.sleep(probe.get("periodSeconds", 10))

    def _unhealthy(self, record: ContainerRecord, kind: str, why: str) -> None:
        self.worker.container_event(record, "Unhealthy", f"{kind} probe failed: {why}", "Warning")

    def _restart(self, record: ContainerRecord, message: str) -> None:
        self.worker.restart(record, message)

    async def check(self, spec: dict[str, Any], probe: dict[str, Any]) -> tuple[bool, str]:
        """One probe: (success, why it failed, in the words of upstream's prober)."""
        timeout = probe.get("timeoutSeconds", 1)
        kubelet = self.worker.kubelet
        if "exec" in probe:
            record = self.worker.record(spec["name"])
            if record is None or record.container is None:
                return False, "container not running"
            try:
                code, output = await asyncio.wait_for(
                    kubelet.runtime.run(self.worker.sandbox, record.container, probe["exec"].get("command") or []),
                    timeout)
            except TimeoutError:
                return False, f'command "{" ".join(probe["exec"].get("command") or [])}" timed out'
            except (OSError, ValueError, NotImplementedError) as exc:
                return False, str(exc) or type(exc).__name__
            return code == 0, output.decode(errors="replace")  # the command's output, as upstream (may be empty)
        action = probe.get("httpGet") or probe.get("tcpSocket") or probe.get("grpc") or {}
        host = action.get("host") or self.worker.ip or kubelet.address
        try:
            port = _port(action.get("port"), spec)
        except ValueError as exc:
            return False, str(exc)
        address = f"{host}:{port}"
        url = f"{(action.get('scheme') or 'HTTP').lower()}://{address}{action.get('path') or '/'}"
        try:
            async with asyncio.timeout(timeout):  # the whole probe: connection, request and answer
                return await self.network_check(probe, host, port, action)
        except TimeoutError:
            if "httpGet" in probe:
                return False, f'Get "{url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)'
            return False, f"dial tcp {address}: i/o timeout"
        except OSError as exc:
            dial = f"dial tcp {address}: {_go_error(exc)}"
            return False, f'Get "{url}": {dial}' if "httpGet" in probe else dial
        except (ValueError, NotImplementedError) as exc:
            return False, str(exc) or type(exc).__name__

    async def network_check(self, probe: dict[str, Any], host: str, port: int,
                             action: dict[str, Any]) -> tuple[bool, str]:
        """An httpGet or tcpSocket (or grpc, as TCP) probe; its connection is closed however it ends (a timeout
        cancels it at any await)."""
        reader, writer = await self.worker.kubelet.dial(host, port)
        try:
            if "httpGet" not in probe:
                return True, ""
            path = action.get("path") or "/"
            headers = "".join(f"{h['name']}: {h['value']}\r\n" for h in action.get("httpHeaders") or ())
            writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUser-Agent: kube-probe/1.32\r\n"
                         f"Accept: */*\r\nConnection: close\r\n{headers}\r\n".encode())
            line = await reader.readline()
            parts = line.split()
            code = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
            return 200 <= code < 400, f"HTTP probe failed with statuscode: {code}"
        finally:
            writer.close()
