"""Go-style (cobra/pflag) command-line flags: `--name=value`, `--name value`, booleans as `--name` or
`--name=false`, and upstream's one-line errors for an unknown flag or a value its type cannot hold."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from mini_kube.machinery.duration import parse_go_duration

TRUE = {"1", "t", "T", "TRUE", "true", "True"}
FALSE = {"0", "f", "F", "FALSE", "false", "False"}


@dataclass(frozen=True)
class Flag:
    """One flag: its Go type (`int`, `bool`, `str`, `Duration` in seconds), default and one-letter shorthand."""

    kind: type
    default: Any
    short: str = ""


class Duration(float):
    """A time.Duration flag (`30s`, `1m`), read in seconds."""


class FlagError(Exception):
    """A command line the subcommand cannot run with (cobra prints `Error: <message>` and exits 1)."""


def convert(name: str, kind: type, text: str) -> Any:
    """The value `text` as pflag reads it for a flag of type `kind`."""
    if kind is bool:
        if text in TRUE or text in FALSE:
            return text in TRUE
        raise FlagError(f'invalid argument "{text}" for "--{name}" flag: strconv.ParseBool: parsing "{text}": '
                        "invalid syntax")
    if kind is int:
        try:
            return int(text, 0) if text.lower().startswith(("0x", "0o", "0b")) else int(text)
        except ValueError:
            raise FlagError(f'invalid argument "{text}" for "--{name}" flag: strconv.ParseInt: parsing "{text}": '
                            "invalid syntax") from None
    if kind is Duration:
        try:
            return parse_go_duration(text) / 1e9
        except ValueError as error:
            raise FlagError(f'invalid argument "{text}" for "--{name}" flag: {error}') from None
    return text


def parse(spec: dict[str, Flag], argv: list[str]) -> tuple[dict[str, Any], list[str]]:
    """The flags' values (by name, `-` turned into `_`) and the positional arguments left."""
    values = {name.replace("-", "_"): flag.default for name, flag in spec.items()}
    positional: list[str] = []
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg == "--":
            positional.extend(args)
            break
        if not arg.startswith("-") or arg == "-":
            positional.append(arg)
            continue
        name, separator, text = arg.lstrip("-").partition("=")
        has_value = bool(separator)
        if not arg.startswith("--"):
            long = [full for full, known in spec.items() if known.short and known.short == name[:1]]
            if long and len(name) > 1 and not has_value:
                name, has_value, text = long[0], True, name[1:]
            elif long:
                name = long[0]
        flag = spec.get(name)
        if flag is None:
            raise FlagError(f"unknown flag: {arg.partition('=')[0]}" if arg.startswith("--")
                            else f"unknown shorthand flag: '{name[:1]}' in {arg}")
        if not has_value:
            if flag.kind is bool:
                text = "true"
            elif args:
                text = args.pop(0)
            else:
                raise FlagError(f"flag needs an argument: {arg}")
        values[name.replace("-", "_")] = convert(name, flag.kind, text)
    return values, positional


def parse_or_exit(command: str, spec: dict[str, Flag], argv: list[str], max_args: int = 0) -> dict[str, Any]:
    """`parse`, exiting 1 with cobra's messages on a bad command line (agnhost's subcommands take no arguments)."""
    try:
        values, positional = parse(spec, argv)
        if len(positional) > max_args:
            raise FlagError(f"accepts at most {max_args} arg(s), received {len(positional)}")
    except FlagError as error:
        print(f"Error: {error}\nRun 'agnhost {command} --help' for usage.", file=sys.stderr)
        raise SystemExit(1) from None
    return values
