"""Image archives as `docker save` writes them (manifest.json naming each image's config, tags and layer tars)
and as OCI image layouts (oci-layout, index.json, blobs/sha256/...; `docker save` since 25 writes both, and
`skopeo`, `buildah`, `podman save --format oci-archive` and `ctr export` write layouts), the outer tar plain or
gzip-compressed. Read with tarfile's parser (no entry of the outer archive is ever extracted): JSON documents
bounded in size, every blob checked against its digest, layers plain or gzip-compressed."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import platform
import tarfile
from dataclasses import dataclass, field
from typing import Any, cast

from .reference import parse
from .unpack import HashingReader, Readable

MAX_DOCUMENT = 4 << 20  # manifest.json, index.json, manifests and configs
MAX_LAYERS = 128
MAX_IMAGES = 256
MANIFESTS = {"application/vnd.oci.image.manifest.v1+json", "application/vnd.docker.distribution.manifest.v2+json"}
INDEXES = {"application/vnd.oci.image.index.v1+json", "application/vnd.docker.distribution.manifest.list.v2+json"}
NAME_ANNOTATIONS = ("io.containerd.image.name", "org.opencontainers.image.ref.name")
ARCH = {"x86_64": "amd64", "aarch64": "arm64", "armv7l": "arm", "ppc64le": "ppc64le", "s390x": "s390x",
        "riscv64": "riscv64"}.get(platform.machine(), platform.machine())


class ArchiveError(ValueError):
    """An archive that cannot be loaded; the message says why."""


@dataclass
class Blob:
    """A layer of an image: where it is in the archive and the digest it must have ("" when the archive gives
    none: a legacy docker-save layer, checked through the config's diffIDs instead)."""

    member: str
    digest: str = ""


@dataclass
class ArchiveImage:
    """One image of an archive: its names (normalised references), config (bytes, as hashed) and layers,
    lowest first."""

    names: list[str]
    config: bytes
    layers: list[Blob] = field(default_factory=list)

    @property
    def image_id(self) -> str:
        return f"sha256:{hashlib.sha256(self.config).hexdigest()}"

    def parsed_config(self) -> dict[str, Any]:
        try:
            config = json.loads(self.config)
        except ValueError:
            raise ArchiveError("the image config is not JSON") from None
        if not isinstance(config, dict):
            raise ArchiveError("the image config is not a JSON object")
        diff_ids = (config.get("rootfs") or {}).get("diff_ids")
        if not isinstance(diff_ids, list) or len(diff_ids) != len(self.layers) or not all(
                isinstance(d, str) and d.startswith("sha256:") and len(d) == 71 for d in diff_ids):
            raise ArchiveError("the image config's rootfs.diff_ids do not match its layers")
        return config


class Prefixed:
    """A stream whose first bytes were read already (to tell its compression)."""

    def __init__(self, head: bytes, rest: Readable) -> None:
        self.head = head
        self.rest = rest

    def read(self, size: int = -1) -> bytes:
        if self.head:
            if size < 0:
                data, self.head = self.head + self.rest.read(), b""
                return data
            data, self.head = self.head[:size], self.head[size:]
            return data
        return self.rest.read(size)


class Archive:
    """An opened image archive (a context manager)."""

    def __init__(self, path: str) -> None:
        try:
            self.tar = tarfile.open(path, "r:*")  # noqa: SIM115 - closed by close()
        except (OSError, tarfile.TarError) as exc:
            raise ArchiveError(f"{path}: not an image archive ({exc})") from None
        self.members: dict[str, tarfile.TarInfo] = {}
        for member in self.tar:
            if len(self.members) > 1_000_000:
                raise ArchiveError(f"{path}: too many entries")
            self.members[os.path.normpath(member.name).lstrip("/")] = member

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.tar.close()

    def member(self, name: str) -> tarfile.TarInfo:
        """The archive's file `name`, through the links `docker save` makes between the copies of a layer."""
        key = os.path.normpath(name).lstrip("/")
        found = self.members.get(key)
        for _ in range(8):
            if found is None or not found.issym():
                break
            key = os.path.normpath(os.path.join(os.path.dirname(key), found.linkname)).lstrip("/")
            found = self.members.get(key)
        if found is None or not (found.isreg() or found.islnk()):
            raise ArchiveError(f"the archive has no file {name!r}")
        return found

    def read(self, name: str, digest: str = "") -> bytes:
        """A document of the archive (at most MAX_DOCUMENT bytes), checked against `digest` when given."""
        member = self.member(name)
        if member.size > MAX_DOCUMENT:
            raise ArchiveError(f"{name}: larger than {MAX_DOCUMENT} bytes")
        handle = self.tar.extractfile(member)
        assert handle is not None
        data = handle.read()
        if digest and f"sha256:{hashlib.sha256(data).hexdigest()}" != digest:
            raise ArchiveError(f"{name}: content does not match its digest {digest}")
        return data

    def json(self, name: str, digest: str = "") -> Any:
        try:
            return json.loads(self.read(name, digest))
        except ValueError:
            raise ArchiveError(f"{name}: not JSON") from None

    def images(self) -> list[ArchiveImage]:
        """The images of the archive (docker-save's manifest.json when there is one, else the OCI index)."""
        if "manifest.json" in self.members:
            found = self.docker_images()
        elif "index.json" in self.members and "oci-layout" in self.members:
            found = self.oci_images()
        else:
            raise ArchiveError("neither a docker-save archive (manifest.json) nor an OCI layout (oci-layout, "
                               "index.json)")
        if not found:
            raise ArchiveError("the archive holds no image")
        return found

    def docker_images(self) -> list[ArchiveImage]:
        manifest = self.json("manifest.json")
        if not isinstance(manifest, list) or len(manifest) > MAX_IMAGES:
            raise ArchiveError("manifest.json: not a list of images")
        images = []
        for entry in manifest:
            if not isinstance(entry, dict) or not isinstance(entry.get("Config"), str) or not isinstance(
                    entry.get("Layers") or [], list):
                raise ArchiveError("manifest.json: an entry without Config or Layers")
            layers = [Blob(name, blob_digest(name)) for name in entry.get("Layers") or []]
            config_name = entry["Config"]
            names = [_normalised(tag) for tag in entry.get("RepoTags") or [] if isinstance(tag, str)]
            images.append(ArchiveImage([n for n in names if n], self.read(config_name, blob_digest(config_name)),
                                       _bounded(layers)))
        return images

    def oci_images(self) -> list[ArchiveImage]:
        index = self.json("index.json")
        images = []
        for descriptor in _descriptors(index, "index.json"):
            names = [_normalised(str(value)) for key, value in (descriptor.get("annotations") or {}).items()
                     if key in NAME_ANNOTATIONS]
            manifest = self.manifest(descriptor)
            config = manifest.get("config") or {}
            layers = [Blob(blob_path(d), d["digest"]) for d in manifest.get("layers") or [] if _descriptor(d)]
            if not _descriptor(config):
                raise ArchiveError("a manifest without a config")
            images.append(ArchiveImage(list(dict.fromkeys(n for n in names if n)),
                                       self.read(blob_path(config), config["digest"]), _bounded(layers)))
        return images

    def manifest(self, descriptor: dict[str, Any], depth: int = 0) -> dict[str, Any]:
        """The image manifest a descriptor leads to (through an index: the one for this machine's platform)."""
        document = self.json(blob_path(descriptor), descriptor["digest"])
        if not isinstance(document, dict):
            raise ArchiveError(f"{descriptor['digest']}: not a manifest")
        kind = document.get("mediaType") or descriptor.get("mediaType") or ""
        if kind in INDEXES or "manifests" in document:
            if depth > 2:
                raise ArchiveError("indexes nested too deep")
            for inner in _descriptors(document, descriptor["digest"]):
                wanted = inner.get("platform") or {}
                if wanted.get("os", "linux") == "linux" and wanted.get("architecture", ARCH) == ARCH:
                    return self.manifest(inner, depth + 1)
            raise ArchiveError(f"no image for linux/{ARCH} in the archive's index")
        return document

    def layer(self, blob: Blob) -> tuple[HashingReader, Readable]:
        """A layer's blob (hashed as it is read) and its uncompressed tar stream."""
        handle = self.tar.extractfile(self.member(blob.member))
        assert handle is not None
        raw = HashingReader(cast(Readable, handle))
        head = raw.read(4)
        if head[:2] == b"\x1f\x8b":
            return raw, gzip.GzipFile(fileobj=cast(Any, Prefixed(head, raw)), mode="rb")
        if head == b"\x28\xb5\x2f\xfd":
            raise ArchiveError(f"{blob.member}: zstd-compressed layers are not supported (gzip or plain tar)")
        return raw, Prefixed(head, raw)


def blob_digest(name: str) -> str:
    """The digest a `blobs/sha256/<hex>` (or `<hex>.json`) member must have, else ""."""
    base = os.path.basename(name).removesuffix(".json")
    parent = os.path.basename(os.path.dirname(name))
    if len(base) == 64 and all(c in "0123456789abcdef" for c in base) and parent in ("sha256", ""):
        return f"sha256:{base}"
    return ""


def blob_path(descriptor: dict[str, Any]) -> str:
    algorithm, _, hexdigest = descriptor["digest"].partition(":")
    return f"blobs/{algorithm}/{hexdigest}"


def _descriptor(value: Any) -> bool:
    digest = value.get("digest") if isinstance(value, dict) else None
    return isinstance(digest, str) and digest.startswith("sha256:") and len(digest) == 71 and all(
        c in "0123456789abcdef" for c in digest[7:])


def _descriptors(document: Any, where: str) -> list[dict[str, Any]]:
    manifests = document.get("manifests") if isinstance(document, dict) else None
    if not isinstance(manifests, list) or len(manifests) > MAX_IMAGES or not all(map(_descriptor, manifests)):
        raise ArchiveError(f"{where}: not an index of manifests with sha256 digests")
    return manifests


def _bounded(layers: list[Blob]) -> list[Blob]:
    if len(layers) > MAX_LAYERS:
        raise ArchiveError(f"an image of more than {MAX_LAYERS} layers")
    return layers


def _normalised(name: str) -> str:
    """A name as the store keeps it; "" for one that is only a tag (an OCI ref.name such as `latest` or `dev`:
    a name without `/` or `:`)."""
    if "/" not in name and ":" not in name:
        return ""
    try:
        return str(parse(name))
    except ValueError:
        return ""
