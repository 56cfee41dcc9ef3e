"""What every IV regressor's fit shares: covariance names, parameter constraints, metadata requests and inputs."""

from numbers import Real

import numpy as np
from sklearn.utils import check_random_state

from sklearn_frontier.iv._design import build_design
from sklearn_frontier.iv._inference import _second_stage
from sklearn_frontier.iv._validation import _ControlDesign, fit_side_arrays
from sklearn_frontier.utils._compat import Interval, StrOptions

COV_TYPES = StrOptions({"HC0", "HC1", "nonrobust", "cluster", "unadjusted", "robust", "clustered"})
# linearmodels' names: "robust" is HC0, or HC1 with debiased=True (its default is debiased=False).
_LINEARMODELS_COV = {"unadjusted": "nonrobust", "clustered": "cluster"}
THRESHOLD = [Interval(Real, 0, None, closed="left"), StrOptions({"stock-yogo"})]

# Every IV regressor asks metadata routing for the same side arrays.
FIT_REQUEST = {"Z": True, "W": True, "groups": True}
# The linear regressors that absorb fixed effects request them too.
FIT_REQUEST_ABSORB = {**FIT_REQUEST, "absorb": True}
# Frequency weights count observations (scikit-learn's meaning); analytic weights are relative precisions
# (linearmodels' and Stata's aweights), so their scale does not matter.
WEIGHT_TYPES = StrOptions({"frequency", "analytic"})
SCORE_REQUEST = {"Z": True, "W": True}
PREDICT_REQUEST = {"W": True}


def resolve_cov(cov_type, debiased):
    """``(cov_type, debiased)`` in this module's names, from ours or linearmodels'."""
    if cov_type == "robust":
        return ("HC1" if debiased else "HC0"), None
    return _LINEARMODELS_COV.get(cov_type, cov_type), debiased


def prepare_fit(est, X, Z, W, groups, w, *, center=True):
    """Validate Z, W and groups (recording their names and widths), resolve the covariance, set the bookkeeping."""
    n = X.shape[0]
    est.cov_type_, est._debiased_param = resolve_cov(est.cov_type, est.debiased)
    side = fit_side_arrays(est, n, Z=Z, W=W, groups=groups, cluster=est.cov_type_ == "cluster")
    k_w = est.n_controls_
    k_z = X.shape[1] if side.Z is None else side.Z.shape[1]
    if side.W is not None and n < k_z + k_w + 2:
        raise ValueError(f"n_samples={n} is too small for {k_z} instruments and {k_w} controls W: IV regression "
                         f"needs n_samples >= n_instruments + n_controls + 2 = {k_z + k_w + 2}.")
    est.has_intercept_ = bool(center)
    est.n_weighted_ = float(w.sum())
    est.n_groups_ = 0 if side.groups is None else int(side.groups.max()) + 1
    return side


def second_stage_for(est, D, y, w, Uz, W, groups, *, center=True):
    """The second stage of ``est`` on features D, with its covariance settings and the controls W."""
    controls = None if W is None else _ControlDesign(W, w, center=center)
    stats = _second_stage(D, y, w, Uz, center=center, cov_type=est.cov_type_, controls=controls, groups=groups,
                          debiased=est._debiased_param)
    # the partialled design the weak-IV tests and the effective F read (absorbed levels count as partialled)
    est._design_ = build_design(D, y, w, Uz, controls=controls, center=center, groups=groups, cov_type=est.cov_type_,
                                debiased=stats["debiased"], n_absorbed=getattr(est, "_n_absorbed_", 0.0))
    return stats


def split_halves(n, random_state, k):
    """Two sorted random halves of ``range(n)``, each large enough for k instruments."""
    rng = check_random_state(random_state)
    perm = rng.permutation(n)
    first, second = np.sort(perm[: n // 2]), np.sort(perm[n // 2:])
    if min(first.size, second.size) < k + 2:
        raise ValueError(f"split='sample' needs at least n_instruments + 2 = {k + 2} samples in each half; "
                         f"n_samples={n} is too small.")
    return first, second
