"""The images a node has besides its built-in ones, in the order they are looked up: the user's image map,
then the images loaded into its store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .imagemap import ImageMap
from .local import LocalImage
from .store import ImageStore


class NodeImages:
    """A node's image map (None: no --image-map) and image store (None: no loaded images)."""

    def __init__(self, image_map: ImageMap | None = None, store: ImageStore | None = None) -> None:
        self.image_map = image_map
        self.store = store

    @classmethod
    def from_config(cls, image_map: str | Path | dict[str, Any] | list[Any] | None = None,
                    store: str | Path = "") -> NodeImages | None:
        """From an image map (a file, or its parsed YAML with paths relative to the working directory) and a
        store directory (either may be empty); None when neither is given. ImageMapError for a map that cannot
        be used."""
        if not image_map and not store:
            return None
        if isinstance(image_map, dict | list):
            loaded: ImageMap | None = ImageMap.from_data(image_map, base=Path.cwd())
        else:
            loaded = ImageMap.load(image_map) if image_map else None
        return cls(loaded, ImageStore(store) if store else None)

    def find(self, image: str) -> LocalImage | None:
        """The mapped or loaded image `image` names, or None."""
        if self.image_map is not None:
            found = self.image_map.find(image)
            if found is not None:
                return found
        return self.store.find(image) if self.store is not None else None
