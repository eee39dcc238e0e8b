"""Container runtimes: `process` (real processes in namespaces) and `simulated` (a timeline, no processes)."""
