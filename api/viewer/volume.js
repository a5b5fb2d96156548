/*
 * navd viewer, flight volumes in the 3-D view: the stored volumes (GET
 * /v1/volumes), the selected one's blocked space (?format=bricks, meshed by
 * volmesh.js and sliced by height with the floor sliders), a path tool
 * (POST …/path, the expanded nodes as translucent boxes with "expanded")
 * and flying agents (POST …/step every frame, drawn sliding between steps).
 *
 * A click in 3-D picks a point on the free side of the blocked surface under
 * the cursor (half a voxel out of the face it hits), or on a horizontal
 * plane whose height has its own slider; the service snaps either to free
 * space within its default extents.
 *
 * The host (viewer.js) hands in what this file may use:
 *   navdVolume.install({api, ApiError, app, showError, showInfo, setMode, deleteButton,
 *     view3d (getter), redraw, meshMeta (getter), sim (the agents' time
 *     multiplier and pause, shared)})
 * and gets back {load, select, close, active, click, hover, overlay, tick,
 * animating, slice, sliceBounds, state}.
 *
 * For tests #app carries data-volume, data-volume-ready, data-vol-voxels
 * (blocked voxels drawn), data-vol-bricks, data-vol-quads, data-vol-faces
 * (voxel faces the quads cover), data-vol-build-ms, data-vol-pick,
 * data-vol-path-corners, data-vol-path-status, data-vol-path-length,
 * data-vol-path-nodes, data-vol-path-runs, data-vol-expanded (boxes drawn,
 * empty when off), data-vol-fliers, data-vol-steps, data-vol-fliers-errors.
 */
(function () {
  'use strict';

  const $ = (id) => document.getElementById(id);
  const M = () => window.navdVolMesh;
  const MAX_STEP_DT = 0.1;
  const COLORS = ['#7bdff2', '#ffd166', '#06d6a0', '#ef476f', '#f4a261', '#c77dff', '#90be6d', '#ff8fab'];
  const fmt = (n, d) => (typeof n === 'number' && isFinite(n) ? n.toFixed(d === undefined ? 2 : d) : '–');
  const fmtPt = (p) => (Array.isArray(p) ? '(' + p.map((v) => fmt(v, 2)).join(', ') + ')' : '–');
  const rgb = (c, a) => [...[1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16) / 255), a];

  function install(host) {
    const { api, ApiError, app } = host;
    const volUrl = (name, suffix) => `/v1/volumes/${encodeURIComponent(name)}${suffix || ''}`;
    const V = {
      list: [], name: null, meta: null, grid: null, geom: null, seq: 0, listSig: '',
      tool: 'path', pick: 'surface', clickMode: 'target',
      path: { start: null, end: null, result: null, ms: 0, runs: 0, seq: 0 },
      fliers: [], target: null, nextId: 1,
      sim: { inflight: false, lastSent: 0, steps: 0, ms: 0, interval: 0, lastAnswer: 0 },
      sliceWant: null,
    };

    function setKv(id, rows) {
      const dl = $(id);
      dl.replaceChildren();
      for (const [k, v, cls] of rows) {
        const dt = document.createElement('dt');
        dt.textContent = k;
        const dd = document.createElement('dd');
        dd.textContent = v;
        if (cls) dd.className = cls;
        dl.append(dt, dd);
      }
    }

    /* ------------------------------------------------------------ list */

    async function load(select) {
      try {
        const { data } = await api('GET', '/v1/volumes');
        V.list = (data && data.volumes) || [];
      } catch (e) {
        /* a navd without volumes answers 404: the section says so once */
        if (e.status === 404) { V.list = []; renderList('this navd has no flight volumes'); return; }
        host.showError(e, 'listing flight volumes');
        return;
      }
      const sig = JSON.stringify(V.list.map((v) => [v.name, v.version]));
      if (sig !== V.listSig || select) { V.listSig = sig; renderList(); }
      app.dataset.volumes = String(V.list.length);
      if (select) return selectVolume(select);
      if (V.name) {
        const cur = V.list.find((v) => v.name === V.name);
        if (!cur) close();
        else if (V.meta && cur.version !== V.meta.version) return selectVolume(V.name); /* replaced elsewhere */
      }
    }

    function renderList(empty) {
      const ul = $('volume-list');
      ul.replaceChildren();
      if (!V.list.length) {
        const li = document.createElement('li');
        li.className = 'empty';
        li.textContent = empty || 'No flight volume yet: bake one from a level below.';
        ul.append(li);
      }
      for (const v of V.list) {
        const li = document.createElement('li');
        li.dataset.name = v.name;
        if (v.name === V.name) li.className = 'selected';
        const grow = document.createElement('div');
        grow.className = 'grow';
        const name = document.createElement('div');
        name.className = 'name';
        name.textContent = v.name;
        const meta = document.createElement('div');
        meta.className = 'meta';
        const total = v.free_voxels + v.blocked_voxels;
        meta.textContent = `v${v.version} · ${(v.dims || []).join('×')} × ${fmt(v.voxel_size, 2)} m · ` +
          `${fmt((100 * v.blocked_voxels) / Math.max(total, 1), 0)} % blocked`;
        grow.append(name, meta);
        li.append(grow, host.deleteButton(`Delete flight volume ${v.name}`, () => deleteVolume(v.name)));
        li.addEventListener('click', () => (v.name === V.name ? close() : selectVolume(v.name)));
        ul.append(li);
      }
    }

    async function deleteVolume(name) {
      try {
        await api('DELETE', volUrl(name));
        host.showInfo(`Deleted flight volume ${name}`);
        if (V.name === name) close();
        await load();
      } catch (e) {
        host.showError(e, `deleting flight volume ${name}`);
      }
    }

    /* ------------------------------------------------- select and draw */

    async function selectVolume(name) {
      const seq = ++V.seq;
      app.dataset.volumeReady = '0';
      try {
        const t0 = performance.now();
        const [meta, bricks] = await Promise.all([api('GET', volUrl(name)), api('GET', volUrl(name, '?format=bricks'))]);
        if (seq !== V.seq) return;
        const t1 = performance.now();
        const replaced = V.name === name;
        V.name = name;
        V.meta = meta.data;
        /* quads are sent as 16-bit voxel coordinates */
        if (bricks.data.dims.some((d) => d > 65535))
          throw new ApiError('too_large', `the volume has ${bricks.data.dims.join(' × ')} voxels: the viewer draws at most 65,535 along an axis`, 0);
        V.grid = M().decode(bricks.data);
        V.fetchMs = t1 - t0;
        if (!replaced) resetTools();
      } catch (e) {
        if (seq !== V.seq) return;
        host.showError(e, `loading flight volume ${name}`);
        return;
      }
      app.dataset.volume = name;
      renderList();
      $('volume-pane').hidden = false;
      /* the navmesh is drawn with the volume when both come from one level */
      const mm = host.meshMeta();
      $('vol-show-mesh').checked = !!(mm && mm.source && V.meta.source && mm.source.level === V.meta.source.level);
      host.setMode('3d');
      const v3 = host.view3d();
      if (!v3) return;
      rebuild(0, V.grid.dims[1] - 1);
      v3.reset();
      setPlaneFromSlider();
      host.applySlice();
      renderInfo();
      renderPathOut();
      renderFliersOut();
      host.renderLegend();
      app.dataset.volumeReady = '1';
      host.redraw();
    }

    /* Meshes voxel rows y0..y1 and hands the quads to the 3-D view. */
    function rebuild(y0, y1) {
      const g = V.grid, v3 = host.view3d();
      const geom = M().build(g, y0, y1);
      const b = {
        minX: g.origin[0], minY: g.origin[1], minZ: g.origin[2],
        maxX: g.origin[0] + g.dims[0] * g.vs, maxY: g.origin[1] + g.dims[1] * g.vs, maxZ: g.origin[2] + g.dims[2] * g.vs,
      };
      V.geom = Object.assign(geom, { origin: g.origin, vs: g.vs, bounds: b });
      if (v3) {
        v3.setVolume($('vol-show').checked ? V.geom : Object.assign({}, V.geom, { dirs: [] }));
        v3.showMesh = $('vol-show-mesh').checked;
      }
      app.dataset.volVoxels = String(geom.voxels);
      app.dataset.volBricks = String(geom.bricks);
      app.dataset.volQuads = String(geom.quads);
      app.dataset.volFaces = String(geom.faces);
      app.dataset.volBuildMs = geom.ms.toFixed(1);
      renderInfo();
    }

    function close() {
      V.seq++;
      V.name = null;
      V.meta = null;
      V.grid = null;
      V.geom = null;
      resetTools();
      const v3 = host.view3d();
      if (v3) { v3.setVolume(null); v3.setBoxes(null); v3.setPlane(null); v3.showMesh = true; v3.reset(); }
      $('volume-pane').hidden = true;
      app.dataset.volume = '';
      app.dataset.volumeReady = '0';
      renderList();
      host.applySlice();
      host.renderLegend();
      host.redraw();
    }

    function resetTools() {
      V.path = { start: null, end: null, result: null, ms: 0, runs: V.path.runs, seq: V.path.seq + 1 };
      V.fliers = [];
      V.target = null;
      V.sim.steps = 0;
      const v3 = host.view3d();
      if (v3) v3.setBoxes(null);
      renderPathOut();
      renderFliersOut();
    }

    function renderInfo() {
      const m = V.meta;
      if (!m) return;
      const g = V.geom, b = m.bounds || [[0, 0, 0], [0, 0, 0]];
      const rows = [
        ['name', `${m.name} v${m.version}`],
        ['voxels', `${(m.dims || []).join(' × ')} of ${fmt(m.voxel_size, 3)} m · radius ${fmt(m.radius, 2)} m`],
        ['blocked', `${m.blocked_voxels} voxels · free ${m.free_voxels}`],
        ['components', String(m.components)],
        ['bounds', `${fmtPt(b[0])} … ${fmtPt(b[1])}`],
      ];
      if (g) rows.push(['drawn', `${g.voxels} voxels in ${g.bricks} bricks · ${g.quads} quads for ${g.faces} faces · ${fmt(g.ms, 0)} ms`]);
      if (m.source) rows.push(['baked from', `level ${m.source.level} v${m.source.level_version}`]);
      setKv('volume-info', rows);
    }

    /* Floors slice: the volume's height range while one is shown. */
    function sliceBounds() {
      const g = V.grid;
      return g ? { minY: g.origin[1], maxY: g.origin[1] + g.dims[1] * g.vs } : null;
    }

    /* Keeps the voxel rows whose centres lie in [lo, hi]; meshed on the next
       frame (the last range asked for wins, so a dragged slider meshes once
       per frame at most). */
    function slice(lo, hi) {
      const g = V.grid;
      if (!g) return;
      const y0 = Math.max(0, Math.ceil((lo - g.origin[1]) / g.vs - 0.5));
      const y1 = Math.min(g.dims[1] - 1, Math.floor((hi - g.origin[1]) / g.vs - 0.5));
      const scheduled = !!V.sliceWant;
      V.sliceWant = [y0, y1];
      if (scheduled) return;
      requestAnimationFrame(() => {
        const want = V.sliceWant;
        V.sliceWant = null;
        if (!V.grid || (want[0] === V.grid.y0 && want[1] === V.grid.y1 && V.geom)) return;
        rebuild(want[0], want[1]);
        host.redraw();
      });
    }

    function setPlaneFromSlider() {
      const v3 = host.view3d();
      if (!V.geom) return;
      const b = V.geom.bounds, y = b.minY + ((b.maxY - b.minY) * Number($('vol-plane').value)) / 1000;
      V.planeY = y;
      $('vol-plane-text').textContent = `y ${fmt(y, 1)} m`;
      if (v3) v3.setPlane(V.pick === 'plane' ? y : null);
      host.redraw();
    }

    /* ------------------------------------------------------------ picking */

    /* The point a click at CSS pixel (px, py) gives: on the free side of
       the blocked surface under it (surface mode, falling back to the plane
       when the ray hits nothing), or on the plane. */
    function pickAt(px, py) {
      const v3 = host.view3d();
      if (!v3 || !V.grid) return null;
      const { eye, dir } = v3.ray(px, py);
      if (V.pick === 'surface' && $('vol-show').checked) {
        const h = M().raycast(V.grid, eye, dir);
        if (h) {
          const off = 0.5 * V.grid.vs;
          return { p: h.point.map((x, k) => x + h.normal[k] * off), on: 'surface', voxel: h.voxel };
        }
      }
      if (Math.abs(dir[1]) < 1e-9) return null;
      const t = (V.planeY - eye[1]) / dir[1];
      if (!(t > 0)) return null;
      const p = [eye[0] + t * dir[0], V.planeY, eye[2] + t * dir[2]], b = V.geom.bounds;
      if (p[0] < b.minX || p[0] > b.maxX || p[2] < b.minZ || p[2] > b.maxZ) return null;
      return { p, on: 'plane' };
    }

    function click(px, py) {
      const hit = pickAt(px, py);
      app.dataset.volPick = hit ? hit.p.map((v) => v.toFixed(3)).join(',') : '';
      if (!hit) { host.showInfo('Nothing under the cursor: aim at the blocked space, or pick on the plane.'); return; }
      const pt = hit.p;
      if (V.tool === 'path') {
        const P = V.path;
        if (!P.start || P.end) {
          P.start = pt; P.end = null; P.result = null; P.seq++;
          const v3 = host.view3d();
          if (v3) v3.setBoxes(null);
          renderPathOut();
        } else {
          P.end = pt;
          runPath();
        }
      } else if (V.clickMode === 'add') addFlier(pt);
      else setTarget(pt);
      host.redraw();
    }

    function hover(px, py) {
      const hit = pickAt(px, py);
      return hit ? `x ${fmt(hit.p[0])}  y ${fmt(hit.p[1])}  z ${fmt(hit.p[2])}  · ${hit.on === 'surface' ? `free side of voxel ${hit.voxel.join(', ')}` : 'on the plane'}`
        : 'nothing under the cursor';
    }

    /* --------------------------------------------------------------- path */

    async function runPath() {
      const P = V.path, name = V.name;
      if (!P.start || !P.end || !name) return;
      const seq = ++P.seq;
      const body = { start: P.start, end: P.end };
      if ($('vol-expanded').checked) body.debug = true;
      /* empty fields are left out: the service's defaults (weight 1, its --max-nodes) */
      const w = $('vol-weight').value.trim(), mn = $('vol-max-nodes').value.trim();
      if (w !== '') body.heuristic_weight = Number(w);
      if (mn !== '') body.max_nodes = Number(mn);
      try {
        const { data, ms } = await api('POST', volUrl(name, '/path'), body);
        if (seq !== P.seq || name !== V.name) return;
        P.result = data;
        P.ms = ms;
        P.runs++;
      } catch (e) {
        if (seq !== P.seq) return;
        /* an end the service refuses (blocked, outside) is dropped: the next click sets it again */
        P.end = null;
        P.result = null;
        host.showError(e, 'volume path');
      }
      const v3 = host.view3d();
      if (v3) v3.setBoxes(P.result && $('vol-expanded').checked ? P.result.expanded : null);
      renderPathOut();
      host.redraw();
    }

    function renderPathOut() {
      const P = V.path, r = P.result, rows = [];
      if (!r) {
        rows.push(['start', P.start ? fmtPt(P.start) : 'click in the 3-D view']);
        if (P.start) rows.push(['end', 'click in the 3-D view']);
      } else {
        rows.push(['status', r.status, r.status === 'complete' ? 'good' : 'warn']);
        rows.push(['length', `${fmt(r.length, 3)} m`]);
        rows.push(['straight line', `${fmt(r.straight_line, 3)} m (× ${fmt(r.length / Math.max(r.straight_line, 1e-9), 3)})`]);
        rows.push(['corners', String((r.corners || []).length)]);
        rows.push(['nodes expanded', String(r.nodes_expanded)]);
        rows.push(['expanded boxes', Array.isArray(r.expanded) ? String(r.expanded.length) : 'tick "expanded"']);
        rows.push(['latency', `${fmt(P.ms, 1)} ms (round trip)`]);
        rows.push(['start', fmtPt(r.start)]);
        rows.push(['end', fmtPt(r.end)]);
      }
      setKv('vol-path-out', rows);
      app.dataset.volPathCorners = r && Array.isArray(r.corners) ? String(r.corners.length) : '0';
      app.dataset.volPathStatus = r ? r.status : '';
      app.dataset.volPathLength = r ? String(r.length) : '';
      app.dataset.volPathNodes = r ? String(r.nodes_expanded) : '';
      app.dataset.volPathRuns = String(P.runs);
      const v3 = host.view3d();
      app.dataset.volExpanded = r && Array.isArray(r.expanded) && $('vol-expanded').checked && v3 ? String(v3.nboxes) : '';
    }

    /* ------------------------------------------------------------- fliers */

    /* A random free voxel's centre (of the whole volume, not the slice). */
    function randomFree() {
      const g = V.grid;
      for (let tries = 0; tries < 2000; tries++) {
        const c = [0, 1, 2].map((k) => Math.floor(Math.random() * g.dims[k]));
        const b = ((c[2] >> 2) * g.bd[1] + (c[1] >> 2)) * g.bd[0] + (c[0] >> 2);
        const bit = (c[0] & 3) + 4 * (c[1] & 3) + 16 * (c[2] & 3);
        const blocked = ((bit < 32 ? g.raw.lo[b] >>> bit : g.raw.hi[b] >>> (bit - 32)) & 1) === 1;
        if (!blocked) return c.map((x, k) => g.origin[k] + (x + 0.5) * g.vs);
      }
      return null;
    }

    function addFlier(pos) {
      const id = V.nextId++;
      const f = {
        id: 'flier-' + id, position: pos.slice(), velocity: [0, 0, 0],
        radius: Math.max(Number($('vol-flier-radius').value) || 0.4, 0.05),
        max_speed: Math.max(Number($('vol-flier-speed').value) || 4, 0.1), max_accel: 10,
        color: COLORS[(id - 1) % COLORS.length], corners: [], arrived: false, error: null,
      };
      if (V.target) { f.goal = V.target.slice(); f.d0 = dist(f.position, f.goal); }
      V.fliers.push(f);
      renderFliersOut();
    }

    function spawn(n) {
      if (!V.grid) return;
      for (let i = 0; i < n; i++) { const p = randomFree(); if (p) addFlier(p); }
      host.redraw();
    }

    const dist = (a, b) => (a && b ? Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]) : Infinity);

    function setTarget(pt) {
      V.target = pt.slice();
      for (const f of V.fliers) { f.goal = pt.slice(); f.d0 = dist(f.position, pt); f.arrived = false; }
      renderFliersOut();
    }

    function shown(f, now) {
      if (!f.from || !f.t0 || !(V.sim.interval > 0)) return f.position;
      const t = Math.min(Math.max((now - f.t0) / V.sim.interval, 0), 1);
      return f.position.map((v, i) => f.from[i] + (v - f.from[i]) * t);
    }

    async function stepFliers(dt) {
      const sim = V.sim, name = V.name;
      if (sim.inflight || !V.fliers.length || !name) return;
      sim.inflight = true;
      const behavior = $('vol-behavior').value;
      const sent = V.fliers.slice();
      const body = {
        dt,
        agents: sent.map((f) => {
          const o = { id: f.id, position: f.position, velocity: f.velocity, radius: f.radius, max_speed: f.max_speed,
            max_accel: f.max_accel, behavior: behavior !== 'wander' && behavior !== 'idle' && !f.goal ? 'idle' : behavior };
          if (f.goal) { o.target = f.goal; o.threat = f.goal; }
          return o;
        }),
      };
      try {
        const { data, ms } = await api('POST', volUrl(name, '/step'), body);
        if (name !== V.name) return;
        sim.ms = ms;
        sim.steps++;
        const byId = new Map(((data && data.agents) || []).map((o) => [o.id, o]));
        const now = performance.now();
        if (sim.lastAnswer) sim.interval = sim.interval ? 0.8 * sim.interval + 0.2 * Math.min(now - sim.lastAnswer, 500) : Math.min(now - sim.lastAnswer, 500);
        sim.lastAnswer = now;
        for (const f of sent) {
          const o = byId.get(f.id);
          if (!o) continue;
          if (o.error) {
            if (!f.error) host.showError(new ApiError(o.error.code, o.error.message, 0), f.id);
            f.error = o.error;
            continue;
          }
          f.error = null;
          f.from = shown(f, now);
          f.t0 = now;
          f.position = o.position;
          f.velocity = o.velocity;
          f.corners = Array.isArray(o.corners) ? o.corners : [];
          f.arrived = !!o.arrived;
          f.avoiding = !!o.avoiding;
        }
      } catch (e) {
        host.sim.running = false;
        host.showError(e, 'volume step');
      } finally {
        sim.inflight = false;
      }
      renderFliersOut();
    }

    /* Called every animation frame by the host. */
    function tick(now) {
      const sim = V.sim;
      if (host.sim.running && V.fliers.length && !sim.inflight && V.name) {
        const real = sim.lastSent ? Math.min((now - sim.lastSent) / 1000, MAX_STEP_DT) : 1 / 60;
        sim.lastSent = now;
        if (real > 0) stepFliers(real * host.sim.speed);
      } else if (!host.sim.running || !V.fliers.length) sim.lastSent = 0;
    }

    function renderFliersOut() {
      const n = V.fliers.length;
      const closer = V.fliers.filter((f) => f.d0 !== undefined && dist(f.position, f.goal) < f.d0 - 0.25).length;
      const arrived = V.fliers.filter((f) => f.arrived).length, errs = V.fliers.filter((f) => f.error).length;
      setKv('vol-fliers-out', [
        ['fliers', String(n)],
        ['target', V.target ? fmtPt(V.target) : n ? 'click in 3-D to set it' : '–'],
        ['moved closer', String(closer)],
        ['arrived', String(arrived)],
        ['errors', String(errs), errs ? 'bad' : ''],
        ['steps', String(V.sim.steps)],
        ['step latency', V.sim.steps ? `${fmt(V.sim.ms, 1)} ms` : '–'],
      ]);
      app.dataset.volFliers = String(n);
      app.dataset.volFliersCloser = String(closer);
      app.dataset.volFliersErrors = String(errs);
      app.dataset.volSteps = String(V.sim.steps);
    }

    /* ------------------------------------------------------------ overlay */

    /* What the 3-D view draws over the volume. */
    function overlay(now) {
      const o = { markers: [], agents: [], lines: [], dots: [] }, P = V.path, r = P.result;
      if (V.tool === 'path' || P.start) {
        if (r && Array.isArray(r.corners) && r.corners.length > 1) {
          o.lines.push({ points: [r.start, r.end], color: [1, 1, 1, 0.35] }); /* the straight line */
          o.path = r.corners;
          for (const c of r.corners.slice(1, -1)) o.dots.push({ p: c, color: [1, 0.88, 0.3, 1], size: 7 });
        }
        if (P.start) o.markers.push({ p: r && r.start ? r.start : P.start, color: [0.25, 0.73, 0.31, 1] });
        if (P.end) o.markers.push({ p: r && r.end ? r.end : P.end, color: [0.97, 0.32, 0.29, 1] });
      }
      const v3 = host.view3d(), ppm = v3 ? v3.pxPerMetre() : 10;
      for (const f of V.fliers) {
        const p = shown(f, now);
        o.agents.push({ p, color: rgb(f.error ? '#f85149' : f.color, f.arrived ? 0.55 : 1), px: 2 * f.radius * ppm });
        if (f.corners && f.corners.length) o.lines.push({ points: [p, ...f.corners], color: [1, 1, 1, 0.4] });
      }
      if (V.target) o.markers.push({ p: V.target, color: [1, 1, 1, 1] });
      return o;
    }

    /* The legend while a volume is shown (HTML lines). */
    function legend() {
      const b = sliceBounds() || { minY: 0, maxY: 0 };
      const sw = (style) => `<span class="sw" style="${style}"></span>`;
      return [
        `blocked space ${sw('border-color:#386a9e;border-top-width:8px')}${sw('border-color:#dba86b;border-top-width:8px')} ` +
          `height ${fmt(b.minY, 1)} … ${fmt(b.maxY, 1)} m`,
        `${sw('border-color:#ffe14d')}path, ● corners · ${sw('border-color:rgba(255,255,255,.5)')}straight line`,
        `${sw('border-color:#3fb950;border-top-width:6px')}start ${sw('border-color:#f85149;border-top-width:6px')}end · ` +
          `${sw('border-color:#ff78dc;border-top-width:8px;opacity:.6')}expanded nodes`,
        `${sw('border-color:#7bdff2;border-top-width:8px;border-radius:4px')}flier (size = radius; faded = arrived), its next corners; ● target`,
        `${sw('border-color:rgba(77,163,255,.7)')}picking plane (when clicks go to the plane)`,
      ];
    }

    /* ------------------------------------------------------------- wiring */

    function setTool(tool) {
      V.tool = tool;
      for (const b of $('vol-tools').querySelectorAll('button')) b.classList.toggle('active', b.dataset.vtool === tool);
      for (const p of document.querySelectorAll('.vtool-pane')) p.hidden = p.dataset.vpane !== tool;
      host.redraw();
    }

    for (const b of $('vol-tools').querySelectorAll('button')) b.addEventListener('click', () => setTool(b.dataset.vtool));
    const setClick = (m) => {
      V.clickMode = m;
      for (const b of $('vol-click').querySelectorAll('button')) b.classList.toggle('active', b.dataset.vclick === m);
    };
    for (const b of $('vol-click').querySelectorAll('button')) b.addEventListener('click', () => setClick(b.dataset.vclick));
    setClick('target');
    $('volumes-refresh').addEventListener('click', () => load());
    $('vol-close').addEventListener('click', close);
    $('vol-show').addEventListener('change', () => { if (V.grid) rebuild(V.grid.y0, V.grid.y1); host.redraw(); });
    $('vol-show-mesh').addEventListener('change', () => { const v3 = host.view3d(); if (v3) v3.showMesh = $('vol-show-mesh').checked; host.redraw(); });
    $('vol-pick').addEventListener('change', () => { V.pick = $('vol-pick').value; setPlaneFromSlider(); });
    $('vol-plane').addEventListener('input', setPlaneFromSlider);
    for (const id of ['vol-weight', 'vol-max-nodes']) $(id).addEventListener('change', () => { if (V.path.start && V.path.end) runPath(); });
    $('vol-expanded').addEventListener('change', () => {
      if (V.path.start && V.path.end) runPath();
      else renderPathOut();
    });
    $('vol-spawn').addEventListener('click', () => spawn(Math.min(Math.max(Math.floor(Number($('vol-spawn-n').value) || 1), 1), 200)));
    $('vol-clear').addEventListener('click', () => { V.fliers = []; V.target = null; V.sim.steps = 0; renderFliersOut(); host.redraw(); });
    setTool('path');
    renderPathOut();
    renderFliersOut();
    load();

    return {
      load, select: selectVolume, close, legend, click, hover, overlay, tick, slice, sliceBounds, spawn, setTarget, setTool, pickAt,
      runPath, state: V,
      active: () => !!V.grid,
      animating: () => V.fliers.length > 0,
    };
  }

  window.navdVolume = { install };
})();
