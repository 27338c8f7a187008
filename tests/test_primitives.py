"""One primitive, one declaration (host.primitives): everything else is derived from it."""

from __future__ import annotations

import inspect

import pytest

from ascend_numba import kernels
from ascend_numba.host import check, trace
from ascend_numba.host.primitives import PRIMITIVES, VECTOR_OPS, element_expression
from ascend_numba.kernels.primitives import fusion
from ascend_numba.lint import _ROLES


def test_every_declared_primitive_is_exported_with_its_doc():
    for name, spec in PRIMITIVES.items():
        primitive = getattr(kernels, name)
        assert name in kernels.__all__
        doc = inspect.getdoc(getattr(primitive, "py_func", primitive)) or ""
        assert doc.startswith(spec.doc.split(":")[0]), (name, doc)


def test_checked_mode_codes_trace_events_and_lint_roles_come_from_the_declarations():
    assert set(check.PRIMITIVES[1:]) == {p.device for p in PRIMITIVES.values()}
    assert [check.PRIMITIVES[check.PRIMITIVE[p.device]] for p in PRIMITIVES.values()] == \
        [p.device for p in PRIMITIVES.values()]
    assert trace.COUNTER_NAMES[:3] == ("data_copy", "data_copy_pad", "gather")
    assert trace._EVENT_NAMES == ("DataCopy", "DataCopyPad", "Gather")
    assert _ROLES == {n: p.roles for n, p in PRIMITIVES.items() if "dst" in p.operands}
    for name, (dst, reads) in _ROLES.items():
        params = list(inspect.signature(getattr(kernels, name).py_func).parameters)
        assert params[dst] in ("dst", "tensor"), name
        assert all(params[i] in ("src", "a", "b", "offsets_bytes") for i in reads), (name, params)


def test_the_fused_ops_are_the_declared_vector_ops_with_their_element_math():
    assert set(fusion.OPS) == set(VECTOR_OPS)
    assert fusion.OPS["add"].element == "({0} + {1})" and fusion.OPS["add"].element_f16 == "add_nan_first({0}, {1})"
    assert fusion.OPS["vsqrt"].element == "(np.sqrt({0}))"
    assert fusion.OPS["vmax"].element == "max_element({0}, {1})"
    assert not fusion.OPS["vmax"].quiets and fusion.OPS["div"].quiets


def test_an_element_function_must_be_one_return():
    def two_lines(x):
        y = x
        return y

    with pytest.raises(ValueError, match="one return"):
        element_expression(two_lines)
