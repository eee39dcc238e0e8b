"""Which revision automatic compaction may compact to.

History is kept for ``seconds`` or for the last ``revisions`` revisions, whichever keeps more. Time is
tracked by sampling (time, revision) after commits, at most once per ``granularity``; a revision counts
as written at the first sample taken after it, which errs on the side of keeping history longer.
Revisions found on disk at start-up count as written at start-up.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable


class Retention:
    def __init__(
        self,
        seconds: float,
        revisions: int,
        revision: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.seconds = seconds
        self.revisions = revisions
        self._clock = clock
        self._granularity = max(0.001, min(1.0, seconds / 20))
        self._samples: deque[tuple[float, int]] = deque([(clock(), revision)])
        self._expired = 0  # the newest revision known to be older than `seconds`

    def note(self, revision: int) -> None:
        """Record that ``revision`` has been committed by now (called after each commit; cheap)."""
        now = self._clock()
        last_t, last_rev = self._samples[-1]
        if revision > last_rev and now - last_t >= self._granularity:
            self._samples.append((now, revision))

    def target(self, current_revision: int) -> int:
        """The highest revision that may be compacted now (0: nothing)."""
        self.note(current_revision)
        cutoff = self._clock() - self.seconds
        samples = self._samples
        while len(samples) > 1 and samples[0][0] <= cutoff:
            self._expired = samples.popleft()[1]
        if samples[0][0] <= cutoff:
            self._expired = max(self._expired, samples[0][1])
        return max(0, min(self._expired, current_revision - self.revisions))
