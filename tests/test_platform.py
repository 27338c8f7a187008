import pytest

from ascend_numba.host import PRESETS, Platform, get_platform


def test_presets():
    a2 = get_platform("A2")
    assert (a2.chip, a2.aic_num, a2.aiv_num, a2.ub_size, a2.block_bytes) == ("Ascend910B2", 24, 48, 196608, 32)
    assert get_platform("a2_20").aic_num == 20 and get_platform("A2_20").aiv_num == 40
    assert get_platform("A5").ub_size == 262144
    assert get_platform("A5").with_cores(16).aiv_num == 32
    assert get_platform(a2) is a2 and set(PRESETS) == {"A2", "A2_20", "A5"}


def test_bad_platforms():
    with pytest.raises(ValueError, match="unknown platform"):
        get_platform("A9")
    with pytest.raises(TypeError):
        get_platform(3)
    with pytest.raises(ValueError):
        Platform("x", "y", aic_num=0, aiv_num=1, ub_size=1024)
    with pytest.raises(ValueError):
        Platform("x", "y", aic_num=1, aiv_num=1, ub_size=1000)
