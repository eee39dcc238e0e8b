"""`mini-kube image load ARCHIVE | ls | inspect IMAGE | rm IMAGE`: the images under the data dir (DATA_DIR/images), which the
nodes of a server on that data dir run (and `mini-kube node --image-store DIR`). Output as crictl's."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from .reference import parse
from .store import ImageStore, StoreError

DEFAULT_DATA_DIR = "~/.mini-kube"


def add_parser(sub: argparse._SubParsersAction) -> None:
    image = sub.add_parser("image", help="load, list and remove the images nodes run (docker-save and OCI archives)")
    verbs = image.add_subparsers(dest="verb", required=True)
    load = verbs.add_parser("load", help="load the images of a docker-save or OCI layout archive (.tar, .tar.gz)")
    load.add_argument("archive", help="the archive (`docker save -o app.tar app:dev`, an OCI layout tar)")
    load.add_argument("--name", default="", help="the name of the archive's one image (for an archive that "
                      "names none, or to name it otherwise), e.g. myapp:dev")
    listing = verbs.add_parser("ls", help="list the loaded images")
    listing.add_argument("-q", "--quiet", action="store_true", help="only the image IDs")
    inspect = verbs.add_parser("inspect", help="an image's ID, names, size and config (Entrypoint, Cmd, Env, "
                               "WorkingDir, User, ExposedPorts) as JSON")
    inspect.add_argument("image", help="a name (myapp:dev) or ID")
    remove = verbs.add_parser("rm", help="remove images by name or ID (the layers no other image uses go too)")
    remove.add_argument("images", nargs="+", help="names (myapp:dev) or IDs (a prefix of 4 or more will do)")
    for parser in (load, listing, inspect, remove):
        parser.add_argument("--data-dir", default=DEFAULT_DATA_DIR, help="the server's data dir (default "
                            "~/.mini-kube): images live in DATA_DIR/images")


def store_for(data_dir: str) -> ImageStore:
    return ImageStore(Path(data_dir).expanduser() / "images")


def human_size(size: int) -> str:
    """Sizes as crictl prints them (decimal units, four significant digits: `7.38MB`)."""
    value = float(size)
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if value < 1000 or unit == "TB":
            return f"{value:.4g}{unit}"
        value /= 1000
    return f"{value:.4g}PB"


def listing(store: ImageStore, quiet: bool) -> str:
    images = store.images()
    if quiet:
        return "".join(f"{i.image_id}\n" for i in images)
    rows = [("IMAGE", "TAG", "IMAGE ID", "SIZE")]
    for image in images:
        for name in image.names:
            ref = parse(name)
            rows.append((ref.name, ref.tag or "<none>", image.image_id[7:20], human_size(image.size)))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    return "".join(f"{r[0]:<{widths[0]}}   {r[1]:<{widths[1]}}   {r[2]:<{widths[2]}}   {r[3]}\n" for r in rows)


def inspected(store: ImageStore, what: str) -> str:
    """An image as JSON: its ID, names, size, and its config's run settings (the `config` of its config)."""
    image_id = store.image_id(what) or next((i.image_id for i in store.images() if len(what.removeprefix(
        "sha256:")) >= 4 and i.image_id[7:].startswith(what.removeprefix("sha256:"))), "")
    found = next((i for i in store.images() if i.image_id == image_id), None)
    if found is None:
        raise StoreError(f"no such image: {what}")
    config = found.record.get("config") or {}
    return json.dumps({"id": found.image_id, "names": list(found.names), "size": found.size,
                       "created": found.created, "os": config.get("os"), "architecture": config.get("architecture"),
                       "config": config.get("config") or {}}, indent=2) + "\n"


async def run(args: argparse.Namespace) -> None:
    store = store_for(args.data_dir)
    loop = asyncio.get_running_loop()
    try:
        if args.verb == "load":
            if not Path(args.archive).is_file():
                raise StoreError(f"{args.archive}: no such file")
            for image_id, names in await loop.run_in_executor(None, store.load, args.archive, args.name):
                for name in names:
                    print(f"Loaded image: {name} ({image_id})", flush=True)
        elif args.verb == "ls":
            sys.stdout.write(listing(store, args.quiet))
        elif args.verb == "inspect":
            sys.stdout.write(inspected(store, args.image))
        else:
            for what in args.images:
                for name in store.remove(what):
                    print(f"Deleted: {name}", flush=True)
    except StoreError as exc:
        raise SystemExit(f"mini-kube: image {args.verb}: {exc}") from None
    except OSError as exc:
        raise SystemExit(f"mini-kube: image {args.verb}: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": ")) from None


def main(argv: list[str]) -> int:
    """`mini-kube image ARGS...` on its own (mini_kube/entry.py), as `mini-kube` would parse it."""
    parser = argparse.ArgumentParser(prog="mini-kube")
    add_parser(parser.add_subparsers(dest="command", required=True))
    asyncio.run(run(parser.parse_args(["image", *argv])))
    return 0
