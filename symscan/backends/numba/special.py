"""numba forms of the elementwise special functions without a numpy ufunc: erf, erfc, erfinv,
erfcinv and chi2sf run ``symscan.tensor.scalar_special``'s code (the reference's when scipy is absent, within
a few ulps of scipy's), one element at a time; real, imag and angle are numba's numpy functions."""

from __future__ import annotations

from symscan.backends.numba.sources import module_function
from symscan.tensor import scalar_special

SCALAR_KERNELS = {
    "erf": (scalar_special.erf_scalar, ()),
    "erfc": (scalar_special.erfc_scalar, ()),
    "erfinv": (scalar_special.erfinv_scalar, (scalar_special.erfc_tail_inverse,)),
    "erfcinv": (scalar_special.erfcinv_scalar, (scalar_special.erfc_tail_inverse, scalar_special.erfinv_scalar)),
    "chi2sf": (scalar_special.chi2sf_scalar, (scalar_special._log_gamma_density, scalar_special.gammaincc_scalar)),
}
"""Elemwise name -> (its scalar function, the functions that one calls)."""

COMPLEX_PARTS = {"real": "np.real", "imag": "np.imag", "angle": "np.angle"}

MAP_SOURCE = """@numba.njit(cache=True, nogil=True)
def {name}({params}):
    {broadcast}
    out = np.empty({first}.shape, dtype=np.float64)
    flat = out.reshape(-1)
    {flatten}
    for i in range(flat.size):
        flat[i] = {scalar}({items})
    return out
"""


def _map_function(gen, scalar: str, nin: int) -> str:
    """A kernel-module function applying ``scalar`` to each element of ``nin`` broadcast arrays."""
    name = f"_map_{scalar}"
    if not any(line.startswith(f"def {name}(") for line in gen.module_lines):
        params = [f"x{i}" for i in range(nin)]
        broadcast = f"{', '.join(params)} = np.broadcast_arrays({', '.join(params)})" if nin > 1 else "pass"
        flatten = "; ".join(f"f{i} = np.ascontiguousarray(x{i}).reshape(-1)" for i in range(nin))
        source = MAP_SOURCE.format(name=name, params=", ".join(params), broadcast=broadcast, first=params[0],
                                   flatten=flatten, scalar=scalar,
                                   items=", ".join(f"np.float64(f{i}[i])" for i in range(nin)))
        gen.module_lines += source.splitlines() + [""]
    return name


def special_expression(gen, node, ins: list[str]) -> str:
    """The numba expression of a special elementwise node (its scalar or array result, in float64
    for the scalar functions: the caller converts it to the node's dtype)."""
    name = node.op.name
    if name in COMPLEX_PARTS:
        return f"{COMPLEX_PARTS[name]}({ins[0]})"
    fn, callees = SCALAR_KERNELS[name]
    for line in ("import builtins", "import math", f"_TWO_OVER_SQRT_PI = {scalar_special._TWO_OVER_SQRT_PI!r}"):
        if line not in gen.module_lines:
            gen.module_lines.append(line)
    scalar = module_function(gen, fn, callees=callees)
    if all(v.ndim == 0 for v in node.inputs):
        return f"{scalar}({', '.join(f'np.float64({x})' for x in ins)})"
    operands = [x if v.ndim else f"np.full((1,) * {node.outputs[0].ndim}, {x})" for v, x in zip(node.inputs, ins)]
    result = f"{_map_function(gen, scalar, len(ins))}({', '.join(operands)})"
    dtype = node.outputs[0].dtype
    return result if dtype == "float64" else f"{result}.astype(np.{dtype})"


SPECIAL_NAMES = frozenset(SCALAR_KERNELS) | frozenset(COMPLEX_PARTS)
