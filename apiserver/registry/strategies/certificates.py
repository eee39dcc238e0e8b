"""CertificateSigningRequests' `approval` subresource (`kubectl certificate approve|deny`): a write there
changes the conditions only, as upstream's csrApprovalStrategy; spec and the rest of the status stay as stored."""

from __future__ import annotations

from typing import Any

from mini_kube.machinery.times import now_rfc3339

from ..strategy import Strategy, WriteContext

APPROVAL = "approval"


def prepare_approval_update(new: dict[str, Any], old: dict[str, Any]) -> None:
    """`new` becomes `old` with `new`'s conditions, whose missing timestamps are filled in: lastUpdateTime now,
    lastTransitionTime kept from the old condition of the same type and status, else now."""
    conditions = [dict(c) for c in ((new.get("status") or {}).get("conditions") or []) if isinstance(c, dict)]
    managed = (new.get("metadata") or {}).get("managedFields")
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
    new["metadata"] = dict(old["metadata"])
    if managed is not None:
        new["metadata"]["managedFields"] = managed
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
