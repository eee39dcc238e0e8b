"""Helper process for the crash test: writes forever, printing each acknowledged write.

Usage: python crash_writer.py DB_PATH TAG. Prints one line per acknowledged write:
``ack <revision> <key> <value-hex>`` (value empty for a delete), flushed at once. It never exits on its
own; the test kills it with SIGKILL.
"""

from __future__ import annotations

import asyncio
import random
import sys

from mini_kube.store import ConflictError, KeyExistsError, KeyNotFoundError, Store


async def worker(s: Store, tag: str, n: int, rng: random.Random) -> None:
    i = 0
    while True:
        i += 1
        key = f"/crash/{rng.randrange(40)}"
        value = f"{tag}-{n}-{i}".encode() + rng.randbytes(rng.randrange(200))
        try:
            cur = await s.get(key)
            if cur is None:
                kv = await s.create(key, value)
            elif rng.random() < 0.15:
                kv = await s.delete(key, expected_mod_revision=cur.mod_revision)
                value = b""
            else:
                kv = await s.update(key, value, expected_mod_revision=cur.mod_revision)
        except (ConflictError, KeyExistsError, KeyNotFoundError):
            continue
        sys.stdout.write(f"ack {kv.mod_revision} {key} {value.hex()}\n")
        sys.stdout.flush()


async def main() -> None:
    path, tag = sys.argv[1], sys.argv[2]
    s = await Store.open(path, compact_interval=0)
    sys.stdout.write(f"open {s.revision}\n")
    sys.stdout.flush()
    await asyncio.gather(*(worker(s, tag, n, random.Random(f"{tag}{n}")) for n in range(8)))


if __name__ == "__main__":
    asyncio.run(main())
