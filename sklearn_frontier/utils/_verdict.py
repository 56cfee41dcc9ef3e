"""The verdict rule shared by the benchmarks and the demo: a difference is a decision only beyond two standard
errors over seeds; otherwise, and without spread on both sides, it is a tie."""

import math
from dataclasses import dataclass

import numpy as np

TIE_RTOL = 1e-9  # values within this relative distance are equal (the same estimator up to rounding)
N_SE = 2.0  # a difference within this many standard errors is a tie


@dataclass(frozen=True)
class Spread:
    """What one side of a comparison knows about its variation: the sd over seeds (ddof=1), the seed count, the
    per-seed values and the seeds they came from (entries not recorded are None)."""

    sd: float | None = None
    n: int | None = None
    per_seed: tuple | None = None
    seed_ids: tuple | None = None

    @classmethod
    def of(cls, values, seeds=None):
        """The spread of per-seed ``values`` (from ``seeds`` when given: pairable with another side's)."""
        values = tuple(float(v) for v in values)
        sd = float(np.std(values, ddof=1)) if len(values) > 1 else None
        return cls(sd, len(values), values, None if seeds is None else tuple(seeds))


def compare(a, b, ours, base, *, lower_is_better=True, deterministic=False):
    """The verdict of ours (mean ``a``, :class:`Spread` ``ours``) against a baseline (mean ``b``, ``base``).

    Returns ``(verdict, basis)``: ``verdict`` is ``"ours better"``, ``"baseline better"`` or ``"tie"``, and a
    difference decides only when it exceeds :data:`N_SE` standard errors. Where both sides carry per-seed values
    with seed ids, the standard error is that of the mean paired difference over the shared seeds (the stronger
    test); else Welch's unpaired standard error from each side's sd and count. Without spread on both sides (one
    seed, no sd) it is a tie, unless ``deterministic`` (the metric does not vary with the seed, e.g. a fixed weight
    table): then any difference beyond rounding decides. ``basis`` says which test decided, in words.
    """
    def direction(diff):
        return "ours better" if (diff < 0) == bool(lower_is_better) else "baseline better"

    if math.isclose(a, b, rel_tol=TIE_RTOL):
        return "tie", "equal values"
    if deterministic:
        return direction(a - b), "deterministic metric"
    if ours.seed_ids is not None and base.seed_ids is not None and ours.per_seed and base.per_seed:
        ours_by_seed = dict(zip(map(str, ours.seed_ids), ours.per_seed))
        base_by_seed = dict(zip(map(str, base.seed_ids), base.per_seed))
        shared = [s for s in ours_by_seed if s in base_by_seed]
        if len(shared) >= 2:
            diffs = np.array([ours_by_seed[s] - base_by_seed[s] for s in shared])
            mean, se = float(diffs.mean()), float(diffs.std(ddof=1) / math.sqrt(len(diffs)))
            basis = f"paired over {len(shared)} seeds: difference {mean:.3g} ± {se:.2g} (SE)"
            return (direction(mean) if abs(mean) > N_SE * se and mean != 0 else "tie"), basis
    if ours.sd is not None and base.sd is not None and (ours.n or 0) >= 2 and (base.n or 0) >= 2:
        se = math.sqrt(ours.sd ** 2 / ours.n + base.sd ** 2 / base.n)
        basis = f"unpaired over {ours.n} and {base.n} seeds: difference {a - b:.3g} ± {se:.2g} (SE)"
        return (direction(a - b) if abs(a - b) > N_SE * se else "tie"), basis
    return "tie", "no spread over seeds on both sides"
