"""Kernels of sufficient dimension reduction (SMAVE, OPG, RMAVE, MAVEDimensionCV).

K1 ``sdr_local_wls`` (local weighted linear fits in the projected space), K2 ``sdr_grad`` (closed-form Euclidean =
Riemannian gradient of the MAVE objective over a batch of anchors), K4 ``sdr_rmave_normal_eqs`` (RMAVE's global
weighted least squares), K5 ``sdr_nw_cv_mae`` (R MAVE's cross-validated smoother error), plus
``sdr_local_wls_weighted`` (K1 with given weights, SMAVE's frozen mode). K3 (OPG's ambient slopes) is K1 run on the
ambient coordinates: :func:`sdr_opg_slopes`. No Triton twin: one SGD step is about 4e5 flops, far below launch
overhead, so ``backend="triton"`` runs the numba twin.
"""

from ._api import (
    KERNEL_CODES,
    sdr_grad,
    sdr_local_wls,
    sdr_local_wls_weighted,
    sdr_nw_cv_mae,
    sdr_opg_slopes,
    sdr_rmave_normal_eqs,
)

__all__ = ["sdr_local_wls", "sdr_local_wls_weighted", "sdr_grad", "sdr_opg_slopes", "sdr_rmave_normal_eqs",
           "sdr_nw_cv_mae", "KERNEL_CODES"]
