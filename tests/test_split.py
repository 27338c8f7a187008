"""Multi-core split helpers against their formulas."""

from hypothesis import given, strategies as st

from ascend_numba.host import big_small_split, contiguous_range, contiguous_ranges, mix_core_id, mix_subblock_rows


@given(st.integers(0, 10_000), st.integers(1, 100))
def test_contiguous_ranges_cover_exactly(total, cores):
    ranges = contiguous_ranges(total, cores)
    per = -(-total // cores)
    pos = 0
    for core, (start, end) in enumerate(ranges):
        assert start == min(core * per, total) and end == min(start + per, total)
        if start < end:
            assert start == pos
            pos = end
    assert pos == total


def test_cores_past_the_end_get_empty_ranges():
    assert contiguous_range(5, 4, 3) == (5, 5)
    assert contiguous_ranges(3, 5) == [(0, 1), (1, 2), (2, 3), (3, 3), (3, 3)]


@given(st.integers(0, 10_000), st.integers(1, 100))
def test_big_small_split(total, cores):
    s = big_small_split(total, cores)
    counts = [s.blocks(c) for c in range(cores)]
    assert sum(counts) == total
    assert counts == [total // cores + 1] * (total % cores) + [total // cores] * (cores - total % cores)
    ranges = s.ranges()
    assert ranges[0][0] == 0 and ranges[-1][1] == total
    assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))


def test_mix_split():
    assert [mix_core_id(i, 2) for i in range(6)] == [0, 0, 1, 1, 2, 2]
    assert mix_subblock_rows(7, 0) == (0, 4) and mix_subblock_rows(7, 1) == (4, 3)
    assert mix_subblock_rows(1, 1) == (1, 0)
