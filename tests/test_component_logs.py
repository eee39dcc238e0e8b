"""The components' log files (their mirror Pods' logs) stay under one total size however much the components log:
each component's files together keep an equal share of it, and each still ends with its latest records."""

from __future__ import annotations

import logging
from pathlib import Path

from mini_kube.component_logs import LOGGERS, MAX_FILES, ComponentLogs

TOTAL = 60 * 1024


def test_all_the_component_logs_together_stay_under_the_total(tmp_path: Path) -> None:
    components = list(LOGGERS)
    logs = ComponentLogs(str(tmp_path), components, total_size=TOTAL)
    try:
        for index in range(600):  # ~70 KiB of records per component, over 6 x 70 KiB in all
            for component in components:
                logging.getLogger(LOGGERS[component][0]).warning("record %04d of %s %s", index, component, "x" * 40)
    finally:
        logs.close()
    files = [path for path in tmp_path.iterdir() if path.is_file()]
    assert sum(path.stat().st_size for path in files) <= TOTAL
    for component in components:
        mine = [path for path in files if path.name.startswith(f"{component}.log")]
        assert 1 < len(mine) <= MAX_FILES  # rotated, not truncated to nothing
        assert sum(path.stat().st_size for path in mine) <= TOTAL // len(components)
        assert Path(logs.paths[component]).read_text().rstrip().endswith(f"record 0599 of {component} " + "x" * 40)
