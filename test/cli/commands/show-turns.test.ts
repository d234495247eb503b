// `show` and `show --transcript` give a session the same turns: the ledger's, the model turns
// answered, with the CLI's own num_turns beside it where that differs (it counts a call no one
// answered, and at max_turns the turn it refused to take). Control: with the result line's old
// count (the CLI's) the unreached and max_turns sessions disagree; with the tracker's old turns
// (num_turns uncapped) an unwalled unreached session is 1 turn in the ledger.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fakeApiPerFile, nightshift, runJson, workspace, writeAgent } from '../../helpers.js';

const api = fakeApiPerFile();

const turnsIn = {
  show: (out: string) => Number(/^turns {5}(\d+) turns?\b/m.exec(out)?.[1]),
  transcript: (out: string) => Number(/^── result: .*, (\d+) turns?\b/m.exec(out)?.[1]),
};

describe('show: turns', () => {
  const cases = [
    // The API never answers (the upstream refuses the connection): no model turn, the CLI says 1.
    { name: 'unreached', prompt: 'x', extra: {}, url: 'http://127.0.0.1:9', turns: 0, cli: 1 },
    // At max_turns 2 the CLI counts 3.
    { name: 'endless', prompt: 'SCENARIO=endless', extra: { max_turns: 2 }, url: null, turns: 2, cli: 3 },
    // An answer the API gave: both say 1.
    { name: 'greeter', prompt: 'SCENARIO=text', extra: {}, url: null, turns: 1, cli: 1 },
  ] as const;
  for (const c of cases) {
    test(`${c.name}: show and show --transcript both say ${c.turns}, the ledger's turns`, { timeout: 120_000 }, async (t) => {
      const ws = workspace(t, c.url ?? api.url);
      writeAgent(ws, c.name, c.prompt, c.extra);
      const { record } = await runJson(ws, c.name);
      assert.equal(record.turns, c.turns, JSON.stringify(record));
      const shown = await nightshift(['show', record.id], ws.env, ws.dir);
      const view = await nightshift(['show', record.id, '--transcript'], ws.env, ws.dir);
      assert.equal(turnsIn.show(shown.stdout), c.turns, shown.stdout);
      assert.equal(turnsIn.transcript(view.stdout), c.turns, view.stdout);
      if (c.cli !== c.turns) assert.match(view.stdout, new RegExp(`, ${c.turns} turns? \\(the CLI counted ${c.cli}\\)$`, 'm'));
      else assert.doesNotMatch(view.stdout, /the CLI counted/);
      // The CLI's own "API Error" line is not shown as the model's.
      if (c.turns === 0) assert.doesNotMatch(view.stdout, /^assistant:/m, view.stdout);
    });
  }
});
