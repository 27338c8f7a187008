"""TTRANS: the 2-D tile transpose and the format conversions (NCHW <-> NC1HWC0, FRACTAL_Z, ...)."""

from dataclasses import replace

from ..registry import REQUIRED, Case, OpEntry, choice, positive_int_or_none
from .api import convert_format, transpose2d
from .chunks import CONVERSION_CHUNKING, TRANSPOSE_CHUNKING
from .plan import CONVERSIONS, FORMAT_NDIM, TTRANS_DTYPES, check_given_c0, conversion_output_shape, resolve_c0
from .reference import convert_format_reference, transpose2d_reference


def _ndim_rule(ndim: int):
    def rule(shapes, attrs):
        if len(shapes["x"]) != ndim:
            return "inputs.x.shape", f"must have {ndim} dims, got {len(shapes['x'])}"
        return None
    return rule


def _convert_shapes(shapes, attrs):
    if (attrs["src"], attrs["dst"]) not in CONVERSIONS:
        return "attrs.dst", f"{attrs['src']} -> {attrs['dst']} is not a supported conversion"
    return _ndim_rule(FORMAT_NDIM[attrs["src"]])(shapes, attrs)


def _convert_out(shapes, attrs, itemsize):
    x = tuple(shapes["x"])
    c0 = attrs["c0"]
    try:
        if attrs["src"] in ("NCHW", "GNCHW", "NCDHW"):
            c0 = resolve_c0(c0, itemsize, allow_four=attrs["src"] != "NCDHW")
        else:
            check_given_c0(c0, x[-1])
    except ValueError as e:
        raise ValueError("attrs.c0", str(e)) from None
    if attrs["dst"] in ("NCHW", "GNCHW") and attrs["c"] is not None and attrs["c"] > x[-4] * x[-1]:
        raise ValueError("attrs.c", f"must be at most C1*C0 = {x[-4] * x[-1]}, got {attrs['c']}")
    return {"y": conversion_output_shape(x, itemsize, attrs["src"], attrs["dst"], c0=c0, n0=attrs["n0"],
                                         c=attrs["c"])}


def _conversion(src, dst, shape, dtype=None, **attrs):
    return Case(f"{src}->{dst}", {"x": shape}, {"src": src, "dst": dst, "c0": None, "n0": 16, "c": None, **attrs},
                dtype)


# One tiny input per conversion, its C0 the default for the element width.
_CONVERSION_SHAPES = (
    _conversion("NCHW", "NC1HWC0", (1, 4, 2, 2)), _conversion("NC1HWC0", "NCHW", (1, 1, 2, 2, 0)),
    _conversion("GNCHW", "GNC1HWC0", (1, 1, 4, 2, 2)), _conversion("GNC1HWC0", "GNCHW", (1, 1, 1, 2, 2, 0)),
    _conversion("NC1HWC0", "FRACTAL_Z", (2, 1, 2, 2, 0)), _conversion("GNC1HWC0", "FRACTAL_Z", (1, 2, 1, 2, 2, 0)),
    _conversion("NCDHW", "FRACTAL_Z_3D", (2, 4, 1, 2, 2)),
)


def _tiny(case: Case, c0: int) -> tuple:
    """The case's shape with its C0 placeholder (a trailing 0 in C0-last formats) set."""
    shape = case.shapes["x"]
    return shape[:-1] + (c0,) if case.attrs["src"] in ("NC1HWC0", "GNC1HWC0") else shape


ENTRIES = (
    OpEntry("transpose2d", transpose2d, transpose2d_reference, TTRANS_DTYPES,
            lambda shapes, attrs, itemsize: {"y": tuple(reversed(shapes["x"]))}, check_shapes=_ndim_rule(2),
            chunking=TRANSPOSE_CHUNKING, moves_bytes=True,
            test_cases=(Case("one", {"x": (1, 1)}), Case("odd", {"x": (33, 65)}), Case("wide", {"x": (7, 1000)}),
                        Case("tiles", {"x": (257, 300)}), Case("traced", {"x": (33, 65)}, dtype="float32",
                                                               modes=("traced",))),
            bench_cases={"transpose": (Case("4096x4096", {"x": (4096, 4096)}, dtype="float32"),
                                       Case("4096x4096", {"x": (4096, 4096)}, dtype="float16"),
                                       Case("4096x4096", {"x": (4096, 4096)}, dtype="int8"),
                                       Case("8192x2048", {"x": (8192, 2048)}, dtype="float32"),
                                       Case("4000x3000", {"x": (4000, 3000)}, dtype="float32"),
                                       Case("1024x1024", {"x": (1024, 1024)}, dtype="float32"))},
            # The kernel works on unsigned views: one specialization per element width.
            warmup_cases=tuple(Case(u, {"x": (8, 8)}, dtype=u) for u in ("uint8", "uint16", "uint32", "uint64"))),
    OpEntry("convert_format", convert_format, convert_format_reference, TTRANS_DTYPES, _convert_out,
            attrs={"src": (choice(*sorted({s for s, _ in CONVERSIONS})), REQUIRED),
                   "dst": (choice(*sorted({d for _, d in CONVERSIONS})), REQUIRED),
                   "c0": (positive_int_or_none, None), "n0": (positive_int_or_none, 16),
                   "c": (positive_int_or_none, None)},
            check_shapes=_convert_shapes, chunking=CONVERSION_CHUNKING, moves_bytes=True,
            test_cases=(_conversion("NCHW", "NC1HWC0", (2, 19, 5, 7)),
                        _conversion("GNCHW", "GNC1HWC0", (2, 1, 5, 3, 3)),
                        _conversion("NCDHW", "FRACTAL_Z_3D", (3, 20, 2, 3, 3)),
                        *(case for dtype, c0 in (("float16", 16), ("int8", 32), ("float32", 8)) for case in (
                            # C0-last inputs: C0 is the element width's.
                            _conversion("NC1HWC0", "NCHW", (2, 2, 5, 7, c0), dtype, c=2 * c0 - 3),
                            _conversion("GNC1HWC0", "GNCHW", (2, 1, 1, 3, 3, c0), dtype),
                            _conversion("NC1HWC0", "FRACTAL_Z", (17, 2, 3, 3, c0), dtype),
                            _conversion("GNC1HWC0", "FRACTAL_Z", (2, 5, 1, 2, 2, c0), dtype))),
                        replace(_conversion("NCHW", "NC1HWC0", (2, 19, 5, 7), "float16"), name="traced",
                                modes=("traced",))),
            # fp16, every conversion: 100 MB the two the seed names, 50 MB (25 MB for 3-D) the others.
            bench_cases={"convert": (_conversion("NCHW", "NC1HWC0", (64, 256, 56, 56), "float16"),
                                     _conversion("NC1HWC0", "FRACTAL_Z", (64, 16, 56, 56, 16), "float16"),
                                     _conversion("NC1HWC0", "NCHW", (32, 16, 56, 56, 16), "float16"),
                                     _conversion("GNCHW", "GNC1HWC0", (2, 16, 256, 56, 56), "float16"),
                                     _conversion("GNC1HWC0", "GNCHW", (2, 16, 16, 56, 56, 16), "float16"),
                                     _conversion("GNC1HWC0", "FRACTAL_Z", (2, 32, 8, 56, 56, 16), "float16"),
                                     _conversion("NCDHW", "FRACTAL_Z_3D", (32, 64, 8, 28, 28), "float16"))},
            # Every conversion at each element width TTRANS takes.
            warmup_cases=tuple(Case(f"{c.name}-{u}", {"x": _tiny(c, 32 // size)}, c.attrs, u)
                               for c in _CONVERSION_SHAPES
                               for size, u in ((1, "uint8"), (2, "uint16"), (4, "uint32")))),
)

__all__ = ["ENTRIES", "transpose2d", "convert_format"]
