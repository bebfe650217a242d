"""The one compiled part of v22sdk: the memory's exact top-1 scan (v22sdk/memory/_scan.c).

Everything else is configured in pyproject.toml. The extension is optional: where it cannot be
built (no C compiler, another compiler's flags), the install goes on and the memory runs the same
scan in numpy (``v22sdk.memory.ring.SCAN`` tells which one a process uses).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "v22sdk.memory._scan",
            ["v22sdk/memory/_scan.c"],
            # contraction off: the same float32 bits on every CPU (see the source)
            extra_compile_args=["-O3", "-ffp-contract=off"],
            optional=True,
        )
    ]
)
