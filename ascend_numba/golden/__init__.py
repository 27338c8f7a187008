"""Golden generation: case files -> inputs -> the kernels' outputs -> CANN-layout files, cached."""

from .cases import REGISTRY, Case, CaseError, generate_inputs, load_cases, parse_cases
from .run import Summary, compute_case, run_case, run_suite
from .store import GoldenCache, default_cache_dir
from .verify import VerifyReport, assert_golden, compare

__all__ = ["Case", "CaseError", "generate_inputs", "load_cases", "parse_cases", "REGISTRY", "Summary",
           "compute_case", "run_case", "run_suite", "GoldenCache", "default_cache_dir", "compare", "assert_golden",
           "VerifyReport"]
