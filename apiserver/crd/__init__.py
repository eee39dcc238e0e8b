"""CustomResourceDefinitions: CRD validation/defaults/status, and the per-version machinery of custom resources.

Pure functions and compiled objects; the HTTP layer wires them (see `validation`, `rows`,
`schema_validation`, `printers`, `strategy`).
"""

from apiserver.crd.printers import TablePrinter
from apiserver.crd.rows import resource_rows
from apiserver.crd.schema_validation import VersionSchema
from apiserver.crd.validation import crd_defaults, crd_status, validate_crd

__all__ = ["TablePrinter", "VersionSchema", "crd_defaults", "crd_status", "resource_rows", "validate_crd"]
