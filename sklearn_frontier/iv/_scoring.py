"""Z-aware model selection: the projected residual error and its scorer."""


import numpy as np
import scipy.linalg
import scipy.sparse as sp
from sklearn.utils import check_array

from sklearn_frontier.iv._validation import _EPS, _weights


# ----------------------------------------------------------------------------------------------------------
# Z-aware scoring
# ----------------------------------------------------------------------------------------------------------
def projected_mse(y_true, y_pred, *, Z=None, sample_weight=None):
    """Mean squared residual projected onto the instruments: ``‖P_[1,Z] (y − ŷ)‖² / n_w``.

    The population version is zero at the structural function (and at anything agreeing with it on the
    instrumented span), unlike the MSE, which is minimised by ``E[y | X]`` and so rewards absorbing the
    confounding. Weighted rows use the √w metric. Cost O(n k²).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Observed outcomes.
    y_pred : array-like of shape (n_samples,)
        Predicted (structural) outcomes.
    Z : array-like of shape (n_samples, n_instruments)
        Required; None raises (with routing off a scorer receives no Z).
    sample_weight : array-like of shape (n_samples,), default=None
        Frequency weights.

    Returns
    -------
    loss : float
        Non-negative; lower is better.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.iv import projected_mse
    >>> projected_mse(np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 3.0]), Z=np.array([0.0, 1.0, 2.0]))
    0.0
    """
    if Z is None:
        raise ValueError("projected_mse needs the instruments Z. Pass Z=..., or enable metadata routing "
                         "(sklearn.set_config(enable_metadata_routing=True)) so that make_iv_scorer() receives "
                         "each test fold's Z from GridSearchCV.fit(X, y, Z=Z) / cross_validate(params={'Z': Z}).")
    y_true = check_array(y_true, ensure_2d=False, dtype=np.float64, input_name="y_true").ravel()
    y_pred = check_array(y_pred, ensure_2d=False, dtype=np.float64, input_name="y_pred").ravel()
    if sp.issparse(Z):
        raise TypeError("Sparse instruments Z are not supported; pass a dense array.")
    try:
        Z = check_array(Z, dtype=np.float64, ensure_2d=False, input_name="Z")
    except ValueError as exc:
        raise ValueError(f"Invalid instruments Z: {exc}") from exc
    Z = Z.reshape(-1, 1) if Z.ndim == 1 else Z
    if Z.shape[0] != y_true.shape[0]:
        raise ValueError(f"Z has {Z.shape[0]} samples but y_true has {y_true.shape[0]}.")
    if y_pred.shape != y_true.shape:
        raise ValueError(f"y_pred has {y_pred.shape[0]} samples but y_true has {y_true.shape[0]}.")
    w = _weights(sample_weight, y_true.reshape(-1, 1))
    sw = np.sqrt(w)
    A = sw[:, None] * np.column_stack([np.ones(y_true.shape[0]), Z])
    U, S, _ = scipy.linalg.svd(A, full_matrices=False, check_finite=False)
    U = U[:, S > max(A.shape) * _EPS * S[0]]
    proj = U.T @ (sw * (y_true - y_pred))
    return float(proj @ proj / w.sum())


def iv_loss(estimator, X, y, *, Z=None, W=None, sample_weight=None):
    """``projected_mse`` of a fitted IV model's structural prediction, controls included.

    With controls the prediction needs them (``predict(X, W=W)``) and they are their own instruments, so the
    residual is projected on ``[1, Z, W]``, as in the estimators' ``score``.
    """
    pred = estimator.predict(X) if W is None else estimator.predict(X, W=W)
    if W is not None and Z is not None:
        from sklearn_frontier.iv._validation import _validate_controls, _validate_instruments

        n = np.shape(X)[0]
        Z = np.hstack([_validate_instruments(Z, n), _validate_controls(W, n)])
    return projected_mse(y, pred, Z=Z, sample_weight=sample_weight)


class IVScorer:
    """Greater-is-better ``-projected_mse`` scorer that asks metadata routing for Z, W and sample weights.

    Build it with :func:`make_iv_scorer`. ``groups`` is accepted (the estimators take it for clustered
    covariances) and does not change the loss.
    """

    _ROUTED = ("Z", "W", "sample_weight")

    def __call__(self, estimator, X, y_true, *, Z=None, W=None, groups=None, sample_weight=None):
        return -iv_loss(estimator, X, y_true, Z=Z, W=W, sample_weight=sample_weight)

    def get_metadata_routing(self):
        """The score request: Z, W and sample_weight, each under its own name."""
        from sklearn.utils.metadata_routing import MetadataRequest

        request = MetadataRequest(owner=type(self).__name__)
        for param in self._ROUTED:
            request.score.add_request(param=param, alias=True)
        return request

    def __repr__(self):
        return "make_iv_scorer()"


def make_iv_scorer():
    """Greater-is-better scorer ``-projected_mse`` that requests Z and W through metadata routing.

    With routing on (``sklearn.set_config(enable_metadata_routing=True)``), ``GridSearchCV(...,
    scoring=make_iv_scorer()).fit(X, y, Z=Z, W=W)`` scores each test fold with its own Z and controls W
    (predictions use ``predict(X, W=W)``; the residual is projected on ``[1, Z, W]``, as the estimators'
    ``score`` does); ``sample_weight`` is routed too and ``groups`` is accepted. With routing off the scorer
    receives no Z and raises a ValueError asking to enable routing.

    Returns
    -------
    scorer : IVScorer
        ``scorer(estimator, X, y, Z=..., W=None, groups=None, sample_weight=None)`` returning ``-projected_mse``.

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
