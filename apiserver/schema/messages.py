"""The apiserver's words for decode failures and field validation (Strict, Warn, Ignore).

A JSON body's problems come from `fields.strict_problems` (document order); a YAML body's from
`yaml_problems` (go-yaml's duplicate-key lines, then unknown fields in sorted order, because the
apiserver re-decodes YAML through JSON with sorted keys). Strict turns them into one 400 error, Warn
into one `Warning: 299 - "..."` header each, Ignore into nothing.
"""

from __future__ import annotations

from mini_kube.apiserver.errors import StatusError, bad_request

STRICT, WARN, IGNORE = "Strict", "Warn", "Ignore"
MODES = (STRICT, WARN, IGNORE)
DEFAULT_MODE = WARN  # what the apiserver does when the request names no fieldValidation


def cannot_handle(kind: str, version: str, detail: str) -> str:
    """`Deployment in version "v1" cannot be handled as a Deployment: <detail>`."""
    return f'{kind} in version "{version}" cannot be handled as a {kind}: {detail}'


def decode_error(kind: str, version: str, detail: str) -> StatusError:
    """400 for a body that does not decode (a type error, a malformed quantity)."""
    return bad_request(cannot_handle(kind, version, detail))


def strict_decoding_error(kind: str, version: str, problems: list[str]) -> StatusError:
    """400 for Strict: `... strict decoding error: unknown field "spec.replicaz", ...`."""
    return bad_request(cannot_handle(kind, version, "strict decoding error: " + ", ".join(problems)))


def warning_header(text: str) -> str:
    """The value of one `Warning` header: `299 - "unknown field \\"bogus\\""`."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'299 - "{escaped}"'


def yaml_problems(duplicate_lines: list[str], unknown_paths: list[str], strict: bool) -> list[str]:
    """Problems of a YAML body; for Strict the duplicate lines form one `yaml: unmarshal errors:` item."""
    unknown = [f'unknown field "{path}"' for path in sorted(unknown_paths)]
    if not duplicate_lines:
        return unknown
    if strict:
        return ["yaml: unmarshal errors:\n  " + "\n  ".join(duplicate_lines), *unknown]
    return [*duplicate_lines, *unknown]


def field_validation(mode: str | None, kind: str, version: str, problems: list[str]) -> list[str]:
    """Apply a fieldValidation mode: raise the Strict error, or return the Warning header values."""
    mode = mode or DEFAULT_MODE
    if not problems or mode == IGNORE:
        return []
    if mode == STRICT:
        raise strict_decoding_error(kind, version, problems)
    return [warning_header(problem) for problem in problems]
