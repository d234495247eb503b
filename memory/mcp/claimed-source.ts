// Who said it, for tools that write memories. A session's own server names the session as the
// source of everything it writes; a `source` the caller claims is kept only as a labelled tag, so
// query and recall never show it as a source.
import { z } from 'zod';

export const CLAIM_PREFIX = 'claimed-source: ';
// A tag fits the tools' own tag limit (100 characters), prefix included.
const MAX_TAG = 100;

// The tag that records a claimed source: whitespace collapsed, cut to fit, marked when cut.
export function claimTag(claim: string): string {
  const chars = [...claim.replace(/\s+/g, ' ').trim()];
  const room = MAX_TAG - CLAIM_PREFIX.length;
  return CLAIM_PREFIX + (chars.length > room ? `${chars.slice(0, room - 1).join('')}…` : chars.join(''));
}

// The `source` argument of a session's own server.
export const CLAIMED_SOURCE = z.string().min(1).max(500).optional()
  .describe(`Who told you, kept as a "${CLAIM_PREFIX.trim()}" tag; the source is always this session.`);

export type SourcePolicy = {
  // True (the operator's own clients): a given source is the source. False: `defaultSource` always is.
  trustSource: boolean;
  defaultSource: string | null;
};

// The source to store and the tags to store with it.
export function attribute(claimed: string | undefined, tags: string[] | undefined, p: SourcePolicy): { source: string | null; tags: string[] | undefined } {
  if (p.trustSource) return { source: claimed ?? p.defaultSource, tags };
  if (claimed === undefined || claimed.trim() === '' || claimed.trim() === p.defaultSource) return { source: p.defaultSource, tags };
  const tag = claimTag(claimed);
  return { source: p.defaultSource, tags: tags?.includes(tag) ? tags : [...(tags ?? []), tag] };
}
