// What the page keeps between loads (never a secret): this tab's connection ids, the agent open in
// it and what is typed in its prompt box (sessionStorage), the theme, the catalogs last seen and the folders agents were made in
// (localStorage). Without storage (a private mode) nothing is remembered and nothing fails.

// This tab's connection ids survive a reload (sessionStorage: this tab only), so its own answers
// still read "you" afterwards; the daemon numbers connections from a random point per process, so a
// later daemon never reuses one.
const KNOWN_IDS = "shard.clientIds";

export function remembered(): string[] {
  try {
    const ids = JSON.parse(sessionStorage.getItem(KNOWN_IDS) || "[]");
    return Array.isArray(ids) ? ids.filter((id) => typeof id === "string") : [];
  } catch {
    return [];
  }
}

export function remember(ids: Set<string>): void {
  try {
    sessionStorage.setItem(KNOWN_IDS, JSON.stringify([...ids].slice(-100)));
  } catch {
    /* no storage (a private mode): "you" holds until the page is reloaded */
  }
}

export const OPEN = "shard.openAgent";
export const THEME = "shard.theme";
export const CATALOGS = "shard.catalogs";
export const FOLDERS = "shard.recentFolders";
export const DRAFT = "shard.draft";

function storage(key: string): Storage {
  return key === OPEN || key === DRAFT ? sessionStorage : localStorage;
}

export function stored(key: string): string | null {
  try {
    return storage(key).getItem(key);
  } catch {
    return null;
  }
}

export function storedJson(key: string): any { // eslint-disable-line @typescript-eslint/no-explicit-any
  try {
    return JSON.parse(stored(key) || "null");
  } catch {
    return null;
  }
}

export function store(key: string, value: string | null): void {
  try {
    if (value === null) storage(key).removeItem(key);
    else storage(key).setItem(key, value);
  } catch {
    /* no storage (a private mode): nothing is remembered */
  }
}
