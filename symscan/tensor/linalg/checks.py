"""Build-time checks and run-time errors shared by the linear algebra ops.

The ops' inputs must be float32/float64 (LAPACK's types; numpy would silently compute integers in
float64, which hides a dtype the user did not mean), square where the maths needs it: both
are checked when the graph is built. A singular or non-positive-definite matrix raises
``numpy.linalg.LinAlgError`` naming the op and its input.
"""

from __future__ import annotations

import numpy as np

from symscan.graph.basic import Variable, describe
from symscan.tensor.basic import as_tensor_variable

FLOATS = ("float32", "float64")


# ---------------------------------------------------------------------------- build-time checks
def _float_input(x, opname: str, role: str, min_ndim: int = 2) -> Variable:
    """``x`` as a float tensor with at least ``min_ndim`` axes, or an error saying how to fix it."""
    x = as_tensor_variable(x)
    if x.dtype not in FLOATS:
        raise TypeError(f"{opname}: {role} must be float32 or float64, got {describe(x)}; "
                        f"cast it with .astype('float64')")
    if x.ndim < min_ndim:
        what = "a matrix (or a stack of matrices)" if min_ndim == 2 else f"at least {min_ndim}-d"
        raise ValueError(f"{opname}: {role} must be {what}, got {x.ndim}-d {describe(x)}; "
                         "reshape it, or use T.diag / a 1x1 matrix for a scalar")
    return x


def _square(x: Variable, opname: str, role: str) -> None:
    rows, cols = x.type.shape[-2:]
    if rows is not None and cols is not None and rows != cols:
        raise ValueError(f"{opname}: {role} must be square in its last two axes, got shape "
                         f"{x.type.shape} ({describe(x)}); use a square matrix, or pinv for any shape")


def _square_matrix(x, opname: str, role: str = "a") -> Variable:
    x = _float_input(x, opname, role)
    _square(x, opname, role)
    return x


def _known(*lengths: int | None) -> int | None:
    return next((n for n in lengths if n is not None), None)


def _batch(sa: tuple, sb: tuple, opname: str, a: Variable, b: Variable) -> tuple:
    """The broadcast of two batch shapes (numpy's rules), checked where both lengths are known."""
    n = max(len(sa), len(sb))
    sa, sb = (1,) * (n - len(sa)) + sa, (1,) * (n - len(sb)) + sb
    out = []
    for x, y in zip(sa, sb):
        if x is not None and y is not None and x != 1 and y != 1 and x != y:
            raise ValueError(f"{opname}: the batch shapes of {describe(a)} and {describe(b)} do not broadcast "
                             f"({x} vs {y}); give them equal leading axes or length-1 ones")
        out.append(y if x == 1 else x if y == 1 else _known(x, y))
    return tuple(out)


def _check_rows(n_a: int | None, n_b: int | None, opname: str, a: Variable, b: Variable) -> None:
    if n_a is not None and n_b is not None and n_a != n_b:
        raise ValueError(f"{opname}: b has {n_b} rows but a is {n_a}x{n_a} ({describe(a)}, {describe(b)}); "
                         "b must have as many rows as a")


def _solve_shape(a: Variable, b: Variable, opname: str) -> tuple:
    """numpy.linalg.solve's rule (numpy >= 2): a 1-d b is one vector, otherwise b is a (stack of)
    matrices whose batch broadcasts with a's."""
    if b.ndim == 1:
        _check_rows(a.type.shape[-1], b.type.shape[0], opname, a, b)
        return a.type.shape[:-1]
    _check_rows(a.type.shape[-1], b.type.shape[-2], opname, a, b)
    rows = _known(a.type.shape[-2], a.type.shape[-1], b.type.shape[-2])
    return _batch(a.type.shape[:-2], b.type.shape[:-2], opname, a, b) + (rows, b.type.shape[-1])


def _result_dtype(*inputs: Variable) -> str:
    return np.result_type(*[v.dtype for v in inputs]).name


# ---------------------------------------------------------------------------- run-time errors
def _linalg_error(opname: str, role: str, what: str, err: Exception) -> np.linalg.LinAlgError:
    return np.linalg.LinAlgError(f"{opname}: {role} is {what} ({err}); check the input, or add a small "
                                 "multiple of the identity to regularise it")


def _scipy_linalg(opname: str):
    """scipy.linalg, imported on first use: symscan's core needs only numpy."""
    try:
        import scipy.linalg
    except ImportError as err:
        raise ImportError(f"{opname} needs scipy, which is not installed; install it with "
                          "`pip install symscan[numba]` (or `pip install scipy`)") from err
    return scipy.linalg


def _batched(fn, a: np.ndarray, b: np.ndarray, b_is_vector: bool) -> np.ndarray:
    """``fn(a2d, b)`` over numpy.linalg-style broadcast batches (scipy < 1.15 does not batch)."""
    if a.ndim == 2 and (b_is_vector or b.ndim == 2):
        return fn(a, b)
    core_b = 1 if b_is_vector else 2
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-core_b] if not b_is_vector else ())
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = b if b_is_vector else np.broadcast_to(b, batch + b.shape[-2:])
    first = None
    for index in np.ndindex(*batch):
        x = fn(a[index], b if b_is_vector else b[index])
        if first is None:
            first = np.empty(batch + x.shape, dtype=x.dtype)
        first[index] = x
    if first is None:  # an empty batch
        out_dtype = np.result_type(a.dtype, b.dtype)
        return np.empty(batch + (a.shape[-1],) + (() if b_is_vector else b.shape[-1:]), dtype=out_dtype)
    return first


UPLOS = ("L", "U")
QR_MODES = ("reduced", "complete", "r")


def _uplo(uplo: str, opname: str) -> str:
    if uplo not in UPLOS:
        raise ValueError(f"{opname}: UPLO must be 'L' or 'U' (the triangle of a that is read), got {uplo!r}")
    return uplo


def _rows_cols(a: Variable) -> tuple:
    """(m, n, min(m, n)) of a's matrices, each None where not known when the graph is built."""
    m, n = a.type.shape[-2:]
    return m, n, (min(m, n) if m is not None and n is not None else 0 if 0 in (m, n) else None)


def _did_not_converge(opname: str, node, err: Exception) -> np.linalg.LinAlgError:
    return np.linalg.LinAlgError(f"{opname}: LAPACK did not converge on a ({describe(node.inputs[0])}) ({err}); "
                                 "check the input for inf/nan or extreme scaling")

