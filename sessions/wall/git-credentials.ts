// Push credentials in the vault's .git/config (`https://deploy:TOKEN@host/...`, an
// `http.extraheader` with a bearer) are readable by whatever runs in the vault. The session sees a
// copy without them; nightshift's own git still reads the real file, and doctor fails it.

// Pure: the config text with every URL's user info and every extraheader taken out, and what was
// found (names only, never the values).
export function withoutCredentials(text: string): { text: string; found: string[] } {
  const found: string[] = [];
  const lines = text.split('\n').map((line) => {
    const header = /^\s*extraheader\s*=/i.exec(line);
    if (header) {
      found.push('http.extraheader');
      return line.replace(/=.*$/, '= (removed by nightshift)');
    }
    return line.replace(/^(\s*(?:push)?url\s*=\s*[a-z][a-z0-9+.-]*:\/\/)([^/@\s]+)@/i, (_m, pre: string) => {
      found.push('a URL with a user and password or token');
      return pre;
    });
  });
  return { text: lines.join('\n'), found: [...new Set(found)] };
}
