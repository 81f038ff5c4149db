"""Checks of what fn returned against outputs_info (shared by the loop and the unrolled scan)."""

from __future__ import annotations

from symscan.graph.basic import Variable, describe
from symscan.scan.op import Scan
from symscan.scan.parse import OutputSpec
from symscan.scan.trace import Trace
from symscan.tensor.basic import _is_python_scalar, as_tensor_variable, constant
from symscan.tensor.subtensor import Subtensor


def check_output_count(trace: Trace, outs: list[OutputSpec]) -> None:
    if outs and len(trace.outputs) != len(outs):
        raise ValueError(f"scan: fn returned {len(trace.outputs)} output(s) but outputs_info describes {len(outs)}; "
                         "give one outputs_info entry per output (None for an output that is not fed back)")


def checked_outputs(trace: Trace, outs: list[OutputSpec]) -> list[Variable]:
    """fn's outputs as tensors; a recurrent one must keep its initial value's dtype and ndim."""
    result = []
    for i, value in enumerate(trace.outputs):
        spec = outs[i] if outs else None
        if spec is None or spec.kind == "nit_sot":
            result.append(as_tensor_variable(value))
            continue
        state_ndim = spec.initial.ndim - (spec.kind == "mit_sot")
        out = _python_result(value, spec) if _is_python_scalar(value) else as_tensor_variable(value)
        if out.dtype != spec.initial.dtype:
            raise TypeError(
                f"scan: {spec.label} is {spec.initial.dtype} but fn returns {out.dtype} for it ({out.type}); "
                f"give an initial value of dtype {out.dtype} (e.g. .astype('{out.dtype}')) or cast fn's result "
                f"to {spec.initial.dtype}")
        if out.ndim != state_ndim:
            raise ValueError(
                f"scan: {spec.label} has {state_ndim} dimension(s) per step ({describe(spec.initial)}) but fn "
                f"returns {out.type} for it; make the initial value match one step of the output")
        state = spec.initial.type.shape[spec.kind == "mit_sot":]
        if any(a is not None and b is not None and a != b for a, b in zip(state, out.type.shape)):
            raise ValueError(f"scan: {spec.label} has shape {state} per step but fn returns {out.type} for it; "
                             "make fn return one step of the same shape as the initial value")
        result.append(out)
    return result


def _python_result(value, spec: OutputSpec) -> Variable:
    """A Python number returned for a recurrent output takes the state's dtype if it fits."""
    try:
        return constant(value, dtype=spec.initial.dtype)
    except TypeError:
        raise TypeError(f"scan: fn returns the Python value {value!r} for {spec.label}, which is "
                        f"{spec.initial.dtype}, and it does not fit; return a value that fits {spec.initial.dtype} "
                        "or give an initial value of a wider dtype") from None


def final_value(output: Variable) -> Variable:
    """The last value of a recurrent output as ``scan`` returned it: the last step's, or the
    initial value when no step ran (the buffer's last row: its initial taps come first).
    ONNX loops return their states this way; ``output[-1]`` would fail after no step."""
    sliced = output.owner
    buffer = sliced.inputs[0] if sliced is not None and isinstance(sliced.op, Subtensor) else None
    if buffer is None or buffer.owner is None or not isinstance(buffer.owner.op, Scan):
        return output[-1]  # an unrolled scan (n_steps=1) always ran its step
    return buffer[-1]


def returned_outputs(outputs: list, return_list: bool):
    """What scan returns for its outputs, as Theano and PyTensor do: the variable itself when
    there is one (unless return_list), a list, or None when fn returned no output at all."""
    if not outputs:
        return None
    return outputs[0] if len(outputs) == 1 and not return_list else outputs
