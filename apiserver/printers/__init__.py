"""Server-side Table output (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`) for every kind."""

from mini_kube.apiserver.printers.humanize import human_duration
from mini_kube.apiserver.printers.registry import printer_for
from mini_kube.apiserver.printers.table import cells, columns, partial_metadata, table

__all__ = ["cells", "columns", "human_duration", "partial_metadata", "printer_for", "table"]
