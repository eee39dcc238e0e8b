"""What a container of a mapped or loaded image runs with: the image's entrypoint and default arguments, its
environment, working directory and user, and where its files come from (the layers of its root filesystem, or
the host's system directories with directories of the host's bound in)."""

from __future__ import annotations

from dataclasses import dataclass, field


class ImageRunError(ValueError):
    """A container its image cannot run (no command, a user the image lacks): CreateContainerError."""


@dataclass(frozen=True)
class LocalImage:
    """An image the node has besides its built-in ones. `kind`: "mapped" (--image-map) or "loaded" (mini-kube
    image load). `layers`: directories whose union is the container's root, topmost first (none: the host's
    system directories, as for built-in images); `binds`: host directories seen at the same path (mapped
    images without a root), read-only unless `writable`."""

    kind: str
    reference: str  # the image as the node knows it (`docker.io/library/myapp:dev`)
    image_id: str  # the status imageID: the config's digest for a loaded image
    entrypoint: tuple[str, ...] = ()
    cmd: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    working_dir: str = ""
    user: str = ""  # `uid`, `uid:gid`, `name`, `name:group` (resolved in the image's /etc/passwd and /etc/group)
    exposed_ports: tuple[str, ...] = ()  # `80/tcp`: documentation, as in Kubernetes (containerPorts decide nothing)
    layers: tuple[str, ...] = ()
    binds: tuple[str, ...] = ()
    writable: bool = False
    size: int = 0
    note: str = field(default="", compare=False)  # how the node came to run it, for its events

    @property
    def ran_as(self) -> str:
        """How the node runs it, for its Pulled event."""
        return self.note

    def argv(self, command: list[str], args: list[str]) -> list[str]:
        """The process of a container with this image, as containerd combines them: a command replaces the
        ENTRYPOINT and drops the CMD; args alone replace the CMD. Empty when neither names a program."""
        if command:
            return [*command, *args]
        entrypoint = [] if self.entrypoint == ("",) else list(self.entrypoint)
        return [*entrypoint, *(args or self.cmd)]

    def environment(self) -> dict[str, str]:
        """The image's variables (the container's own come after and win)."""
        return dict(self.env)
