"""CronJobs through real kubectl with the cronjob, job and garbage collector controllers. The CronJob
controller reads a test clock (its `now` option), frozen by default and moved by the test, so a
`* * * * *` schedule fires at once instead of after a minute."""

from __future__ import annotations

import datetime as dt
import functools
import json
import threading
import time
import uuid

import pytest
from mini_kube.machinery.refs import CRONJOBS, EVENTS, JOBS, NAMESPACES, PODS

from tests.helpers import eventually as _eventually
from tests.helpers import kubectl

eventually = functools.partial(_eventually, timeout=15.0, interval=0.03)
SCHEDULED = "batch.kubernetes.io/cronjob-scheduled-timestamp"


class SettableClock:
    """A settable clock for the controller (thread-safe: the controller runs on the cluster's loop)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._now = dt.datetime.now(dt.UTC)

    def now(self) -> dt.datetime:
        with self._lock:
            return self._now

    def set(self, when: dt.datetime) -> None:
        with self._lock:
            self._now = when


@pytest.fixture(scope="module")
def clock():
    return SettableClock()


@pytest.fixture(scope="module")
def cluster(clock):
    from mini_kube.client import ApiClient, Connection
    from mini_kube.controllers.kube_controller_manager import KubeControllerManager

    from mini_kube.testing import MiniKube

    with MiniKube(controllers=False) as kube:
        manager = KubeControllerManager(ApiClient(Connection.from_kubeconfig(kube.kubeconfig)),
                          names="cronjob,job,garbagecollector",
                          options={"cronjob": {"now": clock.now, "max_requeue": 0.05}})
        kube.run(manager.start())
        try:
            yield kube
        finally:
            kube.run(manager.stop())


@pytest.fixture
def ns(cluster):
    name = f"cj-{uuid.uuid4().hex[:8]}"
    cluster.client.create(NAMESPACES, {"metadata": {"name": name}})
    return name




def created_at(kube, ns: str, name: str) -> dt.datetime:
    stamp = kube.client.get(CRONJOBS, name, ns)["metadata"]["creationTimestamp"]
    return dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def minute(when: dt.datetime) -> dt.datetime:
    return when.replace(second=0, microsecond=0)


def jobs(kube, ns: str) -> list[dict]:
    return sorted(kube.client.list(JOBS, ns)["items"], key=lambda j: j["metadata"]["name"])


def live_jobs(kube, ns: str) -> list[str]:
    return [j["metadata"]["name"] for j in jobs(kube, ns) if not j["metadata"].get("deletionTimestamp")]


def cronjob(kube, ns: str, name: str) -> dict:
    return kube.client.get(CRONJOBS, name, ns)


def reasons(kube, ns: str) -> list[str]:
    return [e["reason"] for e in kube.client.list(EVENTS, ns)["items"]]


def finish_job(kube, ns: str, job_name: str, phase: str = "Succeeded") -> None:
    """Finish the Job's Pod as a kubelet would, and wait for the Job to finish."""
    pod = eventually(lambda: [p for p in kube.client.list(PODS, ns)["items"]
                              if p["metadata"]["labels"].get("job-name") == job_name])[0]
    kube.client.patch(PODS, pod["metadata"]["name"], {"status": {"phase": phase}}, ns, subresource="status")
    kind = "Complete" if phase == "Succeeded" else "Failed"
    eventually(lambda: any(c["type"] == kind for c in kube.client.get(JOBS, job_name, ns)["status"].get(
        "conditions") or ()))


def make(kube, clock, ns: str, name: str, schedule: str = "* * * * *", **spec) -> dt.datetime:
    """Create a CronJob (kubectl create cronjob, or a manifest with more `spec`); the clock stays behind its
    creation meanwhile, then stands at its creationTimestamp (whole seconds). Returns that time."""
    clock.set(dt.datetime.now(dt.UTC) - dt.timedelta(seconds=5))
    if not spec:
        kubectl(kube, "-n", ns, "create", "cronjob", name, "--image=busybox", f"--schedule={schedule}",
                "--restart=Never")
    else:
        template = {"spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
            {"name": "c", "image": "busybox"}]}}}}
        template["spec"].update((spec.pop("jobTemplate", {})).get("spec") or {})
        kubectl(kube, "-n", ns, "create", "-f", "-", input=json.dumps({
            "apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name},
            "spec": {"schedule": schedule, "jobTemplate": template, **spec}}))
    start = created_at(kube, ns, name)
    clock.set(start)
    return start


def test_each_schedule_time_creates_one_job(cluster, clock, ns):
    kube = cluster
    start = make(kube, clock, ns, "tick")
    time.sleep(0.3)
    assert jobs(kube, ns) == [] and "lastScheduleTime" not in cronjob(kube, ns, "tick")["status"]
    clock.set(start + dt.timedelta(seconds=60))
    due = minute(start + dt.timedelta(seconds=60))
    name = f"tick-{int(due.timestamp()) // 60}"
    created = eventually(lambda: jobs(kube, ns))
    assert [j["metadata"]["name"] for j in created] == [name]
    assert created[0]["metadata"]["annotations"][SCHEDULED] == due.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert created[0]["metadata"]["ownerReferences"][0]["kind"] == "CronJob"
    status = eventually(lambda: cronjob(kube, ns, "tick")["status"].get("active") and cronjob(kube, ns, "tick")["status"])
    assert status["lastScheduleTime"] == due.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert [(r["kind"], r["name"], r["uid"]) for r in status["active"]] == [
        ("Job", name, created[0]["metadata"]["uid"])]
    table = kubectl(kube, "-n", ns, "get", "cronjob", "tick").stdout.splitlines()[1].split()
    assert table[:5] == ["tick", "*", "*", "*", "*"] and table[6:9] == ["<none>", "False", "1"]  # TIMEZONE SUSPEND ACTIVE
    time.sleep(0.3)
    assert len(jobs(kube, ns)) == 1  # one schedule time, one Job
    finish_job(kube, ns, name)
    status = eventually(lambda: "lastSuccessfulTime" in cronjob(kube, ns, "tick")["status"] and
                        cronjob(kube, ns, "tick")["status"])
    assert "active" not in status
    eventually(lambda: {"SuccessfulCreate", "SawCompletedJob"} <= set(reasons(kube, ns)))


def test_a_question_mark_schedules_as_a_star(cluster, clock, ns):
    """robfig/cron, which upstream's controller uses, reads `?` as `*`: `*/1 * * * ?` runs every minute."""
    kube = cluster
    start = make(kube, clock, ns, "quiz", schedule="*/1 * * * ?")
    clock.set(start + dt.timedelta(seconds=60))
    due = minute(start + dt.timedelta(seconds=60))
    assert [j["metadata"]["name"] for j in eventually(lambda: jobs(kube, ns))] == [f"quiz-{int(due.timestamp()) // 60}"]
    assert "FailedNeedsStart" not in reasons(kube, ns) and "UnparseableSchedule" not in reasons(kube, ns)


def test_forbid_waits_while_a_job_runs(cluster, clock, ns):
    kube = cluster
    start = make(kube, clock, ns, "solo", concurrencyPolicy="Forbid")
    clock.set(start + dt.timedelta(seconds=60))
    first = eventually(lambda: live_jobs(kube, ns))
    clock.set(start + dt.timedelta(seconds=120))
    eventually(lambda: "JobAlreadyActive" in reasons(kube, ns))
    time.sleep(0.2)
    assert live_jobs(kube, ns) == first
    finish_job(kube, ns, first[0])  # then the time it had to skip starts, late (no startingDeadlineSeconds)
    due = minute(start + dt.timedelta(seconds=120))
    eventually(lambda: live_jobs(kube, ns) == sorted([first[0], f"solo-{int(due.timestamp()) // 60}"]))


def test_replace_deletes_the_running_job(cluster, clock, ns):
    kube = cluster
    start = make(kube, clock, ns, "swap", concurrencyPolicy="Replace")
    clock.set(start + dt.timedelta(seconds=60))
    first = eventually(lambda: live_jobs(kube, ns))
    clock.set(start + dt.timedelta(seconds=120))
    second = eventually(lambda: live_jobs(kube, ns) != first and live_jobs(kube, ns))
    assert len(second) == 1 and second != first
    active = eventually(lambda: [r["name"] for r in cronjob(kube, ns, "swap")["status"].get("active") or ()]
                        == second)
    assert active
    eventually(lambda: "SuccessfulDelete" in reasons(kube, ns))  # written by the recorder after the delete


def test_allow_runs_jobs_side_by_side(cluster, clock, ns):
    kube = cluster
    start = make(kube, clock, ns, "many", concurrencyPolicy="Allow")
    for step in (60, 120):
        clock.set(start + dt.timedelta(seconds=step))
        eventually(lambda n=step // 60: len(live_jobs(kube, ns)) == n)
    eventually(lambda: len(cronjob(kube, ns, "many")["status"].get("active") or ()) == 2)


def test_history_limits_keep_the_newest_finished_jobs(cluster, clock, ns):
    kube = cluster
    start = make(kube, clock, ns, "keep", successfulJobsHistoryLimit=1, failedJobsHistoryLimit=1,
                 jobTemplate={"spec": {"backoffLimit": 0}})
    names = []
    for step, phase in ((60, "Succeeded"), (120, "Succeeded"), (180, "Failed"), (240, "Failed")):
        clock.set(start + dt.timedelta(seconds=step))
        name = eventually(lambda: [j for j in live_jobs(kube, ns) if j not in names])[-1]
        names.append(name)
        finish_job(kube, ns, name, phase)
    eventually(lambda: live_jobs(kube, ns) == sorted([names[1], names[3]]))
    eventually(lambda: reasons(kube, ns).count("SuccessfulDelete") >= 2)  # recorded once each delete returned


def test_suspended_cronjob_starts_nothing(cluster, clock, ns):
    kube = cluster
    start = make(kube, clock, ns, "idle", suspend=True)
    clock.set(start + dt.timedelta(seconds=120))
    time.sleep(0.5)
    assert jobs(kube, ns) == []
    kubectl(kube, "-n", ns, "patch", "cronjob", "idle", "-p", '{"spec":{"suspend":false}}')
    eventually(lambda: len(jobs(kube, ns)) == 1)  # the most recent missed time only


def test_macro_schedule_in_a_time_zone(cluster, clock, ns):
    kube = cluster
    start = make(kube, clock, ns, "tz", "@hourly", timeZone="Asia/Kolkata")  # +05:30: hours start at :30 UTC
    clock.set(start + dt.timedelta(hours=1))
    job = eventually(lambda: jobs(kube, ns))[0]
    stamp = job["metadata"]["annotations"][SCHEDULED]
    assert stamp.endswith(":00:00+05:30")  # the top of a local hour
    scheduled = dt.datetime.fromisoformat(stamp)
    assert scheduled.astimezone(dt.UTC).minute == 30
    assert job["metadata"]["name"] == f"tz-{int(scheduled.timestamp()) // 60}"


def test_starting_deadline_skips_a_late_start(cluster, clock, ns):
    kube = cluster
    start = make(kube, clock, ns, "late", startingDeadlineSeconds=10)
    next_minute = minute(start) + dt.timedelta(minutes=1)
    clock.set(next_minute + dt.timedelta(seconds=30))  # 30 s late: beyond the 10 s deadline
    time.sleep(0.5)
    assert jobs(kube, ns) == []
    clock.set(next_minute + dt.timedelta(seconds=65))  # 5 s after the next one: in time
    job = eventually(lambda: jobs(kube, ns))[0]
    due = next_minute + dt.timedelta(minutes=1)
    assert job["metadata"]["name"] == f"late-{int(due.timestamp()) // 60}"


def test_schedule_forms():
    from mini_kube.controllers.workloads.cronschedule import Schedule, ScheduleError, zone

    at = dt.datetime(2024, 3, 30, 23, 59, 30, tzinfo=dt.UTC)
    assert Schedule("@daily").next_after(at) == dt.datetime(2024, 3, 31, tzinfo=dt.UTC)
    assert Schedule("@every 1h30m").next_after(at) == at + dt.timedelta(hours=1, minutes=30)
    paris = Schedule("30 2 * * *", zone("Europe/Paris"))  # 02:30 does not exist on 31 March 2024 there
    assert paris.next_after(at).astimezone(zone("Europe/Paris")).hour == 3
    assert Schedule("*/15 * * * *").most_recent(at - dt.timedelta(hours=2), at) == (
        dt.datetime(2024, 3, 30, 23, 45, tzinfo=dt.UTC), 8)
    assert Schedule("0 0 1 1 *").most_recent(at - dt.timedelta(minutes=5), at) == (None, 0)
    for bad in ("@fortnightly", "61 * * * *", "* * *"):
        with pytest.raises(ScheduleError):
            Schedule(bad)
    with pytest.raises(ScheduleError):
        zone("Mars/Olympus_Mons")
