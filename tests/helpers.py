"""Helpers the op tests share."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
from hypothesis import strategies as st

from ascend_numba.ops.registry import random_bits

# A 64-bit word of the mask register: all set, none, or any.
MASK_WORDS = st.one_of(st.just((1 << 64) - 1), st.just(0), st.integers(0, (1 << 64) - 1))


def data(shape, dtype, seed=0) -> np.ndarray:
    """Distinct-looking values of any dtype (random bytes, so NaN payloads and every bit pattern appear)."""
    return random_bits({"x": tuple(shape)}, np.dtype(dtype), np.random.default_rng(seed))["x"]


def signed_word(word: int) -> int:
    """A 64-bit word's bits as the int64 a kernel argument takes."""
    return int(np.array(word, np.uint64).view(np.int64))


def same(got: np.ndarray, ref: np.ndarray) -> None:
    """Same shape, dtype and bytes."""
    assert got.shape == ref.shape and got.dtype == ref.dtype
    assert got.tobytes() == ref.tobytes()


def import_source(path: Path, source: str):
    """Write ``source`` (a generated kernel module) to ``path`` and import it: Numba's cache and
    the kernel's source lines need a file."""
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
