/*
 * navd viewer, levels and bakes: the stored levels, uploading one (file
 * picker, or a drop on the level box), the bake settings form, and a bake
 * job followed to its end with a progress bar (stage, percent, elapsed),
 * cancel, and errors shown where they belong (a 400 marks the field it
 * names; a failed job shows its error). When the job is done the baked
 * navmesh is listed and drawn.
 *
 * The second form bakes a flight volume from a level (POST
 * /v1/volumes/{name}/bake: voxel size, radius, bounds), followed by the same
 * bar; when it is done the volume is listed and drawn in 3-D (volume.js).
 *
 * It also takes the offer viewer.js makes when a dropped .obj is refused as
 * a navmesh (422 invalid_navmesh: raw level geometry has vertical and
 * degenerate faces): store it as a level and bake it, the form prefilled.
 *
 * The host (viewer.js) hands in what this file may use:
 *   navdBake.install({api, ApiError, showError, showInfo, loadList, deleteButton, app})
 * and gets back {loadLevels, offerLevel, state}.
 *
 * For tests #app carries data-levels (count), data-bake-job, data-bake-state
 * (queued, running, done, failed, cancelled), data-bake-stage,
 * data-bake-progress (0..1), data-bake-offer ('1' while an offer is shown)
 * and data-bake-error (the code of the last bake error).
 */
(function () {
  'use strict';

  const $ = (id) => document.getElementById(id);
  const POLL_MS = 200;
  /* Profile fields: the table's columns, in the API's names. */
  const PROFILE_KEYS = ['radius', 'height', 'max_climb', 'max_slope'];
  const PROFILE_HINTS = { radius: '0.6', height: '2', max_climb: '0.9', max_slope: '45' };

  function install(host) {
    const { api, ApiError, app } = host;
    const state = { levels: [], job: null, timer: null, polls: 0 };
    const levelUrl = (name, suffix) => `/v1/levels/${encodeURIComponent(name)}${suffix || ''}`;

    /* ---------------------------------------------------------- levels */

    async function loadLevels(select) {
      try {
        const { data } = await api('GET', '/v1/levels');
        state.levels = (data && data.levels) || [];
      } catch (e) {
        host.showError(e, 'listing levels');
        return;
      }
      renderLevels();
      if (select) chooseLevel(select);
    }

    function renderLevels() {
      const ul = $('level-list'), sel = $('bake-level'), vsel = $('vbake-level');
      const want = sel.value, vwant = vsel.value;
      ul.replaceChildren();
      sel.replaceChildren();
      vsel.replaceChildren();
      app.dataset.levels = String(state.levels.length);
      if (!state.levels.length) {
        const li = document.createElement('li');
        li.className = 'empty';
        li.textContent = 'No level stored yet: upload a triangle soup (.obj).';
        ul.append(li);
      }
      for (const l of state.levels) {
        const li = document.createElement('li');
        li.dataset.name = l.name;
        if (l.name === want) li.className = 'selected';
        const grow = document.createElement('div');
        grow.className = 'grow';
        const name = document.createElement('div');
        name.className = 'name';
        name.textContent = l.name;
        const meta = document.createElement('div');
        meta.className = 'meta';
        const b = l.bounds || [[0, 0, 0], [0, 0, 0]];
        const size = [0, 2].map((i) => (b[1][i] - b[0][i]).toFixed(0)).join(' × ');
        meta.textContent = `v${l.version} · ${l.triangles} triangles · ${size} m`;
        grow.append(name, meta);
        li.append(grow, host.deleteButton(`Delete level ${l.name} (navmeshes baked from it stay)`,
          () => deleteLevel(l.name)));
        li.addEventListener('click', () => chooseLevel(l.name));
        ul.append(li);
        const opt = document.createElement('option');
        opt.value = opt.textContent = l.name;
        sel.append(opt);
        vsel.append(opt.cloneNode(true));
      }
      if (want && state.levels.some((l) => l.name === want)) sel.value = want;
      if (vwant && state.levels.some((l) => l.name === vwant)) vsel.value = vwant;
    }

    async function deleteLevel(name) {
      try {
        await api('DELETE', levelUrl(name));
        host.showInfo(`Deleted level ${name}`);
        await loadLevels();
      } catch (e) {
        host.showError(e, `deleting level ${name}`);
      }
    }

    /* Selects a level in the form; the target name follows it unless typed. */
    function chooseLevel(name) {
      const sel = $('bake-level');
      sel.value = name;
      const t = $('bake-target');
      if (!t.value || t.dataset.auto === '1') { t.value = name; t.dataset.auto = '1'; }
      $('vbake-level').value = name;
      const vt = $('vbake-target');
      if (!vt.value || vt.dataset.auto === '1') { vt.value = name; vt.dataset.auto = '1'; }
      for (const li of $('level-list').children) li.classList.toggle('selected', li.dataset.name === name);
    }

    function nameOf(file, typed) {
      if (typed) return typed;
      const base = file.name.replace(/\.[^.]*$/, '').replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 64);
      return base || 'level';
    }

    /* Stores a file as a level; resolves to its name, or null on an error (shown). */
    async function uploadLevel(file, name) {
      const type = /\.json$/i.test(file.name) ? 'application/json' : 'model/obj';
      try {
        const { data, status } = await api('PUT', levelUrl(name), file, type);
        host.showInfo(`${status === 201 ? 'Stored' : 'Replaced'} level ${name}: version ${data.version}, ` +
          `${data.triangles} triangles${data.dropped_triangles ? ` (${data.dropped_triangles} degenerate dropped)` : ''}`);
        $('level-name').value = '';
        await loadLevels(name);
        return name;
      } catch (e) {
        host.showError(e, `storing ${file.name} as level ${name}`);
        return null;
      }
    }

    /* viewer.js calls this when a dropped .obj is no valid navmesh: offer to
       store it as a level and bake it, with the form prefilled. */
    function offerLevel(file, name, err) {
      const box = $('messages');
      for (const old of box.querySelectorAll('.msg.offer')) old.remove();
      const el = document.createElement('div');
      el.className = 'msg offer';
      const text = document.createElement('span');
      text.className = 'text';
      text.textContent = `${file.name} is not a navmesh (${err.message}). It looks like level geometry: ` +
        `store it as level "${name}" and bake a navmesh from it?`;
      const yes = document.createElement('button');
      yes.type = 'button';
      yes.className = 'btn small';
      yes.id = 'offer-bake';
      yes.textContent = 'Store as level and bake…';
      const no = document.createElement('button');
      no.type = 'button';
      no.title = 'Dismiss';
      no.textContent = '×';
      const close = () => { el.remove(); app.dataset.bakeOffer = '0'; };
      no.addEventListener('click', close);
      yes.addEventListener('click', async () => {
        close();
        const stored = await uploadLevel(file, name);
        if (!stored) return;
        chooseLevel(stored);
        $('bake-target').value = stored;
        $('bake-target').dataset.auto = '1';
        $('bake-settings').open = true;
        $('bake-section').scrollIntoView({ block: 'start' });
        $('bake-start').focus();
        $('bake-section').classList.add('flash');
        setTimeout(() => $('bake-section').classList.remove('flash'), 1500);
      });
      el.append(text, yes, no);
      box.append(el);
      app.dataset.bakeOffer = '1';
    }

    /* ------------------------------------------------------- the form */

    function addProfileRow(name, values) {
      const tb = $('bake-profiles').tBodies[0];
      const tr = document.createElement('tr');
      const cell = (input) => { const td = document.createElement('td'); td.append(input); tr.append(td); return input; };
      const n = cell(document.createElement('input'));
      n.type = 'text';
      n.className = 'pname';
      n.value = name;
      n.spellcheck = false;
      n.setAttribute('aria-label', 'profile name');
      for (const k of PROFILE_KEYS) {
        const i = cell(document.createElement('input'));
        i.type = 'number';
        i.step = k === 'max_slope' ? '5' : '0.1';
        i.min = '0';
        i.dataset.key = k;
        i.placeholder = PROFILE_HINTS[k];
        i.setAttribute('aria-label', `profile ${k}`);
        if (values && values[k] !== undefined) i.value = String(values[k]);
      }
      const del = document.createElement('button');
      del.type = 'button';
      del.className = 'del';
      del.textContent = '×';
      del.title = 'Remove this profile';
      del.addEventListener('click', () => { if (tb.rows.length > 1) tr.remove(); });
      const td = document.createElement('td');
      td.append(del);
      tr.append(td);
      tb.append(tr);
      return tr;
    }

    /* The request the form describes: empty fields are left out so the
       service's defaults apply. A number field holding text the browser
       cannot read is reported here, naming it; everything else (ranges,
       names) is for the service to judge, and its 400 marks the field. */
    function bakeRequest() {
      const bad = (el, field, what) => { markField(el); throw new ApiError('bad_request', `${field} ${what}`, 0); };
      const num = (id, field) => {
        const el = $(id);
        if (el.validity && el.validity.badInput) bad(el, field, 'is not a number');
        return el.value.trim() === '' ? undefined : Number(el.value);
      };
      const body = { level: $('bake-level').value };
      if (!body.level) throw new ApiError('bad_request', 'level: choose a stored level (upload one first)', 0);
      for (const [id, field] of [['bake-cell-size', 'cell_size'], ['bake-cell-height', 'cell_height'], ['bake-tile-size', 'tile_size']]) {
        const v = num(id, field);
        if (v !== undefined) body[field] = v;
      }
      if ($('bake-partition').value) body.partition = $('bake-partition').value;
      const links = {};
      for (const k of ['drop', 'jump', 'climb']) {
        const v = num('bake-' + k, 'links.' + k);
        if (v !== undefined) links[k] = v;
      }
      if (Object.keys(links).length) body.links = links;
      const profiles = {};
      for (const tr of $('bake-profiles').tBodies[0].rows) {
        const nameEl = tr.querySelector('input.pname');
        const name = nameEl.value.trim();
        if (!name) bad(nameEl, 'profiles', 'need a name for every row');
        if (profiles[name]) bad(nameEl, `profiles.${name}`, 'is given twice');
        const p = {};
        for (const i of tr.querySelectorAll('input[data-key]')) {
          if (i.validity && i.validity.badInput) bad(i, `profiles.${name}.${i.dataset.key}`, 'is not a number');
          if (i.value.trim() !== '') p[i.dataset.key] = Number(i.value);
        }
        profiles[name] = p;
      }
      body.profiles = profiles;
      return body;
    }

    function clearFieldMarks() {
      for (const el of document.querySelectorAll('#bake-form .invalid, #vbake-form .invalid')) el.classList.remove('invalid');
      $('bake-error').hidden = true;
      $('bake-error').textContent = '';
    }

    function markField(el) {
      if (!el) return;
      el.classList.add('invalid');
      if (el.closest('#bake-form')) $('bake-settings').open = true;
    }

    /* The form element a 400's message names: its first word is the field
       in the API's terms (cell_size, links.drop, profiles.large.radius). */
    function fieldOf(message, form) {
      const m = /^([A-Za-z_][\w]*(?:\.[\w-]+)*)/.exec(message || '');
      if (!m) return null;
      const path = m[1];
      if (form === 'vbake-form') return document.querySelector(`#vbake-form [data-field="${CSS.escape(path)}"]`);
      const direct = document.querySelector(`#bake-form [data-field="${CSS.escape(path)}"]`);
      if (direct) return direct;
      /* The form's links are the top-level ones, which the service checks
         as each profile's (profiles.default.links.drop). */
      const lm = /^profiles\..+\.links\.(\w+)$/.exec(path);
      if (lm) return document.querySelector(`#bake-form [data-field="links.${lm[1]}"]`);
      const pm = /^profiles\.(.+)\.(\w+)$/.exec(path);
      if (pm) {
        for (const tr of $('bake-profiles').tBodies[0].rows) {
          if (tr.querySelector('input.pname').value.trim() !== pm[1]) continue;
          return tr.querySelector(`input[data-key="${pm[2]}"]`) || tr.querySelector('input.pname');
        }
      }
      const top = /^(\w+)/.exec(path)[1];
      return document.querySelector(`#bake-form [data-field="${top}"]`);
    }

    function showBakeError(code, text, field) {
      const box = $('bake-error');
      box.hidden = false;
      box.replaceChildren();
      const c = document.createElement('span');
      c.className = 'code';
      c.textContent = code;
      box.append(c, ' ' + text);
      app.dataset.bakeError = code;
      if (field) markField(field);
    }

    /* ------------------------------------------------------- the job */

    function setBusy(busy) {
      $('bake-start').disabled = busy;
      $('vbake-start').disabled = busy;
      $('bake-cancel').hidden = !busy;
    }

    function renderJob(job) {
      state.job = job;
      const pct = Math.max(0, Math.min(100, (job.progress || 0) * 100));
      $('bake-progress').hidden = false;
      const bar = $('bake-progress').querySelector('.bar');
      bar.setAttribute('aria-valuenow', pct.toFixed(0));
      bar.className = 'bar ' + job.state;
      bar.firstElementChild.style.width = (job.state === 'done' ? 100 : pct) + '%';
      const ms = job.elapsed_ms || 0, secs = ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
      let text;
      if (job.state === 'queued') text = `queued (waiting for a bake thread) · ${job.target}`;
      else if (job.state === 'running') text = `${job.stage} · ${pct.toFixed(0)} % · ${secs}`;
      else if (job.state === 'done' && job.kind === 'volume') {
        const r = job.result || {};
        text = `done in ${secs} · volume ${job.target} v${r.version} · ${(r.dims || []).join('×')} voxels, ` +
          `${r.blocked_voxels} blocked, ${r.components} component${r.components === 1 ? '' : 's'}`;
      } else if (job.state === 'done') {
        const r = job.result || {}, rep = r.report || {};
        const per = rep.profiles ? Object.entries(rep.profiles).map(([n, p]) => `${n} ${p.polygons} polys${p.links ? `, ${p.links} links` : ''}`).join('; ') : '';
        text = `done in ${secs} · ${job.target} v${r.version} · ${per || `${r.polygons} polygons`}`;
      } else if (job.state === 'cancelled') text = `cancelled at ${job.stage} (${pct.toFixed(0)} %) after ${secs}: ${job.target} unchanged`;
      else text = `failed at ${job.stage} after ${secs}`;
      $('bake-status').textContent = text;
      app.dataset.bakeJob = job.id;
      app.dataset.bakeState = job.state;
      app.dataset.bakeStage = job.stage || '';
      app.dataset.bakeProgress = String(job.progress || 0);
    }

    async function startBake(ev) {
      if (ev) ev.preventDefault();
      if (state.job && (state.job.state === 'queued' || state.job.state === 'running')) return;
      clearFieldMarks();
      let body;
      try {
        body = bakeRequest();
      } catch (e) {
        showBakeError(e.code, e.message);
        return;
      }
      const target = $('bake-target').value.trim() || body.level;
      setBusy(true);
      try {
        const { data } = await api('POST', `/v1/navmeshes/${encodeURIComponent(target)}/bake`, body);
        renderJob(data);
        /* A small bake may have ended before the answer was sent. */
        if (data.state === 'queued' || data.state === 'running') follow(data.id);
        else await finished(data);
      } catch (e) {
        setBusy(false);
        /* 400 names the field; 404 is the level (or the name), 503 the queue. */
        const field = e.status === 400 ? fieldOf(e.message) : e.status === 404 ? $('bake-level') : null;
        if (e.status === 400 && !field && /^name|navmesh name/.test(e.message)) markField($('bake-target'));
        showBakeError(`${e.code} ${e.status || ''}`.trim(), e.message, field);
        host.showError(e, `baking ${target}`);
      }
    }

    /* The volume form's request: empty fields are left out (the service's
       defaults: 0.5 m voxels, radius 0.5, the level's bounds). */
    function volumeRequest() {
      const bad = (el, field, what) => { markField(el); throw new ApiError('bad_request', `${field} ${what}`, 0); };
      const body = { level: $('vbake-level').value };
      if (!body.level) throw new ApiError('bad_request', 'level: choose a stored level (upload one first)', 0);
      for (const [id, field] of [['vbake-voxel', 'voxel_size'], ['vbake-radius', 'radius']]) {
        const el = $(id);
        if (el.validity && el.validity.badInput) bad(el, field, 'is not a number');
        if (el.value.trim() !== '') body[field] = Number(el.value);
      }
      const bt = $('vbake-bounds').value.trim();
      if (bt) {
        const n = bt.split(/[\s,]+/).filter(Boolean).map(Number);
        if (n.length !== 6 || n.some((x) => !isFinite(x))) bad($('vbake-bounds'), 'bounds', 'must be six numbers: x0, y0, z0, x1, y1, z1');
        body.bounds = [n.slice(0, 3), n.slice(3)];
      }
      return body;
    }

    async function startVolumeBake(ev) {
      if (ev) ev.preventDefault();
      if (state.job && (state.job.state === 'queued' || state.job.state === 'running')) return;
      clearFieldMarks();
      let body;
      try {
        body = volumeRequest();
      } catch (e) {
        showBakeError(e.code, e.message);
        return;
      }
      const target = $('vbake-target').value.trim() || body.level;
      setBusy(true);
      try {
        const { data } = await api('POST', `/v1/volumes/${encodeURIComponent(target)}/bake`, body);
        renderJob(data);
        if (data.state === 'queued' || data.state === 'running') follow(data.id);
        else await finished(data);
      } catch (e) {
        setBusy(false);
        const field = e.status === 400 ? fieldOf(e.message, 'vbake-form') : e.status === 404 ? $('vbake-level') : e.status === 422 ? $('vbake-voxel') : null;
        showBakeError(`${e.code} ${e.status || ''}`.trim(), e.message, field);
        host.showError(e, `baking flight volume ${target}`);
      }
    }

    /* Polls the job until it ends; one request at a time. */
    function follow(id) {
      clearTimeout(state.timer);
      const tick = async () => {
        if (!state.job || state.job.id !== id) return;
        try {
          const { data } = await api('GET', `/v1/jobs/${encodeURIComponent(id)}`);
          state.polls++;
          if (state.job.id !== id) return;
          if (state.job.state === 'cancelled' && data.state !== 'cancelled') return; /* our DELETE answered first */
          renderJob(data);
          if (data.state === 'queued' || data.state === 'running') { state.timer = setTimeout(tick, POLL_MS); return; }
          await finished(data);
        } catch (e) {
          setBusy(false);
          showBakeError(e.code, `following job ${id}: ${e.message}`);
        }
      };
      state.timer = setTimeout(tick, POLL_MS);
    }

    async function finished(job) {
      setBusy(false);
      if (job.state === 'done' && job.kind === 'volume') {
        host.showInfo(`Baked flight volume ${job.target}: version ${job.result && job.result.version}`);
        if (host.loadVolumes) await host.loadVolumes(job.target);
      } else if (job.state === 'done') {
        host.showInfo(`Baked ${job.target}: version ${job.result && job.result.version}`);
        await host.loadList(job.target);
      } else if (job.state === 'failed') {
        const err = job.error || {};
        showBakeError(err.code || 'failed', err.message || 'the bake failed without a reason');
        host.showError(new ApiError(err.code || 'failed', err.message || 'the bake failed', 0), `baking ${job.target}`);
      }
    }

    async function cancelBake() {
      const job = state.job;
      if (!job) return;
      try {
        const { data } = await api('DELETE', `/v1/jobs/${encodeURIComponent(job.id)}`);
        clearTimeout(state.timer);
        renderJob(data);
        if (data.state === 'queued' || data.state === 'running') follow(data.id);
        else await finished(data);
      } catch (e) {
        host.showError(e, `cancelling job ${job.id}`);
      }
    }

    /* A bake still running when the page was (re)loaded is followed again,
       so a reload during a long bake keeps its bar and its Cancel. */
    async function resume() {
      try {
        const { data } = await api('GET', '/v1/jobs');
        const job = ((data && data.jobs) || []).find((j) => (j.kind === 'bake' || j.kind === 'volume') && (j.state === 'queued' || j.state === 'running'));
        if (!job || state.job) return;
        setBusy(true);
        renderJob(job);
        follow(job.id);
      } catch (e) {
        /* The list is a convenience: an error here is shown by the next request that matters. */
      }
    }

    /* --------------------------------------------------------- wiring */

    addProfileRow('default');
    $('bake-add-profile').addEventListener('click', () => {
      const tb = $('bake-profiles').tBodies[0];
      const tr = addProfileRow(`profile${tb.rows.length + 1}`);
      tr.querySelector('input.pname').select();
    });
    $('bake-form').addEventListener('submit', startBake);
    $('vbake-form').addEventListener('submit', startVolumeBake);
    $('vbake-form').addEventListener('input', (ev) => ev.target.classList && ev.target.classList.remove('invalid'));
    $('vbake-target').addEventListener('input', () => { $('vbake-target').dataset.auto = '0'; });
    $('vbake-level').addEventListener('change', () => chooseLevel($('vbake-level').value));
    $('bake-form').addEventListener('input', (ev) => ev.target.classList && ev.target.classList.remove('invalid'));
    $('bake-cancel').addEventListener('click', cancelBake);
    $('bake-level').addEventListener('change', () => chooseLevel($('bake-level').value));
    $('bake-target').addEventListener('input', () => { $('bake-target').dataset.auto = '0'; });
    $('levels-refresh').addEventListener('click', () => loadLevels());
    $('level-input').addEventListener('change', (ev) => {
      const f = ev.target.files[0];
      ev.target.value = '';
      if (f) uploadLevel(f, nameOf(f, $('level-name').value.trim()));
    });
    /* A drop on the level box stores a level; anywhere else it is a navmesh
       (viewer.js), which offers this when the file is level geometry. */
    const zone = $('level-drop');
    zone.addEventListener('dragover', (ev) => { ev.preventDefault(); zone.classList.add('over'); });
    zone.addEventListener('dragleave', () => zone.classList.remove('over'));
    zone.addEventListener('drop', (ev) => {
      ev.preventDefault();
      ev.stopPropagation();
      zone.classList.remove('over');
      host.dropDone();
      const f = ev.dataTransfer && ev.dataTransfer.files && ev.dataTransfer.files[0];
      if (f) uploadLevel(f, nameOf(f, $('level-name').value.trim()));
    });
    loadLevels();
    resume();
    return { loadLevels, offerLevel, uploadLevel, state, nameOf };
  }

  window.navdBake = { install };
})();
