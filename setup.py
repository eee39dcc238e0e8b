"""Package layout: the top-level folders are installed as subpackages of `mini_kube` (see mini_kube/__init__.py).

pyproject.toml holds everything else; only this mapping needs code (setuptools' package discovery cannot add
a prefix)."""

from setuptools import find_packages, setup

FOLDERS = ["apiserver", "store", "machinery", "client", "controllers", "scheduler", "agent_operator", "proxy", "ccm",
           "clusterdns", "kubectl_lite", "network", "kubelet"]

setup(
    packages=["mini_kube", "mini_kube.testing"] + [f"mini_kube.{name}" for folder in FOLDERS
                              for name in [folder, *(f"{folder}.{sub}" for sub in find_packages(folder))]],
    package_dir={"mini_kube": "mini_kube", **{f"mini_kube.{folder}": folder for folder in FOLDERS}},
    package_data={"mini_kube.apiserver.codecs.protobuf": ["messages.json"], "mini_kube.kubelet": ["seccomp_default.json"]},
)
