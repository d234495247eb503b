// A session's span under its fire's (docs/observability.md): begun before the charge, ended once
// the git work and the report are done, from the supervisor's own record of it (the ledger's row,
// the meter, git), never from what the session wrote. Content (the prompt, the result) only for an
// agent in telemetry.capture_content.
import { NO_SPAN, type TraceAttrs, type TraceSpan } from '../../core/trace.js';
import type { Agent } from '../../config/agents.js';
import type { Config } from '../../config/schema.js';
import type { SessionRecord } from '../../budget/session-record.js';
import type { GitReport } from '../../vault/git-sync.js';

export function beginSessionSpan(config: Pick<Config, 'telemetry'>, agent: Pick<Agent, 'name' | 'model' | 'prompt'>, fire: TraceSpan | undefined): TraceSpan {
  if (!fire?.traceId) return NO_SPAN;
  const content = config.telemetry.capture_content.includes(agent.name);
  return fire.child(`invoke_agent ${agent.name}`, {
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.provider.name': 'anthropic',
    'gen_ai.agent.name': agent.name,
    'gen_ai.request.model': agent.model,
    'gen_ai.input.messages': content ? JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: agent.prompt }] }]) : undefined,
  }, { content });
}

// Pure: the settled session as its span's attributes.
export function sessionAttrs(s: SessionRecord, git: GitReport | null, content: boolean): TraceAttrs {
  return {
    'nightshift.session.id': s.id,
    'gen_ai.conversation.id': s.id,
    'nightshift.session.outcome': s.outcome,
    'nightshift.session.exit_code': s.exit_code,
    'nightshift.cost_usd': s.cost_usd,
    'nightshift.cost_estimated': s.cost_estimated,
    'nightshift.reservation_usd': s.reserved_usd ?? undefined,
    'nightshift.reservation_spent': s.reserved_usd ? s.cost_usd / s.reserved_usd : undefined,
    'nightshift.session.turns': s.turns,
    'nightshift.session.api_calls': s.api_calls ?? undefined,
    'nightshift.session.memory': s.memory ?? undefined,
    'nightshift.git.pulled': git?.pulled,
    'nightshift.git.committed': git?.committed,
    'nightshift.git.pushed': git?.pushed,
    'nightshift.git.uncommitted': git?.uncommitted,
    'nightshift.git.error': git?.error ?? undefined,
    'gen_ai.output.messages': content && s.result ? JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: s.result }] }]) : undefined,
  };
}

export function endSessionSpan(span: TraceSpan, s: SessionRecord, git: GitReport | null): void {
  span.set(sessionAttrs(s, git, span.content));
  if (s.outcome !== 'ok') span.fail(s.error ? `${s.outcome}: ${s.error}` : s.outcome);
  span.end();
}
