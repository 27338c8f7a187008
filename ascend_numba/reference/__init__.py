"""Plain NumPy references, one module per op, written for clarity rather than speed.

Tests compare the compiled kernels against these; benchmarks time them as what
a user would otherwise write.
"""
