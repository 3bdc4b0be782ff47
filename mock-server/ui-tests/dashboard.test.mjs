// Browser tests of the mock's dashboard (GET /_mock/ui): the real mediagen-mock
// binary with a manual clock, Debian's chromium driven by playwright-core.
//
//   MEDIAGEN_MOCK_BIN=target/debug/mediagen-mock node --test dashboard.test.mjs
//
// Each test starts its own mock on 127.0.0.1:0 and its own browser profile.
// Screenshots go to artifacts/; with UPDATE_README_SCREENSHOT=1 the last one
// also replaces mock-server/docs/dashboard.png.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdtempSync, mkdirSync, copyFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
const mockBin = process.env.MEDIAGEN_MOCK_BIN || join(here, '../../target/debug/mediagen-mock');
const artifacts = join(here, 'artifacts');
mkdirSync(artifacts, { recursive: true });
const WAIT = 15_000;

const cleanups = [];
after(async () => {
  for (const clean of cleanups.reverse()) await clean();
});

// The mock binary on a free port; its address and demo key from its stdout;
// a manual clock unless the arguments name another.
async function startMock(...args) {
  const clock = args.includes('--clock') ? [] : ['--clock', 'manual'];
  const child = spawn(mockBin, ['--listen', '127.0.0.1:0', ...clock, '--rate-limits', 'off', '--allow-private-webhooks', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stderr.on('data', (d) => (log += d));
  const started = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const url = out.match(/listening on (http:\/\/\S+)/);
      const key = out.match(/demo API key: (\S+)/);
      if (url && key) resolve({ url: url[1], key: key[1] });
    });
    child.on('exit', (code) => reject(new Error(`mediagen-mock exited ${code}: ${log}`)));
  });
  cleanups.push(() => child.kill());
  return { ...started, log: () => log };
}

// A local HTTP server (a webhook receiver, a page of another origin),
// closed with its connections when the run ends.
async function listen(server) {
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => {
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  });
  return `http://127.0.0.1:${server.address().port}`;
}

// A webhook receiver answering `answers` in turn, then 200; a 500 says
// `failure`. The statuses it answered are in `received`.
async function startReceiver(answers, failure) {
  const received = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const status = answers.shift() ?? 200;
      received.push(status);
      res.writeHead(status, { 'content-type': 'text/plain' });
      res.end(status === 500 ? failure : 'ok');
    });
  });
  return { hook: (await listen(server)) + '/hook', received };
}

async function api(mock, method, path, body, headers = {}) {
  const response = await fetch(mock.url + path, {
    method,
    headers: { authorization: 'Bearer ' + mock.key, 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

// A fresh chromium profile (its user-data-dir) for each test; every dialog is recorded (and
// dismissed), so that a script run by markup would be seen.
async function openBrowser() {
  const profile = mkdtempSync(join(tmpdir(), 'mediagen-ui-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    viewport: { width: 1400, height: 1000 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-quic',
      '--disable-sync',
    ],
  });
  cleanups.push(async () => {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  });
  const page = context.pages()[0] || (await context.newPage());
  const dialogs = [];
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    dialog.dismiss().catch(() => {});
  });
  // Script errors, and answers the page did not expect.
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('response', (r) => {
    if (r.status() >= 400) errors.push(`${r.status()} ${r.url()}`);
  });
  return { page, dialogs, errors };
}

async function openDashboard(page, mock, query = '') {
  const response = await page.goto(mock.url + '/_mock/ui' + query);
  assert.equal(response.status(), 200);
  await page.locator('#live.on').waitFor({ timeout: WAIT });
  return response;
}

function generationCard(page, id) {
  return page.locator(`#generations [data-generation-id="${id}"]`);
}

async function textOf(locator) {
  await locator.waitFor({ timeout: WAIT });
  return locator.textContent();
}

async function waitForText(locator, pattern) {
  const deadline = Date.now() + WAIT;
  let text = '';
  while (Date.now() < deadline) {
    text = (await locator.count()) ? await locator.first().textContent() : '';
    if (pattern.test(text)) return text;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`expected ${pattern} in: ${text}`);
}

async function waitForCount(locator, count) {
  const deadline = Date.now() + WAIT;
  while ((await locator.count()) !== count) {
    assert.ok(Date.now() < deadline, `expected ${count}, found ${await locator.count()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function advance(page, seconds) {
  await page.fill('#advance-seconds', String(seconds));
  await page.click('#advance');
}

test('a generation created through the API appears and ends live after a click on advance', async () => {
  const mock = await startMock();
  const { page, errors } = await openBrowser();
  await openDashboard(page, mock);

  const created = await api(mock, 'POST', '/v1/generations', { modelSlug: 'flux-schnell', prompt: 'a lighthouse at dusk', params: { aspect_ratio: '16:9' } });
  assert.equal(created.status, 202);
  const card = generationCard(page, created.body.id);

  assert.match(await textOf(card), /PENDING/);
  await waitForText(page.locator('#requests tr'), /POST\/v1\/generations202/);
  await advance(page, 60);
  await waitForText(card.locator('.head'), /SUCCEEDED/);
  const timeline = await card.locator('.timeline li').allTextContents();
  assert.deepEqual(timeline.map((line) => line.split(' ').slice(1, 4).join(' ')), ['created → PENDING', 'started → PROCESSING', 'ended → SUCCEEDED']);
  assert.match(await textOf(card.locator('.head')), /cost \d+\.\d\d ₽/);
  assert.deepEqual(errors, []);
});

test('a webhook delivery to a receiver answering 500 then 200 shows both attempts', async () => {
  const mock = await startMock();
  const { hook, received } = await startReceiver([500, 200], 'receiver down <b>bold</b>');
  const endpoint = await api(mock, 'POST', '/v1/webhook-endpoints', { url: hook });
  assert.equal(endpoint.status, 201);
  const { page, errors } = await openBrowser();
  await openDashboard(page, mock);

  const created = await api(mock, 'POST', '/v1/generations', { modelSlug: 'flux-schnell', prompt: 'a harbour', params: { aspect_ratio: '16:9' } });
  await advance(page, 60);
  const message = page.locator('#messages .message');
  await waitForText(message.locator('.attempts'), /#1 .*HTTP 500/);
  assert.match(await message.locator('.attempts li').first().textContent(), /next retry/);
  assert.match(await message.locator('.head').textContent(), /pending generation\.completed/);
  await advance(page, 10);
  await waitForText(message.locator('.head'), /delivered/);

  const attempts = await message.locator('.attempts li').allTextContents();
  assert.equal(attempts.length, 2);
  assert.match(attempts[0], /#1 .* HTTP 500 in \d+ ms.*receiver down <b>bold<\/b>/);
  assert.match(attempts[1], /#2 .* HTTP 200 in \d+ ms/);
  assert.equal(await page.locator('#messages b').count(), 0, "the receiver's answer is text");
  assert.match(await message.locator('.head').textContent(), new RegExp('task ' + created.body.id.slice(0, 8)));
  assert.deepEqual(received, [500, 200]);
  await page.screenshot({ path: join(artifacts, 'webhook-attempts.png'), fullPage: true });
  assert.deepEqual(errors, []);
});

test('a prompt of markup is shown as text and runs no script', async () => {
  const mock = await startMock();
  const { page, dialogs, errors } = await openBrowser();
  await openDashboard(page, mock);
  const prompt = '<img src=x onerror=alert(1)>';

  const created = await api(mock, 'POST', '/v1/generations', { modelSlug: 'flux-schnell', prompt, params: { aspect_ratio: '16:9' } }, { 'idempotency-key': '<script>alert(2)</script>' });
  const card = generationCard(page, created.body.id);

  assert.equal(await textOf(card.locator('.prompt')), prompt);
  await advance(page, 60);
  await waitForText(card.locator('.head'), /SUCCEEDED/);
  assert.equal(await page.locator('main img, main script').count(), 0);
  assert.deepEqual(dialogs, [], 'no alert ran');
  // The page's policy would also have refused an inline handler: nothing was even tried.
  assert.deepEqual(errors, []);
});

test('with an admin token the page needs it, and its controls send it as a header', async () => {
  const mock = await startMock('--admin-token', 'T0k3n');
  const { page, errors } = await openBrowser();

  const refused = await page.goto(mock.url + '/_mock/ui');
  assert.equal(refused.status(), 401);
  assert.match(await page.textContent('body'), /AUTHENTICATION_ERROR/);

  await openDashboard(page, mock, '?token=T0k3n');
  assert.equal(new URL(page.url()).search, '', 'the token leaves the address bar');
  const before = await waitForText(page.locator('#clock'), /^\d{4}-/);
  await advance(page, 3600);
  await waitForText(page.locator('#notice'), /clock\/advance ✓/);
  const clock = await api(mock, 'GET', '/_mock/clock', undefined, { authorization: 'Bearer T0k3n' });
  assert.equal(new Date(clock.body.now) - new Date(before), 3600 * 1000);

  // A page of another origin cannot send the header: the browser's preflight
  // gets no CORS grant, and without the header the mock refuses.
  const other = createServer((_, res) => res.end('<!doctype html><title>elsewhere</title>'));
  await page.goto((await listen(other)).replace('127.0.0.1', 'localhost') + '/');
  const outcome = await page.evaluate(async (url) => {
    const tries = {};
    try {
      const r = await fetch(url + '/_mock/clock/advance', { method: 'POST', headers: { authorization: 'Bearer T0k3n', 'content-type': 'application/json' }, body: '{"seconds":1}' });
      tries.withHeader = r.status;
    } catch (e) {
      tries.withHeader = 'blocked';
    }
    try {
      await fetch(url + '/_mock/clock/advance', { method: 'POST', mode: 'no-cors', body: '{"seconds":1}' });
      tries.simple = 'sent';
    } catch (e) {
      tries.simple = 'blocked';
    }
    return tries;
  }, mock.url);
  assert.equal(outcome.withHeader, 'blocked');
  const after = await api(mock, 'GET', '/_mock/clock', undefined, { authorization: 'Bearer T0k3n' });
  assert.equal(after.body.now, clock.body.now, 'the clock did not move');
  // Only the refusals asked for above.
  assert.deepEqual(errors.filter((e) => !e.endsWith('/_mock/ui') && !e.includes('/_mock/clock/advance')), []);
});

test('the dashboard of a busy world (the screenshot in the README)', async () => {
  const mock = await startMock();
  const { hook } = await startReceiver([500, 200], 'upstream unavailable');
  await api(mock, 'POST', '/v1/webhook-endpoints', { url: hook });
  const { page, errors } = await openBrowser();
  await openDashboard(page, mock);

  await api(mock, 'POST', '/v1/generations', { modelSlug: 'flux-schnell', prompt: 'a lighthouse at dusk', params: { aspect_ratio: '16:9' } });
  await api(mock, 'POST', '/v1/generations', { modelSlug: 'flux-schnell', prompt: 'a storm mock:fail=timeout', params: { aspect_ratio: '1:1' } });
  await api(mock, 'POST', '/v1/generations', { modelSlug: 'nope', prompt: 'x' });
  await api(mock, 'POST', '/v1/billing/topup', { amountRub: 500 });
  await page.fill('#fault-form [name=path]', '/v1/generations/*');
  await page.fill('#fault-form [name=method]', 'GET');
  await page.fill('#fault-form [name=status]', '503');
  await page.click('#fault-form button[type=submit]');
  await page.locator('#faults li').waitFor({ timeout: WAIT });
  await api(mock, 'GET', '/v1/generations/00000000-0000-4000-8000-000000000000');
  await advance(page, 60);
  await advance(page, 10);
  await waitForText(page.locator('#messages .message .head').first(), /delivered|pending/);
  await page.locator('#users .user .keys').first().waitFor({ timeout: WAIT });
  await waitForText(page.locator('#generations'), /FAILED.*refund/s);
  // The creates above carry no Idempotency-Key: the Verdict panel says so.
  await waitForText(page.locator('#findings [data-rule="create-without-key"]'), /advice create-without-key/);

  const shot = join(artifacts, 'dashboard.png');
  await page.screenshot({ path: shot, fullPage: true });
  if (process.env.UPDATE_README_SCREENSHOT === '1') {
    copyFileSync(shot, join(here, '../docs/dashboard.png'));
  }
  assert.doesNotMatch(await page.textContent('#users'), /mg_live_\w+_\w{20,}/, 'keys by their public part only');
  assert.deepEqual(errors, []);
});

// The control API as a test drives it: the mock's clock moved by the test,
// not by the page.
async function advanceClock(mock, seconds) {
  const moved = await api(mock, 'POST', '/_mock/clock/advance', { seconds });
  assert.equal(moved.status, 200);
}

// Every webhook message of the world has ended (its attempts answered).
async function deliveriesEnded(mock, count) {
  const deadline = Date.now() + WAIT;
  for (;;) {
    const { body } = await api(mock, 'GET', '/_mock/deliveries');
    if (body.data.length === count && body.data.every((d) => d.state !== 'pending')) return body.data;
    assert.ok(Date.now() < deadline, 'deliveries still pending: ' + JSON.stringify(body.data.map((d) => d.state)));
    await advanceClock(mock, 10);
  }
}

test('opened after a run, the page shows the generations, ledger rows and messages from before it opened', async () => {
  const mock = await startMock();
  const { hook } = await startReceiver([500], 'receiver down');
  assert.equal((await api(mock, 'POST', '/v1/webhook-endpoints', { url: hook })).status, 201);
  const prompts = ['a lighthouse at dusk', 'a harbour', 'a storm mock:fail=timeout'];
  const ids = [];
  for (const prompt of prompts) {
    const created = await api(mock, 'POST', '/v1/generations', { modelSlug: 'flux-schnell', prompt, params: { aspect_ratio: '16:9' } });
    assert.equal(created.status, 202);
    ids.push(created.body.id);
  }
  await advanceClock(mock, 120);
  const deliveries = await deliveriesEnded(mock, 3);
  assert.equal(deliveries.reduce((n, d) => n + d.attempts.length, 0), 4, 'one message tried twice');

  const { page, errors } = await openBrowser();
  await openDashboard(page, mock);

  await waitForText(page.locator('#generations'), new RegExp(ids.map((id) => id.slice(0, 8)).join('|')));
  const cards = page.locator('#generations .generation');
  await waitForCount(cards, 3);
  const steps = async (id) => (await generationCard(page, id).locator('.timeline li').allTextContents()).map((line) => line.split(' ').slice(1).join(' '));
  for (const id of ids.slice(0, 2)) {
    assert.match(await textOf(generationCard(page, id).locator('.head')), /^SUCCEEDED .* cost \d+\.\d\d ₽$/);
    assert.deepEqual(await steps(id), ['created → PENDING', 'started → PROCESSING (attempt 1)', 'ended → SUCCEEDED (attempt 1)']);
  }
  const failed = generationCard(page, ids[2]);
  assert.match(await textOf(failed.locator('.head')), /^FAILED .* cost (\d+\.\d\d) ₽ · refund \1 ₽ · timeout$/);
  assert.deepEqual(await steps(ids[2]), [
    'created → PENDING',
    'started → PROCESSING (attempt 1)',
    'attempt_failed → PROCESSING (attempt 2)',
    'attempt_failed → PROCESSING (attempt 3)',
    'ended → FAILED (attempt 3)',
  ]);

  const ledger = page.locator('#users .user .ledger li');
  await waitForCount(ledger, 5);
  const rows = (await ledger.allTextContents()).map((row) => row.split(' ')[1]);
  assert.deepEqual(rows, ['TOPUP', 'GENERATION_CHARGE', 'GENERATION_CHARGE', 'GENERATION_CHARGE', 'GENERATION_REFUND']);

  const messages = page.locator('#messages .message');
  await waitForCount(messages, 3);
  for (const text of await messages.locator('.head').allTextContents()) assert.match(text, /^delivered generation\.(completed|failed) /);
  const attempts = await messages.locator('.attempts li').allTextContents();
  assert.equal(attempts.length, 4);
  assert.equal(attempts.filter((a) => /HTTP 500/.test(a)).length, 1);
  assert.equal(attempts.filter((a) => /HTTP 200/.test(a)).length, 3);
  assert.match(await textOf(page.locator('#messages')), new RegExp('task ' + ids[2].slice(0, 8)));

  // The page goes on live from there, without telling the past twice.
  const fourth = await api(mock, 'POST', '/v1/generations', { modelSlug: 'flux-schnell', prompt: 'a fourth', params: { aspect_ratio: '1:1' } });
  await waitForText(generationCard(page, fourth.body.id).locator('.head'), /PENDING/);
  assert.equal(await cards.count(), 4);
  assert.equal(await page.locator('#messages .message').count(), 3);
  await page.screenshot({ path: join(artifacts, 'after-the-fact.png'), fullPage: true });
  assert.deepEqual(errors, []);
});

test('on a real clock, Advance clock is disabled and says why on hover', async () => {
  const mock = await startMock('--clock', 'real');
  const { page, errors } = await openBrowser();
  await openDashboard(page, mock);

  await page.locator('#advance:disabled').waitFor({ timeout: WAIT });
  assert.ok(await page.locator('#advance-seconds').isDisabled());
  assert.match(await page.getAttribute('#advance-form', 'title'), /clock of this world is real .*--clock manual/);
  assert.ok(await page.locator('#outcome-form button').isEnabled(), 'what the settings allow stays');
  await page.hover('#advance-form');

  // A world of the same mock with a manual clock offers it.
  const world = await api(mock, 'POST', '/_mock/worlds', { clock: 'manual' });
  assert.equal(world.status, 201);
  await page.goto(world.body.baseUrl + '/_mock/ui');
  await page.locator('#live.on').waitFor({ timeout: WAIT });
  await waitForText(page.locator('#clock'), /^\d{4}-/);
  assert.ok(await page.locator('#advance').isEnabled());
  assert.equal(await page.getAttribute('#advance-form', 'title'), null);
  assert.deepEqual(errors, []);
});

test('the Verdict panel names a bad client’s findings in words, live and when opened, with links to their requests', async () => {
  const mock = await startMock();
  const { page, errors } = await openBrowser();
  await openDashboard(page, mock);
  const summary = page.locator('#verdict-summary');
  await waitForText(summary, /^Clean: no violation\.$/);

  // A create without an Idempotency-Key: advice, which leaves the verdict clean.
  const body = { modelSlug: 'flux-schnell', prompt: 'a bad client', params: { aspect_ratio: '16:9' } };
  const bare = await api(mock, 'POST', '/v1/generations', { ...body, prompt: 'no key at all' });
  assert.equal(bare.status, 202);
  const advice = page.locator('#findings [data-rule="create-without-key"]');
  await waitForText(advice, /advice create-without-key/);
  await waitForText(summary, /^Clean: no violation \(1 advice\)\.$/);

  // A create answered 503, sent again with another key: a violation.
  const fault = await api(mock, 'POST', '/_mock/faults', { method: 'POST', path: '/v1/generations', effect: 'error', status: 503, code: 'SERVICE_UNAVAILABLE', count: 1 });
  assert.equal(fault.status, 201);
  const failed = await fetch(mock.url + '/v1/generations', {
    method: 'POST',
    headers: { authorization: 'Bearer ' + mock.key, 'content-type': 'application/json', 'idempotency-key': 'first-key' },
    body: JSON.stringify(body),
  });
  assert.equal(failed.status, 503);
  const failedId = failed.headers.get('x-request-id');
  const again = await api(mock, 'POST', '/v1/generations', body, { 'idempotency-key': 'second-key' });
  assert.equal(again.status, 202);

  const violation = page.locator('#findings [data-rule="create-retry-new-key"]');
  await waitForText(violation, /violation create-retry-new-key/);
  await waitForText(summary, /^Not clean: 1 violation, 1 advice\.$/);

  // Both as the page reads them from GET /_mock/verdict when it opens.
  await page.reload();
  await page.locator('#live.on').waitFor({ timeout: WAIT });
  const verdict = (await api(mock, 'GET', '/_mock/verdict')).body;
  for (const finding of verdict.findings) {
    const item = page.locator(`#findings [data-rule="${finding.rule}"]`);
    const text = await waitForText(item, new RegExp(finding.rule));
    for (const words of [finding.severity, finding.message, finding.documentRule, finding.advice]) {
      assert.ok(text.includes(words), `${finding.rule}: "${words}" not in "${text}"`);
    }
    assert.match(text, finding.count === 1 ? /once/ : new RegExp(finding.count + ' times'));
  }
  const wanted = verdict.findings.find((f) => f.rule === 'create-retry-new-key');
  assert.ok(wanted.requestIds.includes(failedId));
  assert.match(await textOf(violation.locator('.message')), /Idempotency-Key/);
  assert.match(await textOf(advice.locator('.advice')), /^Do: /);
  await waitForText(summary, /^Not clean: 1 violation, 1 advice\.$/);

  // A link, once a filter hides the request, clears the filter and shows it.
  await page.fill('#filter-status', '2xx');
  await waitForCount(page.locator(`#requests tr[data-request-id="${failedId}"]`), 0);
  await violation.locator(`a[data-ref="${failedId}"]`).click();
  const row = page.locator(`#requests tr[data-request-id="${failedId}"]`);
  await row.waitFor({ timeout: WAIT });
  assert.match(await row.getAttribute('class'), /highlight/);
  assert.match(await row.textContent(), /POST\/v1\/generations503/);
  assert.ok(await row.isVisible());
  await page.waitForFunction((id) => {
    const r = document.querySelector(`#requests tr[data-request-id="${id}"]`).getBoundingClientRect();
    const p = document.getElementById('requests-panel').getBoundingClientRect();
    return r.top >= p.top && r.bottom <= p.bottom && r.top >= 0 && r.bottom <= innerHeight;
  }, failedId, { timeout: WAIT });
  assert.equal(await page.inputValue('#filter-status'), '');
  await page.screenshot({ path: join(artifacts, 'verdict.png'), fullPage: true });

  // Started over from the page: clean again.
  await page.click('#reset-verdict');
  await waitForText(summary, /^Clean: no violation\.$/);
  await waitForCount(page.locator('#findings li'), 0);

  // Started over by a test through the API (a verdict.reset event): the open page clears too.
  assert.equal((await api(mock, 'POST', '/v1/generations', { ...body, prompt: 'no key again' })).status, 202);
  await waitForText(advice, /advice create-without-key/);
  assert.equal((await api(mock, 'DELETE', '/_mock/verdict')).status, 204);
  await waitForText(summary, /^Clean: no violation\.$/);
  await waitForCount(page.locator('#findings li'), 0);
  assert.deepEqual(errors, []);
});

test('a receiver’s finding names its endpoint and links its webhook messages', async () => {
  const mock = await startMock();
  const { hook } = await startReceiver([500], 'receiver down');
  const endpoint = await api(mock, 'POST', '/v1/webhook-endpoints', { url: hook });
  assert.equal(endpoint.status, 201);
  const { page, errors } = await openBrowser();
  await openDashboard(page, mock);

  await api(mock, 'POST', '/v1/generations', { modelSlug: 'flux-schnell', prompt: 'a harbour', params: { aspect_ratio: '16:9' } }, { 'idempotency-key': 'harbour' });
  await advance(page, 60);
  const finding = page.locator('#findings [data-rule="receiver-failed"]');
  await waitForText(finding, /violation receiver-failed/);
  const message = page.locator('#messages .message').first();
  const messageId = await message.getAttribute('data-message-id');

  const verdict = (await api(mock, 'GET', '/_mock/verdict')).body;
  const wanted = verdict.findings.find((f) => f.rule === 'receiver-failed');
  assert.deepEqual(wanted.endpoint, { id: endpoint.body.id, url: hook });
  assert.deepEqual(wanted.messageIds, [messageId]);
  const named = finding.locator('.endpoint');
  await waitForText(named, new RegExp('^Endpoint: ' + endpoint.body.id));
  assert.equal(await named.locator('.endpoint-id').textContent(), endpoint.body.id);
  assert.equal(await named.locator('.endpoint-url').textContent(), hook);
  const refs = finding.locator('.refs.messages');
  assert.match(await textOf(refs), /^Messages: /);
  assert.deepEqual(await refs.locator('a').evaluateAll((links) => links.map((a) => a.dataset.ref)), wanted.messageIds);
  assert.equal(await finding.locator('.refs.requests').count(), 0);

  await refs.locator(`a[data-ref="${messageId}"]`).click();
  assert.match(await message.getAttribute('class'), /highlight/);
  await page.screenshot({ path: join(artifacts, 'receiver-finding.png'), fullPage: true });

  // From a mock that names the deliveries in `requestIds` only, and no
  // endpoint: the same links, and the endpoint of the message shown.
  await page.route('**/_mock/verdict', async (route) => {
    const answer = await (await route.fetch()).json();
    for (const f of answer.findings) {
      f.requestIds = f.messageIds ?? f.requestIds;
      delete f.endpoint;
      delete f.messageIds;
      delete f.fails;
    }
    await route.fulfill({ json: answer });
  });
  await page.reload();
  await page.locator('#live.on').waitFor({ timeout: WAIT });
  await waitForText(finding.locator('.endpoint'), new RegExp('^Endpoint: ' + endpoint.body.id + '$'));
  await finding.locator(`.refs.messages a[data-ref="${messageId}"]`).waitFor({ timeout: WAIT });
  assert.deepEqual(errors, []);
});

// Six users, each making one finding of advice (creates without a key, once
// to three times) and then one violation (a create of an unknown model sent
// again after its 404, once or twice): twelve findings, advice made first.
async function twelveFindings(mock) {
  const users = [];
  for (let i = 0; i < 6; i++) {
    const user = await api(mock, 'POST', '/_mock/users', { balanceRub: 500 });
    assert.equal(user.status, 201);
    users.push(user.body);
    const auth = { authorization: 'Bearer ' + user.body.apiKey };
    for (let n = 0; n <= i % 3; n++) {
      const bare = await api(mock, 'POST', '/v1/generations', { modelSlug: 'flux-schnell', prompt: `user ${i}, create ${n}`, params: { aspect_ratio: '1:1' } }, auth);
      assert.equal(bare.status, 202);
    }
    for (let n = 0; n <= 1 + (i % 2); n++) {
      const unknown = await api(mock, 'POST', '/v1/generations', { modelSlug: 'no-such-model', prompt: 'x' }, { ...auth, 'idempotency-key': `user-${i}-${n}` });
      assert.equal(unknown.status, 404);
    }
  }
  return users;
}

// The findings as the panel lists them: rule, severity, count, first id.
function listed(page) {
  return page.locator('#findings > li').evaluateAll((items) => items.map((li) => ({
    rule: li.dataset.rule,
    severity: li.querySelector('.severity').textContent,
    count: li.querySelector('.count').textContent,
    first: li.querySelector('.refs [data-ref]')?.dataset.ref,
  })));
}

test('many findings: the Verdict panel lists them all, the worst first, and the page scrolls rather than the panel', async () => {
  const mock = await startMock();
  const { page, errors } = await openBrowser();
  await openDashboard(page, mock);
  await twelveFindings(mock);
  const items = page.locator('#findings > li');
  await waitForCount(items, 12);
  await waitForText(page.locator('#verdict-summary'), /^Not clean: 6 violations, 6 advice\.$/);

  // The same order from the answer of GET /_mock/verdict, made order kept
  // among equals: violations, those that fail, the most repeated.
  const verdict = (await api(mock, 'GET', '/_mock/verdict')).body;
  assert.equal(verdict.findings.length, 12);
  const rank = (f) => [f.severity === 'violation' ? 0 : 1, f.fails === true ? 0 : 1, -f.count];
  const graver = (a, b) => rank(a).map((r, i) => r - rank(b)[i]).find((d) => d !== 0) ?? 0;
  const expected = [...verdict.findings].sort(graver).map((f) => ({
    rule: f.rule,
    severity: f.severity,
    count: f.count === 1 ? 'once' : f.count + ' times',
    first: f.requestIds[0],
  }));
  const counts = ['2 times', '2 times', '2 times', 'once', 'once', 'once', '3 times', '3 times', '2 times', '2 times', 'once', 'once'];

  for (const how of ['live', 'opened']) {
    if (how === 'opened') {
      await page.reload();
      await page.locator('#live.on').waitFor({ timeout: WAIT });
      await waitForCount(items, 12);
    }
    // Each finding's requests are links once the page lists them.
    await page.waitForFunction((n) => [...document.querySelectorAll('#findings > li')].filter((li) => li.querySelector('.refs a[data-ref]')).length === n, 12, { timeout: WAIT });
    const shown = await listed(page);
    assert.deepEqual(shown.map((f) => f.severity), [...Array(6).fill('violation'), ...Array(6).fill('advice')], how);
    assert.deepEqual(shown.map((f) => f.count), counts, how);
    assert.deepEqual(shown, expected, how);

    // Every finding shown at its full height: the panel has no scroll of its
    // own, the document holds it, and its last finding is reached by
    // scrolling the page.
    const sizes = await page.evaluate(() => {
      const panel = document.getElementById('verdict-panel');
      const box = panel.getBoundingClientRect();
      return {
        scrollHeight: panel.scrollHeight,
        clientHeight: panel.clientHeight,
        bottom: box.bottom + scrollY,
        document: document.documentElement.scrollHeight,
        overflow: getComputedStyle(panel).overflowY,
      };
    });
    assert.equal(sizes.scrollHeight, sizes.clientHeight, `${how}: ${JSON.stringify(sizes)}`);
    assert.ok(sizes.bottom <= sizes.document, `${how}: ${JSON.stringify(sizes)}`);
    const last = items.last();
    await last.scrollIntoViewIfNeeded();
    assert.ok(await last.isVisible());
    assert.equal(await page.evaluate(() => document.getElementById('verdict-panel').scrollTop), 0);
  }
  await page.evaluate(() => scrollTo(0, 0));
  await page.screenshot({ path: join(artifacts, 'verdict-many.png'), fullPage: true });
  assert.deepEqual(errors, []);
});
