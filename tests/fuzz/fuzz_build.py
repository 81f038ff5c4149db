"""A fuzz program as a symscan graph: symbolic inputs, one ``ss.scan`` per loop, the read
expressions as the function's outputs and the loops' shared updates."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from fuzz_program import Loop, Program, input_value, out_name, seq_name

import symscan as ss
import symscan.tensor as T


@dataclass
class Graph:
    """What ``ss.function`` needs, the values to call it with, and the shared variables with
    the value each call starts from."""

    inputs: list
    values: list
    outputs: list
    updates: dict = field(default_factory=dict)
    shared: dict = field(default_factory=dict)  # name -> (variable, initial value)


SYMBOLIC_UNARY = {"neg": lambda x: -x, "tanh": T.tanh, "sin": T.sin, "exp": T.exp, "sum": lambda x: x.sum()}
SYMBOLIC_BINARY = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
                   "maximum": T.maximum, "minimum": T.minimum, "dot": T.dot, "gt": lambda a, b: a > b}


def build_program(program: Program) -> Graph:
    """Build every loop (errors at ``scan()`` time propagate) and the outputs."""
    graph = Graph([], [], [])
    env = {}
    for position, spec in enumerate(program.inputs):
        value = input_value(program, position)
        if spec.kind == "constant":
            env[spec.name] = T.constant(value, name=spec.name)
        elif spec.kind == "shared":
            env[spec.name] = ss.shared(value.copy(), name=spec.name)
            graph.shared[spec.name] = (env[spec.name], value)
        else:
            shape = spec.shape if spec.static else (None,) * len(spec.shape)
            env[spec.name] = T.tensor(spec.dtype, shape=shape, name=spec.name)
            graph.inputs.append(env[spec.name])
            graph.values.append(value)
    builder = _Builder(env, graph.updates)
    for loop in program.loops:
        builder.loop_outputs.append(builder.scan(loop, env, nested=False))
    memo: dict = {}
    graph.outputs = [builder.expr(read, env, memo) for read in program.reads]
    return graph


class _Builder:
    def __init__(self, top_env: dict, updates: dict):
        self.top_env, self.updates = top_env, updates
        self.loop_outputs: list = []

    def expr(self, expr: tuple, env: dict, memo: dict):
        """The variable for ``expr``; equal sub-expressions give the same variable."""
        key = repr(expr)  # not expr itself: ("c", 1) == ("c", 1.0), but they differ in dtype
        if key in memo:
            return memo[key]
        op, args = expr[0], expr[1:]
        if op in ("v", "new"):
            result = env[args[0] if op == "v" else f"new:{args[0]}"]
        elif op == "c":
            result = args[0]
        elif op == "cvec":
            result = T.constant(np.array(args[0], dtype="float64"))
        elif op == "loop":
            result = self.loop_outputs[args[0]][args[1]]
        elif op == "scan":
            node_key = "scan " + repr(args[0])  # a loop read twice is one scan
            if node_key not in memo:
                memo[node_key] = self.scan(args[0], env, nested=True)
            result = memo[node_key][args[1]]
        elif op == "last":
            result = self.expr(args[0], env, memo)[-1]
        elif op == "tail":
            result = self.expr(args[0], env, memo)[-args[1]:]
        elif op == "take":
            result = self.expr(args[0], env, memo)[self.expr(args[1], env, memo)]
        elif op == "cast":
            result = T.cast(self.expr(args[0], env, memo), args[1])
        elif op == "ifelse":
            result = ss.ifelse(*(self.expr(a, env, memo) for a in args))
        elif op in SYMBOLIC_UNARY:
            result = SYMBOLIC_UNARY[op](self.expr(args[0], env, memo))
        else:
            result = SYMBOLIC_BINARY[op](self.expr(args[0], env, memo), self.expr(args[1], env, memo))
        memo[key] = result
        return result

    def scan(self, loop: Loop, env: dict, nested: bool) -> list:
        """``ss.scan`` for ``loop`` in scope ``env``; its outputs as a list."""
        memo: dict = {}
        sequences = []
        for seq in loop.sequences:
            var = self.expr(seq.source, env, memo)
            sequences.append(dict(input=var, taps=list(seq.taps)) if seq.as_dict or seq.taps != (0,) else var)
        outputs_info = []
        for out in loop.outputs:
            if out.kind == "nit":
                outputs_info.append(dict(taps=None) if out.as_dict else None)
                continue
            init = self.expr(out.init, env, memo)
            taps = [-1] if out.kind == "sit" else list(out.taps)
            outputs_info.append(dict(initial=init, taps=taps) if out.as_dict or out.kind == "mit" else init)
        if loop.n_steps is None:
            n_steps = None
        else:
            n_steps = loop.n_steps[1] if loop.n_steps[0] == "const" else env[loop.n_steps[1]]

        def step(*args):
            body, given = dict(env), iter(args)
            for i, seq in enumerate(loop.sequences):
                body.update((seq_name(i, tap, nested), next(given)) for tap in seq.taps)
            for i, out in enumerate(loop.outputs):
                body.update((out_name(i, tap, nested), next(given)) for tap in out.taps)
            body.update((name, next(given)) for name in loop.non_seqs)
            body_memo: dict = {}
            results = [self.expr(out.expr, body, body_memo) for out in loop.outputs]
            returned: list = [results if len(results) != 1 or loop.return_list else results[0]]
            if loop.updates:
                returned.append({self.top_env[name]: self.expr(e, body, body_memo) for name, e in loop.updates})
            if loop.until is not None:
                body.update((f"new:{i}", r) for i, r in enumerate(results))
                returned.append(ss.until(self.expr(loop.until, body, body_memo)))
            return returned[0] if len(returned) == 1 else tuple(returned)

        outputs, updates = ss.scan(step, sequences=sequences, outputs_info=outputs_info,
                                   non_sequences=[env[name] for name in loop.non_seqs], n_steps=n_steps,
                                   go_backwards=loop.go_backwards, return_list=loop.return_list)
        self.updates.update(updates)
        return outputs if isinstance(outputs, list) else [outputs]
