"""CustomResourceDefinitions and custom resources, as pure functions and compiled per-version objects.

CRDs: `crd_defaults` (on decode), `validate_crd(crd, old)` (create/update), `crd_status(crd, others)`
(status once names are accepted: NamesAccepted, Established), `resource_rows(crd)` (rows for the
resource table), `lifecycle` (deletion through the cleanup finalizer).

Custom resources, per served version (`row.object_schema`, a `VersionSchema` compiled once):
`decode(obj)` prunes and defaults on decode and returns the pruned paths (strict field validation),
`validate(obj, old)` / `validate_status(obj, old)` in the strategy, `convert(obj)` between versions
(`conversion: None`). `printers.table` builds Tables from additionalPrinterColumns; `strategy` holds
the status/scale/generation rules; `serving` converts stored objects to the version a request reads.

Wiring into the server: `apiserver/registry/kinds.py` (a CRD's rows with their strategy, validator and
printer), `apiserver/registry/strategies/crd.py` and `custom.py` (the strategies) and `apiserver/crd_controller.py`
(the resource table follows the stored CRDs; CRD deletion).
"""

from mini_kube.apiserver.crd.printers import TablePrinter
from mini_kube.apiserver.crd.rows import resource_rows
from mini_kube.apiserver.crd.schema_validation import VersionSchema
from mini_kube.apiserver.crd.validation import crd_defaults, crd_status, validate_crd

__all__ = ["TablePrinter", "VersionSchema", "crd_defaults", "crd_status", "resource_rows", "validate_crd"]
