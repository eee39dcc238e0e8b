"""What an image means to a node without a container runtime: the environment its containers start from.

mini-kube's own image (`mini-kube/mini-kube`, any tag) is the installation that serves the node: its scripts and
interpreter directories come first on PATH, so `mini-kube` and `python3` are the very ones serving the cluster
(whatever venv that is). Every other image starts from the host's standard PATH."""

from __future__ import annotations

import os
import sys
import sysconfig

BASE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
MINI_KUBE_IMAGE = "mini-kube/mini-kube"


def image_name(image: str) -> str:
    """`docker.io/library/nginx:1.27@sha256:...` -> `nginx`."""
    name = image.split("@")[0].rsplit(":", 1)[0] if ":" in image.rsplit("/", 1)[-1] else image.split("@")[0]
    for prefix in ("docker.io/library/", "docker.io/", "library/"):
        name = name.removeprefix(prefix)
    return name


def installation_path() -> str:
    """PATH with the serving installation first: the directory of its `mini-kube` script, then its interpreter's."""
    first = [sysconfig.get_path("scripts"), os.path.dirname(sys.executable)]
    dirs = list(dict.fromkeys(d for d in first if d)) + BASE_PATH.split(":")
    return ":".join(dict.fromkeys(dirs))


def image_environment(image: str) -> dict[str, str]:
    """The environment an image gives its containers before the Pod's own variables."""
    if image_name(image) == MINI_KUBE_IMAGE:
        return {"PATH": installation_path()}
    return {"PATH": BASE_PATH}
