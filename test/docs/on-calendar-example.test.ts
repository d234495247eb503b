// The docs' own `--on-calendar` examples work on a fresh `nightshift init` site (issue 35.8): each
// spec shown is given to `systemd install` (staged under --prefix) over the site init made. The
// example once was `06,18:00:00`, under which init's gardener rule (hours 10) can never fire.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { CLAUDE, nightshift, PATH_WITHOUT_CLAUDE, ROOT, tempDir } from '../helpers.js';
import { docPages } from './doc-links.js';

// Every `--on-calendar '<spec>'` in README.md and docs/*.md.
export function onCalendarExamples(root: string): Array<{ page: string; spec: string }> {
  return docPages(root).flatMap((page) => [...fs.readFileSync(path.join(root, page), 'utf8').matchAll(/--on-calendar '([^']+)'/g)].map((m) => ({ page, spec: m[1] })));
}

async function freshSite(t: any) {
  const dir = tempDir(t);
  // The CLI as `claude` on PATH, as `npm install -g @anthropic-ai/claude-code` leaves it.
  fs.mkdirSync(path.join(dir, 'bin'));
  fs.symlinkSync(CLAUDE, path.join(dir, 'bin', 'claude'));
  const env = { PATH: `${path.join(dir, 'bin')}:${PATH_WITHOUT_CLAUDE}`, NIGHTSHIFT_CONFIG: path.join(dir, 'site', 'nightshift.yaml') };
  const init = await nightshift(['init', 'site'], env, dir);
  assert.equal(init.code, 0, init.stderr);
  const install = (spec: string) => nightshift(['systemd', 'install', '--prefix', path.join(dir, 'units'), '--user', 'root', '--on-calendar', spec], env, dir);
  return { dir, install };
}

test('every --on-calendar example in the README and docs installs on a fresh init site', async (t) => {
  const examples = onCalendarExamples(ROOT);
  assert.ok(examples.length >= 1, 'the docs show an --on-calendar example');
  const { dir, install } = await freshSite(t);
  for (const { page, spec } of examples) {
    const ran = await install(spec);
    assert.equal(ran.code, 0, `${page}: --on-calendar '${spec}': ${ran.stderr}`);
    assert.ok(fs.readFileSync(path.join(dir, 'units', 'nightshift.timer'), 'utf8').includes(`OnCalendar=${spec}\n`), `${page}: ${spec} written`);
  }
});

test('control: the old example, under which init\'s rule never fires, is refused on the same site', async (t) => {
  const { dir, install } = await freshSite(t);
  const ran = await install('*-*-* 06,18:00:00');
  assert.equal(ran.code, 64, ran.stderr);
  assert.match(ran.stderr, /rule \[0\] gardener \(hours 10\) can never fire/);
  assert.ok(!fs.existsSync(path.join(dir, 'units', 'nightshift.timer')));
});
