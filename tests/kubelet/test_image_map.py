"""A user's image map (issue #27, part 2): `--image-map FILE` maps image patterns to local commands, so a Pod
with image `myapp:dev` runs `./bin/myapp` from the developer's checkout; through real kubectl, and the events
(and so `kubectl describe pod`) say the image was mapped."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mini_kube.kubelet.imagestore.imagemap import ImageMap, ImageMapError

from tests.helpers import kubectl

from .conftest import eventually, new_namespace, process_cluster_or_skip, status_of

APP = """#!/bin/sh
echo "myapp args=$* pwd=$(pwd) mode=$MODE"
"""


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> Path:
    """A developer's checkout: bin/myapp, and the image map beside it (paths relative to the map's directory)."""
    work = tmp_path_factory.mktemp("checkout")
    (work / "bin").mkdir()
    (work / "bin" / "myapp").write_text(APP)
    (work / "bin" / "myapp").chmod(0o755)
    work.chmod(0o755)
    (work / "images.yaml").write_text("images:\n- image: myapp:dev\n  command: ./bin/myapp --serve\n"
                                      "  args: [--port, 8080]\n  workingDir: .\n  env: {MODE: dev}\n")
    return work


def test_patterns_match_as_references():
    mapping = ImageMap.from_data({"images": [{"image": "myapp:dev", "command": "a"},
                                             {"image": "example.com/team/*", "command": "b"},
                                             {"image": "tool", "command": "c"}]}, base=Path("/"))
    found = {image: (mapping.find(image).entrypoint if mapping.find(image) else None) for image in (
        "myapp:dev", "docker.io/library/myapp:dev", "myapp:prod", "example.com/team/x:1", "example.com/other:1",
        "tool", "tool:v2", "docker.io/tool:3")}
    assert found == {"myapp:dev": ("a",), "docker.io/library/myapp:dev": ("a",), "myapp:prod": None,
                     "example.com/team/x:1": ("b",), "example.com/other:1": None, "tool": ("c",),
                     "tool:v2": ("c",), "docker.io/tool:3": ("c",)}


@pytest.mark.parametrize("data,error", [
    ({"images": [{"image": "a", "comand": "x"}]}, "images[0]: unknown field 'comand'"),
    ({"images": [{"command": "x"}]}, "images[0].image: must be an image reference"),
    ({"images": [{"image": "a", "workingDir": "/no/such/dir"}]}, "images[0].workingDir: /no/such/dir is not a "),
    ({"images": {"image": "a"}}, "'images' must be a list"),
])
def test_bad_maps_say_where(data, error):
    with pytest.raises(ImageMapError) as caught:
        ImageMap.from_data(data, base=Path("/"), source="m.yaml")
    assert error in str(caught.value)


@pytest.mark.slow
def test_serve_refuses_a_bad_map_in_one_line(tmp_path):
    (tmp_path / "bad.yaml").write_text("images:\n- image: myapp\n  comand: x\n")
    done = subprocess.run([str(Path(sys.executable).with_name("mini-kube")), "serve", "--data-dir", ":memory:",
                           "--port", "0", "--image-map", str(tmp_path / "bad.yaml"),
                           "--kubeconfig", str(tmp_path / "kubeconfig")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr == f"mini-kube: --image-map {tmp_path / 'bad.yaml'}: images[0]: unknown field 'comand'\n"


@pytest.fixture(scope="module")
def kube(checkout) -> Iterator:
    process_cluster_or_skip()
    from mini_kube.testing import MiniKube

    with MiniKube(nodes=1, node_runtime="process", image_map=str(checkout / "images.yaml"),
                  node_options={"unknown_images": "fail"}) as cluster:
        yield cluster


@pytest.mark.slow
def test_mapped_image_runs_the_local_command(kube, checkout):
    ns = new_namespace(kube)
    kubectl(kube, "-n", ns, "run", "app", "--image=myapp:dev", "--restart=Never")
    kubectl(kube, "-n", ns, "run", "args", "--image=myapp:dev", "--restart=Never", "--", "--verbose")
    for name, args in (("app", "--serve --port 8080"), ("args", "--serve --verbose")):
        eventually(lambda name=name: status_of(kube, ns, name).get("phase") in ("Succeeded", "Failed"), timeout=60)
        assert status_of(kube, ns, name)["phase"] == "Succeeded"
        assert kubectl(kube, "-n", ns, "logs", name).stdout == f"myapp args={args} pwd={checkout} mode=dev\n"
    described = kubectl(kube, "-n", ns, "describe", "pod", "app").stdout
    assert (f'Container image "myapp:dev" already present on machine (mapped by the node\'s image map to '
            f"./bin/myapp --serve --port 8080 in {checkout})") in " ".join(described.split())
    # an image neither built in, mapped nor loaded still fails its pull, as on a real node
    kubectl(kube, "-n", ns, "run", "other", "--image=myapp-other:dev", "--restart=Never")
    eventually(lambda: (status_of(kube, ns, "other").get("containerStatuses") or [{}])[0].get("state", {}).get(
        "waiting", {}).get("reason") in ("ErrImagePull", "ImagePullBackOff"), timeout=30)
