"""Every checked-mode rule, declared once (SPEC §8).

A :class:`Rule` says what a rule is: its name, its details by name, the message a violation
reads as and the line the documentation's rules table shows.  Everything else is derived:

* the rule's code (its index in :data:`RULES`) and, for a rule compiled code finds, its
  reporter: a compiled function taking the details by name,
  ``report.gm_write_race(ctx, prim, OPERAND_DST, tensor=r, byte=b, other_lane=o)``
  (:mod:`.dispatch` builds one per record);
* the error a violation raises (:func:`~.messages.decode_violation` names the details from the
  record and formats its message);
* the rules table of ``docs/guide/ops.md`` (:func:`rules_table`; a test keeps the page equal to it).

A rule found in more than one form (an operand that is not a tensor at all, say) declares each
form as a record of the same name; only the first carries the documentation line.

Adding a rule is adding its record here and reporting it where it is found: compiled code calls
its reporter, host code raises ``RULE.error(...)``.

Plain Python: no Numba in this module.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..host.primitives import PRIMITIVES as _DECLARED
from ..host.primitives import TENSOR_ROLES
from ..host.tpipe import BUFFER_STATES, PIPE_NAMES, POSITION_NAMES

__all__ = ["Rule", "RULES", "RULE", "REPORTED", "PRIMITIVES", "PRIMITIVE", "OPERANDS", "OPERAND_DST", "OPERAND_SRC",
           "OPERAND_SRC1", "OPERAND_TMP", "OPERAND_MASK", "MEMORIES", "GM", "UB", "GM_ACCESSES", "COUNTS", "MODES", "REPEAT_PARAMS",
           "MAX_DETAILS", "CHECK_SLOTS", "CHECK_RULE", "CHECK_PRIMITIVE", "CHECK_OPERAND", "CHECK_DETAILS", "rules_table"]

# A primitive's code is its index here (0 = none), declared in host.primitives.
PRIMITIVES = ("", *dict.fromkeys(p.device for p in _DECLARED.values()))
PRIMITIVE = {name: code for code, name in enumerate(PRIMITIVES) if name}
OPERANDS = TENSOR_ROLES
OPERAND_DST, OPERAND_SRC, OPERAND_SRC1, OPERAND_TMP, OPERAND_MASK = (OPERANDS.index(r) for r in
                                                                    ("dst", "src", "src1", "tmp", "mask"))
MEMORIES = ("GM", "UB")  # where a copy's side lies (a detail's value: its index)
GM, UB = 0, 1
GM_ACCESSES = ("read", "write")  # a gm-past-end's access (a detail's value: its index)
# What a count-out-of-range names (a detail's value: its index).
COUNTS = ("byte count", "blockCount", "blockLen", "rows", "cols", "count", "srcStride", "dstStride")
# What a mode-out-of-range names (an index).
MODES = ("CMPMODE", "SELMODE", "RoundMode", "TransposeType", "high half", "validBit")
# What a repeat-params-out-of-range names (an index): a level-0 call's parameter.
REPEAT_PARAMS = ("repeatTimes", "dstBlkStride", "src0BlkStride", "src1BlkStride", "dstRepStride", "src0RepStride",
                 "src1RepStride", "mask", "counter-mode count", "elementLengths")


@dataclass(frozen=True, eq=False)
class Rule:
    """One rule (or one form of it).  ``details``: the names of what a violation reports, in
    order; a detail named ``tensor`` is a GM argument's index, reported by its name, and one in
    ``choices`` an index into its tuple of names.  ``message``: a ``str.format`` template over
    ``operand`` and the details, or a function of them where the wording depends on a value.
    ``doc``: the rules table's line (None: another form of the rule above)."""

    name: str
    details: tuple
    message: "str | Callable[..., str]"
    doc: str | None = None
    choices: dict = field(default_factory=dict)

    @property
    def code(self) -> int:
        return RULES.index(self) + 1

    def describe(self, operand: str, details: dict) -> str:
        if callable(self.message):
            return self.message(operand=operand, **details)
        return self.message.format(operand=operand, **details)

    def error(self, lane: int, primitive: str, operand: str, details: dict):
        """The :class:`~.messages.KernelCheckError` for a violation with these (named, decoded) details."""
        from .messages import KernelCheckError

        return KernelCheckError(lane, primitive, self.name, operand, details, self.describe(operand, details))


def _out_of_bounds(operand, tensor, start, end, tensor_bytes, limit):
    where = (f"plus padding ({limit} bytes)" if limit > tensor_bytes
             else "(a view inside a larger array: no GM padding past its end to write into)")
    return f"{operand} in GM {tensor}: bytes [{start}, {end}) outside the tensor's {tensor_bytes} bytes {where}"


def _past_end(operand, tensor, access, start, end, tensor_bytes):
    return (f"{operand} in GM {tensor}: a {access} of bytes [{start}, {end}) runs {end - tensor_bytes} bytes past the "
            f"tensor's {tensor_bytes}: on the device it lands in the allocator's padding, or in the next tensor of a "
            "memory pool; fix the tiling (DataCopyPad the tail), or declare @kernel(gm_padding=...) if the kernel "
            "relies on the padding")


def _writer(other_lane):
    if other_lane == -1:
        return "DMA atomic copies (SetAtomicAdd / Max / Min) of several lanes"
    return f"a DMA atomic copy of lane {-2 - other_lane}" if other_lane < 0 else f"lane {other_lane}"


def _write_race(operand, tensor, byte, other_lane):
    return f"{operand} in GM {tensor}: byte {byte} was already written by {_writer(other_lane)}"


def _cross_core_read(operand, tensor, byte, other_lane):
    return (f"{operand} in GM {tensor}: byte {byte} was written by {_writer(other_lane)} in this launch with no "
            "SyncAll between: cores run in no order, so the read may see the old or the new value")


def _write_after_read(operand, tensor, byte, other_lane):
    reader = "several other lanes" if other_lane < 0 else f"lane {other_lane}"
    return (f"{operand} in GM {tensor}: byte {byte} was read by {reader} in this launch with no SyncAll between: "
            "cores run in no order, so the read may have seen the old or the new value")


def _count_out_of_range(operand, count, value):
    if count in ("srcStride", "dstStride"):
        return (f"{operand}: {count} of {value} bytes (a block pitch shorter than the block): the device's API "
                f"takes a {count} not negative")
    need = "at least 1" if count in ("blockCount", "blockLen") else "not negative"
    wrapped = f" (the device reads it as the unsigned {value % (1 << 32)})" if value < 0 else ""
    return f"{operand}: {count} {value}{wrapped}: the device's API takes a {count} {need}"


def _output_unwritten(operand, tensor, start, end, tensor_bytes, lane_before, lane_after):
    def who(lane):
        return "a lane before a SyncAll" if lane == -1 else f"lane {lane}"

    sides = [f"{who(lane_before)} wrote the bytes before them" if lane_before is not None else "they start the tensor",
             f"{who(lane_after)} the bytes after them" if lane_after is not None else "they end the tensor"]
    return (f"output {tensor}: bytes [{start}, {end}) of its {tensor_bytes} were written by no lane "
            f"({'; '.join(sides)}): on the device they hold whatever was in HBM; check the lanes' ranges")


# The rules, in the order the documentation lists them.
GM_OUT_OF_BOUNDS = Rule(
    "gm-out-of-bounds", ("tensor", "start", "end", "tensor_bytes", "limit"), _out_of_bounds,
    "a GM access past the tensor and its padding (`align_up(bytes, 32) + 32`, the device allocator's), or a tensor "
    "that is neither a GM argument nor UB. Padding lies past an allocation's end, not between views of one array: a "
    "view that ends inside a larger array (`out[:n]` beside `out[n:]`) may be read into the padding but not written "
    "past its bytes")
GM_NOT_A_TENSOR = Rule("gm-out-of-bounds", ("address",), "{operand} is neither a GM argument nor a UB buffer")
GM_PAST_END = Rule(
    "gm-past-end", ("tensor", "access", "start", "end", "tensor_bytes"), _past_end,
    "a GM read or write past the tensor's logical end that stays inside the allocator's padding: the device lets it "
    "pass until the tensor sits in a framework's memory pool next to another one (reads take its bytes, writes "
    "corrupt it). Names the lane, operand, tensor and the bytes past the end. A kernel that relies on the padding "
    "says so: `@an.kernel(gm_padding=\"read\")` (reads may reach it) or `gm_padding=True` (reads and writes)",
    choices={"access": GM_ACCESSES})
UB_OUTSIDE_UB = Rule(
    "ub-outside-ub", ("start", "end", "ub_size"),
    "{operand} UB bytes [{start}, {end}) outside the UB's {ub_size} bytes",
    "UB bytes past the UB, or a vector / Gather / TTRANS operand that is not in UB")
UB_NOT_LOCAL = Rule("ub-outside-ub", (), "{operand} is not a UB tensor (vector and Gather operands live in UB)")
UB_OUTSIDE_BUFFER = Rule(
    "ub-outside-buffer", ("buffer_start", "buffer_end", "start", "end"),
    "{operand} UB bytes [{start}, {end}) outside its buffer [{buffer_start}, {buffer_end})",
    "UB bytes outside the tensor (buffer) the access goes through: a slot past its queue, a count past the tile, a "
    "Gather offset past its source")
DATA_COPY_COUNT_UNALIGNED = Rule(
    "data-copy-count-unaligned", ("bytes", "block_bytes", "src", "src_byte", "dst", "dst_byte"),
    "{operand}: DataCopy of {bytes} bytes from {src} byte {src_byte} to {dst} byte {dst_byte} is not a multiple of "
    "the {block_bytes}-byte block (use DataCopyPad)",
    "a `DataCopy` whose bytes are not a multiple of the 32-byte block (`DataCopyPad` was needed)",
    choices={"src": MEMORIES, "dst": MEMORIES})
UB_ADDRESS_UNALIGNED = Rule(
    "ub-address-unaligned", ("ub_offset", "block_bytes"),
    "{operand} UB address {ub_offset} is not a multiple of the {block_bytes}-byte block",
    "a UB address of a copy, vector op or TTRANS not on a 32-byte block")
UB_OVER_CAPACITY = Rule(
    "ub-over-capacity", ("requested_end", "ub_size"),
    "UB allocation up to byte {requested_end} exceeds ub_size {ub_size}",
    "`alloc_buffer` past `ub_size`")
REDUNDANT_LOAD = Rule(
    "redundant-load", ("ub_offset", "start", "end"),
    "{operand} overwrites UB bytes [{start}, {end}): byte {ub_offset} was loaded from GM and no primitive read it "
    "(AUTO mode 4.1: a load into a tile that is only a destination; the AUTO compiler may give it the address of "
    "another tile and the two loads stomp)",
    "AUTO-mode kernels: UB bytes a GM -> UB copy brought in overwritten before any primitive read their block (seed "
    "003 4.1; see Kernel rules)")
TILE_REBOUND = Rule(
    "tile-rebound", ("end",),
    "{operand}: a tile bound after the lane's first data movement (AUTO mode 3.3: every tile is bound once, at Init)",
    "AUTO-mode kernels: an `alloc_buffer` after the lane's first data movement (3.3)")
UB_UNINITIALIZED_READ = Rule(
    "ub-uninitialized-read", ("first_byte", "start", "end"),
    "{operand} reads UB bytes [{start}, {end}); byte {first_byte} was never written since Init",
    "a read of UB bytes no primitive of this lane wrote since Init")
GM_WRITE_RACE = Rule(
    "gm-write-race", ("tensor", "byte", "other_lane"), _write_race,
    "two lanes writing the same GM bytes with no `SyncAll` between the writes, or a plain copy meeting a DMA atomic "
    "one (several lanes' atomic copies may meet: they are not races)")
GM_CROSS_CORE_READ = Rule(
    "gm-cross-core-read", ("tensor", "byte", "other_lane"), _cross_core_read,
    "a lane reading GM bytes another lane of the launch wrote with no `SyncAll` between (cores run in no order: "
    "\"the last core adds the other cores' partials\" without a barrier reads old or new values by chance), or bytes "
    "a DMA atomic copy wrote in a launch of several lanes. Names both lanes")
GM_WRITE_AFTER_READ = Rule(
    "gm-write-after-read", ("tensor", "byte", "other_lane"), _write_after_read,
    "a lane writing GM bytes another lane read with no `SyncAll` between (the reader may have seen either value): "
    "names the reader, or \"several other lanes\"")
GM_READ_UNWRITTEN_OUTPUT = Rule(
    "gm-read-unwritten-output", ("tensor", "byte"),
    "{operand} in GM {tensor}: byte {byte} of a fresh output was read before any lane of this launch wrote it: on "
    "the device it holds whatever was in HBM (an output accumulated into must be zeroed by the kernel, or passed "
    "initialized)",
    "a read of bytes of a fresh output (from `an.empty`, or one an op allocates) that no lane of the launch has "
    "written yet: the caller never initialized them, so on the device they hold whatever HBM held (an accumulation "
    "into an output assumed zero)")
GM_WRITE_GARBAGE = Rule(
    "gm-write-garbage", ("tensor", "byte"),
    "{operand} left garbage in GM {tensor} at byte {byte}: UB bytes with no value the kernel wrote (read from GM "
    "padding past a tensor's end, or bytes the device computes in: AddDeqRelu's sources, Transpose's and TTRANS's "
    "temporary tiles), or computed from such bytes, are in the tensor when the launch ends",
    "garbage left in a GM tensor when the launch ends: bytes a lane read from GM padding (past a tensor's end), the "
    "sources AddDeqRelu overwrites on the device and the temporary tiles Transpose and TTRANS compute in are garbage, "
    "copies move the mark, vector ops, Gather and TTRANS "
    "carry it element by element; a whole block written with garbage and overwritten later (Tile's first aligned "
    "write of a row) is clean. Named: the lane and primitive that wrote the first such byte, and its offset")
GM_OUTPUT_UNWRITTEN = Rule(
    "gm-output-unwritten", ("tensor", "start", "end", "tensor_bytes", "lane_before", "lane_after"), _output_unwritten,
    "bytes of a declared output (`@an.kernel(outputs=(\"y\",))`; every shipped op declares its outputs) that no lane "
    "wrote by the end of the launch: the commonest lane-range bug (`end = start + per_lane - 8`). On the device "
    "those bytes hold whatever HBM held. Named: the tensor, the first unwritten run of bytes and the lanes that wrote "
    "the bytes on either side")
COUNT_OUT_OF_RANGE = Rule(
    "count-out-of-range", ("count", "value"), _count_out_of_range,
    "a count the device takes unsigned that is negative (a `DataCopy`, vector op, Gather or TTRANS count: an idle "
    "lane's `total - start`; a `DataCopyPad` srcStride / dstStride), or a `DataCopyPad` blockCount / blockLen of 0 "
    "(the API takes 1 and up)",
    choices={"count": COUNTS})
VECTOR_COUNT_UNALIGNED = Rule(
    "vector-count-unaligned", ("count", "nbytes", "repeat_bytes"),
    "{operand}: a count of {count} elements ({nbytes} bytes) is not whole {repeat_bytes}-byte repeats: the device "
    "computes none of the elements past the last whole repeat",
    "a `Compare` / `Compares` count whose elements are not whole 256-byte repeats (the device leaves the tail "
    "uncomputed: the twin does too, and checked mode names it)")
CAST_OVERLAP = Rule(
    "cast-overlap", ("dst_start", "dst_end", "src_start", "src_end"),
    "{operand}: a widening Cast writes UB bytes [{dst_start}, {dst_end}) over the bytes [{src_start}, {src_end}) it "
    "reads: the device's Cast page says such a conversion gives wrong results (use another tile)",
    "a widening `Cast` (to a wider type) whose destination overlaps its source: the device's Cast page warns the "
    "results are wrong, and the twin's are too")
MODE_OUT_OF_RANGE = Rule(
    "mode-out-of-range", ("mode", "value"),
    "{operand}: {mode} {value} is not one this form of the instruction takes",
    "a Compare / Compares CMPMODE outside LT..NE, a Select SELMODE the form does not take (the tensor form: "
    "VSEL_CMPMASK_SPR or VSEL_TENSOR_TENSOR_MODE; the scalar form: VSEL_TENSOR_SCALAR_MODE), a Cast RoundMode "
    "its pair of types does not take (CAST_ODD is fp32 to fp16 only; fp32 to int32 takes no CAST_NONE), or a "
    "Transpose TransposeType it does not take or its tile type does not allow, a TransDataTo5HD high half "
    "(dstHighHalf / srcHighHalf) on a 2- or 4-byte type, or a MrgSort validBit other than 3, 7 or 15",
    choices={"mode": MODES})
REPEAT_PARAMS_OUT_OF_RANGE = Rule(
    "repeat-params-out-of-range", ("param", "value", "low", "high"),
    "{operand}: {param} {value} is outside {low}..{high}",
    "a level-0 vector call's parameter outside what the device's field holds: repeatTimes past 255 (a uint8_t), a "
    "block or repeat stride past its uint8_t / uint16_t, a destination block stride of 0 (undefined on the device), "
    "a negative continuous mask, a counter-mode count past 32 bits, a MrgSort elementLengths past 4095 or "
    "repeatTimes above 1 where the device repeats nothing (fewer than four equal queues back to back, or "
    "suspension on)",
    choices={"param": REPEAT_PARAMS})
VECTOR_PARTIAL_OVERLAP = Rule(
    "vector-partial-overlap", ("src_start", "src_end", "repeat", "written_in"),
    "{operand}: repeat {repeat} of a level-0 vector call reads UB bytes [{src_start}, {src_end}) that its repeat "
    "{written_in} writes, other than as the same lane of the same repeat",
    "a level-0 vector call whose source overlaps its destination other than lane for lane: the device forbids a "
    "partial overlap within a repeat and a repeat reading bytes an earlier one wrote (Add, Sub, Mul, Max, Min, "
    "AddRelu and SubRelu may write over src1 when a repeat stride is 0, as the device allows)")


def _que(queue, position):
    return f"queue {queue} ({position}; the lane's TQue / TBuf handles count from 0 in the order it built them)"


def _read_before_deque(operand, queue, position, buffer, ub_offset, state, pipe):
    return (f"{operand} reads UB byte {ub_offset}, in buffer {buffer} of {_que(queue, position)}, whose tensor is "
            f"{state}: not DeQue'd since the copy that filled it, so on the device the {pipe} pipe may read it "
            "before that copy lands (CPU debugging runs the stages in order and hides it): DeQue first")


def _use_after_free(operand, queue, position, buffer, ub_offset, access, freed):
    when = "after its FreeTensor" if freed else "before any AllocTensor gave it out"
    return (f"{operand} {access}s UB byte {ub_offset}, in buffer {buffer} of {_que(queue, position)}, {when}: the "
            "queue may hand the buffer to the next AllocTensor, whose copy then overwrites it")


def _queue_full(operand, queue, position, limit, call):
    if call == "AllocTensor":
        return (f"AllocTensor on {_que(queue, position)}: all {limit} of its buffers are allocated and not freed: the "
                "device waits for a FreeTensor that never comes (a hang)")
    return (f"EnQue on {_que(queue, position)}: {limit} tensors (its depth) are already enqueued and not DeQue'd: "
            "EnQue fails on the device")


def _wrong_queue(operand, queue, position, ub_offset, call):
    if call == "DeQue":
        return f"DeQue on {_que(queue, position)}, which holds no enqueued tensor: the device waits forever (a hang)"
    return (f"{call} on {_que(queue, position)} of the tensor at UB byte {ub_offset}, which is not one of that "
            "queue's buffers")


def _never_freed(operand, queue, position, buffer, state):
    return (f"buffer {buffer} of {_que(queue, position)} is {state} when the lane ends: a tensor allocated and never "
            "freed (FreeTensor), so a later AllocTensor of a longer loop would hang")


def _unsynchronized(operand, queue, buffer, ub_offset, writer, reader):
    where = f"TBuf {queue}" if buffer < 0 else f"buffer {buffer} of queue {queue}"
    return (f"{operand} reads UB byte {ub_offset} of {where} that the {writer} "
            f"pipe wrote, with no SetFlag / WaitFlag<HardEvent::{writer}_{reader}> (or PipeBarrier<PIPE_ALL>) "
            f"between: on the device the {reader} pipe may read it before the write lands")


def _pipe_setup(operand, queue, value, what):
    handle = f"handle {queue} (the lane's handles count from 0 in the order it built them), " if queue >= 0 else ""
    return f"{what} ({handle}value {value})"


PIPE_READ_BEFORE_DEQUE = Rule(
    "pipe-read-before-deque", ("queue", "position", "buffer", "ub_offset", "state", "pipe"), _read_before_deque,
    "a TQue tensor read by another pipe than the one that filled it before its DeQue (a Compute reading the CopyIn's "
    "tensor it never DeQue'd, a CopyOut copying a tensor the Compute never EnQue'd): names the queue, buffer, state "
    "and pipe", choices={"position": POSITION_NAMES, "state": BUFFER_STATES, "pipe": PIPE_NAMES})
PIPE_USE_AFTER_FREE = Rule(
    "pipe-use-after-free", ("queue", "position", "buffer", "ub_offset", "access", "freed"), _use_after_free,
    "a TQue tensor read or written after its FreeTensor (or before any AllocTensor), freed twice, or enqueued "
    "after it was freed", choices={"position": POSITION_NAMES, "access": GM_ACCESSES})
PIPE_ALLOC_PAST_DEPTH = Rule(
    "pipe-alloc-past-depth", ("queue", "position", "limit", "call"), _queue_full,
    "an AllocTensor on a queue whose buffers are all allocated (the device hangs), or an EnQue past the queue's "
    "depth", choices={"position": POSITION_NAMES, "call": ("AllocTensor", "EnQue")})
PIPE_WRONG_QUEUE = Rule(
    "pipe-wrong-queue", ("queue", "position", "ub_offset", "call"), _wrong_queue,
    "EnQue, DeQue or FreeTensor on a queue the tensor does not belong to, or a DeQue of an empty queue (the device "
    "hangs)", choices={"position": POSITION_NAMES, "call": ("EnQue", "DeQue", "FreeTensor")})
PIPE_NEVER_FREED = Rule(
    "pipe-never-freed", ("queue", "position", "buffer", "state"), _never_freed,
    "a TQue tensor still allocated (not FreeTensor'd) when the lane ends",
    choices={"position": POSITION_NAMES, "state": BUFFER_STATES})
PIPE_UNSYNCHRONIZED = Rule(
    "pipe-unsynchronized", ("queue", "buffer", "ub_offset", "writer", "reader"), _unsynchronized,
    "UB bytes of a TBuf or a VECCALC queue's tensor (no EnQue / DeQue orders them) read by one pipe after another "
    "pipe wrote them with no SetFlag / WaitFlag of that event (or PipeBarrier<PIPE_ALL>) between: a copy into a "
    "TBuf and the vector op reading it (manual synchronisation)", choices={"writer": PIPE_NAMES, "reader": PIPE_NAMES})
PIPE_SETUP = Rule(
    "pipe-setup", ("queue", "value", "what"), _pipe_setup,
    "a TPipe call the device refuses: a queue used before its InitBuffer, a TQue / TQueBind position pair it does "
    "not take or a depth below 1, a length or count not positive, more than 32 handles or 64 buffers, a "
    "TBufPool's buffers past its bytes or after its Reset, a TBuf Get past its buffer or not whole 32-byte blocks, "
    "an event id outside 0..7, a SetGlobalBuffer outside its argument and the allocator's padding",
    choices={"what": ("a queue used before its InitBuffer", "a position (pair) a TQue / TQueBind does not take",
                      "more handles than the pipe table holds (32)", "more buffers than a TPipe manages (64)",
                      "InitBuffer past its TBufPool's bytes (or after its Reset)", "TBuf Get past its buffer",
                      "TBuf Get not whole 32-byte blocks", "an event id outside 0..7",
                      "InitBuffer's buffer count outside 1..64", "a length or count that is not positive",
                      "a queue depth below 1 (the device's 0 is its in-place forms', not provided)",
                      "SetGlobalBuffer starting outside its argument or ending past the allocator's padding")})

# Each record by its name here in lower case: the name of its reporter (see .dispatch).
REPORTED = {k.lower(): v for k, v in globals().items() if isinstance(v, Rule)}
RULES = tuple(REPORTED.values())
RULE = {r.name: r for r in RULES if r.doc is not None}  # by name: the documented form
MAX_DETAILS = max(len(r.details) for r in RULES)

# A lane's check row (int64): the rule's code (0: no violation), the primitive's, the operand's,
# then the rule's details in its record's order.
CHECK_RULE, CHECK_PRIMITIVE, CHECK_OPERAND, CHECK_DETAILS = 0, 1, 2, 3
CHECK_SLOTS = CHECK_DETAILS + MAX_DETAILS


def rules_table() -> str:
    """The rules table of ``docs/guide/ops.md``, from the records."""
    rows = ["| rule | what it catches |", "| --- | --- |"]
    rows += [f"| `{r.name}` | {r.doc} |" for r in RULES if r.doc is not None]
    return "\n".join(rows)
