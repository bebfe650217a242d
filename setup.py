"""The compiled parts of v22sdk: the memory's exact top-1 scan (v22sdk/memory/_scan.c) and the
per-turn write's row work (v22sdk/memory/_rows.c).

Everything else is configured in pyproject.toml. The extensions are optional: where one cannot be
built (no C compiler, another compiler's flags), the install goes on and the memory does the same
work in numpy (``v22sdk.memory.ring.SCAN`` and ``ROWS`` tell which a process uses).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "v22sdk.memory._scan",
            ["v22sdk/memory/_scan.c"],
            depends=["v22sdk/memory/_pairwise.h"],
            # contraction off: the same float32 bits on every CPU (see the source)
            extra_compile_args=["-O3", "-ffp-contract=off"],
            optional=True,
        ),
        Extension(
            "v22sdk.memory._rows",
            ["v22sdk/memory/_rows.c"],
            depends=["v22sdk/memory/_pairwise.h"],
            extra_compile_args=["-O3", "-ffp-contract=off"],  # the unit row's float32 bits, as numpy's
            optional=True,
        ),
    ]
)
