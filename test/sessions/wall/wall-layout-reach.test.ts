// The wall's view as bwrap, started as the session user, can bind it: a node on PATH behind a 0700
// folder (a clone's own Node in root's home, node_modules/.bin/node) stays out of sight, or bwrap
// fails the session ("Can't find source path …: Permission denied"); one others can reach is in it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { validateConfig } from '../../../config/config.js';
import { wallLayout } from '../../../sessions/wall/wall-layout.js';

const user = { name: 'nightshift-session', uid: 64999, gid: 64999 };

function nodeIn(root: string): string {
  const bin = path.join(root, 'node', 'bin');
  fs.mkdirSync(bin, { recursive: true });
  fs.copyFileSync('/bin/true', path.join(bin, 'node'));
  fs.chmodSync(path.join(bin, 'node'), 0o755);
  return bin;
}

test('a node on PATH behind a folder the session user cannot pass is left out of the view; one it can reach is in it', (t) => {
  const home = fs.mkdtempSync('/srv/nightshift-home-');
  t.after(() => fs.rmSync(home, { recursive: true, force: true }));
  fs.chmodSync(home, 0o700);
  const bin = nodeIn(home);
  const config = validateConfig({}, path.join(home, 'nightshift.yaml')).config!;
  const layout = (dir: string) => wallLayout({
    config, env: { PATH: `${dir}:/usr/bin` }, dir: path.join(home, 'sess'), home: path.join(home, 'h'), cli: '/usr/bin/true', operatorHome: null,
    log: { warn: () => {} }, walledAs: user, pinSettings: false, hideSockets: null,
  });
  const root = path.join(home, 'node');
  assert.ok(!layout(bin).view!.includes(root), 'out of reach: left out');
  assert.ok(layout(bin).view!.includes('/usr'));
  // The control: the same folder opened to others (o+x) is in the view.
  fs.chmodSync(home, 0o701);
  assert.ok(layout(bin).view!.includes(root), 'in reach: in the view');
});
