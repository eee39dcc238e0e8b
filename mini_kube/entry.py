"""The `mini-kube` command. `mini-kube image ...` only reads and writes the image store, so it starts without
loading the server and the other components (about a quarter of the start-up); every other subcommand is
mini_kube.cli's."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["image"]:
        from mini_kube.kubelet.imagestore.cli import main as image_main

        return image_main(args[1:])
    from mini_kube.cli import main as cli_main

    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main())
