"""Checked mode (``checked=True``): a launch that verifies every primitive's accesses and names
the lane, primitive, rule and offsets of the first violation (SPEC §8).

One module per idea:

* :mod:`.rules` -- every rule declared once, as a record (name, details, message, doc line);
  plain Python.  :mod:`.report` builds each rule's compiled reporter from its record.
* :mod:`.dispatch` -- how a primitive's rule function is called from a checked lane (and
  compiled to nothing in any other).
* :mod:`.ub_shadow` -- the UB shadow (written since Init, garbage marks) and the UB rules.
* :mod:`.auto` -- the AUTO-mode rules a run shows (redundant loads, tiles bound late).
* :mod:`.gm_regions` -- the GM arguments as compiled code reads them: bounds, garbage carried to GM.
* :mod:`.gm_ownership` -- who wrote and read each GM byte: races, cross-core reads, reads of
  unwritten fresh outputs; SyncAll.
* :mod:`.regions` -- the host side of the GM: the region table (named fields), its pooled
  maps, and the rules read from them when the launch ends.  Plain Python.
* :mod:`.messages` -- :class:`~.messages.KernelCheckError`, built from a check row and the
  rule's record.  Plain Python.
* :mod:`.run` -- a checked launch on the host, from its tables to the error it raises.

The kernels package loads first: its primitives call the compiled modules here, which in turn
build on its lane context, so importing any module of this package starts from there.
"""

import ascend_numba.kernels  # noqa: F401 - see above (a "from" import would meet the package's lazy names)
