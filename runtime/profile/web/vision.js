// Aspen Vision: the analyser page. Reads the reports embedded in
// <script id="aspen-reports"> (docs/profile-format.md) and draws the views.
// Plain browser JavaScript, no libraries, no network.
'use strict';

(function () {
  const KNOWN_VERSION = 2;
  const $ = (sel, root) => (root || document).querySelector(sel);
  const el = (tag, attrs, ...children) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v);
    }
    for (const c of children) if (c != null) e.append(c instanceof Node ? c : String(c));
    return e;
  };
  /** Appends the children that are not null. */
  const add = (parent, ...children) => { for (const c of children) if (c != null) parent.append(c); return parent; };
  const fmt = (n) => (typeof n === 'number' ? n.toLocaleString('en-US') : String(n));
  const bytes = (n) => n >= 1048576 ? (n / 1048576).toFixed(1) + ' MB' : n >= 1024 ? (n / 1024).toFixed(1) + ' KB' : n + ' B';

  function showError(title, message) {
    const panel = el('div', { class: 'error-panel', role: 'alert' }, el('h2', { text: title }), el('div', { text: message }));
    $('#errors').append(panel);
  }

  // ---- checking a report ------------------------------------------------------
  class ReportError extends Error {}
  function need(cond, file, what) { if (!cond) throw new ReportError(file + ': ' + what); }
  function isArr(a) { return Array.isArray(a); }

  /** Checks what the views rely on and returns a normalised model of one report. */
  function loadReport(entry) {
    const file = entry.file || 'report';
    const r = entry.report;
    need(r && typeof r === 'object' && !isArr(r), file, 'the report is not a JSON object');
    need(r.format === 'aspen-profile', file, 'not an Aspen profile (format is ' + JSON.stringify(r.format) + ')');
    need(Number.isInteger(r.version), file, 'no integer "version"');
    need(r.version <= KNOWN_VERSION, file, 'format version ' + r.version + ' is newer than this page understands (' + KNOWN_VERSION + ')');
    need(r.target && typeof r.target === 'object', file, '"target" is missing or not an object');
    const numTiles = r.target.numTiles;
    need(Number.isInteger(numTiles) && numTiles > 0, file, '"target.numTiles" is not a positive integer');
    const memory = r.memory || {};
    need(typeof memory === 'object' && !isArr(memory), file, '"memory" is not an object');
    const tiles = memory.tiles || {};
    for (const key of ['peakBytes', 'alwaysLiveBytes', 'notAlwaysLivePeakBytes']) {
      if (tiles[key] !== undefined)
        need(isArr(tiles[key]) && tiles[key].length === numTiles, file,
             '"memory.tiles.' + key + '" must have one entry per tile (' + numTiles + ')');
    }
    const steps = r.steps || [];
    need(isArr(steps), file, '"steps" is not an array');
    const variables = r.variables || [];
    need(isArr(variables), file, '"variables" is not an array');
    const execution = r.execution || null;
    if (execution) {
      need(isArr(execution.trace || []), file, '"execution.trace" is not an array');
      need(isArr(execution.steps || []), file, '"execution.steps" is not an array');
    }
    return { file, r, numTiles, memory, tiles, steps, variables, execution, host: entry.host || [], tileIndex: null };
  }

  /** Per tile: [variable index, bytes] pairs, built on first use. */
  function tileVariables(m, tile) {
    if (!m.tileIndex) {
      const index = Array.from({ length: m.numTiles }, () => []);
      m.variables.forEach((v, i) => {
        const t = v.tiles || [];
        for (let k = 0; k + 1 < t.length; k += 2) if (t[k] < m.numTiles) index[t[k]].push([i, t[k + 1]]);
      });
      for (const list of index) list.sort((a, b) => b[1] - a[1]);
      m.tileIndex = index;
    }
    return m.tileIndex[tile];
  }

  function tileVertices(m, tile) {
    const out = [];
    (m.r.vertexTypes || []).forEach((t) => {
      const f = t.tiles || [];
      for (let k = 0; k + 1 < f.length; k += 2) if (f[k] === tile) out.push([t.name, f[k + 1]]);
    });
    return out.sort((a, b) => b[1] - a[1]);
  }

  // ---- tables with sorting and search -----------------------------------------
  /** columns: [{title, get, num}] ; rows: array ; returns an element. */
  function table(id, columns, rows, opts) {
    opts = opts || {};
    const limit = opts.limit || 500;
    let sortCol = opts.sortCol ?? -1, sortDir = -1, filter = '';
    const wrap = el('div', { id });
    const search = el('input', { type: 'search', placeholder: 'Search by name', 'aria-label': 'search ' + id });
    const count = el('span', { class: 'muted' });
    const tbl = el('table');
    wrap.append(el('div', { class: 'toolbar' }, search, count), tbl);
    function render() {
      let view = rows;
      if (filter) view = view.filter((row) => String(columns[0].get(row)).toLowerCase().includes(filter));
      if (sortCol >= 0) {
        const g = columns[sortCol].get;
        view = view.slice().sort((a, b) => { const x = g(a), y = g(b); return (x < y ? -1 : x > y ? 1 : 0) * sortDir; });
      }
      count.textContent = 'showing ' + fmt(Math.min(limit, view.length)) + ' of ' + fmt(view.length);
      const head = el('tr');
      columns.forEach((c, i) => head.append(el('th', {
        class: 'sortable' + (c.num ? ' num' : ''), text: c.title + (i === sortCol ? (sortDir > 0 ? ' \u25b2' : ' \u25bc') : ''),
        onclick: () => { if (sortCol === i) sortDir = -sortDir; else { sortCol = i; sortDir = c.num ? -1 : 1; } render(); },
      })));
      const body = document.createDocumentFragment();
      for (const row of view.slice(0, limit)) {
        const tr = el('tr');
        for (const c of columns) { const v = c.get(row); tr.append(el('td', { class: c.num ? 'num' : '', text: c.num ? fmt(v) : v })); }
        if (opts.onRow) { tr.style.cursor = 'pointer'; tr.addEventListener('click', () => opts.onRow(row)); }
        body.append(tr);
      }
      tbl.replaceChildren(head, body);
    }
    search.addEventListener('input', () => { filter = search.value.trim().toLowerCase(); render(); });
    render();
    return wrap;
  }

  // ---- summary ----------------------------------------------------------------
  function summaryRows(m) {
    const t = m.r.target, g = m.r.graph || {}, mem = m.memory, x = m.execution;
    const rows = [
      ['Target', (t.type || '') + ' ' + (t.arch || '')],
      ['IPUs', t.numIPUs], ['Tiles', m.numTiles], ['Bytes per tile', t.bytesPerTile],
      ['Clock (MHz)', t.tileClockFrequency ? t.tileClockFrequency / 1e6 : ''],
      ['Replicas', t.replicationFactor ?? 1],
      ['Vertices', g.numVertices], ['Edges', g.numEdges], ['Variables', g.numVariables],
      ['Compute sets', g.numComputeSets], ['Programs', g.numPrograms], ['Program steps', g.numSteps],
      ['Total memory (peak per tile, summed)', mem.totalPeakBytes], ['Largest tile (bytes)', mem.maxTilePeakBytes],
      ['Tiles out of memory', mem.tilesOutOfMemory ?? 0],
    ];
    for (const [k, v] of Object.entries(mem.byCategory || {})) rows.push(['Memory: ' + k, v]);
    if (x) {
      rows.push(['Runs', x.runs], ['Total cycles', x.totalCycles], ['Steps executed', (x.trace || []).length]);
      for (const [k, v] of Object.entries(x.cycles || {})) rows.push(['Cycles: ' + k, v]);
      rows.push(['Host seconds', x.hostSeconds]);
    }
    return rows;
  }

  function oomPanel(m) {
    const mem = m.memory;
    const peak = m.tiles.peakBytes;
    if (!mem.outOfMemory && !(mem.tilesOutOfMemory > 0)) return null;
    const limit = m.r.target.bytesPerTile;
    let worst = 0;
    if (peak) for (let i = 1; i < peak.length; ++i) if (peak[i] > peak[worst]) worst = i;
    const over = peak ? peak[worst] - limit : 0;
    const vars = tileVariables(m, worst).slice(0, 8);
    const list = el('ul');
    let moved = 0;
    for (const [i, b] of vars) {
      const v = m.variables[i];
      const mark = moved < over ? ' \u2190 move' : '';
      if (moved < over) moved += b;
      list.append(el('li', { text: v.name + ' (' + bytes(b) + ' on this tile, ' + (v.alwaysLive ? 'always live' : 'not always live') + ')' + mark }));
    }
    return el('div', { class: 'oom', id: 'oom' },
      el('h3', { text: 'Out of memory: ' + fmt(mem.tilesOutOfMemory || 0) + ' tile(s) do not fit' }),
      el('div', { text: mem.outOfMemoryMessage || '' }),
      el('div', { text: 'Worst tile: ' + worst + ' needs ' + fmt(peak ? peak[worst] : 0) + ' bytes of ' + fmt(limit) +
        ' (' + fmt(Math.max(0, over)) + ' over). Move or split these variables off it:' }),
      list);
  }

  function viewSummary(models) {
    const root = el('div');
    if (models.length === 1) {
      const m = models[0];
      const t = el('table', { id: 'summary-table' });
      for (const [k, v] of summaryRows(m)) t.append(el('tr', {}, el('th', { text: k }), el('td', { class: 'num', text: fmt(v ?? '') })));
      add(root, el('h2', { text: 'Summary' }), oomPanel(m), t);
      return root;
    }
    const a = summaryRows(models[0]), b = summaryRows(models[1]);
    const bmap = new Map(b.map(([k, v]) => [k, v]));
    const t = el('table', { id: 'summary-table' }, el('tr', {}, el('th', { text: '' }), el('th', { text: 'A: ' + models[0].file }),
      el('th', { text: 'B: ' + models[1].file }), el('th', { class: 'num', text: 'B \u2212 A' })));
    const keys = a.map(([k]) => k).concat(b.map(([k]) => k).filter((k) => !a.some(([ka]) => ka === k)));
    const amap = new Map(a);
    for (const k of keys) {
      const va = amap.get(k), vb = bmap.get(k);
      const differs = String(va) !== String(vb);
      const delta = typeof va === 'number' && typeof vb === 'number' ? vb - va : '';
      t.append(el('tr', { class: differs ? 'diff' : '' }, el('th', { text: k }), el('td', { class: 'num', text: fmt(va ?? '') }),
        el('td', { class: 'num', text: fmt(vb ?? '') }), el('td', { class: 'num', text: delta === '' || delta === 0 ? '' : (delta > 0 ? '+' : '') + fmt(delta) })));
    }
    add(root, el('h2', { text: 'Comparison' }), oomPanel(models[0]), oomPanel(models[1]), t);
    return root;
  }

  // ---- memory map ---------------------------------------------------------------
  function colour(f) {
    f = Math.max(0, Math.min(1, f));
    if (f < 0.5) return 'hsl(' + (220 - 180 * f * 2) + ',' + (70 + 20 * f * 2) + '%,' + (92 - 37 * f * 2) + '%)';
    return 'hsl(' + (40 - 40 * (f - 0.5) * 2) + ',' + (90 - 10 * (f - 0.5) * 2) + '%,' + (55 - 10 * (f - 0.5) * 2) + '%)';
  }

  function heatmap(m, values, max, onClick, id, other) {
    const cols = Math.max(1, Math.ceil(Math.sqrt(m.numTiles * 2)));
    const grid = el('div', { class: 'heatmap', id, role: 'grid' });
    grid.style.gridTemplateColumns = 'repeat(' + cols + ', 9px)';
    const frag = document.createDocumentFragment();
    for (let t = 0; t < m.numTiles; ++t) {
      const v = values ? values[t] || 0 : 0;
      const cell = document.createElement('div');
      cell.className = 'tile';
      cell.dataset.tile = t;
      cell.style.background = colour(max ? v / max : 0);
      let title = 'tile ' + t + ': ' + fmt(v) + ' bytes';
      if (other && other[t] !== v) { cell.classList.add('changed'); cell.style.outline = '1px solid #c0392b'; title += ' (other: ' + fmt(other[t] || 0) + ')'; }
      cell.title = title;
      frag.append(cell);
    }
    grid.append(frag);
    grid.addEventListener('click', (e) => {
      const t = e.target.dataset && e.target.dataset.tile;
      if (t === undefined) return;
      grid.querySelectorAll('.tile.selected').forEach((c) => c.classList.remove('selected'));
      e.target.classList.add('selected');
      onClick(Number(t));
    });
    return grid;
  }

  function tileDetails(m, tile, target) {
    const cats = (m.tiles.byCategory) || {};
    const catTable = el('table');
    for (const [k, arr] of Object.entries(cats)) catTable.append(el('tr', {}, el('th', { text: k }), el('td', { class: 'num', text: fmt(arr[tile] || 0) })));
    const vars = tileVariables(m, tile);
    const always = vars.filter(([i]) => m.variables[i].alwaysLive);
    const notAlways = vars.filter(([i]) => !m.variables[i].alwaysLive);
    const varTable = (list, id) => {
      const t = el('table', { id });
      t.append(el('tr', {}, el('th', { text: 'variable' }), el('th', { class: 'num', text: 'bytes on tile' }), el('th', { text: 'type' }), el('th', { text: 'live steps' })));
      for (const [i, b] of list.slice(0, 200)) {
        const v = m.variables[i];
        t.append(el('tr', {}, el('td', { class: 'var-name', text: v.name }), el('td', { class: 'num', text: fmt(b) }),
          el('td', { text: v.type + ' [' + (v.shape || []).join(',') + ']' }),
          el('td', { text: v.alwaysLive ? 'always' : v.liveFrom !== undefined ? v.liveFrom + '\u2013' + v.liveTo : 'never' })));
      }
      if (list.length > 200) t.append(el('tr', {}, el('td', { class: 'muted', text: '\u2026 ' + (list.length - 200) + ' more' })));
      return t;
    };
    const vt = el('table', { id: 'tile-vertices' }, el('tr', {}, el('th', { text: 'vertex type' }), el('th', { class: 'num', text: 'instances' })));
    for (const [name, n] of tileVertices(m, tile)) vt.append(el('tr', {}, el('td', { text: name }), el('td', { class: 'num', text: fmt(n) })));
    const tl = m.tiles;
    target.replaceChildren(el('h3', { id: 'tile-title', text: 'Tile ' + tile }),
      el('div', { text: 'Peak ' + fmt(tl.peakBytes ? tl.peakBytes[tile] : 0) + ' bytes; always live ' + fmt(tl.alwaysLiveBytes ? tl.alwaysLiveBytes[tile] : 0) +
        '; not-always-live peak ' + fmt(tl.notAlwaysLivePeakBytes ? tl.notAlwaysLivePeakBytes[tile] : 0) +
        (tl.notAlwaysLivePeakStep && tl.notAlwaysLivePeakStep[tile] >= 0 ? ' at step ' + tl.notAlwaysLivePeakStep[tile] : '') }),
      el('h3', { text: 'By category' }), catTable,
      el('h3', { text: 'Always-live variables (' + always.length + ')' }), varTable(always, 'tile-always-live'),
      el('h3', { text: 'Not-always-live variables (' + notAlways.length + ')' }), varTable(notAlways, 'tile-not-always-live'),
      el('h3', { text: 'Vertices' }), vt);
  }

  let memoryScale = 'largest';
  function viewMemory(models) {
    const root = el('div');
    const columns = el('div', { class: 'columns' });
    const scale = el('select', { id: 'memory-scale', 'aria-label': 'colour scale' },
      el('option', { value: 'largest', text: 'colour: relative to the largest tile' }),
      el('option', { value: 'capacity', text: 'colour: relative to tile memory' }));
    scale.value = memoryScale;
    scale.addEventListener('change', () => { memoryScale = scale.value; root.replaceWith(viewMemory(models)); });
    root.append(el('div', { class: 'toolbar' }, scale), columns);
    let max = 0;
    for (const m of models) for (const v of m.tiles.peakBytes || []) max = Math.max(max, v);
    if (memoryScale === 'capacity') max = Math.max(...models.map((m) => m.r.target.bytesPerTile || 0), 1);
    models.forEach((m, k) => {
      const col = el('div', { class: 'column' });
      const details = el('div', { class: 'panel', id: 'tile-details' + (k ? '-b' : '') }, el('span', { class: 'muted', text: 'Click a tile to list its variables and vertices.' }));
      const other = models.length > 1 ? models[1 - k].tiles.peakBytes : null;
      col.append(el('h2', { text: 'Tile memory' + (models.length > 1 ? ' \u2014 ' + (k ? 'B: ' : 'A: ') + m.file : '') }),
        el('div', { class: 'legend' }, '0', el('span', { class: 'bar' }), fmt(max) + (memoryScale === 'capacity' ? ' bytes (tile memory)' : ' bytes (largest peak, gaps included)')),
        heatmap(m, m.tiles.peakBytes, max, (t) => tileDetails(m, t, details), 'heatmap' + (k ? '-b' : ''), other), details);
      columns.append(col);
    });
    return root;
  }

  // ---- liveness -----------------------------------------------------------------
  /** segmentsOf(i), when given, splits bar i into [[value, colour], ...] drawn stacked from the bottom. */
  function barChart(values, width, height, colourOf, onPick, id, segmentsOf) {
    const canvas = el('canvas', { id, width, height });
    const n = values.length;
    let lo = 0, hi = n;
    function draw() {
      const ctx = canvas.getContext('2d');
      ctx.clearRect(0, 0, width, height);
      let max = 1;
      for (let i = lo; i < hi; ++i) max = Math.max(max, values[i]);
      const span = Math.max(1, hi - lo);
      const w = width / span;
      // Many steps per pixel: draw the maximum of each pixel column.
      if (w < 1) {
        for (let x = 0; x < width; ++x) {
          const a = lo + Math.floor(x * span / width), b = Math.max(a + 1, lo + Math.floor((x + 1) * span / width));
          let v = 0, at = a;
          for (let i = a; i < b; ++i) if (values[i] > v) { v = values[i]; at = i; }
          ctx.fillStyle = colourOf(at);
          const h = v / max * (height - 4);
          ctx.fillRect(x, height - h, 1, h);
        }
      } else {
        for (let i = lo; i < hi; ++i) {
          const x = (i - lo) * w, bw = Math.max(1, w - (w > 3 ? 1 : 0));
          const segments = segmentsOf ? segmentsOf(i) : null;
          if (segments) {
            let y = height;
            for (const [v, c] of segments) {
              const h = v / max * (height - 4);
              ctx.fillStyle = c;
              ctx.fillRect(x, y - h, bw, h);
              y -= h;
            }
            continue;
          }
          ctx.fillStyle = colourOf(i);
          const h = values[i] / max * (height - 4);
          ctx.fillRect(x, height - h, bw, h);
        }
      }
    }
    canvas.addEventListener('click', (e) => {
      const rect = canvas.getBoundingClientRect();
      const i = lo + Math.floor((e.clientX - rect.left) / rect.width * (hi - lo));
      if (i >= lo && i < hi) onPick(i);
    });
    canvas.addEventListener('wheel', (e) => {
      e.preventDefault();
      const rect = canvas.getBoundingClientRect();
      const at = lo + (e.clientX - rect.left) / rect.width * (hi - lo);
      const span = Math.max(8, Math.min(n, Math.round((hi - lo) * (e.deltaY < 0 ? 0.7 : 1.4))));
      lo = Math.max(0, Math.min(n - span, Math.round(at - span * (at - lo) / Math.max(1, hi - lo))));
      hi = Math.min(n, lo + span);
      draw();
    }, { passive: false });
    canvas.zoom = (a, b) => { lo = Math.max(0, a); hi = Math.min(n, Math.max(lo + 1, b)); draw(); };
    draw();
    return canvas;
  }

  function viewLiveness(models) {
    const root = el('div', { class: 'columns' });
    models.forEach((m, k) => {
      const values = m.steps.map((s) => s.notAlwaysLiveBytes || 0);
      const out = el('div', { class: 'panel', id: 'live-details' + (k ? '-b' : '') }, el('span', { class: 'muted', text: 'Click a step to list the variables live there. Scroll to zoom.' }));
      const pick = (s) => {
        const live = [];
        m.variables.forEach((v) => { if (!v.alwaysLive && v.liveFrom !== undefined && v.liveFrom <= s && s <= v.liveTo) live.push(v); });
        live.sort((a, b) => b.bytes - a.bytes);
        const step = m.steps[s] || {};
        out.replaceChildren(el('h3', { id: 'live-step', text: 'Step ' + s + ': ' + (step.kind || '') + ' ' + (step.name || '') + ' \u2014 ' + fmt(step.notAlwaysLiveBytes || 0) + ' bytes live' }),
          table('live-variables' + (k ? '-b' : ''), [{ title: 'variable', get: (v) => v.name }, { title: 'bytes', get: (v) => v.bytes, num: true },
            { title: 'live from', get: (v) => v.liveFrom, num: true }, { title: 'live to', get: (v) => v.liveTo, num: true }], live, { sortCol: 1 }));
      };
      root.append(el('div', { class: 'column' }, el('h2', { text: 'Not-always-live bytes by program step' + (models.length > 1 ? ' \u2014 ' + m.file : '') }),
        el('div', { class: 'muted', text: fmt(m.steps.length) + ' steps; always-live bytes are not shown.' }),
        barChart(values, 900, 220, () => 'hsl(210,60%,50%)', pick, 'liveness-chart' + (k ? '-b' : '')), out));
    });
    return root;
  }

  // ---- execution trace ------------------------------------------------------------
  const KIND_COLOUR = { Execute: 'hsl(210,65%,50%)', Copy: 'hsl(35,85%,50%)', StreamToDevice: 'hsl(130,45%,40%)', DeviceToStream: 'hsl(130,45%,40%)', Sync: 'hsl(0,0%,55%)' };

  const SPLIT_COLOUR = { compute: 'hsl(210,65%,50%)', exchange: 'hsl(35,85%,55%)', sync: 'hsl(0,0%,70%)' };

  function stepSplit(m, s) {
    const step = m.steps[s] || {};
    const cs = step.computeSet !== undefined && m.r.computeSets ? m.r.computeSets[step.computeSet] : null;
    if (!cs) return null;
    const ex = (cs.exchangeInCycles || 0) + (cs.exchangeOutCycles || 0);
    return { compute: cs.computeCycles || 0, exchange: ex, sync: Math.max(0, (step.cycles || 0) - ex - (cs.computeCycles || 0)) };
  }

  function hostLane(m, width) {
    if (!m.host.length) return null;
    const events = [];
    for (const h of m.host) for (const e of h.events || []) events.push(e);
    if (!events.length) return null;
    let t0 = Infinity, t1 = -Infinity;
    for (const e of events) { t0 = Math.min(t0, e.begin); t1 = Math.max(t1, e.end); }
    const channels = [...new Set(events.map((e) => e.channel))];
    const rowH = 16, height = rowH * channels.length + 4;
    const canvas = el('canvas', { id: 'host-trace', width, height });
    const ctx = canvas.getContext('2d');
    ctx.font = '10px sans-serif';
    const scale = width / Math.max(1, t1 - t0);
    events.sort((a, b) => a.begin - b.begin);
    // Outer trace points first, so that the ones nested in them are drawn on top.
    events.slice().sort((a, b) => a.depth - b.depth).forEach((e, i) => {
      const row = channels.indexOf(e.channel);
      ctx.fillStyle = 'hsl(' + ((i * 47) % 360) + ',55%,60%)';
      const x = (e.begin - t0) * scale, w = Math.max(1, (e.end - e.begin) * scale);
      ctx.fillRect(x, 2 + row * rowH + e.depth * 2, w, rowH - 4 - e.depth * 2);
      if (w > 40) { ctx.fillStyle = '#000'; ctx.fillText(e.name.slice(0, Math.floor(w / 6)), x + 2, row * rowH + 12); }
    });
    const list = table('host-events', [{ title: 'event', get: (e) => e.name }, { title: 'channel', get: (e) => e.channel },
      { title: 'start (\u00b5s)', get: (e) => Math.round(e.begin - t0), num: true }, { title: 'duration (\u00b5s)', get: (e) => Math.round(e.end - e.begin), num: true }], events, { limit: 200 });
    return el('div', {}, el('h3', { text: 'Host timeline (' + fmt(events.length) + ' trace points; channels: ' + channels.join(', ') + ')' }), canvas, list);
  }

  // ---- debug information (docs/debug-info.md) -------------------------------------
  /** The DebugInfo records of the report by id, built on first use. */
  function debugById(m) {
    if (!m.debugIndex) {
      m.debugIndex = new Map();
      const list = m.r.debugContexts;
      if (isArr(list)) for (const d of list) if (d && Number.isInteger(d.id)) m.debugIndex.set(d.id, d);
    }
    return m.debugIndex;
  }

  /** The op an element was made under and its callers: layer, api, path and arguments. */
  function debugPanel(m, id, domId) {
    const box = el('div', { class: 'debug-info', id: domId });
    const index = debugById(m);
    if (!id || !index.has(id)) { box.append(el('div', { class: 'muted', text: 'No debug information for this element.' })); return box; }
    box.append(el('h4', { text: 'Debug information' }));
    const seen = new Set();
    for (let d = index.get(id); d && !seen.has(d.id); d = index.get(d.parent)) {
      seen.add(d.id);
      const v = d.values || {};
      const entry = el('div', { class: 'debug-context', 'data-debug-id': String(d.id) });
      entry.append(el('div', { class: 'debug-head', text: '[' + (d.layer || '?') + '] ' + (v.api !== undefined ? v.api : '(no api)') + (d.path ? '  \u2014 ' + d.path : '') + '  (id ' + d.id + ')' }));
      for (const key of ['args', 'outputs', 'output']) {
        if (v[key] === undefined) continue;
        entry.append(el('div', { class: 'muted', text: key }), el('pre', { class: 'debug-' + key, text: JSON.stringify(v[key], null, 1) }));
      }
      const rest = Object.keys(v).filter((k2) => !['api', 'args', 'outputs', 'output'].includes(k2));
      if (rest.length) entry.append(el('pre', { class: 'debug-values', text: JSON.stringify(Object.fromEntries(rest.map((k2) => [k2, v[k2]])), null, 1) }));
      box.append(entry);
    }
    return box;
  }

  function viewComputeSets(models) {
    const root = el('div', { class: 'columns' });
    models.forEach((m, k) => {
      const out = el('div', { class: 'panel', id: 'cs-details' + (k ? '-b' : '') }, el('span', { class: 'muted', text: 'Click a compute set for the op that made it and its arguments.' }));
      const rows = (m.r.computeSets || []).map((c, i) => Object.assign({ index: i }, c));
      const pick = (c) => out.replaceChildren(el('h3', { text: 'Compute set ' + c.index + ' ' + (c.name || '') }),
        el('div', { text: fmt(c.vertices || 0) + ' vertices on ' + fmt(c.tiles || 0) + ' tiles, ' + fmt(c.computeCycles || 0) + ' compute cycles' }),
        debugPanel(m, c.debugId, 'cs-debug' + (k ? '-b' : '')));
      root.append(el('div', { class: 'column' }, el('h2', { text: 'Compute sets' + (models.length > 1 ? ' \u2014 ' + m.file : '') }), out,
        table('cs-table' + (k ? '-b' : ''), [{ title: 'name', get: (c) => c.name || '' }, { title: 'index', get: (c) => c.index, num: true },
          { title: 'vertices', get: (c) => c.vertices || 0, num: true }, { title: 'tiles', get: (c) => c.tiles || 0, num: true },
          { title: 'compute cycles', get: (c) => c.computeCycles || 0, num: true }], rows, { sortCol: 4, onRow: pick })));
    });
    return root;
  }

  function viewTrace(models) {
    const root = el('div', { class: 'columns' });
    models.forEach((m, k) => {
      const col = el('div', { class: 'column' });
      root.append(col);
      const x = m.execution;
      col.append(el('h2', { text: 'Execution trace' + (models.length > 1 ? ' \u2014 ' + m.file : '') }));
      const host = hostLane(m, 900);
      if (!x) { add(col, el('p', { class: 'muted', text: 'No execution profile in this report (nothing ran, or autoReport.outputExecutionProfile was off).' }), host); return; }
      const trace = x.trace || [];
      const byStep = new Map((x.steps || []).map((s) => [s.step, s]));
      col.append(el('div', { id: 'trace-count' + (k ? '-b' : ''), text: fmt(trace.length) + ' steps executed in ' + fmt(x.runs || 0) + ' run(s), ' + fmt(x.totalCycles || 0) + ' cycles' +
        (x.traceDropped ? ' (' + fmt(x.traceDropped) + ' more not recorded)' : '') }));
      const legend = el('div', { class: 'legend' });
      for (const [kind, c] of Object.entries(Object.assign({}, KIND_COLOUR, { 'Execute: compute': SPLIT_COLOUR.compute, 'exchange': SPLIT_COLOUR.exchange, 'sync': SPLIT_COLOUR.sync }))) {
        if (kind === 'Execute') continue;
        const sw = el('span', { class: 'swatch' }); sw.style.background = c; legend.append(sw, kind);
      }
      const cycles = trace.map((e) => e[3]);
      const out = el('div', { class: 'panel', id: 'step-details' + (k ? '-b' : '') }, el('span', { class: 'muted', text: 'Click a step for its compute/exchange/sync split and its cycles per tile. Scroll to zoom.' }));
      const pick = (i) => {
        const [s, run, start, c] = trace[i];
        const step = m.steps[s] || {}, ex = byStep.get(s) || {};
        const split = stepSplit(m, s);
        const parts = [el('h3', { text: 'Step ' + s + ' (' + (step.kind || ex.kind || '') + ' ' + (step.name || ex.name || '') + '), run ' + run + ', start ' + fmt(start) + ', ' + fmt(c) + ' cycles' })];
        if (split) parts.push(el('div', { text: 'compute ' + fmt(split.compute) + ' \u00b7 exchange ' + fmt(split.exchange) + ' \u00b7 sync ' + fmt(split.sync) }));
        const perTile = ex.tileComputeCycles || ex.tileExchangeCycles;
        if (perTile && ex.tiles) {
          const values = new Array(m.numTiles).fill(0);
          ex.tiles.forEach((t, j) => { if (t < m.numTiles) values[t] = perTile[j]; });
          let max = 0; for (const v of values) max = Math.max(max, v);
          // A step with counted vertices: the cycles its code counted, per execution (docs/cost-model.md).
          const how = ex.tileComputeCyclesCounted ? ', counted from the vertices\' code' + (ex.executions > 1 ? ', mean of ' + fmt(ex.executions) + ' executions' : '') : '';
          parts.push(el('div', { text: (ex.tileComputeCycles ? 'Compute' : 'Exchange') + ' cycles per tile (' + ex.tiles.length + ' tiles, max ' + fmt(max) + how + '):' }),
            heatmap(m, values, max, () => {}, 'step-tiles' + (k ? '-b' : '')));
        }
        const cs = step.computeSet !== undefined && m.r.computeSets ? m.r.computeSets[step.computeSet] : null;
        parts.push(debugPanel(m, step.debugId || (cs && cs.debugId), 'step-debug' + (k ? '-b' : '')));
        out.replaceChildren(...parts);
      };
      const segmentsOf = (i) => {
        const split = stepSplit(m, trace[i][0]);
        if (!split) return null;
        const scale = trace[i][3] / Math.max(1, split.compute + split.exchange + split.sync);
        return [[split.compute * scale, SPLIT_COLOUR.compute], [split.exchange * scale, SPLIT_COLOUR.exchange], [split.sync * scale, SPLIT_COLOUR.sync]];
      };
      const chart = barChart(cycles, 900, 200, (i) => KIND_COLOUR[(m.steps[trace[i][0]] || {}).kind] || 'hsl(270,40%,60%)', pick,
        'trace-chart' + (k ? '-b' : ''), segmentsOf);
      const zoomAll = el('button', { text: 'Zoom out', onclick: () => chart.zoom(0, cycles.length) });
      const cyc = x.cycles || {};
      const split = el('div', { text: 'Cycles: ' + Object.entries(cyc).map(([kk, v]) => kk + ' ' + fmt(v) + ' (' + (x.totalCycles ? (100 * v / x.totalCycles).toFixed(1) : 0) + '%)').join(' \u00b7 ') });
      add(col, split, el('div', { class: 'toolbar' }, legend, zoomAll), chart, out, host);
      const rows = (x.steps || []);
      col.append(el('h3', { text: 'Executed steps' }), table('exec-steps' + (k ? '-b' : ''), [{ title: 'name', get: (s) => s.name || s.kind }, { title: 'kind', get: (s) => s.kind },
        { title: 'step', get: (s) => s.step, num: true }, { title: 'executions', get: (s) => s.executions, num: true }, { title: 'cycles', get: (s) => s.cycles, num: true }], rows, { sortCol: 4 }));
    });
    return root;
  }

  // ---- program tree ---------------------------------------------------------------
  function programTree(m) {
    const steps = m.steps, exec = new Map(((m.execution || {}).steps || []).map((s) => [s.step, s]));
    const cyclesOf = (s) => exec.size ? ((exec.get(s) || {}).cycles || 0) : (steps[s].cycles || 0);
    const programs = (m.r.programs || []).map((p, i) => ({ name: 'Program ' + i, entry: p.entry }));
    const roots = [];
    for (const p of programs) {
      const root = { name: p.name, children: [], cycles: 0, steps: 0 };
      const stack = [root];
      for (let s = p.entry; s < steps.length; ++s) {
        const st = steps[s];
        if (st.kind === 'End') break;
        const top = stack[stack.length - 1];
        if (st.kind === 'BlockBegin') { const n = { name: st.name || 'block', children: [], cycles: 0, steps: 0 }; top.children.push(n); stack.push(n); continue; }
        if (st.kind === 'BlockEnd') { if (stack.length > 1) stack.pop(); continue; }
        const c = cyclesOf(s);
        top.children.push({ name: st.kind + (st.name ? ' ' + st.name : ''), step: s, cycles: c });
        for (const n of stack) { n.cycles += c; n.steps += 1; }
      }
      roots.push(root);
    }
    return roots;
  }

  function renderNode(n, onPick) {
    if (!n.children) {
      const leaf = el('div', { class: 'leaf', 'data-step': String(n.step), text: n.name + ' \u2014 ' + fmt(n.cycles) + ' cycles (step ' + n.step + ')' });
      if (onPick) { leaf.style.cursor = 'pointer'; leaf.addEventListener('click', () => onPick(n)); }
      return leaf;
    }
    const d = el('details', {}, el('summary', { text: n.name + ' \u2014 ' + fmt(n.cycles) + ' cycles, ' + fmt(n.steps) + ' steps' }));
    let filled = false;
    d.addEventListener('toggle', () => {
      if (filled || !d.open) return;
      filled = true;
      const kids = n.children.slice(0, 1000).map((c) => renderNode(c, onPick));
      d.append(...kids);
      if (n.children.length > 1000) d.append(el('div', { class: 'leaf muted', text: '\u2026 ' + (n.children.length - 1000) + ' more' }));
    });
    return d;
  }

  function viewPrograms(models) {
    const root = el('div', { class: 'columns' });
    models.forEach((m, k) => {
      const basis = m.execution ? 'executed cycles' : 'estimated cycles per execution';
      const out = el('div', { class: 'panel', id: 'program-details' + (k ? '-b' : '') }, el('span', { class: 'muted', text: 'Click a step for the op that made it and its arguments.' }));
      const pick = (n) => {
        const step = m.steps[n.step] || {};
        const cs = step.computeSet !== undefined && m.r.computeSets ? m.r.computeSets[step.computeSet] : null;
        out.replaceChildren(el('h3', { text: 'Step ' + n.step + ' (' + (step.kind || '') + ' ' + (step.name || '') + ')' }),
          debugPanel(m, step.debugId || (cs && cs.debugId), 'program-debug' + (k ? '-b' : '')));
      };
      root.append(el('div', { class: 'column tree', id: 'program-tree' }, el('h2', { text: 'Programs (' + basis + ')' }), out, ...programTree(m).map((n) => renderNode(n, pick))));
    });
    return root;
  }

  // ---- vertex types and variables ---------------------------------------------------
  function viewVertices(models) {
    const root = el('div', { class: 'columns' });
    models.forEach((m, k) => {
      const exec = new Map(((m.execution || {}).vertexTypes || []).map((v) => [v.name, v]));
      const rows = (m.r.vertexTypes || []).map((v) => ({ name: v.name, instances: v.instances || 0, cycles: v.cyclesPerExecution || 0,
        tiles: (v.tiles || []).length / 2, executed: (exec.get(v.name) || {}).instancesExecuted || 0, executedCycles: (exec.get(v.name) || {}).cycles || 0,
        priced: pricedFrom(exec.get(v.name) || {}) }));
      root.append(el('div', { class: 'column' }, el('h2', { text: 'Vertex types' + (models.length > 1 ? ' \u2014 ' + m.file : '') }),
        table('vertex-table' + (k ? '-b' : ''), [{ title: 'name', get: (r) => r.name }, { title: 'instances', get: (r) => r.instances, num: true },
          { title: 'tiles', get: (r) => r.tiles, num: true }, { title: 'cycles per execution', get: (r) => r.cycles, num: true },
          { title: 'executed', get: (r) => r.executed, num: true }, { title: 'executed cycles', get: (r) => r.executedCycles, num: true },
          { title: 'cycles from', get: (r) => r.priced }], rows, { sortCol: 3 })));
    });
    return root;
  }

  // How a vertex type's executed cycles were priced (docs/cost-model.md, "Cycles from the code"):
  // counted from the code its vertices ran, an estimate, or the default because its code could not count.
  function pricedFrom(e) {
    const counted = e.instancesCounted || 0, notCounted = e.instancesNotCounted || 0, all = e.instancesExecuted || 0;
    const parts = [];
    if (counted) parts.push(counted === all ? 'counted' : counted + ' counted');
    if (notCounted) parts.push(notCounted + ' NOT counted (default)');
    if (all > counted + notCounted) parts.push(counted || notCounted ? (all - counted - notCounted) + ' estimated' : 'estimate');
    return parts.join(', ');
  }

  function viewVariables(models) {
    const root = el('div', { class: 'columns' });
    models.forEach((m, k) => {
      root.append(el('div', { class: 'column' }, el('h2', { text: 'Variables' + (models.length > 1 ? ' \u2014 ' + m.file : '') }),
        table('variable-table' + (k ? '-b' : ''), [{ title: 'name', get: (v) => v.name }, { title: 'type', get: (v) => v.type + ' [' + (v.shape || []).join(',') + ']' },
          { title: 'bytes', get: (v) => v.bytes || 0, num: true }, { title: 'tiles', get: (v) => (v.tiles || []).length / 2, num: true },
          { title: 'liveness', get: (v) => (v.constant ? 'constant, ' : '') + (v.alwaysLive ? 'always live' : v.liveFrom !== undefined ? 'steps ' + v.liveFrom + '\u2013' + v.liveTo : 'never live') },
          { title: 'tier', get: (v) => v.tier === 'streamingMemory' ? 'Streaming Memory' : 'tile memory' }],
        m.variables, { sortCol: 2 })));
    });
    return root;
  }

  /** Streaming Memory (docs/streaming-memory.md): what it holds, and the staging timeline: every
   *  step that moves bytes to or from it, in program order, with the compute step a load hides behind. */
  function viewStreaming(models) {
    const root = el('div', { class: 'columns' });
    models.forEach((m, k) => {
      const sm = m.r.streamingMemory || {};
      const col = el('div', { class: 'column' }, el('h2', { text: 'Streaming Memory' + (models.length > 1 ? ' \u2014 ' + m.file : '') }));
      const offloaded = isArr(sm.offloadedVariables) ? sm.offloadedVariables : [];
      const buffers = isArr(sm.remoteBuffers) ? sm.remoteBuffers : [];
      col.append(el('p', { text: (sm.bytes || 0) + ' bytes held of ' + (sm.capacityBytes || 0) + '; ' + offloaded.length +
        ' variables offloaded by aspen.streamingMemory=auto; ' + (sm.stagedBytes || 0) + ' bytes staged per pass, ' +
        (sm.hiddenCycles || 0) + ' of ' + (sm.transferCycles || 0) + ' transfer cycles hidden behind compute.' }));
      col.append(el('h3', { text: 'Offloaded variables (arena order = first use)' }),
        table('streaming-variables' + (k ? '-b' : ''), [{ title: 'name', get: (v) => v.name }, { title: 'offset', get: (v) => v.offset, num: true },
          { title: 'bytes', get: (v) => v.bytes, num: true }, { title: 'first step', get: (v) => v.firstStep, num: true },
          { title: 'loads', get: (v) => v.loads, num: true }, { title: 'stores', get: (v) => v.stores, num: true }], offloaded, { sortCol: -1 }));
      col.append(el('h3', { text: 'Remote buffers' }),
        table('streaming-buffers' + (k ? '-b' : ''), [{ title: 'name', get: (b) => b.name }, { title: 'bytes', get: (b) => b.bytes, num: true }], buffers, { sortCol: 1 }));
      const timeline = [];
      m.steps.forEach((s, i) => {
        if (s.streamingBytes)
          timeline.push({ step: i, name: s.name || s.kind, kind: s.kind, bytes: s.streamingBytes, cycles: s.cycles || 0,
                          hidden: s.hiddenCycles || 0, beside: s.overlapsStep !== undefined ? s.overlapsStep + ' ' + ((m.steps[s.overlapsStep] || {}).name || '') : '' });
      });
      col.append(el('h3', { text: 'Staging timeline' }),
        table('streaming-timeline' + (k ? '-b' : ''), [{ title: 'step', get: (t) => t.step, num: true }, { title: 'name', get: (t) => t.name },
          { title: 'kind', get: (t) => t.kind }, { title: 'bytes', get: (t) => t.bytes, num: true }, { title: 'cycles', get: (t) => t.cycles, num: true },
          { title: 'hidden', get: (t) => t.hidden, num: true }, { title: 'beside compute step', get: (t) => t.beside }], timeline, { sortCol: -1 }));
      root.append(col);
    });
    return root;
  }

  // ---- the page ----------------------------------------------------------------
  function main() {
    let data;
    try {
      data = JSON.parse($('#aspen-reports').textContent);
    } catch (e) {
      showError('The embedded report data cannot be read', String(e.message || e));
      $('#view').replaceChildren();
      return;
    }
    if (data.error) { showError('Cannot show this report', data.error); $('#view').replaceChildren(); return; }
    const models = [];
    for (const entry of data.reports || []) {
      try {
        models.push(loadReport(entry));
      } catch (e) {
        showError('Cannot show the report ' + (entry.file || ''), e instanceof ReportError ? e.message : 'unexpected content: ' + e.message);
      }
    }
    if (!models.length || models.length !== (data.reports || []).length) { $('#view').replaceChildren(); return; }
    $('#subtitle').textContent = models.map((m) => m.file).join('  vs  ');
    const views = [['Summary', viewSummary], ['Memory', viewMemory], ['Liveness', viewLiveness], ['Execution trace', viewTrace],
      ['Programs', viewPrograms], ['Compute sets', viewComputeSets], ['Vertex types', viewVertices], ['Variables', viewVariables],
      ['Streaming Memory', viewStreaming]];
    const nav = $('#tabs');
    const show = (i) => {
      nav.querySelectorAll('button').forEach((b, j) => b.classList.toggle('active', i === j));
      try {
        $('#view').replaceChildren(views[i][1](models));
      } catch (e) {
        $('#view').replaceChildren();
        showError('Cannot draw the ' + views[i][0] + ' view', (e instanceof ReportError ? '' : 'the report has unexpected content: ') + e.message);
      }
    };
    views.forEach(([name], i) => nav.append(el('button', { text: name, 'data-view': name, onclick: () => show(i) })));
    show(0);
    document.body.dataset.ready = 'true';
  }

  try {
    main();
  } catch (e) {
    showError('The page failed', String(e && e.message || e));
  }
})();
