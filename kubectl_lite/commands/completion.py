"""`completion bash|zsh`: a completion script that completes commands, and resource types and names by
asking kubectl-lite itself (`__complete`)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

BASH = r"""# kubectl-lite bash completion: source <(kubectl-lite completion bash)
_kubectl_lite() {
    local cur words
    cur="${COMP_WORDS[COMP_CWORD]}"
    words=("${COMP_WORDS[@]:1:COMP_CWORD-1}")
    COMPREPLY=( $(compgen -W "$(kubectl-lite __complete "${words[@]}" 2>/dev/null)" -- "$cur") )
}
complete -F _kubectl_lite kubectl-lite
"""

ZSH = r"""#compdef kubectl-lite
# kubectl-lite zsh completion: source <(kubectl-lite completion zsh)
_kubectl_lite() {
    local -a options
    options=(${(f)"$(kubectl-lite __complete ${words[2,CURRENT-1]} 2>/dev/null)"})
    compadd -a options
}
compdef _kubectl_lite kubectl-lite
"""


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("completion", parents=[common], help="Output shell completion code (bash or zsh)")
    p.add_argument("shell", choices=["bash", "zsh"])
    p.set_defaults(run=lambda session: _print(BASH if session.args.shell == "bash" else ZSH))
    c = sub.add_parser("__complete", parents=[common])
    c.add_argument("words", nargs="*")
    c.set_defaults(run=complete)


def _print(text: str) -> int:
    sys.stdout.write(text)
    return 0


def complete(session: Any) -> int:
    """Candidates for the next word: commands, then resource types, then names of that type."""
    from ..cli import COMMAND_MODULES

    words = [w for w in session.args.words if not w.startswith("-")]
    if not words:
        return _print("\n".join(sorted(COMMAND_MODULES)) + "\n")
    if len(words) == 1:
        return _print("\n".join(sorted({r.plural for r in session.discovery.resources()})) + "\n")
    res = session.discovery.find(words[1])
    listed = session.request("GET", res.path(session.namespace if res.namespaced else None))
    return _print("\n".join(i["metadata"]["name"] for i in listed.get("items") or ()) + "\n")
