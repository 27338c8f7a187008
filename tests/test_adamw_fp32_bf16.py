"""ApplyAdamW: 0 ULP from the op-by-op NumPy reference for float32 and bfloat16, every key x variant.

Apart from test_adamw.py (float16 and the rest) so that the two test workers share the AdamW
compiles: each dtype x key x variant is its own specialization, ~30 s cold.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import ascend_numba as an
from ascend_numba.reference.adamw import apply_adamw_reference

from adamw_cases import KEYS, SCALARS, VARIANTS, _assert_0ulp, _state


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("amsgrad, maximize", KEYS)
@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16], ids=lambda d: np.dtype(d).name)
def test_zero_ulp_against_reference(dtype, amsgrad, maximize, variant):
    var, m, v, grad, mgn = _state(dtype)
    ref = apply_adamw_reference(var, m, v, **SCALARS, grad=grad, max_grad_norm=mgn, amsgrad=amsgrad,
                                maximize=maximize, variant=variant)
    mgn_before = mgn.copy()
    got = an.apply_adamw(var, m, v, **SCALARS, grad=grad, max_grad_norm=mgn if amsgrad else None,
                         amsgrad=amsgrad, maximize=maximize, variant=variant)
    assert got[0] is var and got[1] is m and got[2] is v  # updated in place
    _assert_0ulp(got, ref)
    assert mgn.tobytes() == mgn_before.tobytes()  # read, never written
