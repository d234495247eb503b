// `nightshift memory <command>`: the memory store from the command line (memory-cli.ts runs it).
import type { FullContext } from '../context.js';

export const help = `Usage: nightshift memory <command> [--json] [--config PATH]

The memory store at memory.db (default <state_dir>/memory.db). Every change is written to its
audit log with surface "cli" (or "import").

  observe TEXT [--source S] [--category C] [--tags a,b] [--speaker NAME] [--valid-from ISO]
        one observation through the prediction-error gate: merged into a close memory, a new
        memory linked to a related one, or a new memory. Source defaults to "cli", speaker to
        "operator"; --valid-from: since when it holds (default now). The operator's memories are
        shared: every agent's sessions see them.
        --json: {observation_id, memory_id, decision, prediction_error, linked_to}
  query TEXT [--limit N] [--explain] [--include-faded] [--as-of ISO] [--agent NAME]
        best matches first (default 10). --include-faded adds faded and superseded memories,
        labelled; --explain shows each score's parts. --as-of: what held then (superseded
        later counts as current, begun later never comes back). --agent: only what that agent's
        sessions see (its own and the shared memories; all under memory.scope: shared).
        --json: [{id, text, category, score, sources, faded, superseded}] (the MCP query
        tool's results; with --explain each also has explain: {lexical, vector, fused,
        activation, recency, salience})
  recall ID
        one memory with its sources and edges. --json: the full record
  stats
        counts by kind and category, the embedding model, and what the last dream did (read
        only). --json: the same as an object; last_dream: null|{at, duration_ms, observations,
        clusters, abstractions, superseded, contradictions, linked, faded, failed_phases} (a
        count is null when its phase failed)
  import FILE|-
        JSONL, one observation per line: {"text", "source", "created_at"?, "valid_from"?, "scope"?,
        "tags"?, "category"?, "salience"?} (other fields are ignored; scope: the agent whose it is,
        else shared). Goes through the same gate as
        observe, in order; lines with the same created_at one after another are linked as
        "follows".
        A bad line is reported on stderr as FILE:LINE: field: message and skipped; the good
        lines are kept. Progress on stderr when it is a terminal. Exits 1 if any line was bad
        or refused (a forgotten claim). --json: {file, lines, observed, merge, link, novel,
        refused: [{line, field, message}], bad: [...]}
  export [FILE]
        every observation as an import line (oldest first), to FILE or stdout
  believe TEXT [--confidence 0..1] [--source S]
        a belief (category belief). --json: {id}
  confirm ID
        confirm a belief or value an agent stated: it joins the state's Identity (a session's
        own claims wait for this or for use in a later session that ended ok)
  contradict ID OTHER_ID [--note TEXT]
        link the two as contradicting; lowers confidence
  link FROM TO TYPE [--weight 0..1]
        a typed edge (supports, relates_to, ...; weight default 0.5); FROM supersedes TO also
        ends TO's validity (valid_to: when FROM began), for every agent, shared memories too.
        --json: {from, to, type, weight}
  predict TEXT [--confidence 0..1] [--due ISO]
        a prediction. --json: {id}
  resolve ID correct|partly|wrong [--note TEXT]
        resolve a prediction. --json: {id, surprise}
  review ID again|hard|good|easy
        grade a memory by hand (FSRS-6)
  threads [open TEXT [--solo] | resolve ID]
        open questions and work across sessions
  wander [--steps N] [--seed N]
        a seeded walk over the memory graph
  dream
        cluster, abstract, find contradictions, update schedules, fade, rebuild indices; each
        phase timed and fault-isolated; progress on a terminal.
        --json: {duration_ms, phases: {<name>: {ok, ms, ...counts}}}
  forget ID... [--approve CODE]
        without --approve a dry run: what would go and the code for exactly these ids today.
        With the right code, deletes for good and tombstones the claims; a wrong code exits 77.
        Not reachable through MCP.

A memory database that is corrupt or not a nightshift store is refused with an error naming the
file (exit 70); it is never overwritten.

Exit codes:
  0   done
  1   import: a line was bad or refused (the good lines are kept); dream: a phase failed
  64  usage: an unknown subcommand or option (with a "did you mean"), a bad argument, or a
      memory, edge or prediction the store does not hold
  70  internal: the memory database is corrupt, not a nightshift store, or of a newer schema
      (named; never overwritten), or a bug
  75  refused: the observation is a forgotten claim (memory forget tombstoned it)
  77  permission: the memory database cannot be used by this user (its owner and the fix), or
      forget --approve with a wrong code (nothing deleted)
  78  config: the config file is invalid
An unknown code is a failure.`;

export const stage = 'full';

export async function run({ config, positionals, flags, io, logger, env, deps }: FullContext): Promise<number> {
  return (await import('./memory-cli.js')).memoryCommand(config, positionals, flags, {
    out: io.out, err: deps.stderr, stdin: process.stdin, stderrIsTTY: !!process.stderr.isTTY, stdinIsTTY: !!process.stdin.isTTY, env: env, logger,
  });
}
