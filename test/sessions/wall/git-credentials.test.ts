// The session sees the vault's .git/config without push credentials (issue 26, point 3).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { withoutCredentials } from '../../../sessions/wall/git-credentials.js';

test('user info in a URL and every extraheader are taken out; the rest of the config stays', () => {
  const text = [
    '[core]', '\tbare = false',
    '[remote "origin"]', '\turl = https://deploy:ghp_SECRET123@github.com/o/vault.git', '\tpushurl = ssh://git@host/x', '\tfetch = +refs/heads/*:refs/remotes/origin/*',
    '[http "https://github.com/"]', '\textraHeader = AUTHORIZATION: bearer SECRET456',
  ].join('\n');
  const r = withoutCredentials(text);
  assert.doesNotMatch(r.text, /SECRET|deploy:|git@/);
  assert.match(r.text, /url = https:\/\/github\.com\/o\/vault\.git/);
  assert.match(r.text, /fetch = \+refs/);
  assert.deepEqual(r.found.sort(), ['a URL with a user and password or token', 'http.extraheader']);
  // Control: a config without credentials is returned as it was.
  const plain = '[remote "origin"]\n\turl = /srv/remote.git\n';
  assert.deepEqual(withoutCredentials(plain), { text: plain, found: [] });
});
