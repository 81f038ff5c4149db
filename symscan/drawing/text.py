"""Text metrics shared by the layout (which sizes boxes) and the renderers (which print the
labels), so a label always fits its box. Labels are set in a monospace font, whose width
per character is known without measuring: 0.6 em (DejaVu Sans Mono, Liberation Mono, Courier).
Also the one escaping both sides use: graphviz's HTML labels and our SVG are both XML."""

from __future__ import annotations

import re

# C0 controls other than tab, newline and carriage return: not allowed in XML at all (graphviz
# then writes JSON that does not parse), so they are dropped rather than escaped
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")

FONT_FAMILY = "DejaVu Sans Mono, Liberation Mono, Menlo, Consolas, monospace"
FONT_SIZE = 12.0          # px, item labels
SMALL_FONT_SIZE = 10.0    # px, edge labels, badges, loop titles' second line
CHAR_WIDTH = 0.6          # em, monospace advance (0.602 for DejaVu Sans Mono: rounded up below)
LINE_HEIGHT = 1.3         # em
PAD_X, PAD_Y = 8.0, 5.0   # px around an item's label


def text_size(text: str, size: float = FONT_SIZE) -> tuple[float, float]:
    """Width and height in px of ``text`` (lines split on newlines) set at ``size`` px."""
    lines = text.split("\n") if text else [""]
    width = max(len(line) for line in lines) * size * (CHAR_WIDTH + 0.005)
    return width, len(lines) * size * LINE_HEIGHT


def item_size(label: str, badge: str = "") -> tuple[float, float]:
    """Width and height in px of an item's box holding ``label`` (and its badge, if any)."""
    width, height = text_size(label)
    if badge:
        width += text_size(badge, SMALL_FONT_SIZE)[0] + 6
    return width + 2 * PAD_X, height + 2 * PAD_Y


def shorten(text: str, limit: int = 28) -> str:
    """One label line at most ``limit`` characters, cut with an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def strip_controls(text: str) -> str:
    """``text`` without the control characters XML (and graphviz) cannot carry."""
    return _CONTROL.sub("", str(text))


def esc(text: str) -> str:
    """``text`` safe inside XML text and double-quoted attributes (SVG, graphviz HTML labels)."""
    text = strip_controls(text)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
