"""Per-kind strategies."""
