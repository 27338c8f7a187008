"""aclnnRepeat mirror: codes, messages and order of the device's checks; failures touch nothing."""

import ml_dtypes
import numpy as np
import pytest

from ascend_numba.aclnn import (
    ACLNN_ERR_PARAM_INVALID, ACLNN_ERR_PARAM_NULLPTR, ACLNN_SUCCESS, aclGetRecentErrMsg, aclnnRepeat,
    aclnnRepeatGetWorkspaceSize,
)


def _run(x, repeats, out):
    status, ws, executor = aclnnRepeatGetWorkspaceSize(x, repeats, out)
    if status != ACLNN_SUCCESS:
        return status
    return aclnnRepeat(None, ws, executor)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16, np.int64, np.bool_, np.complex64])
def test_success(dtype):
    x = (np.arange(12) % 2).astype(dtype).reshape(3, 4)
    out = np.empty((2, 6, 8), dtype)
    status, ws, executor = aclnnRepeatGetWorkspaceSize(x, [2, 2, 2], out)
    assert (status, ws) == (ACLNN_SUCCESS, 0) and aclGetRecentErrMsg() == ""
    assert aclnnRepeat(None, ws, executor) == ACLNN_SUCCESS
    assert out.tobytes() == np.tile(x, (2, 2, 2)).tobytes()
    assert aclnnRepeat(None, ws, executor) == ACLNN_ERR_PARAM_INVALID  # single use
    assert "already ran" in aclGetRecentErrMsg()


X = np.ones((2, 3), np.float32)
GOOD_OUT = np.full((4, 6), 9, np.float32)

ERROR_CASES = [
    ("null self", None, [2, 2], GOOD_OUT, ACLNN_ERR_PARAM_NULLPTR, "self is a null pointer"),
    ("null repeats", X, None, GOOD_OUT, ACLNN_ERR_PARAM_NULLPTR, "repeats is a null pointer"),
    ("null out", X, [2, 2], None, ACLNN_ERR_PARAM_NULLPTR, "out is a null pointer"),
    ("unsupported dtype", X.astype(np.float128) if hasattr(np, "float128") else X.astype("S4"), [2, 2],
     GOOD_OUT, ACLNN_ERR_PARAM_INVALID, "not supported"),
    ("dtype mismatch", X, [2, 2], GOOD_OUT.astype(np.float64), ACLNN_ERR_PARAM_INVALID, "differs from self"),
    ("too few repeats", X, [2], GOOD_OUT, ACLNN_ERR_PARAM_INVALID,
     "Number of dimensions of repeat dims can not be smaller than number of dimensions of input tensor"),
    ("negative repeat", X, [2, -1], GOOD_OUT, ACLNN_ERR_PARAM_INVALID, "non-negative"),
    ("rank above 8", np.ones((1,) * 9, np.float32), [1] * 9, np.ones((1,) * 9, np.float32),
     ACLNN_ERR_PARAM_INVALID, "must not exceed 8"),
    ("repeats above 8", X, [1] * 9, np.ones((1,) * 7 + (2, 3), np.float32), ACLNN_ERR_PARAM_INVALID,
     "must not exceed 8"),
    ("wrong out shape", X, [2, 2], np.full((4, 5), 9, np.float32), ACLNN_ERR_PARAM_INVALID, "out shape"),
]


@pytest.mark.parametrize("name, x, repeats, out, code, message", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_error_codes_and_messages_leave_out_untouched(name, x, repeats, out, code, message):
    before = None if out is None else out.copy()
    status, ws, executor = aclnnRepeatGetWorkspaceSize(x, repeats, out)
    assert status == code and executor is None
    assert message in aclGetRecentErrMsg()
    if out is not None:
        assert np.array_equal(out, before)


def test_check_order_null_before_dtype_before_rank():
    # A null out wins over a bad dtype; a bad dtype wins over too few repeats; too few over negative.
    assert aclnnRepeatGetWorkspaceSize(X.astype(np.float64), [2], None)[0] == ACLNN_ERR_PARAM_NULLPTR
    aclnnRepeatGetWorkspaceSize(X, [-1], GOOD_OUT.astype(np.int8))
    assert "differs from self" in aclGetRecentErrMsg()
    aclnnRepeatGetWorkspaceSize(np.ones((2, 2, 2), np.float32), [-1, 2], GOOD_OUT)
    assert "can not be smaller" in aclGetRecentErrMsg()


@pytest.mark.parametrize("x, repeats", [(np.ones((0, 3), np.float32), [2, 2]), (X, [0, 2])])
def test_empty_succeeds_with_nothing_launched(x, repeats):
    out = np.full((4, 6), 9, np.float32)
    status, ws, executor = aclnnRepeatGetWorkspaceSize(x, repeats, out)
    assert (status, ws) == (ACLNN_SUCCESS, 0)
    assert aclnnRepeat(None, ws, executor) == ACLNN_SUCCESS
    assert (out == 9).all()


def test_null_or_foreign_executor():
    assert aclnnRepeat(None, 0, None) == ACLNN_ERR_PARAM_NULLPTR
    assert "executor" in aclGetRecentErrMsg()
    assert aclnnRepeat(None, 0, object()) == ACLNN_ERR_PARAM_INVALID
