"""Validation of built-in kinds with upstream's field paths and messages."""
