// The guardrail as a table: dangerous calls are all blocked (zero false allows), harmless ones
// allowed; any false block is reported by name.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { guard, lex, loopPreBlock } from '../../../sessions/hooks/guardrail.js';
import { toolKey } from '../../../sessions/stream/loop-detector.js';

const roots = { vault: '/srv/vault', extraDirs: ['/srv/shared'], home: '/home/ns' };
const bash = (command: string) => ({ tool_name: 'Bash', tool_input: { command }, cwd: '/srv/vault' });

const DANGEROUS: Array<[string, ReturnType<typeof bash> | { tool_name: string; tool_input: unknown; cwd?: string }]> = [
  ['rm -rf /', bash('rm -rf /')],
  ['rm -rf /*', bash('rm -rf /*')],
  ['rm -rf ~', bash('rm -rf ~')],
  ['rm -rf ~/', bash('rm -rf ~/')],
  ['rm -rf ~/notes', bash('rm -rf ~/notes')],
  ['rm -fr ~other', bash('rm -fr ~other')],
  ['rm -rf $HOME', bash('rm -rf $HOME')],
  ['rm -rf "$HOME"', bash('rm -rf "$HOME"')],
  ['rm -rf ${HOME}/x', bash('rm -rf ${HOME}/x')],
  ['rm -rf ..', bash('rm -rf ..')],
  ['rm -rf ../', bash('rm -rf ../')],
  ['rm -rf notes/../..', bash('rm -rf notes/../..')],
  ['rm -r -f /etc', bash('rm -r -f /etc')],
  ['rm --recursive --force /', bash('rm --recursive --force /')],
  ['rm -Rf /usr', bash('rm -Rf /usr')],
  ['rm -rf .', bash('rm -rf .')],
  ['rm -rf .*', bash('rm -rf .*')],
  ['rm -rf /srv/vault', bash('rm -rf /srv/vault')],
  ['rm -rf -- /', bash('rm -rf -- /')],
  ['sudo rm -rf /', bash('sudo rm -rf /')],
  ['/bin/rm -rf ~', bash('/bin/rm -rf ~')],
  ['\\rm -rf ~', bash('\\rm -rf ~')],
  ['env FOO=1 rm -rf ~', bash('env FOO=1 rm -rf ~')],
  ['chained after echo', bash('echo ok && rm -rf ~/x')],
  ['after a semicolon', bash('ls; rm -rf /')],
  ['in a pipe with xargs', bash('echo / | xargs rm -rf')],
  ['bash -c', bash('bash -c "rm -rf ~"')],
  ['sh -c nested quotes', bash(`sh -c 'rm -rf "$HOME"'`)],
  ['eval', bash('eval rm -rf /')],
  ['in a substitution', bash('echo $(rm -rf ~)')],
  ['in backticks', bash('echo `rm -rf /`')],
  ['cd / then rm', bash('cd / && rm -rf etc')],
  ['cd .. then rm', bash('cd .. && rm -rf vault')],
  ['cd to a variable then rm', bash('cd "$X" && rm -rf build')],
  ['find / -delete', bash('find / -name x -delete')],
  ['find ~ -exec rm', bash('find ~ -type f -exec rm {} \\;')],
  ['redirect into /etc', bash('echo x > /etc/hosts')],
  ['append to ~/.bashrc', bash('echo evil >> ~/.bashrc')],
  ['tee outside', bash('echo x | tee /tmp/out.txt')],
  ['cp to outside', bash('cp notes.md /root/')],
  ['mv from outside', bash('mv ../other/file.md .')],
  ['touch outside', bash('touch /var/tmp/flag')],
  ['chmod -R /', bash('chmod -R 777 /')],
  ['dd of=/dev/sda', bash('dd if=/dev/zero of=/dev/sda')],
  ['sed -i outside', bash("sed -i 's/a/b/' /etc/passwd")],
  ['ln -s to /etc', bash('ln -s /etc/passwd passwd-link')],
  ['git -C outside', bash('git -C /srv/other reset --hard')],
  ['write into .git', bash('echo x > .git/config')],
  ['rm -rf /* inside if/then', bash('if true; then rm -rf /*; fi')],
  ['rm -rf .. inside a for loop', bash('for x in 1; do rm -rf ..; done')],
  ['! rm -rf ~', bash('! rm -rf ~')],
  ['time -p rm -rf /*', bash('time -p rm -rf /*')],
  ['env -i rm -rf /*', bash('env -i rm -rf /*')],
  ['env -S with a command line', bash("env -S 'rm -rf /'")],
  ['sudo -E rm -rf /*', bash('sudo -E rm -rf /*')],
  ['sudo -n rm -rf /*', bash('sudo -n rm -rf /*')],
  ['command -p rm -rf /*', bash('command -p rm -rf /*')],
  ['exec -a x rm -rf /*', bash('exec -a x rm -rf /*')],
  ['rm -rf {..,x} (brace expansion)', bash('rm -rf {..,x}')],
  ['rm -rf {/home/op,x}', bash('rm -rf {/home/op,x}')],
  ['a command name from a variable', bash('rm$IFS-rf$IFS~')],
  ['cp -t outside', bash('cp -t /etc/cron.d evil')],
  ['git config core.hooksPath', bash('git config core.hooksPath .githooks')],
  ['git config --global', bash('git config --global core.hooksPath /tmp/h')],
  ['git --work-tree outside', bash('git --work-tree=/etc checkout .')],
  ['git --git-dir outside', bash('git --git-dir=/etc/x init')],
  ['git -C attached', bash('git -C/etc init')],
  ['curl -o outside', bash('curl -sSL https://example.org/x -o /etc/cron.d/x')],
  ['wget -O outside', bash('wget -qO ~/.profile https://example.org/x')],
  ['tar -C outside', bash('tar -xzf pkg.tgz -C /usr/local')],
  ['unzip -d outside', bash('unzip a.zip -d /opt')],
  ['Write outside', { tool_name: 'Write', tool_input: { file_path: '/tmp/outside.txt', content: 'x' }, cwd: '/srv/vault' }],
  ['Write with ~', { tool_name: 'Write', tool_input: { file_path: '~/x.txt', content: 'x' }, cwd: '/srv/vault' }],
  ['Write relative escaping', { tool_name: 'Write', tool_input: { file_path: '../escape.md', content: 'x' }, cwd: '/srv/vault' }],
  ['Edit outside', { tool_name: 'Edit', tool_input: { file_path: '/etc/hosts', old_string: 'a', new_string: 'b' }, cwd: '/srv/vault' }],
  ['MultiEdit in .git', { tool_name: 'MultiEdit', tool_input: { file_path: '/srv/vault/.git/HEAD', edits: [] }, cwd: '/srv/vault' }],
  ['NotebookEdit outside', { tool_name: 'NotebookEdit', tool_input: { notebook_path: '/home/ns/n.ipynb', new_source: '' }, cwd: '/srv/vault' }],
  ['Write without a path', { tool_name: 'Write', tool_input: { content: 'x' }, cwd: '/srv/vault' }],
  ['Bash without a command', { tool_name: 'Bash', tool_input: {}, cwd: '/srv/vault' }],
];

const HARMLESS: Array<[string, ReturnType<typeof bash> | { tool_name: string; tool_input: unknown; cwd?: string }]> = [
  ['echo', bash('echo hello')],
  ['ls -la', bash('ls -la')],
  ['git status', bash('git status --porcelain')],
  ['git commit', bash('git add -A && git commit -m "notes"')],
  ['rm one file in the vault', bash('rm old.md')],
  ['rm -rf a vault folder', bash('rm -rf build/')],
  ['rm -rf a glob in the vault', bash('rm -rf drafts/*.tmp')],
  ['rm -rf * in the vault', bash('rm -rf *')],
  ['redirect into the vault', bash('echo x > notes/today.md')],
  ['2>/dev/null and 2>&1', bash('ls missing 2>/dev/null; ls 2>&1 | head')],
  ['&>/dev/null', bash('make &>/dev/null')],
  ['cat a file outside (a read)', bash('cat /etc/hostname')],
  ['grep outside (a read)', bash('grep -r TODO /usr/share/doc | head -5')],
  ['cp from outside into the vault', bash('cp /etc/hostname ./hostname.txt')],
  ['mkdir -p in the vault', bash('mkdir -p research/2026')],
  ['extra dir write', bash('echo x > /srv/shared/out.txt')],
  ['cd into the vault subdir then write', bash('cd notes && touch index.md')],
  ['sed -i in the vault', bash("sed -i 's/a/b/' notes/a.md")],
  ['find in the vault with -delete and a name', bash("find . -name '*.tmp' -delete")],
  ['a comment mentioning rm -rf /', bash('echo safe # rm -rf /')],
  ['quoted text mentioning rm -rf ~', bash('echo "do not rm -rf ~"')],
  ['tee in the vault', bash('date | tee -a journal.md')],
  ['Write in the vault', { tool_name: 'Write', tool_input: { file_path: '/srv/vault/notes/a.md', content: 'x' }, cwd: '/srv/vault' }],
  ['Write relative in the vault', { tool_name: 'Write', tool_input: { file_path: 'notes/b.md', content: 'x' }, cwd: '/srv/vault' }],
  ['Edit in an extra dir', { tool_name: 'Edit', tool_input: { file_path: '/srv/shared/x.md', old_string: 'a', new_string: 'b' }, cwd: '/srv/vault' }],
  ['Read outside', { tool_name: 'Read', tool_input: { file_path: '/etc/hosts' }, cwd: '/srv/vault' }],
  ['an MCP tool', { tool_name: 'mcp__nightshift_memory__observe', tool_input: { text: 'rm -rf ~' }, cwd: '/srv/vault' }],
  ['curl to stdout', bash('curl -sS https://example.org/api | head')],
  ['curl -o into the vault', bash('curl -sSL https://example.org/x -o research/x.html')],
  ['tar -C into the vault', bash('tar -xzf pkg.tgz -C vendor')],
  ['a loop over vault files', bash('for f in notes/*.md; do wc -l "$f"; done')],
  ['if/then with an echo', bash('if [ -f a.md ]; then echo yes; fi')],
  ['git log with a format', bash("git log -1 --format='%h %s'")],
  ['JSON in quotes', bash(`echo '{"a":1,"b":2}' > data.json`)],
];

describe('guardrail', () => {
  test(`blocks every one of ${DANGEROUS.length} dangerous calls and allows ${HARMLESS.length} harmless ones`, (t) => {
    const falseAllows = DANGEROUS.filter(([, c]) => guard(c, roots).allow).map(([n]) => n);
    const falseBlocks = HARMLESS.filter(([, c]) => !guard(c, roots).allow).map(([n, c]) => `${n}: ${(guard(c, roots) as { reason: string }).reason}`);
    t.diagnostic(`${DANGEROUS.length + HARMLESS.length} cases: ${falseAllows.length} false allows, ${falseBlocks.length} false blocks`);
    for (const b of falseBlocks) t.diagnostic(`false block: ${b}`);
    assert.ok(DANGEROUS.length + HARMLESS.length >= 40);
    assert.deepEqual(falseAllows, [], 'zero false allows');
    assert.deepEqual(falseBlocks, []);
  });

  test('a block says why, and names nightshift', () => {
    const v = guard(bash('rm -rf ~/x'), roots);
    assert.equal(v.allow, false);
    assert.match((v as { reason: string }).reason, /^blocked by nightshift: rm -r of "~\/x": a path with `~`/);
  });

  test('the lexer keeps quoted operators inside words and finds substitutions', () => {
    const cmds = lex(`echo "a; b" && cat <<EOF > out.txt\nx\nEOF`);
    assert.deepEqual(cmds[0].words.map((w) => w.text), ['echo', 'a; b']);
    assert.deepEqual(cmds[1].redirects.map((r) => r.target.text), ['EOF', 'out.txt']);
    assert.deepEqual(lex('echo $(rm -rf ~)')[0].subs, ['rm -rf ~']);
  });
});

describe('loop pre-block', () => {
  const limits = { maxRepeats: 5, window: 20, cycleRepeats: 3 };
  const call = (command: string) => ({ tool_name: 'Bash', tool_input: { command } });
  const key = (command: string) => toolKey('Bash', { command });

  test('blocks the repeat before the one the detector flags, and says "blocked: repeat"', () => {
    assert.equal(loopPreBlock([key('x'), key('x')], call('x'), limits).allow, true);
    const v = loopPreBlock([key('x'), key('x'), key('x')], call('x'), limits);
    assert.equal(v.allow, false);
    assert.match((v as { reason: string }).reason, /^blocked: repeat: you made this exact call .* 4 times/);
  });

  test('blocks the step of a cycle before the one the detector flags', () => {
    const h = [key('a'), key('b'), key('a'), key('b')];
    const v = loopPreBlock(h, call('a'), limits);
    assert.equal(v.allow, false);
    assert.match((v as { reason: string }).reason, /cycle of 2/);
    assert.equal(loopPreBlock([key('a'), key('b')], call('a'), limits).allow, true);
  });

  test('never blocks the same tool with different inputs', () => {
    const h: string[] = [];
    for (let i = 0; i < 40; i++) {
      assert.equal(loopPreBlock(h, call(`echo ${i}`), limits).allow, true);
      h.push(key(`echo ${i}`));
    }
  });
});

test('a symlink inside the vault that leads out does not carry a write out', async (t) => {
  const fs = await import('node:fs');
  const path = await import('node:path');
  const { tempDir } = await import('../../helpers.js');
  const vault = path.join(tempDir(t), 'vault');
  const outside = path.join(path.dirname(vault), 'elsewhere');
  fs.mkdirSync(vault);
  fs.mkdirSync(outside);
  fs.symlinkSync(outside, path.join(vault, 'link'));
  const r = { vault, extraDirs: [], home: '/home/ns' };
  const at = (tool_name: string, tool_input: unknown) => guard({ tool_name, tool_input, cwd: vault }, r);
  assert.equal(at('Write', { file_path: path.join(vault, 'link', 'x'), content: 'x' }).allow, false);
  assert.equal(at('MultiEdit', { file_path: 'link/x', edits: [] }).allow, false);
  assert.equal(at('Bash', { command: 'echo x > link/x' }).allow, false);
  assert.equal(at('Bash', { command: 'rm -rf link/*' }).allow, false);
  // The vault's own files, and a file that does not exist yet, are fine.
  assert.equal(at('Write', { file_path: path.join(vault, 'notes', 'new.md'), content: 'x' }).allow, true);
  assert.equal(at('Bash', { command: 'echo x > notes.md' }).allow, true);
});
