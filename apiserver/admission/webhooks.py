"""Dynamic admission webhooks: MutatingWebhookConfiguration and ValidatingWebhookConfiguration (v1).

Mirrors k8s.io/apiserver/pkg/admission/plugin/webhook: configurations (sorted by name) come from the cache;
a webhook is called when its rules match (then namespaceSelector, objectSelector and matchConditions agree).
Mutating webhooks run one after another and may answer with a JSON Patch; validating ones run concurrently.
A call that fails is an `Internal error occurred: failed calling webhook "x": ...` unless failurePolicy is
Ignore; a denial is `admission webhook "x" denied the request: <message>` with the code the webhook chose.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass, field
from typing import Any

import jsonpatch
import orjson

from .. import errors
from ..errors import StatusError
from ..registry.defaulting import default_object
from ..registry.rest.scale import set_replicas
from . import review
from .chain import AdmissionPlugin, Attributes
from .expressions import Activation, EvaluationError, Expression, compile_expression
from .matching import ADMISSION_GROUP, Match, is_exempt, match_rules, namespace_selected, object_selected
from .sources import CollectionWatch, Compiled
from .webhook_client import CallError, WebhookClient

log = logging.getLogger("mini-kube.admission")
NO_SIDE_EFFECTS = ("None", "NoneOnDryRun")


@dataclass(slots=True)
class Hook:
    """One webhook of a configuration, with its match conditions compiled."""

    name: str
    uid: str  # configuration uid + index: identifies it across a reinvocation round
    spec: dict[str, Any]
    conditions: list[tuple[str, Expression]] = field(default_factory=list)

    @property
    def ignore_failures(self) -> bool:
        return self.spec.get("failurePolicy") == "Ignore"

    @property
    def timeout(self) -> int:
        value = self.spec.get("timeoutSeconds")
        return value if isinstance(value, int) and value > 0 else 10


def compile_hooks(configurations: list[dict[str, Any]]) -> list[Hook]:
    hooks = []
    for config in sorted(configurations, key=lambda c: c["metadata"].get("name", "")):
        uid = config["metadata"].get("uid") or config["metadata"].get("name", "")
        for i, spec in enumerate(config.get("webhooks") or ()):
            conditions = [(c.get("name", ""), compile_expression(c.get("expression", "")))
                          for c in spec.get("matchConditions") or ()]
            hooks.append(Hook(spec.get("name", ""), f"{uid}/{i}", spec, conditions))
    return hooks


def _conditions_error(attrs: Attributes, message: str) -> StatusError:
    res = attrs.resource
    prefix = f'{res.group_resource} "{attrs.name}"' if attrs.name else res.group_resource
    return errors.forbidden_error(f"{prefix} is forbidden: {message}", res.plural, attrs.name, res.group)


def should_call(hook: Hook, attrs: Attributes) -> Match | None:
    """The match when the webhook applies to this request (raises on a failing match condition)."""
    spec = hook.spec
    match = match_rules(spec.get("rules"), spec.get("matchPolicy") or "Equivalent", attrs)
    if match is None or not namespace_selected(spec.get("namespaceSelector"), attrs):
        return None
    obj, old = review.versioned_objects(attrs, match)
    if not object_selected(spec.get("objectSelector"), obj, old):
        return None
    if not hook.conditions:
        return match
    activation = Activation({"object": obj, "oldObject": old, "namespaceObject": None, "authorizer": None,
                             "request": review.admission_request(attrs, match, objects=False)})
    failures = []
    for _, expr in hook.conditions:
        try:
            if activation.evaluate(expr) is False:
                return None
        except EvaluationError as exc:
            failures.append(str(exc))
    if failures:
        if hook.ignore_failures:
            return None
        raise _conditions_error(attrs, failures[0] if len(failures) == 1 else "[" + ", ".join(failures) + "]")
    return match


class _Webhooks(AdmissionPlugin):
    """What both kinds share: the configuration source, the client and one call."""

    plural = ""
    mutating = False

    def __init__(self, client: WebhookClient) -> None:
        registry = client.registry
        res = registry.resources.lookup(ADMISSION_GROUP, "v1", self.plural)
        assert res is not None
        watch = CollectionWatch(registry.cache, res.key_prefix)
        self.hooks = Compiled([watch], lambda: compile_hooks(watch.objects()))
        self.client = client

    def handles(self, attrs: Attributes) -> bool:
        return attrs.operation in self.operations and not is_exempt(attrs)

    async def call(self, hook: Hook, match: Match, attrs: Attributes) -> review.Response:
        """Send the review; CallError (subject to failurePolicy) or the verified response."""
        if attrs.dry_run and hook.spec.get("sideEffects") not in NO_SIDE_EFFECTS:
            if hook.spec.get("sideEffects") is None:
                raise CallError("Webhook SideEffects is nil")
            raise errors.bad_request(f'admission webhook "{hook.name}" does not support dry run')
        version = review.pick_version(hook.spec.get("admissionReviewVersions"))
        if version is None:
            raise CallError("could not create admission objects: webhook does not accept known AdmissionReview "
                            "versions (v1, v1beta1)")
        uid = str(uuid.uuid4())
        body = review.review(version, review.admission_request(attrs, match, uid))
        answer = await self.client.post(hook.spec.get("clientConfig") or {}, body, hook.timeout)
        try:
            response = review.verify(answer, uid, version, self.mutating)
        except review.UnsupportedPatch as exc:
            raise CallError(str(exc)) from None
        except review.InvalidResponse as exc:
            raise CallError(f"received invalid webhook response: {exc}") from None
        attrs.options.warnings.extend(response.warnings)
        if not response.allowed:
            raise review.denial(hook.name, response.status)
        return response

    def failed(self, hook: Hook, exc: CallError) -> StatusError | None:
        """The error a failed call becomes, or None when the webhook fails open."""
        message = f'failed calling webhook "{hook.name}": {exc}'
        if hook.ignore_failures:
            log.warning("Failed calling webhook, failing open %s: %s", hook.name, message)
            return None
        return errors.internal_error(message)


@dataclass(slots=True)
class _Reinvocation:
    """Upstream's webhook reinvocation context: which IfNeeded webhooks must run again."""

    invoked: set[str] = field(default_factory=set)
    again: set[str] = field(default_factory=set)
    last_output: bytes = b""


def _replace(target: dict[str, Any], new: dict[str, Any]) -> None:
    """Make `target` equal to `new` in place (keeping the metadata dict the registry holds)."""
    meta = target.get("metadata")
    target.clear()
    target.update(new)
    if isinstance(meta, dict) and isinstance(new.get("metadata"), dict):
        fresh = target["metadata"]
        meta.clear()
        meta.update(fresh)
        target["metadata"] = meta


class MutatingWebhooks(_Webhooks):
    name = "MutatingAdmissionWebhook"
    plural = "mutatingwebhookconfigurations"
    mutating = True

    async def mutate(self, attrs: Attributes) -> None:
        hooks = self.hooks.get()
        if not hooks:
            return
        state: _Reinvocation = attrs.state.setdefault(self.name, _Reinvocation())
        if attrs.reinvocation and state.invoked and attrs.obj is not None and \
                orjson.dumps(attrs.obj) != state.last_output:
            state.again |= state.invoked  # built-in plugins changed the object since: everyone runs again
        for hook in hooks:
            if attrs.reinvocation and hook.uid not in state.again:
                continue
            match = should_call(hook, attrs)
            if match is None:
                continue
            try:
                changed = await self._mutate_one(hook, match, attrs)
            except CallError as exc:
                error = self.failed(hook, exc)
                if error is not None:
                    raise error from None
                changed = False
            if changed:
                state.again |= state.invoked
                state.invoked = set()
                attrs.reinvoke = True
            if hook.spec.get("reinvocationPolicy") == "IfNeeded":
                state.invoked.add(hook.uid)
        if state.invoked and attrs.obj is not None:
            state.last_output = orjson.dumps(attrs.obj)
        if attrs.reinvocation:
            attrs.reinvoke = False  # at most one reinvocation round

    async def _mutate_one(self, hook: Hook, match: Match, attrs: Attributes) -> bool:
        response = await self.call(hook, match, attrs)
        if not response.patch:
            return False
        if attrs.obj is None:
            raise errors.internal_error(f'admission webhook "{hook.name}" attempted to modify the object, which is '
                                        "not supported for this operation")
        current, _ = review.versioned_objects(attrs, match)
        try:
            patched = jsonpatch.JsonPatch(response.patch).apply(current)
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, TypeError, ValueError) as exc:
            raise errors.internal_error(str(exc)) from None
        if not isinstance(patched, dict) or patched == current:
            return False
        self._store(attrs, patched)
        return True

    @staticmethod
    def _store(attrs: Attributes, patched: dict[str, Any]) -> None:
        """Put the patched object (in the matched version) back into the request, defaults applied."""
        res, obj = attrs.resource, attrs.obj
        assert obj is not None
        if attrs.subresource == "scale":
            replicas = (patched.get("spec") or {}).get("replicas")
            if replicas is not None:
                set_replicas(res, obj, replicas)
            return
        patched["apiVersion"] = obj.get("apiVersion", res.api_version)
        _replace(obj, patched)
        if not attrs.subresource:
            default_object(res, obj)


class ValidatingWebhooks(_Webhooks):
    name = "ValidatingAdmissionWebhook"
    plural = "validatingwebhookconfigurations"

    async def validate(self, attrs: Attributes) -> None:
        hooks = self.hooks.get()
        if not hooks:
            return
        calls = [(hook, match) for hook in hooks if (match := should_call(hook, attrs)) is not None]
        if not calls:
            return
        results = await asyncio.gather(*(self.call(hook, match, attrs) for hook, match in calls),
                                       return_exceptions=True)
        for (hook, _), result in zip(calls, results, strict=True):
            if isinstance(result, CallError):
                error = self.failed(hook, result)
                if error is not None:
                    raise error
            elif isinstance(result, BaseException):
                raise result


__all__ = ["MutatingWebhooks", "ValidatingWebhooks"]
