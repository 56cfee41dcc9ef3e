"""The ``summary()`` table of a fitted IV regressor, laid out as statsmodels / linearmodels print theirs."""

from dataclasses import dataclass

import numpy as np
from scipy import stats as _st


@dataclass(frozen=True)
class WeakIVSet:
    """One weak-instrument-robust confidence set of the summary: ``intervals`` of ``name`` by ``method``."""

    name: str
    method: str
    alpha: float
    intervals: list


class IVSummary:
    """Printable estimation summary: parameter table, then the instrument diagnostics.

    ``params`` holds the columns of the parameter table (name, coef, std_err, t, p_value, ci_lower,
    ci_upper), ``diagnostics`` the (label, value) rows below it; ``weak_iv_sets`` the weak-instrument-robust
    confidence sets shown there, as :class:`WeakIVSet` records; ``str()`` / :meth:`as_text` render them.
    """

    def __init__(self, title, header, params, diagnostics, weak_iv_sets=()):
        self.title = title
        self.header = header
        self.params = params
        self.diagnostics = diagnostics
        self.weak_iv_sets = list(weak_iv_sets)

    def as_text(self):
        """Render the summary as fixed-width text."""
        width = 78
        lines = [self.title.center(width), "=" * width]
        half = (len(self.header) + 1) // 2
        for (k1, v1), (k2, v2) in zip(self.header[:half], self.header[half:] + [("", "")] * 2):
            lines.append(f"{k1:<17}{v1:>20}   {k2:<17}{v2:>20}")
        lines.append("-" * width)
        lines.append(f"{'':<18}{'coef':>9}{'std err':>10}{'t':>9}{'P>|t|':>9}{'[lower':>11}{'upper]':>11}")
        lines.append("-" * width)
        p = self.params
        for i, name in enumerate(p["name"]):
            lines.append(f"{name[:18]:<18}{p['coef'][i]:>9.4f}{p['std_err'][i]:>10.4f}{p['t'][i]:>9.3f}"
                         f"{p['p_value'][i]:>9.4f}{p['ci_lower'][i]:>11.4f}{p['ci_upper'][i]:>11.4f}")
        lines.append("=" * width)
        for label, value in self.diagnostics:
            lines.append(f"{label:<46}{value:>32}")
        return "\n".join(lines)

    def __str__(self):
        return self.as_text()

    def __repr__(self):
        return self.as_text()


def format_set(intervals, digits=4):
    """``[a, b]``, ``(-inf, a] U [b, inf)``, ``(-inf, inf)`` or ``empty``: a union of intervals as text."""
    if not intervals:
        return "empty"
    parts = []
    for lo, hi in intervals:
        left = "(-inf" if np.isinf(lo) else f"[{lo:.{digits}f}"
        right = "inf)" if np.isinf(hi) else f"{hi:.{digits}f}]"
        parts.append(f"{left}, {right}")
    return " U ".join(parts)


def _weak_iv_rows(est, alpha, treatment_names):
    """The AR (and CLR, where defined) confidence set of each treatment: rows of the table and their records."""
    rows, sets = [], []
    level = f"{100 * (1 - alpha):g}%"
    robust = est.cov_type_ != "nonrobust"
    one = len(treatment_names) == 1
    methods = ["AR"] + (["CLR"] if one or not robust else [])
    for j, name in enumerate(treatment_names):
        for method in methods:
            try:
                intervals = est.confidence_set(j, method=method, alpha=alpha)
            except ValueError:  # too few degrees of freedom or clusters: the row says so
                rows.append((f"{method} {level} set, {name[:16]}", "n/a"))
                continue
            sets.append(WeakIVSet(name, method, alpha, intervals))
            label = f"{'robust ' if robust else ''}{method} {level} set, {name[:16]}"
            rows.append((label, format_set(intervals)))
    return rows, sets


def _fmt_pair(pair):
    stat, pval = pair
    return "n/a (exactly identified)" if not np.isfinite(stat) else f"{stat:.4f} (p = {pval:.4f})"


def build_summary(est, alpha, treatment_names):
    """Assemble the :class:`IVSummary` of a fitted estimator (``params_cov_`` orders [C, treatments])."""
    has_intercept = est.has_intercept_
    control_names = list(est.control_names_)
    names = (["const"] if has_intercept else []) + control_names + list(treatment_names)
    coef = np.concatenate([[est.intercept_] if has_intercept else [], est.controls_coef_, est.representation_coef_])
    se = np.sqrt(np.maximum(np.diag(est.params_cov_), 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = coef / se
    if est.debiased_:
        dist, label = _st.t(est.df_resid_), f"t({est.df_resid_:g})"
    else:
        dist, label = _st.norm(), "normal"
    q = dist.ppf(1 - alpha / 2)
    params = {"name": names, "coef": coef, "std_err": se, "t": t, "p_value": 2 * dist.sf(np.abs(t)),
              "ci_lower": coef - q * se, "ci_upper": coef + q * se}
    cov_label = est.cov_type_ + (f" ({est.n_groups_} clusters)" if est.cov_type_ == "cluster" else "")
    header = [("Estimator:", type(est).__name__), ("No. observations:", f"{est.n_weighted_:g}"),
              ("Cov. type:", cov_label), ("Debiased:", str(est.debiased_)), ("Inference:", label),
              ("Df residuals:", f"{est.df_resid_:g}"),
              ("Instruments:", str(est.n_instruments_) if est.instruments_supplied_ else "none (OLS)"),
              ("Controls:", str(len(control_names)))]
    diagnostics, weak_sets = [], []
    if est.instruments_supplied_:
        for name, f, fr in zip(treatment_names, est.first_stage_f_, est.first_stage_f_robust_):
            diagnostics.append((f"Partial first-stage F, {name[:16]} (robust)", f"{f:.4f} ({fr:.4f})"))
        if np.isfinite(est.effective_f_):
            diagnostics.append(("Effective F (Montiel Olea-Pflueger)", f"{est.effective_f_:.4f}"))
            diagnostics.append(("  critical value, 10% worst-case bias", f"{est.effective_f_critical_value_:.4f}"))
        diagnostics.append(("Cragg-Donald Wald F", f"{est.cragg_donald_:.4f}"))
        if np.isfinite(est.kleibergen_paap_lm_[0]):
            diagnostics.append(("Kleibergen-Paap rk LM (underidentification)", _fmt_pair(est.kleibergen_paap_lm_)))
        diagnostics.append(("Kleibergen-Paap rk Wald F", f"{est.kleibergen_paap_:.4f}"))
        if est.stock_yogo_ is not None:
            diagnostics.append(("Stock-Yogo 10%/15%/20%/25% max. size",
                                "/".join(f"{v:g}" for v in est.stock_yogo_.values())))
        diagnostics.append(("Sargan (homoskedastic overid.)", _fmt_pair(est.sargan_)))
        diagnostics.append(("Hansen J (robust overid., 2-step GMM)", _fmt_pair(est.hansen_j_)))
        diagnostics.append((f"Endogeneity ({est.endogeneity_test_})", _fmt_pair(est.endogeneity_)))
        # Sets per coefficient where the coefficients are the treatments' own; a representation's single
        # coefficients depend on its rotation (effect_confidence_set gives the sets of shifts instead).
        if getattr(est, "representation_", None) is None:
            weak_rows, weak_sets = _weak_iv_rows(est, alpha, treatment_names)
            diagnostics.extend(weak_rows)
    # Without Z the treatments are their own instruments: the fit is OLS and says so.
    method = "2SLS" if getattr(est, "kappa_", 1.0) == 1.0 else f"k-class (kappa={est.kappa_:.4g})"
    title = f"IV-{method} Estimation Summary" if est.instruments_supplied_ else "OLS Estimation Summary"
    return IVSummary(title, header, params, diagnostics, weak_sets)
