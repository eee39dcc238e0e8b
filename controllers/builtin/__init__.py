"""The built-in controllers."""
