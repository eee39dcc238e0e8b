"""kube-scheduler's part: place each unscheduled Pod on a node (`scheduler.py`), with its cache, filters,
scores, queue, preemption and binder in their own modules; `runner.py` runs it, optionally under leader
election."""

from .runner import SchedulerRunner
from .scheduler import Scheduler

__all__ = ["Scheduler", "SchedulerRunner"]
