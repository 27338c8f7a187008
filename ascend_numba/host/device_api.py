"""The Ascend C basic API's element-wise vector instructions (issue #51's list: the asc-devkit
"Memory vector compute" pages), by family, as the device names them; the docs' coverage table
compares them with the declared primitives (:data:`~ascend_numba.host.primitives.PRIMITIVES`).

Plain Python: no Numba here.
"""

from __future__ import annotations

from .primitives import PRIMITIVES

__all__ = ["VECTOR_API", "coverage"]

VECTOR_API = {
    "unary": ("Exp", "Ln", "Abs", "Reciprocal", "Sqrt", "Rsqrt", "Relu", "Neg", "Not"),
    "binary": ("Add", "Sub", "Mul", "Div", "Max", "Min", "And", "Or", "Prelu", "Mull", "ShiftLeft", "ShiftRight"),
    "tensor-scalar": ("Adds", "Muls", "Maxs", "Mins", "Subs", "Divs", "LeakyRelu", "Ands", "Ors"),
    "compound": ("Axpy", "AddRelu", "SubRelu", "AddReluCast", "SubReluCast", "AddDeqRelu", "MulAddDst", "MulCast",
                 "FusedMulAdd", "MulAddRelu", "AbsSub", "ExpSub", "MulsCast", "CastDequant", "SetDeqScale"),
    "compare and select": ("Compare", "Compares", "GetCmpMask", "SetCmpMask", "Select"),
    "conversion": ("Cast", "Truncate"),
    "fill": ("Duplicate", "CreateVecIndex", "VectorPadding"),
    "masks": ("SetMaskNorm", "SetMaskCount", "SetVectorMask", "ResetMask"),
}


def coverage() -> list[tuple[str, list[str], list[str]]]:
    """Per family: the instructions a declared primitive implements, and the ones none does yet."""
    declared = {p.device for p in PRIMITIVES.values()}
    return [(family, [n for n in names if n in declared], [n for n in names if n not in declared])
            for family, names in VECTOR_API.items()]
