"""ApplyAdamW goldens in pieces: the step is elementwise, so any element range of the flat tensors
is computed on its own with the same bits."""

from __future__ import annotations

import math

from ..registry import Chunking, Span


def plan_chunks(entry, shapes: dict, attrs: dict, itemsize: int, budget: int, align: int) -> list[Span]:
    n = math.prod(shapes["var"])
    per_element = itemsize * (len(shapes) + 3)  # the inputs and the three results
    count = max(1, budget // per_element)
    if count >= align:
        count -= count % align
    return [Span(start, min(count, n - start)) for start in range(0, n, count)]


def compute_chunk(entry, inputs: dict, attrs: dict, span: Span) -> dict:
    outputs = entry.run(inputs, attrs)
    return {name: (span.start, outputs[name].reshape(-1)) for name in entry.outputs}


CHUNKING = Chunking(plan_chunks, compute_chunk, elementwise=True)
