"""Quantization kernels: int4 pack/unpack, Gram accumulation, Walsh-Hadamard transform, dual-component matmul.

``dual_matmul`` has a torch reference, a numba twin (CPU) and a Triton twin (CUDA, or the CPU interpreter
under ``TRITON_INTERPRET=1``); ``lut4_matmul`` (any 4-bit format through a 16-entry value table: MXFP4, NVFP4,
INT4 group sizes torch's op does not take) a torch reference and a numba twin; ``int4pack_matmul`` (INT4
groups of 32/64/128/256) runs torch's own CPU int4 kernel (``_torch.py``: torch's kernels as a backend) with a
torch reference twin; ``int8_matmul`` (per-row int8 activations, per-channel int8 weights, int32 sums) runs
torch's int8 GEMM with a torch reference twin; the other kernels have numpy references and numba twins.
"""

from ._api import (
    accumulate_gram,
    dual_matmul,
    fwht,
    int4pack_matmul,
    lut4_dequantize,
    lut4_matmul,
    pack_int4,
    pack_int4_torch,
    pack_w4a8,
    torch_int4_fits,
    unpack_int4,
    w4a8_decode_t,
    w4a8_matmul,
    w4a8_prepare,
)
from ._api_int8 import int8_matmul, int8_matmul_available, pack_int8_weight

__all__ = ["pack_int4", "unpack_int4", "accumulate_gram", "fwht", "dual_matmul", "lut4_matmul", "lut4_dequantize",
           "pack_int4_torch", "int4pack_matmul", "torch_int4_fits", "pack_w4a8", "w4a8_matmul", "w4a8_decode_t",
           "pack_int8_weight", "int8_matmul", "int8_matmul_available", "w4a8_prepare"]
