"""The ``summary()`` table of a fitted IV regressor, laid out as statsmodels / linearmodels print theirs."""

import numpy as np
from scipy import stats as _st


class IVSummary:
    """Printable estimation summary: parameter table, then the instrument diagnostics.

    ``params`` holds the columns of the parameter table (name, coef, std_err, t, p_value, ci_lower,
    ci_upper), ``diagnostics`` the (label, value) rows below it; ``str()`` / :meth:`as_text` render both.
    """

    def __init__(self, title, header, params, diagnostics):
        self.title = title
        self.header = header
        self.params = params
        self.diagnostics = diagnostics

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
    diagnostics = []
    if est.instruments_supplied_:
        for name, f, fr in zip(treatment_names, est.first_stage_f_, est.first_stage_f_robust_):
            diagnostics.append((f"Partial first-stage F, {name[:16]} (robust)", f"{f:.4f} ({fr:.4f})"))
        diagnostics.append(("Cragg-Donald Wald F", f"{est.cragg_donald_:.4f}"))
        diagnostics.append(("Kleibergen-Paap rk Wald F", f"{est.kleibergen_paap_:.4f}"))
        if est.stock_yogo_ is not None:
            diagnostics.append(("Stock-Yogo 10%/15%/20%/25% max. size",
                                "/".join(f"{v:g}" for v in est.stock_yogo_.values())))
        diagnostics.append(("Sargan (homoskedastic overid.)", _fmt_pair(est.sargan_)))
        diagnostics.append(("Hansen J (robust overid., 2-step GMM)", _fmt_pair(est.hansen_j_)))
        diagnostics.append((f"Endogeneity ({est.endogeneity_test_})", _fmt_pair(est.endogeneity_)))
    # Without Z the treatments are their own instruments: the fit is OLS and says so.
    title = "IV-2SLS Estimation Summary" if est.instruments_supplied_ else "OLS Estimation Summary"
    return IVSummary(title, header, params, diagnostics)
