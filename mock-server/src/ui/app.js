// The mock's dashboard: reads the world's live journal (GET /_mock/events),
// from its history on, and the control API's lists, and calls the control API. Every string that came
// from a client or a receiver is written with textContent, never as markup.
'use strict';

// The world this page belongs to: the root, or /worlds/{id}.
const base = location.pathname.replace(/\/_mock\/ui\/?$/, '');

// The admin token, when the mock has one: taken from the address once, kept
// for this tab only, and sent as a header (which a page of another origin
// cannot send to the mock) on the stream and every control call.
const token = (() => {
  const params = new URLSearchParams(location.search);
  const given = params.get('token');
  if (given !== null) {
    sessionStorage.setItem('mediagen-mock-token', given);
    params.delete('token');
    const rest = params.toString();
    history.replaceState(null, '', location.pathname + (rest ? '?' + rest : ''));
    return given;
  }
  return sessionStorage.getItem('mediagen-mock-token') || '';
})();

const MAX_REQUESTS = 500;
// Cards drawn per panel, newest first: a world's whole history can hold
// thousands, and each change draws the panel again.
const MAX_CARDS = 300;

const state = {
  requests: [], // newest last
  requestIds: new Set(),
  generations: new Map(), // id -> {info, steps: []}
  messages: new Map(), // id -> {info, attempts: []}
  users: new Map(), // id -> {view, ledger: []}
  billing: new Map(), // id -> event
  outbox: [],
  faults: [],
  // The verdict's findings in the order first made, keyed by findingKey.
  findings: new Map(),
  verdictRead: false,
  // The request or message a finding's link pointed at, kept through redraws.
  highlight: null,
  lastSeq: 0,
  missed: 0,
};

function $(id) {
  return document.getElementById(id);
}

// An element with attributes and children; strings become text nodes.
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'class') node.className = value;
    else if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function headers(extra) {
  const all = Object.assign({}, extra);
  if (token) all.Authorization = 'Bearer ' + token;
  return all;
}

function notice(text, bad) {
  const node = $('notice');
  node.textContent = text;
  node.className = bad ? 'bad' : '';
}

async function control(method, path, body) {
  const init = { method, headers: headers(), credentials: 'omit', cache: 'no-store' };
  if (body !== undefined) {
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const response = await fetch(base + path, init);
  const text = await response.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch (_) {
    json = null;
  }
  if (!response.ok) {
    const message = json && json.error ? json.error.code + ': ' + json.error.message : String(response.status);
    notice(method + ' ' + path + ' → ' + message, true);
    throw new Error(message);
  }
  return json;
}

function time(at) {
  if (!at) return '';
  const d = new Date(at);
  return Number.isNaN(d.getTime()) ? String(at) : d.toISOString().slice(11, 23);
}

function rub(value) {
  return value === null || value === undefined ? '' : Number(value).toFixed(2) + ' ₽';
}

function short(id) {
  return id ? String(id).slice(0, 8) : '';
}

// ---- rendering, batched to one pass per frame ----

let dirty = new Set();
let scheduled = false;

function touch(...panels) {
  panels.forEach((p) => dirty.add(p));
  if (!scheduled) {
    scheduled = true;
    requestAnimationFrame(render);
  }
}

function render() {
  scheduled = false;
  const panels = dirty;
  dirty = new Set();
  if (panels.has('requests')) renderRequests();
  if (panels.has('generations')) renderGenerations();
  if (panels.has('messages')) renderMessages();
  if (panels.has('users')) renderUsers();
  if (panels.has('billing')) renderBilling();
  if (panels.has('faults')) renderFaults();
  if (panels.has('verdict')) renderVerdict();
}

function statusMatches(filter, status) {
  if (!filter) return true;
  const text = status === null || status === undefined ? 'dropped' : String(status);
  if (/^[1-5]xx$/i.test(filter)) return text[0] === filter[0];
  return text === filter;
}

function renderRequests() {
  const user = $('filter-user').value.trim();
  const path = $('filter-path').value.trim();
  const status = $('filter-status').value.trim();
  const rows = [];
  for (let i = state.requests.length - 1; i >= 0; i--) {
    const r = state.requests[i];
    if (user && !String(r.userId || '').includes(user)) continue;
    if (path && !r.path.includes(path)) continue;
    if (!statusMatches(status, r.status)) continue;
    let cls = r.status === null || r.status === undefined ? 'dropped' : r.status >= 400 ? 'error' : 'ok';
    if (r.requestId === state.highlight) cls += ' highlight';
    rows.push(
      el('tr', { class: cls, 'data-request-id': r.requestId },
        el('td', {}, time(r.at)),
        el('td', {}, r.method),
        el('td', { class: 'path' }, r.path),
        el('td', {}, r.status === null || r.status === undefined ? 'dropped' : r.status),
        el('td', {}, r.errorCode || ''),
        el('td', { class: 'id' }, r.requestId),
        el('td', { class: 'id', title: r.userId || '' }, short(r.userId)),
        el('td', {}, r.fault || '')),
    );
  }
  $('requests').replaceChildren(...rows);
}

function newest(map) {
  return [...map].slice(-MAX_CARDS).reverse();
}

// What a panel leaves out, said at its end.
function older(map, what) {
  const left = map.size - MAX_CARDS;
  return left > 0 ? el('p', { class: 'next' }, left + ' older ' + what + ' not shown') : '';
}

function renderGenerations() {
  const cards = [];
  for (const [id, g] of newest(state.generations)) {
    const info = g.info;
    cards.push(
      el('article', { class: 'card generation status-' + info.status.toLowerCase(), 'data-generation-id': id },
        el('div', { class: 'head' },
          el('strong', {}, info.status),
          ' ',
          el('span', { class: 'id', title: id }, short(id)),
          ' ',
          info.modelSlug,
          ' · cost ', rub(info.costRub),
          info.refundRub !== null && info.refundRub !== undefined ? el('span', { class: 'refund' }, ' · refund ' + rub(info.refundRub)) : null,
          info.errorCode ? el('span', { class: 'code' }, ' · ' + info.errorCode) : null),
        el('div', { class: 'prompt' }, info.prompt),
        el('ol', { class: 'timeline' },
          g.steps.map((s) => el('li', {}, time(s.at) + ' ' + s.change + ' → ' + s.status + (s.attempts ? ' (attempt ' + s.attempts + ')' : '')))),
      ),
    );
  }
  $('generations').replaceChildren(...cards, older(state.generations, 'generations'));
}

function attemptLine(a) {
  const answer = a.responseStatus !== null && a.responseStatus !== undefined ? 'HTTP ' + a.responseStatus : 'error: ' + (a.error || 'no answer');
  return el('li', { class: a.succeeded || (a.responseStatus && a.responseStatus < 400) ? 'ok' : 'error' },
    '#' + a.attempt + ' ' + time(a.attemptedAt || a.at) + ' ' + answer + ' in ' + a.durationMs + ' ms',
    a.responseExcerpt ? el('code', {}, a.responseExcerpt.slice(0, 120)) : null,
    a.nextAttemptAt ? el('span', { class: 'next' }, ' next retry ' + time(a.nextAttemptAt)) : null,
    a.endpointDisabled ? el('strong', { class: 'error' }, ' endpoint disabled: ' + a.endpointDisabled) : null);
}

function renderMessages() {
  const cards = [];
  for (const [id, m] of newest(state.messages)) {
    const info = m.info;
    cards.push(
      el('article', { class: 'card message state-' + info.state + (id === state.highlight ? ' highlight' : ''), 'data-message-id': id },
        el('div', { class: 'head' },
          el('strong', {}, info.state), ' ', info.eventType, ' ',
          el('span', { class: 'id', title: id }, short(id)),
          ' → ', el('span', { class: 'id' }, info.endpointId),
          info.generationId ? el('span', { class: 'id' }, ' task ' + short(info.generationId)) : null),
        el('ol', { class: 'attempts' }, m.attempts.map(attemptLine))),
    );
  }
  $('messages').replaceChildren(...cards, older(state.messages, 'messages'));
}

function renderUsers() {
  const cards = [];
  for (const [id, u] of state.users) {
    const v = u.view || {};
    cards.push(
      el('article', { class: 'card user', 'data-user-id': id },
        el('div', { class: 'head' },
          el('span', { class: 'id', title: id }, short(id)), ' ', v.email || '',
          ' · balance ', rub(v.balanceRub), ' · reserved ', rub(v.reservedRub)),
        v.keys ? el('div', { class: 'keys' }, 'keys: ', v.keys.map((k) => k.publicPart + ' (' + k.scope + (k.revoked ? ', revoked' : '') + ') ')) : null,
        el('ol', { class: 'ledger' }, u.ledger.slice(-20).map((row) =>
          el('li', {}, time(row.at) + ' ' + row.kind + ' ' + rub(row.amountRub) + (row.generationId ? ' task ' + short(row.generationId) : ''))))),
    );
  }
  $('users').replaceChildren(...cards);
}

function renderBilling() {
  const items = [];
  for (const b of state.billing.values()) {
    const id = b.topupId || b.invoiceId;
    const kind = b.topupId ? 'top-up' : 'invoice ' + b.number;
    const pending = b.status === 'PENDING' || b.status === 'ISSUED';
    items.push(el('li', {},
      kind + ' ' + rub(b.amountRub) + ' ' + b.status + ' ',
      el('span', { class: 'id' }, id), ' ',
      pending && b.topupId ? el('button', { type: 'button', onclick: () => act('POST', '/_mock/topups/' + id + '/pay') }, 'pay') : null,
      pending && b.topupId ? el('button', { type: 'button', onclick: () => act('POST', '/_mock/topups/' + id + '/fail') }, 'decline') : null,
      pending && b.invoiceId ? el('button', { type: 'button', onclick: () => act('POST', '/_mock/invoices/' + id + '/pay') }, 'pay') : null));
  }
  $('billing').replaceChildren(...items);
  $('outbox').replaceChildren(...state.outbox.map((m) => el('li', {}, time(m.sentAt || m.at) + ' ' + m.to + ': ' + m.subject + ' ', el('code', {}, m.link))));
}

function renderFaults() {
  $('faults').replaceChildren(...state.faults.map((f) => el('li', {},
    el('code', {}, JSON.stringify(f)), ' ',
    el('button', { type: 'button', onclick: () => act('DELETE', '/_mock/faults/' + encodeURIComponent(f.id)).then(refreshFaults) }, 'remove'))));
}

// A finding's identity: the mock keeps one per rule and subject, and the
// event does not name the subject; its first request (or message) id and its
// words, both fixed once it is made, tell two findings of one rule apart.
function findingKey(f) {
  return f.rule + '\n' + (refsOf(f)[0] || '') + '\n' + f.message;
}

// A receiver's finding is about an endpoint and its deliveries; the others
// about a client's requests.
function isReceiver(f) {
  return String(f.rule).startsWith('receiver-');
}

// The ids a finding names: a receiver's webhook-ids in `messageIds`, or in
// `requestIds` from a mock that does not send `messageIds` yet.
function refsOf(f) {
  if (isReceiver(f) && Array.isArray(f.messageIds)) return f.messageIds;
  return Array.isArray(f.requestIds) ? f.requestIds : [];
}

// A finding from the verdict or from its event: counts only grow, so the
// larger one is the newer (the list and the stream may cross).
function addFinding(f) {
  const key = findingKey(f);
  const known = state.findings.get(key);
  if (known && (known.count || 0) > (f.count || 0)) return;
  state.findings.set(key, Object.assign({}, known, f, { firstAt: (known && known.firstAt) || f.firstAt }));
  touch('verdict');
}

// Scrolls to the request (or webhook message) a finding names and marks it;
// a filter that hides it is cleared first.
function showRef(id) {
  state.highlight = id;
  if (state.requestIds.has(id)) {
    for (const f of ['filter-user', 'filter-path', 'filter-status']) $(f).value = '';
    renderRequests();
    const row = $('requests').querySelector(`tr[data-request-id="${CSS.escape(id)}"]`);
    if (row) row.scrollIntoView({ block: 'center' });
  } else {
    renderMessages();
    const card = $('messages').querySelector(`[data-message-id="${CSS.escape(id)}"]`);
    if (card) card.scrollIntoView({ block: 'center' });
  }
}

// An id the page shows is a link to it; an older one, or a probe's message
// the page never listed, stays text.
function refLink(id) {
  if (!state.requestIds.has(id) && !state.messages.has(id)) return el('span', { class: 'id', title: 'not on this page' }, id);
  return el('a', { href: '#', class: 'id', 'data-ref': id, onclick: (e) => { e.preventDefault(); showRef(id); } }, id);
}

// The worst first: violations before advice, then those that fail the run
// (`fails`, which a strict selection also sets on advice), then the most
// repeated; otherwise in the order they were first made (the sort is stable).
function graver(a, b) {
  const severity = (f) => (f.severity === 'violation' ? 0 : 1);
  const fails = (f) => (f.fails === true ? 0 : 1);
  return severity(a) - severity(b) || fails(a) - fails(b) || (b.count || 0) - (a.count || 0);
}

// The endpoint a receiver's finding is about: as the verdict names it, or,
// from a mock that does not yet, the endpoint of its first message on this page.
function endpointOf(f) {
  if (f.endpoint && f.endpoint.id) return f.endpoint;
  const message = state.messages.get(refsOf(f)[0]);
  return message && message.info.endpointId ? { id: message.info.endpointId } : null;
}

function findingItem(f) {
  const receiver = isReceiver(f);
  const refs = refsOf(f);
  const endpoint = receiver ? endpointOf(f) : null;
  return el('li', { class: 'card finding ' + f.severity + (f.fails ? ' fails' : ''), 'data-rule': f.rule },
    el('div', { class: 'head' },
      el('strong', { class: 'severity' }, f.severity), ' ', el('span', { class: 'rule' }, f.rule),
      ' · ', el('span', { class: 'count' }, f.count === 1 ? 'once' : f.count + ' times'),
      f.fails && f.severity !== 'violation' ? el('span', { class: 'error' }, ' · fails the run') : null,
      f.firstAt ? el('span', { class: 'next' }, ' · first ' + time(f.firstAt)) : null),
    el('div', { class: 'message' }, f.message),
    el('div', { class: 'advice' }, 'Do: ' + f.advice),
    el('div', { class: 'why' }, 'Document: ' + f.documentRule),
    endpoint ? el('div', { class: 'endpoint' }, 'Endpoint: ',
      el('span', { class: 'id endpoint-id' }, endpoint.id),
      endpoint.url ? el('span', { class: 'endpoint-url' }, endpoint.url) : null) : null,
    refs.length ? el('div', { class: 'refs ' + (receiver ? 'messages' : 'requests') },
      receiver ? 'Messages: ' : 'Requests: ', refs.map(refLink)) : null);
}

function renderVerdict() {
  const findings = [...state.findings.values()];
  const violations = findings.filter((f) => f.severity === 'violation').length;
  const summary = $('verdict-summary');
  if (!state.verdictRead && !findings.length) {
    summary.textContent = 'reading the verdict…';
    summary.className = 'next';
  } else if (!violations) {
    summary.textContent = 'Clean: no violation' + (findings.length ? ' (' + findings.length + ' advice)' : '') + '.';
    summary.className = 'clean';
  } else {
    summary.textContent = 'Not clean: ' + violations + (violations === 1 ? ' violation' : ' violations')
      + (findings.length > violations ? ', ' + (findings.length - violations) + ' advice' : '') + '.';
    summary.className = 'dirty';
  }
  $('findings').replaceChildren(...findings.sort(graver).map(findingItem));
}

// The verdict as it stands, merged with what the stream told meanwhile;
// `fresh` after the page started it over.
async function loadVerdict(fresh) {
  const verdict = await control('GET', '/_mock/verdict');
  if (fresh) state.findings = new Map();
  state.verdictRead = true;
  (verdict.findings || []).forEach(addFinding);
  touch('verdict');
}

// ---- state from events ----

function addRequest(r) {
  if (state.requestIds.has(r.requestId)) return;
  state.requestIds.add(r.requestId);
  state.requests.push(r);
  while (state.requests.length > MAX_REQUESTS) state.requestIds.delete(state.requests.shift().requestId);
  if (r.userId) knowUser(r.userId);
  // A finding may come before the request it names: its link appears now.
  touch('requests', 'verdict');
}

const userLoads = new Map();

// A user's balance and keys (public parts only), read again at most once a
// second while its ledger moves.
function knowUser(id) {
  if (!state.users.has(id)) {
    state.users.set(id, { view: null, ledger: [] });
    touch('users');
  }
  if (userLoads.has(id)) return;
  userLoads.set(id, setTimeout(async () => {
    try {
      state.users.get(id).view = await control('GET', '/_mock/users/' + id);
      touch('users');
    } catch (_) {
      // Gone after a reset: the card says what was seen.
    } finally {
      userLoads.delete(id);
    }
  }, 200));
}

function handle(event) {
  if (event.type === 'lagged') {
    state.missed += event.missed;
    notice(state.missed + ' events missed: the page fell behind', true);
    return;
  }
  // seq 0: an event of the history, told before the page came; the live
  // events after it are numbered from wherever the world's count stands.
  if (event.seq !== 0) {
    if (state.lastSeq && event.seq !== state.lastSeq + 1) {
      state.missed += event.seq - state.lastSeq - 1;
      notice(state.missed + ' events missed', true);
    }
    state.lastSeq = event.seq;
  }
  switch (event.type) {
    case 'request':
      addRequest(event);
      break;
    case 'generation': {
      let g = state.generations.get(event.generationId);
      if (!g) {
        g = { info: event, steps: [] };
        state.generations.set(event.generationId, g);
      }
      g.info = event;
      g.steps.push(event);
      knowUser(event.userId);
      touch('generations');
      break;
    }
    case 'ledger': {
      knowUser(event.userId);
      const u = state.users.get(event.userId);
      u.ledger.push(event);
      if (u.view) {
        u.view.balanceRub = event.balanceRub;
        u.view.reservedRub = event.reservedRub;
      }
      touch('users');
      break;
    }
    case 'message':
    case 'attempt': {
      let m = state.messages.get(event.messageId);
      if (!m) {
        m = { info: { state: event.state, eventType: '', endpointId: event.endpointId }, attempts: [] };
        state.messages.set(event.messageId, m);
      }
      if (event.type === 'message') m.info = Object.assign({}, m.info, event);
      else {
        m.info.state = event.state;
        m.attempts.push(event);
      }
      touch('messages', 'verdict');
      break;
    }
    case 'topup':
      state.billing.set(event.topupId, event);
      touch('billing');
      break;
    case 'invoice':
      state.billing.set(event.invoiceId, event);
      touch('billing');
      break;
    case 'mail':
      state.outbox.push(event);
      touch('billing');
      break;
    case 'fault':
      refreshFaults();
      break;
    case 'verdict.finding':
      addFinding(Object.assign({ firstAt: event.count === 1 ? event.at : undefined }, event));
      break;
    case 'verdict.reset':
      state.findings = new Map();
      touch('verdict');
      break;
    case 'clock':
      $('clock').textContent = event.at;
      break;
    case 'reset':
      resetView();
      loadAll().catch(() => {});
      break;
    default:
      // A kind this page does not know yet: nothing to show.
      break;
  }
}

function resetView() {
  state.requests = [];
  state.requestIds = new Set();
  state.generations = new Map();
  state.messages = new Map();
  state.users = new Map();
  state.billing = new Map();
  state.outbox = [];
  state.findings = new Map();
  state.verdictRead = false;
  state.highlight = null;
  touch('requests', 'generations', 'messages', 'users', 'billing', 'verdict');
}

// ---- what the world holds already ----

// After an action or a fault used: a failure is on the notice line already.
function refreshFaults() {
  loadFaults().catch(() => {});
}

async function loadFaults() {
  state.faults = (await control('GET', '/_mock/faults')).data || [];
  touch('faults');
}

// Generations, ledger rows, messages and their attempts, top-ups, invoices
// and mails come with the stream's history; requests and faults are listed.
async function loadAll() {
  const [clock, requests] = await Promise.all([
    control('GET', '/_mock/clock'),
    control('GET', '/_mock/requests'),
  ]);
  $('clock').textContent = clock.now;
  offerControls(clock);
  requests.data.slice(-MAX_REQUESTS).forEach(addRequest);
  await Promise.all([loadFaults(), loadVerdict()]);
}

// A control the world's settings refuse is disabled, saying why on hover.
function refuse(node, reason) {
  for (const target of [node, ...node.querySelectorAll('input, select, button')]) {
    if (target !== node) target.disabled = Boolean(reason);
    if (reason) target.title = reason;
    else target.removeAttribute('title');
  }
}

function offerControls(clock) {
  $('clock').title = "the mock's clock: " + (clock.mode === 'manual' ? 'manual' : 'real, time scale ' + clock.timeScale);
  refuse($('advance-form'), clock.mode === 'manual' ? null
    : 'The clock of this world is real (time scale ' + clock.timeScale + '): it moves by itself and cannot be advanced. '
      + 'Start the mock with --clock manual, or create the world with "clock": "manual", to move it by hand.');
}

// ---- the stream, read with fetch so that the token goes in a header ----

async function stream() {
  let response;
  try {
    response = await fetch(base + '/_mock/events?history=true', { headers: headers({ accept: 'text/event-stream' }), credentials: 'omit', cache: 'no-store' });
  } catch (_) {
    return retry();
  }
  if (!response.ok) {
    const live = $('live');
    live.textContent = response.status === 401 ? 'admin token required' : 'stream: HTTP ' + response.status;
    live.className = 'off';
    if (response.status !== 401) retry();
    return;
  }
  $('live').textContent = 'live';
  $('live').className = 'on';
  // The history comes again with each connection: the view starts over.
  resetView();
  state.lastSeq = 0;
  // Subscribed first, listed second: no request falls between the two.
  loadAll().catch(() => {});
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    let chunk;
    try {
      chunk = await reader.read();
    } catch (_) {
      break;
    }
    if (chunk.done) break;
    buffer += chunk.value;
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = block.split('\n').filter((line) => line.startsWith('data:')).map((line) => line.slice(5).replace(/^ /, '')).join('\n');
      if (data) handle(JSON.parse(data));
    }
  }
  retry();
}

function retry() {
  $('live').textContent = 'reconnecting…';
  $('live').className = 'off';
  state.lastSeq = 0;
  setTimeout(stream, 1000);
}

// ---- controls ----

function act(method, path, body) {
  return control(method, path, body).then((answer) => {
    notice(method + ' ' + path + ' ✓', false);
    return answer;
  }).catch(() => {});
}

function formValues(form) {
  const values = {};
  for (const [name, value] of new FormData(form)) {
    if (value !== '') values[name] = value;
  }
  return values;
}

function numbers(values, names) {
  for (const name of names) if (name in values) values[name] = Number(values[name]);
  return values;
}

function wire() {
  $('advance-form').addEventListener('submit', (e) => {
    e.preventDefault();
    act('POST', '/_mock/clock/advance', { seconds: Number($('advance-seconds').value) });
  });
  $('outcome-form').addEventListener('submit', (e) => {
    e.preventDefault();
    act('POST', '/_mock/outcomes', numbers(formValues(e.target), ['count']));
  });
  $('fault-form').addEventListener('submit', (e) => {
    e.preventDefault();
    act('POST', '/_mock/faults', numbers(formValues(e.target), ['status', 'delaySeconds', 'count'])).then(refreshFaults);
  });
  $('reset-verdict').addEventListener('click', () => act('DELETE', '/_mock/verdict').then(() => loadVerdict(true).catch(() => {})));
  $('clear-faults').addEventListener('click', () => act('DELETE', '/_mock/faults').then(refreshFaults));
  $('model-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const v = formValues(e.target);
    act('POST', '/_mock/models/' + encodeURIComponent(v.slug) + '/state', { state: v.state });
  });
  $('pay-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const id = encodeURIComponent(formValues(e.target).id || '');
    const kind = e.submitter ? e.submitter.value : 'invoice';
    const path = kind === 'invoice' ? '/_mock/invoices/' + id + '/pay' : '/_mock/topups/' + id + (kind === 'topup' ? '/pay' : '/fail');
    act('POST', path);
  });
  for (const id of ['filter-user', 'filter-path', 'filter-status']) $(id).addEventListener('input', () => touch('requests'));
}

wire();
stream();
