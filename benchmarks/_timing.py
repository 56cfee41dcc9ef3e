"""The one timing helper of the benchmarks: wall and process-CPU seconds of a call, medians over repeats."""

import statistics
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Timing:
    """Median wall and process-CPU seconds over the repeats, and the last call's result."""

    wall_s: float
    cpu_s: float
    result: object = None


def timed(func, repeats=1):
    """Call ``func()`` ``repeats`` times; the medians of its wall and CPU seconds, and its last result.

    CPU seconds (``time.process_time``, all threads of the process) are robust to other load on a shared machine
    for single-threaded code; wall seconds are what a user waits.
    """
    walls, cpus, result = [], [], None
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        result = func()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return Timing(wall_s=statistics.median(walls), cpu_s=statistics.median(cpus), result=result)
