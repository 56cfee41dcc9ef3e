"""Random-state plumbing: one top-level ``random_state`` drives every stream."""

import numpy as np
from sklearn.utils import check_random_state

MAX_SEED = np.iinfo(np.int32).max


def spawn_seeds(random_state, n):
    """Draw ``n`` independent int seeds from ``random_state`` (for chains, restarts, workers)."""
    rng = check_random_state(random_state)
    return rng.randint(0, MAX_SEED, size=n).tolist()


def torch_generator(random_state, device="cpu"):
    """A local ``torch.Generator`` seeded from ``random_state`` (never the global torch RNG)."""
    import torch

    seed = spawn_seeds(random_state, 1)[0]
    gen = torch.Generator(device=device)
    gen.manual_seed(int(seed))
    return gen


def numpy_generator(random_state):
    """A ``np.random.Generator`` seeded from a legacy ``random_state`` (int, RandomState or None)."""
    return np.random.default_rng(spawn_seeds(random_state, 1)[0])
