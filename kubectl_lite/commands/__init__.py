"""kubectl-lite commands, one module per family."""
