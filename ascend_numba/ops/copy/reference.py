"""Plain NumPy reference of the staged copy."""

import numpy as np


def staged_copy_reference(x: np.ndarray) -> np.ndarray:
    return np.array(x, copy=True)
