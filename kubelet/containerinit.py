"""A container's first moments, inside its own mount namespace (started under `unshare --mount`): build its root
(a tmpfs with the host's top-level directories bound in read-only, and a /tmp of its own), mount its volumes at their mountPath (an overlay with
a tmpfs upper layer on the nearest existing directory when a path does not exist, so the host never changes),
put the Pod's /etc/hosts and /etc/resolv.conf in place, chroot, chdir and exec the command (whose exec closes the
pipe the kubelet waits on: until then, nothing may be run "in the container", whose root is not built yet). With a PID namespace,
the command runs as a child in it and this process stays outside as its parent, passing signals on. The process
that becomes the command joins the container's cgroups first thing (the supervisor stays out of them, as a
runtime's shim does), so the command never runs outside its limits.

Standard library only, run as `python -I -S containerinit.py SPEC.json`; exits 128 when the command cannot
start (as a runtime's StartError). It starts no process but the command: the kubelet finds the command as this
process's child, to exec into it."""

import ctypes
import json
import os
import signal
import sys

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 32, 4096, 16384, 1 << 18
# libc's functions from this process's own symbols: ctypes.util.find_library would run `ldconfig -p` as a child,
# which the kubelet could take for the container's command (the first child of this process), and did for an exec
libc = ctypes.CDLL(None, use_errno=True)


def mount(source, target, fstype, flags, data=None):
    args = [None if v is None else v.encode() for v in (source, target, fstype)]
    if libc.mount(args[0], args[1], args[2], flags, None if data is None else data.encode()) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {source} on {target}: {os.strerror(err)}")


WRITABLE = {"proc", "sys", "dev", "tmp"}  # kernel interfaces, and /tmp (replaced by a tmpfs of its own)


class Root:
    """The container's root directory under construction."""

    def __init__(self, path, scratch, keep=()):
        self.path = path
        self.keep = keep  # host directories that stay visible (read-only) under the container's own /tmp
        self.scratch = scratch  # a tmpfs for overlay layers
        self.overlays = 0
        self.overlaid = set()  # directories already under a writable overlay of ours

    def build(self):
        mount("tmpfs", self.path, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755")
        for entry in sorted(os.listdir("/")):
            src, dst = "/" + entry, os.path.join(self.path, entry)
            if os.path.islink(src):
                os.symlink(os.readlink(src), dst)
            elif os.path.isdir(src):
                os.mkdir(dst)
                mount(src, dst, None, MS_BIND | MS_REC)
                if entry not in WRITABLE:  # the host's files are read-only to a container
                    mount(None, dst, None, MS_BIND | MS_REMOUNT | MS_RDONLY)
            elif os.path.isfile(src):
                open(dst, "w").close()
                mount(src, dst, None, MS_BIND)
        mount("tmpfs", self.scratch, "tmpfs", 0, "mode=0755")
        tmp = os.path.join(self.path, "tmp")
        if os.path.isdir(tmp) and not os.path.islink(tmp):
            mount("tmpfs", tmp, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")  # a /tmp of its own, as in an image
            for kept in self.keep:  # e.g. mini-kube itself, installed under /tmp: the stand-in images run from it
                if kept.startswith("/tmp/") and os.path.isdir(kept):
                    path = os.path.join(self.path, kept.lstrip("/"))
                    os.makedirs(path, exist_ok=True)
                    mount(kept, path, None, MS_BIND | MS_REC)
                    mount(None, path, None, MS_BIND | MS_REMOUNT | MS_RDONLY)

    def inside(self, target):
        """`target` as a path under the root, its symlinks resolved as they will be after the chroot."""
        parts = [p for p in os.path.normpath(target).split("/") if p]
        done = []
        hops = 0
        while parts:
            part = parts.pop(0)
            if part == "..":
                if done:
                    done.pop()
                continue
            candidate = os.path.join(self.path, *done, part)
            if os.path.islink(candidate) and hops < 40:
                hops += 1
                link = os.readlink(candidate)
                if link.startswith("/"):
                    done = []
                parts = [p for p in link.split("/") if p and p != "."] + parts
                continue
            done.append(part)
        return os.path.join(self.path, *done)

    def ensure(self, target, directory):
        """Make `target` exist (a directory or an empty file), through an overlay where the host has no such path."""
        path = self.inside(target)
        if os.path.lexists(path):
            return path
        ancestor = os.path.dirname(path)
        while not os.path.isdir(ancestor):
            ancestor = os.path.dirname(ancestor)
        under_overlay = any(ancestor == d or ancestor.startswith(d + "/") for d in self.overlaid)
        if ancestor != self.path and not under_overlay:
            self.overlaid.add(ancestor)
            self.overlays += 1
            upper = os.path.join(self.scratch, f"o{self.overlays}", "upper")
            work = os.path.join(self.scratch, f"o{self.overlays}", "work")
            os.makedirs(upper)
            os.makedirs(work)
            mount("overlay", ancestor, "overlay", 0, f"lowerdir={ancestor},upperdir={upper},workdir={work}")
        if directory:
            os.makedirs(path, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            open(path, "w").close()
        return path

    def bind(self, source, target, read_only):
        path = self.ensure(target, os.path.isdir(source))
        mount(source, path, None, MS_BIND | MS_REC)
        if read_only:
            mount(None, path, None, MS_BIND | MS_REMOUNT | MS_RDONLY)


CLONE_NEWPID = 0x20000000
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)


def enter_pid_namespace(path):
    """Children made from now on are in the Pod's PID namespace (they die with it)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWPID) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"setns {path}: {os.strerror(err)}")
    finally:
        os.close(fd)


def supervise(child):
    """Stand between the kubelet and the container: pass signals on (SIGTERM reaches the command, as a
    runtime's stop does), then leave with the command's own exit code or signal."""
    for signum in FORWARDED:
        signal.signal(signum, lambda sig, _frame: os.kill(child, sig))
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except InterruptedError:
            continue
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig != signal.SIGKILL:  # SIGKILL (an OOM kill, say) has no handler to reset
            signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    sys.exit(os.waitstatus_to_exitcode(status) if not os.WIFSIGNALED(status) else 128 + os.WTERMSIG(status))


def join_cgroups(files):
    """Move this process into the container's cgroups (`0`: the writer itself)."""
    for path in files:
        try:
            with open(path, "w") as handle:
                handle.write("0")
        except OSError as exc:
            sys.stderr.write(f"cgroup {os.path.dirname(path)}: {exc.strerror}\n")
            sys.exit(128)


def main():
    with open(sys.argv[1]) as handle:
        spec = json.load(handle)
    started = spec.get("started_fd")  # closed by the command's exec: the kubelet then knows it has started
    if started is not None:
        os.set_inheritable(started, False)
    if spec.get("pidns"):
        enter_pid_namespace(spec["pidns"])
        child = os.fork()
        if child:
            if started is not None:
                os.close(started)
            supervise(child)
        for signum in FORWARDED:
            signal.signal(signum, signal.SIG_DFL)
    join_cgroups(spec.get("cgroups") or ())
    root = Root(spec["root"], spec["scratch"], spec.get("keep") or ())
    root.build()
    for m in spec.get("mounts") or ():
        root.bind(m["source"], m["target"], m.get("readOnly", False))
    for target, source in (spec.get("files") or {}).items():
        root.bind(source, target, False)
    os.chroot(root.path)
    try:
        os.chdir(spec.get("workdir") or "/")
    except OSError:
        os.makedirs(spec["workdir"], exist_ok=True)
        os.chdir(spec["workdir"])
    argv, env = spec["argv"], spec["env"]
    try:
        os.execvpe(argv[0], argv, env)
    except OSError as exc:
        if not isinstance(exc, FileNotFoundError):
            what = exc.strerror
        elif "/" in argv[0]:
            what = f"stat {argv[0]}: no such file or directory"
        else:
            what = "executable file not found in $PATH"
        message = f'exec: "{argv[0]}": {what}\n'
        if started is not None:  # the kubelet reads it as the start's failure (the container never ran)
            os.write(started, message.encode())
        else:
            sys.stderr.write(message)
        sys.exit(128)


if __name__ == "__main__":
    main()
