"""One torch thread and one BLAS thread for the specdec tests: they are small, and the CI machine
has 2 shared cores (scipy's L-BFGS on two contended BLAS threads is ~20x slower than on one)."""

import pytest
import scipy.optimize  # noqa: F401  (threadpoolctl limits the libraries loaded when it is called)
import torch
from threadpoolctl import threadpool_limits


@pytest.fixture(autouse=True, scope="session")
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    with threadpool_limits(1):
        yield
    torch.set_num_threads(before)


@pytest.fixture(autouse=True)
def _fresh_help_options():
    """Click caches a command's help option on first use (``Command._help_option``). A test that
    invokes the ``specdec`` group standalone would leave ``--help`` without ``-h`` cached, and
    ``tests/core/test_docs.py`` (run later in the same process) would render another help text."""
    yield
    from v22sdk.specdec.cli import specdec

    for cmd in (specdec, *specdec.commands.values()):
        if getattr(cmd, "_help_option", None) is not None:
            cmd._help_option = None
