"""The generic registry: create, read, update, delete and list any resource through its strategy.

Reads come from the in-memory cache; writes are compare-and-swap operations on the store that embed the
store revision as `metadata.resourceVersion`. Mirrors k8s.io/apiserver/pkg/registry/generic/registry/store.go.
What differs between kinds is the row's strategy (`res.strategy`): this module never looks at a kind's name.
"""

from __future__ import annotations

import base64
import builtins
import secrets
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
from mini_kube.machinery.labels import Selector
from mini_kube.machinery.times import now_rfc3339
from mini_kube.store import ConflictError, KeyExistsError, KeyNotFoundError, Store, ValueTooLargeError
from mini_kube.store.errors import CompactedError, FutureRevisionError

from .. import errors
from ..errors import StatusError
from ..http.query import resource_version
from ..resources import KindStrategy, ResourceRegistry, ResourceType
from ..schema.definitions import definition_name
from ..schema.zero_values import fill_zero_values
from ..selectors import FieldSelector
from . import selection
from .cache import Entry, ObjectCache
from .deletion import before_delete

GENERATE_CHARS = "bcdfghjklmnpqrstvwxz2456789"
MAX_STORE_VALUE = 1_572_864
DELETE_RETRIES = 10  # a delete raced by other writes tries again this often before answering 409


_now_cache: tuple[int, str] = (0, "")


@dataclass(slots=True)
class WriteOptions:
    """Per-request write options (query parameters and the caller's identity)."""

    dry_run: bool = False
    field_manager: str = ""
    user: Any = None
    subresource: str = ""
    operation: str = "Update"  # managedFields operation: Update or Apply
    warnings: list[str] = field(default_factory=list)
    audit_annotations: dict[str, str] = field(default_factory=dict)  # admission's, for the request's audit event


@dataclass(slots=True)
class WriteContext:
    """What a strategy may need to know about the write in progress."""

    registry: Registry
    resource: ResourceType
    namespace: str | None
    dry_run: bool = False
    subresource: str = ""
    user: Any = None
    release: list[Any] = field(default_factory=list)  # in-flight reservations, dropped after the write


@dataclass(slots=True)
class ListResult:
    items: list[Entry]
    revision: int
    continue_token: str = ""
    remaining: int | None = None


# Upstream orders ObjectMeta fields this way on the wire; keeping it makes our JSON read like theirs.
META_ORDER = ("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
              "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations",
              "ownerReferences", "finalizers", "managedFields")


def ordered(obj: dict[str, Any]) -> dict[str, Any]:
    """kind, apiVersion, metadata (in upstream field order), then the rest."""
    meta = obj.get("metadata") or {}
    meta.setdefault("resourceVersion", "")  # its place in the order; the store fills the value in
    ordered_meta = {k: meta[k] for k in META_ORDER if k in meta}
    if len(ordered_meta) != len(meta):
        ordered_meta.update((k, v) for k, v in meta.items() if k not in ordered_meta)
    out = {"kind": obj.get("kind"), "apiVersion": obj.get("apiVersion"), "metadata": ordered_meta}
    out.update((k, v) for k, v in obj.items() if k not in out)
    return out


INCONSISTENT_CONTINUE = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new list "
    "without the continue parameter, or use the continue token in this response to retrieve the remainder of the "
    "results. Continuing with the provided token results in an inconsistent list - objects that were created, "
    "modified, or deleted between the time the first chunk was returned and now may show up in the list.")
LATEST = -1  # a continue token's revision meaning "the latest": an expired token's successor, as upstream's


def encode_continue(revision: int, start_key: str) -> str:
    token = orjson.dumps({"v": "meta.k8s.io/v1", "rv": revision, "start": start_key + "\x00"})
    return base64.urlsafe_b64encode(token).decode().rstrip("=")


def decode_continue(token: str) -> tuple[int, str]:
    try:
        padded = token + "=" * (-len(token) % 4)
        data = orjson.loads(base64.urlsafe_b64decode(padded))
        revision, start = int(data["rv"]), str(data["start"])
        if data.get("v") != "meta.k8s.io/v1" or revision == 0 or revision < LATEST:
            raise ValueError
        return revision, start.removesuffix("\x00")
    except (ValueError, KeyError, TypeError) as exc:
        raise errors.bad_request(f"continue key is not valid: {exc or 'incorrect encoded start resourceVersion (version meta.k8s.io/v1)'}") from None


def go_zero_values(res: ResourceType, obj: dict[str, Any]) -> None:
    """Built-in kinds as Go serializes them: non-omitempty fields present with their zero value (in the version
    the object is stored in: a strategy may store another version's shape)."""
    if res.crd is None:
        group, _, version = str(obj.get("apiVersion") or res.api_version).rpartition("/")
        name = definition_name(group, version, res.kind)
        if name is not None:
            fill_zero_values(name, obj)


class Registry:
    """All resources' storage logic, parameterized by the resource table (each row with its strategy)."""

    def __init__(self, store: Store, cache: ObjectCache, resources: ResourceRegistry, admission: Any = None) -> None:
        self.store = store
        self.cache = cache
        self.resources = resources
        self.admission = admission
        self.field_tracker: Callable[..., dict[str, Any]] | None = None

    @staticmethod
    def strategy(res: ResourceType) -> KindStrategy:
        """The row's strategy (every served row has one: registry/kinds.py)."""
        if res.strategy is None:
            raise errors.method_not_allowed()
        return res.strategy

    # -- reads -------------------------------------------------------------------------------------
    def get(self, res: ResourceType, namespace: str | None, name: str) -> Entry:
        entry = self.cache.get(res.key(namespace, name))
        if entry is None:
            raise errors.not_found(res.group_resource, name)
        return entry

    def find(self, res: ResourceType, namespace: str | None, name: str) -> Entry | None:
        return self.cache.get(res.key(namespace, name))

    async def list(self, res: ResourceType, namespace: str | None, *, labels: Selector | None = None,
                   fields: FieldSelector | None = None, limit: int = 0, continue_token: str = "",
                   resource_version: str = "", match: str = "") -> ListResult:
        """List with selectors and chunking; continuation pages read the store at the first page's revision."""
        labels = labels or Selector(())
        fields = fields or FieldSelector(())
        collection = res.key_prefix
        prefix = f"{collection}{namespace}/" if namespace and res.namespaced else collection
        if continue_token:
            revision, start = decode_continue(continue_token)
            if revision == LATEST:  # go on from `start` at the current revision: an inconsistent list
                if self.store.shared:
                    await self.store.sync()
                revision = self.cache.revision
            return await self._list_from_store(res, prefix, revision, start, labels, fields, limit)
        if not resource_version and self.store.shared:
            await self.store.sync()  # a store shared with other API servers: list at least what they wrote
        if match == "Exact" and resource_version:
            revision = self._parse_rv(resource_version)
            if revision != self.cache.revision:
                return await self._list_from_store(res, prefix, revision, None, labels, fields, limit)
        elif resource_version and resource_version != "0":
            revision = self._parse_rv(resource_version)
            if revision > self.cache.revision:
                try:
                    await self.cache.wait_for(revision)
                except TimeoutError:
                    raise StatusError(504, "Timeout", f"Timeout: Too large resource version: {revision}, "
                                      f"current: {self.cache.revision}", {"causes": [{
                                          "reason": "ResourceVersionTooLarge",
                                          "message": "Too large resource version"}], "retryAfterSeconds": 1}) from None
        entries = self.cache.list(collection, namespace if res.namespaced else None)
        revision = self.cache.revision
        filtering = not (labels.empty and fields.empty)
        if filtering:
            entries = await selection.select(res, entries, labels, fields)
        if limit and len(entries) > limit:
            page = entries[:limit]
            remaining = None if filtering else len(entries) - limit
            return ListResult(page, revision, encode_continue(revision, page[-1].key), remaining)
        return ListResult(entries, revision)

    def _parse_rv(self, value: str) -> int:
        return resource_version(value)

    async def _list_from_store(self, res: ResourceType, prefix: str, revision: int, start: str | None,
                               labels: Selector, fields: FieldSelector, limit: int) -> ListResult:
        items: list[Entry] = []
        after = start
        unfiltered = labels.empty and fields.empty
        try:
            while True:
                page = await self.store.range(prefix, revision=revision, limit=max(limit, 500) if limit else 0,
                                              start_after=after)
                read = [Entry(kv.key, orjson.loads(kv.value), kv.value, kv.mod_revision) for kv in page.kvs]
                for entry in await selection.select(res, read, labels, fields):
                    items.append(entry)
                    if limit and len(items) == limit:
                        more = entry is not read[-1] or page.more
                        if not more:
                            return ListResult(items, revision)
                        # unfiltered, every key after `start` is an item: the rest is the count less this page
                        remaining = page.count - limit if unfiltered and after == start else None
                        return ListResult(items, revision, encode_continue(revision, entry.key), remaining)
                if not page.more or not page.kvs:
                    return ListResult(items, revision)
                after = page.kvs[-1].key
        except CompactedError:
            if start is None:
                raise errors.gone(f"too old resource version: {revision} ({self.store.compact_revision})") from None
            raise errors.gone(INCONSISTENT_CONTINUE, encode_continue(LATEST, start)) from None
        except FutureRevisionError:
            raise StatusError(504, "Timeout", f"Timeout: Too large resource version: {revision}, current: "
                              f"{self.store.revision}") from None

    # -- create ------------------------------------------------------------------------------------
    async def create(self, res: ResourceType, namespace: str | None, obj: dict[str, Any],
                     opts: WriteOptions) -> dict[str, Any] | Entry:
        """Create an object; returns the stored Entry (or the would-be object on dry run)."""
        ctx = WriteContext(self, res, namespace, opts.dry_run, opts.subresource, opts.user)
        strategy = self.strategy(res)
        meta = self._check_identity(res, namespace, obj)
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = meta["generateName"] + "".join(secrets.choice(GENERATE_CHARS) for _ in range(5))
        strategy.default(ctx, obj)
        if self.admission is not None:
            await self.admission.admit("CREATE", ctx, obj, None, opts)
        if self.field_tracker is not None:
            obj = self.field_tracker(res, None, obj, opts)
            meta = obj["metadata"]
        for key in ("uid", "resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds", "generation",
                    "selfLink"):
            meta.pop(key, None)
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = now_rfc3339()
        strategy.prepare_for_create(ctx, obj)
        errs = strategy.validate(ctx, obj)
        if errs:
            raise errors.invalid_object(res.kind, res.group, meta.get("name", ""), errs)
        if self.admission is not None:
            await self.admission.validate("CREATE", ctx, obj, None, opts)
        name = meta.get("name") or ""
        key = res.key(namespace, name)
        if self.cache.get(key) is not None:
            raise errors.already_exists(res.group_resource, name)
        try:
            await strategy.before_write(ctx, obj, None)
            go_zero_values(res, obj)
            if opts.dry_run:
                return ordered(obj)
            kv = await self.store.create(key, self._encoder(ordered(obj)))
        except KeyExistsError:
            raise errors.already_exists(res.group_resource, name) from None
        except ValueTooLargeError:
            raise errors.too_large("etcdserver: request is too large") from None
        finally:
            self._release(ctx)
        return self._entry(kv.key)

    @staticmethod
    def _release(ctx: WriteContext) -> None:
        """Drop in-flight reservations: once stored, the object itself records what it holds."""
        for release in reversed(ctx.release):
            release()
        ctx.release.clear()

    def _entry(self, key: str) -> Entry:
        entry = self.cache.get(key)
        assert entry is not None, "the cache is fed synchronously by the store"
        return entry

    @staticmethod
    def _encoder(obj: dict[str, Any]) -> Callable[[int], bytes]:
        """The stored bytes of `obj`, given the revision of the write that stores them."""
        def encode(revision: int) -> bytes:
            obj["metadata"]["resourceVersion"] = str(revision)
            return orjson.dumps(obj)

        return encode

    def _check_identity(self, res: ResourceType, namespace: str | None, obj: dict[str, Any]) -> dict[str, Any]:
        """Fill and check apiVersion, kind and namespace against the request."""
        if not isinstance(obj, dict):
            raise errors.bad_request("the body of the request was not a JSON object")
        meta = obj.get("metadata")
        if meta is None:
            meta = obj["metadata"] = {}
        if not isinstance(meta, dict):
            raise errors.bad_request(f'{res.kind} in version "{res.version}" cannot be handled as a {res.kind}: '
                                     "json: cannot unmarshal into Go struct field .metadata of type v1.ObjectMeta")
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if kind and kind != res.kind:
            raise errors.bad_request(f"the kind in the data ({kind}) does not match the expected kind ({res.kind})")
        if api_version and api_version != res.api_version and not self._same_group(api_version, res):
            raise errors.bad_request(f"the API version in the data ({api_version}) does not match the expected "
                                     f"API version ({res.api_version})")
        obj["apiVersion"], obj["kind"] = res.api_version, res.kind
        if res.namespaced:
            given = meta.get("namespace")
            if given and given != namespace:
                raise errors.bad_request("the namespace of the provided object does not match the namespace "
                                         "sent on the request")
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)
        return meta

    @staticmethod
    def _same_group(api_version: str, res: ResourceType) -> bool:
        group = api_version.rpartition("/")[0]
        return group == res.group and res.crd is not None

    # -- update ------------------------------------------------------------------------------------
    async def update(self, res: ResourceType, namespace: str | None, name: str, obj: dict[str, Any],
                     opts: WriteOptions, *, allow_create: bool = True) -> tuple[dict[str, Any] | Entry, bool]:
        """PUT semantics: compare-and-swap on the given resourceVersion (or unconditional without one)."""
        meta = self._check_identity(res, namespace, obj)
        if meta.get("name") and meta["name"] != name:
            raise errors.bad_request("the name of the object ({}) does not match the name on the URL ({})".format(meta["name"], name))
        meta["name"] = name
        current = self.cache.get(res.key(namespace, name))
        if current is None:
            if not allow_create or opts.subresource:
                raise errors.not_found(res.group_resource, name)
            if meta.get("resourceVersion"):
                raise errors.not_found(res.group_resource, name)
            return await self.create(res, namespace, obj, opts), True
        rv = meta.get("resourceVersion")
        if not rv:
            if not self.strategy(res).unconditional_update:
                raise self._unversioned_update(res, name)
            rv = meta["resourceVersion"] = str(current.revision)  # an unconditional update of what is stored
        if self._parse_rv(rv) != current.revision:
            raise errors.conflict(res.group_resource, name, errors.STALE)
        try:
            result = await self._write_update(res, namespace, current, obj, opts)
        except ConflictError:  # another write landed between the read and the compare-and-swap
            raise errors.conflict(res.group_resource, name, errors.STALE) from None
        return result, False

    @staticmethod
    def _unversioned_update(res: ResourceType, name: str) -> StatusError:
        """Upstream's store refuses an update without a resourceVersion for kinds that need one, naming the
        resource (not the kind) and the version as the integer it parsed."""
        cause = errors.invalid("metadata.resourceVersion", errors.GoText("0x0"), "must be specified for an update")
        qualified = f"{res.plural}.{res.group}" if res.group else res.plural
        details = {"name": name, **({"group": res.group} if res.group else {}), "kind": res.plural,
                   "causes": [{"reason": cause.type, "message": cause.body(), "field": cause.field}]}
        return StatusError(422, "Invalid", f'{qualified} "{name}" is invalid: {cause}', details)

    async def guaranteed_update(self, res: ResourceType, namespace: str | None, name: str,
                                mutate: Callable[[dict[str, Any]], Awaitable[dict[str, Any]] | dict[str, Any]],
                                opts: WriteOptions, *, retries: int = 200) -> dict[str, Any] | Entry:
        """Read-modify-write, again on a conflict (patches and internal updates): as upstream's GuaranteedUpdate,
        writers racing on one object all land, one per round."""
        for _ in range(retries):
            current = self.get(res, namespace, name)
            if self.strategy(res).converts_on_read:
                await self.strategy(res).prepare_reads(res, [current.obj])
            copy = self.strategy(res).read(res, orjson.loads(current.raw))
            new = mutate(copy)
            if hasattr(new, "__await__"):
                new = await new  # type: ignore[misc]
            self._check_identity(res, namespace, new)
            new["metadata"]["name"] = name
            rv = new["metadata"].get("resourceVersion")
            if not rv:  # a patch that removed it
                if not self.strategy(res).unconditional_update:
                    raise self._unversioned_update(res, name)
                new["metadata"]["resourceVersion"] = str(current.revision)
            elif rv != str(current.revision):
                raise errors.conflict(res.group_resource, name, errors.STALE)
            try:
                return await self._write_update(res, namespace, current, new, opts)
            except ConflictError:  # another write landed first: read again (a resourceVersion the patch
                continue  # itself carried then no longer matches, and that is the 409 above)
        raise errors.conflict(res.group_resource, name, errors.STALE)

    async def _write_update(self, res: ResourceType, namespace: str | None, current: Entry, new: dict[str, Any],
                            opts: WriteOptions) -> dict[str, Any] | Entry:
        ctx = WriteContext(self, res, namespace, opts.dry_run, opts.subresource, opts.user)
        strategy = self.strategy(res)
        if strategy.converts_on_read:
            await strategy.prepare_reads(res, [current.obj])
        old = strategy.read(res, current.obj)
        if not opts.subresource:
            strategy.default(ctx, new)
        if self.admission is not None:
            await self.admission.admit("UPDATE", ctx, new, old, opts)
        if self.field_tracker is not None:
            new = self.field_tracker(res, old, new, opts)
        meta, old_meta = new["metadata"], old["metadata"]
        for key in ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"):
            if key in old_meta:
                meta[key] = old_meta[key]
            else:
                meta.pop(key, None)
        strategy.prepare_for_update(ctx, new, old)
        errs = strategy.validate_update(ctx, new, old)
        if errs:
            raise errors.invalid_object(res.kind, res.group, meta.get("name", ""), errs)
        if self.admission is not None:
            await self.admission.validate("UPDATE", ctx, new, old, opts)
        new = ordered(new)
        if self._same_content(new, old):
            return current  # a no-op update does not write (upstream skips it too)
        key = current.key
        if (meta.get("deletionTimestamp") and not meta.get("finalizers") and strategy.finalized(new)
                and not old_meta.get("deletionGracePeriodSeconds")):  # a Pod's grace period: its kubelet's call
            if opts.dry_run:
                return new
            await self.store.delete(key, expected_mod_revision=current.revision)
            await strategy.after_delete(ctx, new)
            return {**new, "metadata": {**new["metadata"]}}
        try:
            await strategy.before_write(ctx, new, old)
            go_zero_values(res, new)
            if opts.dry_run:
                return new
            await self.store.update(key, self._encoder(new), expected_mod_revision=current.revision)
        except KeyNotFoundError:
            raise errors.not_found(res.group_resource, meta.get("name", "")) from None
        except ValueTooLargeError:
            raise errors.too_large("etcdserver: request is too large") from None
        finally:
            self._release(ctx)
        return self._entry(key)

    @staticmethod
    def _same_content(new: dict[str, Any], old: dict[str, Any]) -> bool:
        """Nothing to write: equal but for resourceVersion (managedFields count: an apply or a managedFields
        patch may change only them, and the field tracker leaves them alone on a no-op update)."""
        if new.keys() != old.keys():
            return False
        new_meta = {k: v for k, v in new["metadata"].items() if k != "resourceVersion"}
        old_meta = {k: v for k, v in old["metadata"].items() if k != "resourceVersion"}
        if new_meta != old_meta:
            return False
        return all(new[k] == old[k] for k in new if k != "metadata")

    # -- delete ------------------------------------------------------------------------------------
    async def delete(self, res: ResourceType, namespace: str | None, name: str, options: dict[str, Any],
                     opts: WriteOptions) -> tuple[dict[str, Any], bool]:
        """Delete (or mark for deletion: finalizers, a Pod's grace period). Returns (object or Status body,
        whether it is gone now). A write landing in between (a status update, a binding) means deciding again
        on the new object, as upstream's store does, not a 409."""
        for _ in range(DELETE_RETRIES):
            current = self.get(res, namespace, name)
            result = await self._delete_once(res, namespace, name, current, options, opts)
            if result is not None:
                return result
        raise errors.conflict(res.group_resource, name, errors.STALE)

    async def _delete_once(self, res: ResourceType, namespace: str | None, name: str, current: Entry,
                           options: dict[str, Any], opts: WriteOptions) -> tuple[dict[str, Any], bool] | None:
        """One attempt at `delete` against `current`; None when another write came first."""
        obj = current.obj
        meta = obj["metadata"]
        pre = options.get("preconditions") or {}
        if pre.get("uid") and pre["uid"] != meta.get("uid"):
            raise errors.conflict(res.group_resource, name, f"Precondition failed: UID in precondition: "
                                  f"{pre['uid']}, UID in object meta: {meta.get('uid')}")
        if pre.get("resourceVersion") and pre["resourceVersion"] != meta.get("resourceVersion"):
            raise errors.conflict(res.group_resource, name, "Precondition failed: ResourceVersion in precondition: "
                                  f"{pre['resourceVersion']}, ResourceVersion in object meta: "
                                  f"{meta.get('resourceVersion')}")
        ctx = WriteContext(self, res, namespace, opts.dry_run, "", opts.user)
        if self.admission is not None:
            await self.admission.admit("DELETE", ctx, None, obj, opts)
            await self.admission.validate("DELETE", ctx, None, obj, opts)
        strategy = self.strategy(res)
        decision = before_delete(strategy, obj, options)
        if decision.pending:
            return obj, False  # a grace period under way: finalizers cannot change either, as upstream
        policy = options.get("propagationPolicy")
        if options.get("orphanDependents") is True:
            policy = "Orphan"
        finalizers = list(meta.get("finalizers") or ())
        if not policy and options.get("orphanDependents") is None and not {"orphan", "foregroundDeletion"} & set(
                finalizers):
            policy = strategy.default_gc_policy  # none asked for, none chosen earlier: the kind's default
        wanted = {"Orphan": "orphan", "Foreground": "foregroundDeletion"}.get(policy or "")
        if wanted and wanted not in finalizers:
            finalizers.append(wanted)  # the garbage collector handles dependents, then removes it
        finalizers += [f for f in strategy.deletion_finalizers(obj) if f not in finalizers]
        if decision.waits or finalizers or strategy.waits_for_finalization(obj):
            if (meta.get("deletionTimestamp") and decision.period is None
                    and finalizers == list(meta.get("finalizers") or ())):
                return obj, False
            new = orjson.loads(current.raw)
            cmeta = new["metadata"]
            if not cmeta.get("deletionTimestamp") and (cmeta.get("generation") or 0) > 0:
                cmeta["generation"] += 1  # controllers of an object being deleted should hold still
            if decision.period is not None:
                cmeta["deletionTimestamp"], cmeta["deletionGracePeriodSeconds"] = decision.timestamp, decision.period
            cmeta.setdefault("deletionTimestamp", now_rfc3339())
            cmeta.setdefault("deletionGracePeriodSeconds", 0)
            if finalizers:
                cmeta["finalizers"] = finalizers
            strategy.mark_deleting(new)
            new = ordered(new)
            if opts.dry_run:
                return new, False
            try:
                await self.store.update(current.key, self._encoder(new), expected_mod_revision=current.revision)
            except (ConflictError, KeyNotFoundError):
                return None
            return self._entry(current.key).obj, False
        if opts.dry_run:
            return self._deleted_status(res, strategy, obj), True
        try:
            await self.store.delete(current.key, expected_mod_revision=current.revision)
        except (ConflictError, KeyNotFoundError):
            return None  # read again: a 404 then if it is gone
        await strategy.after_delete(ctx, obj)
        return self._deleted_status(res, strategy, obj), True

    @staticmethod
    def _deleted_status(res: ResourceType, strategy: KindStrategy, obj: dict[str, Any]) -> dict[str, Any]:
        """What a completed delete answers: the object for some kinds (as upstream), else a Success Status."""
        if strategy.returns_deleted_object:
            return obj
        return Registry._success_status(res, obj)

    async def system_update(self, res: ResourceType, namespace: str | None, current: Entry,
                            mutate: Callable[[dict[str, Any]], dict[str, Any]], opts: WriteOptions
                            ) -> dict[str, Any] | Entry:
        """A system write (bindings): no admission, no validation beyond the store's CAS; read again on a
        conflict (a 404 when the object went meanwhile)."""
        for _ in range(10):
            new = ordered(mutate(orjson.loads(current.raw)))
            if opts.dry_run:
                return new
            try:
                await self.store.update(current.key, self._encoder(new), expected_mod_revision=current.revision)
                return self._entry(current.key)
            except (ConflictError, KeyNotFoundError):
                current = self.get(res, namespace, new["metadata"]["name"])
        raise errors.conflict(res.group_resource, current.obj["metadata"].get("name", ""), errors.STALE)

    @staticmethod
    def _success_status(res: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
        meta = obj.get("metadata", {})
        details: dict[str, Any] = {"name": meta.get("name", "")}
        if res.group:
            details["group"] = res.group
        details["kind"] = res.plural
        details["uid"] = meta.get("uid", "")
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}

    async def delete_collection(self, res: ResourceType, namespace: str | None, labels: Selector,
                                fields: FieldSelector, options: dict[str, Any], opts: WriteOptions
                                ) -> builtins.list[dict[str, Any]]:
        listed = await self.list(res, namespace, labels=labels, fields=fields)
        deleted = []
        for entry in listed.items:
            meta = entry.obj["metadata"]
            try:
                obj, _ = await self.delete(res, meta.get("namespace"), meta["name"], options, opts)
            except StatusError as exc:
                if exc.code == 404:
                    continue
                raise
            deleted.append(entry.obj)
        return deleted
