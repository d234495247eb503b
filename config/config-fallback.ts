// The config as `doctor` and `alert` read it: they must work when the config is broken or missing
// (an alarm must not share the failure it reports). Every setting that validates on its own is
// kept, the rest fall back to the defaults, and what could not be read is returned as problems.
import fs from 'node:fs';
import { parseDocument } from 'yaml';
import { loadConfig, validateConfig } from './config.js';
import { ConfigSchema, type Config } from './schema.js';
import { ConfigError } from '../core/errors.js';

// `unreadable`: no setting could be read at all (no file, or not YAML): the defaults stand in for
// every path, so a check built on them would report what is not there.
export type LenientConfig = { config: Config; problems: string[]; exact: boolean; unreadable?: string | null };

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

// Pure: the largest part of `data` (whole top-level keys, else their single fields) the schema takes.
export function salvage(data: unknown): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  if (!isPlainObject(data)) return kept;
  const passes = (candidate: Record<string, unknown>) => ConfigSchema.safeParse(candidate).success;
  for (const [key, value] of Object.entries(data)) {
    if (passes({ ...kept, [key]: value })) {
      kept[key] = value;
      continue;
    }
    if (!isPlainObject(value)) continue;
    const section: Record<string, unknown> = {};
    for (const [sub, v] of Object.entries(value)) {
      if (passes({ ...kept, [key]: { ...section, [sub]: v } })) section[sub] = v;
    }
    if (Object.keys(section).length) kept[key] = section;
  }
  return kept;
}

export function loadConfigLenient(file: string): LenientConfig {
  try {
    return { config: loadConfig(file), problems: [], exact: true };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    const problems = err.problems.map((p) => `${err.file}: ${p}`);
    let data: unknown = null;
    let unreadable: string | null = null;
    try {
      const doc = parseDocument(fs.readFileSync(file, 'utf8'));
      if (!doc.errors.length) data = doc.toJS();
      if (doc.errors.length || (data !== null && !isPlainObject(data))) unreadable = 'config unreadable';
    } catch (e) {
      unreadable = (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no config file' : 'config unreadable';
    }
    const kept = salvage(data);
    const PATHS = ['vault', 'state_dir', 'log_dir', 'agents_dir', 'discord', 'alerts'];
    const pathsOnly = Object.fromEntries(Object.entries(kept).filter(([k]) => PATHS.includes(k)));
    for (const attempt of [kept, pathsOnly, {}]) {
      const r = validateConfig(attempt, file);
      if (r.config) return { config: r.config, problems, exact: false, unreadable };
    }
    throw err;
  }
}
