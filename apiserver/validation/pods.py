"""Pod specs: containers, ports, env, volumes, resources and the pod-level fields users most often get wrong.

Fields that defaulting always fills (imagePullPolicy, terminationMessagePolicy, protocol, restartPolicy,
dnsPolicy) are checked when present; when absent they are taken as defaulted.
"""

from __future__ import annotations

from typing import Any

from mini_kube.apiserver.validation.errs import (
    FieldError,
    duplicate,
    each,
    forbidden,
    invalid,
    nonnegative,
    not_found,
    not_supported,
    raw,
    required,
)
from mini_kube.apiserver.validation.meta import validate_annotations, validate_dns1123_label, validate_labels
from mini_kube.apiserver.validation.network import validate_port_num_or_name, validate_protocol
from mini_kube.apiserver.validation.pod_security_context import validate_pod_security_context
from mini_kube.machinery.names import (
    inclusive_range_error,
    is_config_map_key,
    is_dns1123_subdomain,
    is_qualified_name,
    is_relaxed_env_var_name,
    is_valid_port_name,
    is_valid_port_num,
    name_is_dns_subdomain,
)
from mini_kube.machinery.quantity import parse_quantity

Obj = dict[str, Any]
MAX_INT32 = 2**31 - 1
RESTART_POLICIES = ("Always", "OnFailure", "Never")
DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
PULL_POLICIES = ("Always", "IfNotPresent", "Never")
TERMINATION_POLICIES = ("File", "FallbackToLogsOnError")
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
VOLUME_SOURCES = ("hostPath", "emptyDir", "gitRepo", "gcePersistentDisk", "awsElasticBlockStore", "secret", "nfs",
                  "iscsi", "glusterfs", "persistentVolumeClaim", "rbd", "quobyte", "cinder", "cephfs", "flocker",
                  "downwardAPI", "fc", "flexVolume", "configMap", "azureFile", "vsphereVolume",
                  "photonPersistentDisk", "portworxVolume", "azureDisk", "projected", "scaleIO", "storageos", "csi",
                  "ephemeral", "image")
STANDARD_CONTAINER_RESOURCES = ("cpu", "memory", "ephemeral-storage")
INTEGER_RESOURCES = ("pods", "services", "replicationcontrollers", "resourcequotas", "secrets", "configmaps",
                     "persistentvolumeclaims", "services.nodeports", "services.loadbalancers")


def _one_of(value: str | None, path: str, allowed: tuple[str, ...]) -> list[FieldError]:
    if value is None:
        return []
    if value == "":
        return [required(path)]
    return [] if value in allowed else [not_supported(path, value, allowed)]


def _container_ports(ports: list[Obj], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    names: set[str] = set()
    for i, port in enumerate(ports or ()):
        at = f"{path}[{i}]"
        name = port.get("name") or ""
        if name:
            messages = is_valid_port_name(name)
            if messages:
                errs += each(f"{at}.name", name, messages)
            elif name in names:
                errs.append(duplicate(f"{at}.name", name))
            names.add(name)
        number = port.get("containerPort") or 0
        if number == 0:
            errs.append(required(f"{at}.containerPort"))
        else:
            errs += each(f"{at}.containerPort", number, is_valid_port_num(number))
        if port.get("hostPort"):
            errs += each(f"{at}.hostPort", port["hostPort"], is_valid_port_num(port["hostPort"]))
        errs += validate_protocol(port.get("protocol"), f"{at}.protocol")
    return errs


def _key_selector(selector: Obj, path: str) -> list[FieldError]:
    errs = each(f"{path}.name", selector.get("name", ""), name_is_dns_subdomain(selector.get("name", ""), False))
    key = selector.get("key") or ""
    if not key:
        errs.append(required(f"{path}.key"))
    else:
        errs += each(f"{path}.key", key, is_config_map_key(key))
    return errs


def _value_from(env: Obj, path: str) -> list[FieldError]:
    source = env.get("valueFrom")
    if source is None:
        return []
    kinds = [k for k in ("fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef") if source.get(k)]
    errs: list[FieldError] = []
    for kind in kinds:
        if kind in ("configMapKeyRef", "secretKeyRef"):
            errs += _key_selector(source[kind], f"{path}.{kind}")
        elif kind == "fieldRef" and not source[kind].get("fieldPath"):
            errs.append(required(f"{path}.fieldRef.fieldPath"))
        elif kind == "resourceFieldRef" and not source[kind].get("resource"):
            errs.append(required(f"{path}.resourceFieldRef.resource"))
    if not kinds:
        errs.append(invalid(path, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or "
                                      "`secretKeyRef`"))
    elif env.get("value"):
        errs.append(invalid(path, "", "may not be specified when `value` is not empty"))
    elif len(kinds) > 1:
        errs.append(invalid(path, "", "may not have more than one field specified at a time"))
    return errs


def validate_env(env: list[Obj] | None, path: str) -> list[FieldError]:
    """Env var names (1.32 relaxed rule: printable ASCII except '=') and valueFrom sources."""
    errs: list[FieldError] = []
    for i, var in enumerate(env or ()):
        at = f"{path}[{i}]"
        name = var.get("name") or ""
        if not name:
            errs.append(required(f"{at}.name"))
        errs += each(f"{at}.name", name, is_relaxed_env_var_name(name))
        errs += _value_from(var, f"{at}.valueFrom")
    return errs


def _env_from(sources: list[Obj] | None, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, source in enumerate(sources or ()):
        at = f"{path}[{i}]"
        if source.get("prefix"):
            errs += each(f"{at}.prefix", source["prefix"], is_relaxed_env_var_name(source["prefix"]))
        refs = [k for k in ("configMapRef", "secretRef") if source.get(k) is not None]
        for ref in refs:
            name = source[ref].get("name", "")
            errs += each(f"{at}.{ref}.name", name, name_is_dns_subdomain(name, False))
        if not refs:
            errs.append(invalid(at, "", "must specify one of: `configMapRef` or `secretRef`"))
        elif len(refs) > 1:
            errs.append(invalid(at, "", "may not have more than one field specified at a time"))
    return errs


def _volume_mounts(mounts: list[Obj] | None, volumes: set[str], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    paths: set[str] = set()
    for i, mount in enumerate(mounts or ()):
        at = f"{path}[{i}]"
        name = mount.get("name") or ""
        if not name:
            errs.append(required(f"{at}.name"))
        elif name not in volumes:
            errs.append(not_found(f"{at}.name", name))
        mount_path = mount.get("mountPath") or ""
        if not mount_path:
            errs.append(required(f"{at}.mountPath"))
        elif mount_path in paths:
            errs.append(invalid(f"{at}.mountPath", mount_path, "must be unique"))
        paths.add(mount_path)
        # upstream names these under the list's path, not the mount's (`volumeMounts.subPath`)
        if mount.get("subPath"):
            errs += _local_descending_path(mount["subPath"], f"{path}.subPath")
        if mount.get("subPathExpr"):
            if mount.get("subPath"):
                errs.append(invalid(f"{at}.subPathExpr", mount["subPathExpr"],
                                    "subPathExpr and subPath are mutually exclusive"))
            errs += _local_descending_path(mount["subPathExpr"], f"{path}.subPathExpr")
    return errs


def _local_descending_path(target: str, path: str) -> list[FieldError]:
    """validateLocalDescendingPath: relative, with no '..' element."""
    errs = [invalid(path, target, "must be a relative path")] if target.startswith("/") else []
    if ".." in target.split("/"):
        errs.append(invalid(path, target, "must not contain '..'"))
    return errs


def validate_resource_name(name: str, path: str) -> list[FieldError]:
    """A container resource name: qualified, and standard unless it has a domain (or is hugepages-*)."""
    errs = each(path, name, is_qualified_name(name))
    if "/" not in name and name not in STANDARD_CONTAINER_RESOURCES and not name.startswith("hugepages-"):
        errs.append(invalid(path, name, "must be a standard resource for containers"))
    return errs


def overcommit_allowed(name: str) -> bool:
    """Whether a resource's limit may exceed its request (upstream's IsOvercommitAllowed)."""
    native = "/" not in name or "kubernetes.io/" in name
    return native and not name.startswith("hugepages-")


def validate_resource_quantity(name: str, value: Any, path: str) -> list[FieldError]:
    """One resource's quantity, as upstream's ValidateResourceQuantityValue."""
    quantity = parse_quantity(value)
    if quantity is None:
        return [invalid(path, value, "must be a valid quantity")]
    errs: list[FieldError] = []
    if quantity.value < 0:
        errs.append(invalid(path, str(quantity), "must be greater than or equal to 0"))
    if name in INTEGER_RESOURCES and not quantity.is_integer():
        errs.append(invalid(path, str(quantity), "must be an integer"))
    return errs


def validate_resources(resources: Obj | None, path: str) -> list[FieldError]:
    """Resource names, non-negative quantities, and requests no larger than limits."""
    resources = resources or {}
    limits, requests = resources.get("limits") or {}, resources.get("requests") or {}
    errs: list[FieldError] = []
    for name, value in limits.items():
        errs += validate_resource_name(name, f"{path}.limits[{name}]") + validate_resource_quantity(name, value, f"{path}.limits[{name}]")
    for name, value in requests.items():
        at = f"{path}.requests[{name}]"
        errs += validate_resource_name(name, at) + validate_resource_quantity(name, value, at)
        request, limit = parse_quantity(value), parse_quantity(limits[name]) if name in limits else None
        if name in limits and request is not None and limit is not None:
            if request.value != limit.value and not overcommit_allowed(name):
                errs.append(invalid(f"{path}.requests", str(request), f"must be equal to {name} limit of {limit}"))
            elif request.value > limit.value:
                errs.append(invalid(f"{path}.requests", str(request),
                                    f"must be less than or equal to {name} limit of {limit}"))
        elif name not in limits and not overcommit_allowed(name):
            errs.append(required(f"{path}.limits", "Limit must be set for non overcommitable resources"))
    return errs


def _handler(handler: Obj, kinds: tuple[str, ...], path: str) -> list[FieldError]:
    """Exactly one of `kinds` set, as upstream's validateHandler (probes and lifecycle hooks), and its port."""
    errs: list[FieldError] = []
    handlers = [k for k in kinds if handler.get(k) is not None]
    if not handlers:
        errs.append(required(path, "must specify a handler type"))
    for extra in handlers[1:]:
        errs.append(forbidden(f"{path}.{extra}", "may not specify more than 1 handler type"))
    if handlers and handlers[0] in ("httpGet", "tcpSocket"):
        errs += validate_port_num_or_name(handler[handlers[0]].get("port"), f"{path}.{handlers[0]}.port")
    return errs


def _probe(probe: Obj | None, path: str, liveness_like: bool) -> list[FieldError]:
    if probe is None:
        return []
    errs = _handler(probe, ("exec", "httpGet", "tcpSocket", "grpc"), path)
    for key in ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold"):
        errs += nonnegative(f"{path}.{key}", probe.get(key))
    if liveness_like and probe.get("successThreshold") not in (None, 1):
        errs.append(invalid(f"{path}.successThreshold", probe["successThreshold"], "must be 1"))
    return errs


def _lifecycle(lifecycle: Obj | None, path: str) -> list[FieldError]:
    """postStart/preStop: exactly one handler each (exec, httpGet, tcpSocket or sleep)."""
    errs: list[FieldError] = []
    for hook in ("postStart", "preStop"):
        handler = (lifecycle or {}).get(hook)
        if handler is not None:
            errs += _handler(handler, ("exec", "httpGet", "tcpSocket", "sleep"), f"{path}.{hook}")
    return errs


def _probes_and_hooks(ctr: Obj, path: str) -> list[FieldError]:
    """A running container's probes and lifecycle hooks (regular containers and restartable init containers)."""
    errs = _probe(ctr.get("livenessProbe"), f"{path}.livenessProbe", True)
    errs += _probe(ctr.get("readinessProbe"), f"{path}.readinessProbe", False)
    errs += _probe(ctr.get("startupProbe"), f"{path}.startupProbe", True)
    return errs + _lifecycle(ctr.get("lifecycle"), f"{path}.lifecycle")


def _container(ctr: Obj, volumes: set[str], path: str, host_users: bool = True) -> list[FieldError]:
    errs: list[FieldError] = []
    name = ctr.get("name") or ""
    if not name:
        errs.append(required(f"{path}.name"))
    else:
        errs += validate_dns1123_label(name, f"{path}.name")
    if not ctr.get("image"):
        errs.append(required(f"{path}.image"))
    errs += _one_of(ctr.get("terminationMessagePolicy"), f"{path}.terminationMessagePolicy", TERMINATION_POLICIES)
    errs += _container_ports(ctr.get("ports") or [], f"{path}.ports")
    errs += validate_env(ctr.get("env"), f"{path}.env")
    errs += _env_from(ctr.get("envFrom"), f"{path}.envFrom")
    errs += _volume_mounts(ctr.get("volumeMounts"), volumes, f"{path}.volumeMounts")
    errs += _one_of(ctr.get("imagePullPolicy"), f"{path}.imagePullPolicy", PULL_POLICIES)
    errs += validate_resources(ctr.get("resources"), f"{path}.resources")
    errs += _proc_mount((ctr.get("securityContext") or {}).get("procMount"), f"{path}.securityContext.procMount",
                        host_users)
    return errs


PROC_MOUNTS = ("Default", "Unmasked")


def _proc_mount(value: Any, path: str, host_users: bool) -> list[FieldError]:
    """ValidateSecurityContext's procMount: a known type, and `Unmasked` only in a user namespace of the Pod's."""
    if value is None:
        return []
    if value not in PROC_MOUNTS:
        return [not_supported(path, value, PROC_MOUNTS)]
    if host_users and value == "Unmasked":
        return [invalid(path, value, "`hostUsers` must be false to use `Unmasked`")]
    return []


def _containers(containers: list[Obj] | None, volumes: set[str], path: str,
                host_users: bool = True) -> list[FieldError]:
    if not containers:
        return [required(path)]
    errs: list[FieldError] = []
    names: set[str | None] = set()
    for i, ctr in enumerate(containers):
        at = f"{path}[{i}]"
        errs += _container(ctr, volumes, at, host_users)
        if ctr.get("name") in names:
            errs.append(duplicate(f"{at}.name", ctr.get("name")))
        names.add(ctr.get("name"))
        errs += _probes_and_hooks(ctr, at)
        if ctr.get("restartPolicy") is not None:
            errs.append(forbidden(f"{at}.restartPolicy", "may not be set for non-init containers"))
    return errs


def _init_containers(init: list[Obj] | None, regular: list[Obj] | None, volumes: set[str],
                     path: str, host_users: bool = True) -> list[FieldError]:
    errs: list[FieldError] = []
    names = {c.get("name") for c in regular or ()}
    for i, ctr in enumerate(init or ()):
        at = f"{path}[{i}]"
        errs += _container(ctr, volumes, at, host_users)
        if ctr.get("name") in names:
            errs.append(duplicate(f"{at}.name", ctr.get("name")))
        names.add(ctr.get("name"))
        policy = ctr.get("restartPolicy")
        if policy is not None and policy != "Always":
            errs.append(not_supported(f"{at}.restartPolicy", policy, ("Always",)))
        if policy != "Always":
            for probe in ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe"):
                if ctr.get(probe) is not None:
                    errs.append(forbidden(f"{at}.{probe}",
                                          "may not be set for init containers without restartPolicy=Always"))
        else:
            errs += _probes_and_hooks(ctr, at)
    return errs


# EphemeralContainerCommon fields an ephemeral container may set (upstream's allowedEphemeralContainerFields)
EPHEMERAL_FORBIDDEN = ("ports", "resources", "resizePolicy", "lifecycle", "livenessProbe", "readinessProbe",
                       "startupProbe", "restartPolicy")


def _ephemeral_containers(ephemeral: list[Obj] | None, spec: Obj, volumes: set[str],
                          path: str, host_users: bool = True) -> list[FieldError]:
    """validateEphemeralContainers: container rules, names unique across every kind of container, the target an
    existing regular or init container, and none of the fields that make a container part of the workload."""
    errs: list[FieldError] = []
    others = {c.get("name") for c in [*(spec.get("containers") or ()), *(spec.get("initContainers") or ())]}
    names = set(others)
    for i, ctr in enumerate(ephemeral or ()):
        at = f"{path}[{i}]"
        if not isinstance(ctr, dict):
            errs.append(invalid(at, ctr, "must be an object"))
            continue
        errs += _container(ctr, volumes, at, host_users)
        if ctr.get("name") in names:
            errs.append(duplicate(f"{at}.name", ctr.get("name")))
        names.add(ctr.get("name"))
        target = ctr.get("targetContainerName")
        if target and target not in others:
            errs.append(not_found(f"{at}.targetContainerName", target))
        for key in EPHEMERAL_FORBIDDEN:
            if ctr.get(key):  # a zero value (`resources: {}`) is not set
                errs.append(forbidden(f"{at}.{key}", "cannot be set for an Ephemeral Container"))
        for j, mount in enumerate(ctr.get("volumeMounts") or ()):
            for key in ("subPath", "subPathExpr"):
                if isinstance(mount, dict) and mount.get(key):
                    errs.append(forbidden(f"{at}.volumeMounts[{j}].{key}", "cannot be set for an Ephemeral Container"))
    return errs


def validate_ephemeral_containers_update(new: Obj, old: Obj) -> list[FieldError]:
    """ValidatePodEphemeralContainersUpdate: the Pod's spec as a whole, no static Pod, and the ephemeral
    containers already there neither removed nor changed."""
    if MIRROR_ANNOTATION in ((old.get("metadata") or {}).get("annotations") or {}):
        return [forbidden("", "static pods do not support ephemeral containers")]
    errs = validate_pod_spec(new.get("spec"), "spec")
    added = {c.get("name"): c for c in (new.get("spec") or {}).get("ephemeralContainers") or ()
             if isinstance(c, dict)}
    for before in (old.get("spec") or {}).get("ephemeralContainers") or ():
        name = before.get("name")
        if name not in added:
            errs.append(forbidden("spec.ephemeralContainers", f'existing ephemeral containers "{name}" may not be '
                                                              "removed\n"))
        elif added[name] != before:
            errs.append(forbidden(f"spec.ephemeralContainers[{name}]",
                                  f'existing ephemeral containers "{name}" may not be changed\n'))
    return errs


def _volume_source(volume: Obj, kind: str, path: str) -> list[FieldError]:
    source = volume.get(kind) or {}
    at = f"{path}.{kind}"
    if kind == "configMap" and not source.get("name"):
        return [required(f"{at}.name")]
    if kind == "secret" and not source.get("secretName"):
        return [required(f"{at}.secretName")]
    if kind == "persistentVolumeClaim" and not source.get("claimName"):
        return [required(f"{at}.claimName")]
    if kind == "hostPath" and not source.get("path"):
        return [required(f"{at}.path")]
    if kind in ("configMap", "secret") and source.get("defaultMode") is not None \
            and not 0 <= source["defaultMode"] <= 0o777:
        return [invalid(f"{at}.defaultMode", source["defaultMode"],
                        "must be a number between 0 and 0777 (octal), both inclusive")]
    return []


def validate_volumes(volumes: list[Obj] | None, path: str) -> tuple[set[str], list[FieldError]]:
    """Volume names (DNS labels, unique) and exactly one source each; returns the valid names too."""
    errs: list[FieldError] = []
    names: set[str] = set()
    for i, volume in enumerate(volumes or ()):
        at = f"{path}[{i}]"
        kinds = [k for k in VOLUME_SOURCES if volume.get(k) is not None]
        local: list[FieldError] = []
        if not kinds:
            local.append(required(at, "must specify a volume type"))
        else:
            local += _volume_source(volume, kinds[0], at)
            local += [forbidden(f"{at}.{k}", "may not specify more than 1 volume type") for k in kinds[1:]]
        name = volume.get("name") or ""
        if not name:
            local.append(required(f"{at}.name"))
        else:
            local += validate_dns1123_label(name, f"{at}.name")
        if name in names:
            local.append(duplicate(f"{at}.name", name))
        if not local:
            names.add(name)
        errs += local
    return names, errs


def validate_tolerations(tolerations: list[Obj] | None, path: str) -> list[FieldError]:
    """A Pod's (or RuntimeClass's) tolerations, as upstream's ValidateTolerations."""
    errs: list[FieldError] = []
    for i, toleration in enumerate(tolerations or ()):
        at = f"{path}[{i}]"
        key, operator = toleration.get("key") or "", toleration.get("operator") or "Equal"
        if key:
            errs += each(f"{at}.key", key, is_qualified_name(key))
        if not key and operator != "Exists":
            errs.append(invalid(f"{at}.operator", operator,
                                "operator must be Exists when `key` is empty, which means \"match all values and all "
                                "keys\""))
        if toleration.get("tolerationSeconds") is not None and toleration.get("effect") != "NoExecute":
            errs.append(invalid(f"{at}.effect", toleration.get("effect", ""),
                                "effect must be 'NoExecute' when `tolerationSeconds` is set"))
        if operator == "Exists" and toleration.get("value"):
            errs.append(invalid(f"{at}.operator", toleration.get("value"),
                                "value must be empty when `operator` is 'Exists'"))
        elif operator not in ("Equal", "Exists"):
            errs.append(not_supported(f"{at}.operator", operator, ("Equal", "Exists")))
        effect = toleration.get("effect")
        if effect and effect not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
            errs.append(not_supported(f"{at}.effect", effect, ("NoSchedule", "PreferNoSchedule", "NoExecute")))
    return errs


def validate_pod_spec(spec: Obj | None, path: str = "spec") -> list[FieldError]:
    """A PodSpec, as ValidatePodSpec checks it (the parts users commonly trip over)."""
    spec = spec or {}
    volumes, errs = validate_volumes(spec.get("volumes"), f"{path}.volumes")
    host_users = spec.get("hostUsers") is not False
    errs += _containers(spec.get("containers"), volumes, f"{path}.containers", host_users)
    errs += _init_containers(spec.get("initContainers"), spec.get("containers"), volumes, f"{path}.initContainers",
                             host_users)
    errs += _ephemeral_containers(spec.get("ephemeralContainers"), spec, volumes, f"{path}.ephemeralContainers",
                                  host_users)
    errs += _one_of(spec.get("restartPolicy"), f"{path}.restartPolicy", RESTART_POLICIES)
    errs += _one_of(spec.get("dnsPolicy"), f"{path}.dnsPolicy", DNS_POLICIES)
    errs += validate_labels(spec.get("nodeSelector"), f"{path}.nodeSelector")
    errs += validate_pod_security_context(spec, path)
    for i, secret in enumerate(spec.get("imagePullSecrets") or ()):
        if not secret.get("name"):
            errs.append(required(f"{path}.imagePullSecrets[{i}].name"))
    for i, gate in enumerate(spec.get("readinessGates") or ()):
        errs += each(f"{path}.readinessGates[{i}].conditionType", gate.get("conditionType", ""),
                     is_qualified_name(gate.get("conditionType", "")))
    for key in ("serviceAccountName", "nodeName", "priorityClassName"):
        if spec.get(key):
            errs += each(f"{path}.{key}", spec[key], is_dns1123_subdomain(spec[key]))
    deadline = spec.get("activeDeadlineSeconds")
    if deadline is not None and not 1 <= deadline <= MAX_INT32:
        errs.append(invalid(f"{path}.activeDeadlineSeconds", deadline, inclusive_range_error(1, MAX_INT32)))
    for key in ("hostname", "subdomain"):
        if spec.get(key):
            errs += validate_dns1123_label(spec[key], f"{path}.{key}")
    errs += validate_tolerations(spec.get("tolerations"), f"{path}.tolerations")
    errs += _host_users(spec, path)
    return errs


HOST_NAMESPACES = (("hostNetwork", "hostNetwork"), ("hostPID", "HostPID"), ("hostIPC", "HostIPC"))


def _host_users(spec: Obj, path: str) -> list[FieldError]:
    """A Pod in a user namespace of its own (`hostUsers: false`) shares no namespace with its node, as
    upstream's validateHostUsers forbids (its field names, capitals included)."""
    if spec.get("hostUsers") is not False:
        return []
    return [forbidden(f"{path}.{name}", "when `pod.Spec.HostUsers` is false")
            for field, name in HOST_NAMESPACES if spec.get(field)]


def validate_pod_template_spec(template: Obj | None, path: str) -> list[FieldError]:
    """A pod template inside a controller or PodTemplate: its labels, annotations and spec."""
    template = template or {}
    meta = template.get("metadata") or {}
    errs = validate_labels(meta.get("labels"), f"{path}.metadata.labels")
    errs += validate_annotations(meta.get("annotations"), f"{path}.metadata.annotations")
    errs += validate_pod_spec(template.get("spec"), f"{path}.spec")
    if (template.get("spec") or {}).get("ephemeralContainers"):
        errs.append(forbidden(f"{path}.spec.ephemeralContainers", "ephemeral containers not allowed in pod template"))
    return errs


def validate_pod(pod: Obj) -> list[FieldError]:
    """Create-time rules on a Pod beyond its metadata."""
    spec = pod.get("spec") or {}
    errs = validate_pod_spec(spec, "spec")
    if spec.get("ephemeralContainers"):
        errs.append(forbidden("spec.ephemeralContainers", "cannot be set on create"))
    if spec.get("nodeName") and spec.get("schedulingGates"):
        errs.append(forbidden("spec.nodeName", "cannot be set until all schedulingGates have been cleared"))
    return errs


UPDATABLE_POD_FIELDS = ("`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
                        "`spec.tolerations` (only additions to existing tolerations),"
                        "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)")


def _munged(new: Obj, old: Obj) -> Obj:
    """The new spec with every field a pod update may change copied from the old one."""
    spec = dict(new)
    for key in ("containers", "initContainers"):
        if isinstance(new.get(key), list) and isinstance(old.get(key), list) and len(new[key]) == len(old[key]):
            spec[key] = [{**c, "image": o.get("image")} for c, o in zip(new[key], old[key], strict=True)]
    for key in ("activeDeadlineSeconds", "tolerations", "schedulingGates", "ephemeralContainers"):
        spec.pop(key, None)
    grace, old_grace = new.get("terminationGracePeriodSeconds"), old.get("terminationGracePeriodSeconds")
    if grace == 1 and old_grace is not None and old_grace < 0:
        spec["terminationGracePeriodSeconds"] = old_grace
    return spec


def _deadline_update(new: int | None, old: int | None) -> list[FieldError]:
    path = "spec.activeDeadlineSeconds"
    if new is not None:
        if not 0 <= new <= MAX_INT32:
            return [invalid(path, new, inclusive_range_error(0, MAX_INT32))]
        if old is not None and old < new:
            return [invalid(path, new, "must be less than or equal to previous value")]
    elif old is not None:
        return [raw("FieldValueInvalid", path, "null", "must not update from a positive integer to nil value")]
    return []


def _without_seconds(toleration: Obj) -> Obj:
    return {k: v for k, v in toleration.items() if k != "tolerationSeconds"}


def validate_pod_update(new: Obj, old: Obj) -> list[FieldError]:
    """Pod updates may only change images and the deadline, and only add tolerations."""
    new_spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    errs = validate_pod_spec(new_spec, "spec")
    errs += _deadline_update(new_spec.get("activeDeadlineSeconds"), old_spec.get("activeDeadlineSeconds"))
    kept = [_without_seconds(t) for t in new_spec.get("tolerations") or ()]
    if any(_without_seconds(t) not in kept for t in old_spec.get("tolerations") or ()):
        errs.append(forbidden("spec.tolerations", "existing toleration can not be modified except its "
                                                  "tolerationSeconds"))
    stripped_old = {k: v for k, v in old_spec.items()
                    if k not in ("activeDeadlineSeconds", "tolerations", "schedulingGates", "ephemeralContainers")}
    if _munged(new_spec, old_spec) != stripped_old:
        changed = sorted(k for k in set(new_spec) | set(old_spec) if new_spec.get(k) != old_spec.get(k))
        errs.append(forbidden("spec", f"pod updates may not change fields other than {UPDATABLE_POD_FIELDS}\n"
                                      f"changed: {', '.join(changed)}"))
    return errs
