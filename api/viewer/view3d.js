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
 *   v.draw(overlay)            overlay: {path, markers, agents, lines}
 *   v.pick(px, py)             -> {x, y, z, poly} or null
 *   v.slice(lo, hi), v.reset(), v.camera (yaw, pitch, dist, target)
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
    uniform vec2 u_slice;
    void main() {
      if (v_y < u_slice.x || v_y > u_slice.y) discard;
      gl_FragColor = vec4(v_col, 1.0);
    }`;
  const LINE_VS = `
    attribute vec3 a_pos; uniform mat4 u_mvp; uniform float u_size; varying float v_y;
    void main() { v_y = a_pos.y; gl_Position = u_mvp * vec4(a_pos, 1.0); gl_PointSize = u_size; }`;
  const LINE_FS = `
    precision mediump float; uniform vec4 u_color; uniform vec2 u_slice; varying float v_y;
    void main() { if (v_y < u_slice.x || v_y > u_slice.y) discard; gl_FragColor = u_color; }`;

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
    const tri = compile(gl, TRI_VS, TRI_FS), line = compile(gl, LINE_VS, LINE_FS);
    const loc = (p, n) => gl.getAttribLocation(p, n), uni = (p, n) => gl.getUniformLocation(p, n);
    const buf = { tri: gl.createBuffer(), edges: gl.createBuffer(), scratch: gl.createBuffer() };
    const self = {
      camera: { yaw: 0.6, pitch: 0.75, dist: 50, target: [0, 0, 0] },
      sliceLo: -Infinity, sliceHi: Infinity,
      centre: [0, 0, 0], ntri: 0, nedge: 0, tris: null, triPoly: null, bounds: null,
      size: { w: 1, h: 1, dpr: 1 },
    };

    /* Triangles of the mesh (the detail mesh's when asked for and present,
       else each polygon's fan), three vertices each with the polygon's
       colour and the triangle's normal; a CPU copy for picking. */
    self.setMesh = function (mesh, colorOf, useDetail) {
      self.mesh = mesh;
      if (!mesh) { self.ntri = 0; self.nedge = 0; return; }
      const b = mesh.bounds;
      const c = [(b.minX + b.maxX) / 2, (b.minY + b.maxY) / 2, (b.minZ + b.maxZ) / 2];
      self.centre = c;
      const tris = [], owner = [];
      const V = (i) => [mesh.vx[i] - c[0], mesh.vy[i] - c[1], mesh.vz[i] - c[2]];
      for (const p of mesh.polys) {
        const range = useDetail && mesh.detail && mesh.detail.ranges[p.id];
        if (range && range[1] > 0) {
          for (let t = range[0]; t < range[0] + range[1]; t++) {
            const tr = mesh.detail.tris[t];
            if (!tr) break;
            for (const i of tr.slice(0, 3)) { const v = mesh.detail.vert(i); tris.push(v[0] - c[0], v[1] - c[1], v[2] - c[2]); }
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
    };

    /* Frames the whole mesh from above and to the side. */
    self.reset = function () {
      const b = self.bounds;
      if (!b) return;
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
      const ext = self.bounds ? Math.max(self.bounds.maxX - self.bounds.minX, self.bounds.maxZ - self.bounds.minZ, 1) : 100;
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

    /* overlay: {path: [[x,y,z]...], markers: [{p, color}], agents: [{p, r, color}]} in world coordinates. */
    self.draw = function (overlay) {
      gl.viewport(0, 0, canvas.width, canvas.height);
      gl.clearColor(0.05, 0.066, 0.09, 1);
      gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
      gl.enable(gl.DEPTH_TEST);
      if (!self.ntri) return;
      const { mvp } = matrices();
      gl.useProgram(tri);
      gl.bindBuffer(gl.ARRAY_BUFFER, buf.tri);
      for (const [name, n, off] of [['a_pos', 3, 0], ['a_col', 3, 12], ['a_nrm', 3, 24]]) {
        const a = loc(tri, name);
        gl.enableVertexAttribArray(a);
        gl.vertexAttribPointer(a, n, gl.FLOAT, false, 36, off);
      }
      gl.uniformMatrix4fv(uni(tri, 'u_mvp'), false, mvp);
      gl.uniform3fv(uni(tri, 'u_light'), norm([0.3, 1, 0.5]));
      gl.uniform2fv(uni(tri, 'u_slice'), slice());
      gl.drawArrays(gl.TRIANGLES, 0, self.ntri * 3);
      for (const name of ['a_col', 'a_nrm']) gl.disableVertexAttribArray(loc(tri, name));
      if (self.nedge) {
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
      /* Overlays sit 5 cm above the surface and are drawn over it. */
      const c = self.centre, lift = (p) => [p[0] - c[0], p[1] - c[1] + 0.05, p[2] - c[2]];
      gl.disable(gl.DEPTH_TEST);
      if (overlay && overlay.path && overlay.path.length > 1)
        drawLines(mvp, new Float32Array(overlay.path.flatMap(lift)), gl.LINE_STRIP, [1, 0.88, 0.3, 1]);
      for (const l of (overlay && overlay.lines) || [])
        drawLines(mvp, new Float32Array(l.points.flatMap(lift)), gl.LINE_STRIP, l.color);
      for (const a of (overlay && overlay.agents) || [])
        drawLines(mvp, new Float32Array(lift(a.p)), gl.POINTS, a.color, Math.max(4, Math.min(24, a.px || 8)));
      for (const m of (overlay && overlay.markers) || [])
        drawLines(mvp, new Float32Array(lift(m.p)), gl.POINTS, m.color, 11);
    };

    /* The surface point under canvas pixel (px, py) (CSS pixels): the
       nearest triangle the view ray hits within the height slice. */
    self.pick = function (px, py) {
      if (!self.ntri) return null;
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
