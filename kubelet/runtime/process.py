"""The process runtime: each Pod gets its own network (and UTS) namespace, held by a pause process, joined to the
cluster bridge by a veth pair with the Pod's IP; each container runs as a real process in that namespace and in
a mount namespace of its own where its volumes appear (kubelet/containerinit.py). stdout/stderr go to CRI-format
logs; signals go to the container's whole process group. Every process started here dies with the kubelet
(PR_SET_PDEATHSIG, set by `setpriv` first in its command line: no process here is started by a fork of the kubelet's
own, which would cost the kubelet's thread tens of milliseconds in a large server), and namespaces and mounts
vanish with their last process. Where cgroups can be written, each Pod and container has its own (kubelet/cgroups/)
with its limits; the command and processes exec'd into the container run in the container's, an OOM kill there is
reported as OOMKilled, and the cgroups go with them."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import functools
import marshal
import os
import py_compile
import shlex
import shutil
import signal
import struct
import sys
import uuid
from pathlib import Path
from typing import Any

from mini_kube.machinery.sysctls import proc_path
from mini_kube.network.cluster import BRIDGE
from mini_kube.network.namespaces import Holder

from ..cgroups.tree import PodCgroups
from ..hostports import HostPorts
from ..init_spawner import START_PIPE  # where the init finds the pipe its command's exec closes
from ..logs import LogWriter
from ..seccomp import compile_filter
from ..security import CAPABILITIES
from ..sysctls import pod_sysctls
from ..userns import UserNamespaces
from .base import Container, ContainerSpec, Runtime, Sandbox
from .exec_check import ExecError, exec_problem
from .node_namespaces import NodeNamespaces
from .spawner import InitSpawner, SpawnedInit, SpawnedProcess

INIT = Path(__file__).resolve().parent.parent / "containerinit.py"
# what a container sees of the host besides its system directories (read-only): the interpreter and mini-kube
# itself (the stand-in images, and Pods that run mini-kube's own programs, run from them)
KEEP = sorted({os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix), str(INIT.parent.parent)})
TIOCGPTPEER = 0x5441  # the slave of a pty master, opened without a path lookup (Linux 4.13)
TIOCSPTLCK = 0x40045431  # unlock the pty slave
MEMORY_VOLUMES = "memory-volumes"  # under a Pod's directory: its emptyDirs of medium Memory, each a tmpfs
VOLUME_TMPFS = "memory"  # under a Pod's directory: where its token, Secret and ConfigMap volumes live (a tmpfs)


class ProcessContainer(Container):
    """A container that is a real process (its supervisor's group) with its log."""

    pid: int  # always known: the process is started before the container is
    log: LogWriter

    def __init__(self, proc: SpawnedInit, log: LogWriter, pumps: list[asyncio.Task[None]],
                 container_id: str, cgroups: PodCgroups | None = None, cgroup: str = "",
                 started: asyncio.Future[bytes] | None = None, security: dict[str, Any] | None = None,
                 layers: tuple[Path, ...] = ()) -> None:
        self.id = f"mini-kube://{container_id}"
        self.layers = layers  # its writable layer (root and overlays' upper layers): removed once it has exited
        self.security = security or {}  # the identity and capabilities processes exec'd into it get too
        self._started = started  # done once the command is exec'd (or could not be: then why)
        self.cgroups = cgroups
        self.cgroup = cgroup  # its cgroup path ("" without cgroups)
        self.oom_killed = False
        self.proc = proc
        self.pid = proc.pid
        self.log = log
        self._pumps = pumps
        self._code: int | None = None
        self.exited = asyncio.Event()
        self._waiter = asyncio.ensure_future(self._reap())

    @property
    def main_pid(self) -> int:
        """The container's own process (the child its supervisor forked into the Pod's PID namespace)."""
        try:
            with open(f"/proc/{self.pid}/task/{self.pid}/children", encoding="ascii") as handle:
                children = handle.read().split()
            return int(children[0]) if children else self.pid
        except OSError:
            return self.pid

    async def started(self) -> str:
        """Until the command runs: before, the container's root is not built, and a process "in" it would see
        the host's files. Returns why the command could not be exec'd ("" once it runs)."""
        if self._started is not None:
            return (await asyncio.shield(self._started)).decode(errors="replace").strip()
        return ""

    async def _reap(self) -> None:
        code = await self.proc.wait()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)  # what the main process left behind
        if self.cgroups is not None and self.cgroup:
            self.oom_killed = self.cgroups.oom_killed(self.cgroup)  # counted by the kernel before the kill
            await self.cgroups.remove(self.cgroup)
        await asyncio.gather(*self._pumps, return_exceptions=True)
        self.log.close()
        for layer in self.layers:  # as a runtime's garbage collection of dead containers: the disk comes back
            await asyncio.get_running_loop().run_in_executor(None, shutil.rmtree, layer, True)
        self._code = 128 - code if code < 0 else code  # killed by signal N: 128+N, as runtimes report
        self.exited.set()

    async def wait(self) -> int:
        await self.exited.wait()
        assert self._code is not None
        return self._code

    def signal(self, signum: int) -> None:
        """SIGKILL: every process of the container; other signals: the command (its supervisor passes them on)."""
        if self.exited.is_set():
            return
        try:
            if signum == signal.SIGKILL:
                os.killpg(self.pid, signum)
            else:
                os.kill(self.pid, signum)
        except ProcessLookupError:
            pass
        except PermissionError:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signum)

    def write_stdin(self, data: bytes) -> None:
        if self.proc.stdin is not None and not self.proc.stdin.is_closing():
            self.proc.stdin.write(data)

    def close_stdin(self) -> None:
        if self.proc.stdin is not None and not self.proc.stdin.is_closing():
            self.proc.stdin.close()


class ProcessRuntime(Runtime):
    """Pods as processes in namespaces on the cluster network `network` (a ClusterNetwork)."""

    name = "process"
    runs_processes = True

    def __init__(self, network: Any, cgroups: PodCgroups | None = None, *, unenforced: str = "",
                 node_name: str = "", node_ip: str = "", node_address: str = "", hide: tuple[str, ...] = ()) -> None:
        self.network = network
        self.cgroups = cgroups
        self.unenforced = unenforced  # without cgroups: why resources.limits are not enforced
        self.hide = hide  # host directories no container may see (the node's root dir, the data dir)
        # what hostNetwork/hostPID/hostIPC Pods share
        self.node = NodeNamespaces(network, node_name, node_ip, node_address)
        self.host_ports = HostPorts(self.node, network.netns, node_address)  # the relays of Pods' hostPorts
        self.user_namespaces = UserNamespaces()  # the ID blocks of Pods with `hostUsers: false`
        self.spawner = InitSpawner(init_program)  # forks each container's init

    async def create_sandbox(self, pod: dict[str, Any], ip: str, directory: str) -> Sandbox:
        """The Pod's namespaces: network (a veth on the cluster bridge with the Pod's IP), UTS, IPC, PID and a
        mount namespace holding a tmpfs for its secret volumes, or the node's network, UTS, PID and IPC
        namespaces where the spec asks (hostNetwork, hostPID, hostIPC). With `hostUsers: false`, a user namespace
        of its own, its 65536 IDs a block no other Pod on the machine has (kubelet/userns.py), owns the network,
        UTS and IPC namespaces (its root may bind port 80 there); it is held by a process of its own outside the
        Pod's PID namespace. The PID and mount namespaces stay the host root's, as their holder does: nothing in
        the Pod may signal or trace that process (whose root is the host's), and only the runtime mounts."""
        spec = pod.get("spec") or {}
        uid = pod["metadata"]["uid"]
        loop = asyncio.get_running_loop()
        host_network, host_pid, host_ipc = (bool(spec.get(k)) for k in ("hostNetwork", "hostPID", "hostIPC"))
        join: dict[str, str] = {}
        if host_network or host_pid or host_ipc:
            node = await self.node.ensure()
            join = {**({"net": node.netns, "uts": f"/proc/{node.pid}/ns/uts"} if host_network else {}),
                    **({"ipc": f"/proc/{node.pid}/ns/ipc"} if host_ipc else {})}
        ids = await loop.run_in_executor(None, self.user_namespaces.allocate, uid) if spec.get(
            "hostUsers") is False else None
        users: Holder | None = None
        try:
            if ids is not None:
                users = Holder(user=True, uts=True, ipc=True)
                await loop.run_in_executor(None, users.wait_ready)
                users.map_ids(ids.line(), ids.line())
                join = {"net": users.netns, "uts": f"/proc/{users.pid}/ns/uts", "ipc": f"/proc/{users.pid}/ns/ipc"}
            own = users is None  # the Pod's network, UTS and IPC namespaces are made here (else joined)
            hostname = spec.get("hostname") or pod["metadata"]["name"]
            memory = Path(directory) / VOLUME_TMPFS
            memory.mkdir(parents=True, exist_ok=True)
            holder = Holder(net=own and not host_network, uts=own and not host_network, ipc=own and not host_ipc,
                            pid=not host_pid, mount=True, join=join,
                            setup=self._sandbox_setup(pod, ip, hostname, memory, host_network))
        except BaseException:
            if users is not None:
                users.close()
            self.user_namespaces.release(uid)
            raise
        net = self.network
        cgroup = self._pod_cgroup(pod)  # while the holder sets the namespaces up
        try:  # a failure leaves nothing behind (the kubelet tries again): the holder takes its namespaces along
            await holder.ready()
            await self.host_ports.open(uid, pod, ip)
        except BaseException:
            if self.cgroups is not None and cgroup:
                await self.cgroups.remove(cgroup)
            self.host_ports.close(uid)
            holder.close()
            if users is not None:
                users.close()
            self.user_namespaces.release(uid)
            raise
        base = Path(directory)
        (base / "etc").mkdir(parents=True, exist_ok=True)
        (base / "etc" / "hosts").write_text(_node_hosts(pod, ip, self.node.name) if host_network
                                            else _hosts(pod, ip, hostname))
        (base / "etc" / "resolv.conf").write_text(_resolv(pod, net.dns_ip))
        extra: dict[str, Any] = {"holder": holder, "pod": pod, **({"cgroup": cgroup} if cgroup else {})}
        if host_pid:
            extra["pidns"] = self.node.pidns
        if users is not None and ids is not None:  # what containerinit.py maps mounts through, and who root is
            extra["users"] = users
            extra["userns"] = {"path": users.userns, "owner": ids.host}
        return Sandbox(uid=uid, ip=ip, directory=directory, netns=holder.netns, extra=extra,
                       memory=(f"/proc/{holder.pid}/root{memory}", str(memory)))

    def _sandbox_setup(self, pod: dict[str, Any], ip: str, hostname: str, memory: Path, host_network: bool) -> str:
        """What the sandbox's holder runs in the Pod's namespaces before it sleeps (one process, no round trip
        to the kubelet between the steps): the veth pair made from the Pod's side, its host end put on the
        cluster bridge, the Pod's addresses and routes, its hostname, the tmpfs of its secret volumes, its
        sysctls (admitted by the kubelet: each in a namespace of the Pod's own)."""
        setup = f"mount -t tmpfs -o mode=0755,nosuid,nodev,noexec,size=64m tmpfs {shlex.quote(str(memory))}"
        if not host_network:
            net = self.network
            host_side = f"v{pod['metadata']['uid'].replace('-', '')[:12]}"
            addresses = (f"link set lo up\naddr add {ip}/{net.prefix_length} dev eth0\nlink set eth0 up\n"
                         f"route add default via {net.gateway}\n")
            # eth0 first, on its own: the network script sets its route_localnet while `ip` reads the batch; then
            # the route of the nodes' addresses to the cluster network with the rest
            setup = (f"ip link add eth0 type veth peer name {host_side} netns {shlex.quote(net.netns)} && "
                     f"{net.pod_network_script(addresses)} && nsenter --net={shlex.quote(net.netns)} "
                     f"ip link set {host_side} master {BRIDGE} up && "
                     f"printf %s {shlex.quote(hostname[:63])} > /proc/sys/kernel/hostname && {setup}")
        for name, value in pod_sysctls(pod):
            setup += f" && printf %s {shlex.quote(value)} > {shlex.quote(proc_path(name))}"
        return setup

    async def start(self, sandbox: Sandbox, spec: ContainerSpec) -> Container:
        holder: Holder = sandbox.extra["holder"]
        base = Path(sandbox.directory)
        container_id = uuid.uuid4().hex
        cgroup = self._container_cgroup(sandbox, container_id, spec)
        run_id = container_id[:8]
        root, scratch = base / "rootfs" / spec.name / run_id, base / "scratch" / spec.name / run_id
        root.mkdir(parents=True)
        scratch.mkdir(parents=True)
        mounted = {m["target"].rstrip("/") for m in spec.mounts}  # a volume at either path is what the container sees
        files = {target: str(base / "etc" / name) for target, name in (("/etc/hosts", "hosts"),
                                                                        ("/etc/resolv.conf", "resolv.conf"))
                 if target not in mounted}
        spec_file = base / f"container-{run_id}.spec"  # marshal: the same interpreter reads it, without importing json
        started_r, started_w = os.pipe()
        security = dict(spec.security)
        if security.get("capabilities") is not None:
            security["bounding"] = [CAPABILITIES.index(c) for c in security["capabilities"]]
        if security.get("seccomp") is not None:
            security["seccomp"] = (await _seccomp_filter(security["seccomp"], security.get("capabilities"))).hex()
        hide = sorted({*self.hide, str(Path(sandbox.directory).parent.parent)})  # the node's root dir
        spec_file.write_bytes(marshal.dumps({"root": str(root), "scratch": str(scratch), "mounts": spec.mounts,
                                             "files": files, "workdir": spec.workdir, "argv": spec.argv,
                                             "pidns": sandbox.extra.get("pidns") or holder.pidns, "env": spec.env,
                                             "started_fd": START_PIPE, "keep": KEEP, "hide": hide,
                                             "security": security, "layers": spec.layers,
                                             "userns": sandbox.extra.get("userns"),
                                             "setuid": [[target, shutil.which(program) or program]
                                                        for target, program in spec.setuid],
                                             "cgroups": self.cgroups.join_files(cgroup) if self.cgroups else []}))
        log = LogWriter(spec.log_path, max_size=spec.log_max_size, max_files=spec.log_max_files)
        namespaces = {"net": holder.netns, "uts": f"/proc/{holder.pid}/ns/uts", "ipc": f"/proc/{holder.pid}/ns/ipc",
                      "mnt": f"/proc/{holder.pid}/ns/mnt"}
        try:
            proc = await self.spawner.start(str(spec_file), namespaces, started_w, stdin=spec.stdin, limit=1 << 20)
        except BaseException:
            os.close(started_r)
            raise
        finally:
            os.close(started_w)
        assert proc.stdout is not None and proc.stderr is not None
        pumps = [asyncio.create_task(log.pump(proc.stdout, "stdout")),
                 asyncio.create_task(log.pump(proc.stderr, "stderr"))]
        container = ProcessContainer(proc, log, pumps, container_id, self.cgroups, cgroup,
                                     started=asyncio.ensure_future(_closed(started_r)), security=security,
                                     layers=(root, scratch))
        try:
            failure = await container.started()
            if failure:  # as a runtime's StartContainer fails: the container never ran
                await container.wait()
                raise OSError(failure)
        except asyncio.CancelledError:  # the Pod stopped meanwhile: nothing of the container is left behind
            container.signal(signal.SIGKILL)
            raise
        return container

    def _pod_cgroup(self, pod: dict[str, Any]) -> str:
        """The Pod's cgroup with its limits, made with its sandbox ("" without cgroups, or when the kernel refuses
        them: then made again at its first container's start, which fails saying why)."""
        if self.cgroups is None:
            return ""
        try:
            return self.cgroups.create_pod(pod)
        except OSError:
            return ""

    def _container_cgroup(self, sandbox: Sandbox, container_id: str, spec: ContainerSpec) -> str:
        """The container's cgroup, made with its limits (and the Pod's, at its first container); OSError when the
        kernel refuses them (the container fails to start, saying why)."""
        if self.cgroups is None:
            return ""
        if "cgroup" not in sandbox.extra:
            sandbox.extra["cgroup"] = self.cgroups.create_pod(sandbox.extra["pod"])
        return self.cgroups.create_container(sandbox.extra["cgroup"], container_id, spec.resources)

    async def exec(self, sandbox: Sandbox | None, container: Container, argv: list[str], *, tty: bool,
                   env: dict[str, str] | None = None, terminal: int | None = None) -> SpawnedProcess:
        """A process in the container's namespaces, root and working directory, with `env` (by default its main
        process's environment), forked by the node's spawner (kubelet/init_spawner.py), which runs the init's
        `enter`: it dies with the kubelet, joins the container's cgroups first thing (as a runtime's exec does),
        and with `tty` leads a session whose controlling terminal is `terminal` (a pty's slave: its stdin,
        stdout and stderr; else pipes). ExecError when the command cannot start there (said as the runtime says
        it, before anything runs)."""
        if isinstance(container, ProcessContainer):
            await container.started()
        pid = getattr(container, "main_pid", container.pid)
        environ = env if env is not None else _environ(pid)
        problem = exec_problem(pid, argv, environ.get("PATH", ""))
        if problem:
            raise ExecError(problem)
        cgroup = getattr(container, "cgroup", "")
        # the container's environment reaches only the command: the helper runs on the host's files, where a
        # variable such as LD_PRELOAD must not choose what it loads (it is set at the command's exec)
        spec = {"pid": pid, "security": getattr(container, "security", None) or {}, "env": environ,
                "cgroups": self.cgroups.join_files(cgroup) if self.cgroups is not None and cgroup else [],
                "tty": tty}
        return await self.spawner.enter(spec, argv, terminal=terminal)

    def open_pty(self, container: Container) -> tuple[int, int]:
        """A terminal (master, slave) from the container's own /dev/pts, as a runtime's console is: inside, `tty`
        names it /dev/pts/N."""
        pid = getattr(container, "main_pid", container.pid)
        master = os.open(f"/proc/{pid}/root/dev/ptmx", os.O_RDWR | os.O_NOCTTY | os.O_CLOEXEC)
        try:
            fcntl.ioctl(master, TIOCSPTLCK, struct.pack("i", 0))
            slave = fcntl.ioctl(master, TIOCGPTPEER, os.O_RDWR | os.O_NOCTTY)
        except BaseException:
            os.close(master)
            raise
        return master, slave

    async def run(self, sandbox: Sandbox | None, container: Container, argv: list[str]) -> tuple[int, bytes]:
        proc = await self.exec(sandbox, container, argv, tty=False)
        try:
            out, err = await proc.communicate()
        except asyncio.CancelledError:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            raise
        return proc.returncode or 0, out + err

    async def close(self) -> None:
        """Stop the containers' init spawner and the hostPort relays, remove the node's cgroups and namespaces."""
        self.spawner.close()
        self.host_ports.close_all()
        self.node.close()
        self.user_namespaces.release_all()
        if self.cgroups is not None:
            await self.cgroups.close()

    async def memory_volume(self, sandbox: Sandbox, name: str, size: int) -> tuple[str, str] | None:
        """A tmpfs of its own in the Pod's mount namespace (under `memory-volumes/`), mounted once."""
        holder: Holder | None = sandbox.extra.get("holder")
        if holder is None:
            return None
        made: dict[str, tuple[str, str]] = sandbox.extra.setdefault("memory_volumes", {})
        if name not in made:
            path = Path(sandbox.directory) / MEMORY_VOLUMES / name
            path.mkdir(parents=True, exist_ok=True)
            await _run("nsenter", f"--mount=/proc/{holder.pid}/ns/mnt", "--", "mount", "-t", "tmpfs", "-o",
                       f"size={size},mode=0777", "tmpfs", str(path))
            made[name] = (f"/proc/{holder.pid}/root{path}", str(path))
        return made[name]

    async def remove_sandbox(self, sandbox: Sandbox) -> None:
        self.host_ports.close(sandbox.uid)
        holder: Holder | None = sandbox.extra.pop("holder", None)
        users: Holder | None = sandbox.extra.pop("users", None)
        if holder is not None and users is not None:  # the block is free once no process of the Pod is left
            await asyncio.get_running_loop().run_in_executor(None, functools.partial(holder.close, wait=5.0))
        elif holder is not None:
            holder.close()
        if users is not None:
            users.close()
        self.user_namespaces.release(sandbox.uid)
        cgroup = sandbox.extra.pop("cgroup", None)
        if self.cgroups is not None and cgroup:
            await self.cgroups.remove(cgroup)
        await asyncio.get_running_loop().run_in_executor(None, shutil.rmtree, sandbox.directory, True)


@functools.cache
def init_program() -> str:
    """containerinit.py compiled, once per process (compiling its source took each container start and each exec
    about 10 ms of CPU); the source itself where the compiled file cannot be written."""
    try:
        return py_compile.compile(str(INIT), doraise=True) or str(INIT)
    except (OSError, py_compile.PyCompileError):
        return str(INIT)


def _environ(pid: int | None) -> dict[str, str]:
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
    pairs = (item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)
    return {k.decode(errors="replace"): v.decode(errors="replace") for k, v in pairs}


async def _closed(fd: int) -> bytes:
    """Wait for the end of the pipe `fd`, then close it; returns what was written to it (at most 4 KiB)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[bytes] = loop.create_future()
    data = bytearray()

    def readable() -> None:
        try:
            chunk = os.read(fd, 4096)
            if chunk:
                data.extend(chunk[:4096 - len(data)])
                return
        except BlockingIOError:
            return
        except OSError:
            pass
        if not done.done():
            done.set_result(bytes(data))

    os.set_blocking(fd, False)
    loop.add_reader(fd, readable)
    try:
        return await done
    finally:
        loop.remove_reader(fd)
        os.close(fd)


async def _seccomp_filter(profile: dict[str, Any], capabilities: list[str] | None) -> bytes:
    """The profile as a BPF program (compiled off the event loop, once per profile and capability set); OSError
    saying why when it cannot be (the container fails to start, as containerd fails it)."""
    try:
        return await asyncio.get_running_loop().run_in_executor(None, compile_filter, profile, capabilities or ())
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise OSError(f"failed to create containerd container: failed to generate seccomp spec opts: {exc}") from None


async def _run(*argv: str) -> None:
    proc = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.DEVNULL,
                                                stderr=asyncio.subprocess.PIPE)
    _, err = await proc.communicate()
    if proc.returncode:
        raise OSError(f"{argv[0]}: {err.decode(errors='replace').strip()}")


def _alias_entries(spec: dict[str, Any]) -> str:
    """hostAliases' lines, under one header, as upstream's hostsEntriesFromHostAliases."""
    aliases = spec.get("hostAliases") or ()
    if not aliases:
        return ""
    return "\n# Entries added by HostAliases.\n" + "".join(
        f"{alias['ip']}\t" + "\t".join(alias.get("hostnames") or ()) + "\n" for alias in aliases)


def _hosts(pod: dict[str, Any], ip: str, hostname: str) -> str:
    """The Pod's /etc/hosts as upstream's managedHostsFileContent: localhost, the Pod's IP with its hostname (and
    FQDN with a subdomain), the hostAliases."""
    spec = pod.get("spec") or {}
    lines = ["# Kubernetes-managed hosts file.", "127.0.0.1\tlocalhost", "::1\tlocalhost ip6-localhost ip6-loopback",
             "fe00::0\tip6-localnet", "fe00::0\tip6-mcastprefix", "fe00::1\tip6-allnodes", "fe00::2\tip6-allrouters"]
    subdomain = spec.get("subdomain")
    fqdn = f"{hostname}.{subdomain}.{pod['metadata']['namespace']}.svc.cluster.local" if subdomain else ""
    lines.append(f"{ip}\t{fqdn + chr(9) if fqdn else ''}{hostname}")
    return "\n".join(lines) + "\n" + _alias_entries(spec)


def _node_hosts(pod: dict[str, Any], node_ip: str, node_name: str) -> str:
    """A hostNetwork Pod's /etc/hosts as upstream's nodeHostsFileContent: the node's own (here the host's, with the
    node's name and address) under the host-network header, then the hostAliases."""
    try:
        with open("/etc/hosts") as handle:
            host = handle.read()
    except OSError:
        host = "127.0.0.1\tlocalhost\n"
    if host and not host.endswith("\n"):
        host += "\n"
    own = f"{node_ip}\t{node_name}\n" if node_ip and node_name else ""
    return "# Kubernetes-managed hosts file (host network).\n" + host + own + _alias_entries(pod.get("spec") or {})


def _resolv(pod: dict[str, Any], dns_ip: str) -> str:
    spec = pod.get("spec") or {}
    policy = spec.get("dnsPolicy") or "ClusterFirst"
    config = spec.get("dnsConfig") or {}
    namespace = pod["metadata"]["namespace"]
    if policy == "Default" or (policy == "ClusterFirst" and spec.get("hostNetwork")):
        with contextlib.suppress(OSError):
            return Path("/etc/resolv.conf").read_text()
    servers = [] if policy == "None" else [dns_ip]
    search = [] if policy == "None" else [f"{namespace}.svc.cluster.local", "svc.cluster.local", "cluster.local"]
    options = [] if policy == "None" else ["ndots:5"]
    servers += config.get("nameservers") or []
    search += config.get("searches") or []
    options += [f"{o['name']}:{o['value']}" if o.get("value") else o["name"] for o in config.get("options") or ()]
    text = "".join(f"nameserver {s}\n" for s in servers)
    if search:
        text = f"search {' '.join(search)}\n" + text
    if options:
        text += f"options {' '.join(options)}\n"
    return text
