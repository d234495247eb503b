// Pure: a session's stream-json transcript as a conversation a person reads: the assistant's
// text, each tool call and its result shortened, retries and rate limits, and the result. All of
// it is the session's text: each display line is escaped for the terminal (logs/terminal-text.ts).
import { money } from '../core/money.js';
import { terminalText } from '../logs/terminal-text.js';
import { counted } from '../core/words.js';

// turns: the ledger's count of the session's model turns, when it is settled (show, the page); the
// result line gives it, and the CLI's own num_turns beside it only where that differs.
export type ViewOptions = { textMax?: number; toolMax?: number; turns?: number };

const oneLine = (t: string) => t.replace(/\s+/g, ' ').trim();
const cut = (t: string, max: number) => (t.length > max ? `${t.slice(0, max - 1)}…` : t);

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((c) => (c?.type === 'text' ? String(c.text ?? '') : c?.type ? `[${c.type}]` : '')).join(' ');
  return '';
}

// One transcript line as zero or more display lines, safe to print (a block: text keeps its lines).
export function viewLine(line: string, o: ViewOptions = {}): string[] {
  return displayLines(line, o).map((l) => terminalText(l, { block: true }));
}

function displayLines(line: string, o: ViewOptions): string[] {
  const textMax = o.textMax ?? 2000;
  const toolMax = o.toolMax ?? 160;
  let m: any;
  try {
    m = JSON.parse(line);
  } catch {
    return line.trim() ? [`? ${cut(oneLine(line), toolMax)}`] : [];
  }
  if (!m || typeof m !== 'object') return [];
  switch (m.type) {
    case 'system':
      if (m.subtype === 'init') return [`── started: model ${m.model ?? '?'}, ${Array.isArray(m.tools) ? m.tools.length : 0} tools, ${Array.isArray(m.mcp_servers) ? m.mcp_servers.length : 0} MCP servers`];
      if (m.subtype === 'api_retry') return [`… API retry ${m.attempt}/${m.max_retries}${m.error_status ? ` (${m.error_status} ${m.error ?? ''})`.trimEnd() : ''}`];
      return [];
    case 'rate_limit_event': {
      const i = m.rate_limit_info ?? {};
      if (i.status !== 'rejected') return [];
      return [`… rate limited${typeof i.resetsAt === 'number' ? ` until ${new Date(i.resetsAt * 1000).toISOString()}` : ''}`];
    }
    case 'assistant': {
      const out: string[] = [];
      // The CLI's own words where no call was answered ("API Error: 502 …"): no model turn.
      const who = m.message?.model === '<synthetic>' ? 'the CLI (no model answer)' : 'assistant';
      for (const b of Array.isArray(m.message?.content) ? m.message.content : []) {
        if (b?.type === 'text' && String(b.text ?? '').trim()) out.push(`${who}: ${cut(String(b.text).trim(), textMax)}`);
        if (b?.type === 'tool_use') out.push(`  → ${b.name} ${cut(oneLine(JSON.stringify(b.input ?? {})), toolMax)}`);
      }
      return out;
    }
    case 'user': {
      const out: string[] = [];
      for (const b of Array.isArray(m.message?.content) ? m.message.content : []) {
        if (b?.type === 'tool_result') out.push(`  ${b.is_error ? '✗' : '←'} ${cut(oneLine(resultText(b.content)), toolMax) || '(empty)'}`);
      }
      return out;
    }
    case 'result': {
      const how = m.is_error ? `error${m.api_error_status ? ` ${m.api_error_status}` : ''}` : m.subtype === 'success' ? 'ok' : m.subtype;
      const cost = typeof m.total_cost_usd === 'number' ? `, ${money(m.total_cost_usd)}` : '';
      const cli = typeof m.num_turns === 'number' ? m.num_turns : null;
      const turns = o.turns === undefined
        ? (cli === null ? '? turns' : `${counted(cli, 'turn')} by the CLI's count`)
        : `${counted(o.turns, 'turn')}${cli !== null && cli !== o.turns ? ` (the CLI counted ${cli})` : ''}`;
      const head = `── result: ${how}${cost}, ${turns}`;
      return m.result ? [head, cut(String(m.result).trim(), textMax)] : [head];
    }
    default:
      return [];
  }
}

// The whole transcript file as `show --transcript` prints it.
export function renderTranscript(text: string, o: ViewOptions = {}): string {
  return text.split('\n').flatMap((l) => viewLine(l, o)).join('\n');
}
