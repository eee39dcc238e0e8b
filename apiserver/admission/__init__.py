"""Admission: a chain of plugins that mutate, then validate, every write."""

from .chain import AdmissionChain, AdmissionPlugin, Attributes

__all__ = ["AdmissionChain", "AdmissionPlugin", "Attributes"]
