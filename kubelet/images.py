"""What an image means to a node without a container runtime or images.

- mini-kube's own image (`mini-kube/mini-kube`, any tag) is the installation that serves the node: its scripts
  and interpreter directories come first on PATH, so `mini-kube` and `python3` are the very ones serving the
  cluster (whatever venv that is). Every other image starts from the host's standard PATH.
- A container that names no command runs a stand-in (kubelet/standin.py) serving HTTP on its ports and its
  image's usual port, and, for web servers' images, the image's document root."""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path

BASE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
MINI_KUBE_IMAGE = "mini-kube/mini-kube"
STANDIN = Path(__file__).with_name("standin.py")
IMAGE_PORTS = {"nginx": 80, "httpd": 80, "caddy": 80, "traefik/whoami": 80, "hashicorp/http-echo": 5678}
IMAGE_DOCROOTS = {"nginx": "/usr/share/nginx/html", "httpd": "/usr/local/apache2/htdocs", "caddy": "/usr/share/caddy"}
"""Web server images whose stand-in serves files from the image's document root (a writable, initially empty
directory of the container's own), as the real server would: 404 for what is not there."""


def image_name(image: str) -> str:
    """`docker.io/library/nginx:1.27@sha256:...` -> `nginx`."""
    name = image.split("@")[0].rsplit(":", 1)[0] if ":" in image.rsplit("/", 1)[-1] else image.split("@")[0]
    for prefix in ("docker.io/library/", "docker.io/", "library/"):
        name = name.removeprefix(prefix)
    return name


def installation_path() -> str:
    """PATH with the serving installation first: the directory of its `mini-kube` script, then its interpreter's."""
    first = [sysconfig.get_path("scripts"), os.path.dirname(sys.executable)]
    return ":".join(dict.fromkeys([d for d in first if d] + BASE_PATH.split(":")))


def image_environment(image: str) -> dict[str, str]:
    """The environment an image gives its containers before the Pod's own variables."""
    if image_name(image) == MINI_KUBE_IMAGE:
        return {"PATH": installation_path()}
    return {"PATH": BASE_PATH}


def standin_argv(image: str, ports: list[int]) -> list[str]:
    """The program for a container with neither command nor args: HTTP on its ports (and its image's usual
    port, e.g. 80 for nginx), or just staying up; web servers' images serve their document root."""
    name = image_name(image)
    every = list(ports)
    if name in IMAGE_PORTS and IMAGE_PORTS[name] not in every:
        every.append(IMAGE_PORTS[name])
    docroot = ["--docroot", IMAGE_DOCROOTS[name]] if name in IMAGE_DOCROOTS else []
    return [sys.executable, "-I", "-S", str(STANDIN), *docroot, *map(str, every)]
