"""The test modules import what they share by its module path (`tests.protobuf.reference_vectors`), never from a
conftest by its bare name: `conftest` is whichever conftest pytest imported last, so `pytest
tests/protobuf/test_protobuf_errors.py tests/auth/test_auth_server.py` failed to collect (auth's conftest has no
VECTORS)."""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
BARE_CONFTEST = re.compile(r"^\s*(from\s+conftest\s+import|import\s+conftest\b)", re.M)


def test_no_test_module_imports_a_conftest_by_its_bare_name():
    found = [f"{path.relative_to(TESTS)}:{text[:match.start()].count(chr(10)) + 1}"
             for path in sorted(TESTS.rglob("*.py")) for text in [path.read_text()]
             for match in BARE_CONFTEST.finditer(text)]
    assert not found, found
