"""Container lifecycle hooks (postStart, preStop) as upstream's kubelet runs them (pkg/kubelet/lifecycle): an
exec in the container, an httpGet against the Pod's IP (any answer is success), or a sleep, through the actions
probes use too (kubelet/actions.py). On a runtime without processes exec and httpGet hooks succeed at once; sleep
is honoured."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from . import actions

MIN_GRACE = 2.0  # after a preStop hook, SIGKILL comes no sooner than this after SIGTERM (minimumGracePeriodInSeconds)


def handler(spec: dict[str, Any], kind: str) -> dict[str, Any] | None:
    """The container's postStart or preStop handler, if it has one."""
    return (spec.get("lifecycle") or {}).get(kind) or None


async def run(target: actions.Target, pod_name: str, action: dict[str, Any]) -> str | None:
    """Run one hook in `target`'s container of the Pod `pod_name` (format.Pod: `name_namespace(uid)`); None when
    it succeeded, else why it failed (upstream's message)."""
    if "sleep" in action:
        await actions.sleep(action.get("sleep") or {})
        return None
    if not target.runtime.runs_processes:
        return None
    spec = target.spec
    if "exec" in action:
        argv = list((action.get("exec") or {}).get("command") or ())
        try:
            code, output = await actions.run_exec(target, argv)
        except (OSError, ValueError, NotImplementedError) as exc:
            error, output = str(exc) or type(exc).__name__, b""
        else:
            if code == 0:
                return None
            error = f"command '{' '.join(argv)}' exited with {code}: {output.decode(errors='replace')}"
        return (f"Exec lifecycle hook ([{' '.join(argv)}]) for Container {json.dumps(spec['name'])} in Pod "
                f"{json.dumps(pod_name)} failed - error: {error}, "
                f"message: {json.dumps(output.decode(errors='replace'))}")
    if "httpGet" in action:
        return await _http(target, pod_name, action["httpGet"])
    return f"cannot run handler: unknown action {sorted(action)}"


async def _http(target: actions.Target, pod_name: str, action: dict[str, Any]) -> str | None:
    path = action.get("path") or "/"
    try:
        host, port = actions.address(target, action)
        url = actions.url(action, host, port)
        async with asyncio.timeout(10):
            await actions.connect(target, host, port, action, http=True)
        return None
    except TimeoutError:
        error = f'Get "{url}": context deadline exceeded'
    except OSError as exc:
        error = f'Get "{url}": dial tcp {host}:{port}: {actions.go_dial_error(exc)}'
    except ValueError as exc:
        error = str(exc)
    return f"HTTP lifecycle hook ({path}) for Container \"{target.spec['name']}\" in Pod \"{pod_name}\" failed - " \
           f"error: {error}"
