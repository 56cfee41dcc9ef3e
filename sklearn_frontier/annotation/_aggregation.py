"""Label aggregation of an annotation matrix: majority vote and Dawid–Skene (full and one-coin)."""

import warnings

import numpy as np
from scipy.special import logsumexp
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from ._validation import count_votes, encode_annotation_matrix


def majority_vote(Y, *, classes=None, missing_label=np.nan, tie_break="random", evidence=None, empty="random",
                  random_state=None, return_proba=False):
    """Majority vote of each row of an annotation matrix.

    Parameters
    ----------
    Y : array-like of shape (n_samples, n_annotators) or (n_samples,)
        Labels, ``missing_label`` for missing.
    classes : array-like, default=None
        The label set (default: the observed labels).
    missing_label : scalar, default=np.nan
        Marker of a missing label.
    tie_break : {"random", "lowest", "evidence"}, default="random"
        "random": seeded hash keys; "lowest": the lowest class; "evidence": the largest
        ``evidence[i]`` entry among the tied classes, then random.
    evidence : array-like of shape (n_samples, n_classes), default=None
        Required by ``tie_break="evidence"``.
    empty : {"random", "missing"}, default="random"
        Rows without a label get a random class, or ``missing_label`` (object/float output).
    random_state : int, RandomState instance or None, default=None
        Seeds the random tie-breaking keys.
    return_proba : bool, default=False
        Also return the normalized vote fractions (uniform for empty rows).

    Returns
    -------
    labels : ndarray of shape (n_samples,)
        Majority label of each row.
    proba : ndarray of shape (n_samples, n_classes)
        Vote fractions, returned only if ``return_proba``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.annotation import majority_vote
    >>> majority_vote(np.array([[0, 0, 1], [1, np.nan, 1]]))
    array([0., 1.])
    """
    codes, classes = encode_annotation_matrix(Y, classes=classes, missing_label=missing_label, warn_column=False)
    C = count_votes(codes, classes.size)
    n, K = C.shape
    rng = check_random_state(random_state)
    keys = rng.random_sample((n, K))
    if tie_break not in ("random", "lowest", "evidence"):
        raise ValueError(f"tie_break must be 'random', 'lowest' or 'evidence', got {tie_break!r}.")
    if empty not in ("random", "missing"):
        raise ValueError(f"empty must be 'random' or 'missing', got {empty!r}.")
    cand = C >= C.max(axis=1, keepdims=True)
    if tie_break == "lowest":
        codes_out = np.argmax(cand, axis=1)
    else:
        if tie_break == "evidence":
            if evidence is None:
                raise ValueError("tie_break='evidence' needs `evidence` of shape (n_samples, n_classes).")
            ev = np.asarray(evidence, dtype=float)
            if ev.shape != C.shape:
                raise ValueError(f"evidence must have shape {C.shape}, got {ev.shape}.")
            sec = np.where(cand, ev, -np.inf)
            cand &= sec >= sec.max(axis=1, keepdims=True)
        codes_out = np.argmax(np.where(cand, keys, -1.0), axis=1)
    labelled = C.sum(axis=1) > 0
    labels = classes[codes_out]
    if empty == "missing" and not labelled.all():
        labels = labels.astype(object if classes.dtype.kind not in "fiu" else float)
        labels[~labelled] = missing_label
    if return_proba:
        tot = C.sum(axis=1, keepdims=True)
        proba = np.where(tot > 0, C / np.maximum(tot, 1), 1.0 / K)
        return labels, proba
    return labels


def _observations(codes):
    rows, cols = np.nonzero(codes >= 0)
    return rows, cols, codes[rows, cols].astype(np.int64)


def _dawid_skene_codes(codes, K, *, model="full", max_iter=100, tol=1e-6, smoothing=0.01, confusion_prior=None,
                       init=None, gold=None):
    """EM on integer codes; returns ``(T, params)`` with T the (n, K) posteriors.

    ``confusion_prior`` (K, K) replaces ``smoothing`` as the additive pseudo-counts of every worker's confusion
    rows (full model only): the MAP estimate under a Dirichlet prior, which the online model shares. ``init``
    (n, K) starts EM from given posteriors instead of the normalized votes. ``gold`` ({item: code}) pins the
    posteriors of items whose class is known.
    """
    gold_rows = np.fromiter((gold or {}).keys(), np.int64)
    gold_codes = np.fromiter((gold or {}).values(), np.int64)
    if model not in ("full", "one_coin"):
        raise ValueError(f"model must be 'full' or 'one_coin', got {model!r}.")
    n, m = codes.shape
    s = float(smoothing)
    rows, cols, labs = _observations(codes)
    C = count_votes(codes, K)
    labelled = C.sum(axis=1) > 0
    T = np.where(labelled[:, None], C / np.maximum(C.sum(axis=1, keepdims=True), 1), 1.0 / K)
    if init is not None:
        T = np.array(init, dtype=float)
    S = np.full((K, K), s) if confusion_prior is None else np.asarray(confusion_prior, dtype=float)
    n_l = int(labelled.sum())
    per_worker = np.bincount(cols, minlength=m).astype(float)
    objective, converged, it = -np.inf, False, 0
    for it in range(1, max_iter + 1):
        # M-step
        prior = (T[labelled].sum(axis=0) + s) / (n_l + K * s)
        if model == "full":
            num = np.empty((m, K, K))
            for k in range(K):
                num[:, k, :] = np.bincount(cols * K + labs, weights=T[rows, k], minlength=m * K).reshape(m, K)
            conf = (num + S) / (num.sum(axis=2, keepdims=True) + S.sum(axis=1)[:, None])
            log_conf = np.log(conf)
            log_reg = s * np.log(prior).sum() + float((S * log_conf).sum())
        else:
            hit = np.bincount(cols, weights=T[rows, labs], minlength=m)
            acc = (hit + s) / (per_worker + 2 * s)
            off = (1 - acc) / max(K - 1, 1)
            log_conf = np.log(np.where(np.eye(K, dtype=bool)[None], acc[:, None, None],
                                       np.maximum(off, 1e-300)[:, None, None]))
            log_reg = s * (np.log(prior).sum() + np.log(acc).sum() + np.log(np.maximum(1 - acc, 1e-300)).sum())
        # E-step
        logT = np.tile(np.log(prior), (n, 1))
        contrib = log_conf[cols, :, labs]  # (n_obs, K): log P(label | true class k)
        for k in range(K):
            logT[:, k] += np.bincount(rows, weights=contrib[:, k], minlength=n)
        norm = logsumexp(logT, axis=1, keepdims=True)
        T = np.exp(logT - norm)
        T[~labelled] = prior
        if gold_rows.size:
            T[gold_rows] = np.eye(K)[gold_codes]
        new_objective = float(norm[labelled].sum() + log_reg)
        if it > 1 and new_objective - objective < tol * abs(new_objective):
            objective = new_objective
            converged = True
            break
        objective = new_objective
    if not converged:
        warnings.warn(f"Dawid-Skene did not converge in {max_iter} iterations.", ConvergenceWarning, stacklevel=3)
    params = {"prior": prior, "confusion": np.exp(log_conf), "objective": objective, "n_iter": it}
    if model == "one_coin":
        params["accuracy"] = acc
    return T, params


def dawid_skene(Y, *, model="full", classes=None, missing_label=np.nan, max_iter=100, tol=1e-6, smoothing=0.01,
                return_params=False):
    """Dawid–Skene EM aggregation (full confusion matrices or the one-coin model).

    Parameters
    ----------
    Y : array-like of shape (n_samples, n_annotators)
        Labels, ``missing_label`` for missing.
    model : {"full", "one_coin"}, default="full"
        Per-worker K x K confusion matrices, or one accuracy per worker.
    classes : array-like, default=None
        The label set (default: the observed labels).
    missing_label : scalar, default=np.nan
        Marker of a missing label.
    max_iter : int, default=100
        ConvergenceWarning when reached.
    tol : float, default=1e-6
        Stop when the MAP objective gains less than ``tol * |objective|``.
    smoothing : float, default=0.01
        Additive (Dirichlet) smoothing of the class prior and the confusion entries.
    return_params : bool, default=False
        Also return ``{"prior", "confusion", "objective", "n_iter", ("accuracy"), "proba"}``.

    Returns
    -------
    labels : ndarray of shape (n_samples,)
        MAP label of each row.
    params : dict
        Fitted parameters, returned only if ``return_params``.

    References
    ----------
    Dawid & Skene, "Maximum likelihood estimation of observer error-rates using the EM algorithm",
    JRSS C 28 (1979).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.annotation import dawid_skene
    >>> Y = np.array([[0, 0, 1], [1, 1, 1], [0, 0, np.nan], [1, 1, 0]])
    >>> dawid_skene(Y)
    array([0., 1., 0., 1.])
    """
    codes, classes = encode_annotation_matrix(Y, classes=classes, missing_label=missing_label, warn_column=False)
    T, params = _dawid_skene_codes(codes, classes.size, model=model, max_iter=max_iter, tol=tol,
                                   smoothing=smoothing)
    labels = classes[np.argmax(T, axis=1)]
    if return_params:
        params["proba"] = T
        params["classes"] = classes
        return labels, params
    return labels
