"""Diagnostics of the excluded instruments and of the IV model (first-stage F, Cragg–Donald, Kleibergen–Paap,
Stock–Yogo, Sargan, Hansen J, endogeneity).

All inputs are in the √w-scaled, partialled coordinates of :func:`_second_stage`: ``Dt`` (n, r) are the
treatments (or representation features) residualised on the controls C = [1, W], ``Uz`` (n, k_z) an
orthonormal basis of the residualised excluded instruments, ``Q = Uzᵀ Dt`` their first-stage coefficients
in that basis. By Frisch–Waugh–Lovell every statistic equals the textbook one computed with the controls
included in both stages (conventions as in linearmodels and Stata's ``ivreg2``).
"""

import numpy as np
import scipy.linalg
from scipy.stats import chi2

# Stock & Yogo (2005), critical values of the Cragg–Donald F statistic for the maximal size (10%, 15%, 20%,
# 25%) of a nominal 5% Wald test on 2SLS, keyed by (n_endogenous, n_excluded_instruments). Only the cells
# used most often are tabulated; elsewhere ``stock_yogo_`` is None.
_STOCK_YOGO_SIZE = {
    (1, 1): (16.38, 8.96, 6.66, 5.53),
    (1, 2): (19.93, 11.59, 8.75, 7.25),
    (1, 3): (22.30, 12.83, 9.54, 7.80),
    (2, 2): (7.03, 4.58, 3.95, 3.63),
    (2, 3): (13.43, 8.18, 6.40, 5.45),
    (2, 4): (16.87, 9.93, 7.54, 6.28),
}
_SIZE_LEVELS = ("10%", "15%", "20%", "25%")


def stock_yogo_critical_values(n_endogenous, n_instruments):
    """Stock–Yogo 2SLS maximal-size critical values ``{"10%": ..., ...}``, or None where not tabulated."""
    row = _STOCK_YOGO_SIZE.get((int(n_endogenous), int(n_instruments)))
    return None if row is None else dict(zip(_SIZE_LEVELS, row))


def _unscale(At, sw):
    """Raw-scale rows ``At / √w`` (zero-weight rows are zero: they carry no information)."""
    s = sw[:, None] if At.ndim == 2 else sw
    return np.divide(At, s, out=np.zeros_like(At), where=s > 0)


def _score_outer(scores, groups):
    """``Σ_i h_i h_iᵀ`` (heteroskedastic) or ``Σ_g (Σ_{i∈g} h_i)(Σ_{i∈g} h_i)ᵀ`` (clustered)."""
    if groups is None:
        return scores.T @ scores
    n_groups = int(groups.max()) + 1
    # one bincount per column: the same row-order sums as np.add.at, several times faster at n = 1e6
    sums = np.column_stack([np.bincount(groups, weights=scores[:, j], minlength=n_groups)
                            for j in range(scores.shape[1])]) if scores.shape[1] else np.zeros((n_groups, 0))
    return sums.T @ sums


def robust_scale(cov_type, debiased, n_w, k, n_groups):
    """Small-sample factor of a sandwich covariance (linearmodels' ``debiased``, Stata's ``small``)."""
    if not debiased:
        return 1.0
    if n_w - k <= 0:
        return np.nan
    if cov_type == "cluster":
        return n_groups / (n_groups - 1) * (n_w - 1) / (n_w - k)
    return n_w / (n_w - k)


def _scores(rows, resid_raw, sw, groups):
    """Per-row scores with frequency-weight semantics: ``rows·e`` (HC) or ``rows·√w·e`` (clustered)."""
    return rows * (resid_raw if groups is None else sw * resid_raw)[:, None]


def _split_directions(S_vv, scale):
    """Orthonormal bases of the directions with first-stage residual variance (R) and without (N)."""
    ev, U = np.linalg.eigh(0.5 * (S_vv + S_vv.T))
    null = ev <= 1e-12 * scale
    return U[:, ~null], U[:, null], ev[~null]


def cragg_donald(Q, S_vv, k_z, scale):
    """Minimum-eigenvalue statistic ``min eig(S_vv^(-1/2) QᵀQ S_vv^(-1/2)) / k_z`` over identified directions.

    A perfectly predicted direction (zero first-stage residual variance) has an infinite ratio; the minimum
    over the others is the Schur complement of its block in ``QᵀQ`` (the limit as its noise vanishes).
    """
    QtQ = Q.T @ Q
    R, N, ev = _split_directions(S_vv, scale)
    if R.shape[1] == 0:
        return np.inf
    if N.shape[1] == 0:
        return float(scipy.linalg.eigh(QtQ, S_vv, eigvals_only=True)[0] / k_z)
    G_RR, G_RN, G_NN = R.T @ QtQ @ R, R.T @ QtQ @ N, N.T @ QtQ @ N
    schur = G_RR - G_RN @ np.linalg.pinv(G_NN) @ G_RN.T
    return float(scipy.linalg.eigh(0.5 * (schur + schur.T), np.diag(ev), eigvals_only=True)[0] / k_z)


def _kp_rank_statistic(Qm, cov_q, sigma):
    """Kleibergen–Paap (2006) rk statistic of H0: rank(Qm) = b − 1, normalised by ``sigma^(-1/2)``.

    ``cov_q`` is the covariance of ``vec(Qm)`` (columns stacked). With ``cov_q = sigma ⊗ I`` it equals the
    smallest eigenvalue of ``sigma^(-1/2) QmᵀQm sigma^(-1/2)``, i.e. k_z times Cragg–Donald.
    """
    a, b = Qm.shape
    ev, U = np.linalg.eigh(0.5 * (sigma + sigma.T))
    F = (U / np.sqrt(ev)) @ U.T
    theta = Qm @ F
    KF = np.kron(F, np.eye(a))
    cov_theta = KF @ cov_q @ KF.T
    Ut, _, Vt = np.linalg.svd(theta, full_matrices=True)
    Uq, vq = Ut[:, b - 1:], Vt[b - 1:].T
    lam = (Uq.T @ theta @ vq).reshape(-1, order="F")
    T = np.kron(vq.T, Uq.T)
    omega = T @ cov_theta @ T.T
    return float(lam @ np.linalg.lstsq(0.5 * (omega + omega.T), lam, rcond=None)[0])


def first_stage(Dt, Uz, Q, sw, n_w, k_c, *, cov_type, debiased, groups, n_groups):
    """Partial first-stage F (non-robust and robust Wald, per column), Cragg–Donald and Kleibergen–Paap."""
    k_z, r = Q.shape
    df2 = n_w - k_z - k_c
    qn = np.sum(Q**2, axis=0)
    dn = np.sum(Dt**2, axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        unexplained = np.maximum(dn - qn, 0.0)
        tiny = 1e-12 * np.maximum(dn, np.finfo(float).tiny)
        F = np.where(unexplained <= tiny, np.inf, (qn / k_z) / (unexplained / df2)) if df2 > 0 \
            else np.full(r, np.nan)
    out = {"first_stage_f": F, "first_stage_f_robust": np.full(r, np.nan), "cragg_donald": np.nan,
           "kleibergen_paap": np.nan}
    if df2 <= 0:
        return out
    QtQ = Q.T @ Q
    S_vv = (Dt.T @ Dt - QtQ) / df2
    S_vv = 0.5 * (S_vv + S_vv.T)
    scale = max(np.abs(np.linalg.eigvalsh(Dt.T @ Dt / df2)).max(), np.finfo(float).tiny)
    ev = np.linalg.eigvalsh(S_vv)
    if ev[0] > 1e-12 * scale:  # the common case, computed exactly as before the Schur fix
        out["cragg_donald"] = float(scipy.linalg.eigh(QtQ, S_vv, eigvals_only=True)[0] / k_z)
    else:
        out["cragg_donald"] = cragg_donald(Q, S_vv, k_z, scale)
    # Robust (Wald) forms use the estimator's sandwich; a non-robust fit uses HC0/HC1 by its debiased flag.
    robust_type = "HC" if cov_type == "nonrobust" else cov_type
    factor = robust_scale(robust_type, debiased, n_w, k_z + k_c, n_groups)
    V = _unscale(Dt - Uz @ Q, sw)
    Fr = np.full(r, np.inf)
    for j in range(r):
        meat = factor * _score_outer(_scores(Uz, V[:, j], sw, groups), groups)
        if np.any(np.abs(V[:, j]) > 0):
            Fr[j] = float(Q[:, j] @ np.linalg.lstsq(meat, Q[:, j], rcond=None)[0]) / k_z
    out["first_stage_f_robust"] = Fr
    if r * k_z <= 1024:
        out["kleibergen_paap"] = _kleibergen_paap(Q, Uz, V, S_vv, sw, scale, factor, groups)
    return out


def _kleibergen_paap(Q, Uz, V, S_vv, sw, scale, factor, groups):
    """Kleibergen–Paap rk Wald F (``rk / k_z``) over the identified directions (as :func:`cragg_donald`)."""
    k_z, r = Q.shape
    n = Uz.shape[0]
    resid = V if groups is None else V * sw[:, None]
    rows = (resid[:, :, None] * Uz[:, None, :]).reshape(n, r * k_z)
    cov_q = factor * _score_outer(rows, groups)
    R, N, _ = _split_directions(S_vv, scale)
    if R.shape[1] == 0:
        return np.inf
    # Perfectly predicted directions act as exogenous: project their first-stage span out of the instruments.
    if N.shape[1]:
        QN = Q @ N
        u, s, _ = np.linalg.svd(QN, full_matrices=True)
        m = int(np.sum(s > 1e-12 * max(s.max(), np.finfo(float).tiny)))
        P = u[:, m:]
    else:
        P = np.eye(k_z)
    if P.shape[1] < R.shape[1]:
        return 0.0
    Qm = P.T @ Q @ R
    T = np.kron(R.T, P.T)
    return _kp_rank_statistic(Qm, T @ cov_q @ T.T, R.T @ S_vv @ R) / k_z


def _pair(stat, df):
    return (float(stat), float(chi2.sf(stat, df))) if df > 0 and np.isfinite(stat) else (np.nan, np.nan)


def overid_and_endogeneity(Dt, yt, resid_raw, Uz, Uc, sw, n_w, *, cov_type, groups):
    """Sargan, Hansen J (2-step efficient GMM, linearmodels' ``IVGMM.j_stat``), and the endogeneity test.

    Endogeneity: Durbin's χ² for ``cov_type="nonrobust"``, else Wooldridge's heteroskedasticity-robust
    score test (both as in linearmodels). Each is a ``(statistic, p-value)`` pair; (nan, nan) where the
    model is exactly identified (Sargan, J).
    """
    k_z, r = Uz.shape[1], Dt.shape[1]
    e_t = sw * resid_raw
    out = {}
    if k_z > r:
        u = e_t - Uz @ (Uz.T @ e_t)
        ee = float(e_t @ e_t)
        out["sargan"] = _pair(n_w * (1.0 - float(u @ u) / ee), k_z - r) if ee > 0 else (np.nan, np.nan)
        H = np.hstack([Uc, Uz])
        Xf = np.hstack([Uc, Dt])
        S = _score_outer(H * (resid_raw if groups is None else e_t)[:, None], groups)
        Sinv = np.linalg.pinv(0.5 * (S + S.T))
        A = H.T @ Xf
        beta = np.linalg.lstsq(A.T @ Sinv @ A, A.T @ Sinv @ (H.T @ yt), rcond=None)[0]
        g = H.T @ (yt - Xf @ beta)
        out["hansen_j"] = _pair(float(g @ Sinv @ g), k_z - r)
    else:
        out["sargan"] = out["hansen_j"] = (np.nan, np.nan)
    # OLS residuals treating the treatments as exogenous (already orthogonal to the controls).
    e0 = yt - Dt @ np.linalg.lstsq(Dt, yt, rcond=None)[0]
    if cov_type == "nonrobust":
        B, _ = np.linalg.qr(np.hstack([Uz, Dt]))
        stat = (np.sum((B.T @ e0) ** 2) - np.sum((Uz.T @ e_t) ** 2)) / (float(e0 @ e0) / n_w)
        out["endogeneity"], out["endogeneity_test"] = _pair(stat, r), "Durbin"
    else:
        Vt = Dt - Uz @ (Uz.T @ Dt)
        rr = Vt - Dt @ np.linalg.lstsq(Dt, Vt, rcond=None)[0]
        # Frequency weights: rows √w·x and the regressand √w (not w·x and 1), so the statistic
        # (Σ w x)ᵀ(Σ w x xᵀ)⁻¹(Σ w x) equals that of the duplicated rows.
        X1 = _unscale(rr * e0[:, None], sw)
        ones = sw
        coef = np.linalg.lstsq(X1, ones, rcond=None)[0]
        out["endogeneity"], out["endogeneity_test"] = _pair(float(ones @ (X1 @ coef)), r), "Wooldridge score"
    return out


def _first_stage_covariance(design, v, *, restricted=False):
    """Covariance of the first-stage coefficients Uᵀx under the design's ``cov_type`` (k × k).

    ``v`` are the √w-scaled first-stage residuals. ``restricted`` (the LM form, under π = 0) uses no
    small-sample factor, as Stata's ``ranktest``.
    """
    U, k = design.Uz, design.n_instruments
    k_reg = k + design.n_partialled
    if design.cov_type == "nonrobust":
        denom = design.n_weighted if restricted else design.n_weighted - k_reg
        return float(v @ v) / denom * np.eye(k)
    debiased = design.debiased and not restricted
    if design.groups is None:
        raw = _unscale(v, design.sw)
        return robust_scale("HC", debiased, design.n_weighted, k_reg, 0) * ((U.T * raw**2) @ U)
    meat = _score_outer(U * v[:, None], design.groups)
    return robust_scale("cluster", debiased, design.n_weighted, k_reg, design.n_groups) * meat


def effective_f(design, tau=0.10, size=0.05):
    """Montiel Olea–Pflueger effective F, its simplified 2SLS critical value and K_eff (one treatment).

    With U an orthonormal basis of the partialled instruments (Q = UᵀU = I, the statistic is invariant to the
    instruments' basis), ``F_eff = π̂ᵀπ̂ / tr(Σ̂)``, Σ̂ the covariance of π̂ = Uᵀx under the fit's ``cov_type``.
    The simplified critical value for a worst-case 2SLS bias of ``tau`` (Nagar bound B = 1, x = 1/tau) is the
    ``1 − size`` quantile of χ²(K_eff, x·K_eff)/K_eff with ``K_eff = tr(Σ̂)²(1 + 2x) / (tr(Σ̂²) + 2x tr(Σ̂)
    λ_max(Σ̂))``. With several treatments the three values are nan.
    """
    from scipy.stats import ncx2

    if design.X.shape[1] != 1:
        return np.nan, np.nan, np.nan
    x = design.X[:, 0]
    pi = design.Uz.T @ x
    V = _first_stage_covariance(design, x - design.Uz @ pi)
    trace = float(np.trace(V))
    if not trace > 0:
        return np.inf, np.nan, np.nan
    ev = np.linalg.eigvalsh(0.5 * (V + V.T))
    bias = 1.0 / tau
    k_eff = trace**2 * (1 + 2 * bias) / (float(np.sum(ev**2)) + 2 * bias * trace * float(ev.max()))
    critical = float(ncx2.ppf(1 - size, k_eff, bias * k_eff) / k_eff)
    return float(pi @ pi) / trace, critical, float(k_eff)


def kleibergen_paap_lm(design):
    """Kleibergen–Paap rk LM test of underidentification (one treatment): the score test of π = 0, χ²(k).

    Under ``cov_type="nonrobust"`` it is Anderson's canonical-correlation LM, ``n·R²`` of the partialled
    first stage. (statistic, p-value); nan with several treatments.
    """
    if design.X.shape[1] != 1:
        return np.nan, np.nan
    x = design.X[:, 0]
    pi = design.Uz.T @ x
    V0 = _first_stage_covariance(design, x, restricted=True)
    stat = float(pi @ np.linalg.lstsq(V0, pi, rcond=None)[0])
    return _pair(stat, design.n_instruments)
