// Where the config file is, and its text: the first step of every command's config.
import fs from 'node:fs';
import path from 'node:path';
import { CONFIG_DEFAULT_FILE, CONFIG_ENV } from './defaults.js';
import { ConfigError } from '../core/errors.js';

// Where the config comes from: --config, else $NIGHTSHIFT_CONFIG, else ./nightshift.yaml.
export function configPath(flag: string | undefined, env: NodeJS.ProcessEnv, cwd: string): string {
  return path.resolve(cwd, flag ?? env[CONFIG_ENV] ?? CONFIG_DEFAULT_FILE);
}

export function readConfigText(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'file not found (pass --config PATH or set NIGHTSHIFT_CONFIG)' : `cannot read: ${code ?? String(err)}`;
    throw new ConfigError(file, [why], { cause: err });
  }
}
