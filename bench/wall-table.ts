// Issue 40's table: each figure against its baseline of the same run, and its place in README.md
// (between the markers below), where `npm run bench -- --readme` writes the rows a run measured.
export type Row = { figure: string; goal: string; value: string; met: boolean; measured: string };

export const README_START = '<!-- bench:wall-table -->';
export const README_END = '<!-- /bench:wall-table -->';
const HEAD = ['| figure | goal | measured | | when |', '|---|---|---|---|---|'];
// The figures, in the table's order.
const FIGURES = {
  perTool: 'added to each tool call (`nightshift run` minus the bare CLI, 60 Bash calls)',
  run: '`nightshift run` / bare CLI, one scripted session',
  tick: '`tick` with nothing due / `node -e 0`',
  status: '`status` / `node -e 0`',
  query: 'memory query p50 over MCP at 10k',
} as const;

// Pure: the rows a bench report holds (only the figures that run measured), in the table's order.
export function wallRows(r: Record<string, any>, measured = ''): Row[] {
  const rows: Row[] = [];
  const row = (figure: string, goal: string, value: string, met: boolean) => rows.push({ figure, goal, value, met, measured });
  if (r.per_tool) row(FIGURES.perTool, '≤ 10 ms', `${r.per_tool.added_per_call_ms} ms (bare ${r.per_tool.bare_per_call_ms} ms a call; median gap between calls +${r.per_tool.added_gap_ms} ms)`, r.per_tool.added_per_call_ms <= 10);
  if (r.supervisor) row(FIGURES.run, '≤ 1.3', `${r.supervisor.ratio} (+${r.supervisor.added_ms} ms)`, r.supervisor.ratio <= 1.3);
  if (r.tick) row(FIGURES.tick, '≤ 2.5', `${r.tick.ratio} (${r.tick.median_ms} ms vs ${r.tick.node_floor_median_ms} ms)`, r.tick.ratio <= 2.5);
  if (r.status) row(FIGURES.status, '≤ 2.5', `${r.status.ratio} (${r.status.median_ms} ms)`, r.status.ratio <= 2.5);
  const t = r.memory_mcp?.targets;
  if (t?.query_p50_at_10k_ms) {
    const ratio = t.query_p50_at_10k_ratio_to_reference;
    row(FIGURES.query, '≤ 5 ms and ≤ 0.2× the reference', `${t.query_p50_at_10k_ms.value} ms${ratio ? ` (${ratio.value}×)` : ''}`, t.query_p50_at_10k_ms.met && (!ratio || ratio.met));
  }
  return rows;
}

const line = (r: Row) => `| ${r.figure} | ${r.goal} | ${r.value} | ${r.met ? 'met' : 'missed'} | ${r.measured} |`;

// Pure: the table as the terminal shows it.
export function renderTable(rows: Row[]): string {
  return [...HEAD, ...rows.map(line)].join('\n');
}

// Pure: README.md with `rows` (stamped `measured`) in place of the rows of the same figure; the
// others kept, in the table's order. A README without the markers is refused, never guessed at.
export function mergeReadme(readme: string, rows: Row[], measured: string): string {
  const a = readme.indexOf(README_START);
  const b = readme.indexOf(README_END);
  if (a < 0 || b < a) throw new Error(`README.md has no ${README_START} … ${README_END} block for the table`);
  const old = readme.slice(a + README_START.length, b).split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| figure'));
  const figureOf = (l: string) => l.split(' | ')[0].slice(2);
  const fresh = new Map(rows.map((r) => [r.figure, line({ ...r, measured })]));
  const order: string[] = Object.values(FIGURES);
  const kept = new Map(old.map((l) => [figureOf(l), l]));
  const body = order.map((f) => fresh.get(f) ?? kept.get(f)).filter((l): l is string => !!l);
  return `${readme.slice(0, a + README_START.length)}\n${[...HEAD, ...body].join('\n')}\n${readme.slice(b)}`;
}
