// The viewer's flight volumes, in the browser (part of viewer.test.mjs;
// `ONLY=volume node tests/browser/viewer.test.mjs` runs this part alone).
//
// A small generated level (a floor, a wall of zero thickness with a gap, a
// slim pillar) is baked into a volume over HTTP and drawn: the blocked voxels
// the viewer draws are the service's own count, and the faces its merged
// quads cover are the exposed voxel faces counted here by brute force from
// the brick export (decoded here with BigInt, independently of the viewer),
// whole and sliced. A path clicked on the picking plane is the API's path for
// the same points, corner for corner; "expanded" draws the API's expanded
// boxes and unticking it removes them; a click on the blocked surface picks a
// free point next to it; flying agents stepped by the viewer get closer to
// their target and stay in free space (the API's nearest with zero extents).
// The bake form bakes a volume to done (and marks a field a 400 names).

import path from 'node:path';

// Level geometry as OBJ text: quads given as four [x, y, z] corners.
function objQuads(quads) {
  const v = [], f = [];
  for (const q of quads) {
    const b = v.length + 1;
    for (const p of q) v.push(`v ${p.join(' ')}`);
    f.push(`f ${b} ${b + 1} ${b + 2} ${b + 3}`);
  }
  return [...v, ...f].join('\n') + '\n';
}

// A box's six faces.
function boxQuads([x0, y0, z0], [x1, y1, z1]) {
  return [
    [[x0, y0, z0], [x1, y0, z0], [x1, y1, z0], [x0, y1, z0]], [[x0, y0, z1], [x0, y1, z1], [x1, y1, z1], [x1, y0, z1]],
    [[x0, y0, z0], [x0, y1, z0], [x0, y1, z1], [x0, y0, z1]], [[x1, y0, z0], [x1, y0, z1], [x1, y1, z1], [x1, y1, z0]],
    [[x0, y1, z0], [x1, y1, z0], [x1, y1, z1], [x0, y1, z1]], [[x0, y0, z0], [x0, y0, z1], [x1, y0, z1], [x1, y0, z0]],
  ];
}

export const LEVEL = objQuads([
  [[0, 0, 0], [0, 0, 20], [20, 0, 20], [20, 0, 0]], // floor
  [[10, 0, 0], [10, 6, 0], [10, 6, 14], [10, 0, 14]], // wall, a 6 m gap at z > 14
  ...boxQuads([4.5, 0, 4.5], [5.5, 4, 5.5]), // pillar
]);
const SETTINGS = { voxel_size: 0.5, radius: 0.5, bounds: [[0, 0, 0], [20, 8, 20]] };

// The export as a dense voxel array (1 = blocked), padding past dims dropped.
function voxelsOf(b) {
  const [dx, dy, dz] = b.dims, [bx, by] = b.brick_dims;
  const vox = new Uint8Array(dx * dy * dz);
  const put = (i, bits) => {
    const x0 = 4 * (i % bx), y0 = 4 * (Math.floor(i / bx) % by), z0 = 4 * Math.floor(i / (bx * by));
    for (let k = 0; k < 64; k++) {
      if (!((bits >> BigInt(k)) & 1n)) continue;
      const x = x0 + (k & 3), y = y0 + ((k >> 2) & 3), z = z0 + (k >> 4);
      if (x < dx && y < dy && z < dz) vox[(z * dy + y) * dx + x] = 1;
    }
  };
  for (const i of b.solid) put(i, (1n << 64n) - 1n);
  for (const [i, hex] of b.mixed) put(i, BigInt('0x' + hex));
  return vox;
}

// Blocked voxels in rows y0..y1 and their faces toward free (or outside) voxels.
function countFaces(b, vox, y0, y1) {
  const [dx, dy, dz] = b.dims;
  const at = (x, y, z) => x >= 0 && z >= 0 && x < dx && z < dz && y >= y0 && y <= y1 && y < dy && vox[(z * dy + y) * dx + x];
  let voxels = 0, faces = 0;
  for (let z = 0; z < dz; z++)
    for (let y = y0; y <= y1; y++)
      for (let x = 0; x < dx; x++) {
        if (!at(x, y, z)) continue;
        voxels++;
        for (const [a, c, d] of [[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]]) if (!at(x + a, y + c, z + d)) faces++;
      }
  return { voxels, faces };
}

const near = (a, b, eps) => Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => Math.abs(v - b[i]) <= eps);

export async function volumes(browser, base, { check, apiJson, BUILD }) {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const consoleErrors = [];
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  page.on('pageerror', (e) => consoleErrors.push('uncaught: ' + (e.stack || e.message)));
  const app = page.locator('#app');

  // -- bake over HTTP, then open the viewer
  const put = await fetch(base + '/v1/levels/flyroom', { method: 'PUT', headers: { 'Content-Type': 'model/obj' }, body: LEVEL });
  const job = await apiJson(base, 'POST', '/v1/volumes/flyroom/bake?wait=true', { level: 'flyroom', ...SETTINGS });
  check('a generated level bakes into a flight volume over HTTP', put.status === 201 && job.data && job.data.state === 'done',
    JSON.stringify(job.data).slice(0, 300));
  const meta = (await apiJson(base, 'GET', '/v1/volumes/flyroom')).data;
  const bricks = (await apiJson(base, 'GET', '/v1/volumes/flyroom?format=bricks')).data;
  const vox = voxelsOf(bricks);
  await page.goto(base + '/');
  await page.waitForSelector('#volume-list li[data-name="flyroom"]', { timeout: 10000 }).catch(() => {});
  check('the volume list shows the baked volume', (await page.locator('#volume-list li[data-name="flyroom"]').count()) === 1);
  await page.click('#volume-list li[data-name="flyroom"]');
  await page.waitForSelector('#app[data-volume="flyroom"][data-volume-ready="1"]', { timeout: 10000 }).catch(() => {});
  check('selecting a volume shows it in the 3-D view', (await app.getAttribute('data-mode')) === '3d' &&
    (await app.getAttribute('data-volume-ready')) === '1');

  // -- what is drawn: the service's blocked voxels, every exposed face once
  const whole = countFaces(bricks, vox, 0, bricks.dims[1] - 1);
  const drawn = await page.evaluate(() => { const d = document.getElementById('app').dataset; return { voxels: +d.volVoxels, faces: +d.volFaces, quads: +d.volQuads, bricks: +d.volBricks, ms: +d.volBuildMs }; });
  check('the viewer draws as many blocked voxels as the service counts', drawn.voxels === meta.blocked_voxels && whole.voxels === meta.blocked_voxels,
    `viewer ${drawn.voxels}, service ${meta.blocked_voxels}, export decoded here ${whole.voxels}`);
  check('the merged quads cover exactly the exposed voxel faces', drawn.faces === whole.faces && drawn.quads > 0 && drawn.quads < whole.faces / 4,
    `quads ${drawn.quads} covering ${drawn.faces} faces; brute force ${whole.faces}`);
  const area = await page.evaluate(() => { /* the quads' area, from the vertex buffer itself */
    const g = window.navdViewer.view3d.vol, V = g.verts;
    let a = 0;
    for (let q = 0; q < V.length; q += 18) {
      const u = [V[q + 3] - V[q], V[q + 4] - V[q + 1], V[q + 5] - V[q + 2]], w = [V[q + 6] - V[q], V[q + 7] - V[q + 1], V[q + 8] - V[q + 2]];
      a += Math.hypot(u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]);
    }
    return a;
  });
  check('the vertex buffer\'s quads add up to the exposed faces', Math.abs(area - whole.faces) < 1e-6, `${area} vs ${whole.faces}`);
  // Each quad winds counter-clockwise seen from free space (the view culls
  // the others): just off its centre, the side its winding faces is free,
  // the other blocked.
  const quadList = await page.evaluate(() => Array.from(window.navdViewer.view3d.vol.verts));
  let wound = 0, nq = 0;
  {
    const [dx, dy] = bricks.dims;
    const at = (p) => { const c = p.map(Math.floor); return c.every((v, k) => v >= 0 && v < bricks.dims[k]) && vox[(c[2] * dy + c[1]) * dx + c[0]] === 1; };
    for (let q = 0; q < quadList.length; q += 18, nq++) {
      const A = quadList.slice(q, q + 3), B = quadList.slice(q + 3, q + 6), C = quadList.slice(q + 6, q + 9);
      const u = B.map((v, k) => v - A[k]), w = C.map((v, k) => v - A[k]);
      const n = [u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]];
      const len = Math.hypot(...n);
      /* the centre of the quad's unit face at corner A (C is the opposite corner) */
      const inner = A.map((v, k) => v + 0.5 * Math.sign(C[k] - v));
      const out = inner.map((v, k) => v + 0.5 * n[k] / len), inn = inner.map((v, k) => v - 0.5 * n[k] / len);
      if (!at(out) && at(inn)) wound++;
    }
  }
  check('every quad faces free space (counter-clockwise from outside)', nq > 0 && wound === nq, `${wound} of ${nq}`);
  const small = await frameTimes(page);
  console.log(`# volume flyroom ${bricks.dims.join('x')}: ${drawn.voxels} blocked voxels in ${drawn.bricks} bricks, ${drawn.faces} faces as ` +
    `${drawn.quads} quads, built in ${drawn.ms} ms; frame ${small.mean.toFixed(1)} ms mean, ${small.p50.toFixed(1)} median (software WebGL)`);

  // Slicing at 3 m: the rows kept are those whose centres are under 3 m, capped.
  const setSlider = (id, v) => page.evaluate(([id, v]) => { const e = document.getElementById(id); e.value = String(v); e.dispatchEvent(new Event('input')); }, [id, v]);
  const span = bricks.dims[1] * bricks.voxel_size + 0.5; // the sliders span the bounds plus 0.25 m each side
  await setSlider('slice-hi', Math.round((1000 * (3 + 0.25)) / span));
  await page.waitForFunction(() => window.navdViewer.volume.state.grid.y1 < window.navdViewer.volume.state.grid.dims[1] - 1, null, { timeout: 3000 }).catch(() => {});
  await page.waitForTimeout(100);
  const sl = await page.evaluate(() => { const g = window.navdViewer.volume.state.grid, d = document.getElementById('app').dataset; return { y0: g.y0, y1: g.y1, faces: +d.volFaces, voxels: +d.volVoxels }; });
  const cut = countFaces(bricks, vox, sl.y0, sl.y1);
  check('slicing at 3 m keeps the voxel rows under 3 m and caps them', sl.y0 === 0 && sl.y1 === Math.floor(3 / bricks.voxel_size - 0.5) &&
    sl.faces === cut.faces && sl.voxels === cut.voxels, `${JSON.stringify(sl)} brute force ${JSON.stringify(cut)}`);
  await setSlider('slice-hi', 1000);
  await page.waitForTimeout(100);

  // -- the path tool, on the picking plane at 4 m
  await page.selectOption('#vol-pick', 'plane');
  await setSlider('vol-plane', 500); // half of 8 m
  const view = async (cam) => {
    await page.evaluate((cam) => { const v = window.navdViewer.view3d, c = v.centre; Object.assign(v.camera, cam, { target: cam.target.map((x, i) => x - c[i]) }); window.navdViewer.state.dirty = true; }, cam);
    await page.waitForTimeout(80);
  };
  await view({ yaw: 0.5, pitch: 0.9, dist: 38, target: [10, 4, 10] });
  const box = await page.locator('#view3d').boundingBox();
  const clickAt = async (p) => {
    const s = await page.evaluate((p) => window.navdViewer.view3d.project(p), p);
    await page.mouse.click(box.x + s.x, box.y + s.y);
    await page.waitForTimeout(50);
    return (await app.getAttribute('data-vol-pick') || '').split(',').map(Number);
  };
  const a = await clickAt([4, 4, 6]);
  const runs0 = Number(await app.getAttribute('data-vol-path-runs'));
  const b = await clickAt([16, 4, 6]);
  await page.waitForFunction((n) => Number(document.getElementById('app').dataset.volPathRuns) > n, runs0, { timeout: 5000 }).catch(() => {});
  check('clicks on the plane pick points at its height', near(a, [4, 4, 6], 0.05) && near(b, [16, 4, 6], 0.05), `${a} | ${b}`);
  const P = await page.evaluate(() => { const s = window.navdViewer.volume.state.path; return { start: s.start, end: s.end }; });
  const api = (await apiJson(base, 'POST', '/v1/volumes/flyroom/path', { start: P.start, end: P.end })).data;
  const drawnPath = await page.evaluate(() => window.navdViewer.view3d.lastOverlay.path);
  check('the drawn path\'s corners are the API\'s for the same points', api && api.status === 'complete' && api.corners.length > 2 &&
    Array.isArray(drawnPath) && drawnPath.length === api.corners.length && drawnPath.every((c, i) => near(c, api.corners[i], 1e-9)),
    `api ${JSON.stringify(api && api.corners)} drawn ${JSON.stringify(drawnPath)}`);
  check('the panel shows the path\'s length and nodes expanded', Number(await app.getAttribute('data-vol-path-length')) === api.length &&
    Number(await app.getAttribute('data-vol-path-nodes')) === api.nodes_expanded &&
    /straight line/.test(await page.textContent('#vol-path-out')), await page.textContent('#vol-path-out'));

  // "expanded": the query runs again with debug, the boxes are the API's
  await page.check('#vol-expanded');
  await page.waitForFunction((n) => Number(document.getElementById('app').dataset.volPathRuns) > n, runs0 + 1, { timeout: 5000 }).catch(() => {});
  await page.waitForTimeout(50);
  const dbg = (await apiJson(base, 'POST', '/v1/volumes/flyroom/path', { start: P.start, end: P.end, debug: true })).data;
  const ex = await page.evaluate(() => ({ attr: document.getElementById('app').dataset.volExpanded, boxes: window.navdViewer.view3d.nboxes }));
  check('ticking "expanded" draws the API\'s expanded nodes as boxes', dbg.expanded.length > 0 && Number(ex.attr) === dbg.expanded.length &&
    ex.boxes === dbg.expanded.length, `${JSON.stringify(ex)} api ${dbg.expanded.length}`);
  await view({ yaw: 0.35, pitch: 0.62, dist: 30, target: [10, 2.5, 9] });
  await page.mouse.move(5, 5);
  await page.waitForTimeout(200);
  await page.screenshot({ path: path.join(BUILD, 'viewer-volume.png') });
  await page.uncheck('#vol-expanded');
  await page.waitForFunction(() => document.getElementById('app').dataset.volExpanded === '', null, { timeout: 5000 }).catch(() => {});
  check('unticking "expanded" removes the boxes', (await app.getAttribute('data-vol-expanded')) === '' &&
    (await page.evaluate(() => window.navdViewer.view3d.nboxes)) === 0);

  // -- a click on the blocked surface: a free point next to it (the pillar, seen from the side)
  await page.selectOption('#vol-pick', 'surface');
  await view({ yaw: 0, pitch: 0.15, dist: 12, target: [5, 2, 5] });
  const s0 = await page.evaluate(() => window.navdViewer.volume.state.path.end);
  await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2); // a third click starts over: this is a start
  await page.waitForTimeout(50);
  const sp = (await app.getAttribute('data-vol-pick') || '').split(',').map(Number);
  const free = await apiJson(base, 'POST', '/v1/volumes/flyroom/nearest', { point: sp, extents: [0, 0, 0] });
  const vs = bricks.voxel_size;
  const cell = sp.map((v, k) => Math.floor((v - bricks.origin[k]) / vs));
  const [dx, dy] = bricks.dims;
  const blockedAt = (x, y, z) => vox[(z * dy + y) * dx + x] === 1;
  const nextToBlocked = [[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]].some(([i, j, k]) => blockedAt(cell[0] + i, cell[1] + j, cell[2] + k));
  check('a click on the blocked surface picks a free point beside it', s0 && free.status === 200 && free.data.distance === 0 && nextToBlocked &&
    Math.abs(sp[2] - (5.5 + 0.5 + vs / 2)) < 0.51, `${sp} nearest ${JSON.stringify(free.data)}`);

  // -- flying agents
  await page.click('#vol-tools button[data-vtool="fliers"]');
  await page.fill('#vol-spawn-n', '4');
  await page.click('#vol-spawn');
  await page.selectOption('#vol-pick', 'plane');
  await view({ yaw: 0.5, pitch: 0.9, dist: 38, target: [10, 4, 10] });
  const tgt = await clickAt([15, 4, 17]);
  await page.waitForFunction(() => Number(document.getElementById('app').dataset.volSteps) >= 30, null, { timeout: 20000 }).catch(() => {});
  await page.waitForFunction(() => Number(document.getElementById('app').dataset.volFliersCloser) >= 4, null, { timeout: 15000 }).catch(() => {});
  const fl = await page.evaluate(() => {
    const V = window.navdViewer.volume.state, o = window.navdViewer.view3d.lastOverlay;
    return { n: V.fliers.length, steps: V.sim.steps, closer: +document.getElementById('app').dataset.volFliersCloser, drawn: o.agents.length,
      pos: V.fliers.map((f) => f.position), d: V.fliers.map((f) => [f.d0, Math.hypot(...f.position.map((v, i) => v - f.goal[i]))]) };
  });
  check('flying agents step toward the clicked target', near(tgt, [15, 4, 17], 0.05) && fl.n === 4 && fl.drawn === 4 && fl.steps >= 30 && fl.closer === 4,
    JSON.stringify(fl));
  // Drawn sliding between steps: each frame's point lies on the segment from
  // where the flier was shown when the last answer came to where it is now.
  const slide = await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => {
    const V = window.navdViewer.volume.state, drawnNow = window.navdViewer.view3d.lastOverlay.agents;
    resolve(V.fliers.map((f, i) => {
      const a = f.from || f.position, b = f.position, p = drawnNow[i].p;
      const ab = b.map((v, k) => v - a[k]), ap = p.map((v, k) => v - a[k]);
      const L2 = ab.reduce((s, v) => s + v * v, 0), t = L2 > 0 ? ab.reduce((s, v, k) => s + v * ap[k], 0) / L2 : 0;
      const off = Math.hypot(...p.map((v, k) => v - (a[k] + t * ab[k])));
      return { t, off, moved: Math.sqrt(L2) };
    }));
  })));
  check('fliers are drawn between their last two positions (interpolated)',
    slide.every((x) => x.off < 1e-6 && x.t >= -1e-9 && x.t <= 1 + 1e-9) && slide.some((x) => x.moved > 0), JSON.stringify(slide));
  let allFree = true;
  for (const p of fl.pos) {
    const r = await apiJson(base, 'POST', '/v1/volumes/flyroom/nearest', { point: p, extents: [0, 0, 0] });
    allFree &&= r.status === 200 && r.data.distance === 0;
  }
  check('every flier is in free space (the API\'s nearest with zero extents)', allFree, JSON.stringify(fl.pos));
  console.log(`# fliers: ${fl.steps} steps, distances to target ${fl.d.map(([a, b]) => `${a.toFixed(1)}->${b.toFixed(1)}`).join(', ')}`);
  await page.click('#vol-clear');

  // -- the bake form: a 400 marks its field, then a bake to done, drawn
  await page.evaluate(() => document.getElementById('vbake-form').scrollIntoView());
  await page.selectOption('#vbake-level', 'flyroom');
  await page.fill('#vbake-target', 'flyform');
  await page.fill('#vbake-voxel', '-1');
  await page.click('#vbake-start');
  await page.waitForSelector('#bake-error:not([hidden])', { timeout: 5000 }).catch(() => {});
  const verr = (await page.textContent('#bake-error')) || '';
  check('a refused volume bake names and marks its field', /voxel_size/.test(verr) &&
    ((await page.getAttribute('#vbake-voxel', 'class')) || '').includes('invalid'), verr);
  await page.fill('#vbake-voxel', '0.5');
  await page.fill('#vbake-radius', '0.75');
  await page.fill('#vbake-bounds', '0, 0, 0, 20, 8, 20');
  const old = await app.getAttribute('data-bake-job');
  await page.click('#vbake-start');
  await page.waitForFunction((old) => { const d = document.getElementById('app').dataset; return d.bakeJob && d.bakeJob !== old && ['done', 'failed'].includes(d.bakeState); },
    old, { timeout: 20000 }).catch(() => {});
  await page.waitForSelector('#app[data-volume="flyform"][data-volume-ready="1"]', { timeout: 10000 }).catch(() => {});
  const fm = (await apiJson(base, 'GET', '/v1/volumes/flyform')).data;
  check('the bake form bakes a volume (progress to done) and draws it', (await app.getAttribute('data-bake-state')) === 'done' &&
    fm && fm.radius === 0.75 && Number(await app.getAttribute('data-vol-voxels')) === fm.blocked_voxels &&
    /volume flyform/.test(await page.textContent('#bake-status')), `${await page.textContent('#bake-status')} ${JSON.stringify(fm).slice(0, 200)}`);

  await largeVolume(page, base, { check, apiJson });

  const unexpected = consoleErrors.filter((t) => !/Failed to load resource/.test(t));
  check('no console errors with flight volumes', unexpected.length === 0, unexpected.join(' | '));
  await page.close();
}

// Frames: the camera orbits; each frame is drawn and read back (so the GPU,
// here a software one, has finished). Milliseconds: mean, median, max.
async function frameTimes(page) {
  return page.evaluate(() => {
    const v = window.navdViewer.view3d, gl = document.getElementById('view3d').getContext('webgl'), px = new Uint8Array(4), times = [];
    for (let i = 0; i < 30; i++) {
      v.camera.yaw += 0.05;
      const t = performance.now();
      v.draw({ markers: [], agents: [], lines: [] });
      gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, px);
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    return { mean: times.reduce((a, b) => a + b, 0) / times.length, p50: times[15], max: times[29] };
  });
}

// -- a large volume: a 256 m cube with 1,500 random boxes of 2-16 m at 1 m
//    voxels (262,144 bricks, like `make bench`'s volume world). Figures are
//    printed; the checks fail only on a collapse (and on a miscount).
async function largeVolume(page, base, { check, apiJson }) {
  let seed = 12345;
  const rnd = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
  const quads = [];
  for (let i = 0; i < 1500; i++) {
    const size = [0, 1, 2].map(() => 2 + rnd() * 14);
    const lo = size.map((sz) => rnd() * (256 - sz));
    quads.push(...boxQuads(lo, lo.map((v, k) => v + size[k])));
  }
  const put = await fetch(base + '/v1/levels/boxes256', { method: 'PUT', headers: { 'Content-Type': 'model/obj' }, body: objQuads(quads) });
  check('the large level is stored', put.status === 201, `status ${put.status}`);
  // Baked with the form: the bar follows the job (every state and progress seen is recorded).
  await page.click('#levels-refresh');
  await page.waitForSelector('#vbake-level option[value="boxes256"]', { state: 'attached', timeout: 5000 }).catch(() => {});
  await page.evaluate(() => {
    window.__seen = [];
    new MutationObserver(() => { const d = document.getElementById('app').dataset; window.__seen.push([d.bakeState, +d.bakeProgress, d.bakeStage]); })
      .observe(document.getElementById('app'), { attributes: true, attributeFilter: ['data-bake-progress', 'data-bake-state'] });
  });
  const formBake = async (name, voxel, states) => {
    await page.selectOption('#vbake-level', 'boxes256');
    await page.fill('#vbake-target', name);
    await page.fill('#vbake-voxel', String(voxel));
    await page.fill('#vbake-radius', '0.5');
    await page.fill('#vbake-bounds', '0 0 0 256 256 256');
    const old = await page.locator('#app').getAttribute('data-bake-job');
    const t = Date.now();
    await page.click('#vbake-start');
    await page.waitForFunction(([old, states]) => { const d = document.getElementById('app').dataset; return d.bakeJob && d.bakeJob !== old && states.includes(d.bakeState); },
      [old, states], { timeout: 60000 }).catch(() => {});
    return { state: await page.locator('#app').getAttribute('data-bake-state'), ms: Date.now() - t };
  };
  const baked = await formBake('boxes256', 1, ['done', 'failed', 'cancelled']);
  const bakeMs = baked.ms;
  const seen = await page.evaluate(() => window.__seen);
  const running = seen.filter(([st, p]) => st === 'running' && p > 0 && p < 1);
  check('the volume bake\'s progress is followed to done', baked.state === 'done' && running.length > 0 &&
    running.every(([, p], i) => i === 0 || p >= running[i - 1][1]), `${baked.state} ${JSON.stringify(seen)}`);
  await page.waitForSelector('#app[data-volume="boxes256"][data-volume-ready="1"]', { timeout: 30000 }).catch(() => {});
  const meta = (await apiJson(base, 'GET', '/v1/volumes/boxes256')).data;
  if (!meta || baked.state !== 'done') return;
  await page.click('#vol-close');
  // A finer bake (8 times the voxels) cancelled while it runs: nothing is stored.
  const fine = page.waitForFunction(() => document.getElementById('app').dataset.bakeState === 'running', null, { timeout: 20000 })
    .then(() => page.click('#bake-cancel')).catch(() => {});
  const cancelled = await formBake('boxes_fine', 0.5, ['done', 'failed', 'cancelled']);
  await fine;
  check('Cancel stops a volume bake and nothing is stored', cancelled.state === 'cancelled' &&
    (await apiJson(base, 'GET', '/v1/volumes/boxes_fine')).status === 404 && /cancelled/.test(await page.textContent('#bake-status')),
    `${cancelled.state} ${await page.textContent('#bake-status')}`);
  const l0 = await page.evaluate(() => performance.now());
  await page.click('#volume-list li[data-name="boxes256"]');
  await page.waitForSelector('#app[data-volume="boxes256"][data-volume-ready="1"]', { timeout: 30000 }).catch(() => {});
  const loaded = await page.evaluate((l0) => {
    const d = document.getElementById('app').dataset, V = window.navdViewer.volume.state;
    return { ms: performance.now() - l0, fetchMs: V.fetchMs, build: +d.volBuildMs, voxels: +d.volVoxels, bricks: +d.volBricks, quads: +d.volQuads, faces: +d.volFaces, nb: V.grid.nb };
  }, l0);
  check('the large volume draws the service\'s blocked voxel count', loaded.voxels === meta.blocked_voxels, `${loaded.voxels} vs ${meta.blocked_voxels}`);
  const frames = await frameTimes(page);
  // Slicing: the lower half, meshed again.
  await page.evaluate(() => { const e = document.getElementById('slice-hi'); e.value = '500'; e.dispatchEvent(new Event('input')); });
  await page.waitForFunction(() => window.navdViewer.volume.state.grid.y1 < 200, null, { timeout: 10000 }).catch(() => {});
  const sliced = await page.evaluate(() => +document.getElementById('app').dataset.volBuildMs);
  await page.evaluate(() => { const e = document.getElementById('slice-hi'); e.value = '1000'; e.dispatchEvent(new Event('input')); });
  console.log(`# large volume: ${meta.dims.join('x')} voxels, ${loaded.nb} bricks (${loaded.bricks} with blocked voxels), ` +
    `${meta.blocked_voxels} blocked; baked with the form in ${bakeMs} ms (click to done); viewer load ${loaded.ms.toFixed(0)} ms (fetch ${loaded.fetchMs.toFixed(0)} ms, ` +
    `mesh ${loaded.build} ms: ${loaded.faces} faces as ${loaded.quads} quads); frame ${frames.mean.toFixed(1)} ms mean, ` +
    `${frames.p50.toFixed(1)} median, ${frames.max.toFixed(1)} max (software WebGL); re-mesh for a slice ${sliced} ms`);
  check('the large volume loads and draws without collapsing (load < 20 s, frame < 1 s in software WebGL)', loaded.ms < 20000 && frames.mean < 1000,
    JSON.stringify({ loaded, frames }));
  await page.click('#vol-close');
}
