"""One Pod's life on a node: sandbox, volumes, init containers in order, containers supervised with
restartPolicy and CrashLoopBackOff back-off, probes, activeDeadlineSeconds, graceful termination, and the
status written after every change (coalesced; only when it differs)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mini_kube.client import ApiError, NotFound
from mini_kube.machinery.meta import meta
from mini_kube.machinery.refs import PODS
from mini_kube.machinery.times import now_rfc3339, parse_time

from . import eviction, hooks, pod_status, termination
from .actions import Target
from .container_events import ensure_image, field_path, pull_backing_off, pull_failed
from .deletion import final_delete
from .entrypoints import container_argv
from .env import EnvError, Getter, container_env, expand
from .image_accounts import has_accounts, image_accounts
from .image_files import image_files
from .images import BASE_PATH, built_in, default_argv, image_pages, resolve
from .imagestore.local import ImageRunError, LocalImage
from .imagestore.users import UserError, home_of, resolve_user
from .inflight import to_the_end
from .probes import ProbeRunner
from .records import ContainerRecord
from .runtime.base import Container, ContainerSpec, Sandbox
from .seccomp import PROFILE_DIRECTORY
from .security import SecurityError, container_security
from .volume_sync import TokenCache, VolumeSync
from .volumes import (
    Prefetch,
    VolumeError,
    container_mounts,
    make_volumes,
    memory_volume_size,
    memory_volumes,
    warm_tokens,
)
from .worker_env import WorkerEnv

log = logging.getLogger("mini-kube.kubelet")
MAX_BACKOFF = 300.0
BACKOFF_RESET = 600.0
PULL_RESYNC = 1.0  # seconds from a failed pull to the sync that reports its back-off (ImagePullBackOff)
IDENTITY = ("env", "pod", "uid", "name", "namespace", "finished")  # what a stopped worker still holds
SANDBOX_RETRY, MAX_SANDBOX_RETRY = 1.0, 30.0  # seconds between attempts at a Pod's sandbox (doubling)


def local_environment(image: LocalImage) -> dict[str, str]:
    """A mapped or loaded image's variables over the runtime's default PATH (as containerd's default spec)."""
    return {"PATH": BASE_PATH, **image.environment()}


def _mount_failure(exc: Exception) -> str:
    """FailedMount's message, as upstream's volume manager words it."""
    volume = getattr(exc, "volume", "")
    return f'MountVolume.SetUp failed for volume "{volume}" : {exc}' if volume else f"MountVolume.SetUp failed: {exc}"


class PodWorker:
    """Runs one Pod on its node's `env` once started; `update` hands it newer versions of the Pod, `stop` ends it
    without a trace."""

    def __init__(self, pod: dict[str, Any], env: WorkerEnv) -> None:
        self.env = env
        self.pod = pod
        self.uid = meta(pod)["uid"]
        self.name = meta(pod)["name"]
        self.namespace = meta(pod)["namespace"]
        spec = pod.get("spec") or {}
        self.restart_policy = spec.get("restartPolicy") or "Always"
        self.inits = [ContainerRecord(c["name"], c.get("image", ""), init=True) for c in spec.get("initContainers") or ()]
        for record in self.inits:
            record.state = {"waiting": {"reason": "PodInitializing"}}
        self.containers = [ContainerRecord(c["name"], c.get("image", "")) for c in spec.get("containers") or ()]
        if self.inits:
            for record in self.containers:
                record.state = {"waiting": {"reason": "PodInitializing"}}
        self.specs = {c["name"]: c for c in [*(spec.get("initContainers") or ()), *(spec.get("containers") or ())]}
        self.ephemerals: list[ContainerRecord] = []  # debug containers added through pods/ephemeralcontainers
        self._changed: set[str] = set()  # containers being stopped because their image changed: started again
        self._ephemeral_tasks: list[asyncio.Task[None]] = []
        self.sandbox: Sandbox | None = None
        self.ip: str | None = None
        self.start_time = (pod.get("status") or {}).get("startTime") or now_rfc3339()
        self.override: dict[str, str] | None = None
        self.volumes: dict[str, str] = {}
        self.terminating = False
        self.terminated = False  # `terminate` has ended: containers stopped, sandbox released
        self.stopped = False  # `stop` has ended: the worker holds nothing but IDENTITY
        self._delete_wanted = False  # the Pod has a deletionTimestamp: the final delete follows any termination
        self.finished = asyncio.Event()  # containers done for good (terminal) or terminated
        self._dirty = asyncio.Event()
        self._written: dict[str, Any] | None = None
        self._flushing = asyncio.Lock()  # one status write at a time: the next compares with what it wrote
        self._backoff = {r.name: 0.0 for r in self.containers + self.inits}
        self.probes = ProbeRunner(self)
        self._main: asyncio.Task[None] | None = None  # the Pod's life, once started
        self._writer: asyncio.Task[None] | None = None  # its status writes, once started
        self._terminator: asyncio.Task[None] | None = None  # `terminate`, once begun by a deletion or the deadline
        self._sandbox_settled = asyncio.Event()  # the sandbox is made, or never will be (the Pod ended first)
        self._supervisors: list[asyncio.Task[None]] = []
        self._deadline: asyncio.TimerHandle | None = None
        self._deadline_seconds: int | None = None
        self._running = False
        self._term_started = 0.0
        self._kill_at: float | None = None  # while terminating: when SIGKILL follows SIGTERM (loop time)
        self._sooner = asyncio.Event()  # a later delete shortened the grace period
        self._deleter: asyncio.Task[None] | None = None  # the final delete, once begun
        self._in_post_start: set[str] = set()  # containers started whose postStart hook has not returned
        self._kills: set[asyncio.Task[int | None]] = set()  # containers being stopped to be started again
        self._storage: asyncio.Task[None] | None = None  # local storage measured against its limits (eviction.py)
        self._tokens = TokenCache(env.request_token)  # projected service-account tokens, renewed at 80% of life
        self._volume_sync: VolumeSync | None = None  # its volumes kept up to date while it runs (volume_sync.py)
        self._local: dict[str, LocalImage | None] = {}  # each container's mapped or loaded image, once resolved
        self._termination: dict[str, Path | None] = {}  # each container's termination message file, this run

    def start(self) -> None:
        """Begin running the Pod: its sandbox, volumes and containers, and the status writes."""
        self._main = asyncio.create_task(self._run(), name=f"pod {self.namespace}/{self.name}")
        self._writer = asyncio.create_task(self._write_status(), name=f"pod status {self.namespace}/{self.name}")
        self._add_ephemerals()
        self.mark_dirty()

    @property
    def pod_id(self) -> str:
        """The Pod as upstream's messages name it (format.Pod)."""
        return f"{self.name}_{self.namespace}({self.uid})"

    def target(self, spec: dict[str, Any], container: Container | None = None) -> Target:
        """The container `spec` (its current run unless `container` is given) as probes and hooks reach it."""
        if container is None:
            record = self.record(spec["name"])
            container = record.container if record is not None else None
        return Target(self.env.runtime, self.sandbox, container, spec, self.ip or self.env.address, self.env.dial)

    # -- inputs ------------------------------------------------------------------------------------------------
    def update(self, pod: dict[str, Any]) -> None:
        """The Pod's latest version. A deletion is honoured whatever is under way, as upstream's pod worker keeps
        the latest desired state: a termination of the kubelet's own (activeDeadlineSeconds) ends with the final
        delete too, or is followed by it when it has already ended."""
        before, self.pod = self.pod, pod
        if self._volume_sync is not None and any(meta(before).get(k) != meta(pod).get(k)
                                                 for k in ("labels", "annotations")):
            self._volume_sync.poke()  # downward API volumes show them
        if not meta(pod).get("deletionTimestamp"):
            if self._running:
                self._arm_deadline()
            self._add_ephemerals()
            self._follow_images()
            return
        self._delete_wanted = True
        grace = meta(pod).get("deletionGracePeriodSeconds")
        grace = 30.0 if grace is None else float(grace)
        if not self.terminating:
            self._begin_termination(grace)
        elif self.terminated:
            self._delete_from_api()
        elif self._kill_at is not None and self._term_started + grace < self._kill_at:
            self._kill_at = self._term_started + grace  # a shorter grace period asked for meanwhile: honoured
            self._sooner.set()

    def mark_dirty(self) -> None:
        self._dirty.set()

    def _field_path(self, record: ContainerRecord) -> str:
        return field_path(record, record in self.ephemerals)

    def container_event(self, record: ContainerRecord, reason: str, message: str, type_: str = "Normal") -> None:
        """An event about one of the Pod's containers (its fieldPath names the container)."""
        self.env.events.emit(self.pod, reason, message, type_, field_path=self._field_path(record))

    def record(self, name: str) -> ContainerRecord | None:
        return next((r for r in self.containers + self.inits + self.ephemerals if r.name == name), None)

    def _follow_images(self) -> None:
        """A container whose image changed (the one mutable field of a Pod's containers) is stopped and started
        again with the new image, whatever the restart policy, as the kubelet does when a container's
        definition changes; one not running just gets the new image for its next start."""
        if self.terminating:
            return
        for spec in (self.pod.get("spec") or {}).get("containers") or ():
            record = self.record(spec.get("name", ""))
            if record is None or record.init or spec.get("image") == self.specs[record.name].get("image"):
                continue
            self.specs[record.name] = spec
            record.image = spec.get("image", "")
            if record.running and record.container is not None and record.name not in self._changed:
                self._changed.add(record.name)
                self.restart(record, f"Container {record.name} definition changed, will be restarted")
            self.mark_dirty()

    def _add_ephemerals(self) -> None:
        """Start the ephemeral containers not seen before (each runs once, never restarted, as upstream)."""
        known = {r.name for r in self.ephemerals}
        for spec in (self.pod.get("spec") or {}).get("ephemeralContainers") or ():
            if spec.get("name") in known or self.terminating:
                continue
            record = ContainerRecord(spec["name"], spec.get("image", ""))
            self.specs[record.name] = spec
            self._backoff[record.name] = 0.0
            self.ephemerals.append(record)
            self._ephemeral_tasks.append(asyncio.create_task(self._run_ephemeral(record),
                                                             name=f"ephemeral {self.name}/{record.name}"))
            self.mark_dirty()

    async def _run_ephemeral(self, record: ContainerRecord) -> None:
        """Once the sandbox is there and while the Pod has not finished: start the container and wait for it."""
        await self._sandbox_settled.wait()
        if self.terminating or self.finished.is_set():
            return
        await self._run_once(record)

    # -- the pod's life ----------------------------------------------------------------------------------------
    @property
    def directory(self) -> Path:
        return self.env.pod_directory(self.uid)

    async def _make_sandbox(self) -> bool:
        """The Pod's IP, directory and sandbox; a failure (no free IP, namespaces not made in time) is an event
        and is tried again with back-off, as the kubelet's FailedCreatePodSandBox, never a Pod left Pending with
        nothing to say why. False when the Pod is terminated first."""
        delay = SANDBOX_RETRY
        while not self.terminating:
            try:
                self.ip = self.env.ipam.allocate(self.uid) if not self._host_network else self.env.address
                self.directory.mkdir(parents=True, exist_ok=True)
                self.sandbox = await self.env.runtime.create_sandbox(self.pod, self.ip, str(self.directory))
                self._sandbox_settled.set()
                # no status write for the sandbox alone: its IP and PodReadyToStartContainers go out with the
                # containers' next change (running, or waiting with a reason), as upstream's pod worker writes
                # the status it generated at the start of the sync that made the sandbox and started them
                return True
            except OSError as exc:
                log.warning("pod %s/%s: no sandbox: %s", self.namespace, self.name, exc)
                self.env.events.emit(self.pod, "FailedCreatePodSandBox", f"Failed to create pod sandbox: {exc}",
                                     "Warning")
                await asyncio.sleep(delay)
                delay = min(delay * 2, MAX_SANDBOX_RETRY)
        return False

    async def _memory_volumes(self) -> dict[str, tuple[str, str]]:
        """A tmpfs from the runtime for each emptyDir of medium Memory (sized as upstream's), where it has them."""
        made = {}
        for volume in memory_volumes(self.pod):
            size = memory_volume_size(self.pod, volume, self.env.allocatable)
            where = await self.env.runtime.memory_volume(self.sandbox, volume["name"], size) if self.sandbox else None
            if where is not None:
                made[volume["name"]] = where
        return made

    async def _run(self) -> None:
        get: Getter = Prefetch(self.env.get_object)  # the volumes' objects asked for while the sandbox is made
        warm = asyncio.create_task(warm_tokens(self.pod, self._tokens, get))
        try:
            if not await self._make_sandbox():
                return
            await warm
        finally:
            warm.cancel()
        while not self.terminating:
            try:
                self.volumes = await make_volumes(self.pod, self.directory, get,
                                                  self._tokens, self.env.root,
                                                  memory=self.sandbox.memory if self.sandbox is not None else None,
                                                  allocatable=self.env.allocatable,
                                                  memory_dirs=await self._memory_volumes())
                break
            except (VolumeError, ApiError, OSError) as exc:
                self.env.events.emit(self.pod, "FailedMount", _mount_failure(exc), "Warning")
                get = self.env.get_object  # asked again each time from now on
                await asyncio.sleep(2.0)
        self._storage = eviction.watch(self, self.env.settings.housekeeping_interval)
        self._volume_sync = VolumeSync(
            lambda: self.pod, self.directory, self.env.get_object, self._tokens,
            self.sandbox.memory if self.sandbox is not None else None, self.env.allocatable,
            self.env.settings.volume_sync,
            lambda exc: self.env.events.emit(self.pod, "FailedMount", _mount_failure(exc), "Warning"),
            lambda: not self.terminating and not self.finished.is_set())
        self._volume_sync.start()
        self._running = True
        self._arm_deadline()
        for record in self.inits:
            while not self.terminating:
                code = await self._run_once(record)
                if code is None or code == 0:
                    break
                if self.restart_policy == "Never":
                    self._finish()
                    return
                await self._back_off(record, "CrashLoopBackOff")
            if self.terminating:
                return
        if self.terminating:
            return
        for record in self.containers:
            if record.state.get("waiting", {}).get("reason") == "PodInitializing":
                record.state = {"waiting": {"reason": "ContainerCreating"}}
        self._supervisors = [asyncio.create_task(self._supervise(r)) for r in self.containers]
        await asyncio.gather(*self._supervisors, return_exceptions=True)
        if not self.terminating:
            self._finish()

    @property
    def _host_network(self) -> bool:
        return bool((self.pod.get("spec") or {}).get("hostNetwork"))

    def _finish(self) -> None:
        """Every container is done for good: the Pod is terminal."""
        if self._deadline is not None:
            self._deadline.cancel()
        self.mark_dirty()
        self.finished.set()
        self._sandbox_settled.set()

    async def _supervise(self, record: ContainerRecord) -> None:
        while not self.terminating:
            started = time.monotonic()
            code = await self._run_once(record)
            if code is None or self.terminating:
                return
            if record.name in self._changed:  # stopped for a new image: started again at once
                self._changed.discard(record.name)
                record.restart_count += 1
                continue
            if not (self.restart_policy == "Always" or (self.restart_policy == "OnFailure" and code != 0)):
                return
            if time.monotonic() - started > BACKOFF_RESET:
                self._backoff[record.name] = 0.0
            await self._back_off(record, "CrashLoopBackOff")

    async def _back_off(self, record: ContainerRecord, reason: str) -> None:
        delay = self._backoff[record.name]
        self._backoff[record.name] = min(MAX_BACKOFF, delay * 2 if delay else self.env.settings.backoff_base)
        if delay:
            record.set_waiting(reason, f"back-off {int(delay)}s restarting failed container={record.name} "
                                       f"pod={self.pod_id}")
            self.container_event(record, "BackOff", "Back-off restarting failed container "
                                 f"{record.name} in pod {self.pod_id}", "Warning")
            self.mark_dirty()
            await asyncio.sleep(delay)
        record.restart_count += 1

    async def _run_once(self, record: ContainerRecord) -> int | None:
        """Start the container and wait for its exit code (None: it could not start before termination)."""
        spec = self.specs[record.name]
        while True:
            if not await self._ensure_image(record):
                return None
            spec = self.specs[record.name]
            try:
                container_spec = await self._container_spec(record, spec)
                break
            except (EnvError, SecurityError, ImageRunError) as exc:
                if "terminated" in record.state:
                    record.last_state = {"terminated": record.state["terminated"]}
                if isinstance(exc, SecurityError):
                    reason = exc.reason
                else:
                    reason = "CreateContainerError" if isinstance(exc, ImageRunError) else "CreateContainerConfigError"
                record.state = {"waiting": {"reason": reason, "message": str(exc)}}
                self.container_event(record, "Failed", f"Error: {exc}", "Warning")
                self.mark_dirty()
                await asyncio.sleep(self.env.settings.config_retry)
                if self.terminating:
                    return None
        sandbox = self.sandbox
        if self.terminating or sandbox is None:  # no sandbox: released, as the Pod is being terminated
            return None
        self.container_event(record, "Created", f"Created container: {record.name}")
        try:
            container = await self.env.runtime.start(sandbox, container_spec)
        except OSError as exc:
            record.state = {"terminated": {"exitCode": 128, "reason": "StartError", "message": str(exc),
                                           "startedAt": now_rfc3339(), "finishedAt": now_rfc3339()}}
            self.container_event(record, "Failed", f"Error: {exc}", "Warning")
            self.mark_dirty()
            return 128
        if "terminated" in record.state:
            record.last_state = {"terminated": record.state["terminated"]}
        self.container_event(record, "Started", f"Started container {record.name}")
        post_start = hooks.handler(spec, "postStart")
        failure = None if post_start is None else await self._post_start(record, container, spec, post_start)
        if failure is not None:
            code, why = failure
            record.container, record.container_id = container, container.id
            record.set_terminated(code)
            if not record.init and record not in self.ephemerals and (
                    self.restart_policy == "Always" or (self.restart_policy == "OnFailure" and code != 0)):
                record.set_waiting("PostStartHookError", why)  # to be started again, as upstream's reason cache
            self.mark_dirty()
            return code
        record.set_running(container, time.monotonic())
        if record.init:
            record.started = True
        elif record not in self.ephemerals:  # ephemeral containers have no probes and are never ready
            self.probes.start(record, spec)
        self.mark_dirty()
        code = await container.wait()
        self.probes.stop(record)
        # read at once (at most 4 KiB of the file, or 80 lines of logs): no await between the exit and its state
        message = termination.message(spec, self._termination.get(record.name), code, container_spec.log_path)
        record.set_terminated(code, "OOMKilled" if container.oom_killed else "", message)
        self.mark_dirty()
        return code

    async def _ensure_image(self, record: ContainerRecord) -> bool:
        """The container's image present (built in, or run by the stand-in), or its pull failing as on a node
        where no registry has it: waiting ErrImagePull, then ImagePullBackOff for the back-off (10 s doubled up to
        5 min), pulled again after it, until the image changes. False once the Pod terminates."""
        delay = self.env.settings.backoff_base
        while not self.terminating:
            spec = self.specs[record.name]
            image = spec.get("image", "")
            looked_up = time.monotonic()
            found = resolve(image, self.env.settings.unknown_images, self.env.images)
            if found is not None:
                self._local[record.name] = found if isinstance(found, LocalImage) else None
                record.image_id = found.image_id if isinstance(found, LocalImage) else ""
                ensure_image(self.env.events, self.pod, spec, self._field_path(record), found, looked_up)
                return not self.terminating
            error = pull_failed(self.env.events, self.pod, image, self._field_path(record))
            record.set_waiting("ErrImagePull", error)
            self.mark_dirty()
            if not await self._image_unchanged_for(record, image, PULL_RESYNC):
                continue
            pull_backing_off(self.env.events, self.pod, image, self._field_path(record))
            record.set_waiting("ImagePullBackOff", f'Back-off pulling image "{image}": ErrImagePull: {error}')
            self.mark_dirty()
            if await self._image_unchanged_for(record, image, delay):
                delay = min(delay * 2, MAX_BACKOFF)
        return False

    async def _image_unchanged_for(self, record: ContainerRecord, image: str, seconds: float) -> bool:
        """Wait `seconds` (in short steps); False as soon as the container's image changes or the Pod ends."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            await asyncio.sleep(min(0.25, max(0.0, deadline - time.monotonic())))
            if self.terminating or self.specs[record.name].get("image", "") != image:
                return False
        return True

    async def _post_start(self, record: ContainerRecord, container: Container, spec: dict[str, Any],
                          action: dict[str, Any]) -> tuple[int, str] | None:
        """Run the postStart hook; the container is not running (nor ready) until it returns. A failure is a
        FailedPostStartHook event (the hook's words are only in the container's state, as upstream keeps
        secrets out of events) and the container is killed: its exit code and the hook's failure then."""
        record.container = container  # a termination meanwhile stops it
        self._in_post_start.add(record.name)
        try:
            failure = await hooks.run(self.target(spec, container), self.pod_id, action)
        finally:
            self._in_post_start.discard(record.name)
        if failure is None or self.terminating:
            return None
        log.info("pod %s/%s: postStart of %s failed: %s", self.namespace, self.name, record.name, failure)
        self.container_event(record, "FailedPostStartHook", "PostStartHook failed", "Warning")
        grace = float((self.pod.get("spec") or {}).get("terminationGracePeriodSeconds", 30) or 0)
        deadline = asyncio.get_running_loop().time() + grace
        code = await self.kill(record, container, lambda: deadline, "FailedPostStartHook")
        return (137 if code is None else code), failure

    def restart(self, record: ContainerRecord, message: str) -> None:
        """Stop a running container (preStop, SIGTERM, SIGKILL after the grace period) for its supervisor to
        start it again."""
        container = record.container
        if container is None:
            return
        grace = float((self.pod.get("spec") or {}).get("terminationGracePeriodSeconds", 30) or 0)
        deadline = asyncio.get_running_loop().time() + grace
        task = asyncio.create_task(self.kill(record, container, lambda: deadline, message))
        self._kills.add(task)
        task.add_done_callback(self._kills.discard)

    async def kill(self, record: ContainerRecord, container: Container, kill_at: Callable[[], float],
                   message: str) -> int | None:
        """Stop one container as upstream's killContainer: a Killing event, the preStop hook (given what is left
        of the grace period), SIGTERM, and SIGKILL at `kill_at()` (loop time; read again when `_sooner` is set),
        but no sooner than 2 s after a preStop hook. The exit code, or None when it did not exit."""
        loop = asyncio.get_running_loop()
        self.container_event(record, "Killing", message)
        spec = self.specs.get(record.name) or {}
        pre_stop = hooks.handler(spec, "preStop")
        floor = 0.0
        if pre_stop is not None and kill_at() > loop.time():
            hook = asyncio.ensure_future(hooks.run(self.target(spec, container), self.pod_id, pre_stop))
            try:
                await asyncio.wait({hook}, timeout=kill_at() - loop.time())
            except asyncio.CancelledError:
                hook.cancel()
                raise
            if not hook.done():
                hook.cancel()
                log.info("pod %s/%s: preStop of %s not done in the grace period", self.namespace, self.name,
                         record.name)
            elif hook.exception() is not None or hook.result() is not None:
                failure = hook.result() if hook.exception() is None else str(hook.exception())
                self.container_event(record, "FailedPreStopHook", failure or "", "Warning")
            floor = loop.time() + hooks.MIN_GRACE
        container.signal(signal.SIGTERM)
        wait = asyncio.ensure_future(container.wait())
        try:
            await self._sigkill_at(container, wait, kill_at, floor)
        finally:
            if not wait.done():  # it did not exit even after SIGKILL, or this kill was cancelled (`stop`)
                wait.cancel()
        if wait.cancelled() or wait.exception() is not None:
            return None
        return wait.result()

    async def _sigkill_at(self, container: Container, wait: asyncio.Future[int], kill_at: Callable[[], float],
                          floor: float) -> None:
        """Until the container exits, or SIGKILL at `kill_at()` (no sooner than `floor`) and 5 s more."""
        loop = asyncio.get_running_loop()
        while not wait.done():
            self._sooner.clear()
            deadline = max(kill_at(), floor)
            if loop.time() >= deadline:
                break
            sooner = asyncio.ensure_future(self._sooner.wait())
            either: set[asyncio.Future[Any]] = {wait, sooner}
            try:
                await asyncio.wait(either, timeout=deadline - loop.time(),
                                   return_when=asyncio.FIRST_COMPLETED)
            finally:
                sooner.cancel()
        if not wait.done():
            container.signal(signal.SIGKILL)
            await asyncio.wait({wait}, timeout=5)

    async def _container_spec(self, record: ContainerRecord, spec: dict[str, Any]) -> ContainerSpec:
        local = self._local.get(record.name)
        env = await container_env(self._pod_with_ips(), spec, self.env.get_object, self.env.services(),
                                  self.env.allocatable, image_env=local_environment(local) if local else None)
        command = [expand(a, env) for a in spec.get("command") or ()]
        args = [expand(a, env) for a in spec.get("args") or ()]
        ports = [p["containerPort"] for p in spec.get("ports") or () if p.get("protocol", "TCP") == "TCP"]
        mounts = container_mounts(spec, self.volumes, self.sandbox.memory if self.sandbox is not None else None,
                                  env)
        privileged = bool((spec.get("securityContext") or {}).get("privileged"))  # its /dev is the host's
        message_file = None if privileged else termination.message_file(self.directory, spec)
        self._termination[record.name] = message_file
        if message_file is not None:
            mounts.append(termination.mount(spec, message_file))
        if local is not None:
            return self._local_container_spec(record, spec, local, local.argv(command, args), env, mounts, ports)
        argv = container_argv(spec.get("image", ""), command, args)
        mounts[:0] = image_files(spec.get("image", ""), self.env.root / "images")  # first: volumes win
        if not argv:
            argv = default_argv(spec.get("image", ""), ports)
            if "--docroot" in argv:  # the image's own files: writable, fresh for each run of the container
                docroot = self.directory / "docroots" / record.name / str(record.restart_count)
                docroot.mkdir(parents=True, exist_ok=True)
                for name, text in image_pages(spec.get("image", "")):
                    (docroot / name).write_text(text)
                mounts.insert(0, {"source": str(docroot), "target": argv[argv.index("--docroot") + 1],
                                  "readOnly": False})  # first: the Pod's own volumes mounted there win
        image = built_in(spec.get("image", ""))
        user = None
        if image is not None and has_accounts(image):  # its user, and its own /etc/passwd and /etc/group
            user, accounts = image_accounts(image, self.env.root / "images" / "accounts")
            mounts[:0] = accounts
        log_dir = self.directory / "logs" / record.name
        return ContainerSpec(name=record.name, argv=argv, env=env, workdir=spec.get("workingDir") or "/",
                             mounts=mounts,
                             log_path=str(log_dir / f"{record.restart_count}.log"), tty=bool(spec.get("tty")),
                             log_max_size=self.env.settings.container_log_max_size,
                             log_max_files=self.env.settings.container_log_max_files,
                             stdin=bool(spec.get("stdin")), ports=ports, hostname=self._hostname(),
                             init=record.init, resources=spec.get("resources") or {},
                             security=container_security(self.pod, spec, user,
                                                         seccomp_root=self.env.root / PROFILE_DIRECTORY),
                             setuid=list(image.setuid) if image is not None else [])

    def _local_container_spec(self, record: ContainerRecord, spec: dict[str, Any], local: LocalImage,
                              argv: list[str], env: dict[str, str], mounts: list[dict[str, Any]],
                              ports: list[int]) -> ContainerSpec:
        """A container of a mapped or loaded image: the image's root (its layers) or the host's directories with
        its binds, its working directory and user. ImageRunError when the image cannot run it."""
        if not argv:
            raise ImageRunError(f'failed to generate container "{record.name}" spec: no command specified')
        try:
            user = resolve_user(local.user, local.layers)
        except UserError as exc:
            raise ImageRunError(f'failed to generate container "{record.name}" spec: {exc}') from None
        security = container_security(self.pod, spec, user, seccomp_root=self.env.root / PROFILE_DIRECTORY)
        if "HOME" not in local.environment() and not any(v.get("name") == "HOME" for v in spec.get("env") or ()):
            env["HOME"] = home_of(security["uid"], user.passwd)  # as runc: the user's, from the image's passwd
        binds = [{"source": path, "target": path, "readOnly": not local.writable} for path in local.binds]
        log_dir = self.directory / "logs" / record.name
        return ContainerSpec(name=record.name, argv=argv, env=env,
                             workdir=spec.get("workingDir") or local.working_dir or "/", mounts=binds + mounts,
                             log_path=str(log_dir / f"{record.restart_count}.log"), tty=bool(spec.get("tty")),
                             log_max_size=self.env.settings.container_log_max_size,
                             log_max_files=self.env.settings.container_log_max_files,
                             stdin=bool(spec.get("stdin")), ports=ports, hostname=self._hostname(),
                             init=record.init, resources=spec.get("resources") or {},
                             security=security, layers=list(local.layers))

    def _hostname(self) -> str:
        spec = self.pod.get("spec") or {}
        return spec.get("hostname") or self.name

    def _pod_with_ips(self) -> dict[str, Any]:
        pod = dict(self.pod)
        status = dict(pod.get("status") or {})
        status.update({"hostIP": self.env.address, "hostIPs": [{"ip": self.env.address}]})
        if self.ip:
            status.update({"podIP": self.ip, "podIPs": [{"ip": self.ip}]})
        pod["status"] = status
        return pod

    def _arm_deadline(self) -> None:
        """activeDeadlineSeconds counts from the Pod's start time, and may be changed while it runs (one of the few
        mutable spec fields): the timer follows the latest value, as upstream's active deadline handler checks it on
        every sync."""
        seconds = (self.pod.get("spec") or {}).get("activeDeadlineSeconds")
        if seconds == self._deadline_seconds:
            return
        self._deadline_seconds = seconds
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        if seconds is None or self.terminating or self.finished.is_set():
            return
        started = parse_time(self.start_time)
        elapsed = time.time() - started.timestamp() if started is not None else 0.0
        self._deadline = asyncio.get_running_loop().call_later(max(0.0, float(seconds) - elapsed),
                                                               self._deadline_exceeded)

    def _deadline_exceeded(self) -> None:
        if self.terminating or self.finished.is_set():
            return
        self.override = {"phase": "Failed", "reason": "DeadlineExceeded",
                         "message": "Pod was active on the node longer than the specified deadline"}
        self.env.events.emit(self.pod, "DeadlineExceeded", self.override["message"])  # Normal, as upstream
        self._begin_termination(0.0)

    def evict(self, message: str) -> None:
        """Evict the Pod as upstream's eviction manager does: a Warning event, the containers stopped with a 1 s
        grace period, the Pod Failed with reason Evicted and `message`."""
        if self.terminating or self.finished.is_set():
            return
        self.override = {"phase": "Failed", "reason": "Evicted", "message": message}
        self.env.events.emit(self.pod, "Evicted", message, "Warning")
        self._begin_termination(eviction.GRACE)

    # -- ending ------------------------------------------------------------------------------------------------
    def _begin_termination(self, grace: float) -> None:
        """Terminate in a task of this worker's (once: a later deletion shortens its grace period instead)."""
        if self._terminator is None:
            self._terminator = asyncio.create_task(self.terminate(grace),
                                                   name=f"terminate {self.namespace}/{self.name}")

    async def terminate(self, grace: float) -> None:
        """Stop every container (SIGTERM, then SIGKILL after `grace`), release the sandbox, and when the Pod is
        being deleted (from the start, or since: a deletion arriving meanwhile is not dropped) remove it from the
        API (the final, grace-0 delete)."""
        if self.terminating:
            return
        self.terminating = True
        self._sandbox_settled.set()
        if self._deadline is not None:
            self._deadline.cancel()
        running = [r for r in self.containers + self.inits + self.ephemerals if r.container is not None
                   and (r.running or r.name in self._in_post_start)]
        loop = asyncio.get_running_loop()
        self._term_started = loop.time()
        self._kill_at = self._term_started + grace
        kills = [asyncio.ensure_future(self.kill(r, r.container, self._kill_time, f"Stopping container {r.name}"))
                 for r in running if r.container is not None]
        if kills:
            try:
                await asyncio.wait(kills)
            except asyncio.CancelledError:  # `stop`: the containers are being killed at once
                for kill in kills:
                    kill.cancel()
                raise
        for task in [*self._started_tasks(self._main), *self._supervisors, *self._ephemeral_tasks]:
            task.cancel()
        if self._storage is not None and self._storage is not asyncio.current_task():
            self._storage.cancel()
        if self._volume_sync is not None and self._volume_sync.task is not None:
            self._volume_sync.task.cancel()
        if self._main is not None:
            await self._ended(self._main)
        self.probes.stop_all()
        for record, kill in zip(running, kills, strict=True):
            code = kill.result() if kill.exception() is None else None
            if code is not None:
                record.set_terminated(code)
        for record in self.containers:
            if "waiting" in record.state and record.restart_count == 0 and not record.last_state:
                record.state = {"terminated": {"exitCode": 137, "reason": "ContainerStatusUnknown",
                                               "message": "The container could not be located when the pod was "
                                                          "terminated", "startedAt": None, "finishedAt": now_rfc3339()}}
        self.finished.set()
        await self._release()  # first, as upstream's killPod: the final status tells the sandbox is gone too
        await self._flush()
        self.terminated = True
        if self._delete_wanted:
            self._delete_from_api()

    @staticmethod
    async def _ended(task: asyncio.Task[None]) -> None:
        """Wait for a cancelled task to end, whatever it ended with; a cancellation of the caller's own (`stop`
        cancelling `terminate`) is passed on."""
        try:
            await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise
        except Exception:  # the Pod's life ended with an error: it is over either way
            pass

    def _kill_time(self) -> float:
        return self._kill_at if self._kill_at is not None else 0.0

    def _delete_from_api(self) -> None:
        """The final, grace-0 delete (begun once, retried until done; `stop` ends it when the Pod is gone)."""
        if self._deleter is None:
            self._deleter = asyncio.create_task(final_delete(self.env.client, self.pod),
                                                name=f"final delete {self.namespace}/{self.name}")

    async def _release(self) -> None:
        if self.sandbox is not None:
            sandbox, self.sandbox = self.sandbox, None
            with contextlib.suppress(Exception):
                await self.env.runtime.remove_sandbox(sandbox)
        self.env.ipam.release(self.uid)

    @staticmethod
    def _started_tasks(*tasks: asyncio.Task[Any] | None) -> list[asyncio.Task[Any]]:
        return [task for task in tasks if task is not None]

    async def stop(self) -> None:
        """The Pod is gone from the API (or the kubelet stops): kill everything at once, write nothing; then let
        go of what the worker held."""
        if self.stopped:
            return
        self.terminating = True
        self._sandbox_settled.set()
        for record in self.containers + self.inits + self.ephemerals:
            if record.container is not None and (record.running or record.name in self._in_post_start):
                record.container.signal(signal.SIGKILL)
        self.probes.stop_all()
        tasks = [*self._started_tasks(self._main, self._writer, self._terminator, self._deleter, self._storage,
                                      self._volume_sync.task if self._volume_sync is not None else None),
                 *self._supervisors, *self._ephemeral_tasks, *self._kills]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self._release()
        self._let_go()

    def _let_go(self) -> None:
        """Drop every reference the stopped worker holds but its Pod's identity. Its tasks, probe loops, volume
        sync and containers each refer back to it (a cancelled task keeps its CancelledError, whose traceback
        keeps the frames that hold the worker), so a stopped worker would be some 200 objects in reference
        cycles per Pod, freed only by a full garbage collection; once it holds nothing, reference counting frees
        them as the Pod goes (what the server's garbage collection policy, mini_kube/gc_policy.py, counts on)."""
        if self._volume_sync is not None:
            self._volume_sync.task = None  # it holds its cancelled task, which holds it: a cycle of their own
        kept = {name: getattr(self, name) for name in IDENTITY}
        vars(self).clear()
        vars(self).update(kept, stopped=True, terminating=True, terminated=True)

    # -- status --------------------------------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        override = self.override
        restart_policy = self.restart_policy
        if self.terminating and self.finished.is_set() and override is None:
            restart_policy = "Never"  # a deleted Pod's final phase: Succeeded if every container exited 0
        return pod_status.status(self.pod, restart_policy=restart_policy, host_ip=self.env.address,
                                 pod_ip=self.ip if self.sandbox is not None or self._written else None,
                                 start_time=self.start_time, sandbox_ready=self.sandbox is not None,
                                 inits=self.inits, containers=self.containers, override=override,
                                 ephemerals=self.ephemerals)

    async def _write_status(self) -> None:
        while True:
            await self._dirty.wait()
            await asyncio.sleep(0)  # let changes made in the same tick land in one write
            if self.terminating and not self.finished.is_set():
                # The containers are being stopped: as upstream's pod worker, busy killing the Pod until every
                # container is down, their exits reach the API with the final status that `terminate` writes.
                self._dirty.clear()
                continue
            await self._flush()

    async def _flush(self) -> None:
        """Write the status if it changed since the last write; a write asked for while one is on its way (the
        status loop woken by `terminate`, which also writes) waits for it rather than sending the same again."""
        async with self._flushing:
            self._dirty.clear()
            status = self.status()
            if status == self._written:
                return
            try:
                await to_the_end(self.env.client.patch(PODS, self.name, {"status": status}, self.namespace,
                                                       subresource="status"))
                self._written = status
            except NotFound:
                return
            except ApiError as exc:
                log.warning("pod %s/%s: status not written: %s", self.namespace, self.name, exc)
                await asyncio.sleep(0.5)
                self._dirty.set()

