"""REST handlers."""
