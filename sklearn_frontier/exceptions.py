"""Warnings and errors raised by sklearn_frontier estimators."""

__all__ = []


# --- instrumental-variable regression (sklearn_frontier.iv) ---
class WeakInstrumentWarning(UserWarning):
    """The instruments barely move the learned treatment directions (Cragg–Donald below the threshold).

    Estimates and intervals are then unreliable (weak-IV bias towards OLS, non-normal sampling
    distribution). The message lists the first-stage singular values, per-direction F statistics and
    the Cragg–Donald statistic.
    """


class UnidentifiedInterventionWarning(UserWarning):
    """A requested treatment shift lies mostly outside the identified (instrumented) subspace.

    Only the part of the shift inside the span of the learned directions is identified by the
    instruments; the reported effect ignores the rest.
    """


class IVScoreWarning(UserWarning):
    """An IV regressor fitted with instruments was scored without them, so R² is used.

    R² on a confounded outcome rewards absorbing the confounding; pass ``Z`` (or use
    :func:`sklearn_frontier.iv.make_iv_scorer` with metadata routing) for model selection.
    """


__all__ += ["WeakInstrumentWarning", "UnidentifiedInterventionWarning", "IVScoreWarning"]


# --- configuration mixing (sklearn_frontier.configurations) ---
class ConfigurationFallbackWarning(UserWarning):
    """No partition passed the configuration filters (too few samples or no cluster structure).

    The extractor then keeps one fallback configuration: the partition at resolution 1 when it has
    at least two clusters, else the trivial one-cluster partition (its stability band width is 0).
    """


class UnlabelledRowsWarning(UserWarning):
    """Unlabelled rows went through ``MixConfigAugmenter.fit_transform``, as in a plain ``Pipeline``.

    The next step receives ``y`` unchanged and would learn the unlabelled marker (-1) as a class;
    :class:`sklearn_frontier.configurations.SemiSupervisedAugmentation` fits the augmenter on every row
    and the downstream estimator on the labelled rows only.
    """


__all__ += ["ConfigurationFallbackWarning", "UnlabelledRowsWarning"]


# --- saved state (sklearn_frontier.annotation state files and loop checkpoints) ---
class StateFileError(ValueError):
    """A state file is truncated, corrupted, foreign or of an unsupported version.

    The message names the file and the check that failed; the same are in ``path`` and ``check``
    (``"zip structure"``, ``"checksum"``, ``"missing member"``, ``"version"``, ``"tag"`` or
    ``"consistency"``). A ``ValueError``, so ``except ValueError`` keeps working.
    """

    def __init__(self, path, check, detail):
        self.path = None if path is None else str(path)
        self.check = check
        self.detail = detail
        where = f"{self.path}: " if self.path is not None else ""
        super().__init__(f"{where}invalid state file ({check} check failed): {detail}")

    def __reduce__(self):
        return type(self), (self.path, self.check, self.detail)


__all__ += ["StateFileError"]
