"""`mini-kube scheduler --kubeconfig F`: the scheduler as its own process (kube-scheduler's role)."""

from __future__ import annotations

import argparse

from mini_kube.client import ApiClient
from mini_kube.controllers.signals import until_signalled
from mini_kube.machinery.leader_election_flags import add_timing_flags

from .runner import SchedulerRunner


def add_parser(sub: argparse._SubParsersAction) -> None:
    sched = sub.add_parser("scheduler", help="run the scheduler against a server")
    sched.add_argument("--kubeconfig", required=True, help="kubeconfig of the API server")
    sched.add_argument("--scheduler-name", default="default-scheduler",
                       help="the schedulerName of the Pods to place (default default-scheduler)")
    sched.add_argument("--leader-elect", action="store_true", help="act only while holding the "
                       "kube-system/kube-scheduler Lease, so several schedulers never both act")
    add_timing_flags(sched)


async def run(args: argparse.Namespace) -> None:
    try:
        client = ApiClient.from_kubeconfig(args.kubeconfig, user_agent="kube-scheduler")
    except (OSError, KeyError, StopIteration) as exc:
        raise SystemExit(f"mini-kube: cannot read {args.kubeconfig}: {exc}") from None
    runner = SchedulerRunner(client, leader_elect=args.leader_elect, scheduler_name=args.scheduler_name,
                             lease_duration=args.leader_elect_lease_duration,
                             renew_deadline=args.leader_elect_renew_deadline,
                             retry_period=args.leader_elect_retry_period)
    await runner.start()
    print(f"mini-kube scheduler: placing Pods of {args.scheduler_name}", flush=True)
    await until_signalled()
    await runner.stop()
