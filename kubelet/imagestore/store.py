"""The node's store of loaded images, under the data dir (`DATA_DIR/images`), content-addressed:

    layers/<hex>/     a layer unpacked once, named by its diffID (the sha256 of its tar), shared by every image
    images/<hex>.json an image, named by its ID (the sha256 of its config): its config, layers and size
    index.json        the names (`docker.io/library/myapp:dev`) and the image each stands for
    lock              taken by `load` and `rm` (readers never wait: documents are replaced by rename)

A layer is unpacked into a temporary directory and renamed into place once whole and checked, so a crash
leaves no half layer; `rm` removes a name, then the images no name stands for and the layers no image uses."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .archive import Archive, ArchiveError, ArchiveImage
from .local import LocalImage
from .reference import parse
from .unpack import LayerError, Limits, unpack

EMPTY_LAYER = "empty"  # the root of an image without layers


class StoreError(ValueError):
    """A load or removal that cannot be done; the message says why."""


@dataclass(frozen=True)
class StoredImage:
    """An image of the store, as `mini-kube image ls` shows it."""

    image_id: str
    names: tuple[str, ...]
    size: int
    created: str
    record: dict[str, Any]


class ImageStore:
    """The images under `root`."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).expanduser()
        self._index: tuple[tuple[int, int], dict[str, str]] | None = None  # (mtime_ns, size) -> names
        self._found: dict[tuple[str, str], LocalImage] = {}  # (image, ID) -> it: an ID's content never changes

    # -- reading -------------------------------------------------------------------------------------------------
    def names(self) -> dict[str, str]:
        """Every name and the image ID it stands for (read again only when index.json changed)."""
        try:
            info = os.stat(self.root / "index.json")
        except OSError:
            return {}
        key = (info.st_mtime_ns, info.st_size)
        if self._index is not None and self._index[0] == key:
            return self._index[1]
        try:
            names = json.loads((self.root / "index.json").read_bytes()).get("names") or {}
        except (OSError, ValueError):
            return {}
        self._index = (key, names)
        return names

    def record(self, image_id: str) -> dict[str, Any] | None:
        try:
            return json.loads((self.root / "images" / f"{image_id.removeprefix('sha256:')}.json").read_bytes())
        except (OSError, ValueError):
            return None

    def images(self) -> list[StoredImage]:
        """Every image with its names, newest first."""
        by_id: dict[str, list[str]] = {}
        for name, image_id in self.names().items():
            by_id.setdefault(image_id, []).append(name)
        found = []
        for image_id, names in by_id.items():
            record = self.record(image_id)
            if record is not None:
                found.append(StoredImage(image_id, tuple(sorted(names)), int(record.get("size", 0)),
                                         str(record.get("config", {}).get("created", "")), record))
        return sorted(found, key=lambda i: i.created, reverse=True)

    def image_id(self, image: str) -> str:
        """The ID of the image `image` names (a name, or `name@sha256:<id>`), or ""."""
        try:
            ref = parse(image)
        except ValueError:
            return ""
        names = self.names()
        if ref.digest:
            return ref.digest if ref.digest in names.values() else ""
        return names.get(str(ref), "")

    def find(self, image: str) -> LocalImage | None:
        """The loaded image `image` names, as a container runs it; None when it is not loaded."""
        image_id = self.image_id(image)
        if not image_id:
            return None
        known = self._found.get((image, image_id))
        if known is not None:
            return known
        record = self.record(image_id)
        if record is None:
            return None
        config = (record.get("config") or {}).get("config") or {}
        layers = tuple(str(self.root / "layers" / d.removeprefix("sha256:")) for d in reversed(record["layers"]))
        env = [str(e).partition("=") for e in config.get("Env") or ()]
        found = LocalImage("loaded", str(parse(image)), image_id,
                           entrypoint=tuple(config.get("Entrypoint") or ()), cmd=tuple(config.get("Cmd") or ()),
                           env=tuple((k, v) for k, _, v in env if k), working_dir=config.get("WorkingDir") or "",
                           user=config.get("User") or "", exposed_ports=tuple(sorted(config.get("ExposedPorts") or {})),
                           layers=layers or (str(self.root / "layers" / EMPTY_LAYER),), size=int(record.get("size", 0)))
        if len(self._found) > 1024:
            self._found.clear()
        self._found[(image, image_id)] = found
        return found

    # -- changing ------------------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        for sub in ("layers", "images", "tmp"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        os.chmod(self.root, 0o700)
        with open(self.root / "lock", "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            for stale in (self.root / "tmp").iterdir():  # what a load that did not finish left (no other runs)
                if stale.is_dir() and not stale.is_symlink():
                    shutil.rmtree(stale, ignore_errors=True)
                else:
                    stale.unlink(missing_ok=True)
            yield

    def _write_names(self, names: dict[str, str]) -> None:
        temporary = self.root / "tmp" / f"index-{os.getpid()}.json"
        temporary.write_text(json.dumps({"names": dict(sorted(names.items()))}, indent=1))
        os.replace(temporary, self.root / "index.json")

    def load(self, path: str, name: str = "", limits: Limits | None = None) -> list[tuple[str, list[str]]]:
        """Load every image of the archive at `path` (`name`: the name of its one image, for an archive that
        names none or to name it otherwise): (image ID, names) of each. StoreError saying why not."""
        if name:
            try:
                name = str(parse(name))
            except ValueError as exc:
                raise StoreError(str(exc)) from None
        try:
            with Archive(path) as archive, self.locked():
                images = archive.images()
                if name and len(images) != 1:
                    raise StoreError(f"--name names one image, and the archive holds {len(images)}")
                if not name and not all(i.names for i in images):
                    raise StoreError("the archive names no image: give one with --name NAME[:TAG]")
                loaded = []
                names = dict(self.names())
                for image in images:
                    if name:
                        image.names = [name]
                    self._load_image(archive, image, limits or Limits())
                    names.update(dict.fromkeys(image.names, image.image_id))
                    loaded.append((image.image_id, image.names))
                self._write_names(names)
                return loaded
        except (ArchiveError, LayerError) as exc:
            raise StoreError(str(exc)) from None

    def _load_image(self, archive: Archive, image: ArchiveImage, limits: Limits) -> None:
        config = image.parsed_config()
        diff_ids = config["rootfs"]["diff_ids"]
        size = 0
        for blob, diff_id in zip(image.layers, diff_ids, strict=True):
            size += self._layer(archive, blob, diff_id, limits)
        (self.root / "layers" / EMPTY_LAYER).mkdir(mode=0o755, exist_ok=True)
        record = {"id": image.image_id, "layers": diff_ids, "size": size, "loaded": time.time(),
                  "config": {k: config.get(k) for k in ("created", "architecture", "os", "config", "rootfs")}}
        temporary = self.root / "tmp" / f"{image.image_id[7:]}.json"
        temporary.write_text(json.dumps(record))
        os.replace(temporary, self.root / "images" / f"{image.image_id[7:]}.json")

    def _layer(self, archive: Archive, blob: Any, diff_id: str, limits: Limits) -> int:
        """Unpack a layer unless the store has it (by diffID); the bytes of its files."""
        target = self.root / "layers" / diff_id[7:]
        size_file = self.root / "layers" / f"{diff_id[7:]}.size"
        if target.is_dir() and size_file.exists():
            return int(size_file.read_text() or 0)
        work = Path(tempfile.mkdtemp(prefix="layer-", dir=self.root / "tmp"))
        try:
            os.chmod(work, 0o755)
            raw, stream = archive.layer(blob)
            found, size = unpack(stream, str(work), limits)
            raw.drain()
            if blob.digest and raw.digest != blob.digest:
                raise StoreError(f"{blob.member}: content does not match its digest {blob.digest}")
            if found != diff_id:
                raise StoreError(f"{blob.member}: its content is {found}, the config says {diff_id}")
            if target.exists():
                shutil.rmtree(target)  # a layer left without its size: from a load that did not finish
            os.rename(work, target)
            size_file.write_text(str(size))
            return size
        finally:
            if work.exists():
                shutil.rmtree(work, ignore_errors=True)

    def remove(self, what: str) -> list[str]:
        """Remove an image by name or ID (a prefix of it will do); the names removed. StoreError when nothing
        matches, or an ID prefix is ambiguous."""
        with self.locked():
            names = dict(self.names())
            gone = [n for n in names if n == what]
            if not gone:
                with contextlib.suppress(ValueError):
                    gone = [n for n in names if n == str(parse(what))]
            if not gone:
                prefix = what.removeprefix("sha256:")
                ids = {i for i in names.values() if len(prefix) >= 4 and i[7:].startswith(prefix)}
                if len(ids) > 1:
                    raise StoreError(f"{what}: more than one image has this ID prefix")
                gone = [n for n, i in names.items() if i in ids]
            if not gone:
                raise StoreError(f"no such image: {what}")
            for name in gone:
                del names[name]
            self._write_names(names)
            self._collect(set(names.values()))
            return gone

    def _collect(self, kept: set[str]) -> None:
        """Remove the images no name stands for, then the layers no image uses."""
        used: set[str] = set()
        for record_file in (self.root / "images").glob("*.json"):
            if f"sha256:{record_file.stem}" not in kept:
                record_file.unlink()
                continue
            record = self.record(f"sha256:{record_file.stem}") or {}
            used.update(d[7:] for d in record.get("layers") or ())
        for layer in (self.root / "layers").iterdir():
            if layer.name == EMPTY_LAYER or layer.name.removesuffix(".size") in used:
                continue
            if layer.is_dir():
                trash = Path(tempfile.mkdtemp(prefix="gone-", dir=self.root / "tmp"))
                os.rename(layer, trash / "layer")
                shutil.rmtree(trash, ignore_errors=True)
            else:
                layer.unlink()
