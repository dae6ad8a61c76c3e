// speedscope's own importer on our speedscope files, and our JSON report
// against its schema.
//
// The files are the unit tests' goldens (tests/unit/output/
// speedscope_test.cpp, json_report_test.cpp), written by build/tests/
// unit_tests under TRACEKIT_WRITE_SAMPLES, so what is checked here is exactly
// the text the goldens pin. Then:
//   - every file is checked against speedscope's file-format-schema.json
//     (from the speedscope package) and for what the schema cannot say
//     (frame indices in range, one weight per sample, endValue);
//   - JSON.parse reads the odd names back as we meant them;
//   - speedscope's app (the package's dist/release, served from a made-up
//     origin through page.route; any other request is aborted and counted)
//     opens the sample profile, in each of the three units, in Debian's
//     headless Chromium by its #profileURL= parameter: no page or console
//     errors, the profile's name in the toolbar, and in the sandwich view
//     (a DOM table; the flame charts are WebGL) a row for each frame we
//     wrote, and no other, with the totals we wrote as speedscope formats
//     them in our unit (so "3.03s" is 300 samples of 10101010 ns);
//   - the JSON report is checked against json-report.schema.json (our
//     schema of lib/output/json_report.hpp) and for its order and total.
// KEEP_SAMPLES=1 keeps the files and the screenshots (one per profile) and
// prints where.
// The checks that need speedscope's package or Chromium are skipped, with the
// reason printed, when node_modules or /usr/bin/chromium is missing;
// build/tests/unit_tests (or $BUILD/tests/unit_tests) must have been built.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {execFileSync} from 'node:child_process';
import {existsSync, mkdtempSync, readFileSync, rmSync} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {fileURLToPath} from 'node:url';

import {validate} from './json-schema.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const build = path.resolve(root, process.env.BUILD || 'build');
const unitTests = path.join(build, 'tests', 'unit_tests');
const app = path.join(here, 'node_modules', 'speedscope', 'dist', 'release');
const chromiumPath = '/usr/bin/chromium';
const origin = 'http://speedscope.invalid';

const haveModules = existsSync(path.join(here, 'node_modules', 'playwright-core')) &&
    existsSync(app);
const noModules = !haveModules && 'tests/browser/node_modules is missing (npm ci there)';
const noBrowser = noModules ||
    (!existsSync(chromiumPath) && `${chromiumPath} is missing (apt-get install chromium)`);
if (noBrowser) console.log(`# speedscope tests skipped: ${noBrowser}`);

let dir;
const read = (name) => readFileSync(path.join(dir, name), 'utf8');

before(() => {
  assert.ok(existsSync(unitTests), `${unitTests} is missing: make build/tests/unit_tests`);
  dir = mkdtempSync(path.join(os.tmpdir(), 'tracekit-speedscope-'));
  execFileSync(unitTests, ['--gtest_filter=OutputSpeedscopeTest.*:OutputJsonReportTest.*'], {
    env: {...process.env, TRACEKIT_WRITE_SAMPLES: dir},
    stdio: ['ignore', 'ignore', 'inherit'],
  });
});

after(() => {
  if (!dir) return;
  if (process.env.KEEP_SAMPLES) console.log(`# files and screenshots kept in ${dir}`);
  else rmSync(dir, {recursive: true, force: true});
});

const speedscopeFiles = ['sample.speedscope.json', 'sample-offcpu.speedscope.json',
                         'sample-stackcount.speedscope.json', 'odd.speedscope.json'];

test('our speedscope files match speedscope\'s file format schema', {skip: noModules}, () => {
  const schema = JSON.parse(readFileSync(path.join(app, 'file-format-schema.json'), 'utf8'));
  for (const name of speedscopeFiles) {
    const file = JSON.parse(read(name));
    assert.deepEqual(validate(schema, file), [], name);
    const frames = file.shared.frames.length;
    for (const p of file.profiles) {
      assert.equal(p.samples.length, p.weights.length, `${name}: a weight per sample`);
      for (const s of p.samples)
        for (const i of s)
          assert.ok(Number.isInteger(i) && i >= 0 && i < frames, `${name}: frame ${i}`);
      const sum = p.weights.reduce((a, b) => a + b, 0);
      assert.equal(p.endValue - p.startValue, sum, `${name}: endValue`);
      for (const w of p.weights)
        assert.ok(Number.isSafeInteger(w) && w >= 0, `${name}: weight ${w}`);
    }
  }
});

// JSON.parse reads our escapes back to the strings we meant: control
// characters as they were (frame names in speedscope files print them '?',
// as the folded output does), bytes that are not UTF-8 as U+FFFD.
test('odd names read back as written', () => {
  const file = JSON.parse(read('odd.speedscope.json'));
  assert.equal(file.name, 'stackcount -P\n"x"');
  assert.deepEqual(file.shared.frames, [
    {name: 'tab?here'},
    {name: '[unknown]', file: '/opt/x\u0001y'},
    {name: 'caf\uFFFD'},
    {name: '\u65E5'},
    {name: 'a?b', file: '[kernel.kallsyms]'},
  ]);
  const report = JSON.parse(read('odd.json'));
  assert.equal(report.command, 'stackcount -P\n"x"');
  assert.equal(report.host, 'h\uFFFDst');
  assert.deepEqual(report.stacks.map((s) => s.comm), ['tab\there', '\u65E5']);
  assert.deepEqual(report.stacks[0].user.frames.map((f) => [f.name, f.file]),
                   [['caf\uFFFD', null], [null, '/opt/x\u0001y']]);
  assert.equal(report.stacks[1].kernel.frames[0].name, 'a\u0001b');
});

test('our JSON report matches json-report.schema.json', () => {
  const schema = JSON.parse(readFileSync(path.join(here, 'json-report.schema.json'), 'utf8'));
  for (const name of ['sample.json', 'odd.json']) {
    const report = JSON.parse(read(name));
    assert.deepEqual(validate(schema, report), [], name);
    assert.equal(report.total_value, report.stacks.reduce((a, s) => a + s.value, 0), name);
    const values = report.stacks.map((s) => s.value);
    assert.deepEqual(values, [...values].sort((a, b) => b - a), `${name}: largest first`);
  }
});

// Opens file (one of dir's) in speedscope's app by #profileURL=, waits for
// the profile's name in the toolbar, switches to the sandwich view and reads
// its table: {name: [total, self]} as speedscope formats them.
async function openInSpeedscope(browser, file) {
  const body = read(file);
  const page = await browser.newPage({viewport: {width: 1280, height: 800}});
  const problems = [];
  const blocked = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console error: ${m.text()}`);
  });
  await page.route('**/*', async (route) => {
    const url = new URL(route.request().url());
    if (url.origin !== origin) {
      blocked.push(url.href);
      return route.abort();
    }
    if (url.pathname === `/profiles/${file}`)
      return route.fulfill({status: 200, contentType: 'application/json', body});
    const local = path.join(app, path.basename(url.pathname));
    if (url.pathname === `/${path.basename(url.pathname)}` && existsSync(local))
      return route.fulfill({status: 200, path: local});
    return route.fulfill({status: 404, body: 'not found'});
  });
  const profileURL = `${origin}/profiles/${file}`;
  await page.goto(`${origin}/index.html#profileURL=${encodeURIComponent(profileURL)}`);
  const title = JSON.parse(body).profiles[0].name;
  // The toolbar holds the name as a text node between its buttons: a line of
  // the page's text.
  await page.waitForFunction((t) => document.body.innerText.split('\n').includes(t), title,
                             {timeout: 30000});
  await page.getByText('Sandwich').first().click();
  await page.getByText('Symbol Name', {exact: true}).waitFor({timeout: 30000});
  await page.screenshot({path: path.join(dir, `${file}.png`)});
  // innerText lays the table out as "TOTAL\n\tSELF\n\tNAME" per row.
  const text = await page.locator('body').innerText();
  const header = 'Total\tSelf\tSymbol Name\n';
  assert.ok(text.includes(header), text);
  const table = text.slice(text.indexOf(header) + header.length).split('\n');
  const rows = {};
  for (let i = 0; i + 2 < table.length; i += 3)
    rows[table[i + 2].replace(/^\t/, '')] = [table[i], table[i + 1].replace(/^\t/, '')];
  await page.close();
  return {rows, problems, blocked};
}

// What speedscope shows for the sample report in each unit: the values we
// wrote, formatted by speedscope from the unit we named.
const views = [
  {file: 'sample.speedscope.json', rows: {
    func_b: ['3.03s (70%)', '3.03s (70%)'],
    func_a: ['1.21s (28%)', '1.21s (28%)'],
    cpuratio: ['4.31s (>99%)', '0.00ns (<0.01%)'],
    '__clear_user': ['70.71ms (1.6%)', '70.71ms (1.6%)'],
    'kworker/0:1': ['30.30ms (0.70%)', '0.00ns (<0.01%)'],
    'a<b>&"c"': ['10.10ms (0.23%)', '0.00ns (<0.01%)'],
    'x;y': ['10.10ms (0.23%)', '0.00ns (<0.01%)'],
    'ns::f<int>(int, char const*)': ['10.10ms (0.23%)', '10.10ms (0.23%)'],
    '[Missed User Stack]': ['10.10ms (0.23%)', '0.00ns (<0.01%)'],
    '[unknown]': ['30.30ms (0.70%)', '30.30ms (0.70%)'],
    '-': ['70.71ms (1.6%)', '0.00ns (<0.01%)'],
  }},
  {file: 'sample-offcpu.speedscope.json', rows: {
    func_b: ['300.00µs (70%)', '300.00µs (70%)'],
    cpuratio: ['427.00µs (>99%)', '0.00ns (<0.01%)'],
  }},
  {file: 'sample-stackcount.speedscope.json', rows: {
    func_b: ['300 (70%)', '300 (70%)'],
    cpuratio: ['427 (>99%)', '0 (<0.01%)'],
  }},
];

test('speedscope\'s app opens our profiles', {skip: noBrowser, timeout: 120000}, async () => {
  const {chromium} = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
           '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    for (const view of views) {
      const {rows, problems, blocked} = await openInSpeedscope(browser, view.file);
      assert.deepEqual(problems, [], view.file);
      assert.deepEqual(blocked, [], view.file);
      // A row for every frame we wrote, and no other.
      const frames = JSON.parse(read(view.file)).shared.frames.map((f) => f.name);
      assert.deepEqual(Object.keys(rows).sort(), [...new Set(frames)].sort(), view.file);
      for (const [name, want] of Object.entries(view.rows))
        assert.deepEqual(rows[name], want, `${view.file}: ${name}`);
    }
  } finally {
    await browser.close();
  }
});
