"""The one exception type of the protobuf codec."""

from __future__ import annotations


class ProtobufError(ValueError):
    """Malformed or unsupported protobuf input (or an object that cannot be encoded).

    ``path`` names the field where the problem was found (``spec.template.metadata``), if any;
    the server should answer it with a 400 ``Status``.
    """

    def __init__(self, message: str, path: tuple[str, ...] = ()) -> None:
        self.reason = message
        self.path = path
        super().__init__(f"{'.'.join(path)}: {message}" if path else message)

    def within(self, name: str) -> ProtobufError:
        """Return the same error with ``name`` prepended to its field path."""
        return ProtobufError(self.reason, (name, *self.path)) if name else self
