"""What a container runs given its image's entrypoint: `command` replaces the image's ENTRYPOINT, `args` its
CMD, as upstream combines them. The built-in agnhost image (`.../e2e-test-images/agnhost:TAG`, ENTRYPOINT
`["/agnhost"]`, CMD `["pause"]`) is mini-kube's Python agnhost (kubelet/agnhost/): args alone are its subcommand,
neither command nor args runs `pause`, and a command naming `/agnhost` or `/agnhost-2` (the image's two copies of
the binary) runs it too. The images built FROM agnhost (the update demo's `nautilus` and `kitten`, CMD
`["test-webserver"]`) are the same with their own CMD. Both are files in the container's root as in the image (`kubectl exec POD -- /agnhost
dns-suffix`): scripts starting the serving interpreter on the Python agnhost (kubelet/image_files.py). The
conformance suite's sample-apiserver (ENTRYPOINT `["/sample-apiserver"]`) is kubelet/sample_apiserver/ likewise."""

from __future__ import annotations

import shlex
import sys

from .images import repository as image_repository

AGNHOST_REPOSITORY = "e2e-test-images/agnhost"
AGNHOST_BINARIES = ("/agnhost", "/agnhost-2", "agnhost", "agnhost-2")
AGNHOST_MODULE = "mini_kube.kubelet.agnhost"
AGNHOST_CMD = ["pause"]  # the image's CMD: the args of a container that gives neither command nor args
# the images whose ENTRYPOINT is agnhost's: each one's CMD
AGNHOST_IMAGES = {AGNHOST_REPOSITORY: AGNHOST_CMD, "e2e-test-images/nautilus": ["test-webserver"],
                  "e2e-test-images/kitten": ["test-webserver"]}


# images whose ENTRYPOINT is one program mini-kube has in Python: (the binary's path in the image, its module)
PROGRAM_IMAGES = {"e2e-test-images/sample-apiserver": ("/sample-apiserver", "mini_kube.kubelet.sample_apiserver")}


def agnhost_repository(image: str) -> str | None:
    """The agnhost-based image `image` names (`registry.k8s.io/e2e-test-images/agnhost:2.53` ->
    `e2e-test-images/agnhost`, any registry host, tag or digest), or None."""
    name = image.split("@")[0]
    if ":" in name.rsplit("/", 1)[-1]:
        name = name.rsplit(":", 1)[0]
    return next((r for r in AGNHOST_IMAGES if name == r or name.endswith("/" + r)), None)


def is_agnhost(image: str) -> bool:
    """Whether `image` runs agnhost as its ENTRYPOINT (agnhost itself and the images built from it)."""
    return agnhost_repository(image) is not None


def agnhost_argv(argv0: str, args: list[str]) -> list[str]:
    """The serving interpreter running the Python agnhost as the binary `argv0` with `args`."""
    return [sys.executable, "-I", "-m", AGNHOST_MODULE, f"--argv0={argv0}", *args]


def container_argv(image: str, command: list[str], args: list[str]) -> list[str]:
    """The program and arguments of a container; empty when neither image nor spec names one."""
    repository = agnhost_repository(image)
    if repository is not None:
        if not command:
            return agnhost_argv("/agnhost", args or AGNHOST_IMAGES[repository])
        if command[0] in AGNHOST_BINARIES:
            return agnhost_argv(command[0], command[1:] + args)
    program = PROGRAM_IMAGES.get(image_repository(image))
    if program is not None and (not command or command[0] == program[0]):
        return [sys.executable, "-I", "-m", program[1], *(command[1:] if command else []), *args]
    return command + args if command else args


def agnhost_script() -> str:
    """The text of the image's `/agnhost` (and `/agnhost-2`): the Python agnhost, named as it was called."""
    return (f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -I -m {AGNHOST_MODULE} --argv0=\"$0\" \"$@\"\n")

