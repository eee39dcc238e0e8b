"""The kubelet's events about one container, as upstream's kubelet records them: about the Pod, with
`involvedObject.fieldPath` naming the container (`spec.containers{web}`), and the image "pull" before each start.

Built-in images (kubelet/images.py) are already on the node, so IfNotPresent and Never give "already present";
Always "pulls" them and reports the time taken and a nominal size, as upstream's image manager does. That pull
costs what it costs a runtime whose content is all present: resolving the reference (its digest) and finding
nothing to fetch, here the lookup the caller has done, so it reports the time that took, truncated to the
millisecond as upstream's message does (`in 0s` for a lookup of less than 1 ms). An image run by the stand-in
says so in its Pulled event. An unknown image's pull fails (pull_failed).
"""

from __future__ import annotations

import time
import zlib
from typing import Any, Protocol

from mini_kube.machinery.duration import format_go_duration

from .images import Image, pull_error
from .imagestore.local import LocalImage
from .records import ContainerRecord


class Emitter(Protocol):
    def emit(self, obj: dict[str, Any], reason: str, message: str, type_: str = "Normal", *,
             field_path: str = "") -> None: ...


def field_path(record: ContainerRecord, ephemeral: bool = False) -> str:
    """Where the container is in the Pod's spec, as upstream's container references name it."""
    kind = "initContainers" if record.init else "ephemeralContainers" if ephemeral else "containers"
    return f"spec.{kind}{{{record.name}}}"


def image_size(image: str) -> int:
    """A nominal, stable size for an image (there is none to measure): 2 to 80 MB."""
    return 2_000_000 + zlib.crc32(image.encode()) % 78_000_000


def ensure_image(events: Emitter, pod: dict[str, Any], spec: dict[str, Any], path: str,
                 found: Image | LocalImage | None = None, started: float | None = None) -> None:
    """Upstream's EnsureImageExists for an image that is present: Pulled ("already present"), or for
    imagePullPolicy Always, Pulling then Pulled with the time the pull took since `started` (time.monotonic(),
    when the image's lookup began; else now) and the image's size (a loaded image's real one). An image the
    stand-in runs, or the node's image map maps, says so."""
    image = spec.get("image", "")
    if spec.get("imagePullPolicy") != "Always":
        how = f" ({found.ran_as})" if found is not None and found.kind in ("standin", "mapped") else ""
        events.emit(pod, "Pulled", f'Container image "{image}" already present on machine{how}', field_path=path)
        return
    events.emit(pod, "Pulling", f'Pulling image "{image}"', field_path=path)
    elapsed = 0.0 if started is None else time.monotonic() - started
    took = format_go_duration(int(elapsed * 1000) * 1_000_000)  # truncated to ms
    events.emit(pod, "Pulled", f'Successfully pulled image "{image}" in {took} ({took} including waiting). '
                               f"Image size: {getattr(found, 'size', 0) or image_size(image)} bytes.", field_path=path)


def pull_failed(events: Emitter, pod: dict[str, Any], image: str, path: str) -> str:
    """A pull of an image no registry has, as upstream's image manager reports it: Pulling, Failed with the
    runtime's error, then `Error: ErrImagePull` (from the container's start). Returns the runtime's error."""
    error = pull_error(image)
    events.emit(pod, "Pulling", f'Pulling image "{image}"', field_path=path)
    events.emit(pod, "Failed", f'Failed to pull image "{image}": {error}', "Warning", field_path=path)
    events.emit(pod, "Failed", "Error: ErrImagePull", "Warning", field_path=path)
    return error


def pull_backing_off(events: Emitter, pod: dict[str, Any], image: str, path: str) -> None:
    """The events of a sync while the image's pull is backing off."""
    events.emit(pod, "BackOff", f'Back-off pulling image "{image}"', field_path=path)
    events.emit(pod, "Failed", "Error: ImagePullBackOff", "Warning", field_path=path)
