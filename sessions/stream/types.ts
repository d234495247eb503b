// The CLI's stream-json messages that more than one reader of the stream needs.

export type ResultMessage = {
  type: 'result';
  subtype: string;
  is_error: boolean;
  api_error_status?: number | null;
  terminal_reason?: string;
  num_turns?: number;
  result?: string;
  errors?: string[];
  total_cost_usd?: number;
  modelUsage?: Record<string, { inputTokens?: number; outputTokens?: number; cacheReadInputTokens?: number; cacheCreationInputTokens?: number; costUSD?: number }>;
  session_id?: string;
};
