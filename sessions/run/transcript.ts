// What of the stream goes into the transcript. The API streams text and tool input in small
// deltas (`content_block_delta`); a secret spread over several deltas is whole in no line, so no
// per-line redaction can find it. Those lines are left out: the complete `assistant` message,
// redacted as one line, carries the same content.
export function keepInTranscript(line: string): boolean {
  if (!line.includes('content_block_delta')) return true;
  try {
    const msg = JSON.parse(line);
    return !(msg?.type === 'stream_event' && msg.event?.type === 'content_block_delta');
  } catch {
    return true;
  }
}
