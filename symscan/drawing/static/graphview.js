/* symscan's interactive graph view: pan, zoom, open and close loops, hover details, search.
 *
 * The page embeds every state of the picture (which loops are open) as an SVG string,
 * laid out in Python; this script only switches between them, so no layout runs here and
 * nothing is fetched. Plain JavaScript, no dependencies. */
(function () {
  "use strict";

  const root = document.getElementById("ss-graph");
  const data = JSON.parse(document.getElementById("ss-data").textContent);
  const viewport = root.querySelector(".ss-viewport");
  const stage = root.querySelector(".ss-stage");
  const tooltip = root.querySelector(".ss-tooltip");
  const legend = root.querySelector(".ss-legend");
  const searchBox = root.querySelector(".ss-search");
  const countLabel = root.querySelector(".ss-count");

  const MIN_SCALE = 0.05, MAX_SCALE = 8, FIT_MARGIN = 16, DRAG_SLOP = 4;
  const KIND_NAMES = {
    input: "input", shared: "shared variable", output: "output", update: "shared update",
    op: "operation", loop: "loop (click to open)", port_in: "loop input", port_out: "loop output",
  };
  const EDGE_NAMES = {
    data: "value", crossing: "into or out of a loop", recurrence: "recurrence (step t to t+1)",
    added: "added by the rewrites", removed: "removed by the rewrites", moved: "moved out of a loop",
  };

  const keyOf = (ids) => [...ids].sort().join("\n");
  const states = new Map(data.states.map((s) => [keyOf(s.open), s]));
  const parsed = new Map(); // state key -> {svg, box}
  const titles = new Map(); // item or loop id -> text of its <title>, when data.items lacks it
  const view = { x: 0, y: 0, s: 1, moved: false };
  let current = null; // {key, open: Set, svg, box}
  let hovered = null; // the element whose details the tooltip shows
  let quietAt = null; // where the pointer was when a click switched state: no tooltip until it moves
  const search = { query: "", matches: [], index: -1 };

  /* ---------------------------------------------------------------- states */

  function ancestors(loopId) {
    const chain = [];
    let parent = data.loops[loopId] ? data.loops[loopId].parent : null;
    while (parent) {
      chain.push(parent);
      parent = data.loops[parent] ? data.loops[parent].parent : null;
    }
    return chain;
  }

  function withAncestors(loopId) {
    return loopId ? [loopId, ...ancestors(loopId)] : [];
  }

  function parseState(key) {
    if (parsed.has(key)) return parsed.get(key);
    const text = states.get(key).svg;
    let svg = new DOMParser().parseFromString(text, "image/svg+xml").documentElement;
    if (!svg || svg.nodeName !== "svg" || svg.querySelector("parsererror")) {
      const holder = document.createElement("div");
      holder.innerHTML = text; // not well-formed XML: let the HTML parser take it
      svg = holder.querySelector("svg");
    } else {
      svg = document.importNode(svg, true);
    }
    const box = intrinsicBox(svg, states.get(key));
    svg.removeAttribute("width");
    svg.removeAttribute("height");
    svg.setAttribute("preserveAspectRatio", "xMinYMin meet");
    svg.classList.add("ss-picture");
    for (const title of svg.querySelectorAll(":scope > title")) title.remove(); // no tooltip for the whole picture
    for (const title of svg.querySelectorAll(".item > title, [data-loop-id] > title")) {
      const owner = title.parentElement;
      const id = owner.getAttribute("data-id") || owner.getAttribute("data-loop-id");
      if (id && owner.classList.contains("item") && !titles.has(id)) titles.set(id, title.textContent);
      title.remove(); // our tooltip replaces the browser's
    }
    for (const el of svg.querySelectorAll("[data-loop-id]")) el.classList.add("ss-toggle");
    const entry = { svg, box };
    parsed.set(key, entry);
    return entry;
  }

  function intrinsicBox(svg, state) {
    const vb = (svg.getAttribute("viewBox") || "").trim().split(/[\s,]+/).map(Number);
    if (vb.length === 4 && vb.every(Number.isFinite) && vb[2] > 0 && vb[3] > 0) {
      return { x: vb[0], y: vb[1], w: vb[2], h: vb[3] };
    }
    const w = parseFloat(svg.getAttribute("width")) || state.width || 100;
    const h = parseFloat(svg.getAttribute("height")) || state.height || 100;
    svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
    return { x: 0, y: 0, w, h };
  }

  function showState(key) {
    const entry = parseState(key);
    stage.replaceChildren(entry.svg);
    current = { key, open: new Set(states.get(key).open), svg: entry.svg, box: entry.box };
    root.setAttribute("data-open", JSON.stringify([...current.open].sort()));
    buildLegend();
    refreshSearch(false);
  }

  function targetState(loopId) {
    const open = new Set(current.open);
    const opening = !open.has(loopId);
    if (opening) {
      withAncestors(loopId).forEach((id) => open.add(id));
    } else {
      for (const id of [...open]) if (id === loopId || ancestors(id).includes(loopId)) open.delete(id);
    }
    const exact = keyOf(open);
    if (states.has(exact)) return exact;
    const fallback = keyOf(opening ? withAncestors(loopId) : ancestors(loopId));
    if (states.has(fallback)) return fallback;
    return opening ? nearestState(withAncestors(loopId), []) : nearestState([], [loopId]);
  }

  // A big picture keeps few states (all closed, all open): the smallest one that opens every
  // loop of ``mustOpen`` and none of ``mustClose``, else all closed.
  function nearestState(mustOpen, mustClose) {
    const fits = data.states.filter((s) => mustOpen.every((id) => s.open.includes(id))
                                          && mustClose.every((id) => !s.open.includes(id)));
    fits.sort((a, b) => a.open.length - b.open.length);
    return fits.length ? keyOf(fits[0].open) : keyOf([]);
  }

  function loopElement(loopId) {
    const sel = `[data-loop-id="${CSS.escape(loopId)}"]`;
    return stage.querySelector(`.item${sel}`) || stage.querySelector(sel);
  }

  /** Switch to `key`, keeping `anchorId`'s element (a loop) where it was on screen. */
  function switchTo(key, anchorId) {
    if (!states.has(key) || (current && key === current.key)) return;
    const before = anchorId && loopElement(anchorId);
    const was = before ? before.getBoundingClientRect() : null;
    hideTooltip();
    showState(key);
    apply(); // the new picture under the same pan and zoom, before measuring it
    const after = anchorId && loopElement(anchorId);
    if (was && after) {
      const now = after.getBoundingClientRect();
      view.x += (now.left - was.left) / view.s;
      view.y += (now.top - was.top) / view.s;
      apply();
      keepInView(after);
    } else {
      fit();
    }
  }

  function toggleLoop(loopId, e) {
    switchTo(targetState(loopId), loopId);
    quietAt = e ? { x: e.clientX, y: e.clientY } : null;
  }

  /* ---------------------------------------------------------------- pan and zoom */

  function size() {
    return { w: Math.max(viewport.clientWidth, 1), h: Math.max(viewport.clientHeight, 1) };
  }

  function apply() {
    const { w, h } = size();
    current.svg.setAttribute("viewBox", `${view.x} ${view.y} ${w / view.s} ${h / view.s}`);
    current.svg.setAttribute("width", w);
    current.svg.setAttribute("height", h);
    root.setAttribute("data-scale", view.s.toFixed(4));
  }

  function fit() {
    const { w, h } = size();
    const box = current.box;
    const s = Math.min(w / (box.w + 2 * FIT_MARGIN), h / (box.h + 2 * FIT_MARGIN), 1);
    view.s = Math.min(Math.max(s, MIN_SCALE), MAX_SCALE);
    view.x = box.x + box.w / 2 - w / (2 * view.s);
    view.y = box.y + box.h / 2 - h / (2 * view.s);
    view.moved = false;
    apply();
  }

  function zoomAt(factor, px, py) {
    const s = Math.min(Math.max(view.s * factor, MIN_SCALE), MAX_SCALE);
    view.x += px / view.s - px / s;
    view.y += py / view.s - py / s;
    view.s = s;
    view.moved = true;
    apply();
  }

  function zoomCentre(factor) {
    const { w, h } = size();
    zoomAt(factor, w / 2, h / 2);
  }

  /** Pan so that `el` is in the middle of the viewport (zooming in if it would be tiny). */
  function centreOn(el) {
    const r = el.getBoundingClientRect(), v = viewport.getBoundingClientRect();
    if (view.s < 0.6) zoomAt(0.8 / view.s, r.left + r.width / 2 - v.left, r.top + r.height / 2 - v.top);
    const r2 = el.getBoundingClientRect();
    view.x += (r2.left + r2.width / 2 - (v.left + v.width / 2)) / view.s;
    view.y += (r2.top + r2.height / 2 - (v.top + v.height / 2)) / view.s;
    view.moved = true;
    apply();
  }

  /** Pan as little as possible (and zoom out if needed) so that all of `el` is on screen. */
  function keepInView(el) {
    const v = viewport.getBoundingClientRect();
    let r = el.getBoundingClientRect();
    const room = Math.min((v.width - 2 * FIT_MARGIN) / r.width, (v.height - 2 * FIT_MARGIN) / r.height);
    if (room < 1) {
      zoomAt(Math.max(room, MIN_SCALE / view.s), r.left - v.left, r.top - v.top);
      r = el.getBoundingClientRect();
    }
    const shift = (lo, hi, vlo, vhi) =>
      lo < vlo + FIT_MARGIN ? lo - vlo - FIT_MARGIN : hi > vhi - FIT_MARGIN ? Math.max(hi - vhi + FIT_MARGIN, 0) : 0;
    view.x += shift(r.left, r.right, v.left, v.right) / view.s;
    view.y += shift(r.top, r.bottom, v.top, v.bottom) / view.s;
    apply();
  }

  let drag = null, suppressClick = false;

  viewport.addEventListener("pointerdown", (e) => {
    if (e.button !== 0) return;
    drag = { x: e.clientX, y: e.clientY, vx: view.x, vy: view.y, moved: false };
  });
  window.addEventListener("pointermove", (e) => {
    if (!drag) return;
    const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    if (!drag.moved && Math.hypot(dx, dy) < DRAG_SLOP) return;
    drag.moved = true;
    viewport.classList.add("ss-dragging");
    hideTooltip();
    view.x = drag.vx - dx / view.s;
    view.y = drag.vy - dy / view.s;
    view.moved = true;
    apply();
  });
  window.addEventListener("pointerup", () => {
    if (drag && drag.moved) suppressClick = true;
    drag = null;
    viewport.classList.remove("ss-dragging");
  });
  viewport.addEventListener("wheel", (e) => {
    e.preventDefault();
    const unit = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? size().h : 1;
    const r = viewport.getBoundingClientRect();
    zoomAt(Math.exp(-e.deltaY * unit * 0.0015), e.clientX - r.left, e.clientY - r.top);
  }, { passive: false });

  viewport.addEventListener("click", (e) => {
    if (suppressClick) { suppressClick = false; return; }
    const item = e.target.closest(".item");
    const loop = item ? item.closest(".item[data-loop-id]") : e.target.closest("[data-loop-id]");
    if (loop && stage.contains(loop)) toggleLoop(loop.getAttribute("data-loop-id"), e);
  });

  root.querySelector(".ss-zoom-in").addEventListener("click", () => zoomCentre(1.25));
  root.querySelector(".ss-zoom-out").addEventListener("click", () => zoomCentre(0.8));
  root.querySelector(".ss-fit").addEventListener("click", fit);
  root.querySelector(".ss-legend-toggle").addEventListener("click", () => {
    legend.hidden = !legend.hidden;
  });
  new ResizeObserver(() => { if (current) (view.moved ? apply : fit)(); }).observe(viewport);

  /* ---------------------------------------------------------------- hover */

  function describe(el) {
    const id = el.getAttribute("data-id") || el.getAttribute("data-loop-id");
    const isItem = el.classList.contains("item");
    const info = isItem ? data.items[id] : null;
    const rows = [];
    let heading;
    if (info) {
      heading = info.label.replace(/\n/g, " ");
      rows.push(["kind", KIND_NAMES[info.kind] || info.kind]);
      for (const [k, v] of info.details) rows.push([k, v]);
    } else if (data.loops[id]) {
      heading = data.loops[id].title;
      rows.push(["kind", "open loop (click its frame to close it)"]);
      if (data.loops[id].steps) rows.push(["steps", data.loops[id].steps]);
      const closed = data.items[id]; // the same loop drawn closed: its details
      if (closed) for (const [k, v] of closed.details) rows.push([k, v]);
    } else {
      heading = id;
      if (titles.has(id)) rows.push(["", titles.get(id)]);
    }
    return { heading, rows };
  }

  function showTooltip(el, e) {
    const { heading, rows } = describe(el);
    const h = document.createElement("div");
    h.className = "ss-tip-heading";
    h.textContent = heading;
    const table = document.createElement("table");
    for (const [k, v] of rows) {
      const tr = table.insertRow();
      tr.insertCell().textContent = k;
      tr.insertCell().textContent = v;
    }
    tooltip.replaceChildren(h, table);
    tooltip.hidden = false;
    moveTooltip(e);
  }

  function moveTooltip(e) {
    const r = root.getBoundingClientRect();
    const tw = tooltip.offsetWidth, th = tooltip.offsetHeight;
    let x = e.clientX - r.left + 14, y = e.clientY - r.top + 14;
    if (x + tw > r.width) x = Math.max(0, e.clientX - r.left - tw - 14);
    if (y + th > r.height) y = Math.max(0, e.clientY - r.top - th - 14);
    tooltip.style.left = `${x}px`;
    tooltip.style.top = `${y}px`;
  }

  function hideTooltip() {
    tooltip.hidden = true;
    hovered = null;
  }

  function hoverAt(e) {
    if ((drag && drag.moved) || quietAt) return;
    const el = e.target.closest(".item") || e.target.closest("[data-loop-id]");
    if (el === hovered) return;
    if (!el) { hideTooltip(); return; }
    hovered = el;
    showTooltip(el, e);
  }
  viewport.addEventListener("pointerover", hoverAt);
  viewport.addEventListener("pointermove", (e) => {
    if (quietAt && Math.hypot(e.clientX - quietAt.x, e.clientY - quietAt.y) > DRAG_SLOP) {
      quietAt = null;
      hoverAt(e);
    }
    if (hovered) moveTooltip(e);
  });
  viewport.addEventListener("pointerleave", hideTooltip);

  /* ---------------------------------------------------------------- search */

  function itemText(id) {
    const info = data.items[id];
    return info ? `${info.label} ${info.search}`.toLowerCase() : (titles.get(id) || "").toLowerCase();
  }

  /** Matching items: those drawn now (in picture order) first, then those inside closed loops. */
  function findMatches(query) {
    if (!query) return [];
    const shown = [...stage.querySelectorAll(".item[data-id]")].map((el) => el.getAttribute("data-id"));
    const shownSet = new Set(shown);
    const hidden = Object.keys(data.items).filter((id) => !shownSet.has(id));
    return [...shown, ...hidden].filter((id) => itemText(id).includes(query));
  }

  function itemElement(id) {
    return stage.querySelector(`.item[data-id="${CSS.escape(id)}"]`);
  }

  function refreshSearch(move) {
    search.query = searchBox.value.trim().toLowerCase();
    search.matches = findMatches(search.query);
    if (!search.matches.length) search.index = -1;
    else if (move || search.index < 0) search.index = 0;
    else search.index = Math.min(search.index, search.matches.length - 1);
    markMatches();
    if (move && search.index >= 0) goToMatch();
  }

  function markMatches() {
    const set = new Set(search.matches);
    for (const el of stage.querySelectorAll(".item[data-id]")) {
      const id = el.getAttribute("data-id");
      el.classList.toggle("ss-match", set.has(id));
      el.classList.toggle("ss-current", search.index >= 0 && search.matches[search.index] === id);
    }
    const n = search.matches.length;
    countLabel.textContent = !search.query ? "" : n ? `${search.index + 1} of ${n}` : "no match";
    searchBox.classList.toggle("ss-nomatch", Boolean(search.query) && !n);
  }

  function goToMatch() {
    const id = search.matches[search.index];
    let el = itemElement(id);
    if (!el) { // inside a closed loop: open the loops around it
      const needed = withAncestors(data.items[id].loop);
      const both = keyOf(new Set([...current.open, ...needed]));
      switchTo(states.has(both) ? both : states.has(keyOf(needed)) ? keyOf(needed) : nearestState(needed, []));
      search.index = Math.max(search.matches.indexOf(id), 0);
      markMatches();
      el = itemElement(id);
    }
    if (!el && data.loops[id]) el = loopElement(id); // a loop found by name, drawn open: its frame
    if (el) centreOn(el);
  }

  function step(delta) {
    if (!search.matches.length) return;
    search.index = (search.index + delta + search.matches.length) % search.matches.length;
    markMatches();
    goToMatch();
  }

  searchBox.addEventListener("input", () => refreshSearch(true));
  searchBox.addEventListener("keydown", (e) => {
    if (e.key === "Enter") { e.preventDefault(); step(e.shiftKey ? -1 : 1); }
    if (e.key === "Escape") { searchBox.value = ""; refreshSearch(false); }
  });

  /* ---------------------------------------------------------------- legend */

  function swatchStyle(el) {
    const shape = el.querySelector("rect, ellipse, polygon, path, circle") || el;
    const cs = getComputedStyle(shape);
    return { fill: cs.fill, stroke: cs.stroke, dash: cs.strokeDasharray };
  }

  function legendRow(kind, style, name, isEdge) {
    const row = document.createElement("div");
    row.className = "ss-legend-row";
    const ns = "http://www.w3.org/2000/svg";
    const icon = document.createElementNS(ns, "svg");
    icon.setAttribute("width", "26");
    icon.setAttribute("height", "14");
    const mark = document.createElementNS(ns, isEdge ? "line" : "rect");
    const attrs = isEdge ? { x1: 1, y1: 7, x2: 25, y2: 7 } : { x: 1, y: 1, width: 24, height: 12, rx: 3 };
    for (const [k, v] of Object.entries(attrs)) mark.setAttribute(k, v);
    mark.style.fill = isEdge ? "none" : style.fill;
    mark.style.stroke = style.stroke;
    if (style.dash && style.dash !== "none") mark.style.strokeDasharray = style.dash;
    icon.appendChild(mark);
    const label = document.createElement("span");
    label.textContent = name;
    row.append(icon, label);
    row.setAttribute("data-kind", kind);
    return row;
  }

  function buildLegend() {
    const rows = [], seen = new Set();
    for (const el of stage.querySelectorAll(".item")) {
      const kind = [...el.classList].find((c) => c.startsWith("kind-"));
      if (!kind || seen.has(kind)) continue;
      seen.add(kind);
      const name = kind.slice(5);
      rows.push(legendRow(name, swatchStyle(el), KIND_NAMES[name] || name, false));
    }
    for (const el of stage.querySelectorAll(".edge")) {
      const style = [...el.classList].find((c) => c !== "edge" && EDGE_NAMES[c.replace(/^(style|status)-/, "")]);
      if (!style || seen.has(style)) continue;
      seen.add(style);
      rows.push(legendRow(style, swatchStyle(el), EDGE_NAMES[style.replace(/^(style|status)-/, "")], true));
    }
    legend.replaceChildren(...rows);
  }

  /* ---------------------------------------------------------------- start */

  const initial = keyOf(data.initial);
  showState(states.has(initial) ? initial : data.states.length ? keyOf(data.states[0].open) : initial);
  fit();
  root.setAttribute("data-ready", "true");
})();
