"""The pullbacks of the tensor ops, one module per family; importing registers them."""

from symscan.gradient.ops import (  # noqa: F401
    checks,
    composite,
    creation,
    elemwise,
    ifelse,
    linalg,
    math,
    random,
    scan,
    shape,
    sort,
    subtensor,
)
