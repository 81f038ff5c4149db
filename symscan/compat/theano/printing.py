"""``theano.printing``: ``debugprint`` is symscan's ``dprint``; ``pydotprint`` draws with ``ss.draw``."""

from __future__ import annotations

import os
from pathlib import Path

from symscan.drawing import Drawing
from symscan.printing import dprint as debugprint

__all__ = ["debugprint", "pydotprint"]

PYDOTPRINT_FORMATS = ("png", "svg", "dot", "html")


def pydotprint(fct, outfile: str | Path | None = None, compact: bool = True, format: str = "png",
               with_ids: bool = False, high_contrast: bool = True, cond_highlight=None, colorCodes=None,
               max_label_size: int = 70, scan_graphs: bool = False, var_with_name_simple: bool = False,
               print_output_file: bool = True, return_image: bool = False):
    """Theano's ``pydotprint``: a picture of ``fct`` (a compiled function, a variable, a list of
    variables or a Scan node) written to ``outfile`` (default ``theano.pydotprint.cpu.<format>``
    in the working directory), or returned with ``return_image=True``.

    The picture is ``ss.draw``'s: ``compact=False`` draws the shape bookkeeping ``compact``
    folds away, and ``scan_graphs=True`` draws loop bodies inside their loops (Theano wrote
    them to separate files). The styling arguments (ids, colours, label sizes) are accepted
    and ignored: ``ss.draw`` styles by kind of node.
    """
    if format not in PYDOTPRINT_FORMATS:
        raise ValueError(f"pydotprint: format must be one of {', '.join(PYDOTPRINT_FORMATS)} (ss.draw's), "
                         f"got {format!r}; pass format='png' or 'svg'")
    drawing = Drawing(fct, loops="open" if scan_graphs else "closed", plumbing=not compact)
    if return_image:
        return drawing.png() if format == "png" else getattr(drawing, format)()
    outfile = Path(outfile) if outfile is not None else Path(os.getcwd()) / f"theano.pydotprint.cpu.{format}"
    written = Path(drawing.save(outfile.with_suffix(f".{format}")))
    if print_output_file:
        print("The output file is available at", written)
    return None
