"""Project-wide test set-up. pytester drives the contract kit's pytest plugin end to end
(tests/kit); it must be enabled here, at the top level, not in a sub-folder's conftest.

The project's own test runs are reproducible: every hypothesis test, and every contract-kit check,
draws derandomized examples (20 per test, no example database), whether or not the machine is a
CI machine. Plugin authors get hypothesis' advice instead (random locally, derandomized on CI):
this profile is this project's choice, which the kit respects like any author's profile.
"""

from hypothesis import HealthCheck, settings

pytest_plugins = ["pytester"]

settings.register_profile("v22sdk-repo", deadline=None, derandomize=True, database=None, max_examples=20,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("v22sdk-repo")
