"""The one timing helper of the benchmarks: wall and process-CPU seconds (optionally the traced peak memory).

Two forms, one record:

* ``timed(func, repeats=3)`` calls ``func()`` and returns a :class:`Timing` (median, or best with
  ``stat="min"``, over the repeats; the last call's result in ``.result``);
* ``with Stopwatch() as sw: ...`` times an inline block; ``sw.wall_s`` / ``sw.cpu_s`` read the running time
  inside the block and the final time after it, ``sw.timing()`` gives the same :class:`Timing`.

CPU seconds (``time.process_time``: every thread of this process) are robust to other load on a shared machine
for single-threaded code; wall seconds are what a user waits. Ratios are only meaningful between timings taken in
the same run.
"""

import statistics
import time
import tracemalloc
from dataclasses import dataclass

STATS = {"median": statistics.median, "min": min}


@dataclass(frozen=True)
class Timing:
    """Wall and process-CPU seconds of a call (a statistic over repeats), its result and its memory peak.

    ``peak_mb`` is the largest tracemalloc peak over the repeats (Python and numpy allocations, in MB), or None
    when memory was not traced: tracing slows allocation-heavy code, so it is off unless asked for.
    """

    wall_s: float
    cpu_s: float
    result: object = None
    peak_mb: float | None = None
    repeats: int = 1


def timed(func, repeats=1, *, stat="median", trace_memory=False):
    """Call ``func()`` ``repeats`` times; the ``stat`` (``"median"`` or ``"min"``) of its wall and CPU seconds.

    Parameters
    ----------
    func : callable
        Called with no argument; wrap arguments in a lambda.
    repeats : int, default=1
        Number of calls; the result of the last one is kept.
    stat : {"median", "min"}, default="median"
        How the repeats are summarised (``"min"``: best of, for micro-benchmarks of deterministic code).
    trace_memory : bool, default=False
        Also record the tracemalloc peak (``Timing.peak_mb``); the timings then include tracing overhead.

    Returns
    -------
    Timing
    """
    if stat not in STATS:
        raise ValueError(f"stat must be one of {sorted(STATS)}, got {stat!r}")
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats!r}")
    walls, cpus, peaks, result = [], [], [], None
    for _ in range(repeats):
        with Stopwatch(trace_memory=trace_memory) as sw:
            result = func()
        walls.append(sw.wall_s)
        cpus.append(sw.cpu_s)
        peaks.append(sw.peak_mb)
    return Timing(wall_s=STATS[stat](walls), cpu_s=STATS[stat](cpus), result=result,
                  peak_mb=max(peaks) if trace_memory else None, repeats=repeats)


class Stopwatch:
    """Wall and CPU seconds of a ``with`` block; reading them inside the block gives the time so far.

    Examples
    --------
    >>> with Stopwatch() as sw:
    ...     total = sum(range(1000))
    >>> sw.wall_s >= 0 and sw.cpu_s >= 0
    True
    """

    def __init__(self, trace_memory=False):
        self.trace_memory = trace_memory
        self._start = self._stop = None
        self.peak_mb = None

    def start(self):
        """Start (or restart) timing; returns self, for ``sw = Stopwatch().start()`` outside a ``with``."""
        if self.trace_memory:
            tracemalloc.start()
        self._stop = None
        self._start = (time.perf_counter(), time.process_time())
        return self

    def stop(self):
        """Freeze the times (and the memory peak); returns self."""
        self._stop = (time.perf_counter(), time.process_time())
        if self.trace_memory:
            self.peak_mb = tracemalloc.get_traced_memory()[1] / 1e6
            tracemalloc.stop()
        return self

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    def _now(self, i):
        if self._start is None:
            raise RuntimeError("the stopwatch was never started")
        end = self._stop if self._stop is not None else (time.perf_counter(), time.process_time())
        return end[i] - self._start[i]

    @property
    def wall_s(self):
        return self._now(0)

    @property
    def cpu_s(self):
        return self._now(1)

    def timing(self, result=None):
        """The block's :class:`Timing` (``result``: what to carry along)."""
        return Timing(wall_s=self.wall_s, cpu_s=self.cpu_s, result=result, peak_mb=self.peak_mb)
