"""ApplyAdamW: 0 ULP from the op-by-op NumPy reference for float32 and bfloat16, every key x variant.

Apart from test_adamw.py (float16 and the rest) so that the two test workers share the AdamW
compiles: each dtype x key x variant is its own specialization, ~30 s cold.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from adamw_cases import KEYS, VARIANTS, check_zero_ulp


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("amsgrad, maximize", KEYS)
@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16], ids=lambda d: np.dtype(d).name)
def test_zero_ulp_against_reference(dtype, amsgrad, maximize, variant):
    check_zero_ulp(dtype, amsgrad, maximize, variant)
