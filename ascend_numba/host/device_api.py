"""The Ascend C basic API's vector instructions on A2/A3, by family, as the device names them: the
element-wise ones (issue #51's list: the asc-devkit "Memory vector compute" pages) and the rest
(issue #52's: reductions, broadcast and layout, gathers, sort, data movement, atomics); the
docs' coverage table compares them with the declared primitives
(:data:`~ascend_numba.host.primitives.PRIMITIVES`).  Mull, ExpSub, MulsCast and Truncate are the
Ascend 950's register-based API (the ``Reg矢量计算`` pages) and VectorPadding the inference AI
Core's; Interleave, DeInterleave, Scatter, the scalar GM atomics (AtomicAdd,
AtomicCas...), SetLoopModePara / ResetLoopModePara and the count form of Copy are the Ascend
950's only (c220 declares the loop-mode calls but defines them for the 950 alone: asc-devkit at
0da921b, ``impl/basic_api/kernel_operator_data_copy_intf_impl.h``), and MrgSort4, RpSort16,
ProposalConcat and ProposalExtract the Atlas inference (310P) and 910's (c220 issues nothing for
them: ``impl/basic_api/dav_c220/kernel_operator_proposal_impl.h``); none is listed.

Plain Python: no Numba here.
"""

from __future__ import annotations

from .primitives import PRIMITIVES

__all__ = ["VECTOR_API", "coverage"]

VECTOR_API = {
    "unary": ("Exp", "Ln", "Abs", "Reciprocal", "Sqrt", "Rsqrt", "Relu", "Neg", "Not"),
    "binary": ("Add", "Sub", "Mul", "Div", "Max", "Min", "And", "Or", "Prelu", "ShiftLeft", "ShiftRight"),
    "tensor-scalar": ("Adds", "Muls", "Maxs", "Mins", "Subs", "Divs", "LeakyRelu", "Ands", "Ors"),
    "compound": ("Axpy", "AddRelu", "SubRelu", "AddReluCast", "SubReluCast", "AddDeqRelu", "MulAddDst", "MulCast",
                 "FusedMulAdd", "MulAddRelu", "AbsSub", "CastDequant", "SetDeqScale"),
    "compare and select": ("Compare", "Compares", "GetCmpMask", "SetCmpMask", "Select"),
    "conversion": ("Cast",),
    "fill": ("Duplicate", "CreateVecIndex"),
    "masks": ("SetMaskNorm", "SetMaskCount", "SetVectorMask", "ResetMask"),
    "reductions": ("WholeReduceSum", "WholeReduceMax", "WholeReduceMin", "RepeatReduceSum", "BlockReduceSum",
                   "BlockReduceMax", "BlockReduceMin", "PairReduceSum", "ReduceSum", "ReduceMax", "ReduceMin",
                   "GetReduceRepeatSumSpr", "GetReduceRepeatMaxMinSpr"),
    "broadcast and layout": ("Brcb", "Transpose", "TransDataTo5HD"),
    "gather": ("Gather", "Gatherb", "GatherMask"),
    "sort": ("Sort32", "MrgSort", "GetMrgSortResult"),
    "data movement": ("DataCopy", "DataCopyPad", "SetPadValue", "Copy"),
    "atomics and fills": ("SetAtomicAdd", "SetAtomicMax", "SetAtomicMin", "SetAtomicType", "DisableDmaAtomic",
                          "InitGlobalMemory"),
    "scalar access": ("GetValue", "SetValue"),
}


def coverage() -> list[tuple[str, list[str], list[str]]]:
    """Per family: the instructions a declared primitive implements, and the ones none does yet."""
    declared = {p.device for p in PRIMITIVES.values()}
    return [(family, [n for n in names if n in declared], [n for n in names if n not in declared])
            for family, names in VECTOR_API.items()]
