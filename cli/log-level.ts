// NIGHTSHIFT_LOG_LEVEL: one of pino's levels. A bad value is ignored with a warning, never fatal:
// a typo in an env file must not stop every tick.
const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
export function logLevel(value: string | undefined): { level: string; warning: string | null } {
  if (value === undefined || value === '') return { level: 'info', warning: null };
  if (LEVELS.includes(value)) return { level: value, warning: null };
  return { level: 'info', warning: `Expected NIGHTSHIFT_LOG_LEVEL to be one of ${LEVELS.join(', ')}, got \`${value}\`: using info` };
}
