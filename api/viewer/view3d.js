/*
 * navd viewer, 3-D view: the navmesh as lit triangles in WebGL 1, orbited
 * by the mouse, with floors sliced by height, and a click that picks the
 * surface under the cursor in 3-D (so a floor under a bridge is reached by
 * looking under the bridge, not by a modifier key).
 *
 * Plain WebGL, no library: one program for lit, coloured triangles and one
 * for lines and points of one colour. Coordinates are sent relative to the
 * mesh's centre so float32 keeps millimetres on levels far from the origin.
 *
 * The host (viewer.js) hands in the prepared mesh and, each frame, what to
 * overlay; this file owns the camera, the GL state and picking.
 *   const v = navdView3d.create(canvas, host)
 *   v.setMesh(mesh, colorOf)   colorOf(poly) -> [r, g, b] in 0..1
 *   v.setLevel(tris)           the level geometry under the mesh (world xyz,
 *                              nine numbers per triangle), or null
 *   v.draw(overlay)            overlay: {path, markers, agents, lines}
 *   v.pick(px, py)             -> {x, y, z, poly} or null
 *   v.slice(lo, hi), v.reset(), v.camera (yaw, pitch, dist, target)
 * and for flight volumes (volume.js):
 *   v.setVolume(geom)          the blocked space's quads (volmesh.js build,
 *                              with origin, voxel size and world bounds), or null
 *   v.setBoxes(boxes)          translucent boxes [min x, y, z, side] (the
 *                              expanded nodes), or null
 *   v.setPlane(y)              a translucent picking plane over the volume, or null
 *   v.showMesh                 false hides the navmesh (drawn and picked)
 *   v.ray(px, py)              -> {eye, dir} in world coordinates
 *   v.project([x, y, z])       -> {x, y} CSS pixels, or null behind the eye
 */
(function () {
  'use strict';

  const TRI_VS = `
    attribute vec3 a_pos; attribute vec3 a_col; attribute vec3 a_nrm;
    uniform mat4 u_mvp; uniform vec3 u_light;
    varying vec3 v_col; varying float v_y;
    void main() {
      float l = 0.55 + 0.45 * abs(dot(normalize(a_nrm), u_light));
      v_col = a_col * l; v_y = a_pos.y;
      gl_Position = u_mvp * vec4(a_pos, 1.0);
    }`;
  const TRI_FS = `
    precision mediump float;
    varying vec3 v_col; varying float v_y;
    uniform vec2 u_slice; uniform float u_alpha;
    void main() {
      if (v_y < u_slice.x || v_y > u_slice.y) discard;
      gl_FragColor = vec4(v_col, u_alpha);
    }`;
  const LINE_VS = `
    attribute vec3 a_pos; uniform mat4 u_mvp; uniform float u_size; varying float v_y;
    void main() { v_y = a_pos.y; gl_Position = u_mvp * vec4(a_pos, 1.0); gl_PointSize = u_size; }`;
  const LINE_FS = `
    precision mediump float; uniform vec4 u_color; uniform vec2 u_slice; varying float v_y;
    void main() { if (v_y < u_slice.x || v_y > u_slice.y) discard; gl_FragColor = u_color; }`;

  /* Volume quads: positions in voxel units (16-bit), one normal per draw
     call (the quads come sorted by direction), coloured by height. */
  const VOX_VS = `
    attribute vec3 a_vox;
    uniform mat4 u_mvp; uniform vec3 u_off; uniform float u_vs; uniform vec3 u_nrm; uniform vec3 u_light;
    uniform vec2 u_yr;
    varying vec3 v_col;
    void main() {
      vec3 p = u_off + a_vox * u_vs;
      float h = clamp((p.y - u_yr.x) / max(u_yr.y - u_yr.x, 1e-3), 0.0, 1.0);
      vec3 base = mix(vec3(0.22, 0.42, 0.62), vec3(0.86, 0.66, 0.42), h);
      v_col = base * (0.62 + 0.38 * dot(u_nrm, u_light));
      gl_Position = u_mvp * vec4(p, 1.0);
    }`;
  const VOX_FS = `
    precision mediump float; varying vec3 v_col; uniform float u_alpha;
    void main() { gl_FragColor = vec4(v_col, u_alpha); }`;
  const DIR_NORMALS = [[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]];

  function compile(gl, vs, fs) {
    const prog = gl.createProgram();
    for (const [type, src] of [[gl.VERTEX_SHADER, vs], [gl.FRAGMENT_SHADER, fs]]) {
      const sh = gl.createShader(type);
      gl.shaderSource(sh, src);
      gl.compileShader(sh);
      if (!gl.getShaderParameter(sh, gl.COMPILE_STATUS)) throw new Error('shader: ' + gl.getShaderInfoLog(sh));
      gl.attachShader(prog, sh);
    }
    gl.linkProgram(prog);
    if (!gl.getProgramParameter(prog, gl.LINK_STATUS)) throw new Error('program: ' + gl.getProgramInfoLog(prog));
    return prog;
  }

  /* ---- small vector and matrix helpers (column-major 4x4, as WebGL wants) */
  const sub = (a, b) => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
  const cross = (a, b) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
  const dot = (a, b) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
  const norm = (a) => { const l = Math.hypot(a[0], a[1], a[2]) || 1; return [a[0] / l, a[1] / l, a[2] / l]; };

  function perspective(fovy, aspect, near, far) {
    const f = 1 / Math.tan(fovy / 2), nf = 1 / (near - far);
    return [f / aspect, 0, 0, 0, 0, f, 0, 0, 0, 0, (far + near) * nf, -1, 0, 0, 2 * far * near * nf, 0];
  }

  function lookAt(eye, at, up) {
    const z = norm(sub(eye, at)), x = norm(cross(up, z)), y = cross(z, x);
    return [x[0], y[0], z[0], 0, x[1], y[1], z[1], 0, x[2], y[2], z[2], 0,
      -dot(x, eye), -dot(y, eye), -dot(z, eye), 1];
  }

  function mul(a, b) {
    const o = new Array(16).fill(0);
    for (let c = 0; c < 4; c++) for (let r = 0; r < 4; r++) {
      let s = 0;
      for (let k = 0; k < 4; k++) s += a[k * 4 + r] * b[c * 4 + k];
      o[c * 4 + r] = s;
    }
    return o;
  }

  function create(canvas, host) {
    const gl = canvas.getContext('webgl', { antialias: true, preserveDrawingBuffer: true });
    if (!gl) return null;
    const tri = compile(gl, TRI_VS, TRI_FS), line = compile(gl, LINE_VS, LINE_FS), vox = compile(gl, VOX_VS, VOX_FS);
    const loc = (p, n) => gl.getAttribLocation(p, n), uni = (p, n) => gl.getUniformLocation(p, n);
    const buf = { tri: gl.createBuffer(), edges: gl.createBuffer(), scratch: gl.createBuffer(), level: gl.createBuffer(),
      vol: gl.createBuffer(), boxes: gl.createBuffer() };
    const self = {
      camera: { yaw: 0.6, pitch: 0.75, dist: 50, target: [0, 0, 0] },
      sliceLo: -Infinity, sliceHi: Infinity,
      centre: [0, 0, 0], ntri: 0, nedge: 0, tris: null, triPoly: null, bounds: null, levelWorld: null, nlevel: 0,
      size: { w: 1, h: 1, dpr: 1 },
      vol: null, nboxes: 0, plane: null, showMesh: true,
    };

    /* Triangles of the mesh (the detail mesh's when asked for and present,
       else each polygon's fan), three vertices each with the polygon's
       colour and the triangle's normal; a CPU copy for picking. */
    self.setMesh = function (mesh, colorOf, useDetail) {
      self.mesh = mesh;
      if (!mesh) { self.ntri = 0; self.nedge = 0; self.bounds = null; return; }
      const b = mesh.bounds;
      const c = [(b.minX + b.maxX) / 2, (b.minY + b.maxY) / 2, (b.minZ + b.maxZ) / 2];
      self.centre = c;
      const tris = [], owner = [];
      const V = (i) => [mesh.vx[i] - c[0], mesh.vy[i] - c[1], mesh.vz[i] - c[2]];
      const D = useDetail && mesh.detail;
      for (const p of mesh.polys) {
        /* detail: flat arrays, (first, count) per polygon and 3 indices per triangle */
        const first = D ? D.ranges[2 * p.id] : 0, count = D ? D.ranges[2 * p.id + 1] : 0;
        if (count > 0) {
          for (let t = first; t < first + count && 3 * t + 2 < D.tris.length; t++) {
            for (let k = 0; k < 3; k++) { const v = D.vert(D.tris[3 * t + k]); tris.push(v[0] - c[0], v[1] - c[1], v[2] - c[2]); }
            owner.push(p.id);
          }
        } else {
          for (let k = 1; k + 1 < p.ids.length; k++) {
            for (const i of [p.ids[0], p.ids[k], p.ids[k + 1]]) tris.push(...V(i));
            owner.push(p.id);
          }
        }
      }
      self.tris = new Float32Array(tris);
      self.triPoly = Int32Array.from(owner);
      self.ntri = owner.length;
      const data = new Float32Array(self.ntri * 3 * 9);
      const colors = new Map();
      for (let t = 0; t < self.ntri; t++) {
        const o = t * 9, T = self.tris;
        const a = [T[o], T[o + 1], T[o + 2]], bb = [T[o + 3], T[o + 4], T[o + 5]], cc = [T[o + 6], T[o + 7], T[o + 8]];
        const n = norm(cross(sub(bb, a), sub(cc, a)));
        const pid = self.triPoly[t];
        let col = colors.get(pid);
        if (!col) { col = colorOf(mesh.polys[pid]); colors.set(pid, col); }
        for (let k = 0; k < 3; k++) {
          const d = (t * 3 + k) * 9;
          data.set([T[o + 3 * k], T[o + 3 * k + 1], T[o + 3 * k + 2]], d);
          data.set(col, d + 3);
          data.set(n, d + 6);
        }
      }
      gl.bindBuffer(gl.ARRAY_BUFFER, buf.tri);
      gl.bufferData(gl.ARRAY_BUFFER, data, gl.STATIC_DRAW);
      /* Walls: boundary edges, lifted 2 cm so they are not hidden in the floor. */
      const e = [];
      const bi = mesh.boundaryIdx || [];
      for (let k = 0; k + 1 < bi.length; k += 2) e.push(...V(bi[k]), ...V(bi[k + 1]));
      for (let k = 1; k < e.length; k += 3) e[k] += 0.02;
      self.nedge = e.length / 3;
      gl.bindBuffer(gl.ARRAY_BUFFER, buf.edges);
      gl.bufferData(gl.ARRAY_BUFFER, new Float32Array(e), gl.STATIC_DRAW);
      self.bounds = b;
      uploadLevel();
      if (self.boxesWorld) self.setBoxes(self.boxesWorld);
    };

    /* The level's triangles, grey and lit like the mesh, relative to the
       mesh's centre (so they are uploaded again when the mesh changes). */
    function uploadLevel() {
      const T = self.levelWorld;
      self.nlevel = 0;
      if (!T || !T.length) return;
      const c = self.centre, n = T.length / 9, data = new Float32Array(n * 27);
      const grey = [0.4, 0.43, 0.48];
      for (let t = 0; t < n; t++) {
        const o = t * 9;
        const a = [T[o], T[o + 1], T[o + 2]], b = [T[o + 3], T[o + 4], T[o + 5]], cc = [T[o + 6], T[o + 7], T[o + 8]];
        const nr = norm(cross(sub(b, a), sub(cc, a)));
        for (let k = 0; k < 3; k++) {
          const d = (t * 3 + k) * 9;
          data[d] = T[o + 3 * k] - c[0]; data[d + 1] = T[o + 3 * k + 1] - c[1]; data[d + 2] = T[o + 3 * k + 2] - c[2];
          data.set(grey, d + 3);
          data.set(nr, d + 6);
        }
      }
      gl.bindBuffer(gl.ARRAY_BUFFER, buf.level);
      gl.bufferData(gl.ARRAY_BUFFER, data, gl.STATIC_DRAW);
      self.nlevel = n;
    }

    self.setLevel = function (tris) {
      self.levelWorld = tris;
      uploadLevel();
    };

    /* The volume's quads; the view is centred on the volume while it is
       shown (so the mesh, when drawn with it, is placed relative to it). */
    self.setVolume = function (g) {
      self.vol = g || null;
      if (!g) return;
      gl.bindBuffer(gl.ARRAY_BUFFER, buf.vol);
      gl.bufferData(gl.ARRAY_BUFFER, g.verts, gl.STATIC_DRAW);
    };

    /* Boxes [min x, min y, min z, side] as 12 triangles each, lit per face. */
    self.setBoxes = function (boxes) {
      self.nboxes = 0;
      self.boxesWorld = boxes || null; /* uploaded again when the centre moves */
      if (!boxes || !boxes.length) return;
      const c = self.centre, data = new Float32Array(boxes.length * 36 * 9);
      const col = [1, 0.47, 0.86];
      let o = 0;
      for (const [x, y, z, sd] of boxes) {
        const lo = [x - c[0], y - c[1], z - c[2]];
        for (let d = 0; d < 6; d++) {
          const ax = d >> 1, u = (ax + 1) % 3, w = (ax + 2) % 3, at = d & 1 ? 0 : sd;
          const corner = (a, b) => { const p = lo.slice(); p[ax] += at; p[u] += a; p[w] += b; return p; };
          for (const [a, b] of [[0, 0], [sd, 0], [sd, sd], [0, 0], [sd, sd], [0, sd]]) {
            data.set(corner(a, b), o); data.set(col, o + 3); data.set(DIR_NORMALS[d], o + 6); o += 9;
          }
        }
      }
      gl.bindBuffer(gl.ARRAY_BUFFER, buf.boxes);
      gl.bufferData(gl.ARRAY_BUFFER, data, gl.STATIC_DRAW);
      self.nboxes = boxes.length;
    };

    self.setPlane = function (y) { self.plane = y === null || y === undefined ? null : y; };

    /* What the camera frames: the volume while shown, else the mesh. */
    const frameBounds = () => (self.vol ? self.vol.bounds : self.bounds);

    /* Frames the whole mesh (or volume) from above and to the side. */
    self.reset = function () {
      const b = frameBounds();
      if (!b) return;
      if (self.vol) {
        /* centre the camera on the volume, relative to the view's centre */
        const c = self.centre;
        Object.assign(self.camera, { target: [(b.minX + b.maxX) / 2 - c[0], (b.minY + b.maxY) / 2 - c[1], (b.minZ + b.maxZ) / 2 - c[2]] });
        const ext = Math.max(b.maxX - b.minX, b.maxZ - b.minZ, b.maxY - b.minY, 1);
        Object.assign(self.camera, { yaw: 0.6, pitch: 0.6, dist: ext * 1.6 });
        return;
      }
      const ext = Math.max(b.maxX - b.minX, b.maxZ - b.minZ, b.maxY - b.minY, 1);
      Object.assign(self.camera, { yaw: 0.6, pitch: 0.75, dist: ext * 1.4, target: [0, 0, 0] });
    };

    self.resize = function () {
      const r = canvas.getBoundingClientRect(), dpr = window.devicePixelRatio || 1;
      self.size = { w: Math.max(r.width, 1), h: Math.max(r.height, 1), dpr };
      canvas.width = Math.round(self.size.w * dpr);
      canvas.height = Math.round(self.size.h * dpr);
    };

    self.eye = function () {
      const cam = self.camera, t = cam.target;
      return [t[0] + cam.dist * Math.cos(cam.pitch) * Math.sin(cam.yaw), t[1] + cam.dist * Math.sin(cam.pitch),
        t[2] + cam.dist * Math.cos(cam.pitch) * Math.cos(cam.yaw)];
    };

    const FOV = (50 * Math.PI) / 180;
    function matrices() {
      const eye = self.eye(), cam = self.camera;
      const fb = frameBounds();
      const ext = fb ? Math.max(fb.maxX - fb.minX, fb.maxZ - fb.minZ, fb.maxY - fb.minY, 1) : 100;
      const proj = perspective(FOV, self.size.w / self.size.h, Math.max(cam.dist * 0.005, 0.01), cam.dist + ext * 3);
      return { eye, mvp: mul(proj, lookAt(eye, cam.target, [0, 1, 0])) };
    }

    /* Slice bounds are world heights; the shaders see centred ones. */
    const slice = () => [self.sliceLo - self.centre[1], self.sliceHi - self.centre[1]];

    function drawLines(mvp, data, mode, color, size) {
      if (!data.length) return;
      gl.useProgram(line);
      gl.bindBuffer(gl.ARRAY_BUFFER, buf.scratch);
      gl.bufferData(gl.ARRAY_BUFFER, data, gl.DYNAMIC_DRAW);
      const a = loc(line, 'a_pos');
      gl.enableVertexAttribArray(a);
      gl.vertexAttribPointer(a, 3, gl.FLOAT, false, 12, 0);
      gl.uniformMatrix4fv(uni(line, 'u_mvp'), false, mvp);
      gl.uniform4fv(uni(line, 'u_color'), color);
      gl.uniform1f(uni(line, 'u_size'), size || 1);
      gl.uniform2fv(uni(line, 'u_slice'), [-1e9, 1e9]);
      gl.drawArrays(mode, 0, data.length / 3);
    }

    function drawVolume(mvp) {
      const g = self.vol, c = self.centre;
      gl.useProgram(vox);
      gl.bindBuffer(gl.ARRAY_BUFFER, buf.vol);
      const a = loc(vox, 'a_vox');
      gl.enableVertexAttribArray(a);
      gl.vertexAttribPointer(a, 3, gl.UNSIGNED_SHORT, false, 6, 0);
      gl.uniformMatrix4fv(uni(vox, 'u_mvp'), false, mvp);
      gl.uniform3fv(uni(vox, 'u_off'), [g.origin[0] - c[0], g.origin[1] - c[1], g.origin[2] - c[2]]);
      gl.uniform1f(uni(vox, 'u_vs'), g.vs);
      gl.uniform3fv(uni(vox, 'u_light'), norm([0.3, 1, 0.5]));
      gl.uniform2fv(uni(vox, 'u_yr'), [g.bounds.minY - c[1], g.bounds.maxY - c[1]]);
      gl.uniform1f(uni(vox, 'u_alpha'), 1);
      /* Faces turned away from the eye are culled (they wind clockwise on
         screen): half the fragments, which a software renderer feels. */
      gl.enable(gl.CULL_FACE);
      g.dirs.forEach(([first, count], d) => {
        if (!count) return;
        gl.uniform3fv(uni(vox, 'u_nrm'), DIR_NORMALS[d]);
        gl.drawArrays(gl.TRIANGLES, first, count);
      });
      gl.disable(gl.CULL_FACE);
      gl.disableVertexAttribArray(a);
    }

    /* The view ray through CSS pixel (px, py), in world coordinates. */
    self.ray = function (px, py) {
      const eye = self.eye(), cam = self.camera, c = self.centre;
      const fwd = norm(sub(cam.target, eye)), right = norm(cross(fwd, [0, 1, 0])), up = cross(right, fwd);
      const t = Math.tan(FOV / 2), aspect = self.size.w / self.size.h;
      const sx = ((px / self.size.w) * 2 - 1) * t * aspect, sy = (1 - (py / self.size.h) * 2) * t;
      const dir = norm([fwd[0] + sx * right[0] + sy * up[0], fwd[1] + sx * right[1] + sy * up[1], fwd[2] + sx * right[2] + sy * up[2]]);
      return { eye: [eye[0] + c[0], eye[1] + c[1], eye[2] + c[2]], dir };
    };

    /* World point to CSS pixels (null behind the eye). */
    self.project = function (p) {
      const { mvp } = matrices(), c = self.centre;
      const x = p[0] - c[0], y = p[1] - c[1], z = p[2] - c[2];
      const cx = mvp[0] * x + mvp[4] * y + mvp[8] * z + mvp[12], cy = mvp[1] * x + mvp[5] * y + mvp[9] * z + mvp[13];
      const cw = mvp[3] * x + mvp[7] * y + mvp[11] * z + mvp[15];
      if (cw <= 1e-9) return null;
      return { x: ((cx / cw + 1) / 2) * self.size.w, y: ((1 - cy / cw) / 2) * self.size.h };
    };

    /* overlay: {path: [[x,y,z]...], markers: [{p, color}], agents: [{p, r, color}]} in world coordinates. */
    self.draw = function (overlay) {
      gl.viewport(0, 0, canvas.width, canvas.height);
      gl.clearColor(0.05, 0.066, 0.09, 1);
      gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
      gl.enable(gl.DEPTH_TEST);
      const showMesh = self.ntri && self.showMesh;
      if (!showMesh && !self.vol) return;
      const { mvp } = matrices();
      if (self.vol) drawVolume(mvp);
      gl.useProgram(tri);
      const bindTris = (b) => {
        gl.bindBuffer(gl.ARRAY_BUFFER, b);
        for (const [name, n, off] of [['a_pos', 3, 0], ['a_col', 3, 12], ['a_nrm', 3, 24]]) {
          const a = loc(tri, name);
          gl.enableVertexAttribArray(a);
          gl.vertexAttribPointer(a, n, gl.FLOAT, false, 36, off);
        }
      };
      gl.uniformMatrix4fv(uni(tri, 'u_mvp'), false, mvp);
      gl.uniform3fv(uni(tri, 'u_light'), norm([0.3, 1, 0.5]));
      gl.uniform2fv(uni(tri, 'u_slice'), slice());
      gl.uniform1f(uni(tri, 'u_alpha'), 1);
      if (showMesh) {
        bindTris(buf.tri);
        gl.drawArrays(gl.TRIANGLES, 0, self.ntri * 3);
      }
      for (const name of ['a_col', 'a_nrm']) gl.disableVertexAttribArray(loc(tri, name));
      if (self.nedge && showMesh) {
        gl.useProgram(line);
        gl.bindBuffer(gl.ARRAY_BUFFER, buf.edges);
        const a = loc(line, 'a_pos');
        gl.enableVertexAttribArray(a);
        gl.vertexAttribPointer(a, 3, gl.FLOAT, false, 12, 0);
        gl.uniformMatrix4fv(uni(line, 'u_mvp'), false, mvp);
        gl.uniform4fv(uni(line, 'u_color'), [0.01, 0.02, 0.04, 1]);
        gl.uniform1f(uni(line, 'u_size'), 1);
        gl.uniform2fv(uni(line, 'u_slice'), slice());
        gl.drawArrays(gl.LINES, 0, self.nedge);
      }
      if (self.nboxes) {
        /* Expanded nodes: translucent, without writing depth, over the blocked space. */
        gl.useProgram(tri);
        bindTris(buf.boxes);
        gl.uniform2fv(uni(tri, 'u_slice'), [-1e9, 1e9]);
        gl.uniform1f(uni(tri, 'u_alpha'), 0.22);
        gl.enable(gl.BLEND);
        gl.blendFunc(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA);
        gl.depthMask(false);
        gl.drawArrays(gl.TRIANGLES, 0, self.nboxes * 36);
        gl.depthMask(true);
        gl.disable(gl.BLEND);
        gl.uniform2fv(uni(tri, 'u_slice'), slice());
        for (const name of ['a_col', 'a_nrm']) gl.disableVertexAttribArray(loc(tri, name));
      }
      if (self.plane !== null && self.vol) {
        const b = self.vol.bounds, c = self.centre, y = self.plane - c[1];
        const q = [[b.minX, b.minZ], [b.maxX, b.minZ], [b.maxX, b.maxZ], [b.minX, b.minZ], [b.maxX, b.maxZ], [b.minX, b.maxZ]]
          .flatMap(([x, z]) => [x - c[0], y, z - c[2]]);
        gl.enable(gl.BLEND);
        gl.blendFunc(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA);
        gl.depthMask(false);
        drawLines(mvp, new Float32Array(q), gl.TRIANGLES, [0.3, 0.65, 1, 0.16]);
        const e = [[b.minX, b.minZ], [b.maxX, b.minZ], [b.maxX, b.maxZ], [b.minX, b.maxZ], [b.minX, b.minZ]].flatMap(([x, z]) => [x - c[0], y, z - c[2]]);
        drawLines(mvp, new Float32Array(e), gl.LINE_STRIP, [0.3, 0.65, 1, 0.8]);
        gl.depthMask(true);
        gl.disable(gl.BLEND);
      }
      if (self.nlevel) {
        /* The level after the mesh, translucent and without writing depth:
           its ceilings and walls tint what they hide instead of hiding it,
           and where the mesh lies on the level's floor the mesh shows. */
        gl.useProgram(tri);
        bindTris(buf.level);
        gl.uniform1f(uni(tri, 'u_alpha'), 0.28);
        gl.enable(gl.BLEND);
        gl.blendFunc(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA);
        gl.depthMask(false);
        gl.drawArrays(gl.TRIANGLES, 0, self.nlevel * 3);
        gl.depthMask(true);
        gl.disable(gl.BLEND);
        for (const name of ['a_col', 'a_nrm']) gl.disableVertexAttribArray(loc(tri, name));
      }
      /* Overlays sit 5 cm above the surface and are drawn over it. */
      const c = self.centre, lift = (p) => [p[0] - c[0], p[1] - c[1] + 0.05, p[2] - c[2]];
      gl.disable(gl.DEPTH_TEST);
      if (overlay && overlay.path && overlay.path.length > 1)
        drawLines(mvp, new Float32Array(overlay.path.flatMap(lift)), gl.LINE_STRIP, [1, 0.88, 0.3, 1]);
      for (const l of (overlay && overlay.lines) || [])
        drawLines(mvp, new Float32Array(l.points.flatMap(lift)), gl.LINE_STRIP, l.color);
      for (const a of (overlay && overlay.agents) || [])
        drawLines(mvp, new Float32Array(lift(a.p)), gl.POINTS, a.color, Math.max(4, Math.min(24, a.px || 8)));
      for (const d of (overlay && overlay.dots) || [])
        drawLines(mvp, new Float32Array(lift(d.p)), gl.POINTS, d.color, d.size || 6);
      for (const m of (overlay && overlay.markers) || [])
        drawLines(mvp, new Float32Array(lift(m.p)), gl.POINTS, m.color, 11);
      self.lastOverlay = overlay; /* what was drawn, for tests */
    };

    /* The surface point under canvas pixel (px, py) (CSS pixels): the
       nearest triangle the view ray hits within the height slice. */
    self.pick = function (px, py) {
      if (!self.ntri || !self.showMesh) return null;
      const eye = self.eye(), cam = self.camera;
      const fwd = norm(sub(cam.target, eye)), right = norm(cross(fwd, [0, 1, 0])), up = cross(right, fwd);
      const t = Math.tan(FOV / 2), aspect = self.size.w / self.size.h;
      const sx = ((px / self.size.w) * 2 - 1) * t * aspect, sy = (1 - (py / self.size.h) * 2) * t;
      const dir = norm([fwd[0] + sx * right[0] + sy * up[0], fwd[1] + sx * right[1] + sy * up[1], fwd[2] + sx * right[2] + sy * up[2]]);
      const [lo, hi] = slice();
      let best = Infinity, bestTri = -1;
      const T = self.tris;
      for (let i = 0; i < self.ntri; i++) {
        const o = i * 9;
        /* Möller–Trumbore. */
        const e1 = [T[o + 3] - T[o], T[o + 4] - T[o + 1], T[o + 5] - T[o + 2]];
        const e2 = [T[o + 6] - T[o], T[o + 7] - T[o + 1], T[o + 8] - T[o + 2]];
        const p = cross(dir, e2), det = dot(e1, p);
        if (Math.abs(det) < 1e-12) continue;
        const inv = 1 / det, s = [eye[0] - T[o], eye[1] - T[o + 1], eye[2] - T[o + 2]];
        const u = dot(s, p) * inv;
        if (u < 0 || u > 1) continue;
        const q = cross(s, e1), v = dot(dir, q) * inv;
        if (v < 0 || u + v > 1) continue;
        const d = dot(e2, q) * inv;
        if (d <= 0 || d >= best) continue;
        const y = eye[1] + d * dir[1];
        if (y < lo || y > hi) continue;
        best = d;
        bestTri = i;
      }
      if (bestTri < 0) return null;
      const c = self.centre;
      return { x: eye[0] + best * dir[0] + c[0], y: eye[1] + best * dir[1] + c[1], z: eye[2] + best * dir[2] + c[2], poly: self.triPoly[bestTri] };
    };

    self.slice = function (lo, hi) { self.sliceLo = lo; self.sliceHi = hi; };

    /* Pixels per metre at the target, for sizing agent points. */
    self.pxPerMetre = function () {
      return self.size.h / (2 * Math.tan(FOV / 2) * self.camera.dist);
    };
    return self;
  }

  window.navdView3d = { create };
})();
