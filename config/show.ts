// How a message quotes a value the operator wrote: a light module, so the lines of a problem
// need not load the schema.
export const show = (v: unknown) => (typeof v === 'string' ? `\`${v}\`` : `\`${JSON.stringify(v)}\` (${typeof v})`);
