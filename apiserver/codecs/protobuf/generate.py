"""Generate ``messages.json`` from upstream ``generated.proto`` files (plus Go struct tags).

Usage::

    python -m apiserver.codecs.protobuf.generate --api-dir K8S_API --apimachinery-dir APIMACHINERY \\
        [--apiextensions-dir APIEXTENSIONS] [--kube-aggregator-dir AGGREGATOR] [--ref v0.32.13] [-o messages.json]

Each directory is a checkout of the upstream repository (k8s.io/api, k8s.io/apimachinery, ...).
Field numbers, proto types, repeated/map labels come from ``generated.proto``; the JSON side of each field
(JSON name, ``omitempty``, pointer-ness, ``inline``) comes from the Go struct tags next to it, because the
wire format and the JSON twin depend on both.  Registered kinds come from each package's ``register.go``.

Output format (compact)::

    {"messages": {"core.v1.ConfigMap": [[num, jsonName, type, flags], ...]},   # fields in Go (JSON) order
     "wrappers": ["meta.v1.Verbs", ...],     # +protobuf.nullable wrappers: JSON form is the items list
     "kinds": {"v1": {"ConfigMap": "core.v1.ConfigMap", ...}, "*": {"DeleteOptions": ...}}}

``type`` is a scalar (string, bytes, bool, int32, int64, double) or a message name; ``flags`` holds
``r`` repeated, ``m`` map (string keys), ``o`` omitempty, ``p`` pointer (nil-able), ``i`` inline.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

SCALARS = {"string", "bytes", "bool", "int32", "int64", "double"}

_FIELD_RE = re.compile(r"^\s*(optional|repeated|required)\s+([\w.]+)\s+(\w+)\s*=\s*(\d+)\s*;")
_MAP_RE = re.compile(r"^\s*map<\s*(\w+)\s*,\s*([\w.]+)\s*>\s+(\w+)\s*=\s*(\d+)\s*;")
_MSG_RE = re.compile(r"^message\s+(\w+)\s*\{")
_PKG_RE = re.compile(r"^package\s+([\w.]+)\s*;")
_GOPKG_RE = re.compile(r'^option\s+go_package\s*=\s*"([^"]+)"')
_STRUCT_RE = re.compile(r"^type\s+(\w+)\s+struct\s*\{\s*$")
_GOFIELD_RE = re.compile(r"^\s*([^`/]+?)\s*`([^`]*)`")
_TAG_RE = re.compile(r'(\w+):"([^"]*)"')

# Shortened package prefixes: the part up to and including these markers is dropped.
_PREFIXES = ("k8s.io.api.", "k8s.io.apimachinery.pkg.apis.", "k8s.io.apimachinery.pkg.api.",
             "k8s.io.apimachinery.pkg.util.", "k8s.io.apimachinery.pkg.",
             "k8s.io.apiextensions_apiserver.pkg.apis.", "k8s.io.kube_aggregator.pkg.apis.")


def short_package(pkg: str) -> str:
    """Drop the module prefix of a proto package name (``k8s.io.api.core.v1`` -> ``core.v1``)."""
    for p in _PREFIXES:
        if pkg.startswith(p):
            return pkg[len(p):]
    return pkg


@dataclass
class ProtoField:
    """One field as written in generated.proto."""

    number: int
    name: str
    type: str
    repeated: bool = False
    is_map: bool = False


@dataclass
class ProtoFile:
    """The messages of one generated.proto file."""

    package: str
    go_package: str
    messages: dict[str, list[ProtoField]] = field(default_factory=dict)
    nullable: set[str] = field(default_factory=set)


@dataclass
class GoField:
    """The JSON-relevant facts of a Go struct field."""

    json_name: str
    omitempty: bool
    pointer: bool
    inline: bool


def parse_proto(path: Path) -> ProtoFile:
    """Parse the subset of proto2 used by Kubernetes' generated.proto files."""
    pf = ProtoFile(package="", go_package="")
    comments: list[str] = []
    current: str | None = None
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if m := _PKG_RE.match(line):
            pf.package = m.group(1)
        elif m := _GOPKG_RE.match(line):
            pf.go_package = m.group(1)
        elif line.startswith("//"):
            comments.append(line)
            continue
        elif m := _MSG_RE.match(line):
            if current is not None:
                raise SystemExit(f"{path}: nested message {m.group(1)} not supported")
            current = m.group(1)
            pf.messages[current] = []
            if any("+protobuf.nullable=true" in c for c in comments):
                pf.nullable.add(current)
        elif line == "}":
            current = None
        elif line.startswith(("enum ", "oneof ")):
            raise SystemExit(f"{path}: unsupported construct: {line}")
        elif current is not None and (m := _MAP_RE.match(line)):
            if m.group(1) != "string":
                raise SystemExit(f"{path}: map key {m.group(1)} not supported")
            pf.messages[current].append(ProtoField(int(m.group(4)), m.group(3),
                                                   resolve(m.group(2), pf.package), is_map=True))
        elif current is not None and (m := _FIELD_RE.match(line)):
            pf.messages[current].append(ProtoField(int(m.group(4)), m.group(3),
                                                   resolve(m.group(2), pf.package),
                                                   repeated=m.group(1) == "repeated"))
        elif current is not None and line and not line.startswith("option "):
            raise SystemExit(f"{path}: cannot parse line in message {current}: {line}")
        comments = []
    return pf


def resolve(type_name: str, package: str) -> str:
    """Return a scalar name or the shortened full name of a message type."""
    if type_name in SCALARS:
        return type_name
    if type_name.startswith("."):
        full = type_name[1:]
    elif "." in type_name:
        full = type_name
    else:
        full = f"{package}.{type_name}"
    pkg, _, name = full.rpartition(".")
    return f"{short_package(pkg)}.{name}"


_ALIAS_RE = re.compile(r"^type\s+(\w+)\s+=?\s*(\w+)\.(\w+)\s*$")
_IMPORT_RE = re.compile(r'^\s*(?:(\w+)\s+)?"([^"]+)"\s*$')


@dataclass
class GoPackage:
    """Struct fields (by protobuf field number) and cross-package type aliases of one Go package."""

    structs: dict[str, dict[int, GoField]] = field(default_factory=dict)
    aliases: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> (import path, type)


def parse_go_package(pkg_dir: Path) -> GoPackage:
    """Read the Go sources of one API package: struct tags and ``type X pkg.Y`` definitions."""
    gp = GoPackage()
    for path in sorted(pkg_dir.glob("*.go")):
        n = path.name
        if n.endswith("_test.go") or n.startswith("zz_generated") or n == "generated.pb.go" or "swagger" in n:
            continue
        imports: dict[str, str] = {}
        current: dict[int, GoField] | None = None
        in_import = False
        for line in path.read_text().splitlines():
            if current is None:
                if line.startswith("import ("):
                    in_import = True
                elif in_import and line.startswith(")"):
                    in_import = False
                elif in_import and (m := _IMPORT_RE.match(line)):
                    imports[m.group(1) or m.group(2).rpartition("/")[2]] = m.group(2)
                elif m := _STRUCT_RE.match(line):
                    current = gp.structs.setdefault(m.group(1), {})
                elif (m := _ALIAS_RE.match(line)) and m.group(2) in imports:
                    gp.aliases[m.group(1)] = (imports[m.group(2)], m.group(3))
                continue
            if line.startswith("}"):
                current = None
                continue
            if line.lstrip().startswith("//") or (m := _GOFIELD_RE.match(line)) is None:
                continue
            decl, tags = m.group(1).split(), dict(_TAG_RE.findall(m.group(2)))
            proto = tags.get("protobuf", "").split(",")
            if len(proto) < 2 or not proto[1].isdigit():
                continue
            jparts = tags.get("json", "").split(",")
            if jparts[0] == "-":
                continue
            go_type = decl[-1]
            go_name = decl[0] if len(decl) == 2 else go_type.lstrip("*").rpartition(".")[2]
            inline = "inline" in jparts[1:]
            current[int(proto[1])] = GoField(json_name=jparts[0] or ("" if inline else go_name),
                                             omitempty="omitempty" in jparts[1:],
                                             pointer=go_type.startswith("*"), inline=inline)
    return gp


_KNOWN_RE = re.compile(r"AddKnownTypes\(\s*SchemeGroupVersion\s*,([^)]*)\)", re.S)
_OBJ_RE = re.compile(r"&(?:(\w+)\.)?(\w+)\{\}")
_GROUP_RE = re.compile(r'GroupName\s*=\s*"([^"]*)"')
_VERSION_RE = re.compile(r'SchemeGroupVersion\s*=\s*schema\.GroupVersion\{[^}]*Version:\s*"([^"]+)"')


def parse_register(pkg_dir: Path) -> tuple[str, list[tuple[str | None, str]]] | None:
    """Return (apiVersion, [(go package alias or None, kind)]) from a package's register.go."""
    reg = pkg_dir / "register.go"
    if not reg.exists():
        return None
    text = reg.read_text()
    g, v = _GROUP_RE.search(text), _VERSION_RE.search(text)
    if not g or not v:
        return None
    api_version = f"{g.group(1)}/{v.group(1)}" if g.group(1) else v.group(1)
    kinds = [(m.group(1), m.group(2)) for call in _KNOWN_RE.findall(text) for m in _OBJ_RE.finditer(call)]
    return api_version, kinds


def _meta_kind_lists(meta_dir: Path) -> tuple[list[str], list[str], list[str]]:
    """(kinds registered in every group version, unversioned 'v1' kinds, meta.k8s.io/v1 kinds)."""
    text = (meta_dir / "register.go").read_text()

    def objs(pattern: str) -> list[str]:
        m = re.search(pattern, text, re.S)
        if not m:
            raise SystemExit(f"meta register.go: cannot find {pattern!r}")
        return [o.group(2) for o in _OBJ_RE.finditer(m.group(1))]

    per_gv = ["WatchEvent", *objs(r"optionsTypes\s*=\s*\[\]runtime\.Object\{(.*?)\n\}")]
    unversioned = objs(r"AddUnversionedTypes\(Unversioned,(.*?)\)")
    meta_only = objs(r"func AddMetaToScheme.*?AddKnownTypes\(SchemeGroupVersion,(.*?)\)")
    return per_gv, unversioned, meta_only


def generate(roots: dict[str, Path]) -> dict:
    """Build the table from upstream checkouts keyed by Go module path (``k8s.io/api`` -> dir)."""
    files: list[tuple[ProtoFile, Path]] = []
    for module, root in roots.items():
        for proto in sorted(root.rglob("generated.proto")):
            pf = parse_proto(proto)
            if not pf.go_package.startswith(module) or "testapigroup" in pf.go_package:
                continue
            files.append((pf, root / pf.go_package[len(module):].lstrip("/")))
    messages: dict[str, list] = {}
    wrappers: list[str] = []
    go_alias: dict[str, str] = {}  # Go package directory -> short proto package
    warnings: list[str] = []
    gopkgs = {pf.go_package: parse_go_package(pkg_dir) for pf, pkg_dir in files}

    def go_struct(go_package: str, name: str) -> dict[int, GoField]:
        gp = gopkgs[go_package]
        if name in gp.structs:
            return gp.structs[name]
        if name in gp.aliases and gp.aliases[name][0] in gopkgs:
            return go_struct(*gp.aliases[name])
        return {}

    for pf, pkg_dir in files:
        spkg = short_package(pf.package)
        go_alias[str(pkg_dir)] = spkg
        for mname, pfields in pf.messages.items():
            full = f"{spkg}.{mname}"
            if full in messages:
                raise SystemExit(f"duplicate message name {full}")
            if mname in pf.nullable:
                wrappers.append(full)
            gofields = go_struct(pf.go_package, mname)
            rows = []
            order = {num: i for i, num in enumerate(gofields)}
            for f in sorted(pfields, key=lambda f: (order.get(f.number, 10_000 + f.number))):
                g = gofields.get(f.number)
                if g is None:
                    warnings.append(f"{full}.{f.name}: no Go struct field; JSON name = proto name")
                    g = GoField(json_name=f.name, omitempty=True, pointer=False, inline=False)
                flags = ("r" if f.repeated else "") + ("m" if f.is_map else "") + \
                        ("o" if g.omitempty else "") + ("p" if g.pointer else "") + ("i" if g.inline else "")
                rows.append([f.number, g.json_name, f.type, flags])
            messages[full] = rows
    for rows in messages.values():
        for row in rows:
            if row[2] not in SCALARS and row[2] not in messages:
                raise SystemExit(f"unresolved type {row[2]}")

    kinds: dict[str, dict[str, str]] = {}
    meta_dir = roots["k8s.io/apimachinery"] / "pkg/apis/meta/v1"
    meta_pkg = go_alias[str(meta_dir)]
    for _pf, pkg_dir in files:
        reg = parse_register(pkg_dir)
        if reg is None:
            continue
        api_version, objs = reg
        spkg = go_alias[str(pkg_dir)]
        for alias, kind in objs:
            msg = f"{meta_pkg}.{kind}" if alias == "metav1" else f"{spkg}.{kind}" if alias is None else None
            if msg in messages:
                kinds.setdefault(api_version, {})[kind] = msg
            else:
                warnings.append(f"{api_version} {kind}: no protobuf message; not supported")
    per_gv, unversioned, meta_only = _meta_kind_lists(meta_dir)
    kinds["*"] = {k: f"{meta_pkg}.{k}" for k in per_gv}
    kinds.setdefault("v1", {}).update({k: f"{meta_pkg}.{k}" for k in unversioned})
    kinds.setdefault("meta.k8s.io/v1", {}).update(
        {k: f"{meta_pkg}.{k}" for k in meta_only if f"{meta_pkg}.{k}" in messages})
    for w in warnings:
        print("warning:", w, file=sys.stderr)
    return {"messages": messages, "wrappers": sorted(wrappers),
            "kinds": {gv: dict(sorted(ks.items())) for gv, ks in sorted(kinds.items())}}


def main(argv: list[str] | None = None) -> None:
    """Command line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--api-dir", type=Path, required=True, help="checkout of k8s.io/api")
    ap.add_argument("--apimachinery-dir", type=Path, required=True, help="checkout of k8s.io/apimachinery")
    ap.add_argument("--apiextensions-dir", type=Path, help="checkout of k8s.io/apiextensions-apiserver")
    ap.add_argument("--kube-aggregator-dir", type=Path, help="checkout of k8s.io/kube-aggregator")
    ap.add_argument("--ref", default="", help="upstream tag the checkouts are at (recorded in the output)")
    ap.add_argument("-o", "--output", type=Path, default=Path(__file__).with_name("messages.json"))
    args = ap.parse_args(argv)
    roots = {"k8s.io/api": args.api_dir, "k8s.io/apimachinery": args.apimachinery_dir}
    if args.apiextensions_dir:
        roots["k8s.io/apiextensions-apiserver"] = args.apiextensions_dir
    if args.kube_aggregator_dir:
        roots["k8s.io/kube-aggregator"] = args.kube_aggregator_dir
    table = {"source": {"ref": args.ref, "modules": sorted(roots)}, **generate(roots)}
    text = json.dumps(table, separators=(",", ":"))
    # one message per line keeps diffs readable while staying compact
    text = text.replace('],"', '],\n"').replace('},"', '},\n"')
    args.output.write_text(text + "\n")
    print(f"wrote {args.output}: {len(table['messages'])} messages, "
          f"{sum(len(v) for v in table['kinds'].values())} kinds", file=sys.stderr)


if __name__ == "__main__":
    main()
