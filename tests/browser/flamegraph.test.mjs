// The flame graph SVG in a real browser: `tracekit flamegraph` draws a small
// known profile, Debian's headless Chromium (driven by playwright-core)
// opens the file with every network request refused and counted, and the
// test checks what a user sees: the frames' widths, zoom by click, reset,
// search with its percentage, the details line.
//
// The profile (400 samples):
//   app;main;func_a         100   (25%)
//   app;main;func_b         140   func_b: 200 in all (50%)
//   app;main;func_b;func_a   60   func_a: 160 in all, one stack inside func_b
//   app;idle                100   (25%)
// so searching "func" must count func_b's stacks once (75.0%, not 90.0%).
//
// Run: node --test tests/browser/   (BUILD=dir picks the build directory,
// relative to the repository or absolute; default build/).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');
const build = path.resolve(repo, process.env.BUILD || 'build');
const tracekit = path.join(build, 'bin', 'tracekit');
const chromiumPath = '/usr/bin/chromium';

const FOLDED = [
  'app;main;func_a 100',
  'app;main;func_b 140',
  'app;main;func_b;func_a 60',
  'app;idle 100',
].join('\n') + '\n';
const TOTAL = 400;
const WIDTH = 1200, XPAD = 10, FULL = WIDTH - 2 * XPAD;

let skip = false;
if (!existsSync(chromiumPath)) skip = `${chromiumPath} is missing (apt-get install chromium)`;
else if (!existsSync(path.join(here, 'node_modules', 'playwright-core')))
  skip = 'tests/browser/node_modules is missing (npm ci in tests/browser)';
if (skip) console.log(`# skipping the flame graph browser test: ${skip}`);

// Every frame as drawn: its path from the root ("all;app;main"), the rect's
// x and width, whether it is shown, its fill and its class.
function frames(page) {
  return page.evaluate(() => {
    const out = {};
    const walk = (g, prefix) => {
      const t = g.firstElementChild.textContent;
      const name = t.slice(0, t.lastIndexOf(' ('));
      const p = prefix ? `${prefix};${name}` : name;
      const r = g.children[1];
      out[p] = {
        x: parseFloat(r.getAttribute('x')),
        width: parseFloat(r.getAttribute('width')),
        shown: r.getBoundingClientRect().width > 0,
        fill: r.getAttribute('fill'),
        parent: g.classList.contains('parent'),
        label: g.children[2] && g.children[2].localName === 'text' ? g.children[2].textContent : '',
      };
      for (const c of g.children) if (c.localName === 'g') walk(c, p);
    };
    walk(document.getElementById('frames').firstElementChild, '');
    return out;
  });
}

// Clicks (with the mouse, as a user) the middle of the frame at path.
async function clickFrame(page, framePath) {
  const box = await page.evaluate((want) => {
    const find = (g, prefix) => {
      const t = g.firstElementChild.textContent;
      const p = (prefix ? prefix + ';' : '') + t.slice(0, t.lastIndexOf(' ('));
      if (p === want) return g.children[1].getBoundingClientRect().toJSON();
      for (const c of g.children) if (c.localName === 'g') { const b = find(c, p); if (b) return b; }
      return null;
    };
    return find(document.getElementById('frames').firstElementChild, '');
  }, framePath);
  assert.ok(box, `no frame ${framePath}`);
  await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
}

async function clickText(page, id) {
  const box = await page.locator(`#${id}`).boundingBox();
  await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
}

const close = (actual, expected, what) =>
  assert.ok(Math.abs(actual - expected) <= 0.5, `${what}: ${actual}, expected ${expected} (±0.5)`);

test('flame graph SVG: widths, zoom, reset, search, details; no network', { skip }, async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'tk-flamegraph-'));
  const { chromium } = await import('playwright-core');
  let context;
  try {
    const gen = spawnSync(tracekit, ['flamegraph', '--title', 'browser test'], { input: FOLDED });
    assert.equal(gen.status, 0, `tracekit flamegraph failed: ${gen.stderr}`);
    const svgPath = path.join(dir, 'test.svg');
    writeFileSync(svgPath, gen.stdout);

    context = await chromium.launchPersistentContext(path.join(dir, 'profile'), {
      executablePath: chromiumPath,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    const refused = [];
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith('file:')) return route.continue();
      refused.push(url);
      return route.abort();
    });
    const page = context.pages()[0] || (await context.newPage());
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto('file://' + svgPath);
    assert.equal(await page.locator('#title').textContent(), 'browser test');

    // Widths: each frame's share of the 1180 px between the margins.
    const drawn = await frames(page);
    const want = {
      'all': [0, 400], 'all;app': [0, 400], 'all;app;idle': [0, 100],
      'all;app;main': [100, 300], 'all;app;main;func_a': [100, 100],
      'all;app;main;func_b': [200, 200], 'all;app;main;func_b;func_a': [200, 60],
    };
    assert.deepEqual(Object.keys(drawn).sort(), Object.keys(want).sort());
    for (const [p, [start, value]] of Object.entries(want)) {
      close(drawn[p].x, XPAD + (start * FULL) / TOTAL, `${p} x`);
      close(drawn[p].width, (value * FULL) / TOTAL, `${p} width`);
      assert.ok(drawn[p].shown, `${p} shown`);
    }

    // The details line follows the pointer.
    const fb = 'all;app;main;func_b';
    const fbBox = await page.evaluate(() => {
      for (const t of document.querySelectorAll('#frames title'))
        if (t.textContent.startsWith('func_b '))
          return t.nextElementSibling.getBoundingClientRect().toJSON();
      return null;
    });
    await page.mouse.move(fbBox.x + 5, fbBox.y + 5);
    assert.equal(await page.locator('#details').textContent(), 'func_b (200 samples, 50.00%)');

    // Zoom into func_b: it spans the whole width, its child scales with it,
    // its ancestors stay (full width, greyed), everything else is hidden.
    await clickFrame(page, fb);
    let z = await frames(page);
    close(z[fb].x, XPAD, 'zoomed func_b x');
    close(z[fb].width, FULL, 'zoomed func_b width');
    close(z[fb + ';func_a'].width, (60 * FULL) / 200, 'zoomed func_b;func_a width');
    assert.equal(z[fb + ';func_a'].label, 'func_a');
    for (const p of ['all', 'all;app', 'all;app;main']) {
      assert.ok(z[p].shown && z[p].parent, `${p} stays as an ancestor`);
      close(z[p].width, FULL, `${p} width when zoomed`);
    }
    assert.ok(!z['all;app;main;func_a'].shown, 'the sibling func_a is hidden');
    assert.ok(!z['all;app;idle'].shown, 'idle is hidden');
    assert.ok(await page.locator('#unzoom').isVisible(), 'Reset Zoom is offered');

    // Reset Zoom: everything as first drawn.
    await clickText(page, 'unzoom');
    assert.deepEqual(await frames(page), drawn);
    assert.ok(!(await page.locator('#unzoom').isVisible()), 'Reset Zoom is gone');

    // Search through the Search control: func_b's stacks count once.
    let answer = 'func';
    page.on('dialog', (d) => d.accept(answer));
    await clickText(page, 'search');
    assert.equal(await page.locator('#matched').textContent(), 'Matched: 75.0%');
    let s = await frames(page);
    const lit = Object.keys(s).filter((p) => s[p].fill === '#e600e6').sort();
    assert.deepEqual(lit, ['all;app;main;func_a', fb, fb + ';func_a']);
    assert.equal(await page.locator('#search').textContent(), 'Reset Search');

    // The control now resets the search.
    await clickText(page, 'search');
    assert.deepEqual(await frames(page), drawn);
    assert.ok(!(await page.locator('#matched').isVisible()), 'no Matched line after the reset');

    // Ctrl-F, a regular expression.
    answer = '^func_a$|idle';
    await page.keyboard.press('Control+f');
    assert.equal(await page.locator('#matched').textContent(), 'Matched: 65.0%');
    answer = 'func_a';
    await page.keyboard.press('Control+f');
    assert.equal(await page.locator('#matched').textContent(), 'Matched: 40.0%');
    await page.keyboard.press('Escape');
    assert.deepEqual(await frames(page), drawn);

    assert.deepEqual(errors, [], 'script errors');
    assert.deepEqual(refused, [], 'network requests (all refused)');
  } finally {
    if (context) await context.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

// The converter itself (no browser): exit codes, what it says about lines
// it cannot read, the differential graph, the options that change the
// drawing.
function run(args, input) {
  const r = spawnSync(tracekit, ['flamegraph', ...args], { input: input ?? '' });
  return { status: r.status, out: String(r.stdout), err: String(r.stderr) };
}
const titles = (svg) =>
  [...svg.matchAll(/<title>([^<]*)<\/title><rect [^>]*fill="(#[0-9a-f]{6})"/g)].map((m) => [m[1], m[2]]);

test('tracekit flamegraph: exit codes and messages', () => {
  let r = run([], 'a;b 3\nnot folded\na;c 1.5\n\na;c 1\n');
  assert.equal(r.status, 0);
  assert.match(r.err,
    /^tracekit flamegraph: 2 lines of standard input not in the folded format .*the first: line 2\n$/);
  assert.deepEqual(titles(r.out).map((t) => t[0]), ['all (4 samples, 100.00%)',
    'a (4 samples, 100.00%)', 'b (3 samples, 75.00%)', 'c (1 samples, 25.00%)']);

  r = run(['/nonexistent/x.folded']);
  assert.equal(r.status, 1);
  assert.match(r.err, /cannot read '\/nonexistent\/x.folded': No such file or directory/);
  for (const args of [['--colors', 'java'], ['--diff', 'one'], ['a', 'b'], ['--normalize'],
    ['--width', '10'], ['--minwidth', '-1'], ['--minwidth', 'x%'], ['--bogus']]) {
    r = run(args);
    assert.equal(r.status, 2, `${args}: ${r.err}`);
    assert.match(r.err, /^tracekit flamegraph: .*\nUSAGE: tracekit flamegraph /, String(args));
  }
  r = run(['-h']);
  assert.equal(r.status, 0);
  assert.match(r.out, /^USAGE: tracekit flamegraph /);

  r = run([], '');
  assert.equal(r.status, 0);
  assert.match(r.out, />No stacks<\/text>/);
});

test('tracekit flamegraph: options', () => {
  const input = 'p;main;leaf 30\np;main;-;sys_k 10\n';
  let r = run(['--title', 'T <1>', '--subtitle', 'sub', '--countname', 'us', '--colors', 'io'],
    input);
  assert.equal(r.status, 0);
  assert.match(r.out, /<text id="title" x="600" y="24">T &lt;1&gt;<\/text>/);
  assert.match(r.out, /<text id="subtitle" x="600" y="42">sub<\/text>/);
  assert.match(r.out, /<title>leaf \(30 us, 75.00%\)<\/title>/);
  r = run(['--inverted'], input);
  assert.match(r.out, />Icicle Graph<\/text>/);
  assert.match(r.out, /<title>all \(40 samples, 100.00%\)<\/title><rect x="10" y="36" /);
  r = run(['--reverse'], input);
  assert.deepEqual(titles(r.out).map((t) => t[0].split(' ')[0]),
    ['all', 'leaf', 'main', 'p', 'sys_k', '-', 'main', 'p']);
  r = run(['--width', '420'], input);  // 400 px for 40 samples
  assert.match(r.out, /<title>leaf \(30 samples, 75.00%\)<\/title><rect x="110" y="[0-9.]+" width="300" /);
  r = run(['--minwidth', '25%'], input);  // 10 of 40 is 25%: drawn; nothing narrower
  assert.equal(titles(r.out).length, 6);
  r = run(['--minwidth', '26%'], input);
  assert.equal(titles(r.out).length, 4);
  assert.match(r.out, /2 frames narrower than 306.8 px not drawn/);
});

test('tracekit flamegraph --diff: widths from AFTER, red grew, blue shrank', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'tk-flamegraph-diff-'));
  try {
    writeFileSync(path.join(dir, 'before'), 'p;a 10\np;b 30\np;c 20\n');
    writeFileSync(path.join(dir, 'after'), 'p;a 30\np;b 10\np;c 20\n');
    let r = run(['--diff', path.join(dir, 'before'), path.join(dir, 'after')]);
    assert.equal(r.status, 0, r.err);
    assert.deepEqual(titles(r.out), [
      ['all (60 samples, 100.00%; before 60, delta +0)', '#ffffff'],
      ['p (60 samples, 100.00%; before 60, delta +0)', '#ffffff'],
      ['a (30 samples, 50.00%; before 10, delta +20)', '#ff0000'],
      ['b (10 samples, 16.67%; before 30, delta -20)', '#0000ff'],
      ['c (20 samples, 33.33%; before 20, delta +0)', '#ffffff'],
    ]);
    // --normalize: BEFORE scaled to AFTER's total (120 -> 60: halved).
    writeFileSync(path.join(dir, 'before2'), 'p;a 20\np;b 60\np;c 40\n');
    r = run(['--diff', '--normalize', path.join(dir, 'before2'), path.join(dir, 'after')]);
    assert.equal(r.status, 0, r.err);
    assert.match(r.out, /<title>a \(30 samples, 50.00%; before 10, delta \+20\)<\/title>/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
