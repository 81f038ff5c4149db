"""``numpy.unique`` of the flattened array: the sorted distinct values and, on request, where
each first occurs, the inverse map and the counts. The number of values is known only at run
time (the 1-d outputs have length None). NaNs count as one value (numpy 2's ``equal_nan``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from symscan.graph.basic import Apply, Op, describe
from symscan.graph.type import TensorType
from symscan.tensor.basic import as_tensor_variable


@dataclass(frozen=True)
class Unique(Op):
    """Outputs: the values, then the int64 ``index`` (first occurrences), ``inverse`` (x's shape:
    values[inverse] == x) and ``counts``, each when its flag is set, in numpy's order."""

    return_index: bool = False
    return_inverse: bool = False
    return_counts: bool = False

    def make_node(self, x) -> Apply:
        x = as_tensor_variable(x)
        if x.dtype.startswith("complex"):
            raise TypeError(f"unique: {describe(x)} is complex, which has no order here; unique its real and "
                            "imaginary parts separately")
        outputs = [TensorType(x.dtype, (None,))]
        outputs += [TensorType("int64", (None,))] * self.return_index
        outputs += [TensorType("int64", x.type.shape)] * self.return_inverse
        outputs += [TensorType("int64", (None,))] * self.return_counts
        return Apply(self, [x], outputs)

    def perform(self, node, inputs):
        result = np.unique(inputs[0], return_index=self.return_index, return_inverse=self.return_inverse,
                           return_counts=self.return_counts)
        results = list(result) if isinstance(result, tuple) else [result]
        if self.return_inverse:  # numpy 2 gives x's shape (1.x flattened it): the type says x's shape
            position = 1 + self.return_index
            results[position] = results[position].reshape(np.shape(inputs[0]))
        return [np.asarray(r, dtype=v.dtype) for r, v in zip(results, node.outputs)]


def unique_flat(flat: np.ndarray):
    """(values, index, inverse, counts) of a 1-d array, numpy's stable way: a stable argsort,
    then the first of each run of equal values (NaNs one run). Written with the numpy calls numba
    compiles (``symscan.backends.numba`` copies it into kernels)."""
    n = flat.size
    order = np.argsort(flat, kind="mergesort")
    ordered = flat[order]
    first = np.empty(n, dtype=np.bool_)
    if n:
        first[0] = True
        same = ordered[1:] == ordered[:-1]
        if flat.dtype.kind == "f":
            same = same | (np.isnan(ordered[1:]) & np.isnan(ordered[:-1]))
        first[1:] = ~same
    inverse = np.empty(n, dtype=np.int64)
    inverse[order] = np.cumsum(first) - 1
    starts = np.nonzero(first)[0]
    counts = np.diff(np.append(starts, n)).astype(np.int64)
    return ordered[first], order[first].astype(np.int64), inverse, counts


def unique(ar, return_index: bool = False, return_inverse: bool = False, return_counts: bool = False,
           axis=None):
    """``numpy.unique`` of the flattened ``ar``: the sorted values, and with the flags the first
    indices, the inverse (of ar's shape) and the counts (int64), as numpy's tuple."""
    if axis is not None:
        raise NotImplementedError(f"unique: axis={axis!r} (unique rows or columns) is not implemented; unique the "
                                  "flattened array (axis=None), or stack each row's values into one key first")
    out = Unique(bool(return_index), bool(return_inverse), bool(return_counts))(ar)
    return tuple(out) if isinstance(out, (list, tuple)) else out
