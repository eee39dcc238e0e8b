"""Workload controllers: ReplicaSet and Deployment (StatefulSet, DaemonSet, Job and CronJob are still to come)."""
