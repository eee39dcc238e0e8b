"""Format checks, case by case (upstream's rules, restated)."""

from __future__ import annotations

import pytest
from mini_kube.machinery import names as n
from mini_kube.machinery.quantity import parse_quantity

SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
                 "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
                 "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
             "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
QNAME_PART = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
              "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
              "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")


@pytest.mark.parametrize(("value", "errors"), [
    ("example.com", []), ("a", []), ("0.1-2", []), ("Bad_Name", [SUBDOMAIN_MSG]), ("-a", [SUBDOMAIN_MSG]),
    ("a.", [SUBDOMAIN_MSG]), ("", [SUBDOMAIN_MSG]), ("a" * 253, []),
    ("a" * 254, ["must be no more than 253 characters"]),
])
def test_dns1123_subdomain(value, errors):
    assert n.is_dns1123_subdomain(value) == errors


@pytest.mark.parametrize(("value", "errors"), [
    ("my-name", []), ("123-abc", []), ("a.b", ["must not contain dots"]), ("A", [LABEL_MSG]),
    ("a" * 64, ["must be no more than 63 characters"]), ("a-", [LABEL_MSG]),
])
def test_dns1123_label(value, errors):
    assert n.is_dns1123_label(value) == errors


def test_dns1035_label_must_start_with_a_letter():
    assert n.is_dns1035_label("web") == []
    assert n.is_dns1035_label("1web") == [
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
        "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation "
        "is '[a-z]([-a-z0-9]*[a-z0-9])?')"]


@pytest.mark.parametrize(("value", "errors"), [
    ("app", []), ("example.com/app", []),
    ("a/b/c", ["a qualified name " + QNAME_PART + " with an optional DNS subdomain prefix and '/' (e.g. "
               "'example.com/MyName')"]),
    ("/app", ["prefix part must be non-empty"]), ("x/", ["name part must be non-empty", "name part " + QNAME_PART]),
    ("Bad_/x", ["prefix part " + SUBDOMAIN_MSG]), ("a" * 64, ["name part must be no more than 63 characters"]),
    ("-x", ["name part " + QNAME_PART]),
])
def test_qualified_name(value, errors):
    assert n.is_qualified_name(value) == errors


def test_label_values():
    assert n.is_valid_label_value("") == []
    assert n.is_valid_label_value("v1.0_x") == []
    assert n.is_valid_label_value("a" * 64)[0] == "must be no more than 63 characters"
    assert n.is_valid_label_value("-x")[0].startswith("a valid label must be an empty string or consist of")


@pytest.mark.parametrize(("key", "errors"), [
    ("key.name", []), ("KEY_NAME", []),
    ("a b", ["a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or "
             "'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"]),
    (".", ["must not be '.'"]), ("..", ["must not be '..'"]), ("..x", ["must not start with '..'"]),
])
def test_config_map_keys(key, errors):
    assert n.is_config_map_key(key) == errors


def test_port_names_and_numbers():
    assert n.is_valid_port_name("http") == []
    assert n.is_valid_port_name("1234") == ["must contain at least one letter (a-z)"]
    assert n.is_valid_port_name("a--b") == ["must not contain consecutive hyphens"]
    assert n.is_valid_port_name("-ab") == ["must not begin or end with a hyphen"]
    assert n.is_valid_port_name("Http") == ["must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)"]
    assert n.is_valid_port_name("a" * 16) == ["must be no more than 15 characters"]
    assert n.is_valid_port_num(0) == ["must be between 1 and 65535, inclusive"]
    assert n.is_valid_port_num(65535) == []


def test_env_var_names_relaxed_and_strict():
    assert n.is_relaxed_env_var_name("1 A-b.c") == []
    assert n.is_relaxed_env_var_name("A=B") == [n.RELAXED_ENV_VAR_MSG]
    assert n.is_relaxed_env_var_name("") == ["environment variable name must be non-empty"]
    assert n.is_env_var_name("1A")[0].startswith("a valid environment variable name must consist of alphabetic")


def test_generate_name_may_end_in_a_dash():
    assert n.name_is_dns_subdomain("web-", True) == []
    assert n.name_is_dns_subdomain("web-", False) == [SUBDOMAIN_MSG]


def test_path_segment_names():
    assert n.path_segment_name("system:admin", False) == []
    assert n.path_segment_name("..", False) == ["may not be '..'"]
    assert n.path_segment_name("a/b%c", False) == ["may not contain '/'", "may not contain '%'"]


def test_quantities_parse():
    assert parse_quantity("1.5Gi").value == 1536 * 1024 * 1024
    assert parse_quantity("abc") is None
    assert parse_quantity("1.2.3") is None
