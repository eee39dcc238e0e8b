"""Registry: generic storage logic, strategies and the in-memory cache."""
