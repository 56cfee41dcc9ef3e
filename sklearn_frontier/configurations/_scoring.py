"""Scoring partly labelled targets: a scorer over the labelled rows, and a warning when scikit-learn's own scorers
are handed the unlabelled marker (they would count every unlabelled row as an error)."""

import sys

import numpy as np
from sklearn.metrics import get_scorer
from sklearn.utils import _safe_indexing

from sklearn_frontier.exceptions import UnlabelledRowsWarning
from sklearn_frontier.utils._warnings import warn_user

from ._targets import describe_marker, labelled_part, resolve_marker, target_array, unlabelled_rows

# How far up the stack a prediction looks for the scikit-learn scorer that called it: the scorer, its cached
# method caller, _get_response_values, a Pipeline's predict and its available_if wrapper, and some slack.
_SCORER_SEARCH_DEPTH = 16


def fitted_marker(estimator):
    """The unlabelled marker a fitted estimator read from its training target, or None: the estimator itself,
    the last step of a Pipeline, a search's best estimator."""
    for _ in range(8):
        if hasattr(estimator, "unlabelled_marker_"):
            return estimator.unlabelled_marker_
        if hasattr(estimator, "steps"):
            estimator = estimator.steps[-1][1]
        elif hasattr(estimator, "best_estimator_"):
            estimator = estimator.best_estimator_
        else:
            return None
    return None


class _LabelledScorer:
    """``scorer(estimator, X, y)`` over the labelled rows of ``y`` only (see :func:`make_labelled_scorer`)."""

    def __init__(self, scorer, unlabelled_marker, name):
        self.scorer = scorer
        self.unlabelled_marker = unlabelled_marker
        self.name = name

    def __repr__(self):
        return f"make_labelled_scorer({self.name!r}, unlabelled_marker={self.unlabelled_marker!r})"

    def __call__(self, estimator, X, y_true, sample_weight=None, **kwargs):
        y = target_array(y_true)
        if y.ndim == 2 and y.shape[1] == 1:
            y = y.ravel()
        marker = self.unlabelled_marker
        if marker == "auto":
            marker = fitted_marker(estimator)
        if marker is None or marker == "auto":
            marker = resolve_marker(y, "auto")
        rows, labels = labelled_part(y, marker)
        if rows.shape[0] == 0:
            raise ValueError(f"The labelled scorer needs at least one labelled row; every row of y is marked "
                             f"unlabelled by {describe_marker(marker)}.")
        if sample_weight is not None:
            kwargs["sample_weight"] = np.asarray(sample_weight)[rows]
        return self.scorer(estimator, _safe_indexing(X, rows), labels, **kwargs)


def make_labelled_scorer(scoring="accuracy", *, unlabelled_marker="auto"):
    """A scorer that scores the labelled rows of a partly labelled target only.

    scikit-learn's scorers (``scoring="accuracy"`` in ``cross_val_score`` or ``GridSearchCV``) compare the
    predictions with every test row's target, so each unlabelled row counts as an error. This scorer drops the
    unlabelled rows of each test fold first, then applies ``scoring`` to the rest.

    Read more in the :ref:`User Guide <user_guide_configurations>`.

    Parameters
    ----------
    scoring : str or callable, default="accuracy"
        A scikit-learn scorer name (``"accuracy"``, ``"balanced_accuracy"``, ``"f1_macro"``, ``"neg_log_loss"``,
        ``"r2"``, ...) or a scorer callable ``scorer(estimator, X, y)`` such as one from
        :func:`sklearn.metrics.make_scorer`.
    unlabelled_marker : "auto", "missing", int, float or str, default="auto"
        What marks an unlabelled row. ``"auto"`` takes the marker the fitted estimator read from its training
        target (``unlabelled_marker_`` of a :class:`SemiSupervisedAugmentation` or
        :class:`MixConfigAugmenter`, also as the last step of a Pipeline), so that every fold is read as the
        training rows were; for other estimators it applies the ``"auto"`` rule of
        :class:`MixConfigAugmenter` to the test target. Other values as in :class:`MixConfigAugmenter`.

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y, sample_weight=None)``, for ``scoring=`` of ``cross_val_score``,
        ``cross_validate`` and ``GridSearchCV``.

    See Also
    --------
    SemiSupervisedAugmentation.score : The same score when ``scoring=None``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import cross_val_score
    >>> from sklearn_frontier.configurations import MixConfigAugmenter, SemiSupervisedAugmentation
    >>> from sklearn_frontier.configurations import make_labelled_scorer
    >>> from sklearn_frontier.datasets import make_two_regime_hierarchy
    >>> X, y, _ = make_two_regime_hierarchy(n_per_subblob=10, n_per_coarse=60, random_state=0)
    >>> y_partial = np.where(np.random.default_rng(0).random(y.shape[0]) < 0.3, y, -1)
    >>> model = SemiSupervisedAugmentation(LogisticRegression(max_iter=1000),
    ...                                    MixConfigAugmenter(n_resolutions=8, n_restarts=1, max_epochs=30,
    ...                                                       random_state=0))
    >>> labelled = cross_val_score(model, X, y_partial, cv=3, scoring=make_labelled_scorer("accuracy"))
    >>> own = cross_val_score(model, X, y_partial, cv=3)  # the estimator's score skips unlabelled rows too
    >>> bool(np.allclose(labelled, own))
    True
    """
    if unlabelled_marker is None:
        raise ValueError("unlabelled_marker must be 'auto', 'missing', a number or a string, got None; "
                         "use 'missing' for missing values.")
    name = scoring if isinstance(scoring, str) else getattr(scoring, "__name__", repr(scoring))
    scorer = get_scorer(scoring) if isinstance(scoring, str) else scoring
    if not callable(scorer):
        raise ValueError(f"scoring must be a scorer name or a callable scorer, got {scoring!r}.")
    return _LabelledScorer(scorer, unlabelled_marker, name)


def _scorer_targets():
    """``y_true`` of the scikit-learn scorer whose prediction is running, or None when no scorer called it."""
    frame = sys._getframe(2)
    for _ in range(_SCORER_SEARCH_DEPTH):
        if frame is None:
            return None
        if frame.f_code.co_name == "_score" and frame.f_globals.get("__name__") == "sklearn.metrics._scorer":
            return frame.f_locals.get("y_true")
        frame = frame.f_back
    return None


def warn_if_scorer_sees_marker(marker):
    """Warn (at the user's line) when a scikit-learn scorer is about to compare predictions with a target that
    holds unlabelled rows: every one of them would count as an error."""
    y_true = _scorer_targets()
    if y_true is None:
        return
    try:
        y = target_array(y_true)
        n_unlabelled = int(unlabelled_rows(y.ravel(), marker).sum())
    except (TypeError, ValueError):  # a target this rule cannot read is the scorer's to refuse
        return
    if n_unlabelled:
        warn_user(f"A scikit-learn scorer is scoring {n_unlabelled} of {y.shape[0]} rows whose target is the "
                  f"unlabelled marker ({describe_marker(marker)}); it counts each of them as an error. Pass "
                  "scoring=make_labelled_scorer('accuracy') (from sklearn_frontier.configurations), or "
                  "scoring=None to use this estimator's score, which ignores unlabelled rows.",
                  UnlabelledRowsWarning)
