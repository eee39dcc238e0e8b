"""CertificateSigningRequests' `approval` subresource (`kubectl certificate approve|deny`): a write there
changes the conditions only, as upstream's csrApprovalStrategy; spec and the rest of the status stay as stored."""

from __future__ import annotations

from typing import Any

from mini_kube.machinery.times import now_rfc3339

from ..strategy import STATUS_METADATA, Strategy, WriteContext, take_metadata

APPROVAL = "approval"


def prepare_approval_update(new: dict[str, Any], old: dict[str, Any]) -> None:
    """`new` becomes `old` with `new`'s metadata and conditions (upstream resets only spec and status), whose
    missing timestamps are filled in: lastUpdateTime now, lastTransitionTime kept from the old condition of the
    same type and status, else now."""
    given = new.get("metadata") or {}
    conditions = [dict(c) for c in ((new.get("status") or {}).get("conditions") or []) if isinstance(c, dict)]
    before = {c.get("type"): c for c in ((old.get("status") or {}).get("conditions") or [])}
    now = now_rfc3339()
    for cond in conditions:
        if not cond.get("lastUpdateTime"):
            cond["lastUpdateTime"] = now
        if not cond.get("lastTransitionTime"):
            previous = before.get(cond.get("type"))
            kept = previous.get("lastTransitionTime") if previous is not None else None
            same = previous is not None and previous.get("status") == cond.get("status")
            cond["lastTransitionTime"] = kept if same and kept else now
    new.clear()
    new.update(old)
    new["metadata"] = take_metadata(old["metadata"], given, STATUS_METADATA)
    if given.get("managedFields") is not None:
        new["metadata"]["managedFields"] = given["managedFields"]
    status = dict(old.get("status") or {})
    if conditions:
        status["conditions"] = conditions
    else:
        status.pop("conditions", None)
    new["status"] = status


class CertificateSigningRequestStrategy(Strategy):
    def prepare_for_update(self, ctx: WriteContext, new: dict[str, Any], old: dict[str, Any]) -> None:
        if ctx.subresource == APPROVAL:
            prepare_approval_update(new, old)
            return
        super().prepare_for_update(ctx, new, old)
