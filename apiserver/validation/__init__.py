"""Validation of built-in kinds with upstream's field paths and messages.

Entry points (create when `old` is None): `validate_metadata(resource, obj, old)` for metadata and
`validate(kind, group, obj, old)` for the kind's own rules; `validate_all` runs both. Helpers:
`validate_object_meta`, `validate_object_meta_update`, the `is_*` format checks and the per-kind name rules.
"""

from mini_kube.apiserver.validation.kinds import (
    RULES,
    metadata_errors,
    name_validator,
    validate,
    validate_all,
    validate_metadata,
    validator_of,
)
from mini_kube.apiserver.validation.meta import (
    validate_annotations,
    validate_label_selector,
    validate_labels,
    validate_object_meta,
    validate_object_meta_update,
)
from mini_kube.apiserver.validation.network import is_valid_cidr, is_valid_ip, validate_non_special_ip
from mini_kube.machinery.names import (
    is_c_identifier,
    is_config_map_key,
    is_dns1035_label,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_env_var_name,
    is_qualified_name,
    is_relaxed_env_var_name,
    is_valid_label_value,
    is_valid_percent,
    is_valid_port_name,
    is_valid_port_num,
    name_is_dns1035_label,
    name_is_dns_label,
    name_is_dns_subdomain,
    path_segment_name,
)

__all__ = [
    "RULES", "metadata_errors", "name_validator", "validate", "validate_all", "validate_metadata", "validator_of", "validate_annotations", "validate_label_selector", "validate_labels",
    "validate_object_meta", "validate_object_meta_update", "is_c_identifier", "is_config_map_key",
    "is_dns1035_label", "is_dns1123_label", "is_dns1123_subdomain", "is_env_var_name", "is_qualified_name",
    "is_relaxed_env_var_name", "is_valid_label_value", "is_valid_percent", "is_valid_port_name", "is_valid_port_num",
    "name_is_dns1035_label", "name_is_dns_label", "name_is_dns_subdomain", "path_segment_name", "is_valid_cidr",
    "is_valid_ip", "validate_non_special_ip",
]
