"""Z-aware model selection: the projected residual error, the loss of a fitted model, and its scorer."""

import numpy as np
import scipy.linalg
from sklearn.utils import check_array
from sklearn.utils.metadata_routing import MetadataRequest

from sklearn_frontier.iv._validation import _EPS, _validate_side_array, _weights, check_side_arrays

_ROUTING_HINT = ("Pass Z=..., or enable metadata routing (sklearn.set_config(enable_metadata_routing=True)) so that "
                 "make_iv_scorer() receives each test fold's Z (and W) from GridSearchCV.fit(X, y, Z=Z, W=W) / "
                 "cross_validate(params={'Z': Z, 'W': W}).")


def projected_mse(y_true, y_pred, *, Z=None, W=None, sample_weight=None):
    """Mean squared residual projected onto the instruments and controls: ``‖P_[1, Z, W] (y − ŷ)‖² / n_w``.

    Read more in the :doc:`User Guide </guide/iv>`.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Observed outcomes.
    y_pred : array-like of shape (n_samples,)
        Predicted (structural) outcomes.
    Z : array-like of shape (n_samples, n_instruments)
        Instruments; required (None raises, which is what a scorer receives with metadata routing off).
    W : array-like of shape (n_samples, n_controls), default=None
        Exogenous controls of these samples; they are their own instruments, so they join the projection.
    sample_weight : array-like of shape (n_samples,), default=None
        Frequency weights.

    Returns
    -------
    loss : float
        Non-negative; lower is better.

    See Also
    --------
    make_iv_scorer : The greater-is-better scorer built on this loss.

    Notes
    -----
    The population version is zero at the structural function (and at anything agreeing with it on the
    instrumented span), unlike the MSE, which is minimised by ``E[y | X]`` and so rewards absorbing the
    confounding. Weighted rows use the √w metric. Cost O(n k²) for k = 1 + n_instruments + n_controls.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.iv import projected_mse
    >>> projected_mse(np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 3.0]), Z=np.array([0.0, 1.0, 2.0]))
    0.0
    """
    if Z is None:
        raise ValueError(f"projected_mse needs the instruments Z. {_ROUTING_HINT}")
    y_true = check_array(y_true, ensure_2d=False, dtype=np.float64, input_name="y_true").ravel()
    y_pred = check_array(y_pred, ensure_2d=False, dtype=np.float64, input_name="y_pred").ravel()
    n = y_true.shape[0]
    if y_pred.shape != y_true.shape:
        raise ValueError(f"y_pred has {y_pred.shape[0]} samples but y_true has {n}.")
    blocks = [np.ones((n, 1))] + [A for A in (_side(Z, n, "Z"), _side(W, n, "W")) if A is not None]
    w = _weights(sample_weight, y_true.reshape(-1, 1))
    sw = np.sqrt(w)
    A = sw[:, None] * np.hstack(blocks)
    U, S, _ = scipy.linalg.svd(A, full_matrices=False, check_finite=False)
    U = U[:, S > max(A.shape) * _EPS * S[0]]
    proj = U.T @ (sw * (y_true - y_pred))
    return float(proj @ proj / w.sum())


def _side(A, n, name):
    try:
        return _validate_side_array(A, n, name)
    except ValueError as exc:
        raise ValueError(str(exc).replace("but X has", "but y_true has")) from exc


def _final_step(estimator):
    """The last step of a Pipeline (recursively), else the estimator: the one that was fitted with Z and W."""
    while hasattr(estimator, "steps"):
        estimator = estimator.steps[-1][1]
    return estimator


def iv_loss(estimator, X, y, *, Z=None, W=None, sample_weight=None):
    """``projected_mse`` of a fitted model's structural prediction, its controls included.

    Z and W go through the same check as ``predict`` (names and widths against those seen at fit) when the model
    (or a Pipeline's last step) is one of this package's IV estimators; the prediction is ``predict(X, W=W)``.
    """
    if Z is None:
        raise ValueError(f"The IV loss needs the instruments Z of the scored samples. {_ROUTING_HINT}")
    final = _final_step(estimator)
    if hasattr(final, "instrument_feature_names_in_"):
        check_side_arrays(final, np.shape(Z)[0], Z=Z)
    pred = estimator.predict(X) if W is None else estimator.predict(X, W=W)
    return projected_mse(y, pred, Z=Z, W=W, sample_weight=sample_weight)


class IVScorer:
    """Greater-is-better ``-projected_mse`` scorer of a fitted IV model; it asks metadata routing for Z and W.

    Build it with :func:`make_iv_scorer`.
    """

    _PARAMS = ("Z", "W", "groups", "sample_weight")

    def __init__(self):
        # groups is accepted (the estimators take it) but not requested: it does not change the loss.
        self._requests = {"Z": True, "W": True, "groups": False, "sample_weight": True}

    def __call__(self, estimator, X, y_true, *, Z=None, W=None, groups=None, sample_weight=None):
        """Score a fitted model: ``-projected_mse(y_true, estimator.predict(X, W=W), Z=Z, W=W)``.

        Parameters
        ----------
        estimator : estimator or Pipeline
            A fitted IV regressor, or a Pipeline ending in one.
        X : array-like of shape (n_samples, n_features)
            Treatments of the scored samples.
        y_true : array-like of shape (n_samples,)
            Their outcomes.
        Z : array-like of shape (n_samples, n_instruments)
            Their instruments (required).
        W : array-like of shape (n_samples, n_controls), default=None
            Their controls (required after a fit with W).
        groups : array-like of shape (n_samples,), default=None
            Cluster labels; accepted like the estimators accept them, they do not change the loss.
        sample_weight : array-like of shape (n_samples,), default=None
            Frequency weights.

        Returns
        -------
        score : float
            ``-projected_mse``; greater is better, at most 0.
        """
        return -iv_loss(estimator, X, y_true, Z=Z, W=W, sample_weight=sample_weight)

    def set_score_request(self, **requests):
        """Set which metadata the scorer requests from routing (as scikit-learn scorers' ``set_score_request``).

        Parameters
        ----------
        **requests : dict of {str: bool, None or str}
            For ``Z``, ``W``, ``groups`` and ``sample_weight``: True requests it, False leaves it out (the
            default of ``groups``), None raises if it is passed, a string requests it under that alias.

        Returns
        -------
        self : IVScorer
            The scorer, for chaining.
        """
        for name, value in requests.items():
            if name not in self._PARAMS:
                raise TypeError(f"set_score_request got an unexpected argument {name!r}; the scorer takes "
                                f"{list(self._PARAMS)}.")
            if not (value is None or isinstance(value, (bool, str))):
                raise ValueError(f"The request for {name!r} must be True, False, None or an alias string, got "
                                 f"{value!r}.")
            self._requests[name] = value
        return self

    def get_metadata_routing(self):
        """The score request: Z, W and sample_weight by default, each under its own name.

        Returns
        -------
        routing : MetadataRequest
            The request that GridSearchCV and cross_validate read.
        """
        request = MetadataRequest(owner=type(self).__name__)
        for param, alias in self._requests.items():
            request.score.add_request(param=param, alias=alias)
        return request

    def __repr__(self):
        return "make_iv_scorer()"


def make_iv_scorer():
    """Make the greater-is-better scorer ``-projected_mse`` that requests Z and W through metadata routing.

    Read more in the :doc:`User Guide </guide/iv>`.

    With routing on (``sklearn.set_config(enable_metadata_routing=True)``), ``GridSearchCV(...,
    scoring=make_iv_scorer()).fit(X, y, Z=Z, W=W)`` scores each test fold with its own Z and controls W:
    predictions use ``predict(X, W=W)`` and the residual is projected on ``[1, Z, W]``, exactly as the
    estimators' ``score``. ``sample_weight`` is routed too and ``groups`` is accepted. Z and W are checked
    against the fitted model like X (names and widths). With routing off the scorer receives no Z and raises a
    ValueError asking to enable routing (GridSearchCV reports it as "Scoring failed" for every fold).

    Returns
    -------
    scorer : IVScorer
        ``scorer(estimator, X, y, Z=..., W=None, groups=None, sample_weight=None)`` returning ``-projected_mse``.

    See Also
    --------
    projected_mse : The loss.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.datasets import make_iv_many_treatments
    >>> from sklearn_frontier.iv import InstrumentGuidedIVRegressor, make_iv_scorer
    >>> X, y, Z = make_iv_many_treatments(n_samples=300, random_state=0)[:3]
    >>> W = np.random.default_rng(0).normal(size=(300, 2))
    >>> model = InstrumentGuidedIVRegressor().fit(X, y, Z=Z, W=W)
    >>> bool(make_iv_scorer()(model, X, y, Z=Z, W=W) <= 0)
    True
    """
    return IVScorer()
