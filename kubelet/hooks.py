"""Container lifecycle hooks (postStart, preStop) as upstream's kubelet runs them (pkg/kubelet/lifecycle): an
exec in the container, an httpGet against the Pod's IP (any answer is success), or a sleep. Exec and httpGet go
through the probes' machinery. On the simulated runtime exec and httpGet hooks succeed at once; sleep is
honoured."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from .probes import _go_error, _port

if TYPE_CHECKING:
    from .pod_worker import PodWorker
    from .runtime.base import Container

MIN_GRACE = 2.0  # after a preStop hook, SIGKILL comes no sooner than this after SIGTERM (minimumGracePeriodInSeconds)


def handler(spec: dict[str, Any], kind: str) -> dict[str, Any] | None:
    """The container's postStart or preStop handler, if it has one."""
    return (spec.get("lifecycle") or {}).get(kind) or None


def _pod_name(worker: PodWorker) -> str:
    return f"{worker.name}_{worker.namespace}({worker.uid})"  # format.Pod


async def run(worker: PodWorker, container: Container, spec: dict[str, Any], action: dict[str, Any]) -> str | None:
    """Run one hook; None when it succeeded, else why it failed (upstream's message)."""
    simulated = worker.kubelet.runtime.name == "simulated"
    if "sleep" in action:
        await asyncio.sleep(float((action.get("sleep") or {}).get("seconds") or 0))
        return None
    if simulated:
        return None
    if "exec" in action:
        argv = list((action.get("exec") or {}).get("command") or ())
        try:
            code, output = await worker.kubelet.runtime.run(worker.sandbox, container, argv)
        except (OSError, ValueError, NotImplementedError) as exc:
            error, output = str(exc) or type(exc).__name__, b""
        else:
            if code == 0:
                return None
            error = f"command '{' '.join(argv)}' exited with {code}: {output.decode(errors='replace')}"
        return (f"Exec lifecycle hook ([{' '.join(argv)}]) for Container {json.dumps(spec['name'])} in Pod "
                f"{json.dumps(_pod_name(worker))} failed - error: {error}, "
                f"message: {json.dumps(output.decode(errors='replace'))}")
    if "httpGet" in action:
        return await _http(worker, spec, action["httpGet"])
    return f"cannot run handler: unknown action {sorted(action)}"


async def _http(worker: PodWorker, spec: dict[str, Any], action: dict[str, Any]) -> str | None:
    host = action.get("host") or worker.ip or worker.kubelet.address
    path = action.get("path") or "/"
    try:
        port = _port(action.get("port"), spec)
        url = f"{(action.get('scheme') or 'HTTP').lower()}://{host}:{port}{path}"
        async with asyncio.timeout(10):
            await worker.probes.network_check({"httpGet": action}, host, port, action)
        return None
    except TimeoutError:
        error = f'Get "{url}": context deadline exceeded'
    except OSError as exc:
        error = f'Get "{url}": dial tcp {host}:{port}: {_go_error(exc)}'
    except ValueError as exc:
        error = str(exc)
    return f"HTTP lifecycle hook ({path}) for Container \"{spec['name']}\" in Pod \"{_pod_name(worker)}\" failed - " \
           f"error: {error}"
