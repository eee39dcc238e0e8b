"""RBAC escalation prevention as an admission plugin on Role/ClusterRole/RoleBinding/ClusterRoleBinding writes."""

from __future__ import annotations

from mini_kube.apiserver.admission.chain import AdmissionPlugin, Attributes
from mini_kube.apiserver.auth.escalation import check_binding, check_role
from mini_kube.apiserver.auth.rbac import RBAC_GROUP, RbacAuthorizer
from mini_kube.apiserver.auth.user import UserInfo

ROLES = ("roles", "clusterroles")
BINDINGS = ("rolebindings", "clusterrolebindings")


class RbacEscalation(AdmissionPlugin):
    """Refuse grants the writer does not hold (unless `escalate`/`bind` or system:masters)."""

    name = "RBACEscalation"
    operations = ("CREATE", "UPDATE")

    def __init__(self, authorizer: RbacAuthorizer) -> None:
        self.authorizer = authorizer

    def handles(self, attrs: Attributes) -> bool:
        return (attrs.operation in self.operations and attrs.resource.group == RBAC_GROUP
                and attrs.resource.plural in ROLES + BINDINGS and not attrs.subresource)

    async def validate(self, attrs: Attributes) -> None:
        user, obj = attrs.user, attrs.obj
        if not isinstance(user, UserInfo) or obj is None:
            return  # internal writes (bootstrap, controllers in-process) carry no authenticated user
        namespace = attrs.namespace or ""
        check = check_role if attrs.resource.plural in ROLES else check_binding
        denial = check(self.authorizer, user, obj, namespace=namespace, old=attrs.old)
        if denial is not None:
            raise denial
