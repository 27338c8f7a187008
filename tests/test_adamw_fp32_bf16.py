"""ApplyAdamW: 0 ULP from the op-by-op NumPy reference for float32 and bfloat16 (float16:
test_adamw.py), on the combinations ``adamw_cases.runs_zero_ulp`` gives each dtype.  Apart from
test_adamw.py so that the two test workers share the AdamW compiles.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from adamw_cases import KEYS, VARIANTS, check_zero_ulp, runs_zero_ulp

CASES = [(dtype, amsgrad, maximize, variant) for dtype in (np.float32, ml_dtypes.bfloat16) for amsgrad, maximize in KEYS
         for variant in VARIANTS if runs_zero_ulp(dtype, amsgrad, maximize, variant)]


@pytest.mark.parametrize("dtype, amsgrad, maximize, variant", CASES,
                         ids=lambda v: np.dtype(v).name if isinstance(v, type) else str(v))
def test_zero_ulp_against_reference(dtype, amsgrad, maximize, variant):
    check_zero_ulp(dtype, amsgrad, maximize, variant)
