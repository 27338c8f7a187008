import os

from hypothesis import HealthCheck, settings

# CI runs a larger hypothesis budget than a quick local run; both are deterministic per seed.
settings.register_profile("ci", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow],
                          derandomize=True)
settings.register_profile("dev", max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else "dev")

pytest_plugins = ["pytester"]
