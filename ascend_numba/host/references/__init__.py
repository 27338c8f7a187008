"""Plain NumPy references of the kernel primitives, one module per family, written for clarity
(not speed): what each instruction computes, independent of the compiled code.  Tests compare the
twin's compiled, interpreted and fused forms with them."""
