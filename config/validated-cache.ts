// What the schemas made of a file, kept beside the ledger (state_dir/validated.json) and keyed by
// the file's exact text: a timer's tick over an unchanged config and agents then never loads the
// schemas (zod's start, the config's construction and both validations: ~15 ms of an ~80 ms
// tick). Another build of nightshift, another node, or one changed byte misses and validates in
// full, as before. Only the bundle has a build id (deploy/bundle.mjs); plain modules always
// validate. The file is the supervisor's, as the ledger is: sessions never see state_dir.
import fs from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { writeWhole } from '../core/file-access.js';

declare const __NIGHTSHIFT_BUILD__: string | undefined;

export const VALIDATED_FILE = 'validated.json';
// Agents come and go; a file keeps the last ones validated, not every text ever seen.
const MAX_ENTRIES = 256;

export function bundleBuild(): string | null {
  return typeof __NIGHTSHIFT_BUILD__ === 'string' ? __NIGHTSHIFT_BUILD__ : null;
}

export type ValidatedCache = {
  // What `text` gave when it was validated under `key`, or undefined.
  get(key: string, text: string): unknown;
  put(key: string, text: string, value: unknown): void;
};

type Entry = { text: string; value: unknown };

// null without a build id: nothing is kept. The file is read at the first get, once per cache.
export function validatedCache(stateDir: string, build: string | null = bundleBuild()): ValidatedCache | null {
  if (!build) return null;
  const file = path.join(stateDir, VALIDATED_FILE);
  let entries: Record<string, Entry> | null = null;
  const all = (): Record<string, Entry> => {
    if (entries) return entries;
    entries = {};
    try {
      const j = JSON.parse(fs.readFileSync(file, 'utf8'));
      if (j?.build === build && j.node === process.version && j.entries && typeof j.entries === 'object' && !Array.isArray(j.entries)) entries = j.entries as Record<string, Entry>;
    } catch {
      // none yet, unreadable or not ours: everything validates in full, and the next put replaces it
    }
    return entries;
  };
  return {
    get(key, text) {
      const e = Object.hasOwn(all(), key) ? all()[key] : undefined;
      return e && typeof e === 'object' && e.text === text ? e.value : undefined;
    },
    put(key, text, value) {
      // Only what JSON gives back unchanged, else a hit would hand back something else.
      let copy: unknown;
      try {
        copy = JSON.parse(JSON.stringify(value));
      } catch {
        return;
      }
      if (!isDeepStrictEqual(copy, value)) return;
      const es = all();
      delete es[key];
      es[key] = { text, value: copy };
      const keys = Object.keys(es);
      for (const old of keys.slice(0, Math.max(0, keys.length - MAX_ENTRIES))) delete es[old];
      // A state_dir not made yet, or one this user may not write, keeps nothing: the next command
      // validates in full.
      writeWhole(file, JSON.stringify({ build, node: process.version, entries: es }), 0o600);
    },
  };
}
