"""Checked mode (checked=True): the rules, the per-lane violation record, KernelCheckError (SPEC §8).

A checked launch runs the same kernel with every primitive verified.  The
first violation of each lane is written to its check row (int64):
``[rule, primitive, operand, d0, d1, d2, d3, d4]``; the launch stops after the
first lane with one and raises :class:`KernelCheckError` built from that row.
The compiled side (``kernels/check.py``) writes rows in this layout.

What "GM padding" means here: the device allocator rounds a tensor up to the
32-byte block and adds one block (``align_up(nbytes, 32) + 32``), so a DataCopy
that rounds a tail up to whole blocks stays inside the allocation.  Accesses
up to that limit are allowed (writes past the tensor's end are dropped);
beyond it they break the gm-out-of-bounds rule.  Padding lies past an allocation's end, not
between views of one array: a view that ends inside a larger array (``out[:n]`` beside
``out[n:]``) may be read up to the limit but written only within its bytes.
"""

from __future__ import annotations

from .errors import KernelError
from .primitives import PRIMITIVES as _DECLARED
from .primitives import TENSOR_ROLES

__all__ = ["KernelCheckError", "RULES", "PRIMITIVES", "RULE", "PRIMITIVE", "OPERANDS", "CHECK_SLOTS",
           "decode_violation", "garbage_violation", "unwritten_violation"]

CHECK_SLOTS = 8
CHECK_RULE, CHECK_PRIMITIVE, CHECK_OPERAND, CHECK_DETAIL = 0, 1, 2, 3

# A rule's or primitive's code is its index here (0 = none); compiled code looks codes up by name
# (RULE["gm-write-race"], PRIMITIVE["DataCopy"]), so adding one is adding its name.
RULES = ("", "gm-out-of-bounds", "ub-outside-ub", "ub-outside-buffer", "data-copy-count-unaligned",
         "ub-address-unaligned", "ub-over-capacity", "ub-uninitialized-read", "gm-write-race", "count-out-of-range",
         "gm-write-garbage", "gm-cross-core-read", "gm-write-after-read", "redundant-load", "tile-rebound",
         "gm-output-unwritten")
PRIMITIVES = ("", *dict.fromkeys(p.device for p in _DECLARED.values()))  # declared in host.primitives
RULE = {name: code for code, name in enumerate(RULES) if name}
PRIMITIVE = {name: code for code, name in enumerate(PRIMITIVES) if name}

OPERANDS = TENSOR_ROLES
OPERAND_DST, OPERAND_SRC, OPERAND_SRC1, OPERAND_TMP = (OPERANDS.index(r) for r in ("dst", "src", "src1", "tmp"))
# What a count-out-of-range detail names (index into COUNTS).
COUNTS = ("byte count", "blockCount", "blockLen", "rows", "cols", "count", "srcStride", "dstStride")


class KernelCheckError(KernelError):
    """A checked launch found a kernel bug: ``lane``, ``primitive``, ``rule``, ``operand`` and ``details``."""

    def __init__(self, lane: int, primitive: str, rule: str, operand: str, details: dict, text: str):
        super().__init__(f"lane {lane}, {primitive}: [{rule}] {text}")
        self.lane, self.primitive, self.rule, self.operand, self.details = lane, primitive, rule, operand, details


def _describe(rule: str, operand: str, d: list[int], ub_size: int, names) -> tuple[dict, str]:
    if rule == "gm-out-of-bounds":
        region, start, end, limit, nbytes = d
        if region < 0:
            return {"address": start}, f"{operand} is neither a GM argument nor a UB buffer"
        where = (f"plus padding ({limit} bytes)" if limit > nbytes
                 else "(a view inside a larger array: no GM padding past its end to write into)")
        return ({"tensor": names[region], "start": start, "end": end, "tensor_bytes": nbytes, "limit": limit},
                f"{operand} in GM {names[region]}: bytes [{start}, {end}) outside the tensor's {nbytes} bytes "
                f"{where}")
    if rule == "ub-outside-ub":
        start, end = d[0], d[1]
        if start < 0:
            return {}, f"{operand} is not a UB tensor (vector and Gather operands live in UB)"
        return ({"start": start, "end": end, "ub_size": ub_size},
                f"{operand} UB bytes [{start}, {end}) outside the UB's {ub_size} bytes")
    if rule == "ub-outside-buffer":
        b0, b1, start, end = d[:4]
        return ({"buffer_start": b0, "buffer_end": b1, "start": start, "end": end},
                f"{operand} UB bytes [{start}, {end}) outside its buffer [{b0}, {b1})")
    if rule == "data-copy-count-unaligned":
        src, dst = ("UB" if d[4] & 1 else "GM"), ("UB" if d[4] & 2 else "GM")
        return ({"bytes": d[0], "block_bytes": d[1], "src": src, "src_byte": d[2], "dst": dst, "dst_byte": d[3]},
                f"{operand}: DataCopy of {d[0]} bytes from {src} byte {d[2]} to {dst} byte {d[3]} is not a multiple "
                f"of the {d[1]}-byte block (use DataCopyPad)")
    if rule == "ub-address-unaligned":
        return ({"ub_offset": d[0], "block_bytes": d[1]},
                f"{operand} UB address {d[0]} is not a multiple of the {d[1]}-byte block")
    if rule == "ub-over-capacity":
        return ({"requested_end": d[0], "ub_size": d[1]},
                f"UB allocation up to byte {d[0]} exceeds ub_size {d[1]}")
    if rule == "ub-uninitialized-read":
        return ({"first_byte": d[0], "start": d[1], "end": d[2]},
                f"{operand} reads UB bytes [{d[1]}, {d[2]}); byte {d[0]} was never written since Init")
    if rule == "gm-write-race":
        return ({"tensor": names[d[0]], "byte": d[1], "other_lane": d[2]},
                f"{operand} in GM {names[d[0]]}: byte {d[1]} was already written by lane {d[2]}")
    if rule == "gm-cross-core-read":
        return ({"tensor": names[d[0]], "byte": d[1], "other_lane": d[2]},
                f"{operand} in GM {names[d[0]]}: byte {d[1]} was written by lane {d[2]} in this launch with no "
                "SyncAll between: cores run in no order, so the read may see the old or the new value")
    if rule == "gm-write-after-read":
        reader = "several other lanes" if d[2] < 0 else f"lane {d[2]}"
        return ({"tensor": names[d[0]], "byte": d[1], "other_lane": d[2]},
                f"{operand} in GM {names[d[0]]}: byte {d[1]} was read by {reader} in this launch with no SyncAll "
                "between: cores run in no order, so the read may have seen the old or the new value")
    if rule == "redundant-load":
        return ({"ub_offset": d[0], "start": d[1], "end": d[2]},
                f"{operand} overwrites UB bytes [{d[1]}, {d[2]}): byte {d[0]} was loaded from GM and no primitive "
                "read it (AUTO mode 4.1: a load into a tile that is only a destination; the AUTO compiler may give "
                "it the address of another tile and the two loads stomp)")
    if rule == "tile-rebound":
        return ({"end": d[0]},
                f"{operand}: a tile bound after the lane's first data movement (AUTO mode 3.3: every tile is bound "
                "once, at Init)")
    if rule == "count-out-of-range":
        value, which = d[0], COUNTS[d[1]] if 0 <= d[1] < len(COUNTS) else "byte count"
        if which in ("srcStride", "dstStride"):
            return ({"count": which, "value": value},
                    f"{operand}: {which} of {value} bytes (a block pitch shorter than the block): the device's API "
                    f"takes a {which} not negative")
        need = "at least 1" if which in ("blockCount", "blockLen") else "not negative"
        wrapped = f" (the device reads it as the unsigned {value % (1 << 32)})" if value < 0 else ""
        return ({"count": which, "value": value},
                f"{operand}: {which} {value}{wrapped}: the device's API takes a {which} {need}")
    return {}, f"unknown rule code {rule}"


def garbage_violation(lane: int, primitive: int, tensor: str, byte: int) -> KernelCheckError:
    """The error for garbage a checked launch left in a GM tensor: ``lane`` and ``primitive``
    (its code) wrote byte ``byte`` of ``tensor`` last, with bytes read from GM padding or computed
    from them."""
    name = PRIMITIVES[primitive] if 0 < primitive < len(PRIMITIVES) else "?"
    return KernelCheckError(lane, name, "gm-write-garbage", "src", {"tensor": tensor, "byte": byte},
                            f"src left garbage in GM {tensor} at byte {byte}: UB bytes read from GM padding (past "
                            "a tensor's end), or computed from such bytes, are in the tensor when the launch ends")


def unwritten_violation(tensor: str, start: int, end: int, nbytes: int, before: int | None,
                        after: int | None) -> KernelCheckError:
    """The error for bytes ``[start, end)`` of a declared output (``tensor``, ``nbytes`` long)
    that no lane wrote; ``before`` and ``after`` are the lanes that wrote the bytes bordering
    them (-1: a lane before a SyncAll; None: the tensor's edge)."""
    def who(lane):
        return "a lane before a SyncAll" if lane == -1 else f"lane {lane}"

    sides = [f"{who(before)} wrote the bytes before them" if before is not None else "they start the tensor",
             f"{who(after)} the bytes after them" if after is not None else "they end the tensor"]
    lane = before if before is not None and before >= 0 else after if after is not None and after >= 0 else -1
    return KernelCheckError(lane, "end of launch", "gm-output-unwritten", "dst",
                            {"tensor": tensor, "start": start, "end": end, "tensor_bytes": nbytes,
                             "lane_before": before, "lane_after": after},
                            f"output {tensor}: bytes [{start}, {end}) of its {nbytes} were written by no lane "
                            f"({'; '.join(sides)}): on the device they hold whatever was in HBM; check the "
                            "lanes' ranges")


def decode_violation(lane: int, row, ub_size: int, names) -> KernelCheckError:
    """The error for one lane's check row (``row[CHECK_RULE] != 0``); ``names`` names the GM
    arguments in the order of the region table."""
    rule = int(row[CHECK_RULE])
    primitive = PRIMITIVES[int(row[CHECK_PRIMITIVE])] if 0 < row[CHECK_PRIMITIVE] < len(PRIMITIVES) else "?"
    operand = OPERANDS[int(row[CHECK_OPERAND])]
    name = RULES[rule] if 0 < rule < len(RULES) else f"rule-{rule}"
    details, text = _describe(name, operand, [int(v) for v in row[CHECK_DETAIL:]], ub_size, names)
    return KernelCheckError(lane, primitive, name, operand, details, text)
