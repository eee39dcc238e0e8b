"""Go's `%v` for error messages that quote patch content: lives in `apiserver.gofmt`, re-exported here."""

from __future__ import annotations

from mini_kube.apiserver.gofmt import go_v

__all__ = ["go_v"]
