"""The pullbacks of the tensor ops, one module per family; importing registers them."""

from symscan.gradient.ops import elemwise  # noqa: F401
