/*
 * navd viewer: a single page that draws a stored navmesh top-down and runs
 * the service's queries against it (path, raycast, reachable, steering step).
 *
 * Plain JavaScript, no framework and no network beyond navd itself: it is
 * compiled into the navd binary and served at GET /.
 *
 * Conventions
 * - World axes: x to the right, z DOWNWARD on screen, y (up) out of the
 *   screen. With the contract's right-handed, y-up axes this is the mesh
 *   seen from above. Screen position = (world - view centre) * scale + half
 *   the canvas size.
 * - A click gives (x, z). Its y is taken client-side from the topmost
 *   polygon whose xz outline contains the point (Alt+click: the lowest), at
 *   the height of that polygon's surface (the detail mesh when the mesh has
 *   one, else the polygon's fan triangulation). A click outside every polygon
 *   uses the height of the nearest polygon; the service then snaps it within
 *   the default extents [2, 4, 2].
 * - Connected components are computed here from the exported mesh: polygons
 *   sharing an edge (shared indices of navd's welded binary export; the JSON
 *   fallback is welded here within 1e-4 m) or joined by an off-mesh link
 *   (counted two-way, as the metadata's `components` is).
 *
 * For tests the root element #app carries data attributes (data-mesh,
 * data-ready, data-path-corners, data-path-status, data-agents,
 * data-agents-moved, ...) and window.navdViewer exposes the state and the
 * world <-> canvas transform.
 */
(function () {
  'use strict';

  const $ = (id) => document.getElementById(id);
  const app = $('app');
  const canvas = $('view');
  let ctx = canvas.getContext('2d'); /* swapped for the static layer's while it renders */

  const TOOLS = ['path', 'raycast', 'reach', 'agents', 'batch', 'nearest'];
  const MAX_STEP_DT = 0.1; /* s of real time per step request, before the speed multiplier */
  const AGENT_COLORS = ['#ffd166', '#06d6a0', '#ef476f', '#7bdff2', '#f4a261', '#c77dff', '#90be6d', '#ff8fab'];

  const state = {
    apiKey: sessionStorage.getItem('navd.apiKey') || '',
    meshes: [],
    meshName: null,
    meta: null,
    mesh: null, /* prepared geometry, see prepareMesh */
    loadSeq: 0,
    view: { cx: 0, cz: 0, scale: 10 },
    size: { w: 1, h: 1, dpr: 1 },
    tool: 'path',
    hover: null,
    path: { start: null, end: null, result: null, ms: 0, seq: 0 },
    ray: { start: null, end: null, result: null, ms: 0 },
    reach: { start: null, result: null, set: null, ms: 0 },
    agents: [],
    agentMode: 'place',
    target: null,
    sim: { running: true, speed: 1, inflight: false, lastSent: 0, steps: 0, ms: 0, traversals: 0 },
    nextAgentId: 1,
    profile: '', /* the agent profile chosen; '' = the mesh's default (its first) */
    level: null, /* the level overlay: {key, name, version, tris (world xyz, 9 per triangle), ntri} */
    levelSeq: 0,
    batch: { pairs: [], pending: null, result: null, ms: 0, seq: 0, runs: 0 },
    nearest: { point: null, result: null, ms: 0 },
    dirty: true,
    errors: 0,
  };

  /* ------------------------------------------------------------------ API */

  class ApiError extends Error {
    constructor(code, message, status) {
      super(message);
      this.code = code;
      this.status = status;
    }
  }

  /*
   * One request to navd. Resolves to {data, ms, status}; rejects with an
   * ApiError carrying the contract's error code and message (or a synthetic
   * code for network failures and malformed bodies), never a bare exception.
   * `raw`: a successful body is returned as text (an OBJ export), or as an
   * ArrayBuffer when raw is 'bin'.
   */
  async function api(method, path, body, contentType, raw) {
    const headers = {};
    let payload;
    if (body instanceof Blob) {
      payload = body;
      headers['Content-Type'] = contentType;
    } else if (body !== undefined) {
      payload = JSON.stringify(body);
      headers['Content-Type'] = 'application/json';
    }
    if (state.apiKey) headers.Authorization = 'Bearer ' + state.apiKey;
    const t0 = performance.now();
    let res, text;
    try {
      res = await fetch(path, { method, headers, body: payload, cache: 'no-store' });
      if (raw === 'bin' && res.ok) {
        const buf = await res.arrayBuffer();
        return { data: buf, ms: performance.now() - t0, status: res.status };
      }
      text = await res.text();
    } catch (e) {
      throw new ApiError('network', `cannot reach navd (${e.message})`, 0);
    }
    const ms = performance.now() - t0;
    let data = null;
    if (raw && res.ok) return { data: text, ms, status: res.status };
    if (text) {
      try {
        data = JSON.parse(text);
      } catch (e) {
        if (res.ok) throw new ApiError('bad_response', `${method} ${path} returned a body that is not JSON`, res.status);
      }
    }
    if (!res.ok) {
      const err = data && data.error ? data.error : {};
      throw new ApiError(err.code || `http_${res.status}`,
        err.message || (text ? text.slice(0, 200) : res.statusText || 'request failed'), res.status);
    }
    return { data, ms, status: res.status };
  }

  const meshUrl = (name, suffix) => `/v1/navmeshes/${encodeURIComponent(name)}${suffix || ''}`;

  /* ------------------------------------------------------------ messages */

  function showError(err, context) {
    const code = err instanceof ApiError ? err.code : 'client_error';
    const status = err instanceof ApiError && err.status ? ` ${err.status}` : '';
    state.errors++;
    app.dataset.errorCount = String(state.errors);
    app.dataset.lastError = code;
    addMessage('error', code + status, (context ? context + ': ' : '') + (err.message || String(err)));
  }

  function showInfo(text) {
    addMessage('info', 'ok', text, 4000);
  }

  function addMessage(kind, code, text, ttl) {
    const box = $('messages');
    /* The same message twice in a row (a failing step every frame) is shown once. */
    const last = box.lastElementChild;
    if (last && last.dataset.key === code + '|' + text) return;
    while (box.children.length >= 5) box.firstElementChild.remove();
    const el = document.createElement('div');
    el.className = 'msg ' + kind;
    el.dataset.key = code + '|' + text;
    const c = document.createElement('span');
    c.className = 'code';
    c.textContent = code;
    const t = document.createElement('span');
    t.className = 'text';
    t.textContent = text;
    const x = document.createElement('button');
    x.type = 'button';
    x.title = 'Dismiss';
    x.textContent = '×';
    x.addEventListener('click', () => el.remove());
    el.append(c, t, x);
    box.append(el);
    if (ttl) setTimeout(() => el.remove(), ttl);
  }

  /* ------------------------------------------------------------ geometry */

  /* Twice the signed xz area of triangle (a, b, c), points as [x, z]. */
  const cross2 = (ax, az, bx, bz, cx, cz) => (bx - ax) * (cz - az) - (bz - az) * (cx - ax);

  /* One polygon of a prepared mesh; `path` (its outline as a Path2D) is made
     on first use. A class, so 100,000 of them share one hidden shape. */
  class Poly {
    constructor(id, ids, x0, x1, z0, z1, y, area, sign) {
      this.id = id; this.ids = ids; this.x0 = x0; this.x1 = x1; this.z0 = z0; this.z1 = z1;
      this.y = y; this.area = area; this.sign = sign; this.comp = 0;
      this.mesh = null; this.outline = null;
    }

    get path() {
      if (!this.outline) {
        const m = this.mesh, path = new Path2D();
        this.ids.forEach((i, k) => (k ? path.lineTo(m.vx[i], m.vz[i]) : path.moveTo(m.vx[i], m.vz[i])));
        path.closePath();
        this.outline = path;
      }
      return this.outline;
    }
  }

  /*
   * The exported mesh as flat arrays, from either export:
   *   {verts (3 per vertex), polyStart (npolys + 1), polyVerts, areas (one per
   *    polygon), links, detail: null | {verts, tris (3 per), ranges (first,
   *    count per polygon)}}
   * ?format=bin gives these arrays as they are (views on the response, no
   * parsing: see api/openapi.yaml); ?format=json is converted.
   */
  function geometryFromBin(buf) {
    const dv = new DataView(buf);
    const magic = String.fromCharCode(dv.getUint8(0), dv.getUint8(1), dv.getUint8(2), dv.getUint8(3));
    if (buf.byteLength < 36 || magic !== 'NAVB' || dv.getUint32(4, true) !== 1)
      throw new ApiError('bad_response', 'the binary export is not NAVB version 1', 200);
    const [nv, np, nidx, ndv, ndt, hasDetail, linksLen] = [8, 12, 16, 20, 24, 28, 32].map((o) => dv.getUint32(o, true));
    /* Typed-array views read the host's byte order; every browser in use is
       little-endian, as the format is. Sections are 4-byte aligned. */
    let off = 36;
    const take = (Type, n, bytes) => { const a = new Type(buf, off, n); off += bytes; return a; };
    const g = { welded: true };
    g.verts = take(Float32Array, nv * 3, nv * 12);
    g.polyStart = take(Uint32Array, np + 1, (np + 1) * 4);
    g.polyVerts = take(Uint32Array, nidx, nidx * 4);
    g.areas = take(Uint8Array, np, Math.ceil(np / 4) * 4);
    g.detail = null;
    if (hasDetail) {
      const verts = take(Float32Array, ndv * 3, ndv * 12);
      const tris = take(Uint32Array, ndt * 3, ndt * 12);
      const ranges = take(Uint32Array, np * 2, np * 8);
      g.detail = { verts, tris, ranges };
    }
    g.links = linksLen ? JSON.parse(new TextDecoder().decode(new Uint8Array(buf, off, linksLen))) : [];
    return g;
  }

  function geometryFromJson(json) {
    const V = json.vertices || [], P = json.polygons || [];
    const g = { verts: new Float64Array(V.length * 3), polyStart: new Uint32Array(P.length + 1), areas: new Uint8Array(P.length), links: json.links || [], detail: null };
    V.forEach((v, i) => g.verts.set(v.slice(0, 3), i * 3));
    let n = 0;
    P.forEach((ids, p) => { g.polyStart[p] = n; n += ids.length; });
    g.polyStart[P.length] = n;
    g.polyVerts = new Uint32Array(n);
    P.forEach((ids, p) => g.polyVerts.set(ids, g.polyStart[p]));
    (json.areas || []).forEach((a, p) => { if (p < P.length) g.areas[p] = a; });
    const d = json.detail;
    if (d && Array.isArray(d.triangles) && Array.isArray(d.polygon_triangles)) {
      g.detail = {
        verts: Float64Array.from((d.vertices || []).flatMap((v) => v.slice(0, 3))),
        tris: Uint32Array.from(d.triangles.flatMap((t) => t.slice(0, 3))),
        ranges: Uint32Array.from(P.map((_, p) => d.polygon_triangles[p] || [0, 0]).flat()),
      };
    }
    return g;
  }

  /* Loads the chosen profile's geometry: the binary export, or the JSON one
     from a navd without it (400 on format=bin). */
  async function fetchGeometry(name) {
    const q = exportQuery().replace('format=json', 'format=bin');
    try {
      const g = geometryFromBin((await api('GET', meshUrl(name, q), undefined, undefined, 'bin')).data);
      state.perf.format = 'bin';
      return g;
    } catch (e) {
      if (!(e instanceof ApiError) || e.status !== 400 || !/format/.test(e.message)) throw e;
      state.perf.format = 'json';
      return geometryFromJson((await api('GET', meshUrl(name, exportQuery()))).data || {});
    }
  }

  /*
   * Turns the exported geometry (see geometryFromBin) into what drawing and picking need:
   * per-polygon outlines, bounds, mean height, xz area, neighbours (edges
   * shared after welding), boundary edges, link endpoints' polygons and
   * connected components.
   */
  function prepareMesh(geo) {
    /* Where the time goes, per stage, for the browser test's large-mesh figures. */
    const parts = {}, tick = ((t) => (name) => { const n = performance.now(); parts[name] = +(n - t).toFixed(1); t = n; })(performance.now());
    state.perf.parts = parts;
    const V = geo.verts, PS = geo.polyStart, PV = geo.polyVerts;
    const nv = V.length / 3, npolys = PS.length - 1;
    const vx = new Float64Array(nv), vy = new Float64Array(nv), vz = new Float64Array(nv);
    const weld = new Int32Array(nv);
    for (let i = 0; i < nv; i++) { vx[i] = V[3 * i]; vy[i] = V[3 * i + 1]; vz[i] = V[3 * i + 2]; weld[i] = i; }
    if (!geo.welded) {
      /* Welding within 1e-4 m: vertices sorted by their rounded coordinates,
         equal neighbours share the first index. A sort of typed indices is an
         order of magnitude faster than a Map of string keys on 100,000-polygon
         meshes. The binary export skips this: navd welded the mesh when it was
         built (uploads and bakes alike), so a shared edge is a shared pair of
         indices there, exactly as the service's own adjacency sees it. */
      const rx = new Float64Array(nv), ry = new Float64Array(nv), rz = new Float64Array(nv);
      for (let i = 0; i < nv; i++) { rx[i] = Math.round(vx[i] * 1e4); ry[i] = Math.round(vy[i] * 1e4); rz[i] = Math.round(vz[i] * 1e4); }
      const order = new Int32Array(nv).map((_, i) => i);
      order.sort((a, b) => rx[a] - rx[b] || ry[a] - ry[b] || rz[a] - rz[b] || a - b);
      for (let k = 0; k < nv; k++) {
        const i = order[k], j = k ? order[k - 1] : -1;
        weld[i] = j >= 0 && rx[i] === rx[j] && ry[i] === ry[j] && rz[i] === rz[j] ? weld[j] : i;
      }
    }
    tick('weld');
    let minY = Infinity, maxY = -Infinity;
    let minX = Infinity, maxX = -Infinity, minZ = Infinity, maxZ = -Infinity;
    const polys = new Array(npolys);
    for (let p = 0; p < npolys; p++) {
      const ids = PV.subarray(PS[p], PS[p + 1]);
      let x0 = Infinity, x1 = -Infinity, z0 = Infinity, z1 = -Infinity, ys = 0, area2 = 0;
      for (let k = 0; k < ids.length; k++) {
        const a = ids[k], b = ids[(k + 1) % ids.length];
        x0 = Math.min(x0, vx[a]); x1 = Math.max(x1, vx[a]);
        z0 = Math.min(z0, vz[a]); z1 = Math.max(z1, vz[a]);
        ys += vy[a];
        area2 += vx[a] * vz[b] - vx[b] * vz[a];
        minY = Math.min(minY, vy[a]); maxY = Math.max(maxY, vy[a]);
      }
      minX = Math.min(minX, x0); maxX = Math.max(maxX, x1);
      minZ = Math.min(minZ, z0); maxZ = Math.max(maxZ, z1);
      polys[p] = new Poly(p, ids, x0, x1, z0, z1, ys / ids.length, Math.abs(area2) / 2, area2 >= 0 ? 1 : -1);
    }
    if (!polys.length) { minX = maxX = minZ = maxZ = minY = maxY = 0; }

    tick('polys');
    /* Components: union-find over shared edges and links (links two-way);
       the root is the smallest index, so the result is independent of the
       order of unions. */
    const parent = new Int32Array(polys.length).map((_, i) => i);
    const find = (i) => { while (parent[i] !== i) { parent[i] = parent[parent[i]]; i = parent[i]; } return i; };
    const union = (a, b) => { const ra = find(a), rb = find(b); if (ra !== rb) parent[Math.max(ra, rb)] = Math.min(ra, rb); };

    /* Edges: an edge (after welding) used by two polygons joins them.
       boundary and inner are flat [x0, z0, x1, z1, ...] segment lists in
       typed arrays sized for the worst case (growing plain arrays by
       800,000 pushes cost more than finding the edges). */
    const np = polys.length;
    let nedges = 0;
    for (const p of polys) nedges += p.ids.length;
    let boundary = new Float64Array(nedges * 4), inner = new Float64Array(nedges * 4);
    let boundaryIdx = new Uint32Array(nedges * 2); /* the boundary as vertex index pairs, for the 3-D view */
    let nb = 0, ni = 0;
    const emit = (e, owners) => {
      const a = Math.floor(e / nv), b = e - a * nv;
      if (owners.length === 1) {
        boundary[4 * nb] = vx[a]; boundary[4 * nb + 1] = vz[a]; boundary[4 * nb + 2] = vx[b]; boundary[4 * nb + 3] = vz[b];
        boundaryIdx[2 * nb] = a; boundaryIdx[2 * nb + 1] = b;
        nb++;
        return;
      }
      inner[4 * ni] = vx[a]; inner[4 * ni + 1] = vz[a]; inner[4 * ni + 2] = vx[b]; inner[4 * ni + 3] = vz[b];
      ni++;
      for (let i = 1; i < owners.length; i++) union(owners[0], owners[i]);
    };
    if (nv * nv * Math.max(np, 1) < 2 ** 53) {
      /* Each polygon edge as one number, (a·nv + b)·np + polygon (a ≤ b,
         welded), sorted natively: equal edges end up side by side. Five
         times faster than a Map of edge keys on 100,000 polygons (loading
         is most of what a large mesh costs). Exact below 2^53. */
      const keys = new Float64Array(nedges);
      let k = 0;
      for (const p of polys) {
        const ids = p.ids;
        for (let i = 0; i < ids.length; i++) {
          const a = weld[ids[i]], b = weld[ids[(i + 1) % ids.length]];
          keys[k++] = (a < b ? a * nv + b : b * nv + a) * np + p.id;
        }
      }
      keys.sort();
      const owners = [];
      for (let i = 0; i < nedges;) {
        const pid = keys[i] % np, e = (keys[i] - pid) / np;
        owners.length = 0;
        owners.push(pid);
        let j = i + 1;
        for (; j < nedges; j++) {
          const q = keys[j] % np;
          if ((keys[j] - q) / np !== e) break;
          owners.push(q);
        }
        emit(e, owners);
        i = j;
      }
    } else {
      /* Millions of vertices and polygons: keys beyond 2^53, so a Map. */
      const edges = new Map();
      for (const p of polys) {
        const ids = p.ids;
        for (let i = 0; i < ids.length; i++) {
          const a = weld[ids[i]], b = weld[ids[(i + 1) % ids.length]];
          const key = a < b ? a * nv + b : b * nv + a;
          const list = edges.get(key);
          if (list) list.push(p.id); else edges.set(key, [p.id]);
        }
      }
      edges.forEach((list, key) => emit(key, list));
    }
    boundary = boundary.slice(0, 4 * nb);
    inner = inner.slice(0, 4 * ni);
    boundaryIdx = boundaryIdx.slice(0, 2 * nb);

    tick('edges');
    /* Detail triangles, when present, give exact heights. */
    /* tris index the polygon vertices first, then the detail vertices. */
    let detail = null;
    if (geo.detail) {
      const D = geo.detail, dv = D.verts;
      const vert = (i) => (i < nv ? [vx[i], vy[i], vz[i]] : [dv[3 * (i - nv)], dv[3 * (i - nv) + 1], dv[3 * (i - nv) + 2]]);
      detail = { tris: D.tris, ranges: D.ranges, vert };
    }

    /* The most common area id is the plain floor; others are hatched. */
    const areas = geo.areas;
    const areaCount = new Map();
    polys.forEach((p) => { const a = areas[p.id] || 0; areaCount.set(a, (areaCount.get(a) || 0) + 1); });
    let mainArea = 0, mainCount = -1;
    areaCount.forEach((n, a) => { if (n > mainCount || (n === mainCount && a < mainArea)) { mainArea = a; mainCount = n; } });

    const mesh = {
      vx, vy, vz, polys, boundary, boundaryIdx, inner, detail, mainArea,
      special: polys.filter((p) => (areas[p.id] || 0) !== mainArea).map((p) => p.id),
      /* bidirectional defaults to true, as in the upload format. */
      links: (geo.links || []).map((l) => Object.assign({}, l, { bidirectional: l.bidirectional !== false })),
      bounds: { minX, maxX, minY, maxY, minZ, maxZ },
      areas,
      ncomp: 0,
    };

    tick('areas');
    mesh.links.forEach((l) => {
      l.startPoly = nearestPolyTo(mesh, l.start);
      l.endPoly = nearestPolyTo(mesh, l.end);
      if (l.startPoly >= 0 && l.endPoly >= 0) union(l.startPoly, l.endPoly);
    });
    /* Number components by decreasing area so the main region always gets
       the first hue and small islands stand out against it. */
    const compArea = new Map();
    polys.forEach((p) => { const r = find(p.id); compArea.set(r, (compArea.get(r) || 0) + p.area); });
    const roots = [...compArea.keys()].sort((a, b) => compArea.get(b) - compArea.get(a) || a - b);
    const compIndex = new Map(roots.map((r, i) => [r, i]));
    polys.forEach((p) => { p.comp = compIndex.get(find(p.id)); });
    mesh.ncomp = compIndex.size;

    tick('components');
    /* Draw lower floors first so an upper floor covers what it overlaps. */
    mesh.drawOrder = drawOrder(polys, minY, maxY);
    /* A polygon's outline is made when first drawn alone (hover, corridor),
       not for all 100,000 at load. */
    polys.forEach((p) => { p.mesh = mesh; });
    tick('order');
    mesh.layers = colorLayers(mesh);
    tick('layers');
    mesh.grid = buildGrid(mesh);
    tick('grid');
    return mesh;
  }

  /* Polygons by mean height (to the millimetre), then id. Packed into one
     number each and sorted natively when that is exact (below 2^53): a
     comparator sort of 100,000 objects costs several times more. */
  function drawOrder(polys, minY, maxY) {
    const np = polys.length;
    if (!np || (Math.round((maxY - minY) * 1000) + 1) * np >= 2 ** 53) return polys.slice().sort((a, b) => a.y - b.y || a.id - b.id);
    const keys = new Float64Array(np);
    for (let i = 0; i < np; i++) keys[i] = Math.round((polys[i].y - minY) * 1000) * np + i;
    keys.sort();
    const out = new Array(np);
    for (let i = 0; i < np; i++) out[i] = polys[keys[i] % np];
    return out;
  }

  /*
   * The mesh's fill as a few batched paths: polygons in draw order (low
   * floors first), split into runs of one colour. Colours are quantized (hue
   * per component, 12 height steps), so a 100,000-polygon grid draws with a
   * few hundred fill calls instead of 100,000.
   */
  const PATH_CHUNK = 256;

  /* Fills the outlines of polygons ids (in that order) in batches of PATH_CHUNK. */
  function fillBatched(m, ids, style) {
    ctx.fillStyle = style;
    let path = null, n = 0;
    for (const id of ids) {
      const p = m.polys[id];
      if (!p) continue;
      if (!path) path = new Path2D();
      const vi = p.ids;
      vi.forEach((i, k) => (k ? path.lineTo(m.vx[i], m.vz[i]) : path.moveTo(m.vx[i], m.vz[i])));
      path.closePath();
      if (++n >= PATH_CHUNK) { ctx.fill(path); path = null; n = 0; }
    }
    if (path) ctx.fill(path);
  }

  function colorLayers(mesh) {
    const layers = [];
    let cur = null;
    for (const p of mesh.drawOrder) {
      const color = polyColor(mesh, p);
      /* Chromium's Path2D grows quadratically with its subpaths (one path of
         100,000 squares took 44 s to build, 1,000 paths of 100 took 0.4 s),
         so a run is cut every PATH_CHUNK polygons. */
      if (!cur || cur.color !== color || cur.n >= PATH_CHUNK) { cur = { color, path: new Path2D(), n: 0 }; layers.push(cur); }
      cur.n++;
      const ids = p.ids;
      ids.forEach((i, k) => (k ? cur.path.lineTo(mesh.vx[i], mesh.vz[i]) : cur.path.moveTo(mesh.vx[i], mesh.vz[i])));
      cur.path.closePath();
    }
    return layers;
  }

  /*
   * A uniform grid over the xz bounds, each cell listing the polygons whose
   * bounding box overlaps it: picking under the cursor and the nearest
   * polygon look at a handful of polygons instead of all of them.
   */
  function buildGrid(mesh) {
    const b = mesh.bounds, n = Math.max(mesh.polys.length, 1);
    const w = Math.max(b.maxX - b.minX, 1e-3), h = Math.max(b.maxZ - b.minZ, 1e-3);
    const cell = Math.max(Math.sqrt((w * h) / n) * 1.5, 1e-3);
    const nx = Math.min(Math.ceil(w / cell), 2048), nz = Math.min(Math.ceil(h / cell), 2048);
    const cw = w / nx, ch = h / nz;
    const counts = new Int32Array(nx * nz + 1);
    /* Each polygon's cell span, kept in one typed array (no array per polygon). */
    const np = mesh.polys.length, spans = new Int32Array(np * 4);
    const cellOf = (v, lo, size, n) => Math.min(Math.max(Math.floor((v - lo) / size), 0), n - 1);
    for (let k = 0; k < np; k++) {
      const p = mesh.polys[k], o = k * 4;
      const i0 = (spans[o] = cellOf(p.x0, b.minX, cw, nx)), i1 = (spans[o + 1] = cellOf(p.x1, b.minX, cw, nx));
      const j0 = (spans[o + 2] = cellOf(p.z0, b.minZ, ch, nz)), j1 = (spans[o + 3] = cellOf(p.z1, b.minZ, ch, nz));
      for (let j = j0; j <= j1; j++) for (let i = i0; i <= i1; i++) counts[j * nx + i + 1]++;
    }
    for (let c = 1; c <= nx * nz; c++) counts[c] += counts[c - 1];
    const items = new Int32Array(counts[nx * nz]);
    const fill = counts.slice(0, nx * nz);
    for (let k = 0; k < np; k++) {
      const o = k * 4;
      for (let j = spans[o + 2]; j <= spans[o + 3]; j++) for (let i = spans[o]; i <= spans[o + 1]; i++) items[fill[j * nx + i]++] = k;
    }
    return { x0: b.minX, z0: b.minZ, cw, ch, nx, nz, start: counts, items };
  }

  /* Calls fn(polygon) for the polygons listed in the cell holding (x, z). */
  function eachInCell(mesh, x, z, fn) {
    const g = mesh.grid;
    const i = Math.floor((x - g.x0) / g.cw), j = Math.floor((z - g.z0) / g.ch);
    if (i < 0 || j < 0 || i >= g.nx || j >= g.nz) return;
    const c = j * g.nx + i;
    for (let k = g.start[c]; k < g.start[c + 1]; k++) fn(mesh.polys[g.items[k]]);
  }

  /* Calls fn(polygon) for the polygons in the cells on ring r (Chebyshev
     distance r in cells) around the cell of (x, z), visiting only the ring's
     cells inside the grid; false when the ring misses the grid entirely. */
  function eachInRing(mesh, x, z, r, fn) {
    const g = mesh.grid;
    const ci = Math.floor((x - g.x0) / g.cw), cj = Math.floor((z - g.z0) / g.ch);
    if (ci + r < 0 || ci - r >= g.nx || cj + r < 0 || cj - r >= g.nz) return false;
    const cellAt = (i, j) => {
      if (i < 0 || j < 0 || i >= g.nx || j >= g.nz) return;
      const c = j * g.nx + i;
      for (let k = g.start[c]; k < g.start[c + 1]; k++) fn(mesh.polys[g.items[k]]);
    };
    if (r === 0) { cellAt(ci, cj); return true; }
    const i0 = Math.max(ci - r, 0), i1 = Math.min(ci + r, g.nx - 1);
    for (let i = i0; i <= i1; i++) { cellAt(i, cj - r); cellAt(i, cj + r); }
    const j0 = Math.max(cj - r + 1, 0), j1 = Math.min(cj + r - 1, g.nz - 1);
    for (let j = j0; j <= j1; j++) { cellAt(ci - r, j); cellAt(ci + r, j); }
    return true;
  }

  /* Component picks the hue, height the lightness (low = dark, high = light). */
  function polyColor(mesh, p) {
    const b = mesh.bounds;
    const step = b.maxY > b.minY ? Math.round(((p.y - b.minY) / (b.maxY - b.minY)) * 12) : 6;
    /* One string per (component, step), made once: formatting 100,000 of them showed in load times. */
    const key = p.comp * 13 + step;
    const cache = mesh.colors || (mesh.colors = new Map());
    let c = cache.get(key);
    if (!c) {
      const hue = (205 + p.comp * 137.508) % 360;
      c = `hsl(${hue.toFixed(1)}, ${p.comp ? 55 : 42}%, ${(22 + (44 * step) / 12).toFixed(1)}%)`;
      cache.set(key, c);
    }
    return c;
  }

  function insidePoly(mesh, p, x, z) {
    if (x < p.x0 - 1e-6 || x > p.x1 + 1e-6 || z < p.z0 - 1e-6 || z > p.z1 + 1e-6) return false;
    const ids = p.ids;
    for (let k = 0; k < ids.length; k++) {
      const a = ids[k], b = ids[(k + 1) % ids.length];
      if (p.sign * cross2(mesh.vx[a], mesh.vz[a], mesh.vx[b], mesh.vz[b], x, z) < -1e-9) return false;
    }
    return true;
  }

  /* Height of triangle (a, b, c) at (x, z) when the point lies inside it in xz, else null. */
  function triHeight(a, b, c, x, z) {
    const d = cross2(a[0], a[2], b[0], b[2], c[0], c[2]);
    if (Math.abs(d) < 1e-12) return null;
    const u = cross2(b[0], b[2], c[0], c[2], x, z) / d;
    const v = cross2(c[0], c[2], a[0], a[2], x, z) / d;
    const w = 1 - u - v;
    const eps = -1e-6;
    if (u < eps || v < eps || w < eps) return null;
    return u * a[1] + v * b[1] + w * c[1];
  }

  /* Surface height of polygon p at (x, z): detail mesh if any, else the fan. */
  function heightAt(mesh, p, x, z) {
    const D = mesh.detail;
    if (D && 2 * p.id + 1 < D.ranges.length) {
      const first = D.ranges[2 * p.id], count = D.ranges[2 * p.id + 1];
      for (let t = first; t < first + count && 3 * t + 2 < D.tris.length; t++) {
        const h = triHeight(D.vert(D.tris[3 * t]), D.vert(D.tris[3 * t + 1]), D.vert(D.tris[3 * t + 2]), x, z);
        if (h !== null) return h;
      }
    }
    const ids = p.ids;
    const v = (i) => [mesh.vx[i], mesh.vy[i], mesh.vz[i]];
    for (let k = 1; k + 1 < ids.length; k++) {
      const h = triHeight(v(ids[0]), v(ids[k]), v(ids[k + 1]), x, z);
      if (h !== null) return h;
    }
    return p.y;
  }

  /*
   * The polygon under (x, z) and the surface height there: the topmost one
   * when several floors overlap (lowest when `lowest`). Outside every
   * polygon: the nearest polygon's mean height, poly = -1.
   */
  function pick(mesh, x, z, lowest) {
    let best = null;
    eachInCell(mesh, x, z, (p) => {
      if (!insidePoly(mesh, p, x, z)) return;
      const y = heightAt(mesh, p, x, z);
      if (!best || (lowest ? y < best.y : y > best.y)) best = { poly: p.id, y };
    });
    if (best) return { x, y: best.y, z, poly: best.poly };
    const q = nearestPolyTo(mesh, [x, 0, z], true);
    return { x, y: q >= 0 ? mesh.polys[q].y : 0, z, poly: -1 };
  }

  /* Index of the polygon nearest to point pt (xz distance to its bounds, then |dy|). */
  function nearestPolyTo(mesh, pt, ignoreY) {
    let best = -1, bestD = Infinity;
    const visit = (p) => {
      const dx = Math.max(p.x0 - pt[0], 0, pt[0] - p.x1);
      const dz = Math.max(p.z0 - pt[2], 0, pt[2] - p.z1);
      let d = dx * dx + dz * dz;
      if (!ignoreY) {
        const inside = d === 0 && insidePoly(mesh, p, pt[0], pt[2]);
        const dy = inside ? heightAt(mesh, p, pt[0], pt[2]) - pt[1] : p.y - pt[1];
        d += 0.01 * dy * dy + (inside ? 0 : 1e-6);
      }
      if (d < bestD || (d === bestD && p.id < best)) { bestD = d; best = p.id; }
    };
    if (!mesh.grid) { mesh.polys.forEach(visit); return best; }
    /* Rings of cells outward until a ring starts farther away than the best
       found: its polygons' boxes, and any beyond, cannot be closer in xz. The
       height term only grows d, so the xz bound holds for it too. */
    const g = mesh.grid, cmin = Math.min(g.cw, g.ch);
    const ci = Math.floor((pt[0] - g.x0) / g.cw), cj = Math.floor((pt[2] - g.z0) / g.ch);
    /* The first ring that touches the grid, for a point outside it. */
    const r0 = Math.max(0, -ci, ci - (g.nx - 1), -cj, cj - (g.nz - 1));
    for (let r = r0; ; r++) {
      const reach = Math.max(r - 1, 0) * cmin;
      if (best >= 0 && reach * reach >= bestD) break;
      if (!eachInRing(mesh, pt[0], pt[2], r, visit)) break;
    }
    return best;
  }

  /* A random point on the mesh, (nearly) uniform over the xz area. */
  function randomPoint(mesh) {
    const polys = mesh.polys;
    if (!polys.length) return null;
    if (!mesh.cumArea) {
      let s = 0;
      mesh.cumArea = polys.map((p) => (s += p.area));
    }
    const total = mesh.cumArea[mesh.cumArea.length - 1];
    const r = Math.random() * total;
    let lo = 0, hi = polys.length - 1;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (mesh.cumArea[mid] < r) lo = mid + 1; else hi = mid; }
    const p = polys[lo];
    /* Pick a fan triangle by area, then a uniform point in it. */
    const ids = p.ids, v = (i) => [mesh.vx[i], mesh.vz[i]];
    const tris = [];
    let ta = 0;
    for (let k = 1; k + 1 < ids.length; k++) {
      const a = v(ids[0]), b = v(ids[k]), c = v(ids[k + 1]);
      ta += Math.abs(cross2(a[0], a[1], b[0], b[1], c[0], c[1])) / 2;
      tris.push([a, b, c, ta]);
    }
    const rt = Math.random() * ta;
    const [a, b, c] = tris.find((t) => t[3] >= rt) || tris[tris.length - 1];
    let u = Math.random(), w = Math.random();
    if (u + w > 1) { u = 1 - u; w = 1 - w; }
    /* Pulled 10 % toward the triangle's centroid so a new agent does not
       start right on a wall. */
    const gx = (a[0] + b[0] + c[0]) / 3, gz = (a[1] + b[1] + c[1]) / 3;
    const x = gx + 0.9 * (a[0] + u * (b[0] - a[0]) + w * (c[0] - a[0]) - gx);
    const z = gz + 0.9 * (a[1] + u * (b[1] - a[1]) + w * (c[1] - a[1]) - gz);
    return [x, heightAt(mesh, p, x, z), z];
  }

  /* ------------------------------------------------------------- transform */

  function worldToCanvas(x, z) {
    const v = state.view;
    return { x: (x - v.cx) * v.scale + state.size.w / 2, y: (z - v.cz) * v.scale + state.size.h / 2 };
  }

  function canvasToWorld(px, py) {
    const v = state.view;
    return { x: (px - state.size.w / 2) / v.scale + v.cx, z: (py - state.size.h / 2) / v.scale + v.cz };
  }

  function fitView() {
    const m = state.mesh;
    if (!m) return;
    const b = m.bounds;
    const w = Math.max(b.maxX - b.minX, 1e-3), h = Math.max(b.maxZ - b.minZ, 1e-3);
    state.view.cx = (b.minX + b.maxX) / 2;
    state.view.cz = (b.minZ + b.maxZ) / 2;
    state.view.scale = Math.min((state.size.w - 60) / w, (state.size.h - 80) / h);
    if (!(state.view.scale > 0)) state.view.scale = 1;
    redraw();
  }

  function resize() {
    const r = canvas.getBoundingClientRect();
    const dpr = window.devicePixelRatio || 1;
    state.size = { w: Math.max(r.width, 1), h: Math.max(r.height, 1), dpr };
    canvas.width = Math.round(state.size.w * dpr);
    canvas.height = Math.round(state.size.h * dpr);
    redraw();
  }

  /* --------------------------------------------------------------- drawing */

  function redraw() {
    state.dirty = true;
  }

  /* A pan or zoom step: the static layer waits until the gesture settles. */
  function viewChanged() {
    state.lastViewChange = performance.now();
    redraw();
  }

  /* Sets the canvas transform so world xz coordinates can be drawn directly. */
  function worldTransform() {
    const { dpr, w, h } = state.size, v = state.view;
    ctx.setTransform(dpr * v.scale, 0, 0, dpr * v.scale, dpr * (w / 2 - v.cx * v.scale), dpr * (h / 2 - v.cz * v.scale));
  }

  function screenTransform() {
    const dpr = state.size.dpr;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  }

  /*
   * Drawing is two layers. The static one (grid, mesh fill, hatching, the
   * reachable set, edges, links) is rendered into an offscreen canvas only
   * when the mesh, the view, the canvas size or the reachable set changes;
   * every frame copies it and draws what moves (hover, paths, rays, agents)
   * on top, so a hover or a steering step on a 100,000-polygon mesh costs
   * one image copy. While the user pans or zooms, the last static layer is
   * copied shifted and scaled (exact for a pan, a little blurred for a zoom)
   * and rendered anew once the view has been still for a moment.
   */
  const layer = { canvas: document.createElement('canvas'), key: null, view: null, mesh: null };
  const SETTLE_MS = 120;

  function layerKey() {
    const v = state.view, z = state.size;
    const reach = state.tool === 'reach' ? state.reach.set : null;
    return [state.loadSeq, state.mesh ? state.mesh.polys.length : -1, v.cx, v.cz, v.scale, z.w, z.h, z.dpr,
      reach ? state.reach.seq : 0, state.levelSeq].join('|');
  }

  function renderLayer() {
    const c = layer.canvas;
    if (c.width !== canvas.width || c.height !== canvas.height) { c.width = canvas.width; c.height = canvas.height; }
    const main = ctx;
    ctx = c.getContext('2d');
    try {
      screenTransform();
      ctx.fillStyle = '#0d1117';
      ctx.fillRect(0, 0, state.size.w, state.size.h);
      drawGrid();
      if (state.mesh) drawStatic(state.mesh);
    } finally {
      ctx = main;
    }
    layer.key = layerKey();
    layer.view = Object.assign({}, state.view);
    layer.mesh = state.mesh;
    state.layerRenders = (state.layerRenders || 0) + 1;
  }

  function drawStatic(m) {
    const px = 1 / state.view.scale;
    worldTransform();
    if (state.level) drawLevel(state.level, px);
    for (const l of m.layers) {
      ctx.fillStyle = l.color;
      ctx.fill(l.path);
    }
    /* Polygons of a non-default area (water, doors, ...): a hatch a fixed
       number of pixels apart, whatever the zoom. */
    if (m.special.length) {
      ctx.save();
      const clip = new Path2D();
      let x0 = Infinity, x1 = -Infinity, z0 = Infinity, z1 = -Infinity;
      for (const id of m.special) {
        const p = m.polys[id];
        clip.addPath(p.path);
        x0 = Math.min(x0, p.x0); x1 = Math.max(x1, p.x1); z0 = Math.min(z0, p.z0); z1 = Math.max(z1, p.z1);
      }
      ctx.clip(clip);
      ctx.strokeStyle = 'rgba(255, 255, 255, 0.13)';
      ctx.lineWidth = 1.5 * px;
      ctx.beginPath();
      const step = 7 * px, h = z1 - z0;
      for (let x = x0 - h; x <= x1; x += step) { ctx.moveTo(x, z0); ctx.lineTo(x + h, z1); }
      ctx.stroke();
      ctx.restore();
    }
    /* Reachable set: lit polygons, the rest dimmed. */
    if (state.tool === 'reach' && state.reach.set) {
      const lit = [], dim = [];
      for (const p of m.drawOrder) (state.reach.set.has(p.id) ? lit : dim).push(p.id);
      fillBatched(m, lit, 'rgba(80, 230, 200, 0.45)');
      fillBatched(m, dim, 'rgba(5, 8, 12, 0.55)');
    }
    /* Shared edges thin, boundary edges (walls) dark and thick. Shared
       edges vanish when polygons are under 4 px across (a 100,000-polygon
       mesh fitted to the window): they would only grey the fill. */
    ctx.lineCap = 'round';
    if ((m.inner.length / 4) * 16 * px * px < (m.bounds.maxX - m.bounds.minX) * (m.bounds.maxZ - m.bounds.minZ) + 1e-9) {
      ctx.strokeStyle = 'rgba(0, 0, 0, 0.28)';
      ctx.lineWidth = px;
      ctx.beginPath();
      const s = m.inner;
      for (let i = 0; i < s.length; i += 4) { ctx.moveTo(s[i], s[i + 1]); ctx.lineTo(s[i + 2], s[i + 3]); }
      ctx.stroke();
    }
    ctx.strokeStyle = '#03060a';
    ctx.lineWidth = 2.2 * px;
    ctx.beginPath();
    const s = m.boundary;
    for (let i = 0; i < s.length; i += 4) { ctx.moveTo(s[i], s[i + 1]); ctx.lineTo(s[i + 2], s[i + 3]); }
    ctx.stroke();
    drawLinks(m, px);
  }

  /* Frame costs for the status bar and the browser test: draws, total and worst ms. */
  state.perf = { draws: 0, totalMs: 0, maxMs: 0, layerMs: 0 };

  function draw(now) {
    const t0 = performance.now();
    drawFrame(now);
    const ms = performance.now() - t0;
    const P = state.perf;
    P.draws++;
    P.totalMs += ms;
    P.maxMs = Math.max(P.maxMs, ms);
  }

  function drawFrame(now) {
    state.dirty = false;
    screenTransform();
    const m = state.mesh;
    const settled = !state.lastViewChange || now - state.lastViewChange >= SETTLE_MS;
    if (layerKey() !== layer.key) {
      if (!settled && layer.view && layer.mesh === m && m) {
        /* Mid-gesture: the old layer, moved to where its pixels now belong. */
        const L = layer.view, V = state.view, k = V.scale / L.scale;
        const ox = state.size.w / 2 * (1 - k) + (L.cx - V.cx) * V.scale;
        const oy = state.size.h / 2 * (1 - k) + (L.cz - V.cz) * V.scale;
        ctx.fillStyle = '#0d1117';
        ctx.fillRect(0, 0, state.size.w, state.size.h);
        const dpr = state.size.dpr;
        ctx.setTransform(dpr * k, 0, 0, dpr * k, dpr * ox, dpr * oy);
        ctx.drawImage(layer.canvas, 0, 0, state.size.w, state.size.h);
        screenTransform();
        state.dirty = true; /* come back to render it properly once settled */
      } else {
        const t0 = performance.now();
        renderLayer();
        state.perf.layerMs = performance.now() - t0;
        ctx.drawImage(layer.canvas, 0, 0, state.size.w, state.size.h);
      }
    } else {
      ctx.drawImage(layer.canvas, 0, 0, state.size.w, state.size.h);
    }
    if (!m) {
      ctx.fillStyle = '#8a96a8';
      ctx.font = '14px system-ui, sans-serif';
      ctx.textAlign = 'center';
      ctx.fillText(state.meshName ? 'loading…' : 'no navmesh selected', state.size.w / 2, state.size.h / 2);
      ctx.textAlign = 'left';
      return;
    }
    const px = 1 / state.view.scale; /* one screen pixel in metres */
    worldTransform();

    if (state.hover && state.hover.poly >= 0 && m.polys[state.hover.poly]) {
      ctx.strokeStyle = 'rgba(255, 255, 255, 0.55)';
      ctx.lineWidth = 1.5 * px;
      ctx.stroke(m.polys[state.hover.poly].path);
    }

    if (state.tool === 'path') drawPathOverlay(m, px);
    if (state.tool === 'raycast') drawRay(px);
    if (state.tool === 'reach' && state.reach.start) marker(state.reach.start, '#50e6c8', px);
    if (state.tool === 'batch') drawBatch(px);
    if (state.tool === 'nearest') drawNearest(px);

    /* Agents stay visible (and keep moving) under every tool, so a path can
       be inspected while the crowd runs. */
    drawAgents(px, now);
    screenTransform();
    drawScaleBar();
  }

  function drawGrid() {
    /* Grid spacing: a 1-2-5 step giving lines at least 40 px apart. */
    const s = state.view.scale;
    if (!(s > 0 && isFinite(s))) return;
    const e = Math.pow(10, Math.floor(Math.log10(40 / s)));
    const step = [1, 2, 5, 10].map((k) => k * e).find((st) => st * s >= 40) || 10 * e;
    const tl = canvasToWorld(0, 0), br = canvasToWorld(state.size.w, state.size.h);
    ctx.strokeStyle = 'rgba(255, 255, 255, 0.035)';
    ctx.lineWidth = 1;
    ctx.beginPath();
    for (let x = Math.ceil(tl.x / step) * step; x <= br.x; x += step) {
      const sx = Math.round(worldToCanvas(x, 0).x) + 0.5;
      ctx.moveTo(sx, 0); ctx.lineTo(sx, state.size.h);
    }
    for (let z = Math.ceil(tl.z / step) * step; z <= br.z; z += step) {
      const sy = Math.round(worldToCanvas(0, z).y) + 0.5;
      ctx.moveTo(0, sy); ctx.lineTo(state.size.w, sy);
    }
    ctx.stroke();
    state.gridStep = step;
  }

  function drawScaleBar() {
    const step = state.gridStep || 1;
    const len = step * state.view.scale;
    const x = 14, y = state.size.h - 40;
    ctx.strokeStyle = '#d7dee8';
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.moveTo(x, y - 4); ctx.lineTo(x, y); ctx.lineTo(x + len, y); ctx.lineTo(x + len, y - 4);
    ctx.stroke();
    ctx.fillStyle = '#d7dee8';
    ctx.font = '11px system-ui, sans-serif';
    ctx.fillText(`${+step.toPrecision(3)} m`, x + len + 6, y + 3);
    /* Axis hint: x right, z down. */
    const ax = 14, ay = y - 48;
    ctx.strokeStyle = '#8a96a8';
    ctx.fillStyle = '#8a96a8';
    ctx.lineWidth = 1.5;
    arrowScreen(ax, ay, ax + 26, ay);
    arrowScreen(ax, ay, ax, ay + 26);
    ctx.fillText('x', ax + 30, ay + 4);
    ctx.fillText('z', ax - 3, ay + 38);
  }

  function arrowScreen(x0, y0, x1, y1) {
    const a = Math.atan2(y1 - y0, x1 - x0);
    ctx.beginPath();
    ctx.moveTo(x0, y0); ctx.lineTo(x1, y1);
    ctx.moveTo(x1 - 6 * Math.cos(a - 0.45), y1 - 6 * Math.sin(a - 0.45));
    ctx.lineTo(x1, y1);
    ctx.lineTo(x1 - 6 * Math.cos(a + 0.45), y1 - 6 * Math.sin(a + 0.45));
    ctx.stroke();
  }

  /* Arrow head at (x, z) pointing along angle a, size in metres. */
  function arrowHead(x, z, a, size) {
    ctx.beginPath();
    ctx.moveTo(x, z);
    ctx.lineTo(x - size * Math.cos(a - 0.42), z - size * Math.sin(a - 0.42));
    ctx.lineTo(x - size * Math.cos(a + 0.42), z - size * Math.sin(a + 0.42));
    ctx.closePath();
    ctx.fill();
  }

  /* Off-mesh links: an arc from start to end, an arrow at each end it can be entered toward. */
  function drawLinks(m, px) {
    for (const l of m.links) {
      const [sx, , sz] = l.start, [ex, , ez] = l.end;
      const dx = ex - sx, dz = ez - sz, d = Math.hypot(dx, dz) || 1e-6;
      const bulge = Math.max(0.25 * d, 12 * px);
      const cx = (sx + ex) / 2 - (dz / d) * bulge, cz = (sz + ez) / 2 + (dx / d) * bulge;
      const color = l.bidirectional ? '#ffb020' : '#ff7a45';
      ctx.strokeStyle = color;
      ctx.fillStyle = color;
      ctx.lineWidth = 2 * px;
      ctx.beginPath();
      ctx.moveTo(sx, sz);
      ctx.quadraticCurveTo(cx, cz, ex, ez);
      ctx.stroke();
      const head = 9 * px;
      arrowHead(ex, ez, Math.atan2(ez - cz, ex - cx), head);
      if (l.bidirectional) arrowHead(sx, sz, Math.atan2(sz - cz, sx - cx), head);
      const r = Math.max(l.radius || 0, 3 * px);
      ctx.lineWidth = 1.2 * px;
      for (const [x, z] of [[sx, sz], [ex, ez]]) {
        ctx.beginPath();
        ctx.arc(x, z, r, 0, 2 * Math.PI);
        ctx.stroke();
      }
    }
  }

  function marker(pt, color, px, hollow) {
    ctx.beginPath();
    ctx.arc(pt[0], pt[2], 6 * px, 0, 2 * Math.PI);
    ctx.lineWidth = 2 * px;
    ctx.strokeStyle = '#0d1117';
    if (hollow) {
      ctx.strokeStyle = color;
      ctx.stroke();
      return;
    }
    ctx.fillStyle = color;
    ctx.fill();
    ctx.stroke();
  }

  function fillPolys(m, ids, fill, stroke, px) {
    fillBatched(m, ids, fill);
    if (stroke) {
      ctx.strokeStyle = stroke;
      ctx.lineWidth = 1.2 * px;
      for (const id of ids) { const p = m.polys[id]; if (p) ctx.stroke(p.path); }
    }
  }

  function polyline(pts, color, width, px) {
    if (pts.length < 2) return;
    ctx.beginPath();
    pts.forEach((c, i) => (i ? ctx.lineTo(c[0], c[2]) : ctx.moveTo(c[0], c[2])));
    ctx.lineJoin = 'round';
    ctx.strokeStyle = 'rgba(0, 0, 0, 0.6)';
    ctx.lineWidth = (width + 2.5) * px;
    ctx.stroke();
    ctx.strokeStyle = color;
    ctx.lineWidth = width * px;
    ctx.stroke();
  }

  function drawPathOverlay(m, px) {
    const P = state.path, r = P.result;
    if (r) {
      const expanded = r.expanded || r.expanded_polygons;
      if ($('show-expanded').checked && Array.isArray(expanded))
        fillPolys(m, expanded, 'rgba(255, 90, 210, 0.22)', 'rgba(255, 120, 220, 0.55)', px);
      if ($('show-corridor').checked && Array.isArray(r.polygons))
        fillPolys(m, r.polygons, 'rgba(255, 255, 255, 0.2)', 'rgba(255, 255, 255, 0.45)', px);
      const corners = r.corners || [];
      polyline(corners, '#ffe14d', 3, px);
      ctx.fillStyle = '#ffe14d';
      for (const c of corners.slice(1, -1)) {
        ctx.beginPath();
        ctx.arc(c[0], c[2], 3.5 * px, 0, 2 * Math.PI);
        ctx.fill();
      }
    }
    if (P.start) marker(r && r.start ? r.start : P.start, '#3fb950', px);
    if (P.end) {
      if (r && r.status === 'partial') {
        marker(P.end, '#f85149', px, true);
        marker(r.end, '#f0883e', px);
      } else marker(r && r.end ? r.end : P.end, '#f85149', px);
    }
  }

  function drawRay(px) {
    const R = state.ray, r = R.result;
    if (!R.start) return;
    if (r && Array.isArray(r.polygons)) fillPolys(state.mesh, r.polygons, 'rgba(120, 200, 255, 0.18)', null, px);
    if (R.end) {
      ctx.setLineDash([6 * px, 5 * px]);
      ctx.strokeStyle = 'rgba(255, 255, 255, 0.5)';
      ctx.lineWidth = 1.5 * px;
      ctx.beginPath();
      ctx.moveTo(R.start[0], R.start[2]);
      ctx.lineTo(R.end[0], R.end[2]);
      ctx.stroke();
      ctx.setLineDash([]);
    }
    if (r && r.point) {
      polyline([R.start, r.point], r.hit ? '#ff6b6b' : '#7bdff2', 2.5, px);
      if (r.hit) {
        const [hx, , hz] = r.point;
        ctx.strokeStyle = '#ff6b6b';
        ctx.lineWidth = 2.5 * px;
        const s = 6 * px;
        ctx.beginPath();
        ctx.moveTo(hx - s, hz - s); ctx.lineTo(hx + s, hz + s);
        ctx.moveTo(hx - s, hz + s); ctx.lineTo(hx + s, hz - s);
        ctx.stroke();
        if (r.normal) {
          const len = 40 * px;
          const nx = hx + r.normal[0] * len, nz = hz + r.normal[2] * len;
          ctx.strokeStyle = '#ffffff';
          ctx.fillStyle = '#ffffff';
          ctx.lineWidth = 2 * px;
          ctx.beginPath();
          ctx.moveTo(hx, hz); ctx.lineTo(nx, nz);
          ctx.stroke();
          arrowHead(nx, nz, Math.atan2(r.normal[2], r.normal[0]), 8 * px);
        }
      }
    }
    marker(r && r.start ? r.start : R.start, '#3fb950', px);
  }

  /* Where agent a is drawn at time now: steps arrive a few times a second,
     so the drawing slides from where the agent was shown when the step's
     answer came to its new position over one step interval. */
  function shownPosition(a, now) {
    if (!a.from || !a.t0 || !(state.sim.interval > 0)) return a.position;
    const t = Math.min(Math.max((now - a.t0) / state.sim.interval, 0), 1);
    return a.position.map((v, i) => a.from[i] + (v - a.from[i]) * t);
  }

  function drawAgents(px, now) {
    if (state.target) {
      const [tx, , tz] = state.target, s = 9 * px;
      ctx.strokeStyle = '#ffffff';
      ctx.lineWidth = 2 * px;
      ctx.beginPath();
      ctx.arc(tx, tz, s, 0, 2 * Math.PI);
      ctx.moveTo(tx - 1.6 * s, tz); ctx.lineTo(tx + 1.6 * s, tz);
      ctx.moveTo(tx, tz - 1.6 * s); ctx.lineTo(tx, tz + 1.6 * s);
      ctx.stroke();
      /* The target's floor: its height, so a target on a deck and one on the
         floor under it are told apart from above. */
      ctx.save();
      ctx.setTransform(state.size.dpr, 0, 0, state.size.dpr, 0, 0);
      const c = worldToCanvas(tx, tz);
      ctx.fillStyle = '#ffffff';
      ctx.font = '11px system-ui, sans-serif';
      ctx.fillText(`y ${fmt(state.target[1], 2)}`, c.x + 14, c.y - 10);
      ctx.restore();
    }
    for (const a of state.agents) {
      const [x, , z] = shownPosition(a, now);
      /* Next corners: where the agent is heading. */
      if (a.corners && a.corners.length) {
        ctx.setLineDash([4 * px, 4 * px]);
        ctx.strokeStyle = 'rgba(255, 255, 255, 0.45)';
        ctx.lineWidth = 1.2 * px;
        ctx.beginPath();
        ctx.moveTo(x, z);
        for (const c of a.corners) ctx.lineTo(c[0], c[2]);
        ctx.stroke();
        ctx.setLineDash([]);
        ctx.fillStyle = 'rgba(255, 255, 255, 0.7)';
        for (const c of a.corners) { ctx.beginPath(); ctx.arc(c[0], c[2], 2.5 * px, 0, 2 * Math.PI); ctx.fill(); }
      }
      ctx.beginPath();
      ctx.arc(x, z, Math.max(a.radius, 3 * px), 0, 2 * Math.PI);
      ctx.fillStyle = a.error ? '#f85149' : a.color;
      ctx.globalAlpha = a.arrived ? 0.55 : 0.9;
      ctx.fill();
      ctx.globalAlpha = 1;
      ctx.lineWidth = 1.5 * px;
      ctx.strokeStyle = a.avoiding ? '#ffffff' : '#0d1117';
      ctx.stroke();
      /* Seen from above, an agent on the floor under its target looks
         arrived: a dotted red ring says it is on another floor. */
      if (a.goal && Math.abs(a.position[1] - a.goal[1]) > 1.5 && distXZ(a.position, a.goal) < 3) {
        ctx.setLineDash([2 * px, 2 * px]);
        ctx.strokeStyle = '#f85149';
        ctx.beginPath();
        ctx.arc(x, z, Math.max(a.radius, 3 * px) + 3 * px, 0, 2 * Math.PI);
        ctx.stroke();
        ctx.setLineDash([]);
      }
      if (state.inspect === a.id) {
        drawSamples(a, x, z, px);
        ctx.strokeStyle = '#4da3ff';
        ctx.lineWidth = 2.5 * px;
        ctx.beginPath();
        ctx.arc(x, z, Math.max(a.radius, 3 * px) + 5 * px, 0, 2 * Math.PI);
        ctx.stroke();
      }
      /* Velocity: the distance covered in half a second. */
      const vx = a.velocity[0] * 0.5, vz = a.velocity[2] * 0.5;
      if (Math.hypot(vx, vz) > 2 * px) {
        ctx.strokeStyle = a.color;
        ctx.fillStyle = a.color;
        ctx.lineWidth = 2 * px;
        ctx.beginPath();
        ctx.moveTo(x, z); ctx.lineTo(x + vx, z + vz);
        ctx.stroke();
        arrowHead(x + vx, z + vz, Math.atan2(vz, vx), 6 * px);
      }
    }
  }

  /* The inspected agent's avoidance samples (the last step's "debug"
     answer), each at position + 0.5 s of its velocity, as the velocity
     arrow: green (lowest penalty) to red (highest); the chosen one ringed
     in white, the desired one (the first sample) outlined. What was drawn
     is kept in state.drawnSamples for tests. */
  function drawSamples(a, x, z, px) {
    const av = a.avoidance;
    state.drawnSamples = null;
    if (!av || !Array.isArray(av.samples) || !av.samples.length) return;
    let lo = Infinity, hi = -Infinity;
    for (const s of av.samples) { lo = Math.min(lo, s[3]); hi = Math.max(hi, s[3]); }
    const drawn = [];
    const r = 3 * px;
    for (let i = 0; i < av.samples.length; i++) {
      const s = av.samples[i];
      const k = hi > lo ? (s[3] - lo) / (hi - lo) : 0;
      const sx = x + s[0] * 0.5, sz = z + s[2] * 0.5;
      ctx.fillStyle = `hsl(${Math.round(120 * (1 - k))}, 85%, 50%)`;
      ctx.beginPath();
      ctx.arc(sx, sz, r, 0, 2 * Math.PI);
      ctx.fill();
      if (i === 0) { ctx.strokeStyle = '#0d1117'; ctx.lineWidth = 1 * px; ctx.stroke(); }
      drawn.push([s[0], s[1], s[2], s[3]]);
    }
    const c = av.chosen;
    ctx.strokeStyle = '#ffffff';
    ctx.lineWidth = 2 * px;
    ctx.beginPath();
    ctx.arc(x + c[0] * 0.5, z + c[2] * 0.5, r + 3 * px, 0, 2 * Math.PI);
    ctx.stroke();
    state.drawnSamples = { id: a.id, samples: drawn, chosen: c.slice() };
  }

  /* ------------------------------------------------------------ the panel */

  function fmt(n, digits) {
    if (typeof n !== 'number' || !isFinite(n)) return '–';
    return n.toFixed(digits === undefined ? 2 : digits);
  }
  const fmtPt = (p) => (Array.isArray(p) ? '(' + p.map((v) => fmt(v, 2)).join(', ') + ')' : '–');

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

  function renderMeshList() {
    const ul = $('mesh-list');
    ul.replaceChildren();
    if (!state.meshes.length) {
      const li = document.createElement('li');
      li.className = 'empty';
      li.textContent = 'No navmesh stored yet: upload one.';
      ul.append(li);
      return;
    }
    for (const m of state.meshes) {
      const li = document.createElement('li');
      li.dataset.name = m.name;
      if (m.name === state.meshName) li.className = 'selected';
      const grow = document.createElement('div');
      grow.className = 'grow';
      const name = document.createElement('div');
      name.className = 'name';
      name.textContent = m.name;
      const meta = document.createElement('div');
      meta.className = 'meta';
      meta.textContent = `v${m.version} · ${m.polygons} polys · ${m.components} comp · ${fmt(m.area, 0)} m²`;
      grow.append(name, meta);
      li.append(grow, deleteButton(`Delete ${m.name}`, () => deleteMesh(m.name)));
      li.addEventListener('click', () => selectMesh(m.name));
      ul.append(li);
    }
  }

  /* A list row's delete button, shared by navmeshes, levels and volumes:
     two clicks, the first arms it for 3 s, so a stray click deletes nothing. */
  function deleteButton(title, onDelete) {
    const del = document.createElement('button');
    del.type = 'button';
    del.className = 'del';
    del.textContent = 'delete';
    del.title = title;
    del.addEventListener('click', (ev) => {
      ev.stopPropagation();
      if (!del.classList.contains('confirm')) {
        del.classList.add('confirm');
        del.textContent = 'confirm?';
        setTimeout(() => { del.classList.remove('confirm'); del.textContent = 'delete'; }, 3000);
        return;
      }
      onDelete();
    });
    return del;
  }

  function renderMeshInfo() {
    const m = state.meta;
    if (!m) { setKv('mesh-info', [['none selected', '']]); return; }
    const b = m.bounds || [[0, 0, 0], [0, 0, 0]];
    const rows = [
      ['name', m.name],
      ['version', String(m.version)],
      ['vertices', String(m.vertices)],
      ['polygons', String(m.polygons)],
      ['links', String(m.links)],
      ['components', state.mesh ? `${m.components} (viewer: ${state.mesh.ncomp})` : String(m.components)],
      ['area', `${fmt(m.area, 1)} m²`],
      ['bounds min', fmtPt(b[0])],
      ['bounds max', fmtPt(b[1])],
      ['updated', m.updated_at || '–'],
    ];
    if (Array.isArray(m.profiles)) rows.splice(2, 0, ['profiles', m.profiles.join(', ')]);
    if (m.source) {
      const st = m.source.settings || {};
      rows.push(['baked from', `level ${m.source.level} v${m.source.level_version}`]);
      rows.push(['settings', `cell ${st.cell_size} × ${st.cell_height} m · tile ${st.tile_size} · ${st.partition}`]);
    }
    setKv('mesh-info', rows);
  }

  function renderLegend() {
    const el = $('legend');
    el.replaceChildren();
    const line = (html) => { const d = document.createElement('div'); d.innerHTML = html; el.append(d); };
    if (volume && volume.active()) {
      /* the 3-D view shows the flight volume's tools: their legend alone */
      for (const l of volume.legend()) line(l);
      return;
    }
    if (state.mesh) {
      const b = state.mesh.bounds;
      line(`height <span class="grad"></span> ${fmt(b.minY, 1)} … ${fmt(b.maxY, 1)} m`);
      line(`hue = connected component (${state.mesh.ncomp})`);
      if (state.mesh.special.length)
        line(`hatched = area ≠ ${state.mesh.mainArea} (${state.mesh.special.length} polys)`);
    }
    line('<span class="sw" style="border-color:#03060a;border-top-width:4px;background:#555"></span>wall (boundary edge)');
    line('<span class="sw" style="border-color:#ffb020"></span>two-way link  <span class="sw" style="border-color:#ff7a45;margin-left:6px"></span>one-way');
    if (state.tool === 'agents' || state.agents.length) {
      line('<span class="sw" style="border-color:#ffd166;border-top-width:8px;border-radius:4px"></span>agent (disc = radius; faded = arrived; red = error)');
      line('<span class="sw" style="border-color:#ffffff;border-top-width:2px"></span>white rim = avoiding · arrow = 0.5 s of velocity');
      line('<span class="sw" style="border-color:rgba(255,255,255,.5);border-top-style:dashed"></span>next corners · ⊕ target (its floor height shown)');
      line('<span class="sw" style="border-color:#f85149;border-top-style:dotted"></span>agent on another floor than its target');
      if (state.inspect) line('<span class="sw" style="border-color:#3ddc68;border-top-width:6px;border-radius:3px"></span><span class="sw" style="border-color:#e8413c;border-top-width:6px;border-radius:3px"></span>inspected agent\'s avoidance samples at 0.5 s (green = low penalty, red = high; white ring = chosen)');
    }
    if (state.tool === 'nearest') line('<span class="sw" style="border-color:#50e6c8;border-top-style:dashed"></span>clicked point (ring) → nearest mesh point, its polygon outlined');
    if (state.tool === 'batch') {
      line('<span class="sw" style="border-color:#ff6bd0"></span><span class="sw" style="border-color:#6bffb0"></span>one hue per pair · green start, red end');
      line('<span class="sw" style="border-color:#f85149;border-top-style:dashed"></span>slot answered with an error');
    }
    if (state.level) line('<span class="sw" style="border-color:rgba(190,200,215,.6)"></span>level geometry (under the mesh)');
    if (state.tool === 'path') {
      line('<span class="sw" style="border-color:#ffe14d"></span>path corners');
      line('<span class="sw" style="border-color:rgba(255,255,255,.6)"></span>corridor  <span class="sw" style="border-color:#ff78dc;margin-left:6px"></span>expanded');
    }
  }

  function renderPathOut() {
    const P = state.path, r = P.result;
    const rows = [];
    if (!r) {
      rows.push(['start', P.start ? fmtPt(P.start) : 'click on the mesh']);
      if (P.start) rows.push(['end', 'click on the mesh']);
    } else {
      rows.push(['status', r.status, r.status === 'complete' ? 'good' : 'warn']);
      rows.push(['length', `${fmt(r.length, 3)} m`]);
      rows.push(['corners', String((r.corners || []).length)]);
      rows.push(['polygons', String((r.polygons || []).length)]);
      rows.push(['algorithm', r.algorithm || '–']);
      rows.push(['cache', r.cache || '–', r.cache === 'hit' ? 'good' : '']);
      rows.push(['nodes expanded', r.nodes_expanded !== undefined ? String(r.nodes_expanded) : '–']);
      const ex = r.expanded || r.expanded_polygons;
      rows.push(['expanded polys', Array.isArray(ex) ? String(ex.length) : 'tick "expanded"']);
      if (Array.isArray(r.links) && r.links.length)
        rows.push(['links', r.links.map((l) => `#${l.index} ${l.kind || ''}`).join(', ')]);
      rows.push(['latency', `${fmt(P.ms, 1)} ms (round trip)`]);
      rows.push(['start', fmtPt(r.start)]);
      rows.push(['end', fmtPt(r.end)]);
    }
    setKv('path-out', rows);
    const corners = r && Array.isArray(r.corners) ? r.corners.length : 0;
    app.dataset.pathCorners = String(corners);
    app.dataset.pathStatus = r ? r.status : '';
    app.dataset.pathLength = r ? String(r.length) : '';
    app.dataset.pathCache = r && r.cache ? r.cache : '';
    const ex = r && (r.expanded || r.expanded_polygons);
    app.dataset.pathExpanded = Array.isArray(ex) ? String(ex.length) : '';
  }

  function renderRayOut() {
    const R = state.ray, r = R.result;
    if (!r) {
      setKv('ray-out', [['start', R.start ? fmtPt(R.start) : 'click on the mesh']]);
      return;
    }
    setKv('ray-out', [
      ['hit', r.hit ? 'yes (wall)' : 'no (clear)', r.hit ? 'warn' : 'good'],
      ['t', fmt(r.t, 4)],
      ['point', fmtPt(r.point)],
      ['normal', r.hit ? fmtPt(r.normal) : '–'],
      ['polygons', Array.isArray(r.polygons) ? String(r.polygons.length) : '–'],
      ['latency', `${fmt(R.ms, 1)} ms`],
    ]);
    app.dataset.rayHit = String(!!r.hit);
  }

  function renderReachOut() {
    const R = state.reach, r = R.result;
    if (!r) {
      setKv('reach-out', [['start', R.start ? fmtPt(R.start) : 'click on the mesh']]);
      return;
    }
    setKv('reach-out', [
      ['polygons', `${(r.polygons || []).length} of ${state.mesh ? state.mesh.polys.length : '?'}`],
      ['area', `${fmt(r.area, 1)} m²`],
      ['latency', `${fmt(R.ms, 1)} ms`],
    ]);
    app.dataset.reachPolygons = String((r.polygons || []).length);
  }

  function renderAgentsOut() {
    const n = state.agents.length;
    const arrived = state.agents.filter((a) => a.arrived).length;
    const moved = state.agents.filter((a) => a.d0 !== undefined && distXZ(a.position, a.goal) < a.d0 - 0.25).length;
    const errs = state.agents.filter((a) => a.error).length;
    setKv('agents-out', [
      ['agents', String(n)],
      ['target', state.target ? fmtPt(state.target) : (n ? 'click "sets target", then the mesh' : '–')],
      ['moved closer', String(moved)],
      ['arrived', String(arrived)],
      ['errors', String(errs), errs ? 'bad' : ''],
      ['link traversals', String(state.sim.traversals)],
      ['steps', String(state.sim.steps)],
      ['step latency', state.sim.steps ? `${fmt(state.sim.ms, 1)} ms` : '–'],
    ]);
    app.dataset.agents = String(n);
    app.dataset.agentsMoved = String(moved);
    app.dataset.agentsArrived = String(arrived);
    app.dataset.simSteps = String(state.sim.steps);
    if (state.inspect) renderInspect();
    $('play').textContent = state.sim.running ? 'Pause' : 'Play';
  }

  /* The inspected agent: what the last step answered for it and its
     neighbours (other agents within 3 m plus both radii, as the service's
     avoidance considers nearby agents). */
  function renderInspect() {
    const a = state.agents.find((x) => x.id === state.inspect);
    const box = $('agent-inspect');
    if (!a) { box.hidden = true; app.dataset.inspect = ''; return; }
    box.hidden = false;
    const near = state.agents.filter((b) => b !== a && distXZ(a.position, b.position) <= 3 + a.radius + b.radius)
      .map((b) => `${b.id} (${fmt(distXZ(a.position, b.position) - a.radius - b.radius, 2)} m gap)`);
    setKv('inspect-out', [
      ['id', a.id],
      ['position', fmtPt(a.position)],
      ['velocity', `${fmtPt(a.velocity)} · ${fmt(Math.hypot(a.velocity[0], a.velocity[2]), 2)} m/s`],
      ['target', a.goal ? `${fmtPt(a.goal)}${Math.abs(a.position[1] - a.goal[1]) > 1.5 ? ' (another floor)' : ''}` : '–'],
      ['arrived', String(!!a.arrived), a.arrived ? 'good' : ''],
      ['avoiding', String(!!a.avoiding)],
      ['avoidance', a.avoidance ? `${a.avoidance.samples.length} samples, chose ${fmtPt(a.avoidance.chosen)} (penalty ${fmt(Math.min(...a.avoidance.samples.map((s) => s[3])), 3)})`
        : a.avoidance === undefined ? 'asked for on the next step' : 'not sampled this step (nobody in the way)'],
      ['corners', a.corners && a.corners.length ? a.corners.map(fmtPt).join(' → ') : '–'],
      ['action', a.action ? `${a.action.type} ${fmtPt(a.action.start)} → ${fmtPt(a.action.end)}` : '–'],
      ['neighbours', near.length ? near.join(', ') : 'none within 3 m'],
      ['error', a.error ? `${a.error.code}: ${a.error.message}` : '–', a.error ? 'bad' : ''],
    ]);
    app.dataset.inspect = a.id;
  }

  function setTool(tool) {
    state.tool = tool;
    app.dataset.tool = tool;
    for (const b of $('tools').querySelectorAll('button')) b.classList.toggle('active', b.dataset.tool === tool);
    for (const p of document.querySelectorAll('.tool-pane')) p.hidden = p.dataset.pane !== tool;
    renderLegend();
    updateUrl();
    redraw();
  }

  function setAgentMode(mode) {
    state.agentMode = mode;
    for (const b of $('agent-mode').querySelectorAll('button')) b.classList.toggle('active', b.dataset.mode === mode);
  }

  /* --------------------------------------------------------------- meshes */

  async function loadList(selectName) {
    try {
      const { data } = await api('GET', '/v1/navmeshes');
      state.meshes = (data && data.navmeshes) || [];
    } catch (e) {
      showError(e, 'listing navmeshes');
      return;
    }
    /* Re-rendered only when it changed, so a poll never disarms a delete
       button waiting for its confirming click. */
    const sig = JSON.stringify(state.meshes.map((m) => [m.name, m.version, m.polygons, m.components]));
    if (sig !== state.listSig || selectName) { state.listSig = sig; renderMeshList(); }
    const want = selectName || state.meshName || parseHash().name;
    const found = state.meshes.find((m) => m.name === want);
    if (found) {
      if (found.name !== state.meshName) selectMesh(found.name);
      else if (found.version !== (state.meta && state.meta.version)) selectMesh(found.name, true); /* replaced */
    } else if (state.meshes.length) selectMesh(state.meshes[0].name);
    else clearMesh();
  }

  function clearMesh() {
    state.meshName = null;
    state.meta = null;
    state.mesh = null;
    app.dataset.mesh = '';
    app.dataset.ready = '0';
    state.profile = '';
    resetTools();
    renderProfiles();
    loadLevelOverlay();
    renderMeshInfo();
    renderLegend();
    redraw();
  }

  /* Loads and draws a mesh; `replaced` when the same name has a new version
     (results drawn for the old geometry are dropped, the view is kept). */
  async function selectMesh(name, replaced) {
    const seq = ++state.loadSeq;
    const changed = name !== state.meshName;
    if (replaced && !changed) {
      const fitted = state.viewFitted;
      resetTools();
      state.viewFitted = fitted;
    }
    state.meshName = name;
    app.dataset.ready = '0';
    renderMeshList();
    if (changed) {
      state.mesh = null;
      resetTools();
      /* The profile a link or a reload asks for, else the default. */
      const h = parseHash();
      state.profile = h.name === name ? h.params.get('profile') || '' : '';
    }
    redraw();
    try {
      const t0 = performance.now();
      let [meta, geo] = await Promise.all([api('GET', meshUrl(name)), fetchGeometry(name).catch((e) => e)]);
      if (seq !== state.loadSeq) return; /* a later selection won */
      if (geo instanceof ApiError && state.profile && geo.status === 400) {
        /* A profile this mesh does not have (an old link): say so, draw the default. */
        showError(geo, `profile ${state.profile}`);
        state.profile = '';
        geo = await fetchGeometry(name);
        if (seq !== state.loadSeq) return;
      } else if (geo instanceof Error) throw geo;
      const t1 = performance.now();
      state.meta = meta.data;
      state.mesh = prepareMesh(geo);
      state.perf.fetchMs = t1 - t0;
      state.perf.prepareMs = performance.now() - t1;
    } catch (e) {
      if (seq !== state.loadSeq) return;
      showError(e, `loading ${name}`);
      state.mesh = null;
      state.meta = null;
      renderMeshInfo();
      redraw();
      return;
    }
    app.dataset.mesh = name;
    app.dataset.profile = state.profile;
    renderProfiles();
    app.dataset.meshPolygons = String(state.mesh.polys.length);
    app.dataset.components = String(state.mesh.ncomp);
    renderMeshInfo();
    renderLegend();
    if (changed || !state.viewFitted) { fitView(); state.viewFitted = true; }
    if (state.mode === '3d' && view3d) { load3d(changed); state.mode3dMesh = state.mesh; }
    loadLevelOverlay();
    /* A query in the address for this mesh (a shared link, a reload) is run once. */
    const fromUrl = parseHash();
    if (changed && fromUrl.name === name && [...fromUrl.params.keys()].length) applyUrlQuery(fromUrl.params);
    else updateUrl();
    app.dataset.ready = '1';
    redraw();
  }

  function resetTools() {
    state.hover = null; /* polygon ids refer to the previous mesh */
    state.path = { start: null, end: null, result: null, ms: 0, seq: 0 };
    state.ray = { start: null, end: null, result: null, ms: 0 };
    state.reach = { start: null, result: null, set: null, ms: 0, seq: 0 };
    state.agents = [];
    state.target = null;
    state.sim.steps = 0;
    state.sim.traversals = 0;
    state.viewFitted = false;
    state.batch = { pairs: [], pending: null, result: null, ms: 0, seq: state.batch.seq + 1, runs: state.batch.runs };
    state.nearest = { point: null, result: null, ms: 0 };
    renderBatchOut();
    renderNearestOut();
    renderPathOut();
    renderRayOut();
    renderReachOut();
    renderAgentsOut();
  }

  /* Name for an uploaded file: the field if filled, else the file name
     without its last extension, reduced to the allowed characters. */
  function uploadName(file) {
    const typed = $('upload-name').value.trim();
    if (typed) return typed;
    let base = file.name.replace(/\.[^.]*$/, '').replace(/\.navmesh$/, '');
    base = base.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 64);
    return base || 'mesh';
  }

  async function uploadFile(file) {
    if (!file) return;
    const name = uploadName(file);
    const isObj = /\.obj$/i.test(file.name);
    const type = isObj ? 'model/obj' : 'application/json';
    try {
      const { data, status } = await api('PUT', meshUrl(name), file, type);
      showInfo(`${status === 201 ? 'Created' : 'Replaced'} ${name}: version ${data.version}, ${data.polygons} polygons, ${data.components} component(s)`);
      $('upload-name').value = '';
      await loadList(name);
    } catch (e) {
      /* A raw level OBJ (walls, degenerate faces) is no navmesh: offer to
         store it as a level and bake it instead of only failing. */
      if (isObj && e.code === 'invalid_navmesh' && bake) {
        app.dataset.lastError = e.code;
        bake.offerLevel(file, name, e);
        return;
      }
      showError(e, `uploading ${file.name} as ${name}`);
    }
  }

  async function deleteMesh(name) {
    try {
      await api('DELETE', meshUrl(name));
      showInfo(`Deleted ${name}`);
      if (state.meshName === name) clearMesh();
      await loadList();
    } catch (e) {
      showError(e, `deleting ${name}`);
    }
  }

  /* ---------------------------------------------------------------- tools */

  /* Numbers from a comma- or space-separated field; null when one is not a number. */
  function numbers(text) {
    const parts = text.split(/[\s,]+/).filter((t) => t !== '');
    const out = parts.map(Number);
    return out.every((v) => Number.isFinite(v)) ? out : null;
  }

  /*
   * The filter and limit fields as request fields (empty fields are left
   * out, so the service's defaults apply). Throws an ApiError naming the
   * field when one does not parse, before anything is sent.
   */
  function queryOptions() {
    const o = {};
    const bad = (field, what) => { throw new ApiError('bad_input', `${field}: ${what}`, 0); };
    const costs = $('opt-costs').value.trim();
    if (costs) {
      o.area_costs = {};
      for (const item of costs.split(',').map((t) => t.trim()).filter(Boolean)) {
        const m = item.match(/^(\d{1,2})\s*:\s*([0-9.eE+-]+)$/);
        if (!m || !Number.isFinite(Number(m[2]))) bad('area costs', `"${item}" is not area:cost`);
        o.area_costs[String(Number(m[1]))] = Number(m[2]);
      }
    }
    const ex = $('opt-exclude').value.trim();
    if (ex) { o.exclude_areas = numbers(ex); if (!o.exclude_areas) bad('exclude areas', 'not a list of area ids'); }
    const ext = $('opt-extents').value.trim();
    if (ext) { o.extents = numbers(ext); if (!o.extents || o.extents.length !== 3) bad('extents', 'three numbers hx, hy, hz'); }
    const mn = $('opt-max-nodes').value.trim();
    if (mn) { o.max_nodes = Number(mn); if (!Number.isInteger(o.max_nodes) || o.max_nodes < 1) bad('max_nodes', 'a positive integer'); }
    return profiled(o);
  }

  /* The path request the panel describes. The expanded set needs debug:
     true, which the service answers around its cache (bypass); without the
     toggle the cache is used and the panel shows hit / miss. */
  function pathBody() {
    const P = state.path;
    const body = Object.assign({ start: P.start, end: P.end }, queryOptions());
    if ($('show-expanded').checked) body.debug = true;
    if (!$('use-cache').checked) body.cache = false;
    return body;
  }

  /*
   * Runs the path query. One request at a time: while one is in flight
   * (a marker being dragged), the latest wish waits and is sent when it
   * returns, so dragging re-routes as fast as navd answers without queueing
   * stale queries.
   */
  async function runPath(endClicked) {
    const P = state.path, name = state.meshName;
    if (P.inflight) { P.again = true; return; }
    let body;
    try {
      body = pathBody();
    } catch (e) {
      showError(e, 'path options');
      return;
    }
    const seq = ++P.seq;
    P.inflight = true;
    try {
      const { data, ms } = await api('POST', meshUrl(name, '/path'), body);
      if (seq !== P.seq || name !== state.meshName) return;
      P.result = data;
      P.ms = ms;
      P.runs = (P.runs || 0) + 1;
      app.dataset.pathRuns = String(P.runs);
    } catch (e) {
      if (seq !== P.seq) return;
      P.result = null;
      /* An end click the service refused (off the mesh: 422) is not kept,
         so the next click sets the end again instead of starting over. */
      if (endClicked === true && !P.dragging) P.end = null;
      showError(e, 'path');
    } finally {
      P.inflight = false;
    }
    updateUrl();
    renderPathOut();
    redraw();
    if (P.again) { P.again = false; if (P.start && P.end) runPath(); }
  }

  /* ------------------------------------------------------------ profiles */

  /* The export of the chosen profile's mesh (the upload format). */
  function exportQuery() {
    return '?format=json' + (state.profile ? '&profile=' + encodeURIComponent(state.profile) : '');
  }

  const meshProfiles = () => (state.meta && Array.isArray(state.meta.profiles) && state.meta.profiles.length ? state.meta.profiles : ['default']);

  /* Every query and step carries the chosen profile (none for the default,
     which the service takes when the field is absent). */
  function profiled(body) {
    if (state.profile) body.profile = state.profile;
    return body;
  }

  /* The picker lists the mesh's profiles, the default first. */
  function renderProfiles() {
    const sel = $('opt-profile'), list = meshProfiles();
    sel.replaceChildren();
    for (const [i, p] of list.entries()) {
      const o = document.createElement('option');
      o.value = p;
      o.textContent = i === 0 ? `${p} (default)` : p;
      sel.append(o);
    }
    sel.value = state.profile || list[0];
    sel.disabled = list.length < 2;
    const link = $('export-link');
    link.href = state.meshName ? meshUrl(state.meshName, exportQuery()) : '#';
    app.dataset.profiles = list.join(',');
  }

  /* Switches profile: the drawn mesh is that profile's own (its polygons
     differ with the radius), so it is fetched again; the view and the
     tools' points are kept and their queries re-run. */
  async function setProfile(name) {
    const list = meshProfiles();
    const want = name === list[0] ? '' : name;
    if (want === state.profile || !state.meshName) { renderProfiles(); return; }
    state.profile = want;
    app.dataset.profile = want;
    renderProfiles();
    updateUrl();
    const seq = ++state.loadSeq, mesh = state.meshName;
    app.dataset.ready = '0';
    try {
      const geo = await fetchGeometry(mesh);
      if (seq !== state.loadSeq) return;
      state.mesh = prepareMesh(geo);
    } catch (e) {
      if (seq !== state.loadSeq) return;
      showError(e, `loading profile ${name}`);
      app.dataset.ready = '1';
      return;
    }
    app.dataset.meshPolygons = String(state.mesh.polys.length);
    app.dataset.components = String(state.mesh.ncomp);
    state.hover = null;
    renderMeshInfo();
    renderLegend();
    if (state.mode === '3d' && view3d) { load3d(false); state.mode3dMesh = state.mesh; }
    if (state.path.start && state.path.end) runPath();
    if (state.ray.start && state.ray.end) runRay();
    if (state.reach.start) runReach();
    if (state.batch.pairs.length) runBatch();
    if (state.nearest.point) runNearest();
    app.dataset.ready = '1';
    redraw();
  }

  /* ------------------------------------------------------- level overlay */

  const levelUrl = (name, suffix) => `/v1/levels/${encodeURIComponent(name)}${suffix || ''}`;

  /* Triangles of an OBJ export (v and f lines; faces fan-triangulated, as
     navd stores them), as world xyz, nine numbers per triangle. */
  function parseObjTriangles(text) {
    const v = [], out = [];
    for (const line of text.split('\n')) {
      const t = line.trim().split(/\s+/);
      if (t[0] === 'v' && t.length >= 4) v.push([Number(t[1]), Number(t[2]), Number(t[3])]);
      else if (t[0] === 'f' && t.length >= 4) {
        const idx = t.slice(1).map((w) => { const i = parseInt(w, 10); return i < 0 ? v.length + i : i - 1; });
        for (let k = 1; k + 1 < idx.length; k++)
          for (const i of [idx[0], idx[k], idx[k + 1]]) { const p = v[i] || [0, 0, 0]; out.push(p[0], p[1], p[2]); }
      }
    }
    return new Float64Array(out);
  }

  /* The overlay follows the checkbox and the mesh's source: a baked mesh
     names its level, whose current geometry is fetched once per version. */
  async function loadLevelOverlay() {
    const src = state.meta && state.meta.source;
    const box = $('show-level'), text = $('level-text');
    box.disabled = !src;
    $('level-toggle').title = src ? `Draw level ${src.level} (the geometry this navmesh was baked from) under it`
      : 'This navmesh was uploaded, not baked: it has no level';
    const drop = () => {
      if (state.level) { state.level = null; state.levelSeq++; if (view3d) view3d.setLevel(null); }
      app.dataset.levelTriangles = '';
      renderLegend();
      redraw();
    };
    if (!src || !box.checked) { text.textContent = ''; drop(); return; }
    const mesh = state.meshName;
    try {
      const meta = (await api('GET', levelUrl(src.level))).data;
      const key = `${src.level}@${meta.version}`;
      if (!(state.level && state.level.key === key)) {
        const obj = (await api('GET', levelUrl(src.level, '?format=obj'), undefined, undefined, true)).data;
        if (mesh !== state.meshName || !box.checked) return;
        const tris = parseObjTriangles(obj);
        state.level = { key, name: src.level, version: meta.version, tris, ntri: tris.length / 9, paths: null };
        state.levelSeq++;
      }
      text.textContent = `${src.level} v${meta.version}${meta.version !== src.level_version ? ` (baked from v${src.level_version})` : ''}`;
    } catch (e) {
      showError(e, `level ${src.level}`);
      text.textContent = '(unavailable)';
      drop();
      return;
    }
    app.dataset.levelTriangles = String(state.level.ntri);
    if (view3d) view3d.setLevel(state.level.tris);
    renderLegend();
    redraw();
  }

  /* The level under the navmesh, top-down: a faint fill and its triangle
     edges, in chunks of paths (see PATH_CHUNK). */
  function drawLevel(L, px) {
    if (!L.paths) {
      L.paths = [];
      const T = L.tris;
      let path = null, n = 0;
      for (let o = 0; o < T.length; o += 9) {
        if (!path) { path = new Path2D(); L.paths.push(path); }
        path.moveTo(T[o], T[o + 2]); path.lineTo(T[o + 3], T[o + 5]); path.lineTo(T[o + 6], T[o + 8]); path.closePath();
        if (++n >= PATH_CHUNK) { path = null; n = 0; }
      }
    }
    ctx.fillStyle = 'rgba(190, 200, 215, 0.16)';
    for (const p of L.paths) ctx.fill(p);
    ctx.strokeStyle = 'rgba(190, 200, 215, 0.42)';
    ctx.lineWidth = px;
    for (const p of L.paths) ctx.stroke(p);
  }

  /* -------------------------------------------------------------- nearest */

  /* The closest mesh point to the clicked one (lifted by the height field),
     with the path tool's extents and exclusions and the profile. */
  async function runNearest() {
    const N = state.nearest, name = state.meshName, point = N.point;
    let o;
    try { o = queryOptions(); } catch (e) { showError(e, 'path options'); return; }
    const body = profiled({ point });
    if (o.extents) body.extents = o.extents;
    if (o.exclude_areas) body.exclude_areas = o.exclude_areas;
    try {
      const { data, ms } = await api('POST', meshUrl(name, '/nearest'), body);
      if (N !== state.nearest) return;
      N.result = data;
      N.ms = ms;
    } catch (e) {
      if (N !== state.nearest) return;
      N.result = null;
      showError(e, 'nearest');
    }
    renderNearestOut();
    redraw();
  }

  function renderNearestOut() {
    const N = state.nearest, r = N.result;
    if (!r) setKv('nearest-out', [['point', N.point ? fmtPt(N.point) : 'click anywhere']]);
    else {
      setKv('nearest-out', [
        ['point', fmtPt(N.point)],
        ['nearest', fmtPt(r.point)],
        ['polygon', String(r.polygon)],
        ['distance', `${fmt(r.distance, 3)} m`],
        ['latency', `${fmt(N.ms, 1)} ms`],
      ]);
    }
    app.dataset.nearestPolygon = r ? String(r.polygon) : '';
    app.dataset.nearestDistance = r ? String(r.distance) : '';
  }

  function drawNearest(px) {
    const N = state.nearest;
    if (!N.point) return;
    if (N.result && N.result.point) {
      const q = N.result.point;
      ctx.setLineDash([4 * px, 3 * px]);
      ctx.strokeStyle = '#50e6c8';
      ctx.lineWidth = 2 * px;
      ctx.beginPath();
      ctx.moveTo(N.point[0], N.point[2]); ctx.lineTo(q[0], q[2]);
      ctx.stroke();
      ctx.setLineDash([]);
      if (polyExists(N.result.polygon)) { ctx.strokeStyle = 'rgba(80, 230, 200, 0.8)'; ctx.lineWidth = 2 * px; ctx.stroke(state.mesh.polys[N.result.polygon].path); }
      marker(q, '#50e6c8', px);
    }
    marker(N.point, '#ffffff', px, true);
  }

  const polyExists = (id) => Number.isInteger(id) && state.mesh && id >= 0 && id < state.mesh.polys.length;

  /* ---------------------------------------------------------------- batch */

  /* Every pair in one POST …/paths, with the path tool's filters and the profile. */
  async function runBatch() {
    const B = state.batch, name = state.meshName;
    if (!B.pairs.length || !name) return;
    let opts;
    try { opts = queryOptions(); } catch (e) { showError(e, 'path options'); return; }
    const body = Object.assign({ queries: B.pairs.map(([s, e]) => ({ start: s, end: e })) }, opts);
    if (!$('use-cache').checked) body.cache = false;
    const seq = ++B.seq;
    try {
      const { data, ms } = await api('POST', meshUrl(name, '/paths'), body);
      if (seq !== B.seq || name !== state.meshName) return;
      B.result = (data && data.results) || [];
      B.ms = ms;
      B.runs++;
    } catch (e) {
      if (seq !== B.seq) return;
      B.result = null;
      showError(e, 'batch');
    }
    renderBatchOut();
    redraw();
  }

  function randomPairs(n) {
    if (!state.mesh) return;
    const B = state.batch;
    B.pairs = [];
    B.pending = null;
    for (let i = 0; i < n; i++) {
      const a = randomPoint(state.mesh), b = randomPoint(state.mesh);
      if (a && b) B.pairs.push([a, b]);
    }
    B.result = null;
    runBatch();
  }

  function renderBatchOut() {
    const B = state.batch, res = B.result;
    const rows = [['pairs', String(B.pairs.length) + (B.pending ? ' (+ a start: click its end)' : '')]];
    let complete = 0, partial = 0, errors = 0, total = 0, longest = 0, hits = 0;
    if (res) {
      for (const r of res) {
        if (!r || r.error) { errors++; continue; }
        if (r.status === 'complete') complete++; else partial++;
        total += r.length || 0;
        longest = Math.max(longest, r.length || 0);
        if (r.cache === 'hit') hits++;
      }
      const ok = complete + partial;
      rows.push(['complete', String(complete), complete === res.length ? 'good' : '']);
      rows.push(['partial', String(partial), partial ? 'warn' : '']);
      rows.push(['errors', String(errors), errors ? 'bad' : '']);
      rows.push(['length', ok ? `${fmt(total, 1)} m in all · mean ${fmt(total / ok, 2)} · longest ${fmt(longest, 2)}` : '–']);
      rows.push(['cache hits', `${hits} of ${res.length}`]);
      rows.push(['round trip', `${fmt(B.ms, 1)} ms for ${res.length} · ${fmt(B.ms / Math.max(res.length, 1), 2)} ms per path`]);
    } else if (!B.pairs.length) rows.push(['', 'click a start and an end, or draw random pairs']);
    setKv('batch-out', rows);
    app.dataset.batchPairs = String(B.pairs.length);
    app.dataset.batchRuns = String(B.runs);
    app.dataset.batchComplete = res ? String(complete) : '';
    app.dataset.batchErrors = res ? String(errors) : '';
    app.dataset.batchTotal = res ? String(total) : '';
  }

  const batchColor = (i) => `hsl(${((i * 137.508) % 360).toFixed(1)}, 85%, 66%)`;

  function drawBatch(px) {
    const B = state.batch, res = B.result || [];
    B.pairs.forEach(([s, e], i) => {
      const r = res[i];
      if (r && Array.isArray(r.corners)) polyline(r.corners, batchColor(i), 2, px);
      else {
        /* No answer yet, or an error in this slot: a dashed line between the points. */
        ctx.setLineDash([5 * px, 4 * px]);
        ctx.strokeStyle = r && r.error ? '#f85149' : 'rgba(255, 255, 255, 0.4)';
        ctx.lineWidth = 1.5 * px;
        ctx.beginPath();
        ctx.moveTo(s[0], s[2]); ctx.lineTo(e[0], e[2]);
        ctx.stroke();
        ctx.setLineDash([]);
      }
      for (const [p, c] of [[s, '#3fb950'], [e, '#f85149']]) {
        ctx.fillStyle = c;
        ctx.beginPath();
        ctx.arc(p[0], p[2], 3.5 * px, 0, 2 * Math.PI);
        ctx.fill();
      }
    });
    if (B.pending) marker(B.pending, '#3fb950', px);
  }

  /* ------------------------------------------------------ address & copy */

  const fmtUrlPt = (p) => p.map((v) => +v.toFixed(3)).join(',');

  /* The address holds the mesh and the path query (#name?start=..&end=..&..),
     so a link reproduces the query and a reload restores it. */
  function updateUrl() {
    if (!state.meshName) return;
    const q = new URLSearchParams();
    const P = state.path;
    if (state.tool !== 'path') q.set('tool', state.tool);
    if (P.start) q.set('start', fmtUrlPt(P.start));
    if (P.start && P.end) q.set('end', fmtUrlPt(P.end));
    for (const [id, key] of [['opt-costs', 'costs'], ['opt-exclude', 'exclude'], ['opt-extents', 'extents'],
      ['opt-max-nodes', 'max_nodes']]) {
      const v = $(id).value.trim();
      if (v) q.set(key, v);
    }
    if (state.profile) q.set('profile', state.profile);
    if ($('show-expanded').checked) q.set('expanded', '1');
    const qs = q.toString();
    const want = '#' + encodeURIComponent(state.meshName) + (qs ? '?' + qs : '');
    if (location.hash !== want) history.replaceState(null, '', want);
  }

  /* The address's parts: {name, params}. */
  function parseHash() {
    const h = location.hash.replace(/^#/, '');
    const i = h.indexOf('?');
    return { name: decodeURIComponent(i < 0 ? h : h.slice(0, i)), params: new URLSearchParams(i < 0 ? '' : h.slice(i + 1)) };
  }

  /* Applies a query from the address once its mesh is loaded. */
  function applyUrlQuery(params) {
    const pt = (key) => {
      const v = params.get(key);
      const n = v ? numbers(v) : null;
      return n && n.length === 3 ? n : null;
    };
    for (const [id, key] of [['opt-costs', 'costs'], ['opt-exclude', 'exclude'], ['opt-extents', 'extents'],
      ['opt-max-nodes', 'max_nodes']]) $(id).value = params.get(key) || '';
    if (params.get('costs') || params.get('exclude') || params.get('extents') || params.get('max_nodes'))
      $('path-options').open = true;
    $('show-expanded').checked = params.get('expanded') === '1';
    const tool = params.get('tool');
    if (tool && TOOLS.includes(tool)) setTool(tool);
    const P = state.path;
    P.start = pt('start');
    P.end = P.start ? pt('end') : null;
    P.result = null;
    renderPathOut();
    /* Another profile in the address: its mesh is loaded and the query run then. */
    const prof = params.get('profile') || '';
    if (prof !== state.profile && meshProfiles().includes(prof || meshProfiles()[0])) setProfile(prof || meshProfiles()[0]);
    else if (P.start && P.end) runPath();
    redraw();
  }

  function curlText(body) {
    const url = `${location.origin}${meshUrl(state.meshName, '/path')}`;
    const json = JSON.stringify(body).replace(/'/g, "'\\''");
    return `curl -s -X POST '${url}' -H 'Content-Type: application/json' -d '${json}'`;
  }

  /* Puts text on the clipboard where the page may (a secure context: https
     or localhost) and always in the box under the buttons. */
  async function copyText(kind) {
    if (!state.path.start || !state.path.end) { showError(new ApiError('no_query', 'click a start and an end first', 0), 'copy'); return; }
    let body;
    try { body = pathBody(); } catch (e) { showError(e, 'path options'); return; }
    const text = kind === 'curl' ? curlText(body) : JSON.stringify(body, null, 2);
    const box = $('query-text');
    box.hidden = false;
    box.value = text;
    app.dataset.copied = kind;
    try {
      await navigator.clipboard.writeText(text);
      showInfo(`Copied the query as ${kind === 'curl' ? 'a curl command' : 'JSON'}`);
    } catch (e) {
      showInfo('The clipboard is not available here: the query is in the box below');
    }
  }

  async function runRay() {
    const R = state.ray, name = state.meshName;
    try {
      const { data, ms } = await api('POST', meshUrl(name, '/raycast'), profiled({ start: R.start, end: R.end }));
      R.result = data;
      R.ms = ms;
    } catch (e) {
      R.result = null;
      showError(e, 'raycast');
    }
    renderRayOut();
    redraw();
  }

  async function runReach() {
    const R = state.reach, name = state.meshName;
    const maxCost = Number($('max-cost').value);
    try {
      const { data, ms } = await api('POST', meshUrl(name, '/reachable'), profiled({ start: R.start, max_cost: maxCost }));
      R.result = data;
      R.set = new Set(data.polygons || []);
      R.seq = (R.seq || 0) + 1;
      R.ms = ms;
    } catch (e) {
      R.result = null;
      R.set = null;
      showError(e, 'reachable');
    }
    renderReachOut();
    redraw();
  }

  /* --------------------------------------------------------------- agents */

  const distXZ = (a, b) => (a && b ? Math.hypot(a[0] - b[0], a[2] - b[2]) : Infinity);

  function addAgent(pos) {
    const id = state.nextAgentId++;
    const a = {
      id: 'agent-' + id,
      position: pos.slice(),
      velocity: [0, 0, 0],
      radius: Math.max(Number($('agent-radius').value) || 0.5, 0.05),
      max_speed: Math.max(Number($('agent-speed').value) || 3.5, 0.1),
      max_accel: 8.0,
      color: AGENT_COLORS[(id - 1) % AGENT_COLORS.length],
      corners: [],
      arrived: false,
      avoiding: false,
      error: null,
    };
    if (state.target) assignTarget(a, state.target);
    state.agents.push(a);
  }

  function assignTarget(a, t) {
    a.goal = t.slice();
    a.d0 = distXZ(a.position, t);
    a.arrived = false;
  }

  function spawnRandom(n) {
    if (!state.mesh) return;
    for (let i = 0; i < n; i++) {
      const p = randomPoint(state.mesh);
      if (p) addAgent(p);
    }
    setAgentMode('target');
    renderAgentsOut();
    redraw();
  }

  function setTarget(pt) {
    state.target = pt;
    for (const a of state.agents) assignTarget(a, pt);
    renderAgentsOut();
    redraw();
  }

  /* One steering step for every agent; dt in seconds of simulated time. */
  async function stepAgents(dt) {
    const sim = state.sim, name = state.meshName;
    if (sim.inflight || !state.agents.length || !name) return;
    sim.inflight = true;
    const behavior = $('behavior').value;
    const needsTarget = behavior !== 'wander' && behavior !== 'idle';
    const sent = state.agents.slice();
    const body = {
      dt,
      agents: sent.map((a) => {
        const o = {
          id: a.id, position: a.position, velocity: a.velocity, radius: a.radius,
          max_speed: a.max_speed, max_accel: a.max_accel,
          behavior: needsTarget && !a.goal ? 'idle' : behavior,
        };
        if (a.goal) { o.target = a.goal; o.threat = a.goal; }
        return o;
      }),
    };
    /* The avoidance samples cost a fuller answer: asked only while an
       agent is inspected, and kept only for that agent. */
    if (state.inspect) body.debug = true;
    try {
      const { data, ms } = await api('POST', meshUrl(name, '/step'), profiled(body));
      if (name !== state.meshName) return;
      sim.ms = ms;
      sim.steps++;
      const out = (data && data.agents) || [];
      const byId = new Map(out.map((o) => [o.id, o]));
      /* The interval between answers (smoothed) is how long a move is drawn over. */
      const tNow = performance.now();
      if (sim.lastAnswer) {
        const gap = Math.min(tNow - sim.lastAnswer, 500);
        sim.interval = sim.interval ? 0.8 * sim.interval + 0.2 * gap : gap;
      }
      sim.lastAnswer = tNow;
      for (const a of sent) {
        const o = byId.get(a.id);
        if (!o) continue;
        if (o.error) {
          if (!a.error) showError(new ApiError(o.error.code, o.error.message, 0), a.id);
          a.error = o.error;
          continue;
        }
        a.error = null;
        a.from = shownPosition(a, tNow);
        a.t0 = tNow;
        if (Array.isArray(o.position)) a.position = o.position;
        if (Array.isArray(o.velocity)) a.velocity = o.velocity;
        a.corners = Array.isArray(o.corners) ? o.corners : [];
        a.arrived = !!o.arrived;
        a.avoiding = !!o.avoiding;
        a.avoidance = a.id === state.inspect && o.avoidance ? o.avoidance : null;
        a.action = o.action || null;
        /* The agent reached an off-mesh link: the service leaves the traversal
           to the game, so the viewer plays the game and lands it where the
           service says (`landing`: the end, or a free spot beside someone
           standing on it). */
        if (a.action && Array.isArray(a.action.end)) {
          a.position = (Array.isArray(a.action.landing) ? a.action.landing : a.action.end).slice();
          a.from = null; /* a jump lands at once, it is not slid across the gap */
          a.velocity = [0, 0, 0];
          a.corners = [];
          state.sim.traversals++;
        }
      }
    } catch (e) {
      sim.running = false; /* stop the loop rather than repeat a failing request every frame */
      showError(e, 'step');
    } finally {
      sim.inflight = false;
    }
    renderAgentsOut();
    redraw();
  }

  function frame(now) {
    const sim = state.sim;
    if (sim.running && state.agents.length && !sim.inflight) {
      const real = sim.lastSent ? Math.min((now - sim.lastSent) / 1000, MAX_STEP_DT) : 1 / 60;
      sim.lastSent = now;
      if (real > 0) stepAgents(real * sim.speed);
    } else if (!sim.running || !state.agents.length) {
      sim.lastSent = 0;
    }
    if (volume) volume.tick(now);
    if (state.mode === '3d' && view3d) {
      if (state.dirty || state.agents.length || (volume && volume.animating())) { state.dirty = false; view3d.draw(overlay3d(now)); }
    } else if (state.dirty || state.agents.length) draw(now);
    requestAnimationFrame(frame);
  }

  /* ---------------------------------------------------------------- input */

  function onCanvasClick(px, py, ev) {
    if (!state.mesh) return;
    const w = canvasToWorld(px, py);
    const pk = pick(state.mesh, w.x, w.z, ev.altKey);
    applyClick([pk.x, pk.y, pk.z], ev);
  }

  /* What a click at world point pt does under the current tool (from the
     top-down view, or the 3-D view's pick). */
  function applyClick(pt, ev) {
    switch (state.tool) {
      case 'path': {
        const P = state.path;
        if (!P.start || P.end) {
          P.start = pt; P.end = null; P.result = null; P.seq++;
          renderPathOut();
        } else {
          P.end = pt;
          runPath(true);
        }
        break;
      }
      case 'raycast': {
        const R = state.ray;
        if (!R.start || R.end) { R.start = pt; R.end = null; R.result = null; renderRayOut(); }
        else { R.end = pt; runRay(); }
        break;
      }
      case 'reach':
        state.reach.start = pt;
        runReach();
        break;
      case 'nearest':
        state.nearest = { point: [pt[0], pt[1] + (Number($('nearest-dy').value) || 0), pt[2]], result: null, ms: 0 };
        runNearest();
        break;
      case 'batch': {
        /* Clicks add pairs: a start, then its end (the batch runs again). */
        const B = state.batch;
        if (!B.pending) B.pending = pt;
        else { B.pairs.push([B.pending, pt]); B.pending = null; runBatch(); }
        renderBatchOut();
        break;
      }
      case 'agents': {
        /* A click on an agent inspects it; elsewhere it places one or sets the target. */
        const hit = state.agents.find((a) => distXZ(a.position, pt) <= Math.max(a.radius, 0.3) && Math.abs(a.position[1] - pt[1]) < 2);
        if (hit && !ev.shiftKey) {
          if (state.inspect !== hit.id) hit.avoidance = undefined; /* asked from the next step on */
          state.inspect = hit.id;
          renderInspect();
          renderLegend();
        }
        else if (state.agentMode === 'place' && !ev.shiftKey) { addAgent(pt); renderAgentsOut(); }
        else setTarget(pt);
        break;
      }
    }
    redraw();
  }

  /* The path marker ('start' or 'end') within 9 px of canvas point (px, py), else null. */
  function markerAt(px, py) {
    const P = state.path;
    if (state.tool !== 'path' || !state.mesh) return null;
    for (const [which, pt] of [['end', P.end], ['start', P.start]]) {
      if (!pt) continue;
      const c = worldToCanvas(pt[0], pt[2]);
      if (Math.hypot(c.x - px, c.y - py) <= 9) return which;
    }
    return null;
  }

  /* Drags a path marker: the point follows the cursor (picked on the
     surface like a click) and the path re-runs as fast as navd answers. */
  function moveMarker(which, px, py) {
    const w = canvasToWorld(px, py);
    const pk = pick(state.mesh, w.x, w.z, false);
    const P = state.path;
    P[which] = [pk.x, pk.y, pk.z];
    P.dragging = true;
    if (P.start && P.end) runPath();
    redraw();
  }

  function updateHover(px, py) {
    if (!state.mesh) return;
    const w = canvasToWorld(px, py);
    const pk = pick(state.mesh, w.x, w.z, false);
    const prev = state.hover ? state.hover.poly : -2;
    state.hover = pk;
    $('cursor').textContent = pk.poly >= 0
      ? `x ${fmt(pk.x)}  z ${fmt(pk.z)}  y ${fmt(pk.y)}  · polygon ${pk.poly} · area ${state.mesh.areas[pk.poly] ?? 0} · component ${state.mesh.polys[pk.poly].comp}`
      : `x ${fmt(w.x)}  z ${fmt(w.z)}  · off mesh`;
    if (prev !== pk.poly) redraw();
  }

  let dropDone = () => {};

  function installInput() {
    let drag = null;
    canvas.addEventListener('mousedown', (ev) => {
      if (ev.button !== 0 && ev.button !== 1) return;
      const r = canvas.getBoundingClientRect();
      drag = { x: ev.clientX, y: ev.clientY, cx: state.view.cx, cz: state.view.cz, moved: false, button: ev.button,
        marker: ev.button === 0 ? markerAt(ev.clientX - r.left, ev.clientY - r.top) : null };
      ev.preventDefault();
    });
    window.addEventListener('mousemove', (ev) => {
      const r = canvas.getBoundingClientRect();
      if (drag && drag.marker) {
        const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
        if (!drag.moved && Math.hypot(dx, dy) > 2) drag.moved = true;
        if (drag.moved) moveMarker(drag.marker, ev.clientX - r.left, ev.clientY - r.top);
      } else if (drag) {
        const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
        if (!drag.moved && Math.hypot(dx, dy) > 4) { drag.moved = true; canvas.classList.add('panning'); }
        if (drag.moved) {
          state.view.cx = drag.cx - dx / state.view.scale;
          state.view.cz = drag.cz - dy / state.view.scale;
          viewChanged();
        }
      }
      if (ev.target === canvas) updateHover(ev.clientX - r.left, ev.clientY - r.top);
    });
    window.addEventListener('mouseup', (ev) => {
      if (!drag) return;
      const d = drag;
      drag = null;
      canvas.classList.remove('panning');
      if (d.marker && d.moved) {
        state.path.dragging = false;
        if (state.path.start && state.path.end) runPath();
        return;
      }
      if (!d.moved && d.button === 0 && ev.target === canvas) {
        const r = canvas.getBoundingClientRect();
        onCanvasClick(ev.clientX - r.left, ev.clientY - r.top, ev);
      }
    });
    canvas.addEventListener('wheel', (ev) => {
      ev.preventDefault();
      const r = canvas.getBoundingClientRect();
      const px = ev.clientX - r.left, py = ev.clientY - r.top;
      const before = canvasToWorld(px, py);
      const k = Math.exp(-ev.deltaY * (ev.deltaMode === 1 ? 0.05 : 0.0015));
      state.view.scale = Math.min(Math.max(state.view.scale * k, 1e-4), 1e5);
      const after = canvasToWorld(px, py);
      state.view.cx += before.x - after.x;
      state.view.cz += before.z - after.z;
      viewChanged();
    }, { passive: false });
    canvas.addEventListener('mouseleave', () => { state.hover = null; $('cursor').textContent = '–'; redraw(); });

    window.addEventListener('keydown', (ev) => {
      /* Shortcuts never steal keys from a field being typed in (checkboxes are fine). */
      const t = ev.target;
      if ((t instanceof HTMLInputElement && t.type !== 'checkbox') || t instanceof HTMLSelectElement ||
          t instanceof HTMLTextAreaElement) return;
      if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
      if (ev.key === 'f' || ev.key === 'F') { if (state.mode === '3d' && view3d) { view3d.reset(); redraw(); } else fitView(); }
      else if (ev.key === 'v' || ev.key === 'V') setMode(state.mode === '3d' ? '2d' : '3d');
      else if (ev.key === 'Escape') { const keep = state.agents; resetTools(); state.agents = keep; renderAgentsOut(); redraw(); }
      else if (ev.key >= '1' && ev.key <= '6') setTool(TOOLS[ev.key - 1]);
      else if (ev.key === ' ') { ev.preventDefault(); togglePlay(); }
    });

    /* Drag and drop anywhere on the page uploads the file. */
    let depth = 0;
    const overlay = $('drop-overlay');
    window.addEventListener('dragenter', (ev) => { ev.preventDefault(); depth++; overlay.hidden = false; });
    window.addEventListener('dragleave', () => { if (--depth <= 0) { depth = 0; overlay.hidden = true; } });
    window.addEventListener('dragover', (ev) => ev.preventDefault());
    dropDone = () => { depth = 0; overlay.hidden = true; };
    window.addEventListener('drop', (ev) => {
      ev.preventDefault();
      dropDone();
      const f = ev.dataTransfer && ev.dataTransfer.files && ev.dataTransfer.files[0];
      if (f) uploadFile(f);
    });
    $('file-input').addEventListener('change', (ev) => {
      const f = ev.target.files[0];
      ev.target.value = '';
      if (f) uploadFile(f);
    });

    /* Editing the address's #name (or going back) switches mesh. */
    window.addEventListener('hashchange', () => {
      const { name, params } = parseHash();
      if (name && name !== state.meshName && state.meshes.some((m) => m.name === name)) selectMesh(name);
      else if (name === state.meshName && state.mesh) applyUrlQuery(params);
    });
    $('refresh').addEventListener('click', () => loadList());
    $('key-form').addEventListener('submit', (ev) => ev.preventDefault());
    const key = $('api-key');
    key.value = state.apiKey;
    key.addEventListener('input', () => { state.apiKey = key.value.trim(); sessionStorage.setItem('navd.apiKey', state.apiKey); });

    for (const b of $('tools').querySelectorAll('button')) b.addEventListener('click', () => setTool(b.dataset.tool));
    for (const b of $('agent-mode').querySelectorAll('button')) b.addEventListener('click', () => setAgentMode(b.dataset.mode));
    $('show-corridor').addEventListener('change', redraw);
    /* Expanded polygons only come with debug: true, so asking for them re-runs the query. */
    /* Either way the query changes (debug bypasses the cache), so the
       panel's cache and expanded rows are only right after running it again. */
    $('show-expanded').addEventListener('change', () => {
      if (state.path.start && state.path.end) runPath();
      else updateUrl();
      redraw();
    });
    $('opt-profile').addEventListener('change', (ev) => setProfile(ev.target.value));
    $('show-level').addEventListener('change', loadLevelOverlay);
    $('batch-random').addEventListener('click', () => randomPairs(Math.min(Math.max(Math.floor(Number($('batch-n').value) || 1), 1), 1000)));
    $('batch-run').addEventListener('click', runBatch);
    $('batch-clear').addEventListener('click', () => { state.batch = { pairs: [], pending: null, result: null, ms: 0, seq: state.batch.seq + 1, runs: state.batch.runs }; renderBatchOut(); redraw(); });
    for (const id of ['opt-costs', 'opt-exclude', 'opt-extents', 'opt-max-nodes'])
      $(id).addEventListener('change', () => { if (state.path.start && state.path.end) runPath(); else updateUrl(); });
    $('copy-curl').addEventListener('click', () => copyText('curl'));
    $('copy-json').addEventListener('click', () => copyText('json'));
    $('use-cache').addEventListener('change', () => { if (state.path.end) runPath(); });
    $('spawn').addEventListener('click', () => spawnRandom(Math.min(Math.max(Math.floor(Number($('spawn-n').value) || 1), 1), 500)));
    $('clear-agents').addEventListener('click', () => { state.agents = []; state.target = null; state.sim.steps = 0; renderAgentsOut(); redraw(); });
    $('play').addEventListener('click', togglePlay);
    $('inspect-close').addEventListener('click', () => { state.inspect = null; state.drawnSamples = null; renderInspect(); renderLegend(); redraw(); });
    $('step-once').addEventListener('click', () => { state.sim.running = false; renderAgentsOut(); stepAgents(0.05 * state.sim.speed); });
    $('sim-speed').addEventListener('change', (ev) => { state.sim.speed = Number(ev.target.value) || 1; });
    $('max-cost').addEventListener('change', () => { if (state.reach.start) runReach(); });
  }

  /* ------------------------------------------------------------- 3-D view */

  const canvas3d = $('view3d');
  let view3d = null;

  /* HSL (degrees, %, %) to RGB in 0..1, for the 3-D view's vertex colours. */
  function hslRgb(h, sat, l) {
    sat /= 100; l /= 100;
    const k = (n) => (n + h / 30) % 12, a = sat * Math.min(l, 1 - l);
    const f = (n) => l - a * Math.max(-1, Math.min(k(n) - 3, 9 - k(n), 1));
    return [f(0), f(8), f(4)];
  }

  function polyRgb(mesh, p) {
    const m = polyColor(mesh, p).match(/hsl\(([\d.]+), ([\d.]+)%, ([\d.]+)%\)/);
    return m ? hslRgb(Number(m[1]), Number(m[2]), Number(m[3])) : [0.5, 0.5, 0.5];
  }

  /* Floors slice: the two sliders span the mesh's height range. */
  function sliceRange() {
    const vb = volume && volume.active() ? volume.sliceBounds() : null;
    const b = vb || (state.mesh ? state.mesh.bounds : { minY: 0, maxY: 1 });
    const span = Math.max(b.maxY - b.minY, 1e-3), pad = 0.25;
    const at = (id) => b.minY - pad + ((span + 2 * pad) * Number($(id).value)) / 1000;
    return [at('slice-lo'), at('slice-hi')];
  }

  function applySlice() {
    const [lo, hi] = sliceRange();
    if (view3d) view3d.slice(Math.min(lo, hi), Math.max(lo, hi));
    if (volume && volume.active()) volume.slice(Math.min(lo, hi), Math.max(lo, hi));
    $('slice-text').textContent = `y ${fmt(Math.min(lo, hi), 1)} … ${fmt(Math.max(lo, hi), 1)} m`;
    redraw();
  }

  function load3d(refit) {
    if (!view3d) return;
    view3d.setMesh(state.mesh, (p) => polyRgb(state.mesh, p), $('show-detail').checked);
    view3d.setLevel(state.level ? state.level.tris : null);
    if (refit) view3d.reset();
    applySlice();
  }

  function setMode(mode) {
    if (mode === '3d' && !view3d) {
      canvas3d.hidden = false;
      view3d = window.navdView3d && window.navdView3d.create(canvas3d, {});
      if (!view3d) {
        canvas3d.hidden = true;
        showError(new ApiError('no_webgl', 'this browser gives the page no WebGL: the 3-D view is unavailable', 0), '3-D view');
        return;
      }
      view3d.resize();
      new ResizeObserver(() => { view3d.resize(); redraw(); }).observe(canvas3d);
      state.mode3dMesh = null;
    }
    state.mode = mode;
    app.dataset.mode = mode;
    canvas.hidden = mode === '3d';
    canvas3d.hidden = mode !== '3d';
    $('view3d-controls').hidden = mode !== '3d';
    for (const b of $('mode').querySelectorAll('button')) b.classList.toggle('active', b.dataset.mode === mode);
    if (mode === '3d') {
      view3d.resize();
      if (state.mode3dMesh !== state.mesh) { load3d(true); state.mode3dMesh = state.mesh; }
    } else resize();
    redraw();
  }

  /* What the 3-D view overlays: the path, its markers, the ray, agents. */
  function overlay3d(now) {
    /* With a flight volume shown, clicks and overlays are the volume's tools'. */
    if (volume && volume.active()) return volume.overlay(now);
    const P = state.path, r = P.result, o = { markers: [], agents: [], lines: [] };
    if (state.tool === 'path') {
      if (r && Array.isArray(r.corners)) o.path = r.corners;
      if (P.start) o.markers.push({ p: r && r.start ? r.start : P.start, color: [0.25, 0.73, 0.31, 1] });
      if (P.end) o.markers.push({ p: r && r.end ? r.end : P.end, color: [0.97, 0.32, 0.29, 1] });
    }
    if (state.tool === 'raycast' && state.ray.start) {
      o.markers.push({ p: state.ray.start, color: [0.25, 0.73, 0.31, 1] });
      if (state.ray.result && state.ray.result.point)
        o.lines.push({ points: [state.ray.start, state.ray.result.point], color: state.ray.result.hit ? [1, 0.42, 0.42, 1] : [0.48, 0.87, 0.95, 1] });
    }
    if (state.tool === 'reach' && state.reach.start) o.markers.push({ p: state.reach.start, color: [0.31, 0.9, 0.78, 1] });
    const N = state.nearest;
    if (state.tool === 'nearest' && N.point) {
      o.markers.push({ p: N.point, color: [1, 1, 1, 0.8] });
      if (N.result && N.result.point) {
        o.markers.push({ p: N.result.point, color: [0.31, 0.9, 0.78, 1] });
        o.lines.push({ points: [N.point, N.result.point], color: [0.31, 0.9, 0.78, 1] });
      }
    }
    if (state.tool === 'batch') {
      const res = state.batch.result || [];
      state.batch.pairs.forEach(([s, e], i) => {
        const r = res[i];
        const rgb = hslRgb((i * 137.508) % 360, 85, 66);
        o.lines.push({ points: r && Array.isArray(r.corners) ? r.corners : [s, e], color: r && r.error ? [0.97, 0.32, 0.29, 1] : [...rgb, 1] });
      });
      if (state.batch.pending) o.markers.push({ p: state.batch.pending, color: [0.25, 0.73, 0.31, 1] });
    }
    const ppm = view3d.pxPerMetre();
    for (const a of state.agents) {
      const c = a.error ? '#f85149' : a.color;
      const rgb = [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16) / 255);
      o.agents.push({ p: shownPosition(a, now), color: [...rgb, a.arrived ? 0.55 : 1], px: 2 * a.radius * ppm });
      if (a.corners && a.corners.length) o.lines.push({ points: [shownPosition(a, now), ...a.corners], color: [1, 1, 1, 0.45] });
    }
    if (state.target) o.markers.push({ p: state.target, color: [1, 1, 1, 1] });
    return o;
  }

  function install3d() {
    for (const b of $('mode').querySelectorAll('button')) b.addEventListener('click', () => setMode(b.dataset.mode));
    for (const id of ['slice-lo', 'slice-hi']) $(id).addEventListener('input', applySlice);
    $('show-detail').addEventListener('change', () => load3d(false));
    $('reset-3d').addEventListener('click', () => { if (view3d) { view3d.reset(); redraw(); } });
    let drag = null, lastHover = 0;
    canvas3d.addEventListener('contextmenu', (ev) => ev.preventDefault());
    canvas3d.addEventListener('mousedown', (ev) => {
      drag = { x: ev.clientX, y: ev.clientY, moved: false, pan: ev.button === 2 || ev.shiftKey, cam: JSON.parse(JSON.stringify(view3d.camera)) };
      ev.preventDefault();
    });
    window.addEventListener('mousemove', (ev) => {
      if (state.mode !== '3d' || !view3d) return;
      const r = canvas3d.getBoundingClientRect();
      if (drag) {
        const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
        if (!drag.moved && Math.hypot(dx, dy) > 4) drag.moved = true;
        if (drag.moved) {
          const cam = view3d.camera;
          if (drag.pan) {
            /* Move the target in the view's plane, one pixel per pixel at the target. */
            const k = 1 / view3d.pxPerMetre(), yaw = cam.yaw;
            const right = [Math.cos(yaw), 0, -Math.sin(yaw)], fwd = [-Math.sin(yaw), 0, -Math.cos(yaw)];
            cam.target = [0, 1, 2].map((i) => drag.cam.target[i] - dx * k * right[i] + dy * k * fwd[i]);
          } else {
            cam.yaw = drag.cam.yaw - dx * 0.008;
            cam.pitch = Math.min(Math.max(drag.cam.pitch + dy * 0.008, -1.5), 1.55);
          }
          redraw();
        }
      } else if (ev.target === canvas3d && ev.timeStamp - lastHover > 40) {
        lastHover = ev.timeStamp;
        if (volume && volume.active()) { $('cursor').textContent = volume.hover(ev.clientX - r.left, ev.clientY - r.top); return; }
        const pk = view3d.pick(ev.clientX - r.left, ev.clientY - r.top);
        $('cursor').textContent = pk ? `x ${fmt(pk.x)}  z ${fmt(pk.z)}  y ${fmt(pk.y)}  · polygon ${pk.poly} · component ${state.mesh.polys[pk.poly].comp}` : 'no surface under the cursor';
      }
    });
    window.addEventListener('mouseup', (ev) => {
      if (!drag) return;
      const d = drag;
      drag = null;
      if (d.moved || d.pan || ev.target !== canvas3d) return;
      const r = canvas3d.getBoundingClientRect();
      if (volume && volume.active()) { volume.click(ev.clientX - r.left, ev.clientY - r.top, ev); return; }
      if (!state.mesh) return;
      const pk = view3d.pick(ev.clientX - r.left, ev.clientY - r.top);
      app.dataset.pick3d = pk ? [pk.x, pk.y, pk.z].map((v) => v.toFixed(3)).join(',') : '';
      if (pk) applyClick([pk.x, pk.y, pk.z], ev);
    });
    canvas3d.addEventListener('wheel', (ev) => {
      ev.preventDefault();
      const k = Math.exp(ev.deltaY * (ev.deltaMode === 1 ? 0.05 : 0.0015));
      view3d.camera.dist = Math.min(Math.max(view3d.camera.dist * k, 0.5), 1e6);
      redraw();
    }, { passive: false });
  }

  function togglePlay() {
    state.sim.running = !state.sim.running;
    state.sim.lastSent = 0;
    renderAgentsOut();
  }

  /* The header says what the service says, refreshed every few seconds;
     while navd is down it says so (one message, not one per poll). */
  async function loadHealth() {
    const el = $('health');
    try {
      const { data } = await api('GET', '/health');
      el.textContent = `service ${data.status} · v${data.version} · ${data.navmeshes} navmesh${data.navmeshes === 1 ? '' : 'es'}`;
      el.classList.remove('down');
      app.dataset.health = data.status;
      return true;
    } catch (e) {
      el.textContent = 'navd unreachable';
      el.classList.add('down');
      if (app.dataset.health !== 'down') showError(e, 'health');
      app.dataset.health = 'down';
      return false;
    }
  }

  const POLL_MS = 3000;
  /* Polls health and the mesh list: a mesh added, deleted or replaced by
     someone else shows up here without a click on "refresh". */
  async function poll() {
    if (!document.hidden && (await loadHealth())) { await loadList(); if (volume) await volume.load(); }
    setTimeout(poll, POLL_MS);
  }

  /* ----------------------------------------------------------------- start */

  window.navdViewer = {
    state,
    worldToCanvas,
    canvasToWorld,
    pick: (x, z, lowest) => (state.mesh ? pick(state.mesh, x, z, lowest) : null),
    selectMesh,
    setTool,
    spawn: spawnRandom,
    setTarget,
    fit: fitView,
    setMode,
    get view3d() { return view3d; },
    setProfile,
    get bake() { return bake; },
    get volume() { return volume; },
  };

  installInput();
  install3d();
  const volume = window.navdVolume ? window.navdVolume.install({
    api, ApiError, app, showError, showInfo, setMode, applySlice, redraw, renderLegend, deleteButton,
    view3d: () => view3d, meshMeta: () => state.meta, sim: state.sim,
  }) : null;
  const bake = window.navdBake ? window.navdBake.install({
    api, ApiError, app, showError, showInfo, loadList, deleteButton, dropDone: () => dropDone(),
    loadVolumes: (name) => (volume ? volume.load(name) : null),
  }) : null;
  state.mode = '2d';
  app.dataset.mode = '2d';
  for (const b of $('mode').querySelectorAll('button')) b.classList.toggle('active', b.dataset.mode === '2d');
  setTool('path');
  setAgentMode('place');
  resetTools();
  new ResizeObserver(resize).observe(canvas);
  resize();
  requestAnimationFrame(frame);
  loadHealth();
  loadList();
  setTimeout(poll, POLL_MS);
})();
