"""Jobs: the server picks the selector (unless `manualSelector`), as upstream's job strategy does: the Pod
template gets `batch.kubernetes.io/controller-uid`, `batch.kubernetes.io/job-name` and their legacy
`controller-uid`/`job-name` forms, the selector matches the controller-uid, and a Job without labels
shows its template's."""

from __future__ import annotations

from typing import Any

from ..strategy import Strategy, WriteContext

UID_LABEL = "batch.kubernetes.io/controller-uid"
NAME_LABEL = "batch.kubernetes.io/job-name"
LEGACY_UID_LABEL = "controller-uid"
LEGACY_NAME_LABEL = "job-name"


def generate_selector(job: dict[str, Any]) -> None:
    """Add the uniquifying labels to the template (keeping any the user set) and select on the uid."""
    meta = job["metadata"]
    spec = job.setdefault("spec", {})
    template = spec.setdefault("template", {})
    labels = template.setdefault("metadata", {}).get("labels") or {}
    for key, value in ((LEGACY_UID_LABEL, meta["uid"]), (UID_LABEL, meta["uid"]),
                       (NAME_LABEL, meta.get("name", "")), (LEGACY_NAME_LABEL, meta.get("name", ""))):
        labels.setdefault(key, value)
    template["metadata"]["labels"] = dict(sorted(labels.items()))
    selector = spec.get("selector") or {}
    match = selector.get("matchLabels") or {}
    match.setdefault(UID_LABEL, meta["uid"])
    selector["matchLabels"] = match
    spec["selector"] = selector
    if not meta.get("labels"):
        meta["labels"] = dict(template["metadata"]["labels"])


class JobStrategy(Strategy):
    def prepare_for_create(self, ctx: WriteContext, obj: dict[str, Any]) -> None:
        super().prepare_for_create(ctx, obj)
        spec = obj.setdefault("spec", {})
        if spec.get("manualSelector") is None:
            spec["manualSelector"] = False
        if not spec["manualSelector"]:
            generate_selector(obj)
