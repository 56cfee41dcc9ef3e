"""MixConfigAugmenter: append a per-sample mixture of configuration embeddings to X."""

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.utils import check_random_state
from sklearn.utils.metaestimators import available_if

from sklearn_frontier.exceptions import UnlabelledRowsWarning
from sklearn_frontier.utils._compat import (
    HasMethods,
    Interval,
    StrOptions,
    _fit_context,
    check_is_fitted,
    validate_data,
)
from sklearn_frontier.utils._random import MAX_SEED
from sklearn_frontier.utils._warnings import warn_user

from ._extractor import ConfigurationExtractor, _check_features, check_resolution_range
from ._targets import check_partial_target, describe_marker


def _has_head(self):
    return self.mixing != "concat"


class MixConfigAugmenter(TransformerMixin, BaseEstimator):
    """Configuration-mixed feature augmentation (MixConfig): ``[X, z(x)]`` with learned mixing.

    Appends to X a learned, per-sample mixture of the soft cluster assignments of several stable partitions
    (configurations) of the data, so that any downstream model can use its multi-scale cluster structure;
    ``transform`` returns ``[X, z]``.

    Unlabelled rows are marked in ``y`` by ``unlabelled_marker``: by default a missing value (NaN, None,
    ``pd.NA``) when ``y`` holds any, else ``-1``. They shape the graph, the configurations and the
    assignments but not the loss (semi-supervised fit). In a plain ``Pipeline`` the next step would see those markers as
    targets, so ``fit_transform`` warns when they are present; use :class:`SemiSupervisedAugmentation`,
    which fits the augmenter on every row and the downstream model on the labelled ones.

    Read more in the :ref:`User Guide <user_guide_configurations>`.

    Parameters
    ----------
    mixing : {"learned", "uniform", "single", "concat"}, default="learned"
        Per-sample learned weights; fixed ``1/M``; one-hot on one configuration (``single_rule``);
        or no network at all, output the soft assignments of every configuration.
    extractor : ConfigurationExtractor, default=None
        Cloned when given (its parameters win over the flat ones below).
    n_neighbors, resolution_range, n_resolutions, n_restarts, max_configurations, min_log_width, \
assign_neighbors, stability_features : see ConfigurationExtractor
        Parameters of the built extractor (see :class:`ConfigurationExtractor`).
    task : {"auto", "classification", "regression"}, default="auto"
        Task of the selector's head. ``"auto"`` reads ``y`` by fixed rules: strings, booleans and categories
        are classes; integer values (also floats that are whole numbers, with NaN for missing, and pandas'
        nullable ``Int64``) are classes when at most ``MAX_AUTO_CLASSES`` (20) distinct values are labelled,
        else a regression (with a warning); any other numbers are a regression. Set it explicitly when
        the rules guess wrong.
    unlabelled_marker : "auto", "missing", int, float or str, default="auto"
        What marks an unlabelled row in ``y``. ``"auto"``: a missing value (NaN, None, ``pd.NA``) when ``y``
        holds any, and then ``-1`` is an ordinary class; otherwise ``-1`` (the convention of
        :class:`~sklearn.semi_supervised.SelfTrainingClassifier`), the number for numeric labels and the
        string ``"-1"`` for string labels. ``"missing"``: only missing values (use it when every row is
        labelled and ``-1`` is a class). Any other value: rows equal to it (a number matches numbers, a
        string matches strings); missing values are always unlabelled. A regression target with ``"auto"``
        is unlabelled where it is NaN.
    output : {"embedding", "assignments"}, default="embedding"
        ``z`` (``embed_dim`` columns), or the weighted soft assignments ``[w_1 S_1, ..., w_M S_M]``.
    passthrough : bool, default=True
        Prepend the original columns of X.
    embed_dim : int, default=16
        Dimension of the cluster embeddings and of ``z``.
    context_dim : int, default=32
        Output dimension of the context encoder ``h``.
    hidden_dim : int, default=32
        Hidden width of the scorer MLP.
    temperature : float, default=1.0
        Softmax temperature ``tau`` of the mixing weights.
    dropout : float, default=0.0
        Dropout rate of the selector.
    max_epochs : int, default=300
        Maximum number of training epochs.
    batch_size : int or None, default=None
        None: full batch up to 2048 labelled rows, else 256.
    lr : float, default=1e-2
        Learning rate of the optimiser.
    weight_decay : float, default=1e-4
        Weight decay of the optimiser.
    validation_fraction : float or None, default=None
        Held-out fraction of the labelled rows (stratified) for the selector's skorch ``train_split``:
        ``valid_loss`` is recorded in ``history_`` and drives early stopping.
    n_iter_no_change : int or None, default=10
        With ``validation_fraction``: epochs without a lower validation loss before stopping; the best
        epoch's weights are restored (skorch ``EarlyStopping(load_best=True)``). None never stops.
    optimizer : {"adam", "adamw", "sgd", "rmsprop", "lbfgs"} or torch.optim.Optimizer subclass, default="adam"
        Optimiser of the selector's skorch net (``weight_decay`` is passed to it; further options go in
        ``net_params`` as ``optimizer__*``).
    callbacks : list of skorch callbacks, default=None
        Extra callbacks of the selector's net (``skorch.callbacks.LRScheduler``, ``EarlyStopping``,
        ``Checkpoint``, ...); copied on each fit.
    net_params : dict, default=None
        Further skorch settings of the selector's net: ``train_split`` (a callable such as
        ``skorch.dataset.ValidSplit``, overriding ``validation_fraction``) and prefixed keys
        ``optimizer__*``, ``iterator_train__*``, ``iterator_valid__*``, ``callbacks__*``.
    single_rule : {"most_stable", "finest", "coarsest"}, default="most_stable"
        Configuration used by ``mixing="single"``: widest band (ties: fewer clusters), most or fewest
        clusters.
    train_assignment : {"loo", "self"}, default="loo"
        Soft assignments of the training rows for the selector: leave-self-out votes (same
        distribution as for new rows) or plain votes.
    standardize : bool, default=True
        Standardise the features before building the graph.
    device : {"cpu"}, default="cpu"
        Torch device of the selector.
    n_jobs : int, default=None
        Parallel Louvain runs of the built extractor.
    verbose : int, default=0
        Verbosity level.
    random_state : int, RandomState instance or None, default=None
        Seed of the extractor and of the selector's initialisation and batches.

    Attributes
    ----------
    extractor_ : ConfigurationExtractor
        The extractor (a clone of ``extractor``, or one built from the flat parameters) fitted on every row.
    n_configurations_ : int
        Number of configurations M mixed.
    single_index_ : int
        Index of the configuration chosen by ``single_rule`` (used by ``mixing="single"``).
    task_ : str
        ``"classification"`` or ``"regression"``: the task fitted (``task``, or what ``"auto"`` read from y).
    labelled_mask_ : ndarray of shape (n_samples,), dtype=bool
        Which training rows were labelled (the others shaped the graph only).
    unlabelled_marker_ : "missing", int, float or str
        The marker in force: ``unlabelled_marker``, or what ``"auto"`` read from the training ``y``
        (``"missing"``, ``-1`` or ``"-1"``). ``score`` and :func:`make_labelled_scorer` read test targets by it.
    classes_ : ndarray of shape (n_classes,)
        Class labels seen among the labelled rows (classification only).
    y_mean_ : float
        Mean of the labelled targets, which are standardised for the selector's loss (regression only).
    y_scale_ : float
        Standard deviation of the labelled targets, 1 when they are constant (regression only).
    stats_scaled_ : ndarray of shape (n_configurations_, q)
        z-scored stability statistics the scorer sees.
    module_state_ : dict of ndarray or None
        The selector's ``state_dict`` as numpy arrays (None for ``mixing="concat"``); the torch module
        is rebuilt on use, so pickles do not hold live tensors.
    loss_curve_ : list of float
        Training loss per epoch.
    history_ : list of dict
        The selector net's per-epoch skorch history (``train_loss``, ``valid_loss``, ``dur``, ...) as
        plain dicts (empty for ``mixing="concat"``).
    n_iter_ : int
        Training epochs of the selector (0 for ``mixing="concat"``).
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during ``fit``. Defined only when X has feature names that are all strings.

    See Also
    --------
    ConfigurationExtractor : The configurations and their soft assignments.
    SemiSupervisedAugmentation : The augmenter and a downstream model fitted on the labelled rows.

    Notes
    -----
    A :class:`ConfigurationExtractor` finds the stable partitions of a kNN graph of all rows (labelled and
    unlabelled); each row gets soft assignments ``S_i(x)`` to every configuration, a cluster embedding
    ``c_i = S_i E_i``, and per-sample weights ``w_i(x) = softmax_i(s_i / tau)`` from an energy-aware scorer
    ``s_i = MLP([h(x); c_i; e_i])`` (``h`` a context encoder of x, ``e_i`` the configuration's z-scored
    stability statistics). The small torch selector is trained on the task loss of a linear head on
    ``z = sum_i w_i c_i``, through skorch.

    References
    ----------
    .. [1] "Mixing Configurations for Downstream Prediction", ICML 2026, arXiv:2510.19248.

    Examples
    --------
    >>> from sklearn.datasets import make_blobs
    >>> from sklearn_frontier.configurations import MixConfigAugmenter
    >>> X, y = make_blobs(n_samples=60, centers=3, random_state=0)
    >>> aug = MixConfigAugmenter(n_resolutions=8, max_epochs=20, random_state=0).fit(X, y)
    >>> aug.transform(X).shape
    (60, 18)
    """

    _parameter_constraints = {
        "mixing": [StrOptions({"learned", "uniform", "single", "concat"})],
        "extractor": [HasMethods(["fit", "soft_assignments"]), None],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "resolution_range": [tuple, list],
        "n_resolutions": [Interval(Integral, 1, None, closed="left")],
        "n_restarts": [Interval(Integral, 1, None, closed="left")],
        "max_configurations": [Interval(Integral, 1, None, closed="left")],
        "min_log_width": [Interval(Real, 0, None, closed="left")],
        "assign_neighbors": [Interval(Integral, 1, None, closed="left")],
        "stability_features": [StrOptions({"graph", "geometric", "both"})],
        "task": [StrOptions({"auto", "classification", "regression"})],
        "unlabelled_marker": [str, Real],
        "output": [StrOptions({"embedding", "assignments"})],
        "passthrough": ["boolean"],
        "embed_dim": [Interval(Integral, 1, None, closed="left")],
        "context_dim": [Interval(Integral, 1, None, closed="left")],
        "hidden_dim": [Interval(Integral, 1, None, closed="left")],
        "temperature": [Interval(Real, 0, None, closed="neither")],
        "dropout": [Interval(Real, 0, 1, closed="left")],
        "max_epochs": [Interval(Integral, 1, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left"), None],
        "lr": [Interval(Real, 0, None, closed="neither")],
        "weight_decay": [Interval(Real, 0, None, closed="left")],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither"), None],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left"), None],
        "optimizer": [StrOptions({"adam", "adamw", "sgd", "rmsprop", "lbfgs"}), type],
        "callbacks": [list, None],
        "net_params": [dict, None],
        "single_rule": [StrOptions({"most_stable", "finest", "coarsest"})],
        "train_assignment": [StrOptions({"loo", "self"})],
        "standardize": ["boolean"],
        "device": [StrOptions({"cpu"})],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
    }

    def __init__(self, mixing="learned", *, extractor=None, n_neighbors=15, resolution_range=(0.01, 30.0),
                 n_resolutions=48, n_restarts=2, max_configurations=8, min_log_width=0.1, assign_neighbors=10,
                 stability_features="graph", task="auto", unlabelled_marker="auto", output="embedding",
                 passthrough=True, embed_dim=16, context_dim=32, hidden_dim=32, temperature=1.0, dropout=0.0,
                 max_epochs=300, batch_size=None, lr=1e-2, weight_decay=1e-4, validation_fraction=None,
                 n_iter_no_change=10, optimizer="adam", callbacks=None, net_params=None, single_rule="most_stable",
                 train_assignment="loo", standardize=True, device="cpu", n_jobs=None, verbose=0, random_state=None):
        self.mixing = mixing
        self.extractor = extractor
        self.n_neighbors = n_neighbors
        self.resolution_range = resolution_range
        self.n_resolutions = n_resolutions
        self.n_restarts = n_restarts
        self.max_configurations = max_configurations
        self.min_log_width = min_log_width
        self.assign_neighbors = assign_neighbors
        self.stability_features = stability_features
        self.task = task
        self.unlabelled_marker = unlabelled_marker
        self.output = output
        self.passthrough = passthrough
        self.embed_dim = embed_dim
        self.context_dim = context_dim
        self.hidden_dim = hidden_dim
        self.temperature = temperature
        self.dropout = dropout
        self.max_epochs = max_epochs
        self.batch_size = batch_size
        self.lr = lr
        self.weight_decay = weight_decay
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.optimizer = optimizer
        self.callbacks = callbacks
        self.net_params = net_params
        self.single_rule = single_rule
        self.train_assignment = train_assignment
        self.standardize = standardize
        self.device = device
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.random_state = random_state

    # --------------------------------------------------------------- target
    def _check_y(self, y, n, *, fitted=False):
        """The checked target (:class:`~._targets.PartialTarget`): by the parameters, or with ``fitted`` by the
        task and marker read from the training ``y`` (so that test folds are read as the training rows were)."""
        if fitted:
            return check_partial_target(y, n, self.task_, self.unlabelled_marker_)
        return check_partial_target(y, n, self.task, self.unlabelled_marker)

    def _make_extractor(self, seed):
        if self.extractor is not None:
            ext = clone(self.extractor)
            if ext.get_params().get("random_state", 0) is None:
                ext.set_params(random_state=seed)
            return ext
        return ConfigurationExtractor(
            n_neighbors=self.n_neighbors, resolution_range=self.resolution_range, n_resolutions=self.n_resolutions,
            n_restarts=self.n_restarts, max_configurations=self.max_configurations, min_log_width=self.min_log_width,
            assign_neighbors=self.assign_neighbors, stability_features=self.stability_features,
            standardize=self.standardize, n_jobs=self.n_jobs, verbose=self.verbose, random_state=seed)

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Extract configurations on all rows and train the selector on the labelled ones.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            All rows, labelled and unlabelled.
        y : array-like of shape (n_samples,)
            Class labels or continuous targets; unlabelled rows marked by ``unlabelled_marker``.

        Returns
        -------
        self : MixConfigAugmenter
            The fitted augmenter.
        """
        check_resolution_range(self.resolution_range)
        if y is None:
            validate_data(self, X, y, dtype=np.float64, ensure_min_samples=2)  # raises "requires y"
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2)
        target = self._check_y(y, X.shape[0])
        task, y, mask = target.task, target.y, target.mask
        self.task_ = task
        self.labelled_mask_ = mask
        self.unlabelled_marker_ = target.marker
        rng = check_random_state(self.random_state)
        ext_seed, torch_seed, split_seed = (int(s) for s in rng.randint(0, MAX_SEED, size=3))
        ext = self._make_extractor(ext_seed)
        ext.fit(X)
        self.extractor_ = ext
        M = ext.n_configurations_
        self.n_configurations_ = M
        widths = ext.stability_[:, ext.stability_names_.index("log_width")] if "log_width" in ext.stability_names_ \
            else np.log(ext.resolutions_[:, 1] / ext.resolutions_[:, 0])
        if self.single_rule == "most_stable":
            self.single_index_ = int(np.argmax(widths))  # ties -> first = fewer clusters
        elif self.single_rule == "finest":
            self.single_index_ = M - 1
        else:
            self.single_index_ = 0
        st = ext.stability_
        sd = st.std(axis=0)
        self.stats_scaled_ = (st - st.mean(axis=0)) / np.where(sd > 0, sd, 1.0)

        yl = y[mask]
        if task == "classification":
            self.classes_, y_enc = np.unique(yl, return_inverse=True)
            if self.classes_.shape[0] < 2:
                raise ValueError("Classification needs at least 2 classes among the labelled rows (unlabelled "
                                 f"rows are marked by {describe_marker(target.marker)}), got "
                                 f"{self.classes_.tolist()}. Pass unlabelled_marker='missing' if -1 is a class "
                                 "and every row is labelled.")
            target, n_out = y_enc.astype(np.int64), int(self.classes_.shape[0])
        else:
            self.y_mean_ = float(yl.mean())
            sd = float(yl.std())
            self.y_scale_ = sd if sd > 0 else 1.0
            target, n_out = (yl - self.y_mean_) / self.y_scale_, 1
        self._n_out = n_out

        self.module_state_, self.loss_curve_, self.history_, self.n_iter_ = None, [], [], 0
        if self.mixing != "concat":
            import copy

            import torch

            from sklearn_frontier.utils._skorch import (
                IndexSplit,
                check_callbacks,
                check_net_params,
                early_stopping,
                plain_history,
                resolve_optimizer,
            )

            from ._selector import fit_selector, single_thread, state_to_numpy

            resolve_optimizer(self.optimizer)
            net_params = check_net_params(self.net_params)
            callbacks = [copy.deepcopy(cb) for cb in check_callbacks(self.callbacks)]
            with single_thread():
                gen = torch.Generator().manual_seed(torch_seed)
                S = ext._assign_Z(ext.X_fit_, exclude_self=self.train_assignment == "loo")
                module = self._build_module(gen)
                val_idx = None
                n_lab = target.shape[0]
                if self.validation_fraction is not None and n_lab >= 4:
                    from sklearn.model_selection import train_test_split

                    strat = target if task == "classification" and np.bincount(target).min() >= 2 else None
                    try:
                        _, val_idx = train_test_split(np.arange(n_lab), test_size=self.validation_fraction,
                                                      random_state=split_seed, stratify=strat)
                    except ValueError:
                        _, val_idx = train_test_split(np.arange(n_lab), test_size=self.validation_fraction,
                                                      random_state=split_seed)
                batch = self.batch_size
                if batch is None and n_lab > 2048:
                    batch = 256
                if val_idx is not None and self.n_iter_no_change is not None:
                    callbacks.append(("early_stopping", early_stopping(self.n_iter_no_change)))
                net = fit_selector(
                    module, ext.X_fit_[mask], [s[mask] for s in S], self.stats_scaled_, target, task=task,
                    max_epochs=self.max_epochs, batch_size=batch, lr=self.lr, weight_decay=self.weight_decay,
                    generator=gen, optimizer=self.optimizer, callbacks=callbacks,
                    train_split=None if val_idx is None else IndexSplit(val_idx), net_params=net_params,
                    verbose=self.verbose)
                self.history_ = plain_history(net.history)
                self.loss_curve_ = [row["train_loss"] for row in self.history_]
                self.n_iter_ = len(self.history_)
                self.module_state_ = state_to_numpy(module)
        d = self.embed_dim if (self.mixing != "concat" and self.output == "embedding") else int(ext.n_clusters_.sum())
        self._n_features_out = (X.shape[1] if self.passthrough else 0) + d
        return self

    def _build_module(self, gen=None):
        import torch

        from ._selector import Selector

        ext = self.extractor_
        if gen is None:
            gen = torch.Generator().manual_seed(0)  # overwritten by the stored state
        return Selector(ext.n_features_in_, [int(k) for k in ext.n_clusters_], self.stats_scaled_.shape[1],
                        self._n_out, embed_dim=self.embed_dim, context_dim=self.context_dim,
                        hidden_dim=self.hidden_dim, temperature=self.temperature, dropout=self.dropout,
                        mode=self.mixing, single_index=self.single_index_, generator=gen)

    def _forward(self, X):
        """``(S, w, z, out)`` for validated X (numpy arrays)."""
        ext = self.extractor_
        Z = ext._standardize(X)
        S = ext._assign_Z(Z)
        if self.mixing == "concat":
            M = self.n_configurations_
            return S, np.full((X.shape[0], M), 1.0 / M), None, None
        import torch

        from ._selector import numpy_to_state, single_thread

        with single_thread(), torch.no_grad():
            module = numpy_to_state(self._build_module(), self.module_state_)
            out, w, z = module(torch.as_tensor(Z), [torch.as_tensor(s) for s in S],
                               torch.as_tensor(self.stats_scaled_))
        return S, w.numpy().astype(np.float64), z.numpy().astype(np.float64), out.numpy().astype(np.float64)

    def _validated(self, X):
        check_is_fitted(self)
        return validate_data(self, X, dtype=np.float64, reset=False)

    def fit_transform(self, X, y=None, **fit_params):
        """Fit on all rows and return ``transform(X)``, warning when some rows are unlabelled.

        A ``Pipeline`` calls this and then hands ``y`` unchanged to the next step, which would learn the
        unlabelled marker (-1) as a class or fail on a missing value; :class:`SemiSupervisedAugmentation` is the
        supported form.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            All rows, labelled and unlabelled.
        y : array-like of shape (n_samples,)
            Targets, with unlabelled rows marked as in :meth:`fit`.
        **fit_params : dict
            Unused; kept for the transformer API.

        Returns
        -------
        Xt : ndarray of shape (n_samples, n_output_features)
            The augmented features of every row.
        """
        self.fit(X, y)
        n_unlabelled = int((~self.labelled_mask_).sum())
        if n_unlabelled:
            warn_user(f"{n_unlabelled} of {self.labelled_mask_.shape[0]} rows are unlabelled: a step after "
                      f"MixConfigAugmenter (marked by {describe_marker(self.unlabelled_marker_)}) in a Pipeline "
                      "receives y unchanged and would learn the marker as a "
                      "target. Use SemiSupervisedAugmentation(estimator, augmenter) to fit the augmenter on every "
                      "row and the estimator on the labelled ones.", UnlabelledRowsWarning)
        return self.transform(X)

    def transform(self, X):
        """``[X, z]`` (embedding), ``[X, w_1 S_1, ..., w_M S_M]`` (assignments) or ``[X, S_1, ..., S_M]`` (concat).

        Parameters
        ----------
        X : array-like of shape (n, n_features)
            Rows to augment.

        Returns
        -------
        Xt : ndarray of shape (n, n_features_out), float64
            The augmented features.
        """
        X = self._validated(X)
        S, w, z, _ = self._forward(X)
        if self.mixing == "concat":
            extra = np.hstack(S)
        elif self.output == "assignments":
            extra = np.hstack([w[:, [i]] * s for i, s in enumerate(S)])
        else:
            extra = z
        return np.hstack([X, extra]) if self.passthrough else np.ascontiguousarray(extra)

    def mixing_weights(self, X):
        """Per-sample weights over the configurations; rows sum to one.

        Parameters
        ----------
        X : array-like of shape (n, n_features)
            Rows to weight.

        Returns
        -------
        w : ndarray of shape (n, n_configurations_)
            Mixing weights of each row.
        """
        X = self._validated(X)
        return self._forward(X)[1]

    def dominant_configuration(self, X):
        """Index of the configuration with the largest weight for each row.

        Parameters
        ----------
        X : array-like of shape (n, n_features)
            Rows to inspect.

        Returns
        -------
        index : ndarray of shape (n,), int
            Configuration index of each row.
        """
        return self.mixing_weights(X).argmax(axis=1)

    @available_if(_has_head)
    def score(self, X, y):
        """Accuracy (classification) or R² (regression) of the selector's own linear head on ``z``, over the
        labelled rows of ``y`` (marked as in :meth:`fit`).

        Parameters
        ----------
        X : array-like of shape (n, n_features)
            Rows to score.
        y : array-like of shape (n,)
            Targets; unlabelled rows are ignored.

        Returns
        -------
        score : float
            Accuracy or R² of the head over the labelled rows.
        """
        from sklearn.metrics import accuracy_score, r2_score

        X = self._validated(X)
        target = self._check_y(y, X.shape[0], fitted=True)
        if not target.mask.any():
            raise ValueError("score needs at least one labelled row in y.")
        out = self._forward(X[target.mask])[3]
        if self.task_ == "classification":
            return float(accuracy_score(target.y[target.mask], self.classes_[out.argmax(axis=1)]))
        return float(r2_score(target.y[target.mask], out[:, 0] * self.y_scale_ + self.y_mean_))

    def get_feature_names_out(self, input_features=None):
        """Get output feature names: input names (if ``passthrough``) then ``mixconfig0..`` or ``config{i}_c{j}``.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Input feature names; ``feature_names_in_`` (or ``x0..``) when None.

        Returns
        -------
        feature_names_out : ndarray of str objects
            Output feature names.
        """
        check_is_fitted(self)
        names = list(_check_features(self, input_features)) if self.passthrough else []
        if self.mixing != "concat" and self.output == "embedding":
            names += [f"mixconfig{j}" for j in range(self.embed_dim)]
        else:
            names += list(self.extractor_.get_feature_names_out())
        return np.asarray(names, dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.transformer_tags.preserves_dtype = ["float64"]
        tags.non_deterministic = False
        return tags
