// The tests' imitation of the Anthropic API lives with what ships (`nightshift rehearse` serves it).
export { bash, BYTES_PER_TOKEN, inputTokensOf, longCall, PAGE_TOKENS, pieces, SCENARIOS, startFakeApi, TEST_API_KEY, text } from '../rehearsal/fake-api.js';
export type { Block, FakeApi, Reply, RequestRecord, Script, ScriptUsage, ServedRecord, StreamError, Turn, Usage } from '../rehearsal/fake-api.js';
