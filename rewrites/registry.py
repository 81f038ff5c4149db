"""The registry: every rewrite with its name, phase, the op classes it looks at and its tags.

Phases run in the order of ``PHASES``; ``select`` turns a user's ``rewrites=[...]`` list
(names or tags, ``-name`` to exclude; ``rule:``/``tag:`` to disambiguate) into the rules to run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

PHASES = ("canonicalize", "push_out", "merge", "save_mem", "vectorize", "fusion", "inplace")
"""``vectorize`` replaces loops by whole-array computations; it runs after save_mem so that an
output of which only the last value is read becomes a reduction. ``fusion`` and ``inplace`` run
once, in this order, after the others have reached their fixed point: no other rule needs to
understand fused nodes, and inplace marks them."""

FINAL_PHASES = ("fusion", "inplace")
"""The phases that run once, last (the others repeat while something changes)."""


@dataclass(frozen=True)
class Rewrite:
    """A registered rule.

    ``kind="node"``: ``fn(fgraph, node)`` returns ``{old: new}`` or ``Rewritten`` (fired),
    ``Declined(why)`` or None (not applicable). ``kind="graph"``: ``fn(fgraph)`` returns a list of
    ``(old, new, detail)`` replacements made in one pass over the whole graph.
    """

    name: str
    fn: Callable
    phase: str
    tracks: tuple = ()
    tags: frozenset = frozenset()
    kind: str = "node"

    def looks_at(self, op) -> bool:
        return not self.tracks or isinstance(op, self.tracks)


class Declined(str):
    """A rule looked at a node and did not fire; the text says why (shown in the report)."""


@dataclass(frozen=True)
class Rewritten:
    """A rule fired: ``replacements`` ({old: new}) and, for the report, what it did."""

    replacements: dict
    detail: str


REGISTRY: dict[str, Rewrite] = {}


def register(name: str, *, phase: str, tracks: Iterable[type] = (), tags: Iterable[str] = (),
             kind: str = "node") -> Callable:
    """Decorator that registers ``fn`` as the rewrite ``name``."""
    if phase not in PHASES:
        raise ValueError(f"rewrite {name!r}: unknown phase {phase!r}; use one of {PHASES}")

    def add(fn: Callable) -> Callable:
        if name in REGISTRY:
            raise ValueError(f"a rewrite named {name!r} is already registered")
        REGISTRY[name] = Rewrite(name, fn, phase, tuple(tracks), frozenset(tags) | {phase}, kind)
        return fn

    return add


def _matches(rule: Rewrite, key: str) -> bool:
    """Whether ``key`` (a rule name, a tag, or ``rule:NAME`` / ``tag:NAME``) covers ``rule``.

    A bare key that is both a rule's name and a tag ("merge", "canonicalize", "save_mem",
    "inplace") means the tag, whether it includes or excludes: one rule is never silently
    chosen over a tag. ``rule:merge`` names the one rule.
    """
    kind, _, name = key.rpartition(":")
    if kind == "rule":
        return rule.name == name
    return name in rule.tags or (kind != "tag" and rule.name == name)


def _known_keys() -> set[str]:
    # phase names are tags even before a rule of that phase is registered (API.md lists them)
    tags = set(PHASES) | {t for r in REGISTRY.values() for t in r.tags}
    return set(REGISTRY) | tags | {f"rule:{n}" for n in REGISTRY} | {f"tag:{t}" for t in tags}


def select(spec: Iterable[str] | None, default: Iterable[str] | None) -> list[Rewrite]:
    """Rules chosen by ``spec`` over the mode's ``default`` (None meaning every rule).

    ``spec`` None keeps the default. Names/tags in ``spec`` replace the default with those
    rules; ``-key`` entries remove them. A key that is a tag stands for every rule with that
    tag (see ``_matches``); ``rule:NAME`` and ``tag:NAME`` say which one is meant.
    """
    spec = [spec] if isinstance(spec, str) else list(spec or [])
    known = _known_keys()
    for key in spec:
        if key.lstrip("-") not in known:
            shown = sorted(k for k in known if ":" not in k)
            raise ValueError(f"unknown rewrite or tag {key.lstrip('-')!r}; known: {', '.join(shown)} "
                             "(prefix rule: or tag: to say which of the two a name means)")
    include = [k for k in spec if not k.startswith("-")]
    exclude = [k[1:] for k in spec if k.startswith("-")]
    base = include if include else (list(REGISTRY) if default is None else list(default))
    chosen = [r for r in REGISTRY.values() if any(_matches(r, k) for k in base)]
    return [r for r in chosen if not any(_matches(r, k) for k in exclude)]
