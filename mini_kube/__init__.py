"""mini-kube: a small, real Kubernetes control plane.

Its packages are installed under this one name (`mini_kube.apiserver`, `mini_kube.store`,
`mini_kube.controllers`, `mini_kube.kubelet`, `mini_kube.network`, `mini_kube.proxy`, `mini_kube.ccm`,
`mini_kube.clusterdns`, `mini_kube.kubectl_lite`), so they never collide with a user's own `controllers` or
`store` package. In the source tree they live at the top level; this package then finds them there. This
package itself holds what puts them together: `cli` (`mini-kube`) and `testing` (`MiniKube`, the pytest plugin).

    from mini_kube import MiniKube          # a hermetic cluster (also the pytest fixtures `mini_kube`, ...)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
if not (_HERE / "apiserver").is_dir() and (_HERE.parent / "apiserver" / "__init__.py").is_file():
    __path__.append(str(_HERE.parent))  # a source checkout: the subpackages sit beside this folder

__all__ = ["MiniKube"]


def __getattr__(name: str) -> Any:
    if name == "MiniKube":  # imported on first use: the pytest plugin loads this package at start-up
        from .testing import MiniKube

        return MiniKube
    raise AttributeError(name)
