"""Errors of the public ops that carry the aclnn status code the device API would return.

The Python API raises them; ``ascend_numba.aclnn`` catches them and returns ``.code``.
"""

__all__ = ["AclnnParamError", "ParamNullptrError", "ParamInvalidError", "ParamDtypeError",
           "ACLNN_ERR_PARAM_NULLPTR", "ACLNN_ERR_PARAM_INVALID"]

ACLNN_ERR_PARAM_NULLPTR = 161001
ACLNN_ERR_PARAM_INVALID = 161002


class AclnnParamError(Exception):
    """A bad argument; ``code`` is the aclnn status for it."""

    code = ACLNN_ERR_PARAM_INVALID


class ParamNullptrError(AclnnParamError, TypeError):
    """A required tensor is missing (ACLNN_ERR_PARAM_NULLPTR)."""

    code = ACLNN_ERR_PARAM_NULLPTR


class ParamInvalidError(AclnnParamError, ValueError):
    """A shape, size or value the op does not accept (ACLNN_ERR_PARAM_INVALID)."""


class ParamDtypeError(ParamInvalidError, TypeError):
    """An unsupported or mismatched dtype (ACLNN_ERR_PARAM_INVALID)."""
