"""Warnings that point at the user's line, however deep in the library (and in scikit-learn) they are raised."""

import importlib.util
import os
import sys
import warnings

import joblib
import sklearn

import sklearn_frontier


def _library_dirs():
    # The kernels folder installs as sklearn_frontier.kernels but lives beside the package in a checkout.
    kernels = importlib.util.find_spec("sklearn_frontier.kernels").submodule_search_locations
    dirs = [os.path.dirname(module.__file__) for module in (sklearn_frontier, sklearn, joblib)] + list(kernels)
    return tuple(os.path.join(os.path.realpath(d), "") for d in dirs)


# Frames inside these folders are library code: the warning is attributed to the first frame outside them.
_LIBRARY_DIRS = _library_dirs()


def user_stacklevel():
    """The ``stacklevel`` that makes ``warnings.warn`` (called by the caller) point at the first frame outside
    sklearn_frontier, scikit-learn and joblib (which runs a Pipeline's steps): the user's line."""
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.realpath(frame.f_code.co_filename).startswith(_LIBRARY_DIRS):
        frame, level = frame.f_back, level + 1
    return level


def warn_user(message, category=UserWarning):
    """``warnings.warn`` attributed to the user's line (see :func:`user_stacklevel`)."""
    warnings.warn(message, category, stacklevel=user_stacklevel())
