"""The shared engine: data handling, chains, draws, prediction and diagnostics of both regressors."""

import copy
import math
import os
import warnings
from dataclasses import replace
from numbers import Integral, Real

import numpy as np
from scipy.stats import chi2
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from sklearn_frontier.utils._compat import (
    Interval,
    StrOptions,
    _check_sample_weight,
    _fit_context,
    check_is_fitted,
    validate_data,
)
from sklearn_frontier.utils._mcmc import ess_bulk, rank_normalized_split_rhat
from sklearn_frontier.utils._validation import check_distinct_rows, coordinate_scale
from sklearn_frontier.utils._warnings import warn_user

from ._checkpoint import fingerprint, run_chains
from ._domain import build_domain_graph, parse_domain
from ._mcmc import ChainData, init_chain
from ._predict import attachment_candidates, attachment_weights
from ._trees import TreeContext

_COMMON_CONSTRAINTS = {
    "n_trees": [Interval(Integral, 1, None, closed="left")],
    "domain": "no_validation",
    "graph": [StrOptions({"auto", "chain", "delaunay", "knn"}), callable],
    "n_neighbors": [Interval(Integral, 1, None, closed="left")],
    "metric": [str, callable],
    "domain_tolerance": [Interval(Real, 0, None, closed="left")],
    "nu": [Interval(Real, 0, None, closed="neither")],
    "q": [Interval(Real, 0, 1, closed="neither")],
    "noise_variance": [Interval(Real, None, None, closed="neither"), None],
    "n_iter": [Interval(Integral, 1, None, closed="left")],
    "n_burnin": [Interval(Integral, 0, None, closed="left")],
    "thin": [Interval(Integral, 1, None, closed="left")],
    "n_chains": [Interval(Integral, 1, None, closed="left")],
    "n_jobs": [Integral, None],
    "predict_neighbors": [StrOptions({"triangle", "knn"})],
    "n_predict_neighbors": [Interval(Integral, 1, None, closed="left")],
    "predict_weighting": [StrOptions({"uniform", "distance", "barycentric"})],
    "attachment": [StrOptions({"random", "mean"})],
    "warm_start": ["boolean"],
    "checkpoint": [str, os.PathLike, None],
    "checkpoint_every": [Interval(Integral, 1, None, closed="left")],
    "verbose": ["verbose"],
    "random_state": ["random_state"],
}


def _scaled_domain(domain, n_features, scale):
    dom = parse_domain(domain, n_features)
    return dom if dom is None or scale == 1.0 else dom.scaled(scale)


def _scaled_graph(graph, scale):
    if not callable(graph) or scale == 1.0:
        return graph
    return lambda V: graph(V * scale)


def _scaled_metric(metric, scale):
    if not callable(metric) or scale == 1.0:
        return metric
    return lambda a, b: metric(a * scale, b * scale) / scale


def _unscaled_graph(graph, scale, domain):
    """The standardised domain graph in the units of ``X`` (the public ``graph_``)."""
    if scale == 1.0:
        return graph
    return replace(graph, vertices=graph.vertices * scale, lengths=graph.lengths * scale,
                   diameter=graph.diameter * scale, tolerance=graph.tolerance * scale,
                   domain=parse_domain(domain, graph.vertices.shape[1]))


def _rhat_ess(x):
    return rank_normalized_split_rhat(x), ess_bulk(x)



def _check_numeric_target(est, y):
    """Strings in y get an error that says so (numpy's ufunc error would not say what is wrong)."""
    if y is None:
        return
    values = np.asarray(y)
    if values.dtype.kind in "OUS":
        try:
            values.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{type(est).__name__} is a regressor: y must be numeric, got values such as "
                             f"{values.ravel()[:3].tolist()!r}.") from None

class _BaseSpanningTreeEnsemble(RegressorMixin, BaseEstimator):
    """Additive ensemble of spanning-tree components fitted by backfitting MCMC (shared engine)."""

    _bast_init = False
    _tree_prior_default = "random_mst"

    # -------------------------------------------------------------- hooks
    def _make_family(self):
        raise NotImplementedError

    def _standardize(self, y, w):
        raise NotImplementedError

    def _tree_settings(self):
        return "random_mst", 0.0, 0.0

    def _validate_extra_params(self):
        pass

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        return tags

    # -------------------------------------------------------------- fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the ensemble by MCMC.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Locations. The graph and the fields see them divided by a power of two near their spread
            (``graph_`` stays in these units), so that 1e-150 or 1e150 coordinates give the same fit as
            coordinates of spread 1. At least 2 distinct locations are needed.
        y : array-like of shape (n_samples,)
            Target values.
        sample_weight : array-like of shape (n_samples,), default=None
            Frequency weights (weight 2 = a duplicated row); zero-weight rows are dropped.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        _check_numeric_target(self, y)
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True, ensure_min_samples=2)
        sw = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        if not np.any(sw > 0):
            raise ValueError("sample_weight must have at least one positive entry; all are zero.")
        if self.noise_variance is not None and not self.noise_variance > 0:
            raise ValueError(f"noise_variance must be positive, got {self.noise_variance}.")
        self._validate_extra_params()
        keep = sw > 0
        X, y, sw = X[keep], y[keep], sw[keep]
        continuing = self.warm_start and hasattr(self, "chain_states_")
        check_distinct_rows(X, 2, estimator_name=type(self).__name__)
        # The graph, the fields and the attachment work in coordinates divided by a power of two near their
        # spread: float32 length scales and squared distances stay representable at 1e-150 or 1e150.
        coord_scale = coordinate_scale(X)
        graph = build_domain_graph(X / coord_scale, domain=_scaled_domain(self.domain, X.shape[1], coord_scale),
                                   graph=_scaled_graph(self.graph, coord_scale), n_neighbors=self.n_neighbors,
                                   metric=_scaled_metric(self.metric, coord_scale),
                                   domain_tolerance=self.domain_tolerance)
        y_mean, y_scale = self._standardize(y, sw)
        yt = (y - y_mean) / y_scale
        sv = graph.sample_vertex
        n_v = graph.n_vertices
        W = np.bincount(sv, weights=sw, minlength=n_v)
        S0 = np.bincount(sv, weights=sw * yt, minlength=n_v)
        data = ChainData(W, S0, sw.sum(), float(np.sum(sw * yt * yt)))
        var_w = float(np.sum(sw * (yt - np.sum(sw * yt) / sw.sum()) ** 2) / sw.sum())
        lam_s = chi2.ppf(1.0 - self.q, self.nu) * max(var_w, 1e-4) / self.nu
        fixed = None if self.noise_variance is None else float(self.noise_variance) / y_scale ** 2
        family = self._make_family()
        ctx = TreeContext(graph)
        tree_prior, jitter, p_tree = self._tree_settings()
        same_data = False
        if continuing:
            old = self._graph
            if (old.vertices.shape != graph.vertices.shape or not np.array_equal(old.vertices, graph.vertices)
                    or len(self.chain_states_) != self.n_chains
                    or family.values(self.chain_states_[0]["states"]).shape[0] != self.n_trees):
                raise ValueError("warm_start=True needs the same training locations, n_trees and n_chains as "
                                 "the previous fit; set warm_start=False to refit.")
            same_data = (np.array_equal(self._vertex_stats[0], W) and np.array_equal(self._vertex_stats[1], S0)
                         and y_mean == self.y_mean_ and y_scale == self.y_scale_)
        elif self.n_burnin >= self.n_iter:
            raise ValueError(f"n_burnin must be smaller than n_iter, got n_burnin={self.n_burnin} and "
                             f"n_iter={self.n_iter}.")
        if continuing:
            chains = copy.deepcopy(self.chain_states_)
            burnin = self._burnin_used if same_data else 0
            if not same_data:
                for ch in chains:
                    ch["t"] = 0
                    ch["kept"] = 0
                burnin = self.n_burnin
                if burnin >= self.n_iter:
                    raise ValueError(f"n_burnin must be smaller than n_iter, got {self.n_burnin} >= {self.n_iter}.")
        else:
            seed = check_random_state(self.random_state).randint(0, 2**31 - 1)
            ss = np.random.SeedSequence(int(seed))
            children = ss.spawn(self.n_chains + 1)
            sigma2_init = fixed if fixed is not None else max(var_w, 1e-4)
            chains = [init_chain(ctx, family, data, self.n_trees, np.random.default_rng(c), tree_prior=tree_prior,
                                 sigma2_init=sigma2_init, bast_init=self._bast_init)
                      for c in children[:-1]]
            self._predict_seed = int(children[-1].generate_state(1)[0])
            burnin = self.n_burnin
        n_kept_expected = (self.n_iter - (0 if same_data else burnin)) // self.thin
        # random attachment needs every component's field per kept draw; otherwise the fit (their sum) is kept
        keep_components = self.attachment == "random"
        if n_kept_expected * (self.n_trees if keep_components else 1) * n_v * 4 > 2**30:
            warnings.warn("The stored draws exceed 1 GiB per chain; consider a larger thin.", UserWarning)
        # edge outputs from <= ~20 evenly spaced kept draws per chain: each costs O(M E log n), about as much as
        # a few sweeps, and 20 draws of every tree already average hundreds of trees per edge
        edge_stride = max(1, math.ceil(max(n_kept_expected, 1) / 20))
        kwargs = dict(n_burnin=burnin, thin=self.thin, edge_stride=edge_stride, keep_components=keep_components,
                      noise_prior=(self.nu, lam_s),
                      fixed_sigma2=fixed,
                      tree_prior=tree_prior, tree_jitter=jitter, tree_update_prob=p_tree)
        fp = None
        if self.checkpoint is not None:  # the built graph too: an edited callable domain keeps its name
            fp = fingerprint(self, X, y, sw, chains if continuing else None, graph)
        results, chains, self._predict_seed = run_chains(self, ctx, family, data, chains, self.n_iter, kwargs, fp,
                                                         self._predict_seed)
        draws = self._assemble(results, y_scale)
        if continuing and same_data:
            prev = self.draws_
            draws = prev if draws is None else {k: np.concatenate([prev[k], v], axis=1) for k, v in draws.items()}
            acc_prev = self._acc_counts
        else:
            acc_prev = None
        acc = {}
        for _, a in results:
            for m, (x, n) in a.items():
                acc.setdefault(m, [0, 0])
                acc[m][0] += x
                acc[m][1] += n
        if acc_prev is not None:
            for m in acc:
                acc[m][0] += acc_prev[m][0]
                acc[m][1] += acc_prev[m][1]
        self._acc_counts = acc
        if draws is None:
            raise ValueError("No draws were kept: increase n_iter or decrease n_burnin / thin.")
        self.chain_states_ = chains
        self._burnin_used = burnin
        self._vertex_stats = (W, S0)
        self._graph = graph
        self._coord_scale = coord_scale
        self.graph_ = _unscaled_graph(graph, coord_scale, self.domain)
        self.y_mean_ = float(y_mean)
        self.y_scale_ = float(y_scale)
        self.draws_ = draws
        self.n_iter_ = int(chains[0]["t"])
        self.sigma_ = float(np.mean(draws["sigma"]))
        self.acceptance_rates_ = {m: (x / n if n else float("nan")) for m, (x, n) in acc.items()}
        self.trees_ = np.array([family.trees(ch["states"]) for ch in chains], dtype=np.int64)
        self.edge_boundary_score_ = draws["edge_boundary"].mean(axis=(0, 1)).astype(np.float64)
        self.tree_edge_frequency_ = draws["tree_edge"].mean(axis=(0, 1)).astype(np.float64)
        self.feature_importances_ = self._feature_importances()
        self.convergence_ = self._convergence(None)
        # Split R-hat needs no second chain: one chain's halves disagreeing already says it has not mixed. The
        # noise level sigma is the quantity every prediction interval rests on, so it is checked for any chain
        # count; with several chains every tracked quantity is.
        rhat_sigma = float(self.convergence_["rhat_sigma"])
        rhat_max = float(np.nanmax(self.convergence_["rhat"])) if self.n_chains >= 2 else rhat_sigma
        if rhat_max > 1.1:
            warn_user(f"{'max R-hat' if self.n_chains >= 2 else 'split R-hat of sigma'} {rhat_max:.3f} > 1.1: the "
                      f"MCMC has not mixed (see convergence_); increase n_iter and n_burnin, or n_chains.",
                      ConvergenceWarning)
        return self

    def _assemble(self, results, y_scale):
        if not results[0][0]["sigma"]:
            return None
        out = {k: np.stack([np.asarray(r[k]) for r, _ in results])
               for k in ("fit", "sigma", "log_likelihood")}
        if results[0][0]["vertex_values"]:
            out["vertex_values"] = np.stack([np.asarray(r["vertex_values"]) for r, _ in results])
        E = results[0][0]["n_edges"]
        for k in ("edge_boundary", "tree_edge"):
            out[k] = np.stack([np.asarray(r[k], dtype=np.float32).reshape(-1, E) for r, _ in results])
        out["sigma"] = out["sigma"] * y_scale
        for p in results[0][0]["params"][0]:
            out[p] = np.stack([np.stack([np.asarray(d[p]) for d in r["params"]]) for r, _ in results])
        return out

    # -------------------------------------------------------------- prediction
    def _check_X(self, X):
        check_is_fitted(self)
        return validate_data(self, X, dtype=np.float64, reset=False)

    def _attachment(self, X):
        """Attachment of the rows of ``X`` (fitted units); distances in the standardised units of the fields."""
        cand, valid, delta, bary = attachment_candidates(self._graph, X / self._coord_scale, self.predict_neighbors,
                                                         self.n_predict_neighbors)
        return cand, attachment_weights(valid, delta, self.predict_weighting, bary), delta

    def _draw_iter(self):
        C, S = self.draws_["sigma"].shape
        params = [k for k in self.draws_ if k not in ("fit", "vertex_values", "sigma", "log_likelihood",
                                                      "edge_boundary", "tree_edge", "n_clusters")]
        per_tree = self.draws_.get("vertex_values")
        for c in range(C):
            for s in range(S):
                yield (self.draws_["fit"][c, s].astype(np.float64),
                       None if per_tree is None else per_tree[c, s].astype(np.float64),
                       {p: self.draws_[p][c, s] for p in params}, self.draws_["sigma"][c, s] / self.y_scale_)

    def _moments(self, X):
        """Per-draw sums over trees of the attached-leaf mean and variance: arrays (n_draws, n)."""
        cand, pi, delta = self._attachment(X)
        cidx = np.maximum(cand, 0)
        means, variances, sig2 = [], [], []
        attach_variance = self._attach_fn()
        for fit, G, params, sigma in self._draw_iter():
            b = attach_variance(params, delta, self.n_trees)  # (M or 1, n, K)
            means.append(np.sum(pi * fit[cidx], axis=1))
            v = np.sum(pi * b, axis=2).sum(axis=0)
            if self.attachment == "random":  # the spread of the tree-wise random candidates
                gv = G[:, cidx]  # (M, n, K)
                m = np.sum(pi * gv, axis=2)
                v = v + np.maximum(np.sum(pi * gv * gv, axis=2) - m * m, 0).sum(axis=0)
            variances.append(np.maximum(v, 0))
            sig2.append(sigma * sigma)
        return np.array(means), np.array(variances), np.array(sig2)

    def predict(self, X, return_std=False):
        """Predict the posterior mean at ``X`` (Rao-Blackwellised over the random attachment).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Locations to predict at.
        return_std : bool, default=False
            Also return the predictive standard deviation of a new observation.

        Returns
        -------
        y_mean : ndarray of shape (n_samples,)
            Posterior mean of the response.
        y_std : ndarray of shape (n_samples,), only if ``return_std``
            Predictive standard deviation of a new observation.
        """
        X = self._check_X(X)
        means, variances, sig2 = self._moments(X)
        mu = self.y_mean_ + self.y_scale_ * means.mean(axis=0)
        if not return_std:
            return mu
        var = np.mean(sig2[:, None] + variances, axis=0) + means.var(axis=0)
        return mu, self.y_scale_ * np.sqrt(var)

    def sample_posterior_predictive(self, X, kind="prediction", n_samples_per_draw=1, random_state=None):
        """Draw the response (``"prediction"``) or the regression function (``"credible"``) at ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Locations to predict at.
        kind : {"prediction", "credible"}, default="prediction"
            Draws of a new response (``"prediction"``) or of the regression function (``"credible"``).
        n_samples_per_draw : int, default=1
            Samples per kept MCMC draw.
        random_state : int, RandomState instance or None, default=None
            Seed of the attachment and noise draws (the fitted estimator's own seed when None).

        Returns
        -------
        samples : ndarray of shape (n_chains * n_kept * n_samples_per_draw, n_samples)
            One row per sample.
        """
        if kind not in ("prediction", "credible"):
            raise ValueError(f"kind must be 'prediction' or 'credible', got {kind!r}.")
        if not (isinstance(n_samples_per_draw, Integral) and n_samples_per_draw >= 1):
            raise ValueError(f"n_samples_per_draw must be a positive integer, got {n_samples_per_draw!r}.")
        X = self._check_X(X)
        rng = np.random.default_rng(self._predict_seed if random_state is None
                                    else check_random_state(random_state).randint(0, 2**31 - 1))
        cand, pi, delta = self._attachment(X)
        cum = np.cumsum(pi, axis=1)
        n = X.shape[0]
        rows = np.arange(n)
        attach_variance = self._attach_fn()
        out = []
        for fit, G, params, sigma in self._draw_iter():
            b = attach_variance(params, delta, self.n_trees)
            if self.attachment == "mean":
                m = np.sum(pi * fit[np.maximum(cand, 0)], axis=1)
                sd_leaf = np.sqrt(np.sum(pi * b, axis=2).sum(axis=0))
                for _ in range(n_samples_per_draw):
                    f = m + sd_leaf * rng.standard_normal(n)
                    if kind == "prediction":
                        f = f + sigma * rng.standard_normal(n)
                    out.append(self.y_mean_ + self.y_scale_ * f)
                continue
            M = G.shape[0]
            for _ in range(n_samples_per_draw):
                u = rng.random((M, n))
                j = np.minimum((u[:, :, None] > cum[None]).sum(axis=2), cand.shape[1] - 1)
                c = cand[rows[None, :], j]
                bm = b[np.arange(b.shape[0])[:, None] if b.shape[0] > 1 else 0, rows[None, :], j]
                val = G[np.arange(M)[:, None], c] + np.sqrt(bm) * rng.standard_normal((M, n))
                f = val.sum(axis=0)
                if kind == "prediction":
                    f = f + sigma * rng.standard_normal(n)
                out.append(self.y_mean_ + self.y_scale_ * f)
        return np.array(out)

    def sample_posterior(self, X, n_samples=None, kind="prediction", random_state=None):
        """Draw ``n_samples`` posterior samples at ``X`` (default: one per kept draw).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Locations to predict at.
        n_samples : int, default=None
            Number of samples; one per kept MCMC draw when None.
        kind : {"prediction", "credible"}, default="prediction"
            Draws of a new response (``"prediction"``) or of the regression function (``"credible"``), the
            same default as :meth:`predict_interval`, :meth:`predict_quantiles` and
            :meth:`sample_posterior_predictive`.
        random_state : int, RandomState instance or None, default=None
            Seed of the attachment and noise draws (the fitted estimator's own seed when None).

        Returns
        -------
        samples : ndarray of shape (n_samples, n)
            One row per sample.
        """
        total = self.draws_["sigma"].size if hasattr(self, "draws_") else 1
        per = 1 if n_samples is None else max(1, math.ceil(n_samples / total))
        samples = self.sample_posterior_predictive(X, kind=kind, n_samples_per_draw=per, random_state=random_state)
        if n_samples is not None:
            samples = samples[np.linspace(0, samples.shape[0] - 1, n_samples).round().astype(int)]
        return samples

    def predict_quantiles(self, X, quantiles=(0.025, 0.975), kind="prediction", n_samples_per_draw=None,
                          random_state=None):
        """Predict posterior (``"credible"``) or predictive (``"prediction"``) quantiles at ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Locations to predict at.
        quantiles : array-like of float in [0, 1], default=(0.025, 0.975)
            Quantile levels.
        kind : {"prediction", "credible"}, default="prediction"
            Draws of a new response (``"prediction"``) or of the regression function (``"credible"``).
        n_samples_per_draw : int, default=None
            Samples per kept MCMC draw; about 1000 samples in all when None.
        random_state : int, RandomState instance or None, default=None
            Seed of the attachment and noise draws (the fitted estimator's own seed when None).

        Returns
        -------
        quantiles : ndarray of shape (n, len(quantiles))
            Quantiles of each row.
        """
        q = np.atleast_1d(np.asarray(quantiles, dtype=np.float64))
        if np.any((q < 0) | (q > 1)) or not np.all(np.isfinite(q)):
            raise ValueError(f"quantiles must lie in [0, 1], got {quantiles!r}.")
        check_is_fitted(self)
        if n_samples_per_draw is None:
            n_samples_per_draw = max(1, math.ceil(1000 / self.draws_["sigma"].size))
        s = self.sample_posterior_predictive(X, kind=kind, n_samples_per_draw=n_samples_per_draw,
                                             random_state=random_state)
        return np.quantile(s, q, axis=0).T

    def predict_interval(self, X, alpha=0.05, kind="prediction"):
        """Predict the equal-tailed ``1 - alpha`` prediction interval of a new response at ``X``.

        The default covers a new observation ``y`` with probability about ``1 - alpha`` (noise included), as
        the method's name promises; ``kind="credible"`` gives the narrower credible interval of the
        regression function ``f(x)`` instead.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Locations to predict at.
        alpha : float in (0, 1), default=0.05
            Miscoverage level.
        kind : {"prediction", "credible"}, default="prediction"
            Interval of a new response (``"prediction"``) or of the regression function (``"credible"``).

        Returns
        -------
        interval : ndarray of shape (n, 2)
            Lower and upper bound of each row.
        """
        if not 0 < alpha < 1:
            raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}.")
        return self.predict_quantiles(X, (alpha / 2, 1 - alpha / 2), kind=kind)

    # -------------------------------------------------------------- diagnostics
    def _convergence(self, X):
        d = self.draws_
        n_v = self.graph_.n_vertices
        idx = np.unique(np.linspace(0, n_v - 1, min(20, n_v)).round().astype(int))
        fit = d["fit"][:, :, idx].astype(np.float64)
        names = ["sigma", "log_likelihood"] + [f"fit[{i}]" for i in idx]
        series = [d["sigma"], d["log_likelihood"]] + [fit[:, :, j] for j in range(idx.size)]
        if X is not None:
            means, _, _ = self._moments(X)
            C, S = d["sigma"].shape
            pm = means.reshape(C, S, -1)
            names += [f"predict[{i}]" for i in range(pm.shape[2])]
            series += [pm[:, :, i] for i in range(pm.shape[2])]
        stats = [_rhat_ess(s) for s in series]
        return {"names": names, "rhat": np.array([r for r, _ in stats]), "ess_bulk": np.array([e for _, e in stats]),
                "rhat_sigma": stats[0][0]}

    def convergence_diagnostics(self, X=None):
        """R-hat and bulk ESS of sigma, the log-likelihood, the fit at 20 vertices (and predictions at ``X``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), default=None
            Also diagnose the predictions at these locations.

        Returns
        -------
        diagnostics : dict
            ``names``, ``rhat``, ``ess_bulk`` (arrays aligned with ``names``) and ``rhat_sigma``.
        """
        check_is_fitted(self)
        if X is not None:
            X = self._check_X(X)
        return self._convergence(X)

    def _feature_importances(self):
        G = self._graph
        V, E = G.vertices, G.edges
        d = V.shape[1]
        F = self.draws_["fit"].astype(np.float64).mean(axis=(0, 1))
        if E.shape[0] == 0:
            return np.full(d, 1.0 / d)
        dX = V[E[:, 1]] - V[E[:, 0]]
        dF = F[E[:, 1]] - F[E[:, 0]]
        A = np.zeros((V.shape[0], d, d))
        b = np.zeros((V.shape[0], d))
        outer = dX[:, :, None] * dX[:, None, :]
        for end in (0, 1):
            np.add.at(A, E[:, end], outer)
            np.add.at(b, E[:, end], dX * dF[:, None])
        grad = np.linalg.solve(A + 1e-8 * np.eye(d), b[:, :, None])[:, :, 0]
        imp = np.mean((grad * V.std(axis=0)) ** 2, axis=0)
        total = imp.sum()
        return imp / total if total > 0 else np.full(d, 1.0 / d)
