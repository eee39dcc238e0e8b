"""A container's first moments, inside its own mount namespace (started under `unshare --mount`), as a container
runtime makes a container: its root is a directory of its own (its writable layer, on the node's disk so its
size can be measured) holding read-only binds of the host's system directories (/usr, /etc, /bin, /lib...) and
of mini-kube's own installation and interpreter (the stand-in images run from them), all nosuid and nodev, and
nothing else of the host: no home directories, no /tmp, no data dir, no node root dir, no other Pod's files. It
gets a /proc of the Pod's PID namespace with the runtime's masked and read-only paths, a read-only /sys, and a
private /dev with the standard devices. Volumes appear at their mountPath (an overlay with an upper layer of
the container's own where a path does not exist in a read-only directory, so the host never changes), the
Pod's /etc/hosts and /etc/resolv.conf too; then pivot_root into it (the host's root is unmounted: unlike a
chroot there is nothing to climb out to), the user, groups and capability bounding set of the container's
securityContext (containerd's default set unless it says otherwise), no_new_privs when asked, and exec of the
command (whose exec closes the pipe the kubelet waits on: until then, nothing may be run "in the container",
whose root is not built yet). Without CAP_SYS_ADMIN the container can neither mount nor unmount, so none of
this can be undone from inside. With a PID namespace, the command runs as a child in it and this process stays
outside as its parent, passing signals on, and moves the process that becomes the command into the container's
cgroups while that process builds the root (the supervisor stays out of them, as a runtime's shim does); the
command is exec'd only once it is in them, so it never runs outside its limits.

`enter` runs a process in a running container instead (kubectl exec, exec probes), with the same identity and
filter; the node's spawner (kubelet/init_spawner.py) forks a process of its own to run it, as it forks each
container's `main`. Standard library only, run as `python -I -S containerinit.py SPEC` (SPEC: marshal, which
needs no import), or loaded by the spawner; exits 128 when the command cannot start (as a runtime's
StartError). It starts no process but the command: the kubelet finds the command as this process's child, to
exec into it."""

import _signal as signal  # the C module under `signal`, without its enums: each exec'd process starts faster
import ctypes
import marshal
import os
import stat
import sys
import warnings  # noqa: F401 - os.execvpe imports it, when the host's root (and stdlib) is gone

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_REC = 1, 2, 4, 8, 32, 4096, 16384
MNT_DETACH = 2
PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 24, 38, 22, 2
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "ppc64le": 203, "s390x": 217}.get(os.uname().machine, 155)
LOCKED = MS_NOSUID | MS_NODEV  # what comes from the host: no setuid programs, no device files
# libc's functions from this process's own symbols: ctypes.util.find_library would run `ldconfig -p` as a child,
# which the kubelet could take for the container's command (the first child of this process), and did for an exec
libc = ctypes.CDLL(None, use_errno=True)

SYSTEM = ("bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr", "etc")  # the "image": the host's, read-only
EMPTY = {"dev": 0o755, "proc": 0o555, "sys": 0o555, "tmp": 0o1777, "var": 0o755, "var/tmp": 0o1777, "run": 0o755,
         "home": 0o755, "root": 0o700, "srv": 0o755, "mnt": 0o755, "media": 0o755, "opt": 0o755}
IMAGE_MOUNTPOINTS = ("dev", "proc", "sys")  # made in an image's root when it lacks them, as runtimes do
# the runtime's defaults (Kubernetes' DefaultProcMount: masked paths get /dev/null or an empty read-only tmpfs)
MASKED = ("/proc/asound", "/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list",
          "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/sys/firmware", "/sys/devices/virtual/powercap")
READ_ONLY = ("/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger")
# the host's secrets in its /etc, which stands in for the image's: empty in the container
HOST_SECRETS = ("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-", "/etc/ssl/private")
DEVICES = {"null": (1, 3), "zero": (1, 5), "full": (1, 7), "random": (1, 8), "urandom": (1, 9), "tty": (5, 0)}
DEVICE_LINKS = {"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1",
                "stderr": "/proc/self/fd/2", "ptmx": "pts/ptmx"}


def mount(source, target, fstype, flags, data=None):
    args = [None if v is None else v.encode() for v in (source, target, fstype)]
    if libc.mount(args[0], args[1], args[2], flags, None if data is None else data.encode()) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {source} on {target}: {os.strerror(err)}")


def bind(source, target, flags, recursive=False):
    """Bind `source` on `target`, then set the mount's flags (a bind takes its source's until remounted)."""
    mount(source, target, None, MS_BIND | (MS_REC if recursive else 0))
    mount(None, target, None, MS_BIND | MS_REMOUNT | flags)


SYS_OPEN_TREE, SYS_MOVE_MOUNT, SYS_MOUNT_SETATTR = 428, 429, 442  # the same on every architecture
OPEN_TREE_CLONE, AT_EMPTY_PATH, AT_RECURSIVE, MOVE_MOUNT_F_EMPTY_PATH = 1, 0x1000, 0x8000, 4
MOUNT_ATTR_IDMAP = 0x100000  # MOUNT_ATTR_RDONLY, NOSUID, NODEV, NOEXEC have MS_*'s values


class MountAttr(ctypes.Structure):
    _fields_ = (("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64), ("propagation", ctypes.c_uint64),
                ("userns_fd", ctypes.c_uint64))


def idmapped_bind(source, target, flags, userns, recursive=False):
    """Bind `source` on `target` through the ID mapping of the user namespace `userns` (an fd), as runtimes mount
    a user-namespaced Pod's volumes: a file the host's uid N owns is seen as owned by N inside the Pod, and what
    the Pod writes is stored with its IDs inside. A detached copy of the mount is mapped, then attached."""
    tree = libc.syscall(SYS_OPEN_TREE, -100, source.encode(), OPEN_TREE_CLONE | os.O_CLOEXEC |
                        (AT_RECURSIVE if recursive else 0))
    if tree < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"open_tree {source}: {os.strerror(err)}")
    try:
        attr = MountAttr(MOUNT_ATTR_IDMAP | (flags & (MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)), 0, 0, userns)
        if libc.syscall(SYS_MOUNT_SETATTR, tree, b"", AT_EMPTY_PATH | (AT_RECURSIVE if recursive else 0),
                        ctypes.byref(attr), ctypes.sizeof(attr)) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"idmapped mount of {source}: {os.strerror(err)}")
        if libc.syscall(SYS_MOVE_MOUNT, tree, b"", -100, target.encode(), MOVE_MOUNT_F_EMPTY_PATH) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"move_mount {source} on {target}: {os.strerror(err)}")
    finally:
        os.close(tree)


def under(path, directories):
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in directories)


class Root:
    """The container's root directory under construction."""

    def __init__(self, path, scratch, keep=(), hide=(), privileged=False, layers=(), userns=None, owner=0):
        self.path = path
        self.userns = userns  # the Pod's user namespace (an fd): what comes from the host is mapped through it
        self.owner = owner  # the host's ID of root in the Pod: the owner of what the container may change
        self.layers = layers  # an image's layers, topmost first: its root instead of the host's directories
        self.keep = keep  # host directories that stay visible, read-only (mini-kube and its interpreter)
        self.hide = hide  # host directories never visible (the node's root dir...), even under a kept one
        self.privileged = privileged
        self.scratch = scratch  # where overlay layers go
        self.overlays = 0
        self.overlaid = set()  # directories already under a writable overlay of ours
        self.read_only = []  # directories (under path) where nothing can be made: overlaid when needed

    def at(self, path):
        return os.path.join(self.path, path.lstrip("/"))

    def build(self):
        if self.layers:
            self.stack_layers()
            for entry in IMAGE_MOUNTPOINTS:  # real directories of the root's own, whatever the image has there
                path = self.at(entry)
                if os.path.islink(path) or (os.path.lexists(path) and not os.path.isdir(path)):
                    os.unlink(path)
                if not os.path.lexists(path):
                    os.mkdir(path, 0o755)
            self.kernel_filesystems()
            return
        bind(self.path, self.path, LOCKED)  # a mount of its own, for pivot_root
        for entry in SYSTEM:
            src, dst = "/" + entry, self.at(entry)
            if os.path.islink(src):
                os.symlink(os.readlink(src), dst)
                self.own(dst)
            elif os.path.isdir(src):
                os.mkdir(dst)
                self.host_bind(src, dst, LOCKED | MS_RDONLY)
                self.read_only.append(dst)
        for entry, mode in EMPTY.items():
            path = self.at(entry)
            if not os.path.lexists(path):
                os.mkdir(path)
                os.chmod(path, mode)
                self.own(path)
        self.own(self.path)
        for kept in self.keep:
            path = self.inside(kept)
            if not os.path.isdir(kept) or under(path, self.read_only):
                continue
            self.made(path, lambda p: os.makedirs(p, exist_ok=True))
            self.traversable(path)
            self.host_bind(kept, path, LOCKED | MS_RDONLY, recursive=True)
            self.read_only.append(path)
        for hidden in self.hide:
            path = self.inside(hidden)
            if os.path.isdir(path) and under(path, self.read_only):
                mount("tmpfs", path, "tmpfs", LOCKED | MS_NOEXEC | MS_RDONLY, "size=4k,mode=0555")
        self.kernel_filesystems()
        self.blank(HOST_SECRETS)
        try:
            keys = [f"/etc/ssh/{n}" for n in os.listdir(self.at("/etc/ssh")) if n.startswith("ssh_host_")]
        except OSError:
            keys = []
        self.blank(keys)

    def own(self, path):
        """`path` belongs to root in the Pod (in a user namespace; else it is the host's root's already)."""
        if self.owner:
            os.lchown(path, self.owner, self.owner)

    def host_bind(self, source, target, flags, recursive=False):
        """The host's directories the container sees read-only: in a user namespace, through its ID mapping (the
        host's root owns them inside too); where the filesystem cannot be mapped, as they are (their owners
        then show as the overflow ID, nobody)."""
        if self.userns is not None:
            try:
                return idmapped_bind(source, target, flags, self.userns, recursive)
            except OSError:
                pass
        bind(source, target, flags, recursive)

    def stack_layers(self):
        """The image's layers as the root: overlayfs over them (read-only) with an upper layer of the
        container's own, mounted from their common parent so that many layers fit in the mount's options; where
        overlayfs cannot be mounted, a copy of them."""
        upper, work = os.path.join(self.scratch, "root", "upper"), os.path.join(self.scratch, "root", "work")
        os.makedirs(upper, 0o755)
        os.makedirs(work, 0o700)
        os.chmod(upper, 0o755)
        self.own(upper)
        layers = self.layers
        if self.userns is not None:  # each layer through the Pod's ID mapping, and the overlay over them
            mapped = os.path.join(self.scratch, "root", "layers")
            try:
                layers = []
                for index, layer in enumerate(self.layers):
                    layers.append(os.path.join(mapped, str(index)))
                    os.makedirs(layers[-1])
                    idmapped_bind(layer, layers[-1], LOCKED | MS_RDONLY, self.userns)
            except OSError:
                layers = self.layers
        parent = os.path.commonpath(layers) if len(layers) > 1 else os.path.dirname(layers[0])
        lower = ":".join(os.path.relpath(layer, parent) for layer in layers)
        here = os.getcwd()
        try:
            os.chdir(parent)
            mount("overlay", self.path, "overlay", LOCKED, f"lowerdir={lower},upperdir={upper},workdir={work}")
        except OSError:  # no overlayfs here, or a path its options cannot hold: the container's output says nothing
            copy_layers(self.layers, self.path, self.owner)
            bind(self.path, self.path, LOCKED)
        finally:
            os.chdir(here)

    def traversable(self, path):
        """Every directory of the container's own on the way to `path` may be passed through by any user (the
        image's /root is 0700, the interpreter may be kept under it): o+x, nothing listed, nothing of the host's."""
        parent = os.path.dirname(path)
        while parent.startswith(self.path.rstrip("/") + "/") and not under(parent, self.read_only):
            mode = stat.S_IMODE(os.stat(parent).st_mode)
            if mode & 0o111 != 0o111:
                os.chmod(parent, mode | 0o111)
            parent = os.path.dirname(parent)

    def blank(self, paths):
        """Files read as empty, directories as empty (read-only either way)."""
        for path in paths:
            target = self.at(path)
            if os.path.islink(target):
                continue
            if os.path.isdir(target):
                mount("tmpfs", target, "tmpfs", LOCKED | MS_NOEXEC | MS_RDONLY, "size=0,mode=0555")
            elif os.path.exists(target):
                bind("/dev/null", target, MS_NOSUID | MS_NOEXEC | MS_RDONLY)  # a device: not nodev

    def kernel_filesystems(self):
        """/proc of the Pod's PID namespace, /sys read-only, a private /dev (privileged: the host's devices)."""
        mount("proc", self.at("proc"), "proc", LOCKED | MS_NOEXEC)
        mount("sysfs", self.at("sys"), "sysfs", LOCKED | MS_NOEXEC | (0 if self.privileged else MS_RDONLY))
        self.read_only += [self.at("proc"), self.at("sys")]
        dev = self.at("dev")
        if self.privileged:
            bind("/dev", dev, MS_NOSUID, recursive=True)
            return
        mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, f"mode=755,size=65536k{self.owned_by()}")
        for name, (major, minor) in DEVICES.items():
            os.mknod(os.path.join(dev, name), 0o666 | stat.S_IFCHR, os.makedev(major, minor))
            os.chmod(os.path.join(dev, name), 0o666)
        for name, target in DEVICE_LINKS.items():
            os.symlink(target, os.path.join(dev, name))
        for name in ("pts", "shm"):
            os.mkdir(os.path.join(dev, name))
        mount("devpts", os.path.join(dev, "pts"), "devpts", MS_NOSUID | MS_NOEXEC,
              "newinstance,ptmxmode=0666,mode=0620")
        mount("shm", os.path.join(dev, "shm"), "tmpfs", LOCKED | MS_NOEXEC, f"mode=1777,size=65536k{self.owned_by()}")

    def owned_by(self):
        """A tmpfs's options making root in the Pod its owner (in a user namespace)."""
        return f",uid={self.owner},gid={self.owner}" if self.owner else ""

    def mask(self):
        """The runtime's masked and read-only paths of /proc and /sys (not for privileged containers)."""
        if self.privileged:
            return
        self.blank(MASKED)
        for path in READ_ONLY:
            target = self.at(path)
            if os.path.exists(target):
                bind(target, target, LOCKED | MS_NOEXEC | MS_RDONLY)

    def finish(self, read_only_root):
        """/dev can no longer change (no device node can be made there); the root is read-only when asked."""
        if not self.privileged:
            mount(None, self.at("dev"), None, MS_REMOUNT | MS_NOSUID | MS_NOEXEC | MS_RDONLY,
                  f"mode=755{self.owned_by()}")
        if read_only_root:
            mount(None, self.path, None, MS_BIND | MS_REMOUNT | LOCKED | MS_RDONLY)

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
        """Make `target` exist (a directory or an empty file), through an overlay where the nearest existing
        directory is read-only (the host's, which never changes)."""
        path = self.inside(target)
        if self.layers and not under(os.path.realpath(path), [os.path.realpath(self.path)]):
            raise OSError(40, f"{target}: the image's links lead out of its root")  # ELOOP, as runc refuses it
        if os.path.lexists(path):
            return path
        ancestor = os.path.dirname(path)
        while not os.path.isdir(ancestor):
            ancestor = os.path.dirname(ancestor)
        if under(ancestor, self.read_only) and not under(ancestor, self.overlaid):
            self.overlaid.add(ancestor)
            self.overlays += 1
            upper = os.path.join(self.scratch, f"o{self.overlays}", "upper")
            work = os.path.join(self.scratch, f"o{self.overlays}", "work")
            os.makedirs(upper)
            os.makedirs(work)
            self.own(upper)
            mount("overlay", ancestor, "overlay", LOCKED, f"lowerdir={ancestor},upperdir={upper},workdir={work}")
        if directory:
            self.made(path, lambda p: os.makedirs(p, exist_ok=True))
        else:
            self.made(path, lambda p: (os.makedirs(os.path.dirname(p), exist_ok=True), open(p, "w").close()))
        return path

    def made(self, path, make):
        """`make(path)`, which makes it and the directories above it that are missing: all belong to root in
        the Pod."""
        missing = []
        while not os.path.lexists(path):
            missing.append(path)
            path = os.path.dirname(path)
        make(missing[0] if missing else path)
        for item in missing:
            self.own(item)

    def bind(self, source, target, read_only):
        """A volume (or a file of the Pod's) at `target`: nosuid, nodev, read-only when asked; in a user namespace
        through its ID mapping (a runtime fails the container where the filesystem cannot be mapped)."""
        path = self.ensure(target, os.path.isdir(source))
        flags = LOCKED | (MS_RDONLY if read_only else 0)
        if self.userns is not None:
            idmapped_bind(source, path, flags, self.userns, recursive=True)
        else:
            bind(source, path, flags, recursive=True)

    def setuid_programs(self, programs):
        """The image's set-user-ID root programs ([path, host program to copy]), on a tmpfs of their own: the
        one place in the container where the set-user-ID bit takes effect (nodev, read-only once written)."""
        directories = {}
        for target, source in programs:
            directories.setdefault(os.path.dirname(target), []).append((os.path.basename(target), source))
        for directory, files in directories.items():
            path = self.ensure(directory, True)
            mount("tmpfs", path, "tmpfs", MS_NODEV, "mode=0755,size=64m")
            import shutil

            for name, source in files:
                shutil.copyfile(source, os.path.join(path, name))
                os.chown(os.path.join(path, name), self.owner, self.owner)
                os.chmod(os.path.join(path, name), 0o4755)
            mount(None, path, None, MS_REMOUNT | MS_NODEV | MS_RDONLY, "mode=0755")

    def enter(self, workdir):
        """pivot_root into the root and let go of the host's (unmounted: nothing of it stays reachable)."""
        os.chdir(self.path)
        if libc.syscall(SYS_PIVOT_ROOT, b".", b".") != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"pivot_root {self.path}: {os.strerror(err)}")
        if libc.umount2(b".", MNT_DETACH) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"unmount the host's root: {os.strerror(err)}")
        os.chdir(workdir)


class SockFprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))


def load_seccomp(program):
    """Install a seccomp filter (a BPF program, 8-byte instructions) on this process and what it execs."""
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = SockFprog(len(program) // 8, ctypes.addressof(buffer))
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"seccomp: {os.strerror(err)}")


def _remove(path):
    import shutil

    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)


def copy_layers(layers, root, owner=0):
    """The union of `layers` (topmost first) copied into `root`, lowest first, as overlayfs shows it: a 0/0
    character device hides what lower layers have at its path, an opaque directory all they have in it.
    Nothing is written through a link: a path a lower layer made a link is replaced by the upper's directory.
    Owners are shifted by `owner` (the host's ID of root in the Pod's user namespace)."""
    import shutil

    for layer in reversed(layers):
        for directory, dirs, files in os.walk(layer):
            target = os.path.normpath(os.path.join(root, os.path.relpath(directory, layer)))
            for name in dirs + files:
                source, destination = os.path.join(directory, name), os.path.join(target, name)
                info = os.lstat(source)
                if stat.S_ISCHR(info.st_mode) and info.st_rdev == 0:
                    _remove(destination)
                    continue
                if stat.S_ISDIR(info.st_mode):
                    opaque = _xattr(source, "trusted.overlay.opaque") == b"y"
                    if opaque or (os.path.lexists(destination) and (os.path.islink(destination) or
                                                                    not os.path.isdir(destination))):
                        _remove(destination)
                    if not os.path.lexists(destination):
                        os.mkdir(destination)
                else:
                    _remove(destination)
                    if stat.S_ISLNK(info.st_mode):
                        os.symlink(os.readlink(source), destination)
                    elif stat.S_ISREG(info.st_mode):
                        shutil.copyfile(source, destination, follow_symlinks=False)
                    elif stat.S_ISFIFO(info.st_mode):
                        os.mkfifo(destination)
                    else:
                        continue
                os.lchown(destination, info.st_uid + owner, info.st_gid + owner)
                if not stat.S_ISLNK(info.st_mode):
                    os.chmod(destination, stat.S_IMODE(info.st_mode))


def _xattr(path, name):
    try:
        return os.getxattr(path, name, follow_symlinks=False)
    except OSError:
        return b""


def said(call, what, *args):
    """`call(*args)`, its error saying what was tried (as runc's messages do)."""
    try:
        call(*args)
    except OSError as exc:
        raise OSError(exc.errno, f"{what}: {exc.strerror}") from None


def drop_privileges(security, last_cap):
    """The container's identity: capability bounding set (a root process gets exactly it at exec, any other
    user none), supplementary groups, gid, uid, no_new_privs when asked, and the seccomp filter: as runc, last
    with no_new_privs, else while still root (loading one needs CAP_SYS_ADMIN or no_new_privs)."""
    if not security:
        return
    if not security.get("privileged"):
        wanted = set(security.get("bounding") or ())
        for cap in range(last_cap + 1):
            if cap not in wanted and libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
                err = ctypes.get_errno()
                raise OSError(err, f"drop capability {cap}: {os.strerror(err)}")
    program = bytes.fromhex(security.get("seccomp") or "")
    gid, uid = security.get("gid", 0), security.get("uid", 0)
    said(os.setgroups, "setgroups", security.get("groups") or [])
    said(os.setresgid, f"setresgid {gid}", gid, gid, gid)
    if program and not security.get("noNewPrivs"):
        load_seccomp(program)
    said(os.setresuid, f"setresuid {uid}", uid, uid, uid)  # an ID the user namespace does not map: EINVAL
    if security.get("noNewPrivs") and libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"no_new_privs: {os.strerror(err)}")
    if program and security.get("noNewPrivs"):
        load_seccomp(program)


CLONE_NEWPID, CLONE_NEWUSER = 0x20000000, 0x10000000
DEV_NULL = os.makedev(1, 3)


def own_stdio(uid):
    """The container's user (`uid`, the host's ID) owns its stdin, stdout and stderr, pipes the kubelet made, so
    that it may open them again (`echo > /dev/stdout`), as runc's fixStdioPermissions does; /dev/null and what it
    owns already are left alone."""
    for fd in (0, 1, 2):
        try:
            info = os.fstat(fd)
            if info.st_uid != uid and not (stat.S_ISCHR(info.st_mode) and info.st_rdev == DEV_NULL):
                os.fchown(fd, uid, -1)
        except OSError:
            continue


def host_id(inside, lines):
    """The host's ID of `inside` under an ID map's lines (/proc/<pid>/uid_map read from the host), else None."""
    for line in lines.splitlines():
        first, host, length = (int(n) for n in line.split())
        if first <= inside < first + length:
            return host + inside - first
    return None


def join_user_namespace(fd):
    """Become a process of the Pod's user namespace (with every capability in it, until drop_privileges sets
    the container's identity: root in the Pod is then an unprivileged ID on the host)."""
    if libc.setns(fd, CLONE_NEWUSER) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"setns user: {os.strerror(err)}")
    os.close(fd)
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


def supervise(child, cgroups=(), joined=None):
    """Stand between the kubelet and the container: pass signals on (SIGTERM reaches the command, as a
    runtime's stop does), move it into its `cgroups` (open_cgroups's) when given the pipe `joined` to say so
    on, then leave with the command's own exit code or signal."""
    for signum in FORWARDED:
        signal.signal(signum, lambda sig, _frame: os.kill(child, sig))
    if joined is not None:
        join_for(child, cgroups, joined)
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


JOINED = b"joined"  # what the supervisor tells the command's process once it is in the container's cgroups


def open_cgroups(files):
    """The container's cgroups' `cgroup.procs` files, opened for the supervisor to write the command's process
    to: opened before the fork, as the child's pivot_root, in the mount namespace they share, takes the host's
    paths away from both. [(path, descriptor or the error opening it)]."""
    opened = []
    for path in files:
        try:
            opened.append((path, os.open(path, os.O_WRONLY | os.O_CLOEXEC)))
        except OSError as exc:
            opened.append((path, exc))
    return opened


def join_for(child, opened, joined):
    """The supervisor's part of the command's cgroups (`opened` by open_cgroups): move `child` into them and say
    so on the pipe `joined` (why not, when it could not). A move into a cgroup v1 hierarchy waits for an RCU
    grace period (the kernel's threadgroup lock: about 10 ms on a busy 2-core machine), which the child spends
    building the container."""
    problem = ""
    for path, fd in opened:
        try:
            if isinstance(fd, OSError):
                raise fd
            if not problem:
                os.write(fd, str(child).encode())
        except OSError as exc:
            problem = problem or f"cgroup {os.path.dirname(path)}: {exc.strerror}"
        finally:
            if not isinstance(fd, OSError):
                os.close(fd)
    try:  # noqa: SIM105 - not contextlib: each exec'd process imports as little as it can
        os.write(joined, problem.encode() if problem else JOINED)
    except OSError:
        pass  # the child is gone: nothing to tell
    os.close(joined)


def await_cgroups(joined, started):
    """Until the supervisor has moved this process into the container's cgroups: nothing of the command runs
    outside its limits. Anything but its word that it has (it died first, it could not) fails the start."""
    said = b""
    while True:
        chunk = os.read(joined, 4096)
        if not chunk:
            break
        said += chunk
    os.close(joined)
    if said != JOINED:
        fail(started, f"error during container init: {said.decode(errors='replace').strip() or 'cgroups not joined'}\n")


def main(spec_path=None):
    """Build the container from the spec at `spec_path` (else the first argument) and exec its command."""
    with open(spec_path or sys.argv[1], "rb") as handle:
        spec = marshal.load(handle)
    started = spec.get("started_fd")  # closed by the command's exec: the kubelet then knows it has started
    if started is not None:
        os.set_inheritable(started, False)
    cgroups = spec.get("cgroups") or ()
    joined = tell = None  # with a PID namespace: where the supervisor says the command's process is in its cgroups
    if spec.get("pidns"):
        enter_pid_namespace(spec["pidns"])
        opened = open_cgroups(cgroups)
        if cgroups:
            joined, tell = os.pipe()
        child = os.fork()
        if child:
            if started is not None:
                os.close(started)
            if joined is not None:
                os.close(joined)
            supervise(child, opened, tell)
        for _, fd in opened:
            if not isinstance(fd, OSError):
                os.close(fd)
        if tell is not None:
            os.close(tell)
        for signum in FORWARDED:
            signal.signal(signum, signal.SIG_DFL)
    else:
        join_cgroups(cgroups)
    argv, env = spec["argv"], spec["env"]
    try:
        prepare(spec)
    except OSError as exc:  # as a runtime's container init failing: the start's failure, saying why
        fail(started, f"error during container init: {exc.strerror or exc}\n")
    if joined is not None:
        await_cgroups(joined, started)
    try:
        os.execvpe(argv[0], argv, env)
    except OSError as exc:
        if not isinstance(exc, FileNotFoundError):
            what = exc.strerror
        elif "/" in argv[0]:
            what = f"stat {argv[0]}: no such file or directory"
        else:
            what = "executable file not found in $PATH"
        fail(started, f'exec: "{argv[0]}": {what}\n')


def prepare(spec):
    """Everything between the container's cgroups and its command: its root, mounts and identity."""
    security = spec.get("security") or {}
    with open("/proc/sys/kernel/cap_last_cap") as handle:
        last_cap = int(handle.read())
    userns = spec.get("userns") or {}
    userns_fd = os.open(userns["path"], os.O_RDONLY | os.O_CLOEXEC) if userns else None
    root = Root(spec["root"], spec["scratch"], spec.get("keep") or (), spec.get("hide") or (),
                bool(security.get("privileged")), tuple(spec.get("layers") or ()), userns_fd,
                userns.get("owner", 0))
    root.build()
    for m in spec.get("mounts") or ():
        root.bind(m["source"], m["target"], m.get("readOnly", False))
    for target, source in (spec.get("files") or {}).items():
        root.bind(source, target, False)
    root.setuid_programs(spec.get("setuid") or ())
    if not security.get("unmaskedProc"):  # procMount: Unmasked: none of the runtime's masked or read-only paths
        root.mask()
    workdir = spec.get("workdir") or "/"
    root.ensure(workdir, True)
    root.finish(bool(security.get("readOnlyRoot")))
    root.enter(workdir)
    uid = security.get("uid", 0)
    if not userns or uid < 65536:
        own_stdio(uid + userns.get("owner", 0))
    if userns_fd is not None:
        join_user_namespace(userns_fd)
    drop_privileges(security, last_cap)


def fail(started, message):
    """The container never ran: the kubelet reads why from the start pipe (else it is on stderr); exit 128."""
    if started is not None:
        os.write(started, message.encode()[:4096])
    else:
        sys.stderr.write(message)
    sys.exit(128)


ENTERED = (("ipc", 0x08000000), ("uts", 0x04000000), ("net", 0x40000000), ("pid", CLONE_NEWPID),
           ("mnt", 0x00020000))  # the namespaces an exec'd process joins, in nsenter's order


def enter(pid, security, environ, argv, cgroups=(), tty=False):
    """`kubectl exec` (and exec probes): run `argv` in the container whose process is `pid` (its namespaces,
    root and working directory, its cgroups), with the container's identity, bounding set, no_new_privs and
    seccomp filter, as a runtime's exec does. This process joins the Pod's namespaces but not its mount namespace,
    and stays on the host's files as the parent passing signals on; only the command's process enters the
    container's root. With `tty` it first leads a session of its own whose controlling terminal is its stdin."""
    join_cgroups(cgroups)
    if tty:
        import fcntl
        import termios

        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    with open("/proc/sys/kernel/cap_last_cap") as handle:
        last_cap = int(handle.read())
    namespaces = {name: (os.open(f"/proc/{pid}/ns/{name}", os.O_RDONLY), flag) for name, flag in ENTERED}
    with open(f"/proc/{pid}/uid_map", encoding="ascii") as handle:  # the host's, before the container's /proc
        uid = host_id(security.get("uid", 0), handle.read())
    userns = None
    if os.readlink(f"/proc/{pid}/ns/user") != os.readlink("/proc/self/ns/user"):
        userns = os.open(f"/proc/{pid}/ns/user", os.O_RDONLY)
    root = os.open(f"/proc/{pid}/root", os.O_RDONLY | os.O_DIRECTORY)
    cwd = os.open(f"/proc/{pid}/cwd", os.O_RDONLY | os.O_DIRECTORY)

    def join(name):
        fd, flag = namespaces[name]
        if libc.setns(fd, flag) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"setns {name}: {os.strerror(err)}")

    for name in ("ipc", "uts", "net", "pid"):
        join(name)
    child = os.fork()  # the process that runs argv is in the Pod's PID namespace
    if child:
        supervise(child)
    for signum in FORWARDED:
        signal.signal(signum, signal.SIG_DFL)
    join("mnt")
    os.fchdir(root)
    os.chroot(".")
    os.fchdir(cwd)
    for fd in (root, cwd, *(fd for fd, _ in namespaces.values())):
        os.close(fd)
    if uid is not None:
        own_stdio(uid)
    if userns is not None:
        join_user_namespace(userns)
    drop_privileges(security, last_cap)
    try:
        os.execvpe(argv[0], argv, environ)
    except OSError as exc:
        sys.stderr.write(f'exec: "{argv[0]}": {exc.strerror}\n')
        os._exit(126 if not isinstance(exc, FileNotFoundError) else 127)


if __name__ == "__main__":
    main()
