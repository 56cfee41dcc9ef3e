"""SemiSupervisedAugmentation: the augmenter learns from every row, the downstream model from the labelled ones."""

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone, is_classifier, is_regressor
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, r2_score
from sklearn.utils import _safe_indexing
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import _num_samples

from sklearn_frontier.utils._compat import HasMethods, _fit_context, check_is_fitted

from ._augmenter import MixConfigAugmenter
from ._scoring import warn_if_scorer_sees_marker


def _estimator_has(attr):
    def check(self):
        return hasattr(self.estimator_ if hasattr(self, "estimator_") else self.estimator, attr)

    return check


class SemiSupervisedAugmentation(MetaEstimatorMixin, BaseEstimator):
    """Fit an augmenter on all rows and a downstream estimator on the labelled rows of its output.

    The semi-supervised use of :class:`MixConfigAugmenter` in one estimator: the configurations are found on
    every row, then ``estimator`` is fitted on the augmented features of the labelled rows only. Unlabelled
    rows are marked as the augmenter's ``unlabelled_marker`` says: by default a missing value (NaN, None,
    ``pd.NA``) when ``y`` holds any, so that ``-1`` can be a class, else ``-1``; NaN for a regression target.
    A plain ``Pipeline([augmenter, estimator])`` cannot do this: it hands the unlabelled marker to the
    estimator as a target. It goes anywhere an estimator goes (last step of a ``Pipeline``, ``GridSearchCV``
    with ``augmenter__*`` and ``estimator__*`` parameters, ``cross_validate``). Its ``score`` ignores
    unlabelled rows; for another metric pass ``scoring=make_labelled_scorer(...)``, since scikit-learn's
    scorers count every unlabelled test row as an error (a prediction made for such a scorer warns).

    Read more in the :ref:`User Guide <user_guide_configurations>`.

    Parameters
    ----------
    estimator : estimator object, default=None
        The downstream classifier or regressor (cloned), fitted on ``[X, z(x)]`` of the labelled rows. None
        takes ``LogisticRegression(max_iter=1000)`` (pass a regressor for a regression target).
    augmenter : MixConfigAugmenter, default=None
        The augmenter (cloned); None builds ``MixConfigAugmenter()``.

    Attributes
    ----------
    augmenter_ : MixConfigAugmenter
        The augmenter fitted on every row.
    estimator_ : estimator object
        The downstream estimator fitted on the labelled rows.
    labelled_mask_ : ndarray of shape (n_samples,), dtype=bool
        Which training rows were labelled.
    unlabelled_marker_ : "missing", int, float or str
        The marker the augmenter read from the training ``y`` (see ``MixConfigAugmenter.unlabelled_marker``);
        ``score`` and :func:`make_labelled_scorer` read test targets by it.
    classes_ : ndarray of shape (n_classes,)
        Class labels (classification only).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit (only when X has string column names).

    See Also
    --------
    MixConfigAugmenter : The augmenter; its ``fit_transform`` warns when unlabelled rows would leak downstream.
    make_labelled_scorer : Any scikit-learn metric over the labelled rows, for ``cross_val_score``.
    sklearn.semi_supervised.SelfTrainingClassifier : The same ``-1`` convention for unlabelled rows.

    Notes
    -----
    ``fit`` fits the augmenter on every row (with ``task="auto"`` it takes the task from the downstream
    estimator: a classifier makes it a classification), transforms every row, and fits the estimator on the
    transformed labelled rows only. ``predict``, ``predict_proba`` and ``decision_function`` transform their
    rows with the fitted augmenter and delegate to the fitted estimator, so new rows never refit the
    configurations.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn_frontier.configurations import MixConfigAugmenter, SemiSupervisedAugmentation
    >>> from sklearn_frontier.datasets import make_two_regime_hierarchy
    >>> X, y, _ = make_two_regime_hierarchy(n_per_subblob=10, n_per_coarse=60, random_state=0)
    >>> y_partial = np.where(np.random.default_rng(0).random(y.shape[0]) < 0.2, y, -1)  # 20 % labelled
    >>> model = SemiSupervisedAugmentation(
    ...     LogisticRegression(max_iter=1000),
    ...     MixConfigAugmenter(n_resolutions=8, n_restarts=1, max_epochs=30, random_state=0),
    ... ).fit(X, y_partial)
    >>> bool(-1 in model.classes_)
    False
    >>> model.predict(X[:3]).shape
    (3,)
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit", "predict"]), None],
        "augmenter": [HasMethods(["fit", "transform"]), None],
    }

    def __init__(self, estimator=None, augmenter=None):
        self.estimator = estimator
        self.augmenter = augmenter

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Fit the augmenter on all rows, then the estimator on the labelled rows' augmented features.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            All rows, labelled and unlabelled.
        y : array-like of shape (n_samples,)
            Targets; unlabelled rows marked as the augmenter's ``unlabelled_marker`` says.

        Returns
        -------
        self : SemiSupervisedAugmentation
            The fitted estimator.
        """
        augmenter = clone(self.augmenter) if self.augmenter is not None else MixConfigAugmenter()
        estimator = clone(self.estimator) if self.estimator is not None else LogisticRegression(max_iter=1000)
        if augmenter.get_params().get("task") == "auto":
            if is_classifier(estimator):  # the downstream model says what y is
                augmenter.set_params(task="classification")
            elif is_regressor(estimator):
                augmenter.set_params(task="regression")
        augmenter.fit(X, y)
        target = augmenter._check_y(y, augmenter.labelled_mask_.shape[0], fitted=True)
        mask = target.mask
        Xt = augmenter.transform(X)
        self.augmenter_ = augmenter
        self.labelled_mask_ = mask
        self.unlabelled_marker_ = augmenter.unlabelled_marker_
        self.estimator_ = estimator.fit(Xt[mask], target.y[mask])
        for name in ("n_features_in_", "feature_names_in_"):
            if hasattr(augmenter, name):
                setattr(self, name, getattr(augmenter, name))
        if hasattr(self.estimator_, "classes_"):
            self.classes_ = self.estimator_.classes_
        return self

    def _augmented(self, X):
        check_is_fitted(self)
        warn_if_scorer_sees_marker(self.unlabelled_marker_)
        return self.augmenter_.transform(X)

    def predict(self, X):
        """Predict with the downstream estimator on ``[X, z(x)]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to predict.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predictions.
        """
        Xt = self._augmented(X)
        return self.estimator_.predict(Xt)

    @available_if(_estimator_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities of the downstream classifier on ``[X, z(x)]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to predict.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Probabilities, columns in ``classes_`` order.
        """
        Xt = self._augmented(X)
        return self.estimator_.predict_proba(Xt)

    @available_if(_estimator_has("decision_function"))
    def decision_function(self, X):
        """Decision function of the downstream estimator on ``[X, z(x)]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to score.

        Returns
        -------
        scores : ndarray
            The downstream estimator's decision values.
        """
        Xt = self._augmented(X)
        return self.estimator_.decision_function(Xt)

    def score(self, X, y, sample_weight=None):
        """Accuracy (classifier) or R² (regressor) on the labelled rows of ``(X, y)``; unlabelled rows are ignored.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to score.
        y : array-like of shape (n_samples,)
            Targets, unlabelled rows marked as in :meth:`fit`.
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights.

        Returns
        -------
        score : float
            Accuracy or R² over the labelled rows.
        """
        check_is_fitted(self)
        target = self.augmenter_._check_y(y, _num_samples(X), fitted=True)
        mask = target.mask
        if not mask.any():
            raise ValueError("score needs at least one labelled row in y.")
        pred = self.estimator_.predict(self.augmenter_.transform(_safe_indexing(X, np.flatnonzero(mask))))
        weight = None if sample_weight is None else np.asarray(sample_weight)[mask]
        metric = accuracy_score if self.augmenter_.task_ == "classification" else r2_score
        return float(metric(target.y[mask], pred, sample_weight=weight))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = (self.estimator if self.estimator is not None else LogisticRegression()).__sklearn_tags__()
        tags.estimator_type = inner.estimator_type
        tags.classifier_tags = inner.classifier_tags
        tags.regressor_tags = inner.regressor_tags
        tags.target_tags.required = True
        return tags
