"""Compiled kernel primitives, one module per family (SPEC §3).

=================  ====================================================================================
``context``        the lane: ``in_ub``, lane ranges, ``lane_error``, ``count_event``, ``trace_work``
``memory``         UB buffers: ``alloc_buffer`` (TPipe::InitBuffer), ``reinterpret`` (TRESHAPE)
``dma``            ``data_copy``, ``data_copy_pad``, ``gather`` and the byte copies under them
``preload``        ``preload``: the next tile's CopyIn, fetched over the vector ops (MTE2 ahead)
``vector``         the vector ops declared in ``host.primitives`` (Add, Muls, the casts...), SetValue
``elements``       the vector ops' element intrinsics (Max, Relu, the shifts, the NaN policy)
``cmpsel``         Compare, Compares and Select (bit masks), the ``CMPMODE`` and ``SELMODE`` modes
``cmpmask``        the compare-mask register: SetCmpMask, GetCmpMask, Compare into it, Select from it
``compound``       Axpy, MulAddDst, FusedMulAdd, MulAddRelu: the ops that read their destination
``cast_compound``  AddReluCast, SubReluCast, MulCast: an op, then a conversion to a narrower type
``index``          CreateVecIndex
``broadcast``      Brcb
``gather_mask``    GatherMask, GetGatherMaskRemainCount
``gatherb``        Gatherb: 32-byte blocks at byte offsets
``transpose``      Transpose: 16x16 blocks, NCHW <-> NHWC
``atomic``         SetAtomicAdd / Max / Min / Type, DisableDmaAtomic: copies into GM that combine;
                   InitGlobalMemory
``reduce``         WholeReduce*, RepeatReduceSum, BlockReduce*, PairReduceSum (``reduce_tensor``:
                   ReduceSum / Max / Min)
``convert``        Cast between tile types under a ``RoundMode``
``masks``          the mask register (SetMaskNorm, SetMaskCount, SetVectorMask, ResetMask) and the
                   lanes of the vector ops' level-0 form (repeats, strides, ``BinaryRepeatParams``)
``fusion``         ``vector_program``: tile fusion, a run of vector ops as one pass over the tiles (the
                   pass's source: ``fusion_codegen``; what it calls: ``fusion_runtime``)
``pinned``         pinned element functions (Exp, Ln): one implementation, compiled and interpreted
``ttrans``         TTRANS, the tile transpose
``sync``           ``sync_all`` (SyncAll), the barrier across the lanes of a launch
``tpipe``          TPipe, TQue, TQueBind, TBuf, TBufPool, SetFlag / WaitFlag, PipeBarrier
``global_tensor``  SetGlobalBuffer, GET_TILING_DATA, GetBlockIdx, GetBlockNum, GetSubBlockIdx
``debug``          ``kprint`` (AscendC::printf) and ``dump_tensor`` (DumpTensor), printed after the launch
``scalar``         GetValue and the scalar unit's helpers: GetBitCount, CountLeadingZero, GetSFFValue, CeilDivision...
``llvm``           the LLVM intrinsics the copies are built from
=================  ====================================================================================

Every primitive takes the lane context ``ctx`` first, the way an Ascend C kernel always has its
core at hand.  Tensors are 1-D NumPy views: a GM tensor is the caller's array (flat); a local
tensor is a typed view of the lane's UB bytes returned by :func:`alloc_buffer` at Init and kept
for the whole kernel.  Each primitive's checked-mode rule (``check_*``, made a hook by
:func:`ascend_numba.checked.dispatch.checked_rule`) and its trace hook sit beside it: tracing and
checking dispatch on the type of ``ctx`` (:class:`TracedLane`, :class:`CheckedLane`) and compile
to nothing with a plain :class:`Lane`.
"""

from ...host.primitives import CMPMODE, SELMODE, RoundMode
from ..lane import CheckedLane, Lane, TracedLane
from . import cast_compound, cmpsel, compound, vector
from .cast_compound import *  # noqa: F403 - AddReluCast, SubReluCast, MulCast
from .cmpsel import *  # noqa: F403 - Compare, Compares, Select
from .cmpmask import compare_register, get_cmp_mask, select_register, set_cmp_mask
from .compound import *  # noqa: F403 - Axpy, MulAddDst, FusedMulAdd, MulAddRelu
from .index import create_vec_index
from .broadcast import BrcbRepeatParams, brcb
from . import reduce
from .reduce_tensor import get_reduce_repeat_max_min_spr, get_reduce_repeat_sum_spr, reduce_max, reduce_min, reduce_sum
from .scalar import (ceil_division, count_bits_cnt_same_as_sign_bit, count_leading_zero, get_bit_count,
                     get_sff_value, get_value, scalar_cast)
from .atomic import (disable_dma_atomic, init_global_memory, set_atomic_add, set_atomic_max, set_atomic_min,
                     set_atomic_none, set_atomic_type)
from .gatherb import GatherRepeatParams, gatherb
from .transpose import TRANSPOSE_NCHW2NHWC, TRANSPOSE_ND2ND_B16, TRANSPOSE_NHWC2NCHW, TransposeParamsExt, transpose
from .ub_copy import CopyRepeatParams, copy
from .sort import MrgSort4Info, MrgSortSrcList, get_mrg_sort_result, mrg_sort, sort32
from .trans_data_5hd import TransDataTo5HDParams, get_phy_addr, trans_data_to_5hd
from .gather_mask import GatherMaskParams, gather_mask, get_gather_mask_remain_count
from .reduce import *  # noqa: F403 - the reductions and ReduceOrder
from .cast_int4 import cast_int4
from .convert import cast, cast_bf16
from .dequant import add_deq_relu, cast_dequant, set_deq_scale
from .context import (
    big_small_lane_range, contiguous_lane_range, count_event, in_ub, lane_error, trace_work,
)
from .debug import dump_tensor, kernel_prints, kprint, trap
from .masks import (MASK_PLACEHOLDER, BinaryRepeatParams, UnaryRepeatParams, reset_mask, set_mask_count,
                    set_mask_norm, set_vector_mask)
from .dma import DataCopyPadExtParams, DataCopyParams, data_copy, data_copy_pad, gather, set_pad_value
from .data_copy_nz import Nd2NzParams, Nz2NdParamsFull, SliceInfo, data_copy_slice
from .fusion import VectorProgramError, vector_program
from .memory import alloc_buffer, reinterpret
from .preload import preload
from .sync import ib_set, ib_wait, sync_all
from .ttrans import ttrans
from . import global_tensor, tpipe
from .global_tensor import *  # noqa: F403 - SetGlobalBuffer, GET_TILING_DATA, GetBlockIdx...
from .tpipe import *  # noqa: F403 - TPipe, TQue, TBuf... (Ascend C's programming model)
from .vector import *  # noqa: F403 - every declared vector op (host.primitives) and set_value

__all__ = [
    "Lane", "TracedLane", "CheckedLane",
    "in_ub", "contiguous_lane_range", "big_small_lane_range", "lane_error", "count_event", "trace_work",
    "alloc_buffer", "reinterpret",
    "data_copy", "DataCopyParams", "Nd2NzParams", "Nz2NdParamsFull", "SliceInfo", "data_copy_slice",
    "data_copy_pad", "DataCopyPadExtParams",
    "set_pad_value", "gather", "preload", "ttrans", "sync_all", "ib_set", "ib_wait",
    "kprint", "dump_tensor", "kernel_prints", "trap",
    "vector_program", "VectorProgramError", *vector.__all__, *cmpsel.__all__, *compound.__all__, *cast_compound.__all__,
    "create_vec_index", "brcb", "BrcbRepeatParams", *reduce.__all__, "reduce_sum", "reduce_max", "reduce_min",
    "get_reduce_repeat_sum_spr", "get_reduce_repeat_max_min_spr",
    "sort32", "mrg_sort", "get_mrg_sort_result", "MrgSortSrcList", "MrgSort4Info",
    "copy", "CopyRepeatParams", "trans_data_to_5hd", "TransDataTo5HDParams", "get_phy_addr",
    "gather_mask", "get_gather_mask_remain_count", "GatherMaskParams", "gatherb", "GatherRepeatParams",
    "set_atomic_add", "set_atomic_max", "set_atomic_min", "set_atomic_type", "disable_dma_atomic", "set_atomic_none",
    "init_global_memory", "get_value", "get_bit_count", "count_leading_zero", "count_bits_cnt_same_as_sign_bit",
    "get_sff_value", "ceil_division", "scalar_cast", "transpose", "TransposeParamsExt", "TRANSPOSE_ND2ND_B16",
    "TRANSPOSE_NCHW2NHWC", "TRANSPOSE_NHWC2NCHW",
    "cast", "cast_bf16", "cast_int4", "cast_dequant", "set_deq_scale", "add_deq_relu",
    "CMPMODE", "SELMODE", "RoundMode", "set_cmp_mask", "get_cmp_mask", "compare_register", "select_register",
    "set_mask_norm", "set_mask_count", "set_vector_mask", "reset_mask", "MASK_PLACEHOLDER", "BinaryRepeatParams",
    "UnaryRepeatParams", *tpipe.__all__, *global_tensor.__all__,
]
