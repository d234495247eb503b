// The config file's YAML, parsed with the lines each setting is on (for problems that name them).
import { LineCounter, parseDocument, type Document } from 'yaml';
import { ConfigError } from '../core/errors.js';
import { withLines, yamlMessage } from './issues.js';
import { unknownDispatchAgents } from './rules.js';
import { agentNames } from './agent-names.js';
import type { Config } from './schema.js';
import { readConfigText } from './config-path.js';
import { show } from './show.js';

export type ConfigDoc = { doc: Document; lines: LineCounter; data: Record<string, unknown> | null | undefined };

// Reads the file and parses its YAML; throws ConfigError for a file that cannot be read, is not
// YAML, or is not a mapping.
export function readConfigDoc(file: string, text = readConfigText(file)): ConfigDoc {
  const lines = new LineCounter();
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true, lineCounter: lines });
  if (doc.errors.length) {
    // The library's own message keeps its snippet of the line and the caret under the column.
    throw new ConfigError(file, doc.errors.map((e) => `YAML: ${yamlMessage(e.message)}`));
  }
  const data = doc.toJS();
  if (data !== null && data !== undefined && (typeof data !== 'object' || Array.isArray(data))) {
    throw new ConfigError(file, [`(top level): Expected a mapping of settings, got ${show(data)}`]);
  }
  return { doc, lines, data };
}

// Dispatch rules must name agents that exist in agents_dir now, valid config or not.
export function checkDispatchAgents(config: Config, { doc, lines }: Pick<ConfigDoc, 'doc' | 'lines'>, file: string): void {
  const unknown = unknownDispatchAgents(config, agentNames(config.agents_dir));
  if (unknown.length) throw new ConfigError(file, withLines(unknown, doc, lines, file));
}
