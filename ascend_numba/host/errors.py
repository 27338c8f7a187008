"""Exceptions of the host tiling framework, named as PyPTO names them (SPEC §2), and of a launch."""

__all__ = ["TilingError", "InvalidType", "InvalidArgument", "InvalidVal", "KernelError"]


class TilingError(Exception):
    """Base of every tiling declaration or validation error."""


class InvalidType(TilingError, TypeError):
    """A value or declaration of the wrong type (a non-dict key, a bad annotation, a list of the wrong length)."""


class InvalidArgument(TilingError, ValueError):
    """Missing or extra fields, duplicate names: the arguments do not match the schema."""


class InvalidVal(TilingError, ValueError):
    """A value outside its allowed set or range."""


class KernelError(RuntimeError):
    """A lane failed at run time (for example its UB plan did not fit)."""
