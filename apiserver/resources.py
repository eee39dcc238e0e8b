"""The one table of resources: it drives routing, discovery, OpenAPI, storage keys and Table output.

A kind is a row here, and the row carries what the server does with the kind: its `strategy` (how the registry
writes it), its `validator` and its `printer` (Table output), typed by the protocols below. Built-in rows are
parsed from `BUILTIN_TABLE` and given their parts by `registry/kinds.py`; CustomResourceDefinitions add rows,
parts included, at run time through `ResourceRegistry.add` (`crd/rows.py`). Nothing else in the server branches
on a kind's name to decide how to route, store, validate or print it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from .errors import FieldError

CRUD_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
SUB_RW = ("get", "patch", "update")
Obj = dict[str, Any]


class KindStrategy(Protocol):
    """What the generic registry asks of a kind (upstream's rest.RESTCreateStrategy and friends); `ctx` is the
    registry's WriteContext. `registry/strategy.py`'s Strategy is the implementation every kind extends."""

    returns_deleted_object: bool  # a DELETE answers the deleted object, not a Status (upstream's ReturnDeletedObject)
    unconditional_update: bool  # a PUT without a resourceVersion overwrites (upstream's AllowUnconditionalUpdate)
    default_gc_policy: str  # a DELETE's propagation when it names none ("": background)
    converts_on_read: bool  # `read` needs `prepare_reads` awaited first

    def read(self, res: ResourceType, obj: Obj) -> Obj: ...
    async def prepare_reads(self, res: ResourceType, objs: Iterable[Obj]) -> None: ...
    def default(self, ctx: Any, obj: Obj) -> None: ...
    def prepare_for_create(self, ctx: Any, obj: Obj) -> None: ...
    def prepare_for_update(self, ctx: Any, new: Obj, old: Obj) -> None: ...
    def validate(self, ctx: Any, obj: Obj) -> list[FieldError]: ...
    def validate_update(self, ctx: Any, new: Obj, old: Obj) -> list[FieldError]: ...
    async def before_write(self, ctx: Any, new: Obj, old: Obj | None) -> None: ...
    async def after_delete(self, ctx: Any, obj: Obj) -> None: ...
    def grace_period(self, obj: Obj, requested: int | None) -> int | None: ...
    def deletion_finalizers(self, obj: Obj) -> tuple[str, ...]: ...
    def waits_for_finalization(self, obj: Obj) -> bool: ...
    def finalized(self, obj: Obj) -> bool: ...
    def mark_deleting(self, obj: Obj) -> None: ...


class KindValidator(Protocol):
    """A kind's validation (`validation/kinds.py`'s Rules): its metadata rules and its own."""

    def metadata_errors(self, obj: Obj, old: Obj | None, namespaced: bool) -> list[FieldError]: ...
    def errors(self, obj: Obj, old: Obj | None) -> list[FieldError]: ...


class ObjectSchema(Protocol):
    """A custom resource version's compiled schema (`crd/schema_validation.py`'s VersionSchema)."""

    def decode(self, obj: Obj) -> list[str]: ...
    def apply_defaults(self, obj: Obj) -> None: ...
    def unknown_fields(self, obj: Obj) -> list[str]: ...
    def convert(self, obj: Obj) -> Obj: ...
    def validate(self, obj: Obj, old: Obj | None = None) -> list[FieldError]: ...
    def validate_status(self, obj: Obj, old: Obj) -> list[FieldError]: ...


class KindPrinter(Protocol):
    """A kind's Table output (`printers/` for built-in kinds, a CRD's printer columns for custom resources)."""

    def table(self, objs: Iterable[Obj], now: datetime, include_object: str = "Metadata",
              list_meta: Mapping[str, Any] | None = None, headers: bool = True, version: str = "v1") -> Obj: ...


@dataclass(frozen=True, slots=True)
class Subresource:
    """A subresource such as `status` or `scale`: its name, the kind it speaks and its verbs."""

    name: str
    kind: str
    verbs: tuple[str, ...]
    group: str = ""
    version: str = ""


@dataclass(eq=False, slots=True)
class ResourceType:
    """One served resource (group/version/plural) and everything the server knows about it."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    subresources: tuple[Subresource, ...] = ()
    verbs: tuple[str, ...] = CRUD_VERBS
    singular: str = ""
    storage_version: str = ""
    list_kind: str = ""
    stored: bool = True
    crd: Any = None  # the CustomResourceDefinition object, for custom resources
    schema: Any = None  # custom resources: the openAPIV3Schema of this version
    storage_group: str | None = None  # another group's storage this resource shares (events.k8s.io -> core)
    printer_columns: tuple[dict[str, Any], ...] = ()
    selectable_fields: tuple[str, ...] = ()
    strategy: KindStrategy | None = None  # set for every served row (registry/kinds.py, crd/rows.py)
    validator: KindValidator | None = None
    printer: KindPrinter | None = None
    object_schema: ObjectSchema | None = None  # custom resources: this version's compiled schema
    scale: dict[str, Any] | None = None  # custom resources: the CRD's scale subresource (its JSON paths)
    fresh_after: int = 0  # custom resources: the CRD revision the row was built at (crd_controller.py)
    extra: dict[str, Any] = field(default_factory=dict)  # custom resources: discovery's version facts

    def __post_init__(self) -> None:
        if not self.singular:
            self.singular = self.kind.lower()
        if not self.list_kind:
            self.list_kind = self.kind + "List"
        if not self.storage_version:
            self.storage_version = self.version

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_resource(self) -> str:
        """`plural.group` as Kubernetes names it in messages (`configmaps`, `deployments.apps`)."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def key_prefix(self) -> str:
        """Storage key prefix; versions of one group/resource share it (like etcd's /registry/...)."""
        group = (self.group if self.storage_group is None else self.storage_group) or "core"
        return f"/registry/{group}/{self.plural}/"

    def key(self, namespace: str | None, name: str) -> str:
        """The storage key of one object."""
        if self.namespaced:
            return f"{self.key_prefix}{namespace}/{name}"
        return f"{self.key_prefix}{name}"

    def subresource(self, name: str) -> Subresource | None:
        for sub in self.subresources:
            if sub.name == name:
                return sub
        return None

    @property
    def has_status(self) -> bool:
        return self.subresource("status") is not None


def _subresources(spec: str, kind: str) -> tuple[Subresource, ...]:
    """Parse `status,scale,token:TokenRequest:create,eviction:policy/v1/Eviction:create` into Subresource rows."""
    subs = []
    for item in filter(None, spec.split(",")):
        name, _, rest = item.partition(":")
        if name == "status":
            subs.append(Subresource("status", kind, SUB_RW))
        elif name == "scale":
            subs.append(Subresource("scale", "Scale", SUB_RW, "autoscaling", "v1"))
        else:
            sub_kind, _, verbs = rest.partition(":")
            group, version = "", ""
            if "/" in sub_kind:  # another group's kind (pods/eviction speaks policy/v1 Eviction)
                group, version, sub_kind = sub_kind.split("/")
            subs.append(Subresource(name, sub_kind or kind, tuple(verbs.split("+")) if verbs else SUB_RW,
                                    group, version))
    return tuple(subs)


# group/version  plural  Kind  scope(N|C)  shortNames  categories  subresources  verbs
# "-" means none; verbs "-" means the full CRUD set.
BUILTIN_TABLE = """
v1 bindings Binding N - - - create
v1 componentstatuses ComponentStatus C cs - - get+list
v1 configmaps ConfigMap N cm - - -
v1 endpoints Endpoints N ep - - -
v1 events Event N ev - - -
v1 limitranges LimitRange N limits - - -
v1 namespaces Namespace C ns - status,finalize:Namespace:update create+delete+get+list+patch+update+watch
v1 nodes Node C no - proxy:NodeProxyOptions:create+delete+get+patch+update,status -
v1 persistentvolumeclaims PersistentVolumeClaim N pvc - status -
v1 persistentvolumes PersistentVolume C pv - status -
v1 pods Pod N po all attach:PodAttachOptions:create+get,binding:Binding:create,ephemeralcontainers,eviction:policy/v1/Eviction:create,exec:PodExecOptions:create+get,log:Pod:get,portforward:PodPortForwardOptions:create+get,proxy:PodProxyOptions:create+delete+get+patch+update,status -
v1 podtemplates PodTemplate N - - - -
v1 replicationcontrollers ReplicationController N rc all status,scale -
v1 resourcequotas ResourceQuota N quota - status -
v1 secrets Secret N - - - -
v1 serviceaccounts ServiceAccount N sa - token:TokenRequest:create -
v1 services Service N svc all proxy:ServiceProxyOptions:create+delete+get+patch+update,status -
admissionregistration.k8s.io/v1 mutatingwebhookconfigurations MutatingWebhookConfiguration C - api-extensions - -
admissionregistration.k8s.io/v1 validatingadmissionpolicies ValidatingAdmissionPolicy C - api-extensions status -
admissionregistration.k8s.io/v1 validatingadmissionpolicybindings ValidatingAdmissionPolicyBinding C - api-extensions - -
admissionregistration.k8s.io/v1 validatingwebhookconfigurations ValidatingWebhookConfiguration C - api-extensions - -
apiextensions.k8s.io/v1 customresourcedefinitions CustomResourceDefinition C crd+crds api-extensions status -
apiregistration.k8s.io/v1 apiservices APIService C - api-extensions status -
apps/v1 controllerrevisions ControllerRevision N - - - -
apps/v1 daemonsets DaemonSet N ds all status -
apps/v1 deployments Deployment N deploy all status,scale -
apps/v1 replicasets ReplicaSet N rs all status,scale -
apps/v1 statefulsets StatefulSet N sts all status,scale -
authentication.k8s.io/v1 selfsubjectreviews SelfSubjectReview C - - - create
authentication.k8s.io/v1 tokenreviews TokenReview C - - - create
authorization.k8s.io/v1 localsubjectaccessreviews LocalSubjectAccessReview N - - - create
authorization.k8s.io/v1 selfsubjectaccessreviews SelfSubjectAccessReview C - - - create
authorization.k8s.io/v1 selfsubjectrulesreviews SelfSubjectRulesReview C - - - create
authorization.k8s.io/v1 subjectaccessreviews SubjectAccessReview C - - - create
autoscaling/v2 horizontalpodautoscalers HorizontalPodAutoscaler N hpa all status -
autoscaling/v1 horizontalpodautoscalers HorizontalPodAutoscaler N hpa all status -
batch/v1 cronjobs CronJob N cj all status -
batch/v1 jobs Job N - all status -
certificates.k8s.io/v1 certificatesigningrequests CertificateSigningRequest C csr - status,approval -
coordination.k8s.io/v1 leases Lease N - - - -
discovery.k8s.io/v1 endpointslices EndpointSlice N - - - -
events.k8s.io/v1 events Event N ev - - -
flowcontrol.apiserver.k8s.io/v1 flowschemas FlowSchema C - - status -
flowcontrol.apiserver.k8s.io/v1 prioritylevelconfigurations PriorityLevelConfiguration C - - status -
networking.k8s.io/v1 ingressclasses IngressClass C - - - -
networking.k8s.io/v1 ingresses Ingress N ing - status -
networking.k8s.io/v1 networkpolicies NetworkPolicy N netpol - - -
node.k8s.io/v1 runtimeclasses RuntimeClass C - - - -
policy/v1 poddisruptionbudgets PodDisruptionBudget N pdb - status -
rbac.authorization.k8s.io/v1 clusterrolebindings ClusterRoleBinding C - - - -
rbac.authorization.k8s.io/v1 clusterroles ClusterRole C - - - -
rbac.authorization.k8s.io/v1 rolebindings RoleBinding N - - - -
rbac.authorization.k8s.io/v1 roles Role N - - - -
scheduling.k8s.io/v1 priorityclasses PriorityClass C pc - - -
storage.k8s.io/v1 csidrivers CSIDriver C - - - -
storage.k8s.io/v1 csinodes CSINode C - - - -
storage.k8s.io/v1 csistoragecapacities CSIStorageCapacity N - - - -
storage.k8s.io/v1 storageclasses StorageClass C sc - - -
storage.k8s.io/v1 volumeattachments VolumeAttachment C - - status -
"""

# Kinds served only as request/response bodies (never stored): reviews, bindings, component status.
NOT_STORED = {"Binding", "ComponentStatus", "SelfSubjectReview", "TokenReview", "LocalSubjectAccessReview",
              "SelfSubjectAccessReview", "SelfSubjectRulesReview", "SubjectAccessReview"}


def _none(field_text: str) -> tuple[str, ...]:
    return () if field_text == "-" else tuple(field_text.split("+"))


def parse_table(text: str) -> list[ResourceType]:
    """Parse the compact table above into ResourceType rows."""
    rows = []
    for line in text.strip().splitlines():
        gv, plural, kind, scope, shorts, cats, subs, verbs = line.split()
        group, _, version = gv.rpartition("/")
        rows.append(ResourceType(
            group=group, version=version, kind=kind, plural=plural, namespaced=scope == "N",
            short_names=_none(shorts), categories=_none(cats),
            subresources=_subresources("" if subs == "-" else subs, kind),
            verbs=CRUD_VERBS if verbs == "-" else tuple(verbs.split("+")),
            stored=kind not in NOT_STORED,
        ))
    return rows


# The preferred (first-listed) version of a group is the storage version of resources served in several.
class ResourceRegistry:
    """The live resource table: built-in rows plus custom resources added and removed at run time.

    Readers get immutable snapshots (`all()`), so a CRD change never mutates a list being iterated.
    Listeners are told after every change (discovery and OpenAPI caches reset themselves).
    """

    def __init__(self, rows: Iterable[ResourceType]) -> None:
        self._lock = threading.Lock()
        self._rows: tuple[ResourceType, ...] = ()
        self._by_path: dict[tuple[str, str, str], ResourceType] = {}
        self._listeners: list[Callable[[], None]] = []
        self._set(tuple(rows))

    def _set(self, rows: tuple[ResourceType, ...]) -> None:
        self._rows = rows
        self._by_path = {(r.group, r.version, r.plural): r for r in rows}
        for listener in list(self._listeners):
            listener()

    def on_change(self, listener: Callable[[], None]) -> None:
        self._listeners.append(listener)

    def all(self) -> tuple[ResourceType, ...]:
        return self._rows

    def lookup(self, group: str, version: str, plural: str) -> ResourceType | None:
        return self._by_path.get((group, version, plural))

    def by_kind(self, group: str, version: str, kind: str) -> ResourceType | None:
        for row in self._rows:
            if row.group == group and row.version == version and row.kind == kind:
                return row
        return None

    def versions_of(self, group: str, plural: str) -> list[ResourceType]:
        return [r for r in self._rows if r.group == group and r.plural == plural]

    def add(self, rows: Iterable[ResourceType]) -> None:
        """Add or replace rows (matched by group/version/plural)."""
        with self._lock:
            new = {(r.group, r.version, r.plural): r for r in rows}
            kept = tuple(r for r in self._rows if (r.group, r.version, r.plural) not in new)
            self._set(kept + tuple(new.values()))

    def remove(self, group: str, plural: str) -> None:
        """Remove every version of one group/resource."""
        with self._lock:
            self._set(tuple(r for r in self._rows if not (r.group == group and r.plural == plural)))


def builtin_rows() -> list[ResourceType]:
    """Fresh built-in rows without their parts (`registry.kinds.builtin_resources` gives them theirs)."""
    rows = parse_table(BUILTIN_TABLE)
    # Several versions of one resource share storage; the first listed is the storage version.
    first: dict[tuple[str, str], str] = {}
    for row in rows:
        row.storage_version = first.setdefault((row.group, row.plural), row.version)
        if (row.group, row.kind) == ("events.k8s.io", "Event"):
            row.storage_group = ""  # one store of events, read in either shape (as upstream)
    return rows
