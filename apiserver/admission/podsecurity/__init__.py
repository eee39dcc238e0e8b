"""Pod Security Admission: upstream's PodSecurity plugin and the Pod Security Standards it enforces."""

from .config import ConfigurationError, PodSecurityConfiguration, load
from .plugin import PodSecurity

__all__ = ["ConfigurationError", "PodSecurity", "PodSecurityConfiguration", "load"]
