"""The simulated runtime: no processes; Pods move through the same statuses on a configurable timeline (as kwok
does). A container runs until stopped; with restartPolicy Never or OnFailure it exits after a while with code
0, unless the Pod's annotations say otherwise:
`sim.mini-kube.dev/run-seconds` (how long each container runs) and `sim.mini-kube.dev/exit-code`."""

from __future__ import annotations

import asyncio
import signal
import uuid
from pathlib import Path
from typing import Any

from .base import Container, ContainerSpec, Runtime, Sandbox

RUN_SECONDS = "sim.mini-kube.dev/run-seconds"
EXIT_CODE = "sim.mini-kube.dev/exit-code"


class SimulatedContainer(Container):
    def __init__(self, run_seconds: float | None, exit_code: int) -> None:
        self.id = f"mini-kube://{uuid.uuid4().hex}"
        self._done: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        if run_seconds is not None:
            asyncio.get_running_loop().call_later(run_seconds, self._exit, exit_code)

    def _exit(self, code: int) -> None:
        if not self._done.done():
            self._done.set_result(code)

    async def wait(self) -> int:
        return await asyncio.shield(self._done)

    def signal(self, signum: int) -> None:
        if signum in (signal.SIGTERM, signal.SIGKILL, signal.SIGINT):
            self._exit(128 + signum)


class SimulatedRuntime(Runtime):
    """Containers as timers. `start_delay`: seconds before a sandbox is ready; `job_seconds`: how long a
    container of a run-to-completion Pod runs."""

    name = "simulated"

    def __init__(self, *, start_delay: float = 0.0, job_seconds: float = 0.05) -> None:
        self.start_delay = start_delay
        self.job_seconds = job_seconds

    async def create_sandbox(self, pod: dict[str, Any], ip: str, directory: str) -> Sandbox:
        if self.start_delay:
            await asyncio.sleep(self.start_delay)
        return Sandbox(uid=pod["metadata"]["uid"], ip=ip, directory=directory,
                       extra={"annotations": dict(pod["metadata"].get("annotations") or {}),
                              "restartPolicy": (pod.get("spec") or {}).get("restartPolicy", "Always")})

    async def start(self, sandbox: Sandbox, spec: ContainerSpec) -> Container:
        annotations = sandbox.extra.get("annotations") or {}
        seconds: float | None = None
        if RUN_SECONDS in annotations:
            seconds = float(annotations[RUN_SECONDS])
        elif sandbox.extra.get("restartPolicy") != "Always" or spec.init:
            seconds = self.job_seconds
        Path(spec.log_path).parent.mkdir(parents=True, exist_ok=True)
        Path(spec.log_path).touch(mode=0o600)
        return SimulatedContainer(seconds, int(annotations.get(EXIT_CODE, "0")))

    async def remove_sandbox(self, sandbox: Sandbox) -> None:
        return None


