/*
 * navd viewer, flight volumes' geometry: the blocked space of a volume
 * (GET /v1/volumes/{name}?format=bricks) decoded into brick masks, its
 * surface as merged quads for the 3-D view, and a ray walked through the
 * voxels for picking. Pure functions, no DOM: volume.js drives them.
 *
 * Voxels come in 4x4x4 bricks; a brick's 64 voxels are one 64-bit mask, bit
 * x + 4y + 16z, kept here as two 32-bit halves: lo holds z = 0, 1 and hi
 * z = 2, 3. Every neighbour test is then a shift of a half (x moves by 1
 * bit, y by 4, z by 16 across the halves), so the surface of a brick in one
 * direction costs a few integer operations, and only bricks with a face
 * are walked voxel by voxel.
 *
 * The surface: a face where a blocked voxel touches a free one (or the
 * grid's edge: the volume's bounds end there). Faces of one direction in one
 * layer are merged into runs along one axis, and equal runs on consecutive
 * rows into rectangles, so a flat wall is a few quads however many voxels
 * it spans. Slicing by height treats the voxels outside the slice as free,
 * so the cut shows a cap instead of a hollow shell.
 *
 *   const v = navdVolMesh.decode(json)   {dims, bd, vs, origin, lo, hi, ...}
 *   navdVolMesh.build(v, y0, y1)         voxel rows y0..y1 (inclusive) kept:
 *       {verts (Uint16Array, voxel units, 3 per vertex, 6 per quad,
 *        counter-clockwise seen from the free side),
 *        dirs: [[first vertex, count] x 6], quads, faces, voxels, bricks}
 *   navdVolMesh.raycast(v, o, d)         first blocked voxel kept by the
 *       last build along o + t d (world units), or null
 *   navdVolMesh.blocked(v, x, y, z)      one voxel, as drawn
 */
(function () {
  'use strict';

  /* Directions: +x, -x, +y, -y, +z, -z. Per normal axis n, the run axis r
     (faces merge along it first) and the row axis s. */
  const AXES = [[0, 2, 1], [1, 0, 2], [2, 0, 1]]; /* [n, r, s] */
  const BIT = [1, 4, 16]; /* a voxel's bit moves by this along x, y, z */
  /* Corners go s, then r: counter-clockwise seen from outside (the side the
     face looks to) when s x r is the face's normal; the others are reversed,
     so the 3-D view can cull faces turned away. */
  const FLIP = [false, true, false, true, true, false];

  function popcount(v) {
    v -= (v >>> 1) & 0x55555555;
    v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
    return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
  }

  /* The brick export into typed arrays. A wholly blocked brick is an
     all-ones mask; the voxels past dims (padding of the last bricks, blocked
     in the service) are cleared: they are not part of the volume. */
  function decode(j) {
    const dims = j.dims.map(Number), bd = j.brick_dims.map(Number), nb = bd[0] * bd[1] * bd[2];
    const lo = new Int32Array(nb), hi = new Int32Array(nb);
    for (const i of j.solid || []) { lo[i] = -1; hi[i] = -1; }
    for (const [i, hex] of j.mixed || []) {
      const h = String(hex).padStart(16, '0');
      hi[i] = parseInt(h.slice(0, 8), 16) | 0;
      lo[i] = parseInt(h.slice(8), 16) | 0;
    }
    const v = { dims, bd, nb, vs: Number(j.voxel_size), origin: j.origin.map(Number), raw: { lo, hi },
      lo: new Int32Array(nb), hi: new Int32Array(nb), y0: 0, y1: dims[1] - 1 };
    clip(v, v.lo, v.hi, 0, dims[1] - 1);
    return v;
  }

  /* Masks of the voxels kept along each axis in brick b of that axis. */
  function axisMasks(count, keep0, keep1) {
    const xs = new Int32Array(count);
    for (let b = 0; b < count; b++) {
      let nib = 0;
      for (let k = 0; k < 4; k++) if (4 * b + k >= keep0 && 4 * b + k <= keep1) nib |= 1 << k;
      xs[b] = nib;
    }
    return xs;
  }

  /* The raw masks restricted to dims and to voxel rows y0..y1, into lo/hi. */
  function clip(v, lo, hi, y0, y1) {
    const [bx, by, bz] = v.bd, [dx, dy, dz] = v.dims;
    const xn = axisMasks(bx, 0, dx - 1), yn = axisMasks(by, Math.max(y0, 0), Math.min(y1, dy - 1)), zn = axisMasks(bz, 0, dz - 1);
    const X = xn.map((nib) => (nib * 0x11111111) | 0);
    /* y: 4 bits per row, rows of both z of a half */
    const Y = yn.map((nib) => {
      let m = 0;
      for (let k = 0; k < 4; k++) if (nib & (1 << k)) m |= 0xf << (4 * k);
      return (m | (m << 16)) | 0;
    });
    const Zlo = zn.map((nib) => ((nib & 1 ? 0xffff : 0) | (nib & 2 ? 0xffff0000 : 0)) | 0);
    const Zhi = zn.map((nib) => ((nib & 4 ? 0xffff : 0) | (nib & 8 ? 0xffff0000 : 0)) | 0);
    const RL = v.raw.lo, RH = v.raw.hi;
    let i = 0;
    for (let z = 0; z < bz; z++)
      for (let y = 0; y < by; y++)
        for (let x = 0; x < bx; x++, i++) {
          const m = X[x] & Y[y];
          lo[i] = RL[i] & m & Zlo[z];
          hi[i] = RH[i] & m & Zhi[z];
        }
  }

  /* Faces of direction d per brick (blocked here, free or outside next
     door), as two halves, into fl/fh; returns how many bricks have one. */
  function faceMasks(v, d, fl, fh) {
    const [bx, by, bz] = v.bd, L = v.lo, H = v.hi;
    const step = [1, -1, bx, -bx, bx * by, -bx * by][d];
    const X0 = 0x11111111, X3 = 0x88888888 | 0, Y0 = 0x000f000f, Y3 = 0xf000f000 | 0;
    let n = 0, i = 0;
    for (let z = 0; z < bz; z++)
      for (let y = 0; y < by; y++)
        for (let x = 0; x < bx; x++, i++) {
          const ml = L[i], mh = H[i];
          if (!(ml | mh)) { fl[i] = 0; fh[i] = 0; continue; }
          const inside = d === 0 ? x + 1 < bx : d === 1 ? x > 0 : d === 2 ? y + 1 < by : d === 3 ? y > 0 : d === 4 ? z + 1 < bz : z > 0;
          const nl = inside ? L[i + step] : 0, nh = inside ? H[i + step] : 0;
          let al, ah; /* the neighbour of each voxel in direction d */
          switch (d) {
            case 0: al = ((ml >>> 1) & ~X3) | ((nl << 3) & X3); ah = ((mh >>> 1) & ~X3) | ((nh << 3) & X3); break;
            case 1: al = ((ml << 1) & ~X0) | ((nl >>> 3) & X0); ah = ((mh << 1) & ~X0) | ((nh >>> 3) & X0); break;
            case 2: al = ((ml >>> 4) & ~Y3) | ((nl << 12) & Y3); ah = ((mh >>> 4) & ~Y3) | ((nh << 12) & Y3); break;
            case 3: al = ((ml << 4) & ~Y0) | ((nl >>> 12) & Y0); ah = ((mh << 4) & ~Y0) | ((nh >>> 12) & Y0); break;
            case 4: al = (ml >>> 16) | (mh << 16); ah = (mh >>> 16) | (nl << 16); break;
            default: al = (ml << 16) | (nh >>> 16); ah = (mh << 16) | (ml >>> 16); break;
          }
          fl[i] = ml & ~al;
          fh[i] = mh & ~ah;
          if (fl[i] | fh[i]) n++;
        }
    return n;
  }

  /* A growable Uint16 vertex array. */
  function growable() {
    let a = new Uint16Array(1 << 16), n = 0;
    return {
      quad(p) { /* p: 4 corners, 12 numbers: two triangles 0 1 2, 0 2 3 */
        if (n + 18 > a.length) { const b = new Uint16Array(a.length * 2); b.set(a); a = b; }
        for (const k of [0, 1, 2, 0, 2, 3]) { a[n++] = p[3 * k]; a[n++] = p[3 * k + 1]; a[n++] = p[3 * k + 2]; }
      },
      get length() { return n; },
      done() { return a.slice(0, n); },
    };
  }

  /*
   * The surface of the voxels in rows y0..y1 as merged quads. Per direction:
   * every layer along the normal, every row in it, runs of faces along the
   * run axis (walking only rows whose bricks have a face), and a run equal
   * (start and length) to one on the previous row extends that rectangle.
   */
  function build(v, y0, y1) {
    const t0 = (typeof performance !== 'undefined' ? performance : Date).now();
    clip(v, v.lo, v.hi, y0, y1);
    v.y0 = y0; v.y1 = y1;
    const { dims, bd, nb } = v;
    const fl = new Int32Array(nb), fh = new Int32Array(nb);
    const out = growable(), dirs = [];
    let quads = 0, faces = 0;
    const bi = [0, 0, 0], c = [0, 0, 0];
    for (let d = 0; d < 6; d++) {
      const first = out.length / 3;
      const [n, r, s] = AXES[d >> 1], pos = (d & 1) === 0;
      if (!faceMasks(v, d, fl, fh)) { dirs.push([first, 0]); continue; }
      /* per (brick layer, brick row): the first and last brick with a face */
      const rowLo = new Int32Array(bd[n] * bd[s]).fill(-1), rowHi = new Int32Array(bd[n] * bd[s]);
      for (let i = 0, x = 0, y = 0, z = 0; i < nb; i++) {
        if (fl[i] | fh[i]) {
          const b = [x, y, z], row = b[n] * bd[s] + b[s];
          if (rowLo[row] < 0 || b[r] < rowLo[row]) rowLo[row] = b[r];
          if (b[r] > rowHi[row]) rowHi[row] = b[r];
        }
        if (++x === bd[0]) { x = 0; if (++y === bd[1]) { y = 0; z++; } }
      }
      const strideB = [1, bd[0], bd[0] * bd[1]];
      for (let L = 0; L < dims[n]; L++) {
        let open = []; /* [start, len, quad] of the previous row */
        for (let S = 0; S < dims[s]; S++) {
          const runs = [];
          const row = (L >> 2) * bd[s] + (S >> 2);
          if (rowLo[row] >= 0) {
            bi[n] = L >> 2; bi[s] = S >> 2;
            const base = (L & 3) * BIT[n] + (S & 3) * BIT[s], rb = BIT[r];
            let runStart = -1;
            bi[r] = rowLo[row];
            const b0 = bi[0] * strideB[0] + bi[1] * strideB[1] + bi[2] * strideB[2], bstep = strideB[r];
            for (let R = rowLo[row], b = b0; R <= rowHi[row]; R++, b += bstep) {
              const ml = fl[b], mh = fh[b];
              let nib = 0;
              if (ml | mh)
                for (let k = 0; k < 4; k++) {
                  const bit = base + k * rb;
                  nib |= ((bit < 32 ? ml >>> bit : mh >>> (bit - 32)) & 1) << k;
                }
              /* the common cases: no face here, or faces all along */
              if (nib === 0) { if (runStart >= 0) { runs.push(runStart, 4 * R - runStart); runStart = -1; } continue; }
              if (nib === 15) { if (runStart < 0) runStart = 4 * R; continue; }
              for (let k = 0; k < 4; k++) {
                const on = (nib >> k) & 1, at = 4 * R + k;
                if (on && runStart < 0) runStart = at;
                else if (!on && runStart >= 0) { runs.push(runStart, at - runStart); runStart = -1; }
              }
            }
            if (runStart >= 0) runs.push(runStart, 4 * (rowHi[row] + 1) - runStart);
          }
          /* equal runs on consecutive rows are one rectangle */
          const next = [];
          let oi = 0;
          for (let k = 0; k < runs.length; k += 2) {
            const st = runs[k], len = runs[k + 1];
            while (oi < open.length && open[oi][0] < st) oi++;
            if (oi < open.length && open[oi][0] === st && open[oi][1] === len) {
              open[oi][2][3]++;
              next.push(open[oi]);
              oi++;
            } else next.push([st, len, [L, S, st, 1, len]]);
          }
          for (const o of open) if (!next.includes(o)) emit(o[2]);
          open = next;
          faces += runs.length ? runs.reduce((a, x, k) => (k & 1 ? a + x : a), 0) : 0;
        }
        for (const o of open) emit(o[2]);
      }
      function emit(q) { /* q: [layer, row0, run0, rows, runLen] */
        const [Lq, s0, r0, sl, rl] = q;
        const p = [];
        const plane = pos ? Lq + 1 : Lq;
        for (const [ds, dr] of FLIP[d] ? [[0, 0], [0, rl], [sl, rl], [sl, 0]] : [[0, 0], [sl, 0], [sl, rl], [0, rl]]) {
          c[n] = plane; c[s] = s0 + ds; c[r] = r0 + dr;
          p.push(c[0], c[1], c[2]);
        }
        out.quad(p);
        quads++;
      }
      dirs.push([first, out.length / 3 - first]);
    }
    let voxels = 0, bricks = 0;
    for (let i = 0; i < nb; i++) {
      if (!(v.lo[i] | v.hi[i])) continue;
      bricks++;
      voxels += popcount(v.lo[i]) + popcount(v.hi[i]);
    }
    const t1 = (typeof performance !== 'undefined' ? performance : Date).now();
    return { verts: out.done(), dirs, quads, faces, voxels, bricks, ms: t1 - t0 };
  }

  /* Voxel (x, y, z) blocked, as the last build drew it (dims and slice). */
  function blocked(v, x, y, z) {
    if (x < 0 || y < 0 || z < 0 || x >= v.dims[0] || y >= v.dims[1] || z >= v.dims[2]) return false;
    const b = ((z >> 2) * v.bd[1] + (y >> 2)) * v.bd[0] + (x >> 2);
    const bit = (x & 3) + 4 * (y & 3) + 16 * (z & 3);
    return ((bit < 32 ? v.lo[b] >>> bit : v.hi[b] >>> (bit - 32)) & 1) === 1;
  }

  /*
   * The first drawn blocked voxel along o + t dir (world units, t > 0), by
   * a voxel walk (Amanatides and Woo) from where the ray enters the grid:
   * {t, point (on the entered face), normal (of that face, toward the ray's
   * origin), voxel}, or null when the ray leaves the grid first.
   */
  function raycast(v, o, dir) {
    const p = [0, 1, 2].map((k) => (o[k] - v.origin[k]) / v.vs);
    let t0 = 0, t1 = Infinity, enterAxis = -1;
    for (let k = 0; k < 3; k++) {
      if (Math.abs(dir[k]) < 1e-12) { if (p[k] < 0 || p[k] > v.dims[k]) return null; continue; }
      let a = (0 - p[k]) / dir[k], b = (v.dims[k] - p[k]) / dir[k];
      if (a > b) [a, b] = [b, a];
      if (a > t0) { t0 = a; enterAxis = k; }
      t1 = Math.min(t1, b);
    }
    if (t0 > t1) return null;
    const cell = [0, 1, 2].map((k) => Math.min(Math.max(Math.floor(p[k] + dir[k] * (t0 + 1e-9)), 0), v.dims[k] - 1));
    const step = dir.map((x) => (x > 0 ? 1 : -1));
    const tNext = [0, 1, 2].map((k) => (Math.abs(dir[k]) < 1e-12 ? Infinity : (cell[k] + (dir[k] > 0 ? 1 : 0) - p[k]) / dir[k]));
    const tDelta = dir.map((x) => (Math.abs(x) < 1e-12 ? Infinity : 1 / Math.abs(x)));
    let t = t0, axis = enterAxis;
    for (let guard = v.dims[0] + v.dims[1] + v.dims[2] + 3; guard > 0; guard--) {
      if (blocked(v, cell[0], cell[1], cell[2])) {
        const normal = [0, 0, 0];
        if (axis >= 0) normal[axis] = -step[axis];
        const point = [0, 1, 2].map((k) => v.origin[k] + (p[k] + dir[k] * t) * v.vs);
        return { t: t * v.vs, point, normal, voxel: cell.slice() };
      }
      axis = tNext[0] < tNext[1] ? (tNext[0] < tNext[2] ? 0 : 2) : (tNext[1] < tNext[2] ? 1 : 2);
      t = tNext[axis];
      if (t > t1) return null;
      cell[axis] += step[axis];
      if (cell[axis] < 0 || cell[axis] >= v.dims[axis]) return null;
      tNext[axis] += tDelta[axis];
    }
    return null;
  }

  const api = { decode, build, raycast, blocked, popcount };
  if (typeof window !== 'undefined') window.navdVolMesh = api;
  if (typeof module !== 'undefined') module.exports = api;
})();
