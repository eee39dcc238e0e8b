"""The leader-election timing flags a component's command line takes (component-base's LeaderElection options),
apart from the elector itself (client.leaderelection): a command parses them, and refuses bad arguments,
without loading the client."""

from __future__ import annotations

from typing import Any


def add_timing_flags(parser: Any) -> None:
    """The `--leader-elect-lease-duration|renew-deadline|retry-period` flags of a component's command line."""
    parser.add_argument("--leader-elect-lease-duration", type=float, default=15.0,
                        help="seconds a leader's lease lasts without renewal (default 15)")
    parser.add_argument("--leader-elect-renew-deadline", type=float, default=10.0,
                        help="seconds the leader keeps trying to renew before it stops acting (default 10)")
    parser.add_argument("--leader-elect-retry-period", type=float, default=2.0,
                        help="seconds between attempts to acquire or renew (default 2)")
