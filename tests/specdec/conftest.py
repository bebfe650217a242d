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
