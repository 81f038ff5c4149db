"""Shrink a failing program by hand-written structural steps (the CLI's ``--shrink``): drop
reads, loops, outputs, sequences, inputs and flags, and replace expressions by their operands,
keeping each step that leaves the program valid (the reference runs) and failing the same way.

Hypothesis shrinks the pytest profile's failures by itself; the ``--minutes`` run draws from
``random.Random`` and needs this to turn its finds into small regression entries.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable, Iterator

from fuzz_compare import DEFAULT_MODES, check_program
from fuzz_program import BINARY, TERNARY, UNARY, Input, Loop, Out, Program, Seq, unread_loops
from fuzz_reference import ExpectedError, run_program

EXPRESSION_OPS = set(UNARY) | set(BINARY) | set(TERNARY) | {"cast", "last", "tail"}
"""Expressions whose operands are expressions (a candidate replacement of the whole)."""


def shrink(program: Program, problem: str, modes: set[str], checked: list[str] | None = None,
           seconds: float = 30.0, check: Callable = check_program) -> Program:
    """The smallest program found, within ``seconds``, on which, of the ``checked`` modes
    (default: ``DEFAULT_MODES``), exactly ``modes`` still show ``problem`` (a ``Disagreement.problem()``);
    ``check``: ``check_program``, or fuzz_grad's ``check_gradient`` for a gradient's problem."""
    deadline = time.monotonic() + seconds
    first, checked = sorted(modes)[0], checked or list(DEFAULT_MODES)

    def still_fails(candidate: Program) -> bool:
        if unread_loops(candidate.loops, candidate.reads):
            return False
        try:
            run_program(candidate)
        except ExpectedError:
            pass
        except Exception:  # not a valid program (a shape or a name no longer fits)
            return False
        if not any(d.problem() == problem for d in check(candidate, [first])):
            return False
        return {d.mode for d in check(candidate, checked) if d.problem() == problem} == modes

    improved = True
    while improved and time.monotonic() < deadline:
        improved = False
        for candidate in candidates(program):
            if time.monotonic() > deadline:
                break
            if candidate != program and still_fails(candidate):
                program, improved = candidate, True
                break
    return program


def candidates(program: Program) -> Iterator[Program]:
    """Smaller variants of ``program``, the biggest cuts first (some are invalid)."""
    for i in reversed(range(len(program.loops))):
        yield remove_loop(program, i)
        yield remove_loop(_without_reads_of(program, i), i)
    for i in range(len(program.reads)):
        if len(program.reads) > 1:
            yield dataclasses.replace(program, reads=program.reads[:i] + program.reads[i + 1:])
    for path, node in list(walk(program)):
        if isinstance(node, Loop):
            for k in range(len(node.outputs)):
                yield remove_output(program, path, k)
                if len(path) == 2:
                    yield remove_output(_without_reads_of(program, path[1], k), path, k)
            for i in range(len(node.sequences)):
                yield replace_at(program, path, remove_sequence(node, i, nested=len(path) > 2))
            for simpler in (dict(until=None), dict(updates=()), dict(go_backwards=False), dict(non_seqs=()),
                            dict(return_list=True)):
                yield replace_at(program, path, dataclasses.replace(node, **simpler))
        elif isinstance(node, (Seq, Out)) and node.as_dict:
            yield replace_at(program, path, dataclasses.replace(node, as_dict=False))
        elif isinstance(node, Input) and (node.static or node.kind != "input"):
            yield replace_at(program, path, dataclasses.replace(node, static=False, kind="input"))
        elif isinstance(node, tuple) and node and node[0] in EXPRESSION_OPS:
            for child in node[1:]:
                if isinstance(child, tuple):
                    yield replace_at(program, path, child)
    used = repr((program.loops, program.reads))
    kept = tuple(i for i in program.inputs if f"'{i.name}'" in used)
    yield dataclasses.replace(program, inputs=kept)


# ---------------------------------------------------------------------------- paths in a program
def walk(obj, path: tuple = ()) -> Iterator[tuple[tuple, object]]:
    """Every tuple and dataclass inside ``obj`` with its path (field names and indices)."""
    if dataclasses.is_dataclass(obj):
        yield path, obj
        for field in dataclasses.fields(obj):
            yield from walk(getattr(obj, field.name), path + (field.name,))
    elif isinstance(obj, tuple):
        yield path, obj
        for i, item in enumerate(obj):
            yield from walk(item, path + (i,))


def node_at(obj, path: tuple):
    for step in path:
        obj = getattr(obj, step) if isinstance(step, str) else obj[step]
    return obj


def replace_at(obj, path: tuple, new):
    if not path:
        return new
    step, rest = path[0], path[1:]
    if isinstance(step, str):
        return dataclasses.replace(obj, **{step: replace_at(getattr(obj, step), rest, new)})
    return obj[:step] + (replace_at(obj[step], rest, new),) + obj[step + 1:]


def transform(obj, fn: Callable):
    """``obj`` with ``fn`` applied to every tuple, innermost first."""
    if dataclasses.is_dataclass(obj):
        return dataclasses.replace(obj, **{f.name: transform(getattr(obj, f.name), fn)
                                           for f in dataclasses.fields(obj)})
    if isinstance(obj, tuple):
        return fn(tuple(transform(item, fn) for item in obj))
    return obj


# ---------------------------------------------------------------------------- structural cuts
def remove_loop(program: Program, index: int) -> Program:
    """Without top-level loop ``index`` (later loops renumbered); unchanged if it is read."""
    if index in _loop_refs(program):
        return program

    def renumber(node: tuple) -> tuple:
        if len(node) == 3 and node[0] == "loop" and node[1] > index:
            return ("loop", node[1] - 1, node[2])
        return node

    loops = program.loops[:index] + program.loops[index + 1:]
    return transform(dataclasses.replace(program, loops=loops), renumber)


def _without_reads_of(program: Program, index: int, output: int | None = None) -> Program:
    """Without the reads of loop ``index`` (of its output ``output``); unchanged if none would remain."""
    def reads_it(read: tuple) -> bool:
        return any(len(n) == 3 and n[0] == "loop" and n[1] == index and output in (None, n[2])
                   for _, n in walk(read) if isinstance(n, tuple))

    reads = tuple(r for r in program.reads if not reads_it(r))
    return dataclasses.replace(program, reads=reads) if reads else program


def _loop_refs(program: Program) -> set:
    return {node[1] for _, node in walk(program) if isinstance(node, tuple) and len(node) == 3
            and node[0] == "loop"}


def remove_output(program: Program, path: tuple, k: int) -> Program:
    """Without output ``k`` of the loop at ``path``; unchanged where something reads it."""
    loop: Loop = node_at(program, path)
    nested = len(path) > 2  # a top-level loop's path is ("loops", index)
    prefix = "io" if nested else "o"
    if re.search(rf"'{prefix}{k}@|\('new', {k}\)", repr(loop)):
        return program
    renamed = _rename(loop, prefix, k)
    renamed = dataclasses.replace(renamed, outputs=renamed.outputs[:k] + renamed.outputs[k + 1:])
    if renamed.until is not None:
        renamed = dataclasses.replace(renamed, until=transform(renamed.until, lambda n: (
            ("new", n[1] - 1) if len(n) == 2 and n[0] == "new" and n[1] > k else n)))
    if not nested:
        index = path[1]
        if any(node[1:] == (index, k) for _, node in walk(program) if isinstance(node, tuple) and len(node) == 3
               and node[0] == "loop"):
            return program
        program = replace_at(program, path, renamed)
        return transform(program, lambda n: ("loop", index, n[2] - 1)
                         if len(n) == 3 and n[0] == "loop" and n[1] == index and n[2] > k else n)
    parent = node_at(program, path[:-1])  # ("scan", loop, read)
    if parent[2] == k:
        return program
    return replace_at(program, path[:-1], ("scan", renamed, parent[2] - (parent[2] > k)))


def remove_sequence(loop: Loop, i: int, nested: bool) -> Loop:
    """Without sequence ``i`` (unchanged where fn reads it)."""
    prefix = "is" if nested else "s"
    if f"'{prefix}{i}@" in repr(loop.outputs) + repr((loop.until, loop.updates)):
        return loop
    loop = _rename(loop, prefix, i)
    return dataclasses.replace(loop, sequences=loop.sequences[:i] + loop.sequences[i + 1:])


def _rename(loop: Loop, prefix: str, removed: int) -> Loop:
    """Names ``{prefix}{j}@tap`` with j > removed renumbered to j - 1."""
    pattern = re.compile(rf"^{prefix}(\d+)@(-?\d+)$")

    def rename(node: tuple) -> tuple:
        if len(node) == 2 and node[0] == "v" and isinstance(node[1], str):
            match = pattern.match(node[1])
            if match and int(match[1]) > removed:
                return ("v", f"{prefix}{int(match[1]) - 1}@{match[2]}")
        return node

    return transform(loop, rename)
