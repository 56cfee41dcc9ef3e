"""Weak-instrument-robust tests and confidence sets: Anderson–Rubin, conditional likelihood ratio and LM (K).

Every statistic is computed on a :class:`~sklearn_frontier.iv._design.PartialledDesign`, the outcome,
treatments and excluded instruments with the intercept, the controls and absorbed effects partialled out
(√w-scaled). With U an orthonormal basis of the instruments, ``P_Z v = U Uᵀv``: for the stacked columns
S = [y, X_interest, X_nuisance], the Gram matrices ``H = (UᵀS)ᵀUᵀS`` and ``G − H`` (``G = SᵀS``) give
every homoskedastic statistic at any β in O(s³), and the robust ones need the k × k meat of the
reduced-form residuals, quadratic in (1, −β).

Homoskedastic (``cov_type="nonrobust"``) statistics are those of ivmodels (Londschien), with controls as its
``C`` and the other treatments, when one coefficient is tested, as its ``W`` (endogenous, not of interest):
- AR(β) = (n−k−m_C)/k · ‖P_Z e‖² / ‖M_Z e‖², e = y − Xβ, p-value from χ²(k)/k; for one coefficient of
  several treatments the subvector statistic minimises over the others and uses χ²(k − m_W)/(k − m_W)
  (Guggenberger, Kleibergen, Mavroeidis & Chen 2012).
- CLR (Moreira 2003; Kleibergen 2007): k·AR(β) − k·min AR, conditional on the concentration statistic;
  with several treatments the bound conditional on its smallest eigenvalue.
- LM: Kleibergen's K statistic, χ²(number of tested coefficients).

Robust (``"HC0"``, ``"HC1"``, ``"cluster"``): AR is the Wald test of the instruments in the regression of
e = y − Xβ₀ on them, with the sandwich of the fit's ``cov_type`` (χ²(k)); one coefficient of several
treatments is tested by *projection*, the minimum over the other coefficients, still with χ²(k)
(conservative). LM and CLR are Kleibergen's (2005, 2007) GMM versions, for one tested coefficient with no
other treatment.
"""

import weakref

import numpy as np
import scipy.integrate
import scipy.linalg
import scipy.optimize
import scipy.special
from scipy.stats import chi2

from sklearn_frontier.iv._diagnostics import robust_scale
from sklearn_frontier.utils._compat import check_is_fitted

METHODS = ("AR", "CLR", "LM")


# ----------------------------------------------------------------------------------------------------------
# the tested hypothesis in the design's coordinates
# ----------------------------------------------------------------------------------------------------------
class _Problem:
    """Columns S = [y, X_interest (q), X_nuisance (m)] with the Gram and meat pieces every statistic uses."""

    def __init__(self, design, interest, nuisance):
        k = design.n_instruments
        df = design.df_resid
        if df <= 0:
            raise ValueError(
                f"Weak-IV tests need more samples than instruments: n_samples={design.n_weighted:g} leaves "
                f"n_samples - n_instruments - n_partialled = {df:g} <= 0 degrees of freedom with n_instruments={k} "
                f"and {design.n_partialled:g} partialled columns (intercept, controls W, absorbed levels).")
        self.design = design
        self.q, self.m, self.k, self.df = interest.shape[1], nuisance.shape[1], k, df
        S = np.column_stack([design.y, interest, nuisance])
        self.US = design.Uz.T @ S
        self.H = self.US.T @ self.US
        self.Mg = S.T @ S - self.H
        self.Mg = 0.5 * (self.Mg + self.Mg.T)
        self.robust = design.cov_type != "nonrobust"
        if self.robust:
            self._meat_tensor(S)

    def _meat_tensor(self, S):
        d = self.design
        U = d.Uz
        resid = S - U @ self.US  # √w-scaled reduced-form residuals of every column
        if d.groups is None:
            raw = np.divide(resid, d.sw[:, None], out=np.zeros_like(resid), where=d.sw[:, None] > 0)
            rows = U[:, :, None] * raw[:, None, :]  # frequency weights: U carries √w, the residual is raw
            self.T = np.einsum("ija,ilb->abjl", rows, rows)
            k_reg = self.k + d.n_partialled
            self.factor = robust_scale("HC", d.debiased, d.n_weighted, k_reg, 0)
        else:
            G = d.n_groups
            if G <= self.k:
                raise ValueError(f"The cluster-robust weak-IV tests need more clusters than instruments: groups has "
                                 f"{G} clusters for n_instruments={self.k}.")
            sums = np.zeros((G, self.k, S.shape[1]))
            np.add.at(sums, d.groups, U[:, :, None] * resid[:, None, :])
            self.T = np.einsum("gja,glb->abjl", sums, sums)
            self.factor = robust_scale("cluster", d.debiased, d.n_weighted, self.k + d.n_partialled, G)

    def coords(self, beta, gamma=None):
        """Coefficient vectors c (s,) with S c = y − X_interest β − X_nuisance γ, for a batch of β (b, q)."""
        beta = np.atleast_2d(beta)
        b = beta.shape[0]
        gamma = np.zeros((b, self.m)) if gamma is None else np.atleast_2d(gamma)
        return np.column_stack([np.ones(b), -beta, -gamma])

    def meat(self, c1, c2):
        """Robust covariance (with its small-sample factor) between the moments of S c1 and S c2, (b, k, k)."""
        return self.factor * np.einsum("na,nb,abjl->njl", c1, c2, self.T)


def _ratio(prob, c):
    """‖P_Z S c‖² / ‖M_Z S c‖² for each row of c."""
    num = np.einsum("na,ab,nb->n", c, prob.H, c)
    den = np.einsum("na,ab,nb->n", c, prob.Mg, c)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / den, np.inf)


def _pencil_min(A, B, count=1):
    """The smallest ``count`` generalized eigenvalues of (A, B) and the eigenvectors (B positive definite)."""
    return scipy.linalg.eigh(0.5 * (A + A.T), 0.5 * (B + B.T), subset_by_index=[0, count - 1])


def _nuisance_pencil(prob, beta):
    """The subvector pencil of [y − X_interest β, X_nuisance] for one β: its two Gram blocks."""
    s = 1 + prob.q
    T = np.zeros((s + prob.m, 1 + prob.m))
    T[:s, 0] = prob.coords(beta[None, :])[0, :s]
    T[s:, 1:] = np.eye(prob.m)
    return T.T @ prob.H @ T, T.T @ prob.Mg @ T


# ----------------------------------------------------------------------------------------------------------
# Anderson–Rubin
# ----------------------------------------------------------------------------------------------------------
def _robust_ar(prob, c):
    """Robust AR (Wald of the instruments in the reduced form of S c, divided by k) for each row of c."""
    c = c / np.linalg.norm(c, axis=1)[:, None]  # the statistic is scale-free in c; far β stays well conditioned
    f = c @ prob.US.T  # (b, k) = Uᵀ S c
    V = prob.meat(c, c)
    sol = np.linalg.solve(V, f[:, :, None])[:, :, 0]
    return np.einsum("nj,nj->n", f, sol) / prob.k


def _ar(prob, beta):
    """AR statistics and p-values for a batch of β (b, q)."""
    k, m, df = prob.k, prob.m, prob.df
    if m == 0:
        c = prob.coords(beta)
        if prob.robust:
            stat = _robust_ar(prob, c)
        else:
            stat = _ratio(prob, c) * df / k
        return stat, chi2.sf(stat * k, k)
    if prob.robust:
        stat, gamma = np.empty(len(beta)), None
        for i, b in enumerate(beta):  # each minimiser warm-starts the next β (the grid is sorted)
            stat[i], gamma = _projected_robust_ar(prob, b, gamma)
        return stat, chi2.sf(stat * k, k)
    dfn = k - m
    stat = np.empty(len(beta))
    for i, b in enumerate(beta):
        A, B = _nuisance_pencil(prob, b)
        stat[i] = _pencil_min(A, B)[0][0] * df / dfn
    return stat, chi2.sf(stat * dfn, dfn)


def _robust_ar_and_gradient(prob, c):
    """Robust AR at one c (s,) and its gradient in c: with u = V⁻¹f, ∂AR/∂c = 2(USᵀu − factor·(uᵀT_ab u) c)/k."""
    f = prob.US @ c
    V = prob.factor * np.einsum("a,b,abjl->jl", c, c, prob.T)
    u = np.linalg.solve(V, f)
    quad = np.einsum("j,abjl,l->ab", u, prob.T, u)
    return float(f @ u) / prob.k, 2.0 * (prob.US.T @ u - prob.factor * quad @ c) / prob.k


def _projected_robust_ar(prob, beta, start=None):
    """``min over γ`` of the robust AR at (β, γ): the projection test of β with the other coefficients free.

    Returns the minimum and its minimiser (``start``, e.g. the minimiser at a neighbouring β, is tried as a
    second starting point beside the homoskedastic one).
    """
    A, B = _nuisance_pencil(prob, beta)
    vec = _pencil_min(A, B)[1][:, 0]
    # The homoskedastic minimiser (a LIML-type estimate of γ given β) starts the search.
    gamma0 = -vec[1:] / vec[0] if abs(vec[0]) > 1e-12 * np.abs(vec).max() else np.zeros(prob.m)
    head = prob.coords(beta[None, :])[0, :1 + prob.q]

    def objective(gamma):
        value, grad = _robust_ar_and_gradient(prob, np.concatenate([head, -gamma]))
        return value, -grad[1 + prob.q:]

    starts = [gamma0] + ([start] if start is not None else [])
    x0 = min(starts, key=lambda g: objective(g)[0])
    best = scipy.optimize.minimize(objective, x0, jac=True, method="BFGS")
    return float(best.fun), best.x


# ----------------------------------------------------------------------------------------------------------
# CLR and LM
# ----------------------------------------------------------------------------------------------------------
def clr_pvalue(k, mx, lam, z, tol=1e-6):
    """P[CLR > z] given the conditioning statistic ``lam`` (smallest eigenvalue), Moreira (2003) / Kleibergen (2007).

    Exact for one tested coefficient, an upper bound otherwise; the integral of Hillier (2009) as ivmodels
    evaluates it (``conditional_likelihood_ratio_critical_value_function``).
    """
    if z <= 0:
        return 1.0
    if k == mx or lam <= 0:
        return float(chi2.sf(z, k))
    a_, b_ = (k - mx) / 2.0, mx / 2.0
    a = lam / (z + lam)
    const = np.power(a, -a_ - b_ + 1) / scipy.special.beta(a_, b_)
    res = scipy.integrate.quad(lambda u: const * scipy.special.gammainc(k / 2.0, z / 2.0 / u), 1 - a, 1,
                               weight="alg", wvar=(b_ - 1, a_ - 1), epsabs=tol)[0]
    return float(max(np.finfo(np.float64).eps, 1 - res))


def _tilde_coords(prob, c):
    """Coordinates of X̃(β) = X − e (eᵀM_Z X)/(eᵀM_Z e) for one c: (s, q)."""
    s = c.shape[0]
    D = np.zeros((s, prob.q))
    D[1:1 + prob.q] = np.eye(prob.q)
    scale = (c @ prob.Mg @ D) / (c @ prob.Mg @ c)
    return D - np.outer(c, scale)


def _solve(A, b):
    """``A⁻¹b`` for a symmetric positive semi-definite A, pseudo-inverse on its numerically null directions."""
    return np.linalg.lstsq(0.5 * (A + A.T), b, rcond=1e-12)[0]


def _kleibergen(prob, c):
    """Kleibergen's robust pieces at one c: (AR·k, K, rk) with the fit's sandwich (one tested coefficient for rk).

    All three are invariant to the scale of c, so c is normalised (far β stays well conditioned).
    """
    c = c / np.linalg.norm(c)
    q = prob.q
    D = np.zeros((c.shape[0], q))
    D[1:1 + q] = np.eye(q)
    # Adding multiples of the null moment to the Jacobian's leaves D̃ and the Schur complement unchanged;
    # orthogonal to c they stay apart when β is far (else both point along x and the complement cancels).
    D = D - np.outer(c, c @ D)
    f = prob.US @ c
    Vff = prob.meat(c[None], c[None])[0]
    Vff_inv_f = _solve(Vff, f)
    Dt = np.empty((prob.k, q))
    for j in range(q):
        Vgf = prob.meat(D[:, j][None], c[None])[0]
        # the moments' Jacobian is −Uᵀx; its sign cancels in K and rk
        Dt[:, j] = prob.US @ D[:, j] - Vgf @ Vff_inv_f
    Vff_inv_D = _solve(Vff, Dt)
    proj = Dt.T @ Vff_inv_f
    K = float(proj @ _solve(Dt.T @ Vff_inv_D, proj))
    ar = float(f @ Vff_inv_f)
    rk = np.nan
    if q == 1:
        Vgf = prob.meat(D[:, 0][None], c[None])[0]
        Vgg = prob.meat(D[:, 0][None], D[:, 0][None])[0]
        cond = Vgg - Vgf @ _solve(Vff, Vgf.T)
        rk = float(Dt[:, 0] @ _solve(cond, Dt[:, 0]))
    return ar, K, rk


def _lm(prob, beta):
    stats = np.empty(len(beta))
    for i, c in enumerate(prob.coords(beta)):
        if prob.robust:
            stats[i] = _kleibergen(prob, c)[1]
        else:
            T = _tilde_coords(prob, c)
            proj = T.T @ prob.H @ c
            stats[i] = prob.df * float(proj @ np.linalg.lstsq(T.T @ prob.H @ T, proj, rcond=None)[0]) \
                / float(c @ prob.Mg @ c)
    return stats, chi2.sf(stats, prob.q)


def _clr(prob, beta):
    k, q, m, df = prob.k, prob.q, prob.m, prob.df
    stats, pvals = np.empty(len(beta)), np.empty(len(beta))
    if prob.robust:
        for i, c in enumerate(prob.coords(beta)):
            ar, K, rk = _kleibergen(prob, c)
            J = ar - K
            stats[i] = 0.5 * (ar - rk + np.sqrt(max((ar + rk) ** 2 - 4 * J * rk, 0.0)))
            pvals[i] = clr_pvalue(k, 1, rk, stats[i])
        return stats, pvals
    if m == 0:
        ar_min = _pencil_min(prob.H, prob.Mg)[0][0]
        for i, c in enumerate(prob.coords(beta)):
            T = _tilde_coords(prob, c)
            lam = scipy.linalg.eigh(T.T @ prob.H @ T, T.T @ prob.Mg @ T, eigvals_only=True)[0] * df
            stats[i] = df * (float(c @ prob.H @ c) / float(c @ prob.Mg @ c) - ar_min)
            pvals[i] = clr_pvalue(k, q, lam, stats[i])
        return stats, pvals
    ev = _pencil_min(prob.H, prob.Mg, count=2)[0]
    for i, b in enumerate(beta):
        A, B = _nuisance_pencil(prob, b)
        ar = _pencil_min(A, B)[0][0]
        stats[i] = df * (ar - ev[0])
        pvals[i] = clr_pvalue(k - m, q, df * (ev[0] + ev[1] - ar), stats[i])
    return stats, pvals


_TESTS = {"AR": _ar, "CLR": _clr, "LM": _lm}


def check_method(method, prob):
    """Validate ``method`` for this problem and covariance; the error names the parameter."""
    if method not in _TESTS:
        raise ValueError(f"method must be one of {list(METHODS)}, got method={method!r}.")
    if method == "AR":
        return
    if prob.m > 0 and method == "LM":
        raise ValueError("method='LM' tests all treatments jointly or one treatment of a one-treatment model; for "
                         "one coefficient of several treatments use method='AR' (subvector) or 'CLR'.")
    if prob.robust and (prob.m > 0 or (method == "CLR" and prob.q > 1)):
        raise ValueError(f"method={method!r} under cov_type={prob.design.cov_type!r} is Kleibergen's robust version, "
                         "defined here for one tested coefficient with no other treatment (or LM of all "
                         "treatments jointly); use method='AR' (robust, by projection) instead.")


def run_test(prob, beta, method):
    """(statistics, p-values) of ``method`` for a batch of β of shape (b, q)."""
    return _TESTS[method](prob, np.atleast_2d(np.asarray(beta, dtype=np.float64)))


# ----------------------------------------------------------------------------------------------------------
# inversion: the confidence set of one coefficient
# ----------------------------------------------------------------------------------------------------------
def _quadratic_set(prob, alpha):
    """Exact homoskedastic AR set of one coefficient with no other treatment: {β : a β² + b β + c ≤ 0}."""
    kappa = chi2.ppf(1 - alpha, prob.k) / prob.df
    R = prob.H - kappa * prob.Mg
    a, b, c = R[1, 1], -2.0 * R[0, 1], R[0, 0]
    scale = max(abs(a), abs(b), abs(c), np.finfo(float).tiny)
    if abs(a) <= 1e-14 * scale:
        if abs(b) <= 1e-14 * scale:
            return [(-np.inf, np.inf)] if c <= 0 else []
        root = -c / b
        return [(-np.inf, root)] if b > 0 else [(root, np.inf)]
    disc = b * b - 4 * a * c
    if disc < 0:
        return [] if a > 0 else [(-np.inf, np.inf)]
    sq = np.sqrt(disc)
    # the root formula without cancellation
    t = -0.5 * (b + np.copysign(sq, b))
    r1, r2 = sorted([t / a, c / t if t != 0 else t / a])
    return [(float(r1), float(r2))] if a > 0 else [(-np.inf, float(r1)), (float(r2), np.inf)]


def invert(prob, method, alpha, center, scale, extra_points=()):
    """The set {β : p-value(β) > alpha} of one coefficient as a sorted list of (low, high) intervals.

    Homoskedastic AR with no other treatment is solved exactly (a quadratic inequality). Otherwise the
    p-value is scanned on a grid dense near the 2SLS estimate and reaching ``±1e9`` standard errors (the
    statistics converge as β → ±∞, so acceptance at the ends means an unbounded side), and every crossing
    is refined by Brent's method.
    """
    if method == "AR" and not prob.robust and prob.m == 0:
        return _quadratic_set(prob, alpha)
    if not np.isfinite(center):
        center = 0.0
    if not np.isfinite(scale) or scale <= 0:
        scale = max(abs(center), 1.0)
    # each projection point is an optimisation: a coarser grid (still ~0.4 standard errors apart near the estimate)
    points = 161 if prob.robust and prob.m > 0 else 481
    grid = center + scale * np.sinh(np.linspace(-np.arcsinh(1e9), np.arcsinh(1e9), points))
    extra = [float(x) for x in extra_points if np.isfinite(x)]
    grid = np.unique(np.concatenate([grid, extra]))

    def pvalue(b):
        return run_test(prob, np.array([[b]]), method)[1][0]

    p = run_test(prob, grid[:, None], method)[1]
    accept = p > alpha
    intervals, start = [], (-np.inf if accept[0] else None)
    for i in range(len(grid) - 1):
        if accept[i] == accept[i + 1]:
            continue
        lo, hi = grid[i], grid[i + 1]
        root = scipy.optimize.brentq(lambda b: pvalue(b) - alpha, lo, hi, xtol=1e-12 * max(1.0, abs(lo)),
                                     rtol=4 * np.finfo(float).eps)
        if accept[i]:
            intervals.append((float(start), float(root)))
            start = None
        else:
            start = root
    if start is not None:
        intervals.append((float(start), np.inf))
    return intervals


def interest_and_nuisance(X, direction):
    """Columns of the tested coefficient θ = aᵀb and of the others for a direction a (r,) of the coefficients b."""
    a = np.asarray(direction, dtype=np.float64)
    interest = X @ a / (a @ a)
    others = scipy.linalg.null_space(a[None, :])
    return interest[:, None], X @ others


# ----------------------------------------------------------------------------------------------------------
# the methods every fitted IV regressor carries
# ----------------------------------------------------------------------------------------------------------
def _check_alpha(alpha):
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.floating)) or not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got alpha={alpha!r}.")


_SETS = weakref.WeakKeyDictionary()  # PartialledDesign -> {(feature, method, alpha): intervals}


class _WeakIVMixin:
    """``weak_iv_test`` and ``confidence_set``: inference that stays valid when the instruments are weak.

    Needs the fitted ``_design_`` (a ``PartialledDesign``), ``representation_coef_`` and
    ``representation_stderr_``; the tested coefficients are those of the columns of the design
    (the treatments for 2SLS and k-class, the representation coordinates otherwise).
    """

    # the fitted design is a project type inside every dump of these estimators (skops persistence)
    _skops_nested_types = ("sklearn_frontier.iv._design.PartialledDesign",)

    def _weak_iv_design(self):
        check_is_fitted(self)
        design = getattr(self, "_design_", None)
        if design is None:
            raise ValueError(f"{type(self).__name__} has no partialled design for weak-IV inference; refit it.")
        if not getattr(self, "instruments_supplied_", False):
            raise ValueError(f"{type(self).__name__} was fitted without instruments Z (the fit is OLS): weak-IV tests "
                             "need the excluded instruments; refit with Z=...")
        return design

    def _feature_index(self, feature, p):
        names = self._treatment_names()
        if isinstance(feature, str):
            if feature in names:
                return names.index(feature)
        elif isinstance(feature, (int, np.integer)) and not isinstance(feature, bool) and -p <= feature < p:
            return int(feature) % p
        raise ValueError(f"feature must be a column index in [0, {p}) or one of the names {names}, got "
                         f"feature={feature!r}.")

    def _weak_iv_problem(self, feature=None, direction=None):
        design = self._weak_iv_design()
        X = design.X
        if direction is not None:
            interest, nuisance = interest_and_nuisance(X, direction)
        elif feature is None:
            interest, nuisance = X, X[:, :0]
        else:
            j = self._feature_index(feature, X.shape[1])
            interest, nuisance = X[:, [j]], np.delete(X, j, axis=1)
        return _Problem(design, interest, nuisance)

    def weak_iv_test(self, beta0, method="AR", feature=None):
        """Test H0: the coefficients equal ``beta0``, with a test that stays valid when the instruments are weak.

        Parameters
        ----------
        beta0 : float or array-like of shape (n_coefficients,)
            Hypothesised value: one per treatment (representation component) with ``feature=None``, else one.
        method : {"AR", "CLR", "LM"}, default="AR"
            Anderson–Rubin, conditional likelihood ratio or Kleibergen's LM (K). Under a robust ``cov_type``
            AR uses the fit's sandwich; LM and CLR are Kleibergen's robust versions where defined (see Notes
            of the user guide section "When instruments are weak").
        feature : int or str, default=None
            Test only this coefficient (index or name), the others left free: the subvector test
            (homoskedastic) or the projection test (robust AR).

        Returns
        -------
        statistic : float
            AR is scaled as an F (χ²(k)/k); CLR and LM as χ².
        p_value : float
            Asymptotic p-value, valid whatever the instruments' strength.
        """
        prob = self._weak_iv_problem(feature)
        check_method(method, prob)
        beta = np.asarray(beta0, dtype=np.float64).reshape(-1)
        if beta.shape[0] != prob.q or not np.all(np.isfinite(beta)):
            what = "one value per treatment" if feature is None else "one value (the coefficient of `feature`)"
            raise ValueError(f"beta0 must be finite with length {prob.q} ({what}), got beta0 of shape "
                             f"{np.shape(beta0)}.")
        stat, pval = run_test(prob, beta[None, :], method)
        return float(stat[0]), float(pval[0])

    def confidence_set(self, feature, method="AR", alpha=0.05):
        """Weak-instrument-robust ``1 - alpha`` confidence set of one coefficient, by inverting :meth:`weak_iv_test`.

        Parameters
        ----------
        feature : int or str
            The coefficient (index or name); the other treatments are left free.
        method : {"AR", "CLR", "LM"}, default="AR"
            The test inverted.
        alpha : float, default=0.05
            One minus the coverage, in (0, 1).

        Returns
        -------
        intervals : list of (float, float)
            Sorted disjoint intervals whose union is the set: one bounded interval, the whole line
            ``[(-inf, inf)]``, two half-lines ``[(-inf, a), (b, inf)]``, or empty (the model is rejected).
        """
        _check_alpha(alpha)
        design = self._weak_iv_design()
        j = self._feature_index(feature, design.X.shape[1])
        # the set is a function of the fitted design: computed once per fit (summary() asks again), cached
        # beside the estimator (keyed weakly by its design) so the fitted state stays what fit set
        cache = _SETS.setdefault(design, {})
        key = (j, method, float(alpha))
        if key not in cache:
            prob = self._weak_iv_problem(feature)
            check_method(method, prob)
            cache[key] = invert(prob, method, alpha, float(self.representation_coef_[j]),
                                float(self.representation_stderr_[j]))
        return list(cache[key])

    def _effect_set(self, a, method, alpha):
        """The set of θ = aᵀb for a direction a of the coefficients (``effect_confidence_set``)."""
        _check_alpha(alpha)
        prob = self._weak_iv_problem(direction=a)
        check_method(method, prob)
        center = float(a @ self.representation_coef_)
        scale = float(np.sqrt(max(a @ self.representation_cov_ @ a, 0.0)))
        return invert(prob, method, alpha, center, scale)
