"""`describe pod` as kubectl's describePod writes it (k8s.io/kubectl/pkg/describe): the same sections, the same
words and the same alignment (every line goes through one Go-style tabwriter, flushed before the Events table)."""

from __future__ import annotations

import re
from typing import Any

from mini_kube.machinery.duration import human_duration
from mini_kube.machinery.times import now, parse_time

LEVEL = "  "
MAX_ANNOTATION_LEN = 140
SKIPPED_ANNOTATIONS = {"kubectl.kubernetes.io/last-applied-configuration"}


class Writer:
    """kubectl's PrefixWriter: `write(level, text)` indents by two spaces a level; tabs separate cells."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def write(self, level: int, text: str) -> None:
        self.parts.append(LEVEL * level + text)

    def text(self) -> str:
        return "".join(self.parts)


def rfc1123z(stamp: str | None) -> str:
    """Go's time.RFC1123Z of an RFC 3339 time, in UTC as the API server writes it."""
    if not stamp:
        return ""
    when = parse_time(stamp)
    assert when is not None
    return when.strftime("%a, %d %b %Y %H:%M:%S %z")


def since(stamp: str | None) -> str:
    if not stamp:
        return "<unknown>"
    then = parse_time(stamp)
    assert then is not None
    return human_duration((now() - then).total_seconds())


def labels_multiline(w: Writer, title: str, labels: dict[str, str] | None) -> None:
    w.write(0, f"{title}:\t")
    if not labels:
        w.write(0, "<none>\n")
        return
    for i, key in enumerate(sorted(labels)):
        w.write(0, ("\t" if i else "") + f"{key}={labels[key]}\n")


def annotations_multiline(w: Writer, title: str, annotations: dict[str, str] | None) -> None:
    w.write(0, f"{title}:\t")
    keys = sorted(k for k in annotations or {} if k not in SKIPPED_ANNOTATIONS)
    if not keys:
        w.write(0, "<none>\n")
        return
    for i, key in enumerate(keys):
        if i:
            w.write(0, "\t")
        value = (annotations or {})[key].removesuffix("\n")
        if len(value) + len(key) + 2 > MAX_ANNOTATION_LEN or "\n" in value:
            w.write(0, f"{key}:\n")
            for line in value.split("\n"):
                short = line if len(line) <= MAX_ANNOTATION_LEN - 2 else line[:MAX_ANNOTATION_LEN - 5] + "..."
                w.write(0, f"\t  {short}\n")
        else:
            w.write(0, f"{key}: {value}\n")


def tolerations_multiline(w: Writer, title: str, tolerations: list[dict[str, Any]]) -> None:
    w.write(0, f"{title}:\t")
    if not tolerations:
        w.write(0, "<none>\n")
        return
    for i, t in enumerate(sorted(tolerations, key=lambda t: t.get("key") or "")):
        text = ("\t" if i else "") + (t.get("key") or "")
        if t.get("value"):
            text += f"={t['value']}"
        if t.get("effect"):
            text += f":{t['effect']}"
        if t.get("operator") == "Exists" and not t.get("value"):
            text += " op=Exists" if t.get("key") or t.get("effect") else "op=Exists"
        if t.get("tolerationSeconds") is not None:
            text += f" for {t['tolerationSeconds']}s"
        w.write(0, text + "\n")


def _ports(ports: list[dict[str, Any]], field: str) -> str:
    return ", ".join(f"{p.get(field, 0)}/{p.get('protocol') or 'TCP'}" for p in ports) or "<none>"


def _go_list(words: list[str]) -> str:
    return "[" + " ".join(words) + "]"


def describe_probe(probe: dict[str, Any]) -> str:
    attrs = (f"delay={probe.get('initialDelaySeconds', 0)}s timeout={probe.get('timeoutSeconds', 1)}s "
             f"period={probe.get('periodSeconds', 10)}s #success={probe.get('successThreshold', 1)} "
             f"#failure={probe.get('failureThreshold', 3)}")
    if "exec" in probe:
        return f"exec {_go_list((probe['exec'] or {}).get('command') or [])} {attrs}"
    if "httpGet" in probe:
        get = probe["httpGet"] or {}
        port = str(get.get("port", ""))
        host = get.get("host") or ""
        where = (f"[{host}]" if ":" in host else host) + (f":{port}" if port else "")
        return f"http-get {(get.get('scheme') or 'HTTP').lower()}://{where}{get.get('path') or ''} {attrs}"
    if "tcpSocket" in probe:
        sock = probe["tcpSocket"] or {}
        return f"tcp-socket {sock.get('host') or ''}:{sock.get('port', '')} {attrs}"
    if "grpc" in probe:
        grpc = probe["grpc"] or {}
        return f"grpc <pod>:{grpc.get('port')} {grpc.get('service') or ''} {attrs}"
    return f"unknown {attrs}"


def field_value(pod: dict[str, Any], path: str) -> str:
    """kubectl's EnvValueRetriever for a fieldRef (the fields a Pod's env may name)."""
    meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    indexed = re.fullmatch(r"metadata\.(labels|annotations)\['(.*)'\]", path)
    if indexed:
        return str((meta.get(indexed.group(1)) or {}).get(indexed.group(2), ""))
    simple = {"metadata.name": meta.get("name"), "metadata.namespace": meta.get("namespace"),
              "metadata.uid": meta.get("uid"), "spec.nodeName": spec.get("nodeName"),
              "spec.serviceAccountName": spec.get("serviceAccountName"), "status.hostIP": status.get("hostIP"),
              "status.podIP": status.get("podIP")}
    return str(simple.get(path) or "")


def _state(w: Writer, name: str, state: dict[str, Any]) -> None:
    if "running" in state:
        w.write(2, f"{name}:\tRunning\n")
        w.write(3, f"Started:\t{rfc1123z((state['running'] or {}).get('startedAt'))}\n")
    elif "terminated" in state:
        t = state["terminated"] or {}
        w.write(2, f"{name}:\tTerminated\n")
        if t.get("reason"):
            w.write(3, f"Reason:\t{t['reason']}\n")
        if t.get("message"):
            w.write(3, f"Message:\t{t['message']}\n")
        w.write(3, f"Exit Code:\t{t.get('exitCode', 0)}\n")
        if t.get("signal"):
            w.write(3, f"Signal:\t{t['signal']}\n")
        w.write(3, f"Started:\t{rfc1123z(t.get('startedAt'))}\n")
        w.write(3, f"Finished:\t{rfc1123z(t.get('finishedAt'))}\n")
    else:
        w.write(2, f"{name}:\tWaiting\n")
        reason = (state.get("waiting") or {}).get("reason")
        if reason:
            w.write(3, f"Reason:\t{reason}\n")


def _env(w: Writer, pod: dict[str, Any], container: dict[str, Any]) -> None:
    sources = container.get("envFrom") or []
    if sources:
        w.write(2, "Environment Variables from:\n")
        for source in sources:
            kind, ref = ("ConfigMap", source["configMapRef"]) if source.get("configMapRef") else (
                "Secret", source.get("secretRef") or {})
            optional = str(bool(ref.get("optional"))).lower()
            prefix = f" with prefix '{source['prefix']}'" if source.get("prefix") else ""
            w.write(3, f"{ref.get('name', '')}\t{kind}{prefix}\tOptional: {optional}\n")
    env = container.get("env") or []
    w.write(2, "Environment:" + ("" if env else "\t<none>") + "\n")
    for var in env:
        source = var.get("valueFrom")
        if source is None:
            for i, line in enumerate((var.get("value") or "").split("\n")):
                w.write(3, f"{var['name']}:\t{line}\n" if i == 0 else f"\t{line}\n")
        elif "fieldRef" in source:
            ref = source["fieldRef"]
            w.write(3, f"{var['name']}:\t{field_value(pod, ref.get('fieldPath', ''))} "
                       f"({ref.get('apiVersion', 'v1')}:{ref.get('fieldPath', '')})\n")
        elif "resourceFieldRef" in source:
            resource = source["resourceFieldRef"].get("resource", "")
            w.write(3, f"{var['name']}:\t ({resource})\n")
        elif "secretKeyRef" in source:
            ref = source["secretKeyRef"]
            w.write(3, f"{var['name']}:\t<set to the key '{ref.get('key')}' in secret '{ref.get('name')}'>\t"
                       f"Optional: {str(bool(ref.get('optional'))).lower()}\n")
        elif "configMapKeyRef" in source:
            ref = source["configMapKeyRef"]
            w.write(3, f"{var['name']}:\t<set to the key '{ref.get('key')}' of config map '{ref.get('name')}'>\t"
                       f"Optional: {str(bool(ref.get('optional'))).lower()}\n")


def _mounts(w: Writer, container: dict[str, Any]) -> None:
    mounts = container.get("volumeMounts") or []
    w.write(2, "Mounts:" + ("" if mounts else "\t<none>") + "\n")
    for mount in sorted(mounts, key=lambda m: m.get("mountPath", "")):
        flags = ["ro" if mount.get("readOnly") else "rw"]
        if mount.get("subPath"):
            flags.append(f'path="{mount["subPath"]}"')
        w.write(3, f"{mount.get('mountPath')} from {mount.get('name')} ({','.join(flags)})\n")


def containers(w: Writer, pod: dict[str, Any], label: str, specs: list[dict[str, Any]],
               statuses: list[dict[str, Any]]) -> None:
    by_name = {s.get("name"): s for s in statuses}
    w.write(0, f"{label}:\n")
    for container in specs:
        status = by_name.get(container["name"])
        w.write(1, f"{container['name']}:\n")
        if status is not None:
            w.write(2, f"Container ID:\t{status.get('containerID', '')}\n")
        w.write(2, f"Image:\t{container.get('image', '')}\n")
        if status is not None:
            w.write(2, f"Image ID:\t{status.get('imageID', '')}\n")
        ports = container.get("ports") or []
        port, host = _ports(ports, "containerPort"), _ports(ports, "hostPort")
        w.write(2, f"{'Ports' if ',' in port else 'Port'}:\t{port}\n")
        w.write(2, f"{'Host Ports' if ',' in host else 'Host Port'}:\t{host}\n")
        for title, words in (("Command", container.get("command")), ("Args", container.get("args"))):
            if words:
                w.write(2, f"{title}:\n")
                for word in words:
                    for line in word.split("\n"):
                        w.write(3, f"{line}\n")
        if status is not None:
            _state(w, "State", status.get("state") or {})
            if (status.get("lastState") or {}).get("terminated"):
                _state(w, "Last State", status["lastState"])
            w.write(2, f"Ready:\t{'True' if status.get('ready') else 'False'}\n")
            w.write(2, f"Restart Count:\t{status.get('restartCount', 0)}\n")
        resources = container.get("resources") or {}
        for title in ("limits", "requests"):
            if resources.get(title):
                w.write(2, f"{title.capitalize()}:\n")
                for name in sorted(resources[title]):
                    w.write(3, f"{name}:\t{resources[title][name]}\n")
        for title in ("liveness", "readiness", "startup"):
            if container.get(f"{title}Probe"):
                w.write(2, f"{title.capitalize()}:\t{describe_probe(container[f'{title}Probe'])}\n")
        _env(w, pod, container)
        _mounts(w, container)


def _optional(value: Any) -> str:
    return "<nil>" if value is None else str(bool(value)).lower()


def volumes(w: Writer, items: list[dict[str, Any]]) -> None:
    if not items:
        w.write(0, "Volumes:\t<none>\n")
        return
    w.write(0, "Volumes:\n")
    for volume in items:
        w.write(1, f"{volume['name']}:\n")
        if "hostPath" in volume:
            source = volume["hostPath"]
            kind = source.get("type", "<none>") if "type" in source else "<none>"
            w.write(2, f"Type:\tHostPath (bare host directory volume)\n    Path:\t{source.get('path', '')}\n"
                       f"    HostPathType:\t{kind}\n")
        elif "emptyDir" in volume:
            source = volume["emptyDir"] or {}
            size = source.get("sizeLimit") or "<unset>"
            w.write(2, "Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)\n"
                       f"    Medium:\t{source.get('medium', '')}\n    SizeLimit:\t{size}\n")
        elif "secret" in volume:
            source = volume["secret"] or {}
            w.write(2, f"Type:\tSecret (a volume populated by a Secret)\n    SecretName:\t{source.get('secretName', '')}"
                       f"\n    Optional:\t{str(bool(source.get('optional'))).lower()}\n")
        elif "configMap" in volume:
            source = volume["configMap"] or {}
            w.write(2, f"Type:\tConfigMap (a volume populated by a ConfigMap)\n    Name:\t{source.get('name', '')}\n"
                       f"    Optional:\t{str(bool(source.get('optional'))).lower()}\n")
        elif "persistentVolumeClaim" in volume:
            source = volume["persistentVolumeClaim"] or {}
            w.write(2, "Type:\tPersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)\n"
                       f"    ClaimName:\t{source.get('claimName', '')}\n"
                       f"    ReadOnly:\t{str(bool(source.get('readOnly'))).lower()}\n")
        elif "projected" in volume:
            w.write(2, "Type:\tProjected (a volume that contains injected data from multiple sources)\n")
            for source in (volume["projected"] or {}).get("sources") or ():
                if source.get("secret") is not None:
                    w.write(2, f"SecretName:\t{source['secret'].get('name', '')}\n"
                               f"    SecretOptionalName:\t{_optional(source['secret'].get('optional'))}\n")
                elif source.get("downwardAPI") is not None:
                    w.write(2, "DownwardAPI:\ttrue\n")
                elif source.get("configMap") is not None:
                    w.write(2, f"ConfigMapName:\t{source['configMap'].get('name', '')}\n"
                               f"    ConfigMapOptional:\t{_optional(source['configMap'].get('optional'))}\n")
                elif source.get("serviceAccountToken") is not None:
                    w.write(2, f"TokenExpirationSeconds:\t{source['serviceAccountToken'].get('expirationSeconds')}\n")
        elif "downwardAPI" in volume:
            w.write(2, "Type:\tDownwardAPI (a volume populated by information about the pod)\n    Items:\n")
            for item in (volume["downwardAPI"] or {}).get("items") or ():
                if item.get("fieldRef"):
                    w.write(3, f"{item['fieldRef'].get('fieldPath')} -> {item.get('path')}\n")
                if item.get("resourceFieldRef"):
                    w.write(3, f"{item['resourceFieldRef'].get('resource')} -> {item.get('path')}\n")
        else:
            w.write(1, "<unknown>\n")


def describe_pod(pod: dict[str, Any]) -> str:
    """Everything but the Events, as one tabwriter input (tabs not yet aligned)."""
    meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    w = Writer()
    w.write(0, f"Name:\t{meta.get('name', '')}\n")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}\n")
    if spec.get("priority") is not None:
        w.write(0, f"Priority:\t{spec['priority']}\n")
    if spec.get("priorityClassName"):
        w.write(0, f"Priority Class Name:\t{spec['priorityClassName']}\n")
    if spec.get("runtimeClassName"):
        w.write(0, f"Runtime Class Name:\t{spec['runtimeClassName']}\n")
    if spec.get("serviceAccountName"):
        w.write(0, f"Service Account:\t{spec['serviceAccountName']}\n")
    node = spec.get("nodeName")
    w.write(0, f"Node:\t{node}/{status.get('hostIP', '')}\n" if node else "Node:\t<none>\n")
    if status.get("startTime"):
        w.write(0, f"Start Time:\t{rfc1123z(status['startTime'])}\n")
    labels_multiline(w, "Labels", meta.get("labels"))
    annotations_multiline(w, "Annotations", meta.get("annotations"))
    if meta.get("deletionTimestamp") and status.get("phase") not in ("Succeeded", "Failed"):
        then = parse_time(meta["deletionTimestamp"])
        assert then is not None
        w.write(0, f"Status:\tTerminating (lasts {human_duration((then - now()).total_seconds())})\n")
        w.write(0, f"Termination Grace Period:\t{meta.get('deletionGracePeriodSeconds', 0)}s\n")
    else:
        w.write(0, f"Status:\t{status.get('phase', '')}\n")
    if status.get("reason"):
        w.write(0, f"Reason:\t{status['reason']}\n")
    if status.get("message"):
        w.write(0, f"Message:\t{status['message']}\n")
    w.write(0, f"IP:\t{status.get('podIP', '')}\n")
    ips = status.get("podIPs") or []
    if not ips:
        w.write(0, "IPs:\t<none>\n")
    else:
        w.write(0, "IPs:\n")
        for ip in ips:
            w.write(1, f"IP:\t{ip.get('ip', '')}\n")
    owner = next((o for o in meta.get("ownerReferences") or () if o.get("controller")), None)
    if owner:
        w.write(0, f"Controlled By:\t{owner.get('kind')}/{owner.get('name')}\n")
    if status.get("nominatedNodeName"):
        w.write(0, f"NominatedNodeName:\t{status['nominatedNodeName']}\n")
    if spec.get("initContainers"):
        containers(w, pod, "Init Containers", spec["initContainers"], status.get("initContainerStatuses") or [])
    containers(w, pod, "Containers", spec.get("containers") or [], status.get("containerStatuses") or [])
    if spec.get("readinessGates"):
        w.write(0, "Readiness Gates:\n  Type\tStatus\n")
        conditions = {c.get("type"): c.get("status") for c in status.get("conditions") or ()}
        for gate in spec["readinessGates"]:
            w.write(1, f"{gate.get('conditionType')} \t{conditions.get(gate.get('conditionType'), '<none>')} \n")
    if status.get("conditions"):
        w.write(0, "Conditions:\n  Type\tStatus\n")
        for condition in status["conditions"]:
            w.write(1, f"{condition.get('type')} \t{condition.get('status')} \n")
    volumes(w, spec.get("volumes") or [])
    w.write(0, f"QoS Class:\t{status.get('qosClass', '')}\n")
    labels_multiline(w, "Node-Selectors", spec.get("nodeSelector"))
    tolerations_multiline(w, "Tolerations", spec.get("tolerations") or [])
    return w.text()


def describe_events(events: list[dict[str, Any]]) -> tuple[str, str]:
    """(the text before kubectl flushes, the Events table after it): with no events one more line of the
    description's own alignment."""
    if not events:
        return "Events:\t<none>\n", ""
    w = Writer()
    w.write(0, "Events:\n  Type\tReason\tAge\tFrom\tMessage\n")
    w.write(1, "----\t------\t----\t----\t-------\n")
    for event in sorted(events, key=lambda e: e.get("lastTimestamp") or ""):
        first = since(event.get("eventTime")) if event.get("eventTime") else since(event.get("firstTimestamp"))
        series = event.get("series")
        if series:
            interval = f"{since(series.get('lastObservedTime'))} (x{series.get('count')} over {first})"
        elif (event.get("count") or 0) > 1:
            interval = f"{since(event.get('lastTimestamp'))} (x{event['count']} over {first})"
        else:
            interval = first
        source = (event.get("source") or {}).get("component") or event.get("reportingComponent") or ""
        w.write(1, f"{event.get('type', '')}\t{event.get('reason', '')}\t{interval}\t{source}\t"
                   f"{(event.get('message') or '').strip()}\n")
    return "", w.text()
