// The flame graph's inline style sheet and script (see flamegraph.hpp for
// what the controls do). The script reads everything from the document:
// a frame is a <g> inside #frames whose first child is its <title>
// ("name (1,234 samples, 12.34%...)": the name is what comes before the
// last " (", the value the number after it), then its <rect>, then
// perhaps its <text>, then its children's <g>s. The writer puts W (image
// width), XPAD (side margin) and CW (a character's width) before it.
//
// Zoom keeps each rect's original x and width on the element (_o) the first
// time it moves, so that a reset, or a zoom from a zoomed view, starts from
// the drawing as written.
namespace tracekit::output::svg {

extern const char kStyle[];
extern const char kScript[];

const char kStyle[] = R"(
text { font-family: Verdana, sans-serif; font-size: 12px; fill: #000; }
#title { font-size: 17px; text-anchor: middle; }
#subtitle { text-anchor: middle; fill: #555; }
#empty { text-anchor: middle; }
#search, #matched { text-anchor: end; }
.ctl { cursor: pointer; fill: #335; }
.ctl:hover { fill: #00f; text-decoration: underline; }
#frames text { pointer-events: none; }
#frames rect { rx: 2px; ry: 2px; cursor: pointer; }
#frames rect:hover { stroke: #000; stroke-width: 0.5px; }
.hide { display: none; }
.parent > rect { opacity: 0.5; }
)";

const char kScript[] = R"JS(
(function () {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";
  var frames = document.getElementById("frames");
  var details = document.getElementById("details");
  var matched = document.getElementById("matched");
  var unzoomCtl = document.getElementById("unzoom");
  var searchCtl = document.getElementById("search");
  if (!frames) return;  // an empty graph
  var root = frames.firstElementChild;
  var zoomed = null, searching = null, lit = [];

  function title(g) { return g.firstElementChild.textContent; }
  function rect(g) { return g.children[1]; }
  function nameOf(g) { var t = title(g); return t.slice(0, t.lastIndexOf(" (")); }
  function valueOf(g) {
    var t = title(g);
    return Number(t.slice(t.lastIndexOf(" (") + 2).split(" ")[0].replace(/,/g, ""));
  }
  function kids(g) {
    var out = [];
    for (var c = g.firstElementChild; c; c = c.nextElementSibling)
      if (c.localName === "g") out.push(c);
    return out;
  }
  function labelOf(g) {
    var t = g.children[2];
    return t && t.localName === "text" ? t : null;
  }
  function orig(r) {
    if (!r._o) r._o = [parseFloat(r.getAttribute("x")), parseFloat(r.getAttribute("width"))];
    return r._o;
  }
  function fixed(v) { return String(Math.round(v * 100) / 100); }

  // The label that fits w px, as the writer cuts it: the name, or its first
  // characters and "..", or nothing when fewer than three fit.
  function relabel(g, x, w) {
    var fit = Math.floor(w / CW + 1e-9), s = "";
    if (fit >= 3) {
      var chars = Array.from(nameOf(g));
      s = chars.length <= fit ? chars.join("") : chars.slice(0, fit - 2).join("") + "..";
    }
    var t = labelOf(g);
    if (!t) {
      if (!s) return;
      t = document.createElementNS(NS, "text");
      g.insertBefore(t, rect(g).nextSibling);
    }
    t.setAttribute("x", fixed(x + 3));
    t.setAttribute("y", fixed(parseFloat(rect(g).getAttribute("y")) + 10.5));
    t.textContent = s;
  }
  function place(g, x, w) {
    var r = rect(g);
    orig(r);
    r.setAttribute("x", fixed(x));
    r.setAttribute("width", fixed(w));
    relabel(g, Math.round(x * 100) / 100, Math.round(w * 100) / 100);
  }

  function restore() {
    var all = frames.getElementsByTagName("g");
    for (var i = 0; i < all.length; i++) {
      var g = all[i], r = rect(g);
      g.classList.remove("hide", "parent");
      if (r._o) place(g, r._o[0], r._o[1]);
    }
    zoomed = null;
    unzoomCtl.classList.add("hide");
  }
  function scale(g, x0, ratio) {
    var o = orig(rect(g));
    place(g, XPAD + (o[0] - x0) * ratio, o[1] * ratio);
    kids(g).forEach(function (k) { scale(k, x0, ratio); });
  }
  function zoom(g) {
    restore();
    if (g === root) return;
    zoomed = g;
    unzoomCtl.classList.remove("hide");
    var o = orig(rect(g)), full = W - 2 * XPAD;
    for (var child = g, a = g.parentNode; a !== frames; child = a, a = a.parentNode) {
      a.classList.add("parent");
      place(a, XPAD, full);
      kids(a).forEach(function (k) { if (k !== child) k.classList.add("hide"); });
    }
    scale(g, o[0], full / o[1]);
  }

  function resetSearch() {
    lit.forEach(function (r) { r.setAttribute("fill", r._fill); });
    lit = [];
    searching = null;
    searchCtl.textContent = "Search";
    matched.classList.add("hide");
  }
  // A regular expression, or the plain text when it is not one. A stack is
  // counted once however many of its frames match: a match inside a
  // matched frame adds nothing.
  function search(term) {
    resetSearch();
    if (!term) return;
    var re;
    try { re = new RegExp(term); }
    catch (e) { re = new RegExp(term.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")); }
    var sum = 0;
    (function visit(g, inside) {
      var hit = re.test(nameOf(g));
      if (hit) {
        var r = rect(g);
        r._fill = r.getAttribute("fill");
        r.setAttribute("fill", "#e600e6");
        lit.push(r);
        if (!inside) sum += valueOf(g);
      }
      kids(g).forEach(function (k) { visit(k, inside || hit); });
    })(root, false);
    searching = term;
    searchCtl.textContent = "Reset Search";
    matched.textContent = "Matched: " + (100 * sum / valueOf(root)).toFixed(1) + "%";
    matched.classList.remove("hide");
  }
  function askSearch() {
    var term = prompt("Search for (regular expression):", searching || "");
    if (term !== null) search(term);
  }

  frames.addEventListener("click", function (e) {
    if (e.target.localName === "rect") zoom(e.target.parentNode);
  });
  frames.addEventListener("mouseover", function (e) {
    if (e.target.localName === "rect") details.textContent = title(e.target.parentNode);
  });
  frames.addEventListener("mouseout", function () { details.textContent = " "; });
  unzoomCtl.addEventListener("click", restore);
  searchCtl.addEventListener("click", function () {
    if (searching) resetSearch();
    else askSearch();
  });
  window.addEventListener("keydown", function (e) {
    if (e.key === "F3" || ((e.ctrlKey || e.metaKey) && e.key === "f")) {
      e.preventDefault();
      askSearch();
    } else if (e.key === "Escape") {
      restore();
      resetSearch();
    }
  });
})();
)JS";

}  // namespace tracekit::output::svg
