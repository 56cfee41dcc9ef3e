"""Long fits show a tqdm bar on stderr when ``verbose > 0`` and stay silent by default."""

import re

import numpy as np
import pytest
from sklearn.datasets import make_blobs

from sklearn_frontier.utils._progress import progress_bar


def _smave(verbose):
    from sklearn_frontier import SMAVE

    rng = np.random.default_rng(0)
    X = rng.standard_normal((120, 4))
    SMAVE(n_components=1, max_iter=5, random_state=0, verbose=verbose).fit(X, X[:, 0] ** 2)


def _prbast(verbose):
    from sklearn_frontier import PRBASTRegressor

    rng = np.random.default_rng(0)
    X = rng.uniform(size=(60, 2))
    PRBASTRegressor(n_trees=2, n_iter=8, n_burnin=2, thin=1, random_state=0, verbose=verbose).fit(X, X[:, 0])


def _resolution_scan(verbose):
    from sklearn_frontier import ConfigurationExtractor

    X, _ = make_blobs(80, centers=3, random_state=0)
    ConfigurationExtractor(n_neighbors=8, n_resolutions=4, n_restarts=1, random_state=0, verbose=verbose).fit(X)


def _annotation_rounds(verbose):
    from sklearn_frontier.annotation import MA3SAnnotator, SimulatedCrowd, run_annotation_loop

    X, y = make_blobs(40, centers=2, random_state=0)
    run_annotation_loop(MA3SAnnotator(n_neighbors=5, random_state=0), X, SimulatedCrowd(y, n_workers=3,
                        random_state=0), 60, batch_size=5, verbose=verbose)


def _per_layer_quantization(verbose):
    import torch

    from sklearn_frontier import quantize_model

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 16), torch.nn.ReLU(), torch.nn.Linear(16, 8))
    quantize_model(model, [torch.randn(8, 32)], method="rtn", group_size=16, verbose=verbose)


LONG_FITS = {"SMAVE epochs": _smave, "MCMC sweeps": _prbast, "resolution scan": _resolution_scan,
             "annotation rounds": _annotation_rounds, "per-layer quantization": _per_layer_quantization}


@pytest.mark.parametrize("name", list(LONG_FITS))
def test_progress_bar_only_when_verbose(name, capsys):
    LONG_FITS[name](verbose=0)
    assert capsys.readouterr().err == ""
    LONG_FITS[name](verbose=1)
    err = capsys.readouterr().err
    assert re.search(r"\|.*\| *\d+/\d+ \[", err), err  # a tqdm bar: "desc:  40%|####   | 2/5 [00:00<...]"


def test_silent_bar_supports_the_tqdm_calls():
    bar = progress_bar(range(3), verbose=0)
    bar.update(1)
    bar.set_postfix(x=1)
    bar.close()
    assert list(bar) == [0, 1, 2]
