"""SMAVE's stochastic Riemannian ascent: the step loop, neighbour reuse and the windowed stopping rule.

One function, :func:`run_steps`, serves ``SMAVE.fit`` (anchors drawn from all rows, stop on convergence) and
``SMAVE.partial_fit`` (a share of a chunk's rows, no stopping rule, a running mean over the stream). Memory
per step is O(n d + m k): the projection ``Z @ B`` and the batch's neighbour lists; the optional neighbour
memo holds at most ``MEMO_ENTRIES`` indices.
"""

import numpy as np

from sklearn_frontier.kernels.sdr import KERNEL_CODES, sdr_grad, sdr_local_wls, sdr_local_wls_weighted
from sklearn_frontier.utils._manifolds import retract
from sklearn_frontier.utils._progress import progress_bar

from ._base import projected_tree, query_neighbors, subspace_change
from ._result import SolverRun

MEMO_ENTRIES = 1 << 22  # neighbour indices memoised between refreshes (32 MiB of int64)
# "auto" batch: one pass over the rows in about this many steps (the batch rows of python -m benchmarks smave time
# the choice against fixed batch sizes)
STEPS_PER_EPOCH = 200
MIN_BATCH = 64
MAX_BATCH = 8192
# Stopping rule (tuned on the real-data rows and the n = 1000 grid of the benchmark): stop when two windows'
# mean projections differ by less than max(tol, STATISTICAL_TOL * sqrt(d (p - d) / n), NOISE_FRACTION * the
# window's RMS spread). The second term is a fraction of the subspace's sampling resolution, so that a small
# data set does not chase a 1e-3 change far below its own standard error (diabetes, Auto: ConvergenceWarnings);
# at n = 10^6, p = 50, d = 2 it is 1.5e-3, near tol. The third stops once the windows differ by less than half their
# own noise
# (with the whole spread the rule fired at the first comparison on small n, before the ascent had converged:
# Concrete d = 1).
STATISTICAL_TOL = 0.15
NOISE_FRACTION = 0.5
AVERAGE_GAMMA = 1.0  # partial_fit's running mean weights step t by (t + 1) ** gamma (chosen; no benchmark sweeps it)


def auto_batch_size(n):
    """The "auto" mini-batch: ``clip(ceil(n / 200), 64, 8192)`` anchors, clipped to n."""
    return int(min(n, max(MIN_BATCH, min(MAX_BATCH, -(-n // STEPS_PER_EPOCH)))))


def step_size(t, eta0, schedule, decay_steps):
    """The step size at step ``t``: "invscaling" ``eta0 / (1 + t / tau)``, "sqrt" ``eta0 / sqrt(1 + t / tau)``."""
    if schedule == "invscaling":
        return eta0 / (1.0 + t / decay_steps)
    if schedule == "sqrt":
        return eta0 / np.sqrt(1.0 + t / decay_steps)
    return eta0


class NeighbourSource:
    """Projected-space neighbour sets, refreshed on a schedule or when the subspace has moved.

    Between refreshes the k-d tree and the reference projection ``P_ref`` are stale: the neighbours of anchor j
    are its k nearest points under ``P_ref`` (weights always use the current projection). Because such a set
    depends only on j and the refresh, it is memoised (when ``n k <= MEMO_ENTRIES``) and every anchor is queried
    at most once per refresh.
    """

    def __init__(self, n, k, refresh, refresh_tol, memo=True):
        self.k, self.refresh, self.refresh_tol = k, refresh, refresh_tol
        self.memo = memo and n * k <= MEMO_ENTRIES
        self.cache = np.empty((n, k), dtype=np.int64) if self.memo else None
        self.stamp = np.full(n, -1, dtype=np.int64) if self.memo else None
        self.epoch = -1
        self.tree = self.P_ref = self.B_ref = None
        self.n_refresh = 0
        self.n_queried = 0

    def due(self, t, B):
        if self.tree is None:
            return True
        if self.refresh == "auto":
            return subspace_change(self.B_ref, B) > self.refresh_tol
        return t % self.refresh == 0

    def update(self, t, B, P):
        if self.due(t, B):
            self.tree, self.P_ref, self.B_ref = projected_tree(P), P, B
            self.epoch += 1
            self.n_refresh += 1

    def get(self, anchors):
        if not self.memo:
            self.n_queried += anchors.shape[0]
            return query_neighbors(self.tree, self.P_ref[anchors], self.k)
        missing = anchors[self.stamp[anchors] != self.epoch]
        if missing.shape[0]:
            self.cache[missing] = query_neighbors(self.tree, self.P_ref[missing], self.k)
            self.stamp[missing] = self.epoch
            self.n_queried += missing.shape[0]
        return self.cache[anchors]


def window_distance(Ua, Ub):
    """``||mean_a B B^T - mean_b B B^T||_F`` for stacked windows ``U = [B_1 .. B_w] / sqrt(w)`` (no p x p)."""
    ga, gb, gab = Ua.T @ Ua, Ub.T @ Ub, Ua.T @ Ub
    return float(np.sqrt(max(np.sum(ga * ga) + np.sum(gb * gb) - 2.0 * np.sum(gab * gab), 0.0)))


def window_spread(U, d):
    """RMS distance ``sqrt(mean_i ||B_i B_i^T - mean B B^T||_F^2) = sqrt(d - ||U^T U||_F^2)`` of a window."""
    g = U.T @ U
    return float(np.sqrt(max(d - np.sum(g * g), 0.0)))


def window_mean_basis(U, d):
    """The d leading eigenvectors of the window's mean projection ``U U^T`` (top left singular vectors of U)."""
    u, _, _ = np.linalg.svd(U, full_matrices=False)
    return np.ascontiguousarray(u[:, :d])


class StreamAverage:
    """Weighted running mean of the iterates' projections ``sum_t w_t B_t B_t^T / sum_t w_t``, kept at rank d.

    Polynomial-decay averaging across ``partial_fit`` calls: step ``t`` with ``m`` anchors has weight
    ``m (t + 1) ** gamma``, so the transient of the first steps fades while every later anchor counts. The mean is
    truncated to its top d eigenvectors after each step (``[sqrt(1 - a) B_avg, sqrt(a) B_t]``, a (p, 2d) SVD,
    O(p d^2)); to first order in the spread of the iterates this is the exact average's leading subspace.
    """

    def __init__(self, B=None, weight=0.0, gamma=1.0):
        self.B, self.weight, self.gamma = B, float(weight), gamma

    def step_weight(self, t, m):
        return m * (t + 1.0) ** self.gamma

    def add(self, B, w):
        self.weight += w
        if self.B is None:
            self.B = B.copy()
            return
        a = w / self.weight
        u, _, _ = np.linalg.svd(np.hstack([np.sqrt(1.0 - a) * self.B, np.sqrt(a) * B]), full_matrices=False)
        self.B = np.ascontiguousarray(u[:, :B.shape[1]])


def run_steps(Z, y, B, *, k, kernel, ridge, eta0, learning_rate, decay_steps, retraction, batches, t0=0,
              refresh="auto", refresh_tol=0.05, tol=None, window=20, average=True, memo=True, verbose=0,
              desc="SMAVE", total=None, stream_average=None):
    """Riemannian stochastic gradient ascent from ``B`` over the anchor batches ``batches`` (an iterable).

    The stopping rule (``tol`` a float): after every ``window`` steps, the window's iterates are summarised by
    their mean projection; stop when two consecutive windows' mean projections differ (Frobenius) by less than
    ``max(tol, STATISTICAL_TOL sqrt(d (p - d) / n), NOISE_FRACTION spread)``, ``spread`` the RMS distance of the
    window's iterates from their mean. With ``average`` the returned basis is the last full window's mean
    (Polyak averaging on the Grassmannian), else the last iterate. With a :class:`StreamAverage`
    ``stream_average`` every iterate is also folded into that running mean (``partial_fit``: the returned
    ``"B"`` is then the stream's mean, and ``"B_last"`` the iterate to continue from). Returns a dict of the
    basis and the curves.
    """
    n, d = Z.shape[0], B.shape[1]
    stat_tol = STATISTICAL_TOL * np.sqrt(d * (Z.shape[1] - d) / n)
    code = KERNEL_CODES[kernel]
    frozen = refresh == "never"
    if frozen:  # neighbour sets and weights fixed at the initial basis, for all n anchors
        P0 = Z @ B
        nbr_all = query_neighbors(projected_tree(P0), P0, k)
        w_all = sdr_local_wls(P0, y, P0, nbr_all, code, 0.0, ridge)[0]
        source = None
    else:
        source = NeighbourSource(n, k, refresh, refresh_tol, memo)
    loss_curve, grad_curve, window_curve, spread_curve = [], [], [], []
    n_failed = 0
    converged = False
    current, previous, last_full = [], None, None
    bar = progress_bar(batches, total=total, desc=desc, verbose=verbose, unit="step")  # total: the step budget
    t = t0
    for anchors in bar:
        P = Z @ B
        if frozen:
            nbr, w = nbr_all[anchors], w_all[anchors]
            e, theta, rss, ok = sdr_local_wls_weighted(P, y, P[anchors], nbr, w, ridge)
        else:
            source.update(t - t0, B, P)
            nbr = source.get(anchors)
            w, e, theta, rss, ok = sdr_local_wls(P, y, P[anchors], nbr, code, 0.0, ridge)
        loss_curve.append(float(np.mean(rss)))
        n_failed += int(np.sum(~ok))
        G = sdr_grad(Z, Z[anchors], nbr, w, e, theta)
        G -= B @ (B.T @ G)  # horizontal part (a no-op at ridge 0; removes the ridge's symmetric B^T G)
        grad_curve.append(float(np.linalg.norm(G)))
        B = retract(B, step_size(t, eta0, learning_rate, decay_steps) * G, retraction)
        t += 1
        if stream_average is not None:
            stream_average.add(B, stream_average.step_weight(t, anchors.shape[0]))
        current.append(B)
        if len(current) == window:
            U = np.hstack(current) / np.sqrt(window)
            current = []
            if previous is not None:
                window_curve.append(window_distance(previous, U))
                spread_curve.append(window_spread(U, d))
            previous = last_full = U
            if (tol is not None and window_curve
                    and window_curve[-1] < max(tol, stat_tol, NOISE_FRACTION * spread_curve[-1])):
                converged = True
                break
    B_out = window_mean_basis(last_full, d) if average and last_full is not None else B
    if stream_average is not None and average and stream_average.B is not None:
        B_out = stream_average.B.copy()
    return SolverRun(B=B_out, B_last=B, n_iter=len(loss_curve), t=t, loss_curve=np.asarray(loss_curve),
                     grad_norm_curve=np.asarray(grad_curve), window_curve=np.asarray(window_curve),
                     spread_curve=np.asarray(spread_curve), converged=converged, n_failed=n_failed,
                     n_refresh=source.n_refresh if source is not None else 1,
                     n_queried=source.n_queried if source is not None else n)


def random_batches(rng, n, m, max_iter):
    """``max_iter`` batches of ``m`` distinct anchors: consecutive slices of random permutations of ``range(n)``.

    One permutation per pass (O(n) once per epoch, not per step); the < m rows left at the end of a pass are
    skipped and a new permutation starts.
    """
    order, pos = rng.permutation(n), 0
    for _ in range(max_iter):
        if pos + m > n:
            order, pos = rng.permutation(n), 0
        yield order[pos:pos + m]
        pos += m


def epoch_batches(rng, rows, m):
    """One pass over ``rows`` in a random order, in batches of ``m`` (the last one may be smaller)."""
    order = rows[rng.permutation(rows.shape[0])]
    for start in range(0, order.shape[0], m):
        yield order[start:start + m]
