"""`kubectl-lite`: a small kubectl in Python. Commands are imported only when they run, so `kubectl-lite get pods`
pays for the standard library, YAML (for the kubeconfig) and one command module."""

from __future__ import annotations

import argparse
import importlib
import sys

# command module -> the parsers it adds (each module has `add_parser(s)(sub, common)`)
COMMAND_MODULES = {
    "get": "get", "describe": "describe", "apply": "mutate", "create": "mutate", "delete": "mutate",
    "patch": "mutate", "label": "mutate", "annotate": "mutate", "scale": "mutate", "version": "info",
    "api-resources": "info", "api-versions": "info", "auth": "info", "config": "info", "wait": "wait",
    "logs": "logs", "exec": "logs", "rollout": "rollout", "edit": "edit", "explain": "explain",
    "completion": "completion", "__complete": "completion",
}


def _verbosity(text: str) -> int:
    return int(text.lstrip("="))


def common_options() -> argparse.ArgumentParser:
    """Flags every command takes, before or after its name (defaults are filled in `main`)."""
    common = argparse.ArgumentParser(add_help=False, argument_default=argparse.SUPPRESS)
    common.add_argument("--kubeconfig")
    common.add_argument("--context")
    common.add_argument("-n", "--namespace")
    common.add_argument("-A", "--all-namespaces", action="store_true")
    common.add_argument("-s", "--server")
    common.add_argument("--token")
    common.add_argument("--request-timeout")
    common.add_argument("--cache-dir")
    common.add_argument("-v", "--v", dest="v", type=_verbosity)
    return common


DEFAULTS = {"kubeconfig": None, "context": None, "namespace": None, "all_namespaces": False, "server": None,
            "token": None, "request_timeout": None, "cache_dir": None, "v": 0}


def build_parser(command: str | None) -> argparse.ArgumentParser:
    """The parser, with only the module that defines `command` imported (all of them for --help)."""
    common = common_options()
    parser = argparse.ArgumentParser(prog="kubectl-lite", parents=[common],
                                     description="kubectl-lite controls a Kubernetes cluster (a small kubectl).")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    modules = [COMMAND_MODULES[command]] if command in COMMAND_MODULES else sorted(set(COMMAND_MODULES.values()))
    for name in dict.fromkeys(modules):
        module = importlib.import_module(f"mini_kube.kubectl_lite.commands.{name}")
        (getattr(module, "add_parsers", None) or module.add_parser)(sub, common)
    return parser


def _command_word(argv: list[str]) -> str | None:
    takes_value = {"--kubeconfig", "--context", "-n", "--namespace", "-s", "--server", "--token",
                   "--request-timeout", "--cache-dir", "-v", "--v"}
    skip = False
    for word in argv:
        if skip:
            skip = False
        elif word in takes_value:
            skip = True
        elif not word.startswith("-"):
            return word
    return None


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_command_word(argv))
    args = parser.parse_args(argv)
    for key, value in DEFAULTS.items():
        if not hasattr(args, key):
            setattr(args, key, value)
    if not getattr(args, "run", None):
        parser.print_help()
        return 0
    from mini_kube.machinery.kubeconfig import ConfigError
    from mini_kube.machinery.status import ApiError

    from .discovery import ResourceNotFound
    from .session import Session, UsageError, print_error

    session = Session(args)
    try:
        return int(args.run(session) or 0)
    except ResourceNotFound as exc:
        print(f"error: the server doesn't have a resource type \"{exc}\"", file=sys.stderr)
        return 1
    except (ApiError, UsageError, ConfigError) as exc:
        return print_error(exc)
    except ConnectionRefusedError:
        print(f"The connection to the server {session.transport.host}:{session.transport.port} was refused - "
              "did you specify the right host or port?", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
