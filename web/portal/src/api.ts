// The developer portal API (/api/portal/v1) as the portal's pages call it. Its answers are
// envelopes ({data}, and {data, meta} for lists) in snake_case; a signed-in developer sends
// the ID token, renewed once through the refresh token when a call answers 401.

export const PORTAL_API = "/api/portal/v1";

/** The ID and refresh tokens of the signed-in developer (the portal API's TokenRead). */
export interface Tokens {
  id_token: string;
  refresh_token: string;
}

/** What the API refused, from its problem document (RFC 9457). */
export class Problem extends Error {
  readonly status: number;
  readonly kind: string;
  /** the message of each refused field of the body, by its JSON pointer ("/email") */
  readonly fields: Record<string, string>;

  constructor(status: number, document: Record<string, unknown>) {
    const said = [document.detail, document.title].find((text) => typeof text === "string");
    super((said as string | undefined) ?? `The portal API answered ${status}`);
    this.status = status;
    this.kind = typeof document.type === "string" ? document.type.replace("/problems/", "") : "";
    this.fields = Object.fromEntries(
      (Array.isArray(document.errors) ? document.errors : [])
        .filter((error) => typeof error?.pointer === "string")
        // "$.email: not a valid email address" is shown at the email field: no "$.email: "
        .map((error) => [error.pointer, String(error.detail).replace(/^\$\S*: /, "")]),
    );
  }
}

export interface ListMeta {
  count: number;
  page: number;
  limit: number;
  pages: number;
}

export interface Listed<T> {
  data: T[];
  meta: ListMeta;
}

const TOKENS = "portico.portal.tokens";

/** The tab's tokens: sessionStorage, so that closing the tab signs the developer out. */
export const tokenStore = {
  read(): Tokens | null {
    const kept = sessionStorage.getItem(TOKENS);
    return kept === null ? null : (JSON.parse(kept) as Tokens);
  },
  write(tokens: Tokens | null): void {
    if (tokens === null) sessionStorage.removeItem(TOKENS);
    else sessionStorage.setItem(TOKENS, JSON.stringify(tokens));
  },
};

async function refused(answer: Response): Promise<Problem> {
  const document = await answer.json().catch(() => ({ title: answer.statusText }));
  return new Problem(answer.status, document as Record<string, unknown>);
}

async function exchange(path: string, body: unknown): Promise<Tokens> {
  const answer = await fetch(PORTAL_API + path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!answer.ok) throw await refused(answer);
  const { data } = (await answer.json()) as { data: Tokens };
  const tokens = { id_token: data.id_token, refresh_token: data.refresh_token };
  tokenStore.write(tokens);
  return tokens;
}

/** Email and password for tokens (kept for the tab). */
export const obtainTokens = (email: string, password: string) =>
  exchange("/auth/token", { email, password });

let refreshing: Promise<boolean> | null = null;

/** A new ID token from the refresh token; concurrent 401s share one refresh (the API takes
 * each refresh token once). A refused refresh signs the tab out. */
function refreshed(): Promise<boolean> {
  const kept = tokenStore.read();
  if (kept === null) return Promise.resolve(false);
  refreshing ??= exchange("/auth/token/refresh", {
    refresh_token: kept.refresh_token,
  })
    .then(() => true)
    .catch(() => {
      tokenStore.write(null);
      return false;
    })
    .finally(() => (refreshing = null));
  return refreshing;
}

async function request(method: string, path: string, body?: unknown): Promise<Response> {
  const once = () => {
    const headers = new Headers();
    const kept = tokenStore.read();
    if (kept !== null) headers.set("Authorization", `Bearer ${kept.id_token}`);
    if (body !== undefined) headers.set("Content-Type", "application/json");
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return fetch(PORTAL_API + path, { method, headers, body: payload });
  };
  const first = await once();
  const answer = first.status === 401 && (await refreshed()) ? await once() : first;
  if (!answer.ok) throw await refused(answer);
  return answer;
}

/** The ``data`` of an envelope the API answered (undefined for a 204). */
export async function portal<T>(method: string, path: string, body?: unknown): Promise<T> {
  const answer = await request(method, path, body);
  return answer.status === 204 ? (undefined as T) : ((await answer.json()) as { data: T }).data;
}

/** One page of a collection: its items and where they stand (count, page, pages). */
export async function portalList<T>(path: string): Promise<Listed<T>> {
  const answer = await request("GET", path);
  return (await answer.json()) as Listed<T>;
}

/** A list's query string: the page, the page size and the ``filter[...]`` that are set. */
export function listQuery(page: number, limit: number, filters: Record<string, string> = {}) {
  const query = new URLSearchParams({
    page: String(page),
    limit: String(limit),
  });
  for (const [name, value] of Object.entries(filters)) {
    if (value.trim() !== "") query.set(`filter[${name}]`, value.trim());
  }
  return `?${query}`;
}
