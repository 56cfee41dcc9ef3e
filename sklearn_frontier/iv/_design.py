"""The partialled IV design every weak-instrument test and diagnostic reads (built once per fit)."""

from dataclasses import dataclass

import numpy as np

from sklearn_frontier.iv._validation import _ControlDesign


@dataclass(frozen=True, eq=False)  # identity equality: a fit's design is one object (and a weak-reference key)
class PartialledDesign:
    """An IV model after the exogenous part is partialled out, in √w-scaled coordinates.

    By Frisch–Waugh–Lovell every weak-IV statistic of the treatments equals the one computed with the
    controls in both stages; so the tests see only the residualised outcome, treatments and instruments.

    Parameters
    ----------
    y : ndarray of shape (n,)
        ``√w ⊙`` the outcome residualised on the exogenous design C (intercept, controls W, absorbed effects).
    X : ndarray of shape (n, p)
        ``√w ⊙`` the treatments (or representation features) residualised on C.
    Uz : ndarray of shape (n, k)
        Orthonormal basis of ``√w ⊙`` the excluded instruments residualised on C (k is their rank).
    sw : ndarray of shape (n,)
        Square roots of the frequency weights.
    groups : ndarray of int of shape (n,) or None
        Cluster labels 0..G-1 (``cov_type="cluster"``), else None.
    n_weighted : float
        Sum of the weights (n without weights).
    n_partialled : float
        Rank of C: the intercept, the controls and the absorbed fixed-effect levels partialled out.
    cov_type : str
        "nonrobust", "HC0", "HC1" or "cluster".
    debiased : bool
        Whether robust covariances carry the small-sample factor.
    """

    y: np.ndarray
    X: np.ndarray
    Uz: np.ndarray
    sw: np.ndarray
    groups: np.ndarray | None
    n_weighted: float
    n_partialled: float
    cov_type: str
    debiased: bool

    @property
    def n_instruments(self):
        """Rank k of the partialled excluded instruments."""
        return self.Uz.shape[1]

    @property
    def df_resid(self):
        """Degrees of freedom of the reduced form ``n − k − rank(C)`` (ivmodels' ``n − k − m_C − 1``)."""
        return self.n_weighted - self.n_instruments - self.n_partialled

    @property
    def n_groups(self):
        """Number of clusters (0 without clusters)."""
        return 0 if self.groups is None else int(self.groups.max()) + 1


def build_design(D, y, w, Uz, *, controls=None, center=True, groups=None, cov_type="nonrobust", debiased=True,
                 n_absorbed=0.0):
    """The :class:`PartialledDesign` of features D, outcome y and instrument basis Uz (as ``_second_stage`` sees them).

    ``controls`` is the ``_ControlDesign`` of [1, W] (None: centring only, or nothing without an intercept);
    ``n_absorbed`` counts fixed-effect levels already demeaned out of D, y and the instruments before the call.
    """
    sw = np.sqrt(w)
    design = controls if controls is not None else _ControlDesign(None, w, center=center)
    if controls is None and center:
        n_w = w.sum()
        Dc, yc = D - (w @ D) / n_w, y - float(w @ y) / n_w
    elif controls is None:
        Dc, yc = D, y
    else:
        Dc, yc = controls.residual(D), controls.residual(y)
    return PartialledDesign(y=sw * yc, X=sw[:, None] * Dc, Uz=Uz, sw=sw, groups=groups, n_weighted=float(w.sum()),
                            n_partialled=float(design.rank) + float(n_absorbed), cov_type=cov_type,
                            debiased=bool(debiased))
