"""Global configuration of sklearn_frontier, shaped like :mod:`sklearn._config`.

The one setting today is ``backend``: which implementation of each numeric kernel in
:mod:`sklearn_frontier.kernels` runs. The environment variable ``SKLEARN_FRONTIER_BACKEND``
overrides it (tests use it to force a backend for a whole process).
"""

import os
import threading
from contextlib import contextmanager

BACKENDS = ("auto", "reference", "numba", "triton")
# "numpy" and "torch" are accepted as spellings of "reference" (the reference twin is numpy or torch).
_ALIASES = {"numpy": "reference", "torch": "reference"}
ENV_BACKEND = "SKLEARN_FRONTIER_BACKEND"

_global_config = {"backend": "auto"}
_threadlocal = threading.local()


def _get_threadlocal_config():
    if not hasattr(_threadlocal, "global_config"):
        _threadlocal.global_config = _global_config.copy()
    return _threadlocal.global_config


def _check_backend(backend):
    if not isinstance(backend, str):
        raise TypeError(f"backend must be a str among {BACKENDS}, got {type(backend).__name__}.")
    backend = _ALIASES.get(backend, backend)
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS} (or 'numpy'), got {backend!r}.")
    return backend


def get_config():
    """Return the current configuration as a dict.

    Returns
    -------
    config : dict
        Keys are parameter names of :func:`set_config`. ``backend`` reflects the
        ``SKLEARN_FRONTIER_BACKEND`` environment variable when it is set.

    Examples
    --------
    >>> import sklearn_frontier
    >>> sklearn_frontier.get_config()["backend"] in ("auto", "reference", "numba", "triton")
    True
    """
    config = _get_threadlocal_config().copy()
    env = os.environ.get(ENV_BACKEND)
    if env:
        config["backend"] = _check_backend(env)
    return config


def set_config(backend=None):
    """Set global configuration.

    Parameters
    ----------
    backend : {"auto", "reference", "numba", "triton"}, default=None
        Implementation used by every kernel. ``"auto"`` picks Triton on a CUDA device (interpreter off),
        else numba, else the reference; ``"reference"`` (alias ``"numpy"``) runs the plain numpy/torch
        oracle. ``None`` leaves the setting unchanged.

    Examples
    --------
    >>> import sklearn_frontier
    >>> sklearn_frontier.set_config(backend="reference")
    >>> sklearn_frontier.set_config(backend="auto")
    """
    local_config = _get_threadlocal_config()
    if backend is not None:
        local_config["backend"] = _check_backend(backend)


@contextmanager
def config_context(*, backend=None):
    """Context manager for temporary configuration, see :func:`set_config`.

    Parameters
    ----------
    backend : {"auto", "reference", "numba", "triton"}, default=None
        Implementation used by every kernel inside the block. ``None`` leaves the setting unchanged.

    Examples
    --------
    >>> import sklearn_frontier
    >>> with sklearn_frontier.config_context(backend="reference"):
    ...     sklearn_frontier.get_config()["backend"]  # doctest: +SKIP
    'reference'
    """
    old = get_config()
    old_local = _get_threadlocal_config().copy()
    set_config(backend=backend)
    try:
        yield
    finally:
        _get_threadlocal_config().clear()
        _get_threadlocal_config().update(old_local)
        del old
