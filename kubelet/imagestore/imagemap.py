"""A user's image map (`--image-map FILE`): images, by pattern, run as local commands, so a Pod with image
`myapp:dev` runs `./bin/myapp` from the developer's checkout. The file is YAML:

    images:
    - image: myapp:dev              # a reference; `*` and `?` glob; without a tag any tag matches
      command: ["./bin/myapp"]      # the image's ENTRYPOINT (a string is split as a shell splits it)
      args: ["--port", "8080"]      # its CMD
      workingDir: ~/src/myapp       # its WORKDIR (relative: to the map file's directory)
      env: {MODE: dev}              # its ENV
      root: ./rootfs                # optional: the container's root filesystem (read-only; writes are the
                                    # container's own), else the host's system directories as for built-in images
      writable: false               # without a root: whether the container may change workingDir (default no)

The first entry that matches wins; built-in images come first (kubelet/images.py). Without a root the working
directory is seen at the same path in the container."""

from __future__ import annotations

import fnmatch
import hashlib
import json
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .local import LocalImage
from .reference import Reference, parse

FIELDS = {"image", "command", "args", "workingDir", "env", "root", "writable"}
MAX_MAP_BYTES = 1 << 20


class ImageMapError(ValueError):
    """An image map that cannot be used; the message names the file and the entry."""


@dataclass(frozen=True)
class Mapping:
    """One entry of the map: the pattern it was written as, parsed, and the image it stands for."""

    pattern: str
    reference: Reference
    any_tag: bool
    image: LocalImage

    def matches(self, ref: Reference, text: str) -> bool:
        """Whether the image `text` (parsed as `ref`) is this entry's."""
        if not self.any_tag and not fnmatch.fnmatchcase(ref.tag, self.reference.tag):
            return False
        repository = self.pattern.split("@")[0]
        if not self.any_tag:
            repository = repository.rsplit(":", 1)[0]
        short = text.split("@")[0]
        if ":" in short.rsplit("/", 1)[-1]:
            short = short.rsplit(":", 1)[0]
        return any(fnmatch.fnmatchcase(name, pattern) for name, pattern in (
            (ref.name, self.reference.name), (ref.short_name, repository), (short, repository)))


class ImageMap:
    """The entries of one map file, in order."""

    def __init__(self, mappings: list[Mapping], source: str = "") -> None:
        self.mappings = mappings
        self.source = source

    @classmethod
    def load(cls, path: str | Path) -> ImageMap:
        """Read and check a map file; ImageMapError saying what is wrong where."""
        file = Path(path).expanduser()
        try:
            with open(file, "rb") as handle:
                raw = handle.read(MAX_MAP_BYTES + 1)
        except OSError as exc:
            raise ImageMapError(f"{path}: {exc.strerror}") from None
        if len(raw) > MAX_MAP_BYTES:
            raise ImageMapError(f"{path}: larger than {MAX_MAP_BYTES} bytes")
        try:
            data = yaml.safe_load(raw)
        except yaml.YAMLError as exc:
            raise ImageMapError(f"{path}: not YAML: {exc}".splitlines()[0]) from None
        return cls.from_data(data, base=file.resolve().parent, source=str(path))

    @classmethod
    def from_data(cls, data: Any, base: Path, source: str = "image map") -> ImageMap:
        """The map from its parsed YAML (a mapping with `images`, or the list itself); relative paths are taken
        from `base`."""
        if isinstance(data, dict):
            extra = set(data) - {"images"}
            if extra:
                raise ImageMapError(f"{source}: unknown field {sorted(extra)[0]!r} (expected 'images')")
            data = data.get("images")
        if data is None:
            data = []
        if not isinstance(data, list):
            raise ImageMapError(f"{source}: 'images' must be a list of entries")
        return cls([entry(item, f"{source}: images[{i}]", base) for i, item in enumerate(data)], source)

    def find(self, image: str) -> LocalImage | None:
        """The mapped image `image` names, or None."""
        try:
            ref = parse(image)
        except ValueError:
            return None
        for mapping in self.mappings:
            if mapping.matches(ref, image):
                return mapping.image
        return None


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        try:
            return tuple(shlex.split(value))
        except ValueError as exc:
            raise ImageMapError(f"{where}: {exc}") from None
    if isinstance(value, list) and all(isinstance(v, str | int | float) and not isinstance(v, bool) for v in value):
        return tuple(str(v) for v in value)
    raise ImageMapError(f"{where}: must be a list of strings or a command line")


def _directory(value: Any, where: str, base: Path) -> str:
    if not isinstance(value, str) or not value:
        raise ImageMapError(f"{where}: must be a directory")
    path = (base / Path(value).expanduser()).resolve()
    if not path.is_dir():
        raise ImageMapError(f"{where}: {path} is not a directory")
    return str(path)


def entry(item: Any, where: str, base: Path) -> Mapping:
    """One entry of the map, checked."""
    if not isinstance(item, dict):
        raise ImageMapError(f"{where}: must be a mapping with 'image' and 'command'")
    unknown = set(item) - FIELDS
    if unknown:
        raise ImageMapError(f"{where}: unknown field {sorted(unknown)[0]!r}")
    pattern = item.get("image")
    if not isinstance(pattern, str) or not pattern.strip():
        raise ImageMapError(f"{where}.image: must be an image reference or pattern (myapp:dev, example.com/team/*)")
    pattern = pattern.strip()
    last = pattern.split("@")[0].rsplit("/", 1)[-1]
    any_tag = ":" not in last and "@" not in pattern
    try:
        reference = parse(pattern)
    except ValueError as exc:
        raise ImageMapError(f"{where}.image: {exc}") from None
    env = item.get("env") or {}
    if not isinstance(env, dict) or not all(isinstance(k, str) and k for k in env):
        raise ImageMapError(f"{where}.env: must map variable names to values")
    if any(isinstance(v, dict | list) for v in env.values()):
        raise ImageMapError(f"{where}.env: values must be strings")
    root = _directory(item["root"], f"{where}.root", base) if item.get("root") is not None else ""
    working_dir = ""
    if item.get("workingDir") is not None:
        value = item["workingDir"]
        if root:  # a path in the root filesystem
            if not isinstance(value, str) or not value.startswith("/"):
                raise ImageMapError(f"{where}.workingDir: with a root, an absolute path in it")
            working_dir = value
        else:
            working_dir = _directory(value, f"{where}.workingDir", base)
    writable = item.get("writable", False)
    if not isinstance(writable, bool):
        raise ImageMapError(f"{where}.writable: must be true or false")
    command = _strings(item["command"], f"{where}.command") if item.get("command") is not None else ()
    args = _strings(item["args"], f"{where}.args") if item.get("args") is not None else ()
    digest = hashlib.sha256(json.dumps(item, sort_keys=True, default=str).encode()).hexdigest()
    shown = shlex.join([*command, *args]) or "the Pod's command"
    note = f"mapped by the node's image map to {shown}" + (f" in {working_dir}" if working_dir else "") + (
        f" with root {root}" if root else "")
    image = LocalImage("mapped", str(reference), f"sha256:{digest}", entrypoint=command, cmd=args,
                       env=tuple((k, "" if v is None else str(v).lower() if isinstance(v, bool) else str(v))
                                 for k, v in env.items()),
                       working_dir=working_dir, layers=(root,) if root else (),
                       binds=(working_dir,) if working_dir and not root else (), writable=writable, note=note)
    return Mapping(pattern, reference, any_tag, image)
