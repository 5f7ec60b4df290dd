// A string, as the project compiles without the DOM library. Per actor it keeps a few fields, never whole
// snapshots, so memory stays bounded; stream text is never parsed as HTML. The highlight mirrors `mermaidId`.

export const LIVE_PAGE_MAX_EVENTS = 300;
/** Finished actors are dropped first. */
export const LIVE_PAGE_MAX_ACTORS = 400;
export const LIVE_PAGE_MAX_PANELS = 24;

// No backticks below, and no "${" beyond the limits: the script is the body of a template literal.
export const LIVE_PAGE_SCRIPT = `
(() => {
  'use strict';
  const MAX_EVENTS = ${LIVE_PAGE_MAX_EVENTS};
  const MAX_ACTORS = ${LIVE_PAGE_MAX_ACTORS};
  const MAX_PANELS = ${LIVE_PAGE_MAX_PANELS};
  const MAX_TEXT = 160;
  const byId = (id) => document.getElementById(id);
  const diagrams = new Set(JSON.parse(byId('al-diagrams').textContent || '[]'));
  const treeEl = byId('al-tree');
  const panelsEl = byId('al-panels');
  const eventsEl = byId('al-events');
  const statusEl = byId('al-status');
  // The runs followed with inspector.follow, drawn by the shared conversation script.
  const conversation = window.actorloopConversation(byId('al-conversation'));
  const actors = new Map();
  const panels = new Map();
  const svgs = new Map();
  let pendingEvents = [];
  let order = 0;
  let scheduled = false;

  const clip = (value) => {
    const s = typeof value === 'string' ? value : String(value);
    return s.length > MAX_TEXT ? s.slice(0, MAX_TEXT - 1) + '\\u2026' : s;
  };
  const el = (tag, className, content) => {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (content !== undefined) node.textContent = clip(content);
    return node;
  };

  function machineOf(definition) {
    if (typeof definition !== 'string') return undefined;
    try {
      const parsed = JSON.parse(definition);
      const isMachine = parsed && typeof parsed.id === 'string' && parsed.states && typeof parsed.states === 'object';
      return isMachine ? parsed.id : undefined;
    } catch {
      return undefined;
    }
  }

  function actorFor(sessionId) {
    let actor = actors.get(sessionId);
    if (actor === undefined) {
      actor = { sessionId, name: sessionId, label: undefined, machine: undefined, parentId: undefined, status: 'active', value: undefined, order: order++ };
      actors.set(sessionId, actor);
      evictActors();
    }
    return actor;
  }

  function isLive(actor) {
    for (let a = actor, depth = 0; a !== undefined && depth < 100; a = actors.get(a.parentId), depth++) {
      if (a.status !== 'active') return false;
    }
    return true;
  }

  function removeActor(sessionId) {
    actors.delete(sessionId);
    const panel = panels.get(sessionId);
    if (panel !== undefined) panel.root.remove();
    panels.delete(sessionId);
  }

  function evictActors() {
    if (actors.size <= MAX_ACTORS) return;
    for (const actor of [...actors.values()]) if (!isLive(actor) && actors.size > MAX_ACTORS) removeActor(actor.sessionId);
    for (const sessionId of [...actors.keys()]) if (actors.size > MAX_ACTORS) removeActor(sessionId);
  }

  function applySnapshot(actor, snapshot) {
    if (!snapshot || typeof snapshot !== 'object') return;
    if (typeof snapshot.status === 'string') actor.status = snapshot.status;
    // State values are strings or small objects; anything else is not a machine's value.
    if (typeof snapshot.value === 'string' || (snapshot.value && typeof snapshot.value === 'object')) actor.value = snapshot.value;
    const context = snapshot.context;
    if (context && typeof context === 'object' && typeof context.agentId === 'string') actor.label = context.agentId;
  }

  function handle(message) {
    if (message && message.type === 'actorloop.user') return conversation.user(message.runId, message.text, message.agentId);
    if (message && message.type === 'actorloop.run') return conversation.handle(message.runId, message.event);
    if (!message || typeof message !== 'object' || typeof message.sessionId !== 'string') return;
    if (message.type === '@xstate.actor') {
      const actor = actorFor(message.sessionId);
      if (typeof message.name === 'string') actor.name = message.name;
      if (typeof message.parentId === 'string') actor.parentId = message.parentId;
      actor.machine = machineOf(message.definition);
      applySnapshot(actor, message.snapshot);
    } else if (message.type === '@xstate.snapshot') {
      applySnapshot(actorFor(message.sessionId), message.snapshot);
    } else if (message.type === '@xstate.event') {
      const type = message.event && typeof message.event.type === 'string' ? message.event.type : '?';
      pendingEvents.push({ time: Number(message.createdAt), target: message.sessionId, source: message.sourceId, type });
      if (pendingEvents.length > MAX_EVENTS) pendingEvents = pendingEvents.slice(-MAX_EVENTS);
    } else {
      return;
    }
    schedule();
  }

  function schedule() {
    if (scheduled) return;
    scheduled = true;
    // One render per frame however many messages arrive in it.
    requestAnimationFrame(() => {
      scheduled = false;
      renderTree();
      renderPanels();
      renderEvents();
    });
  }

  // "running.act" for { running: 'act' }; parallel regions joined by commas.
  function stateText(value) {
    return leafPaths(value, []).map((path) => path.join('.')).join(', ');
  }

  function leafPaths(value, prefix) {
    if (typeof value === 'string') return [prefix.concat([value])];
    const keys = value && typeof value === 'object' ? Object.keys(value) : [];
    if (keys.length === 0) return prefix.length > 0 ? [prefix] : [];
    return keys.flatMap((key) => leafPaths(value[key], prefix.concat([key])));
  }

  // Every state in the value, composite ones included: both get highlighted.
  function statePaths(value, prefix, out) {
    if (typeof value === 'string') out.push(prefix.concat([value]));
    else if (value && typeof value === 'object') {
      for (const key of Object.keys(value)) {
        out.push(prefix.concat([key]));
        statePaths(value[key], prefix.concat([key]), out);
      }
    }
    return out;
  }

  const mermaidId = (path) => ['S'].concat(path.map((part) => part.replace(/[^A-Za-z0-9]/g, (ch) => 'x' + ch.codePointAt(0).toString(16) + 'x'))).join('_');
  const nameOf = (sessionId) => (actors.has(sessionId) ? actors.get(sessionId).name : sessionId);

  function renderTree() {
    const children = new Map();
    const roots = [];
    for (const actor of actors.values()) {
      if (actor.parentId !== undefined && actors.has(actor.parentId)) {
        if (!children.has(actor.parentId)) children.set(actor.parentId, []);
        children.get(actor.parentId).push(actor);
      } else roots.push(actor);
    }
    const list = (items) => {
      const ul = el('ul');
      for (const actor of items) {
        const li = el('li', isLive(actor) ? 'al-actor al-live' : 'al-actor al-finished');
        li.setAttribute('data-session-id', actor.sessionId);
        li.append(el('span', 'al-name', actor.name));
        if (actor.label !== undefined && actor.label !== actor.name) li.append(el('span', 'al-label', actor.label));
        if (actor.machine !== undefined && actor.machine !== actor.name) li.append(el('span', 'al-machine', actor.machine));
        const state = stateText(actor.value);
        if (state !== '') li.append(el('span', 'al-state', state));
        li.append(el('span', 'al-status', actor.status));
        const kids = children.get(actor.sessionId);
        if (kids !== undefined) li.append(list(kids));
        ul.append(li);
      }
      return ul;
    };
    treeEl.replaceChildren(list(roots));
  }

  function loadSvg(machine) {
    if (!svgs.has(machine)) {
      svgs.set(
        machine,
        fetch('/viz/' + encodeURIComponent(machine) + '.svg')
          .then((response) => (response.ok ? response.text() : undefined))
          .then((text) => {
            if (text === undefined) return undefined;
            const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
            return doc.querySelector('parsererror') === null ? doc.documentElement : undefined;
          })
          .catch(() => undefined),
      );
    }
    return svgs.get(machine);
  }

  function panelFor(actor) {
    let panel = panels.get(actor.sessionId);
    if (panel !== undefined) return panel;
    const root = el('section', 'al-panel');
    root.setAttribute('data-session-id', actor.sessionId);
    root.setAttribute('data-machine', actor.machine);
    const title = el('h3');
    const body = el('div', 'al-svg');
    root.append(title, body);
    panel = { root, title, body, svg: undefined, groups: [] };
    panels.set(actor.sessionId, panel);
    panelsEl.append(root);
    loadSvg(actor.machine).then((svg) => {
      if (svg === undefined || !panels.has(actor.sessionId)) return;
      panel.svg = document.importNode(svg, true);
      const prefix = panel.svg.id + '-state-';
      for (const group of panel.svg.querySelectorAll('g[id]')) {
        const match = /^(S[A-Za-z0-9_]*)-[0-9]+$/.exec(group.id.startsWith(prefix) ? group.id.slice(prefix.length) : '');
        if (match !== null) panel.groups.push({ group, mermaidId: match[1] });
      }
      body.replaceChildren(panel.svg);
      schedule();
    });
    return panel;
  }

  function renderPanels() {
    // Every live actor keeps its panel; the newest finished ones fill what the cap leaves.
    const shown = [...actors.values()].filter((actor) => actor.machine !== undefined && diagrams.has(actor.machine));
    const live = shown.filter(isLive);
    const finished = shown.filter((actor) => !isLive(actor));
    const keep = new Set(live.concat(finished.slice(finished.length - Math.max(0, MAX_PANELS - live.length))));
    for (const [sessionId, panel] of panels) {
      if (!keep.has(actors.get(sessionId))) {
        panel.root.remove();
        panels.delete(sessionId);
      }
    }
    for (const actor of shown) {
      if (!keep.has(actor)) continue;
      const isActorLive = isLive(actor);
      const panel = panelFor(actor);
      const state = stateText(actor.value);
      panel.root.className = isActorLive ? 'al-panel al-live' : 'al-panel al-finished';
      panel.root.setAttribute('data-state', state);
      panel.title.textContent = clip(actor.name + (actor.label !== undefined ? ' (' + actor.label + ')' : '') + ' \\u2014 ' + (state || actor.status));
      const current = new Set(actor.value === undefined ? [] : statePaths(actor.value, [], []).map(mermaidId));
      for (const { group, mermaidId: id } of panel.groups) group.classList.toggle('al-current', current.has(id));
    }
  }

  function renderEvents() {
    const fresh = pendingEvents;
    pendingEvents = [];
    for (const event of fresh) {
      const li = el('li', 'al-event');
      const time = Number.isFinite(event.time) ? new Date(event.time).toISOString().slice(11, 23) : '';
      li.append(el('span', 'al-time', time), el('span', 'al-target', nameOf(event.target)), el('span', 'al-type', event.type));
      if (typeof event.source === 'string' && event.source !== event.target) li.append(el('span', 'al-source', 'from ' + nameOf(event.source)));
      eventsEl.append(li);
    }
    while (eventsEl.childElementCount > MAX_EVENTS) eventsEl.firstElementChild.remove();
    if (fresh.length > 0) eventsEl.lastElementChild?.scrollIntoView({ block: 'nearest' });
  }

  const socket = new WebSocket('ws://' + location.host);
  socket.onopen = () => { statusEl.textContent = 'live'; statusEl.className = 'al-connected'; };
  socket.onclose = () => { statusEl.textContent = 'disconnected (reload to reconnect)'; statusEl.className = 'al-disconnected'; };
  socket.onmessage = (message) => {
    // A malformed message is skipped: the view must keep going.
    try { handle(JSON.parse(message.data)); } catch { /* skipped */ }
  };
})();
`;
