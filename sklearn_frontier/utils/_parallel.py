"""joblib tasks that carry sklearn_frontier's configuration (the kernel backend) into their worker.

:func:`sklearn.utils.parallel.delayed` carries scikit-learn's configuration into worker threads and
processes; this ``delayed`` also carries :func:`sklearn_frontier.get_config`, which is thread-local and
would otherwise fall back to the defaults in a joblib worker (a thread, a loky process or a dask worker).
"""

from sklearn.utils.parallel import Parallel
from sklearn.utils.parallel import delayed as _sklearn_delayed

from sklearn_frontier._config import config_context, get_config

__all__ = ["Parallel", "delayed"]


class _WithConfig:
    """``function`` run under the sklearn_frontier configuration captured when the task was made.

    The attribute names are private on purpose: sklearn's wrapper copies this object's ``__dict__`` onto
    itself (``functools.update_wrapper``), and names like ``function``/``config`` would overwrite its own.
    """

    def __init__(self, function, config):
        self._frontier_function = function
        self._frontier_config = config

    def __call__(self, *args, **kwargs):
        with config_context(**self._frontier_config):
            return self._frontier_function(*args, **kwargs)


def delayed(function):
    """:func:`sklearn.utils.parallel.delayed`, also carrying the caller's sklearn_frontier configuration."""
    return _sklearn_delayed(_WithConfig(function, get_config()))
