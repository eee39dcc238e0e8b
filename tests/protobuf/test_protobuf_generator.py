"""The generator: generated.proto + Go struct tags + register.go -> the committed messages.json."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mini_kube.apiserver.codecs.protobuf import generate
from mini_kube.apiserver.codecs.protobuf.messages import TABLE_PATH

REPO = Path(__file__).resolve().parents[2]

PROTO = """
syntax = "proto2";
package k8s.io.api.demo.v1;
import "k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto";
option go_package = "k8s.io/api/demo/v1";

// Widget is a thing.
message Widget {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional WidgetSpec spec = 2;
}

message WidgetSpec {
  optional int32 replicas = 1;
  repeated string names = 2;
  map<string, string> labels = 3;
  optional Inner inner = 4;
  optional Words words = 5;
}

message Inner {
  optional bool on = 1;
}

// +protobuf.nullable=true
message Words {
  repeated string items = 1;
}
"""

GO = """package v1

import (
\tmetav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type Widget struct {
\tmetav1.TypeMeta `json:",inline"`
\tmetav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
\tSpec WidgetSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
}

type WidgetSpec struct {
\tInner `json:",inline" protobuf:"bytes,4,opt,name=inner"`
\tNames []string `json:"names,omitempty" protobuf:"bytes,2,rep,name=names"`
\t// +optional
\tReplicas *int32 `json:"replicas,omitempty" protobuf:"varint,1,opt,name=replicas"`
\tLabels map[string]string `json:"labels" protobuf:"bytes,3,rep,name=labels"`
\tWords Words `json:"words,omitempty" protobuf:"bytes,5,opt,name=words"`
}

type Inner struct {
\tOn bool `json:"on,omitempty" protobuf:"varint,1,opt,name=on"`
}

type Words []string
"""

REGISTER = """package v1
const GroupName = "demo.example.com"
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1"}
func addKnownTypes(scheme *runtime.Scheme) error {
\tscheme.AddKnownTypes(SchemeGroupVersion,
\t\t&Widget{},
\t)
\treturn nil
}
"""

META_PROTO = """
syntax = "proto2";
package k8s.io.apimachinery.pkg.apis.meta.v1;
option go_package = "k8s.io/apimachinery/pkg/apis/meta/v1";
message ObjectMeta {
  optional string name = 1;
}
message WatchEvent {
  optional string type = 1;
}
message Status {
  optional string status = 2;
}
message ListOptions {
  optional string labelSelector = 1;
}
"""

META_GO = """package v1
type ObjectMeta struct {
\tName string `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
}
"""

META_REGISTER = """package v1
var optionsTypes = []runtime.Object{
\t&ListOptions{},
}
func AddToGroupVersion(scheme *runtime.Scheme, groupVersion schema.GroupVersion) {
\tscheme.AddUnversionedTypes(Unversioned,
\t\t&Status{},
\t)
}
func AddMetaToScheme(scheme *runtime.Scheme) error {
\tscheme.AddKnownTypes(SchemeGroupVersion,
\t\t&Status{},
\t)
}
"""


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def upstream(tmp_path: Path) -> tuple[Path, Path]:
    """A miniature k8s.io/api and k8s.io/apimachinery checkout."""
    api, mach = tmp_path / "api", tmp_path / "apimachinery"
    write(api, "demo/v1/generated.proto", PROTO)
    write(api, "demo/v1/types.go", GO)
    write(api, "demo/v1/register.go", REGISTER)
    write(mach, "pkg/apis/meta/v1/generated.proto", META_PROTO)
    write(mach, "pkg/apis/meta/v1/types.go", META_GO)
    write(mach, "pkg/apis/meta/v1/register.go", META_REGISTER)
    return api, mach


def test_generator_builds_the_compact_table(upstream: tuple[Path, Path], tmp_path: Path) -> None:
    api, mach = upstream
    out = tmp_path / "messages.json"
    generate.main(["--api-dir", str(api), "--apimachinery-dir", str(mach), "--ref", "test", "-o", str(out)])
    table = json.loads(out.read_text())
    assert table["source"] == {"ref": "test", "modules": ["k8s.io/api", "k8s.io/apimachinery"]}
    msgs = table["messages"]
    assert msgs["demo.v1.Widget"] == [[1, "metadata", "meta.v1.ObjectMeta", "o"], [2, "spec", "demo.v1.WidgetSpec", ""]]
    # Go struct order, JSON names and flags (inline, repeated, map, omitempty, pointer)
    assert msgs["demo.v1.WidgetSpec"] == [
        [4, "", "demo.v1.Inner", "i"], [2, "names", "string", "ro"], [1, "replicas", "int32", "op"],
        [3, "labels", "string", "m"], [5, "words", "demo.v1.Words", "o"]]
    assert table["wrappers"] == ["demo.v1.Words"]
    assert table["kinds"]["demo.example.com/v1"] == {"Widget": "demo.v1.Widget"}
    assert table["kinds"]["*"] == {"ListOptions": "meta.v1.ListOptions", "WatchEvent": "meta.v1.WatchEvent"}
    assert table["kinds"]["v1"] == {"Status": "meta.v1.Status"}


def test_generator_rejects_what_it_cannot_parse(upstream: tuple[Path, Path]) -> None:
    api, mach = upstream
    write(api, "demo/v1/generated.proto", PROTO.replace("message Inner {", "message Inner {\n  oneof x {"))
    with pytest.raises(SystemExit):
        generate.generate({"k8s.io/api": api, "k8s.io/apimachinery": mach})


def test_committed_table_comes_from_v1_32() -> None:
    table = json.loads(TABLE_PATH.read_text())
    assert table["source"]["ref"].startswith("v0.32.")
    assert {"k8s.io/api", "k8s.io/apimachinery", "k8s.io/apiextensions-apiserver"} <= set(
        table["source"]["modules"])
    cm = {row[1]: row for row in table["messages"]["core.v1.ConfigMap"]}
    assert cm["binaryData"] == [3, "binaryData", "bytes", "mo"] and cm["immutable"][0] == 4


UPSTREAM_ENV = "MINI_KUBE_K8S_SOURCES"


@pytest.mark.skipif(not os.environ.get(UPSTREAM_ENV), reason=f"set {UPSTREAM_ENV} to a directory with api/, "
                    "apimachinery/, apiextensions-apiserver/, kube-aggregator/ checkouts at the recorded tag")
def test_committed_table_is_reproducible(tmp_path: Path) -> None:
    src = Path(os.environ[UPSTREAM_ENV])
    out = tmp_path / "messages.json"
    subprocess.run([sys.executable, "-m", "mini_kube.apiserver.codecs.protobuf.generate",
                    "--api-dir", str(src / "api"), "--apimachinery-dir", str(src / "apimachinery"),
                    "--apiextensions-dir", str(src / "apiextensions-apiserver"),
                    "--kube-aggregator-dir", str(src / "kube-aggregator"),
                    "--ref", json.loads(TABLE_PATH.read_text())["source"]["ref"], "-o", str(out)],
                   check=True, cwd=REPO, capture_output=True)
    assert out.read_text() == TABLE_PATH.read_text()
