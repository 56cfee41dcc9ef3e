"""``QuantizedEmbedding``: an embedding table stored as row-wise 4- or 8-bit codes, decoded per gathered token."""

import math

import torch

from sklearn_frontier.kernels.quantization import lut4_dequantize, pack_int4

__all__ = ["QuantizedEmbedding"]

# value of each nibble read as two's complement: 0..7, then -8..-1
_SIGNED_NIBBLES = torch.tensor([*range(8), *range(-8, 0)], dtype=torch.float32)


class QuantizedEmbedding(torch.nn.Module):
    """A drop-in ``nn.Embedding`` whose table is stored as symmetric 4- or 8-bit codes with float16 scales.

    Each row is cut into groups of ``group_size`` entries (the whole row when None); a group with largest
    magnitude ``a`` gets the scale ``s = a / q_max`` (``q_max`` = 127 for 8 bits, 7 for 4 bits, ``s`` rounded to
    float16) and codes ``q = clamp(round(w / s), -q_max - 1, q_max)``. ``forward`` gathers the codes and scales of
    the requested ids only and decodes them (``q s``), so the table is never expanded to float. 4-bit codes are
    stored two per byte (two's complement, as the linear layers' codes). Build it with :meth:`from_embedding`, or
    let :func:`quantize_model` replace a model's tables (``embedding_bits=``).

    Read more in the :ref:`User Guide <user_guide_quantization>`.

    Parameters
    ----------
    num_embeddings, embedding_dim : int
        Shape of the table.
    n_bits : {4, 8}, default=8
        Bits per stored entry.
    group_size : int or None, default=None
        Entries sharing one scale along a row (None: the whole row).
    padding_idx : int or None, default=None
        As in ``nn.Embedding`` (kept for the module's description; the stored row is used as is).

    Attributes
    ----------
    codes : torch.Tensor of dtype uint8 or int8
        The stored codes: int8 (num_embeddings, embedding_dim) for 8 bits, uint8 (num_embeddings,
        ceil(embedding_dim / 2)) holding two 4-bit two's-complement codes per byte for 4 bits (a buffer).
    scales : torch.Tensor of dtype float16, shape (num_embeddings, n_groups)
        One scale per row group (a buffer).
    n_groups : int
        Number of scale groups per row.

    See Also
    --------
    quantize_model : Replace a model's linear layers (and, with ``embedding_bits``, its embedding tables).
    TwinQuantLinear : The quantized linear layer.

    Examples
    --------
    >>> import torch
    >>> from sklearn_frontier.quantization import QuantizedEmbedding
    >>> table = torch.nn.Embedding(100, 16)
    >>> q = QuantizedEmbedding.from_embedding(table, n_bits=8)
    >>> q(torch.tensor([[1, 2, 3]])).shape
    torch.Size([1, 3, 16])
    """

    def __init__(self, num_embeddings, embedding_dim, *, n_bits=8, group_size=None, padding_idx=None):
        super().__init__()
        if n_bits not in (4, 8):
            raise ValueError(f"n_bits must be 4 or 8, got {n_bits!r}.")
        if group_size is not None and (not isinstance(group_size, int) or group_size < 1):
            raise ValueError(f"group_size must be a positive int or None, got {group_size!r}.")
        self.num_embeddings, self.embedding_dim = int(num_embeddings), int(embedding_dim)
        self.n_bits, self.group_size, self.padding_idx = int(n_bits), group_size, padding_idx
        self._group = self.embedding_dim if group_size is None else min(int(group_size), self.embedding_dim)
        self.n_groups = math.ceil(self.embedding_dim / self._group)
        V, D = self.num_embeddings, self.embedding_dim
        if n_bits == 8:
            self.register_buffer("codes", torch.zeros((V, D), dtype=torch.int8))
        else:
            self.register_buffer("codes", torch.zeros((V, (D + 1) // 2), dtype=torch.uint8))
        self.register_buffer("scales", torch.zeros((V, self.n_groups), dtype=torch.float16))

    @classmethod
    def from_embedding(cls, embedding, n_bits=8, group_size=None):
        """Quantize the table of an ``nn.Embedding``.

        Parameters
        ----------
        embedding : torch.nn.Embedding
            The table to store.
        n_bits : {4, 8}, default=8
            Bits per stored entry.
        group_size : int or None, default=None
            Entries sharing one scale along a row (None: the whole row).

        Returns
        -------
        module : QuantizedEmbedding
            The quantized table.
        """
        W = embedding.weight.detach().to(torch.float32).cpu()
        V, D = W.shape
        mod = cls(V, D, n_bits=n_bits, group_size=group_size, padding_idx=embedding.padding_idx)
        g, G = mod._group, mod.n_groups
        qmax = 127 if n_bits == 8 else 7
        Wp = torch.zeros((V, G * g), dtype=torch.float32)
        Wp[:, :D] = W
        blocks = Wp.view(V, G, g)
        scales = (blocks.abs().amax(dim=2) / qmax).to(torch.float16)  # stored precision, used for the codes
        s = scales.to(torch.float32).clamp_min(torch.finfo(torch.float16).tiny)
        q = torch.clamp(torch.round(blocks / s[..., None]), -qmax - 1, qmax).to(torch.int16).view(V, G * g)[:, :D]
        with torch.no_grad():
            mod.scales.copy_(scales)
            if n_bits == 8:
                mod.codes.copy_(q.to(torch.int8))
            else:
                mod.codes.copy_(torch.from_numpy(pack_int4(q.to(torch.int8).numpy())))
        return mod.to(embedding.weight.device)

    def _decode(self, codes, scales):
        """Float32 rows (..., embedding_dim) from gathered codes and scales."""
        lead = codes.shape[:-1]
        if self.n_bits == 4:
            # the linear layers' 4-bit decode kernel, with the two's-complement nibble table
            rows = lut4_dequantize(codes.reshape(-1, codes.shape[-1]), _SIGNED_NIBBLES,
                                   scales.reshape(-1, self.n_groups), group_size=self._group, n=self.embedding_dim)
            return rows.reshape(*lead, self.embedding_dim)
        q, s = codes.to(torch.float32), scales.to(torch.float32)
        if self.n_groups == 1:
            return q * s
        return q * s.repeat_interleave(self._group, dim=-1)[..., :self.embedding_dim]

    def dequantize(self):
        """Decode the whole table: the float32 (num_embeddings, embedding_dim) weight the codes stand for.

        Returns
        -------
        weight : torch.Tensor
            The decoded table.
        """
        return self._decode(self.codes, self.scales)

    def forward(self, input):
        """Look up the ids in ``input``: gather their codes and scales and decode only those rows.

        Parameters
        ----------
        input : torch.Tensor of int dtype
            Token ids, any shape.

        Returns
        -------
        rows : torch.Tensor of shape ``input.shape + (embedding_dim,)``
            The decoded float32 rows.
        """
        return self._decode(self.codes[input], self.scales[input])

    def memory_bits(self):
        """Stored bits of the table (codes and scales).

        Returns
        -------
        bits : int
            The number of stored bits.
        """
        return int(self.num_embeddings * (self.embedding_dim * self.n_bits + 16 * self.n_groups))

    def extra_repr(self):
        """Describe the table in the module's ``repr``.

        Returns
        -------
        text : str
            The settings, comma-separated.
        """
        return (f"{self.num_embeddings}, {self.embedding_dim}, n_bits={self.n_bits}, "
                f"group_size={self.group_size}")
