"""The twin-test record: how to draw a kernel's inputs and how close its twins must come to its reference."""

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class TwinCase:
    """``make_inputs(rng) -> (args, kwargs)``; tolerances for floating outputs; or a ``compare(ref, twin)``
    that raises AssertionError."""

    make_inputs: Callable
    rtol: float = 1e-10
    atol: float = 1e-12
    compare: Callable | None = None
