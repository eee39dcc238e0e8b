"""Images (issue #27): Pod create to Running and Ready for a built-in image against a loaded one, in one run on
one process node. The loaded image is made here (the host's dash and sleep with their libraries, as
tests/kubelet/image_archives.py makes test images), saved as `docker save` does and loaded with `mini-kube image
load` as a user types it:

- built-in: busybox running `sleep 300` (the host's utilities): the baseline;
- loaded, first: the load (its layers unpacked into a fresh store, in-process; the CLI's start-up timed apart),
  then the first Pod of the image;
- loaded, cached: further Pods of the image (its layers unpacked once; each container's root an overlay of them).

    .venv/bin/python bench/images_bench.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mini_kube.kubelet.imagestore.store import ImageStore  # noqa: E402
from mini_kube.network.namespaces import can_make_namespaces  # noqa: E402

from bench.kubelet_bench import summary, time_to_running  # noqa: E402
from mini_kube.testing import MiniKube  # noqa: E402
from tests.kubelet.image_archives import (  # noqa: E402
    Entry,
    docker_archive,
    host_program_entries,
    image_config,
    layer_tar,
)

COUNT = 15


def build_archive(directory: Path) -> Path:
    """sleeper:1, two layers: dash (as /bin/sh) and sleep with their libraries; an /etc of its own."""
    base = host_program_entries("dash", "sleep") + [Entry("bin/sh", link="dash")]
    etc = [Entry("etc", directory=True, mode=0o755), Entry("etc/passwd", b"root:x:0:0:root:/root:/bin/sh\n")]
    layers = [layer_tar(base), layer_tar(etc)]
    config = image_config(layers, Entrypoint=["/bin/sleep"], Cmd=["300"], Env=["PATH=/bin"])
    return docker_archive(directory / "sleeper.tar", layers, config, ["sleeper:1"])


def main() -> None:
    ok, why = can_make_namespaces()
    if not ok:
        print(f"skipped: the process runtime needs namespaces ({why})")
        return
    with tempfile.TemporaryDirectory(prefix="images-bench-") as tmp:
        data = Path(tmp) / "data"
        archive = build_archive(Path(tmp))
        size = archive.stat().st_size
        with MiniKube(nodes=1, node_runtime="process", scheduler=False, image_store=str(data / "images"),
                      node_options={"unknown_images": "fail"}) as kube:
            built_in = kube.run(time_to_running(kube, COUNT, ["sleep", "300"], image="busybox:1.36"), timeout=300)
            started = time.perf_counter()
            ImageStore(data / "images").load(str(archive))  # what `mini-kube image load` does, without its start-up
            load = (time.perf_counter() - started) * 1000
            started = time.perf_counter()
            subprocess.run([str(Path(sys.executable).with_name("mini-kube")), "image", "load", str(archive),
                            "--name", "sleeper:2", "--data-dir", str(data)], check=True, capture_output=True)
            cli = (time.perf_counter() - started) * 1000
            first = kube.run(time_to_running(kube, 1, None, image="sleeper:1"), timeout=120)[0]
            cached = kube.run(time_to_running(kube, COUNT, None, image="sleeper:1"), timeout=300)
    base, mine = statistics.median(built_in), statistics.median(cached)
    print(f"built-in busybox, create to Running+Ready:       {summary(built_in)}  (baseline)")
    print(f"loaded image, first: its layers unpacked {load:.0f} ms ({size / 1e6:.1f} MB archive; the same load "
          f"by the CLI, layers already there, {cli:.0f} ms with its start-up), then the first Pod {first:.1f} ms")
    print(f"loaded image, cached, create to Running+Ready:   {summary(cached)}  (ratio {mine / base:.2f} to "
          "the built-in image)")


if __name__ == "__main__":
    main()
