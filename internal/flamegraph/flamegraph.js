// Interaction for jitpprof's flame graphs: zoom, search, details.
// The SVG is complete without this script; the script reads the frames'
// geometry back from it and redraws them in pixels.
(function () {
  'use strict';
  var svg = document.documentElement;
  var cfg = svg.dataset;
  var margin = +cfg.margin, width = +cfg.width, grid = +cfg.grid;
  var pad = +cfg.pad, base = +cfg.base, charW = +cfg.charw;
  var frames = document.getElementById('frames');
  var labels = document.getElementById('labels');
  var details = document.getElementById('details');
  var matched = document.getElementById('matched');
  var resetButton = document.getElementById('reset');
  var searchButton = document.getElementById('search');
  var clearButton = document.getElementById('clear');
  var hint = details.textContent;

  // The frames, as drawn by the Go side: x and width in grid units
  // (exact integers), y in pixels. Frame 0 is the root.
  var rects = Array.prototype.slice.call(frames.getElementsByTagName('rect'));
  var n = rects.length;
  var start = new Float64Array(n), value = new Float64Array(n), top = new Float64Array(n);
  var names = new Array(n), tips = new Array(n);
  var index = new Map();
  rects.forEach(function (r, i) {
    start[i] = +r.getAttribute('x');
    value[i] = +r.getAttribute('width');
    top[i] = +r.getAttribute('y');
    tips[i] = r.firstElementChild ? r.firstElementChild.textContent : '';
    names[i] = tips[i].split('\n')[0];
    index.set(r, i);
  });

  var zoomed = -1; // Index of the frame zoomed into, or -1.
  var pattern = null; // Source of the current search, or null.

  // The monospace font's real character width, for cutting labels.
  (function () {
    var probe = document.createElementNS(svg.namespaceURI, 'text');
    probe.textContent = 'MMMMMMMMMM';
    labels.appendChild(probe);
    var w = probe.getComputedTextLength();
    labels.removeChild(probe);
    if (w > 0) charW = w / 10;
  })();

  // fit cuts name to fit w pixels, as the Go side does; '' if too narrow.
  function fit(name, w) {
    var k = Math.floor((w - 2 * pad) / charW);
    if (k < 3) return '';
    var chars = Array.from(name);
    return chars.length <= k ? name : chars.slice(0, k - 1).join('') + '\u2026';
  }

  // layout draws the frames for the current zoom: the zoomed frame and
  // its callees scaled to the full width, its callers full width and
  // dimmed, everything else hidden.
  function layout() {
    var zs = 0, zv = grid, zy = Infinity;
    if (zoomed >= 0) {
      zs = start[zoomed]; zv = value[zoomed]; zy = top[zoomed];
    }
    var ze = zs + zv, scale = width / zv;
    frames.setAttribute('transform', 'translate(' + margin + ',0)');
    while (labels.firstChild) labels.removeChild(labels.firstChild);
    for (var i = 0; i < n; i++) {
      var r = rects[i], s = start[i], e = s + value[i];
      var x, w, caller = top[i] > zy;
      if (caller && s <= zs && e >= ze) {
        x = 0; w = width;
      } else if (!caller && s >= zs && e <= ze) {
        x = (s - zs) * scale; w = value[i] * scale;
      } else {
        r.classList.add('hid');
        continue;
      }
      r.classList.remove('hid');
      r.classList.toggle('anc', caller);
      r.setAttribute('x', x);
      r.setAttribute('width', w);
      var label = fit(names[i], w);
      if (label) {
        var t = document.createElementNS(svg.namespaceURI, 'text');
        t.setAttribute('x', margin + x + pad);
        t.setAttribute('y', top[i] + base);
        t.textContent = label;
        labels.appendChild(t);
      }
    }
    resetButton.classList.toggle('off', zoomed < 0);
  }

  function zoom(i) {
    zoomed = i > 0 ? i : -1;
    layout();
  }

  // search highlights the frames whose names match the regular
  // expression source and shows the share of the total they cover. A
  // match inside another match covers nothing more: frames nest, so the
  // union of their ranges is the sum over the outermost ones.
  function search(source) {
    var re;
    try {
      re = new RegExp(source);
    } catch (err) {
      matched.textContent = 'Invalid regular expression: ' + err.message;
      return false;
    }
    pattern = source;
    var hits = [];
    for (var i = 1; i < n; i++) {
      var hit = re.test(names[i]);
      rects[i].classList.toggle('match', hit);
      if (hit) hits.push(i);
    }
    hits.sort(function (a, b) { return start[a] - start[b] || value[b] - value[a]; });
    var covered = 0, end = -1;
    hits.forEach(function (i) {
      var e = start[i] + value[i];
      if (start[i] >= end) {
        covered += value[i];
        end = e;
      }
    });
    matched.textContent = 'Matched: ' + (grid > 0 ? 100 * covered / grid : 0).toFixed(1) + '%';
    clearButton.classList.remove('off');
    return true;
  }

  function clearSearch() {
    pattern = null;
    rects.forEach(function (r) { r.classList.remove('match'); });
    matched.textContent = '';
    clearButton.classList.add('off');
  }

  function askSearch() {
    var source = window.prompt('Search frames (regular expression):', pattern || '');
    if (source === null) return;
    if (source === '') clearSearch(); else search(source);
  }

  frames.addEventListener('click', function (ev) {
    var i = index.get(ev.target);
    if (i !== undefined) zoom(i);
  });
  frames.addEventListener('mouseover', function (ev) {
    var i = index.get(ev.target);
    if (i !== undefined) details.textContent = tips[i].split('\n').join('  |  ');
  });
  frames.addEventListener('mouseout', function () { details.textContent = hint; });
  resetButton.addEventListener('click', function () { zoom(-1); });
  searchButton.addEventListener('click', askSearch);
  clearButton.addEventListener('click', clearSearch);
  window.addEventListener('keydown', function (ev) {
    if ((ev.ctrlKey || ev.metaKey) && (ev.key === 'f' || ev.key === 'F')) {
      ev.preventDefault();
      askSearch();
    } else if (ev.key === 'Escape') {
      zoom(-1);
      clearSearch();
    }
  });

  if (n > 0) layout();

  // For scripts and tests: the same actions as the controls.
  window.flamegraph = {
    zoom: function (rect) { zoom(index.has(rect) ? index.get(rect) : -1); },
    reset: function () { zoom(-1); },
    search: search,
    clearSearch: clearSearch
  };
})();
