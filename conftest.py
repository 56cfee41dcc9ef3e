"""Root conftest: single-threaded, interpreter-mode test runs (set before numpy/numba/torch import)."""

import os

for _key, _value in dict(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
                         NUMBA_NUM_THREADS="1", TRITON_INTERPRET="1", MPLBACKEND="Agg").items():
    os.environ.setdefault(_key, _value)  # a GPU run may export TRITON_INTERPRET=0, which triton reads as off
os.environ.setdefault("NUMBA_CACHE_DIR", os.path.expanduser("~/.cache/sklearn_frontier/numba"))

import threadpoolctl  # noqa: E402

threadpoolctl.threadpool_limits(1)
try:  # torch is a dependency, but keep collection working if only part of the stack is present
    import torch  # noqa: E402

    torch.set_num_threads(1)
except ImportError:  # pragma: no cover
    pass
