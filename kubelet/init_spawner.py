"""The process that starts containers' inits (kubelet/containerinit.py) by forking itself, as a zygote does: its
interpreter and the init's code are loaded once, so a container start costs a fork of this small process instead
of an interpreter's start-up and imports (about 25 ms a container on a quiet machine).

Run by kubelet/runtime/spawner.py as `python -I -S init_spawner.py FD INIT`: FD is its end of a SOCK_SEQPACKET
socket pair, INIT the init's file (source or compiled). A request is a marshal'd ("init", spec path, namespace
paths) with four file descriptors (the init's stdin, stdout, stderr and the pipe its command's exec closes), or
("enter", None, None) with four (stdin, stdout, stderr, and a memfd holding the marshal'd exec spec and argv: a
process exec'd into a running container, `kubectl exec` and exec probes, the init's `enter` with the spec's pid,
identity, environment, cgroups and tty); the answer is ("spawned", pid), and when that process ends, ("exit",
pid, wait status). Each child dies with this process (which dies with the kubelet's thread that started it) and
leads a session of its own. An init's child joins the Pod's namespaces (ipc, uts, net, then mount, as nsenter
does), makes its own private mount namespace (as `unshare --mount --propagation private`) and runs the init's
main; an exec's runs `enter`, which joins the container's. Standard library only, like the init.
"""

import _signal as signal
import ctypes
import fcntl
import marshal
import os
import select
import socket
import sys
from importlib.machinery import SourceFileLoader, SourcelessFileLoader

CLONE_NEWNS = 0x00020000
NAMESPACES = (("ipc", 0x08000000), ("uts", 0x04000000), ("net", 0x40000000), ("mnt", CLONE_NEWNS))
MS_REC, MS_PRIVATE = 16384, 1 << 18
PR_SET_PDEATHSIG = 1
FIRST_FREE = 10  # received descriptors are moved above this before 0-3 are set
START_PIPE = 3  # the pipe the command's exec closes, in the child


def load_init(path):
    loader = (SourcelessFileLoader if path.endswith(".pyc") else SourceFileLoader)("containerinit", path)
    module = type(sys)("containerinit")
    module.__file__ = path
    loader.exec_module(module)
    return module


def adopt(libc, spawner, fds):
    """The forked child's first steps: the descriptors it was sent as 0, 1, 2 (and 3) and no others, no handlers of
    the spawner's, death with the spawner."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    moved = [fcntl.fcntl(fd, fcntl.F_DUPFD, FIRST_FREE) for fd in fds]
    for fd in set(fds):
        os.close(fd)
    for target, fd in enumerate(moved):
        os.dup2(fd, target)
    os.closerange(len(moved), 1 << 16)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0 or os.getppid() != spawner:
        os._exit(128)  # the spawner is gone already: nothing may outlive it


def child(init, libc, spawner, spec_path, namespaces, fds):
    """In the forked child: its descriptors (0-2, and 3 for the start pipe), namespaces and session, then the
    init's main. Never returns."""
    try:
        adopt(libc, spawner, fds)
        os.setsid()
        try:
            opened = [(os.open(namespaces[name], os.O_RDONLY | os.O_CLOEXEC), flag)
                      for name, flag in NAMESPACES if name in namespaces]
            for fd, flag in opened:
                if libc.setns(fd, flag) != 0:
                    raise OSError(ctypes.get_errno(), f"setns: {os.strerror(ctypes.get_errno())}")
                os.close(fd)
            if libc.unshare(CLONE_NEWNS) != 0:
                raise OSError(ctypes.get_errno(), f"unshare: {os.strerror(ctypes.get_errno())}")
            init.mount(None, "/", None, MS_REC | MS_PRIVATE)
        except OSError as exc:
            init.fail(START_PIPE, f"error during container init: {exc.strerror or exc}\n")
        init.main(spec_path)
    except SystemExit as exc:  # the init's own exits (its command could not start; its supervisor's end)
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 - whatever it is, this process must not go back to serving
        code = 128
    else:
        code = 0
    sys.stderr.flush()
    os._exit(code)


def entered(init, libc, spawner, fds):
    """In the forked child: its stdin, stdout and stderr, and what to run (the exec spec and argv, read from the
    fourth descriptor), then the init's `enter` (which, with a tty, makes the terminal its controlling one in a
    session of its own; without, it leads one here). Never returns."""
    try:
        adopt(libc, spawner, fds)
        with os.fdopen(3, "rb") as request:
            spec, argv = marshal.load(request)
        if not spec.get("tty"):
            os.setsid()
        init.enter(spec["pid"], spec["security"], spec["env"], argv, spec.get("cgroups", ()), spec.get("tty", False))
    except SystemExit as exc:  # its supervisor's end: the command's exit code
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException as exc:  # noqa: BLE001 - whatever it is, this process must not go back to serving
        sys.stderr.write(f"exec: {exc}\n")
        code = 126
    else:
        code = 0
    sys.stderr.flush()
    os._exit(code)


def answer(sock, message):
    try:
        sock.send(marshal.dumps(message))
    except OSError:  # the kubelet is gone: so is every container (each dies with this process)
        os._exit(0)


def serve(sock, init):
    libc = ctypes.CDLL(None, use_errno=True)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    poller = select.poll()  # not select(): the socket's number is the kubelet's, which may be past 1024
    poller.register(sock, select.POLLIN)
    poller.register(wake_r, select.POLLIN)
    while True:
        ready = {fd for fd, _ in poller.poll()}
        if wake_r in ready:
            try:
                while os.read(wake_r, 512):
                    pass
            except BlockingIOError:
                pass
            while True:
                try:
                    pid, status = os.waitpid(-1, os.WNOHANG)
                except ChildProcessError:
                    break
                if pid == 0:
                    break
                answer(sock, ("exit", pid, status))
        if sock.fileno() in ready:
            message, fds, _, _ = socket.recv_fds(sock, 1 << 16, 4)
            if not message:  # the kubelet closed its end: its containers go with this process
                return
            kind, first, second = marshal.loads(message)
            spawner = os.getpid()
            pid = os.fork()
            if pid == 0:
                sock.close()
                os.close(wake_r)
                os.close(wake_w)
                if kind == "enter":
                    entered(init, libc, spawner, fds)
                child(init, libc, spawner, first, second, fds)
            for fd in fds:
                os.close(fd)
            answer(sock, ("spawned", pid))


if __name__ == "__main__":
    serve(socket.socket(fileno=int(sys.argv[1])), load_init(sys.argv[2]))
