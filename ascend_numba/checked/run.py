"""A checked launch, on the host: its check rows, region table, UB shadow and rule function
table; the launcher; and what it raises (SPEC §8).

Checked lanes run one after another on one UB (a resident kernel's one at a time, in index
order from barrier to barrier), so the owner maps need no atomics, the first violation is
always the same one, and the launch stops at the lane that found it.  A lane's shadow marks are
its epoch: the pooled shadow's epochs run on from launch to launch, and its lane clears it every
255 lanes (see ``kernels.launchers``).
"""

from __future__ import annotations

import numpy as np

from ..kernels.launchers import launch_lanes_checked, launcher, run_resident, run_resident_lane_checked
from ..kernels.lane import STATE_AUTO, STATE_ERROR
from .dispatch import rule_table
from .messages import decode_violation
from .regions import CHECK_MAPS, gm_regions
from .rules import CHECK_RULE, CHECK_SLOTS
from .ub_shadow import shadow_bytes

__all__ = ["run_checked", "MAX_CHECKED_LANES"]

MAX_CHECKED_LANES = 32766  # a GM byte's owner: a uint16 of 2 marks a lane (plain, atomic) and 2 markers


def run_checked(body, block_dim, platform, gm_args, call, state, trace, ub, barrier,
                arg_names: tuple = (), scratch: tuple = (), outputs: tuple = (), fresh: tuple = (),
                gm_padding: "bool | str" = False):
    """Run a checked body's lanes (``call``: the body bound to ``gm_args``, see ``KernelBody.bind``;
    ``ub``: the UB pool, or one row per lane for a resident body synchronizing on ``barrier``) and
    raise KernelCheckError for the first violation, after putting back every GM byte the lanes
    wrote except in the arguments named in ``scratch`` (fresh outputs the caller drops on
    failure).  Also raised when the lanes are done: garbage left in a GM tensor
    (gm-write-garbage), a byte of an argument named in ``outputs`` that no lane wrote
    (gm-output-unwritten).  Reads of unwritten bytes of the arguments named in
    ``scratch`` or ``fresh`` (never initialized by the caller) are gm-read-unwritten-output.
    ``gm_padding``: the kernel's (an access past a tensor's end is gm-past-end unless it allows it)."""
    if block_dim > MAX_CHECKED_LANES:
        raise ValueError(f"checked launches take at most {MAX_CHECKED_LANES} lanes (each GM byte's owner is a uint16 "
                         f"lane + 1, the top value a marker), got block_dim {block_dim}")
    check = np.zeros((block_dim, CHECK_SLOTS), np.int64)
    state[:, STATE_AUTO] = body.auto
    table, regions, maps = gm_regions(gm_args, arg_names, platform.block_bytes, block_dim, scratch, outputs, fresh,
                                      gm_padding)
    # Interpret mode calls the rule functions as Python: no table of compiled ones.
    rules = np.zeros(0, np.uint64) if body.interpreted else rule_table()
    try:
        if body.resident:
            shadow = np.zeros((block_dim, shadow_bytes(platform.ub_size)), np.uint8)
            run_resident(launcher(body, run_resident_lane_checked), block_dim, ub,
                         (platform.block_bytes, state, trace, check, (table, rules), *call, barrier), shadow)
        else:
            shadow, first_epoch = CHECK_MAPS.shadow(shadow_bytes(platform.ub_size))
            CHECK_MAPS.epoch = 0  # until the launch says how many lanes ran: the next one clears
            ran = launcher(body, launch_lanes_checked)(block_dim, ub, platform.block_bytes, state, trace, check,
                                                       shadow, first_epoch, (table, rules), *call)
            CHECK_MAPS.epoch = (first_epoch + ran) % 255
        failed = np.flatnonzero(check[:, CHECK_RULE])
        broken = failed.size or state[:, STATE_ERROR].any()
        left = None if broken else _end_of_launch(regions, table)
        if broken or left is not None:
            for m in regions:
                m.restore()
    finally:
        if CHECK_MAPS.pooled(maps):
            for m, touched, dirty in zip(regions, table["touched"].tolist(), table["dirty"].tolist()):
                m.clear(touched, dirty)
    if failed.size:
        raise decode_violation(int(failed[0]), check[failed[0]], [m.name for m in regions])
    if left is not None:
        raise left


def _end_of_launch(regions: list, table: np.ndarray):
    """The first violation only the launch's end shows (gm-write-garbage, then
    gm-output-unwritten), or None."""
    if table["dirty"].any():
        for maps, dirty in zip(regions, table["dirty"].tolist()):
            found = maps.garbage_left(dirty)
            if found is not None:
                return found
    for maps in regions:
        found = maps.unwritten()
        if found is not None:
            return found
    return None
