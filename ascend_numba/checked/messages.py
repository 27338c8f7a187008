"""The error a checked launch raises, built from a lane's check row and the rule's record (SPEC §8).

The first violation of each lane is written to its check row (see :mod:`.rules`: the rule's
code, the primitive's, the operand's, then the rule's details in its record's order); the launch
stops after the first lane with one and raises :class:`KernelCheckError` from that row.  Rules
found on the host when the launch ends (:mod:`.regions`) raise ``RULE.error(...)`` directly.

Plain Python: no Numba in this module.
"""

from __future__ import annotations

from ..host.errors import KernelError
from .rules import CHECK_DETAILS, CHECK_OPERAND, CHECK_PRIMITIVE, CHECK_RULE, OPERANDS, PRIMITIVES, RULES

__all__ = ["KernelCheckError", "decode_violation", "primitive_name"]


class KernelCheckError(KernelError):
    """A checked launch found a kernel bug: ``lane``, ``primitive``, ``rule``, ``operand`` and ``details``."""

    def __init__(self, lane: int, primitive: str, rule: str, operand: str, details: dict, text: str):
        super().__init__(f"lane {lane}, {primitive}: [{rule}] {text}")
        self.lane, self.primitive, self.rule, self.operand, self.details = lane, primitive, rule, operand, details


def primitive_name(code: int) -> str:
    return PRIMITIVES[code] if 0 < code < len(PRIMITIVES) else "?"


def decode_violation(lane: int, row, names) -> KernelCheckError:
    """The error for one lane's check row (``row[CHECK_RULE] != 0``); ``names`` names the GM
    arguments in the order of the region table."""
    code = int(row[CHECK_RULE])
    if not 0 < code <= len(RULES):
        return KernelCheckError(lane, "?", f"rule-{code}", "?", {}, f"unknown rule code {code}")
    rule = RULES[code - 1]
    details = {}
    for name, value in zip(rule.details, row[CHECK_DETAILS:]):
        value = int(value)
        if name == "tensor":
            value = names[value]
        elif name in rule.choices:
            value = rule.choices[name][value]
        details[name] = value
    return rule.error(lane, primitive_name(int(row[CHECK_PRIMITIVE])), OPERANDS[int(row[CHECK_OPERAND])], details)
