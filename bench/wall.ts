// The wall's parts, each costed apart on a whole `nightshift run` (walled, the real CLI against the
// imitation API, a session that makes one Bash call): the same run with all of them, without the
// seccomp filter, without the shell prefix's Landlock domain (both through the test-only fixture
// that builds the session so), and without the settings flags (`claude.project_settings: true`
// drops --setting-sources user --strict-mcp-config). Interleaved in one run, medians, each as a
// delta and a ratio to the full wall. Plus the prefix's own cost per Bash command, on its own.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startFakeApi } from '../test/fake-api.js';
import { BWRAP, claudeTestEnv, configYaml, FIXTURES, shareWithSession } from '../test/helpers.js';
import { findPerl } from '../sessions/run/reaper.js';
import { compiledPrefix, writeShellPrefix } from '../sessions/wall/landlock.js';
import { median, rotatedMedians } from './timing.js';

function timedNode(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    c.stdout.on('data', (d) => (out += d));
    c.stderr.on('data', (d) => (err += d));
    c.on('close', (code) => {
      const ms = performance.now() - t0;
      const rec = (() => {
        try {
          return JSON.parse(out.trim().split('\n').at(-1) ?? 'null');
        } catch {
          return null;
        }
      })();
      const outcome = rec?.session?.outcome ?? rec?.outcome;
      if (code !== 0 || outcome !== 'ok') reject(new Error(`${args.slice(0, 3).join(' ')} exited ${code}, outcome ${outcome}:\n${err.slice(-1500)}`));
      else resolve(ms);
    });
  });
}

export async function wallBench(runs = 8) {
  if (!BWRAP) {
    console.log('wall parts on nightshift run: skipped (bwrap cannot make a sandbox here)');
    return null;
  }
  const api = await startFakeApi();
  const dir = fs.mkdtempSync(path.join('/var/tmp', 'nightshift-bench-wall-'));
  try {
    // The session user passes through (never lists) the bench folder to the vault.
    fs.chmodSync(dir, 0o711);
    const site = (name: string, projectSettings: boolean) => {
      const d = path.join(dir, name);
      fs.mkdirSync(path.join(d, 'vault'), { recursive: true });
      fs.mkdirSync(path.join(d, 'prompts'));
      fs.chmodSync(d, 0o711);
      shareWithSession(path.join(d, 'vault'));
      const yaml = configYaml({ top: `sandbox: bwrap\nhooks:\n  enabled: false\n`, budget: { max_sessions_per_day: 1000 }, claude: { project_settings: projectSettings } });
      fs.writeFileSync(path.join(d, 'nightshift.yaml'), yaml);
      fs.writeFileSync(path.join(d, 'prompts', 'bench.md'), '---\nallowed_tools: ["Bash"]\n---\nSCENARIO=tool\n');
      return { dir: d, config: path.join(d, 'nightshift.yaml'), env: claudeTestEnv(d, api.url) };
    };
    const full = site('full', false);
    const flagless = site('flagless', true);
    const fixture = path.join(FIXTURES, 'run-walled-without.mjs');
    const bin = path.join(import.meta.dirname, '..', 'cli', 'bin.js');
    // `full_again`: the same full wall twice in each round, the noise floor the deltas stand against.
    const variants: Array<[string, () => Promise<number>]> = [
      ['full', () => timedNode([bin, 'run', 'bench', '--json'], full.env, full.dir)],
      ['full_again', () => timedNode([bin, 'run', 'bench', '--json'], full.env, full.dir)],
      ['no_seccomp', () => timedNode([fixture, full.config, 'bench', 'seccomp'], full.env, full.dir)],
      ['no_domain', () => timedNode([fixture, full.config, 'bench', 'domain'], full.env, full.dir)],
      ['no_settings_flags', () => timedNode([bin, 'run', 'bench', '--json'], flagless.env, flagless.dir)],
    ];
    const m = await rotatedMedians(variants, runs);
    const cost = (k: string) => ({ median_ms: Math.round(m[k]), wall_part_ms: Math.round(m.full - m[k]), ratio_full_to_without: +(m.full / m[k]).toFixed(3) });
    const out: Record<string, unknown> = { runs, full_median_ms: Math.round(m.full), noise_ms: Math.round(m.full - m.full_again), seccomp: cost('no_seccomp'), domain: cost('no_domain'), settings_flags: cost('no_settings_flags') };
    console.log(`wall parts on nightshift run (walled, 1 Bash call; median of ${runs}): full ${m.full.toFixed(0)} ms (again: ${(m.full - m.full_again).toFixed(0)} ms apart, the noise); `
      + ['seccomp', 'domain', 'settings_flags'].map((k) => `${k} ${(m.full - m[`no_${k}`]).toFixed(0)} ms (ratio ${(m.full / m[`no_${k}`]).toFixed(3)})`).join(', '));
    // The prefix per command: `bash -c true` against the prefix running it (compiled, where this
    // build made it, and the perl script), interleaved.
    const perl = findPerl();
    if (perl) {
      const compiled = compiledPrefix();
      const prefixes = [...(compiled ? [{ name: 'compiled', compiled }] : []), { name: 'perl', compiled: null }].map((p) => ({
        name: p.name,
        file: writeShellPrefix(fs.mkdtempSync(path.join(dir, `prefix-${p.name}-`)), perl, { compiled: p.compiled }),
      }));
      const t = (cmd: string, args: string[]) => {
        const t0 = performance.now();
        const r = spawnSync(cmd, args, { stdio: 'ignore' });
        if (r.status !== 0) throw new Error(`${cmd} exited ${r.status}`);
        return performance.now() - t0;
      };
      const bare: number[] = [];
      const walled = new Map(prefixes.map((p) => [p.name, [] as number[]]));
      for (let i = 0; i < 50; i++) {
        bare.push(t('/bin/bash', ['-c', 'true']));
        for (const p of prefixes) walled.get(p.name)!.push(t(p.file, ['true']));
      }
      const b = median(bare);
      const per: Record<string, unknown> = { bash_true_median_ms: +b.toFixed(2) };
      for (const [name, ts] of walled) {
        const w = median(ts);
        per[name] = { prefixed_median_ms: +w.toFixed(2), added_ms: +(w - b).toFixed(2) };
        console.log(`shell prefix (${name}) per Bash command: ${w.toFixed(1)} ms vs bash -c true ${b.toFixed(1)} ms (median of 50): +${(w - b).toFixed(1)} ms`);
      }
      out.prefix_per_command = per;
    }
    return out;
  } finally {
    await api.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
