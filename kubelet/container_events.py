"""The kubelet's events about one container, as upstream's kubelet records them: about the Pod, with
`involvedObject.fieldPath` naming the container (`spec.containers{web}`), and the image "pull" before each start.

There are no real images: every image is already on the node, so IfNotPresent and Never give "already present";
Always "pulls" it (a short pause) and reports the time taken and a nominal size, as upstream's image manager does.
"""

from __future__ import annotations

import asyncio
import time
import zlib
from typing import Any, Protocol

from .records import ContainerRecord

PULL_SECONDS = 0.01  # how long an Always "pull" takes


class Emitter(Protocol):
    def emit(self, obj: dict[str, Any], reason: str, message: str, type_: str = "Normal", *,
             field_path: str = "") -> None: ...


def field_path(record: ContainerRecord, ephemeral: bool = False) -> str:
    """Where the container is in the Pod's spec, as upstream's container references name it."""
    kind = "initContainers" if record.init else "ephemeralContainers" if ephemeral else "containers"
    return f"spec.{kind}{{{record.name}}}"


def go_duration(seconds: float) -> str:
    """A duration truncated to milliseconds, as Go's time.Duration prints it (`523ms`, `1.2s`, `2m3.5s`)."""
    ms = int(seconds * 1000)
    if ms == 0:
        return "0s"
    if ms < 1000:
        return f"{ms}ms"
    minutes, rest = divmod(ms, 60_000)
    secs = f"{rest // 1000}.{rest % 1000:03d}".rstrip("0").rstrip(".") + "s"
    return f"{minutes}m{secs}" if minutes else secs


def image_size(image: str) -> int:
    """A nominal, stable size for an image (there is none to measure): 2 to 80 MB."""
    return 2_000_000 + zlib.crc32(image.encode()) % 78_000_000


async def ensure_image(events: Emitter, pod: dict[str, Any], spec: dict[str, Any], path: str) -> None:
    """Upstream's EnsureImageExists for an image that is always present: Pulled ("already present"), or for
    imagePullPolicy Always, Pulling then Pulled with the time the pull took."""
    image = spec.get("image", "")
    if spec.get("imagePullPolicy") != "Always":
        events.emit(pod, "Pulled", f'Container image "{image}" already present on machine', field_path=path)
        return
    events.emit(pod, "Pulling", f'Pulling image "{image}"', field_path=path)
    started = time.monotonic()
    await asyncio.sleep(PULL_SECONDS)
    took = go_duration(time.monotonic() - started)
    events.emit(pod, "Pulled", f'Successfully pulled image "{image}" in {took} ({took} including waiting). '
                               f"Image size: {image_size(image)} bytes.", field_path=path)
