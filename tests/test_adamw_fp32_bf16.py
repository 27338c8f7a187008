"""ApplyAdamW: 0 ULP from the op-by-op NumPy reference for float32 and bfloat16 (float16, every
key x variant: test_adamw.py).

Each dtype x key x variant is its own specialization, a cold compile of 6-10 s in CI: float32 takes
one orthogonal half of the (amsgrad, maximize, variant) combinations and bfloat16 the other, so
every combination runs in one of them and each dtype meets every pair of two flags' values.
Apart from test_adamw.py so that the two test workers share the AdamW compiles.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from adamw_cases import KEYS, VARIANTS, check_zero_ulp, orthogonal_half

CASES = [(dtype, amsgrad, maximize, variant) for dtype in (np.float32, ml_dtypes.bfloat16) for amsgrad, maximize in KEYS
         for variant in VARIANTS if orthogonal_half(amsgrad, maximize, variant) == (dtype is np.float32)]


@pytest.mark.parametrize("dtype, amsgrad, maximize, variant", CASES,
                         ids=lambda v: np.dtype(v).name if isinstance(v, type) else str(v))
def test_zero_ulp_against_reference(dtype, amsgrad, maximize, variant):
    check_zero_ulp(dtype, amsgrad, maximize, variant)
