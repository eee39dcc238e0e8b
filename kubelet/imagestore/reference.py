"""Image references as containerd normalises them: `nginx` is `docker.io/library/nginx:latest`,
`registry.k8s.io/pause:3.10` stays as it is, a digest (`name@sha256:...`) names one image whatever its tag."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_REGISTRY = "docker.io"


@dataclass(frozen=True)
class Reference:
    """A normalised reference: `name` with its registry host (`docker.io/library/nginx`), `tag` (`latest` when
    none is given and there is no digest), `digest` (`sha256:...` or "")."""

    name: str
    tag: str = ""
    digest: str = ""

    def __str__(self) -> str:
        return self.name + (f":{self.tag}" if self.tag else "") + (f"@{self.digest}" if self.digest else "")

    @property
    def short_name(self) -> str:
        """The repository without `docker.io/` and `library/`: `nginx`, `myorg/app`, `registry.k8s.io/pause`."""
        name = self.name.removeprefix(f"{DEFAULT_REGISTRY}/")
        return name.removeprefix("library/") if name.count("/") == 1 and name.startswith("library/") else name


def has_host(first: str) -> bool:
    """Whether the first path component of a reference is a registry host (as Docker decides it)."""
    return "." in first or ":" in first or first == "localhost"


def parse(text: str) -> Reference:
    """`nginx` -> docker.io/library/nginx:latest; `a/b:1` -> docker.io/a/b:1; `host:5000/x@sha256:..` kept.
    ValueError for what no reference can be (empty, spaces, upper case in the repository)."""
    text = text.strip()
    if not text or any(c.isspace() for c in text):
        raise ValueError(f"invalid reference {text!r}")
    name, _, digest = text.partition("@")
    tag = ""
    if ":" in name.rsplit("/", 1)[-1]:
        name, tag = name.rsplit(":", 1)
    if not name or name != name.lower() or name.startswith("/") or name.endswith("/") or "//" in name:
        raise ValueError(f"invalid reference {text!r}: the repository must be lower case path components")
    parts = name.split("/")
    if len(parts) == 1:
        parts = [DEFAULT_REGISTRY, "library", *parts]
    elif not has_host(parts[0]):
        parts = [DEFAULT_REGISTRY, *parts]
    if digest and not digest.startswith("sha256:"):
        raise ValueError(f"invalid reference {text!r}: only sha256 digests are known")
    return Reference("/".join(parts), tag or ("" if digest else "latest"), digest)
