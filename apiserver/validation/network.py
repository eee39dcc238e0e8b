"""IP address and port checks worded like upstream's (util/validation and core's ValidateNonSpecialIP)."""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from mini_kube.apiserver.validation.errs import FieldError, each, invalid, not_supported, required
from mini_kube.machinery.names import is_valid_port_name, is_valid_port_num

PROTOCOLS = ("SCTP", "TCP", "UDP")
_LEADING_ZEROS = re.compile(r"(^|\.)0+(\d)")


def parse_ip(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """Parse an IP the "sloppy" way Kubernetes does: IPv4 octets may carry leading zeros."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return ipaddress.ip_address(value)
    except ValueError:
        pass
    if "." in value and ":" not in value:
        try:
            return ipaddress.ip_address(_LEADING_ZEROS.sub(r"\1\2", value))
        except ValueError:
            return None
    return None


def is_valid_ip(path: str, value: str) -> list[FieldError]:
    if parse_ip(value) is None:
        return [invalid(path, value, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)")]
    return []


def is_valid_ipv4(path: str, value: str) -> list[FieldError]:
    ip = parse_ip(value)
    if ip is None or ip.version != 4:
        return [invalid(path, value, "must be a valid IPv4 address")]
    return []


def is_valid_ipv6(path: str, value: str) -> list[FieldError]:
    ip = parse_ip(value)
    if ip is None or ip.version != 6:
        return [invalid(path, value, "must be a valid IPv6 address")]
    return []


def is_valid_cidr(path: str, value: str) -> list[FieldError]:
    """netutils.ParseCIDRSloppy: an address and a prefix length (a bare address is not a CIDR)."""
    try:
        if "/" not in value:
            raise ValueError(value)
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        return [invalid(path, value, "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)")]
    return []


def validate_non_special_ip(value: str, path: str) -> list[FieldError]:
    """Endpoint and external IPs may not be unspecified, loopback or link-local."""
    ip = parse_ip(value)
    if ip is None:
        return [invalid(path, value, "must be a valid IP address")]
    errs: list[FieldError] = []
    if ip.is_unspecified:
        errs.append(invalid(path, value, f"may not be unspecified ({value})"))
    if ip.is_loopback:
        errs.append(invalid(path, value, "may not be in the loopback range (127.0.0.0/8, ::1/128)"))
    if ip.is_link_local and not ip.is_multicast:
        errs.append(invalid(path, value, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"))
    if ip in ipaddress.ip_network("224.0.0.0/24") or (ip.version == 6 and ip in ipaddress.ip_network("ff02::/16")):
        errs.append(invalid(path, value, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"))
    return errs


def validate_port_num_or_name(port: Any, path: str) -> list[FieldError]:
    """An IntOrString port: a number in 1-65535 or an IANA-style port name."""
    if isinstance(port, int) and not isinstance(port, bool):
        return each(path, port, is_valid_port_num(port))
    if isinstance(port, str):
        return each(path, port, is_valid_port_name(port))
    return []


def validate_protocol(protocol: str | None, path: str) -> list[FieldError]:
    """Protocol is required (defaulting fills TCP) and one of SCTP, TCP, UDP."""
    if protocol is None:
        return []
    if protocol == "":
        return [required(path)]
    if protocol not in PROTOCOLS:
        return [not_supported(path, protocol, PROTOCOLS)]
    return []
