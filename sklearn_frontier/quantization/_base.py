"""Shared base of the weight quantizers: validation, calibration, fingerprints, score, quantize.

Quantizers produce a :class:`QuantizedWeight`; ``_linear.py`` alone turns one into a torch module
(``TwinQuantLinear.from_quantized``), so this module never imports torch code."""

import hashlib
import time
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin

from sklearn_frontier.utils._compat import (
    Interval,
    Options,
    StrOptions,
    _fit_context,
    check_is_fitted,
    validate_data,
)
from sklearn_frontier.utils._warnings import warn_user

from ._calibration import CalibrationStats, _to_numpy, check_calibration
from ._codecs import FORMATS
from ._formats import (
    QuantizedWeight,
    apply_input_transform,
    bits_breakdown,
    check_weight_magnitude,
    dequantize_groups,
    dequantize_weight,
    nvfp4_tensor_scale,
    quantize_groups,
    resolve_format,
)


def weight_rms(W):
    """The tensor scale of ``W``: its RMS as a float32 (1 for an all-zero weight), overflow-free.

    Raises a ValueError (too large / too small, with the representable range) when the stored format
    cannot hold ``W``'s magnitude.
    """
    _, rms = check_weight_magnitude(W)
    return np.float32(rms if rms > 0 else 1.0)


def fingerprint(row):
    return hashlib.blake2b(np.ascontiguousarray(row, dtype=np.float64).tobytes(), digest_size=8).hexdigest()


def invert_transform(T):
    """Float64 inverse of a stored transform (diag vector or blocks), or None."""
    if T is None:
        return None
    T = np.asarray(T, dtype=np.float64)
    if T.ndim == 1:
        return 1.0 / T
    return np.linalg.inv(T)


def lowrank_factors(B, V, s_W, balance="diag"):
    """Stored float16 factors ``up = s_W B G`` (m, r), ``down = G^-1 V^T`` (r, n) and G (r,).

    The quantizers call it with ``B`` in units of the tensor scale and ``s_W = 1``: the stored ``up`` is
    relative to the tensor scale (see :class:`QuantizedWeight`).
    """
    B = np.asarray(B, dtype=np.float64)
    V = np.asarray(V, dtype=np.float64)
    r = V.shape[1]
    if balance == "diag" and r:
        norms = np.linalg.norm(B, axis=0)
        G = np.where(norms > 0, 1.0 / np.sqrt(np.where(norms > 0, norms, 1.0)), 1.0)
    else:
        G = np.ones(r)
    up = (float(s_W) * B * G[None, :]).astype(np.float16)
    down = (V.T / G[:, None]).astype(np.float16)
    if not (np.all(np.isfinite(up)) and np.all(np.isfinite(down))):
        raise ValueError("low-rank factors of X overflow float16.")
    return up, down, G


def build_stored_weight(W, s_W, fmt, up=None, down=None, T=None, format_scale=None, act_bits=None,
                        act_format=None):
    """Quantize ``(W - up down) / s_W`` times ``T^-1`` and return the :class:`QuantizedWeight` that defines W_hat.

    ``W`` is float64 in absolute units; ``up``/``down``/``T`` are the stored (float16) quantities, so the
    residual is computed from exactly what is stored.
    """
    W = np.asarray(W, dtype=np.float64)
    R = W / float(s_W)
    if up is not None:
        R = R - up.astype(np.float64) @ down.astype(np.float64)
    if T is not None:
        Tinv = invert_transform(T)
        if Tinv.ndim == 1:
            R = R * Tinv[None, :]
        else:
            R = apply_input_transform(R, Tinv)
    if FORMATS[fmt.weight_format].second_scale and format_scale is None:
        format_scale = nvfp4_tensor_scale(R)
    format_scale = np.float32(1.0 if format_scale is None else format_scale)
    codes, scales, zeros = quantize_groups(R, fmt, format_scale)
    return QuantizedWeight(shape=W.shape, fmt=fmt, codes=codes, scales=scales, zero_points=zeros,
                           tensor_scale=np.float32(s_W), format_scale=format_scale, lowrank_up=up,
                           lowrank_down=down, input_transform=T, act_bits=act_bits, act_format=act_format)


def fake_quantize_activations(A, act_bits, act_format, group_size):
    """Dynamic per-token AbsMax fake quantization of activations (rows = tokens), numpy float64."""
    if act_bits is None:
        return A
    fmt = resolve_format(act_format or "int", act_bits, None, True, A.shape[1], default_group=group_size)
    codes, scales, zeros = quantize_groups(A, fmt)
    return dequantize_groups(codes, scales, zeros, fmt).astype(np.float64)


class _BaseWeightQuantizer(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Common machinery; subclasses implement ``_fit_weight(W, s_W, fmt, stats)`` -> QuantizedWeight."""

    # Fitted quantizers keep their block format as a small frozen record (see persistence.trusted_types).
    _skops_nested_types = ("sklearn_frontier.quantization._formats.FormatSpec",)

    _parameter_constraints = {
        "n_bits": [Options(Integral, {2, 3, 4, 8})],
        "group_size": [Interval(Integral, 1, None, closed="left"), None],
        "weight_format": [StrOptions(set(FORMATS))],
        "symmetric": ["boolean"],
        "act_bits": [Options(Integral, {2, 3, 4, 8}), None],
        "act_format": [StrOptions(set(FORMATS)), None],
        "mx_scale_rule": [StrOptions({"ocp", "ceil"})],
    }
    _default_group = None
    _transform_kind = "none"

    # ------------------------------------------------------------------ validation
    def _validate_weight(self, X, reset):
        X = _to_numpy(X)
        if isinstance(X, np.ndarray) and X.dtype == np.float16:
            X = X.astype(np.float32)
        return validate_data(self, X, reset=reset, dtype=[np.float64, np.float32], ensure_min_samples=2 if reset
                             else 1)

    def _stats(self, X_calib, n):
        if X_calib is None:
            return None
        X = check_calibration(X_calib, n)
        if isinstance(X, CalibrationStats):
            return X
        return CalibrationStats.from_activations(X, max_samples=4096, random_state=0)

    def _format(self, n):
        return resolve_format(self.weight_format, self.n_bits, self.group_size, self.symmetric, n,
                              self.mx_scale_rule, default_group=self._default_group)

    def _check_act(self, stats):
        if self.act_bits is not None and (stats is None or stats.samples_.shape[0] == 0):
            raise ValueError("act_bits is set, which needs token samples: pass X_calib activations (or a "
                             "CalibrationStats with max_samples > 0).")

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, X_calib=None):
        """Quantize the weight ``X`` (out_features, in_features).

        Parameters
        ----------
        X : array-like or torch.Tensor of shape (out_features, in_features)
            The weight matrix.
        y : None
            Ignored (scikit-learn's slot for targets). Calibration data passed here by position, ``fit(W, X)``,
            raises a TypeError rather than being ignored: pass it as ``X_calib``.
        X_calib : array-like of shape (n_tokens, in_features) or CalibrationStats, default=None
            Calibration activations: the output objective ``||X_calib (W - W_hat)^T||``; weight mode without.

        Returns
        -------
        self : object
            The fitted quantizer.
        """
        start = time.perf_counter()
        W = self._validate_weight(X, reset=True)
        W64 = W.astype(np.float64)
        m, n = W64.shape
        y_shape = getattr(y, "shape", ())
        if isinstance(y, CalibrationStats) or (len(y_shape) == 2 and y_shape[1] == n):
            # fit(W, X) would silently quantize without the calibration data: the second slot is y.
            raise TypeError(f"{type(self).__name__}.fit got calibration-shaped data as its second positional "
                            "argument, which is y (ignored by quantizers); pass the activations by keyword: "
                            "fit(W, X_calib=X).")
        stats = self._stats(X_calib, n)
        self._check_act(stats)
        fmt = self._format(n)
        s_W = weight_rms(W64)
        # Methods see the weight in units of its tensor scale (RMS 1): every stored part is relative to it,
        # so fitting c W gives the result for W with c times the tensor scale (no SVD of tiny/huge values).
        W_unit = W64 / float(s_W)
        qw = self._fit_weight(W_unit, np.float32(1.0), fmt, stats)
        self._store(qw, fmt)
        self._gram = None if stats is None else stats.gram_.copy()
        self._act_samples = None if (stats is None or self.act_bits is None) else stats.samples_.copy()
        self._fingerprints = {}
        for i in range(m):
            self._fingerprints.setdefault(fingerprint(W64[i]), i)
        self.group_size_ = fmt.group_size
        self.tensor_scale_ = np.float32(s_W)
        parts = bits_breakdown(m, n, fmt, rank=qw.rank, lowrank_bits=getattr(self, "lowrank_bits", 16),
                               transform=self._transform_kind_fitted(),
                               transform_block_size=self._transform_block_fitted())
        self.bits_breakdown_ = parts
        self.bits_per_weight_ = parts["total"] / (m * n)
        if self.bits_per_weight_ > fmt.n_bits + 1.0:
            # Scales, zero points and the low-rank branch are per row or group: on a small layer they cost more
            # than the codes, which a "4-bit" label would hide.
            warn_user(f"{type(self).__name__} stores this ({m}, {n}) weight in {self.bits_per_weight_:.2f} bits per "
                      f"weight, not ~{fmt.n_bits}: its scales and low-rank factors dominate on a layer this small. See "
                      "bits_breakdown_; rank_for_budget / group_size_for_budget size them for a budget.")
        # Relative errors do not depend on the tensor scale: measured in its units, as the methods select.
        self.reconstruction_error_ = self._relative_error(W_unit, dequantize_weight(qw).astype(np.float64),
                                                          self._gram, qw)
        qw.tensor_scale = np.float32(s_W)
        self.fit_time_ = time.perf_counter() - start
        return self

    def _transform_kind_fitted(self):
        return self._transform_kind

    def _transform_block_fitted(self):
        return 32

    def _store(self, qw, fmt):
        self._fmt = fmt
        self.codes_ = qw.codes
        self.scales_ = qw.scales
        self.zero_points_ = qw.zero_points
        self._format_scale = qw.format_scale
        if self._has_lowrank:
            self.lowrank_up_ = qw.lowrank_up
            self.lowrank_down_ = qw.lowrank_down
        self._input_transform = qw.input_transform

    _has_lowrank = False

    def _fitted_weight(self):
        return QuantizedWeight(
            shape=self.codes_.shape, fmt=self._fmt, codes=self.codes_, scales=self.scales_,
            zero_points=self.zero_points_, tensor_scale=self.tensor_scale_, format_scale=self._format_scale,
            lowrank_up=getattr(self, "lowrank_up_", None), lowrank_down=getattr(self, "lowrank_down_", None),
            input_transform=self._input_transform, act_bits=self.act_bits, act_format=self.act_format,
            metadata={"method": type(self).__name__, "transform_kind": self._transform_kind_fitted()})

    def _quantize_new_rows(self, W_rows):
        """QuantizedWeight for rows never seen in fit (float64, absolute units)."""
        second = FORMATS[self._fmt.weight_format].second_scale
        return build_stored_weight(W_rows, self.tensor_scale_, self._fmt, T=self._input_transform,
                                   format_scale=self._format_scale if second else None)

    # ------------------------------------------------------------------ transform / score / quantize
    def _reconstruct(self, W64):
        qw = self._fitted_weight()
        full = None
        out = np.empty(W64.shape, dtype=np.float32)
        unseen = []
        for i in range(W64.shape[0]):
            j = self._fingerprints.get(fingerprint(W64[i]))
            if j is None:
                unseen.append(i)
            else:
                if full is None:
                    full = dequantize_weight(qw)
                out[i] = full[j]
        if unseen:
            out[unseen] = dequantize_weight(self._quantize_new_rows(W64[unseen]))
        return out

    def transform(self, X):
        """Dequantized weight ``W_hat`` (row-wise; fitted rows return their stored reconstruction).

        Parameters
        ----------
        X : array-like of shape (n_rows, in_features)
            Weight rows to reconstruct.

        Returns
        -------
        W_hat : ndarray of shape (n_rows, in_features), in X's dtype
            The dequantized weight rows.
        """
        check_is_fitted(self)
        W = self._validate_weight(X, reset=False)
        return self._reconstruct(W.astype(np.float64)).astype(W.dtype)

    def _relative_error(self, W, W_hat, gram, qw=None, samples=None):
        E = W - W_hat
        if self.act_bits is not None and samples is not None and qw is not None:
            A = samples
            ref = A @ W.T
            At = apply_input_transform(A, None if qw.input_transform is None else (
                qw.input_transform if np.ndim(qw.input_transform) == 1 else np.transpose(qw.input_transform,
                                                                                        (0, 2, 1))))
            Aq = fake_quantize_activations(At.astype(np.float64), self.act_bits, self.act_format,
                                           qw.fmt.group_size)
            deq = dequantize_groups(qw.codes, qw.scales, qw.zero_points, qw.fmt, qw.format_scale)
            y = Aq @ deq.astype(np.float64).T
            if qw.lowrank_up is not None and qw.rank:
                y += (A @ qw.lowrank_down.astype(np.float64).T) @ qw.lowrank_up.astype(np.float64).T
            y *= float(qw.tensor_scale)
            num, den = np.sum((ref - y) ** 2), np.sum(ref**2)
        elif gram is None:
            num, den = np.sum(E * E), np.sum(W * W)
        else:
            num, den = np.sum((E @ gram) * E), np.sum((W @ gram) * W)
        if den <= 0:
            return 0.0 if num <= 0 else float("inf")
        return float(num / den)

    def score(self, X, y=None, *, X_calib=None):
        """Negative relative output error ``-||A (W - W_hat)^T||^2 / ||A W^T||^2``.

        Computed on ``X_calib`` (or the calibration seen in fit; the relative Frobenius error in weight
        mode). Activation quantization is included when ``act_bits`` is set.

        Parameters
        ----------
        X : array-like of shape (n_rows, in_features)
            The weight rows to evaluate.
        y : None
            Ignored (scikit-learn's slot for targets). Calibration data passed here by position, ``fit(W, X)``,
            raises a TypeError rather than being ignored: pass it as ``X_calib``.
        X_calib : array-like of shape (n_tokens, in_features) or CalibrationStats, default=None
            Calibration activations; None uses the calibration seen in fit.

        Returns
        -------
        score : float
            Negative relative error (higher is better, 0 is exact).
        """
        check_is_fitted(self)
        W = self._validate_weight(X, reset=False).astype(np.float64)
        stats = self._stats(X_calib, W.shape[1])
        gram = stats.gram_ if stats is not None else self._gram
        samples = stats.samples_ if stats is not None else self._act_samples
        W_hat = self._reconstruct(W).astype(np.float64)
        qw = self.quantize(X) if self.act_bits is not None else None
        return -self._relative_error(W, W_hat, gram, qw, samples)

    def quantize(self, X=None):
        """The stored :class:`QuantizedWeight` (of the fitted weight, or of the rows ``X``).

        Parameters
        ----------
        X : array-like of shape (n_rows, in_features), default=None
            Weight rows to quantize; None returns the fitted weight's quantization.

        Returns
        -------
        qweight : QuantizedWeight
            ``.qweight`` gives the packed uint8 codes (m, ceil(n/2)).
        """
        check_is_fitted(self)
        qw = self._fitted_weight()
        if X is None:
            return qw
        W = self._validate_weight(X, reset=False).astype(np.float64)
        idx = [self._fingerprints.get(fingerprint(row)) for row in W]
        if all(i is not None for i in idx):
            return qw.rows(np.asarray(idx))
        return self._quantize_new_rows(W)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        tags.input_tags.allow_nan = False
        tags.input_tags.sparse = False
        return tags


__all__ = ["_BaseWeightQuantizer", "build_stored_weight", "lowrank_factors", "weight_rms"]
