"""String-format checks with upstream's messages (k8s.io/apimachinery/pkg/util/validation).

Like upstream, each `is_*` check returns a list of problems: empty means valid.
"""

from __future__ import annotations

import re

QNAME_CHAR = "[A-Za-z0-9]"
QNAME_EXT_CHAR = "[-A-Za-z0-9_.]"
QUALIFIED_NAME_FMT = f"({QNAME_CHAR}{QNAME_EXT_CHAR}*)?{QNAME_CHAR}"
QUALIFIED_NAME_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                      "alphanumeric character")
LABEL_VALUE_FMT = f"({QUALIFIED_NAME_FMT})?"
LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                   "and must start and end with an alphanumeric character")
DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
                     "must start and end with an alphanumeric character")
DNS1123_SUBDOMAIN_FMT = DNS1123_LABEL_FMT + "(\\." + DNS1123_LABEL_FMT + ")*"
DNS1123_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
                         "'.', and must start and end with an alphanumeric character")
DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
DNS1035_LABEL_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                     "alphabetic character, and end with an alphanumeric character")
WILDCARD_FMT = "\\*\\." + DNS1123_SUBDOMAIN_FMT
WILDCARD_MSG = ("a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must "
                "consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character")
C_IDENTIFIER_FMT = "[A-Za-z_][A-Za-z0-9_]*"
C_IDENTIFIER_MSG = ("a valid C identifier must start with alphabetic character or '_', followed by a string of "
                    "alphanumeric characters or '_'")
ENV_VAR_FMT = "[-._a-zA-Z][-._a-zA-Z0-9]*"
ENV_VAR_MSG = ("a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', "
               "and must not start with a digit")
RELAXED_ENV_VAR_MSG = "a valid environment variable name must consist only of printable ASCII characters other than '='"
CONFIG_KEY_FMT = "[-._a-zA-Z0-9]+"
CONFIG_KEY_MSG = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"
PERCENT_FMT = "[0-9]+%"
PERCENT_MSG = "a valid percent string must be a numeric string followed by an ending '%'"

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
LABEL_VALUE_MAX = 63
QUALIFIED_NAME_MAX = 63


def _full(fmt: str) -> re.Pattern[str]:
    return re.compile(f"^(?:{fmt})$")


_QUALIFIED = _full(QUALIFIED_NAME_FMT)
_LABEL_VALUE = _full(LABEL_VALUE_FMT)
_DNS1123_LABEL = _full(DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN = _full(DNS1123_SUBDOMAIN_FMT)
_DNS1035_LABEL = _full(DNS1035_LABEL_FMT)
_WILDCARD = _full(WILDCARD_FMT)
_C_IDENTIFIER = _full(C_IDENTIFIER_FMT)
_ENV_VAR = _full(ENV_VAR_FMT)
_CONFIG_KEY = _full(CONFIG_KEY_FMT)
_PERCENT = _full(PERCENT_FMT)
_PORT_NAME_CHARS = re.compile(r"^[-a-z0-9]+$")


def _matches(pattern: re.Pattern[str], value: str, newline_ok: bool = False) -> bool:
    # Go's `$` never matches before a trailing newline; `\Z` semantics via fullmatch on the anchored pattern.
    # `newline_ok` is Python's `$` instead (one trailing newline passes): see apiserver.crd.dns.
    if newline_ok and value.endswith("\n"):
        value = value[:-1]
    return pattern.fullmatch(value) is not None and not value.endswith("\n")


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """`<msg> (e.g. 'a' or 'b', regex used for validation is '<fmt>')`."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{example}', " for example in examples)  # upstream's ", " then " or ": two spaces
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def max_len_error(length: int) -> str:
    return f"must be no more than {length} characters"


def empty_error() -> str:
    return "must be non-empty"


def inclusive_range_error(low: int, high: int) -> str:
    return f"must be between {low} and {high}, inclusive"


def is_qualified_name(value: str, *, newline_ok: bool = False) -> list[str]:
    """A qualified name: `name` or `dns.prefix/name`, the name part at most 63 characters."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part " + empty_error())
        else:
            errs.extend("prefix part " + msg for msg in is_dns1123_subdomain(prefix, newline_ok=newline_ok))
    else:
        return [
            "a qualified name " + regex_error(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part " + empty_error())
    elif len(name) > QUALIFIED_NAME_MAX:
        errs.append("name part " + max_len_error(QUALIFIED_NAME_MAX))
    if not _matches(_QUALIFIED, name, newline_ok):
        errs.append("name part " + regex_error(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


def is_valid_label_value(value: str, *, newline_ok: bool = False) -> list[str]:
    errs: list[str] = []
    if len(value) > LABEL_VALUE_MAX:
        errs.append(max_len_error(LABEL_VALUE_MAX))
    if not _matches(_LABEL_VALUE, value, newline_ok):
        errs.append(regex_error(LABEL_VALUE_MSG, LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def is_dns1123_label(value: str, *, newline_ok: bool = False, dots_hint: bool = True) -> list[str]:
    """`dots_hint`: a valid subdomain that is not a label gets "must not contain dots", not the regex message."""
    errs: list[str] = []
    if len(value) > DNS1123_LABEL_MAX:
        errs.append(max_len_error(DNS1123_LABEL_MAX))
    if not _matches(_DNS1123_LABEL, value, newline_ok):
        if dots_hint and _matches(_DNS1123_SUBDOMAIN, value):
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def is_dns1123_subdomain(value: str, *, newline_ok: bool = False) -> list[str]:
    errs: list[str] = []
    if len(value) > DNS1123_SUBDOMAIN_MAX:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX))
    if not _matches(_DNS1123_SUBDOMAIN, value, newline_ok):
        errs.append(regex_error(DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def is_dns1035_label(value: str, *, newline_ok: bool = False) -> list[str]:
    errs: list[str] = []
    if len(value) > DNS1123_LABEL_MAX:
        errs.append(max_len_error(DNS1123_LABEL_MAX))
    if not _matches(_DNS1035_LABEL, value, newline_ok):
        errs.append(regex_error(DNS1035_LABEL_MSG, DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


def is_wildcard_dns1123_subdomain(value: str) -> list[str]:
    errs: list[str] = []
    if len(value) > DNS1123_SUBDOMAIN_MAX:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX))
    if not _matches(_WILDCARD, value):
        errs.append(regex_error(WILDCARD_MSG, WILDCARD_FMT, "*.example.com"))
    return errs


def is_c_identifier(value: str) -> list[str]:
    if not _matches(_C_IDENTIFIER, value):
        return [regex_error(C_IDENTIFIER_MSG, C_IDENTIFIER_FMT, "my_name", "MY_NAME", "MyName")]
    return []


def _chdir_prefix(value: str) -> list[str]:
    if value == ".":
        return ["must not be '.'"]
    if value == "..":
        return ["must not be '..'"]
    if value.startswith(".."):
        return ["must not start with '..'"]
    return []


def is_env_var_name(value: str) -> list[str]:
    errs = [] if _matches(_ENV_VAR, value) else [
        regex_error(ENV_VAR_MSG, ENV_VAR_FMT, "my.env-name", "MY_ENV.NAME", "MyEnvName1")]
    return errs + _chdir_prefix(value)


def is_relaxed_env_var_name(value: str) -> list[str]:
    """The 1.32 default (RelaxedEnvironmentVariableValidation): printable ASCII except '='."""
    errs = [] if value else ["environment variable name " + empty_error()]
    if any(ord(ch) > 127 or not ch.isprintable() or ch == "=" for ch in value):
        errs.append(RELAXED_ENV_VAR_MSG)
    return errs


def is_config_map_key(value: str) -> list[str]:
    errs: list[str] = []
    if len(value) > DNS1123_SUBDOMAIN_MAX:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX))
    if not _matches(_CONFIG_KEY, value):
        errs.append(regex_error(CONFIG_KEY_MSG, CONFIG_KEY_FMT, "key.name", "KEY_NAME", "key-name"))
    return errs + _chdir_prefix(value)


def is_valid_port_num(port: int) -> list[str]:
    return [] if 1 <= port <= 65535 else [inclusive_range_error(1, 65535)]


def is_valid_port_name(port: str) -> list[str]:
    errs: list[str] = []
    if len(port) > 15:
        errs.append(max_len_error(15))
    if not _PORT_NAME_CHARS.match(port) or port.endswith("\n"):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.search("[a-z]", port):
        errs.append("must contain at least one letter (a-z)")
    if "--" in port:
        errs.append("must not contain consecutive hyphens")
    if port and (port[0] == "-" or port[-1] == "-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def is_valid_percent(value: str) -> list[str]:
    if not _matches(_PERCENT, value):
        return [regex_error(PERCENT_MSG, PERCENT_FMT, "1%", "93%")]
    return []


def _mask_trailing_dash(name: str) -> str:
    """generateName may end in '-': validate it as if a character followed."""
    return name[:-2] + "a" if len(name) > 1 and name.endswith("-") else name


def name_is_dns_subdomain(name: str, prefix: bool) -> list[str]:
    return is_dns1123_subdomain(_mask_trailing_dash(name) if prefix else name)


def name_is_dns_label(name: str, prefix: bool) -> list[str]:
    return is_dns1123_label(_mask_trailing_dash(name) if prefix else name)


def name_is_dns1035_label(name: str, prefix: bool) -> list[str]:
    return is_dns1035_label(_mask_trailing_dash(name) if prefix else name)


def is_valid_path_segment_name(name: str) -> list[str]:
    """Names that only need to be usable as one URL path segment (RBAC kinds)."""
    if name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{bad}'" for bad in ("/", "%") if bad in name]


def is_valid_path_segment_prefix(name: str) -> list[str]:
    return [f"may not contain '{bad}'" for bad in ("/", "%") if bad in name]


def path_segment_name(name: str, prefix: bool) -> list[str]:
    return is_valid_path_segment_prefix(name) if prefix else is_valid_path_segment_name(name)
