// The management service's public HTTP API, as the console calls it: a bearer token on every
// call, renewed once through the refresh token when a call answers 401.

export interface Tokens {
  token: string;
  refreshToken: string;
  expiresAt: string;
}

/** A problem document (RFC 9457) the API answered with, or a plain failure. */
export class ApiError extends Error {
  readonly status: number;
  readonly problem: Record<string, unknown>;

  constructor(status: number, problem: Record<string, unknown>) {
    const detail = typeof problem.detail === "string" ? problem.detail : undefined;
    const title = typeof problem.title === "string" ? problem.title : undefined;
    super(detail ?? title ?? `HTTP ${status}`);
    this.status = status;
    this.problem = problem;
  }

  /** The field errors of a validation problem, by JSON pointer, as the API words them
   * (``$.name: must ...``: a list of them, elsewhere than at their fields, says which). */
  fieldErrors(): Record<string, string> {
    const errors = this.problem.errors;
    const found: Record<string, string> = {};
    if (Array.isArray(errors)) {
      for (const error of errors) {
        if (error && typeof error.pointer === "string" && typeof error.detail === "string") {
          found[error.pointer] = error.detail;
        }
      }
    }
    return found;
  }
}

/** Field errors to show at their fields: without the path the API starts each with
 * (``$.gatewayHosts[0]: 'x' is not a hostname`` → ``'x' is not a hostname``). */
export function atFields(errors: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(errors).map(([pointer, detail]) => [pointer, detail.replace(/^\$\S*: /, "")]),
  );
}

const STORE_KEY = "portico.console.tokens";

// The tab's session only: a closed tab signs out (no token outlives the browser session).
export function storedTokens(): Tokens | null {
  const raw = sessionStorage.getItem(STORE_KEY);
  return raw ? (JSON.parse(raw) as Tokens) : null;
}

export function storeTokens(tokens: Tokens | null): void {
  if (tokens) sessionStorage.setItem(STORE_KEY, JSON.stringify(tokens));
  else sessionStorage.removeItem(STORE_KEY);
}

async function failure(response: Response): Promise<ApiError> {
  let problem: Record<string, unknown> = {};
  try {
    problem = (await response.json()) as Record<string, unknown>;
  } catch {
    problem = { title: response.statusText };
  }
  return new ApiError(response.status, problem);
}

let renewing: Promise<boolean> | null = null;

/** One renewal at a time: concurrent 401s wait for the same refresh. */
async function renew(): Promise<boolean> {
  const tokens = storedTokens();
  if (!tokens) return false;
  renewing ??= (async () => {
    const response = await fetch("/api/auth/refresh", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ refreshToken: tokens.refreshToken }),
    });
    if (!response.ok) {
      storeTokens(null);
      return false;
    }
    const renewed = (await response.json()) as Partial<Tokens>;
    storeTokens({ ...tokens, ...renewed } as Tokens);
    return true;
  })().finally(() => {
    renewing = null;
  });
  return renewing;
}

export async function signIn(email: string, password: string): Promise<Tokens> {
  const response = await fetch("/api/auth/login", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ email, password }),
  });
  if (!response.ok) throw await failure(response);
  const tokens = (await response.json()) as Tokens;
  storeTokens(tokens);
  return tokens;
}

/** Accept an invitation (its token, from the link's fragment) with the password to set (an
 * account the invitation created) or the account's own (an existing one): signed in as it. */
export async function acceptInvitation(
  token: string,
  password: string,
  displayName: string | null,
): Promise<Tokens> {
  const response = await fetch("/api/auth/accept-invitation", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(displayName ? { token, password, displayName } : { token, password }),
  });
  if (!response.ok) throw await failure(response);
  const tokens = (await response.json()) as Tokens;
  storeTokens(tokens);
  return tokens;
}

/** The invitation token a link carries in its fragment (``#token=...``), never sent to a
 * server; null when the link has none. */
export function invitationToken(hash: string): string | null {
  const token = new URLSearchParams(hash.replace(/^#/, "")).get("token");
  return token && token.trim() ? token.trim() : null;
}

/** An active identity-provider configuration the sign-in page offers. */
export interface SignInOption {
  id: string;
  orgId: string;
  orgName: string;
  name: string;
  loginUrl: string;
}

export async function signInOptions(): Promise<SignInOption[]> {
  const response = await fetch("/api/auth/identity-providers");
  if (!response.ok) throw await failure(response);
  return ((await response.json()) as { items: SignInOption[] }).items;
}

const VERIFIER_KEY = "portico.console.saml.verifier";

function base64url(bytes: Uint8Array): string {
  let text = "";
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Go to the identity provider. The code the sign-in ends with is bound to this tab: only
 * the secret kept here (PKCE S256, its hash sent as `challenge`) can exchange it. */
export async function startSamlSignIn(option: SignInOption): Promise<void> {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  sessionStorage.setItem(VERIFIER_KEY, verifier);
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  const challenge = base64url(new Uint8Array(digest));
  window.location.assign(`${option.loginUrl}?client=console&challenge=${challenge}`);
}

/** The code a SAML sign-in left in the URL's fragment (never sent to a server), taken out
 * of the address bar at once. */
export function takeSamlCode(): string | null {
  const match = /^#samlCode=([A-Za-z0-9_-]+)$/.exec(window.location.hash);
  if (!match) return null;
  window.history.replaceState(null, "", window.location.pathname + window.location.search);
  return match[1];
}

export async function exchangeSamlCode(code: string): Promise<Tokens> {
  const codeVerifier = sessionStorage.getItem(VERIFIER_KEY);
  sessionStorage.removeItem(VERIFIER_KEY);
  const response = await fetch("/api/auth/saml/token", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(codeVerifier ? { code, codeVerifier } : { code }),
  });
  if (!response.ok) throw await failure(response);
  const tokens = (await response.json()) as Tokens;
  storeTokens(tokens);
  return tokens;
}

export async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  return send<T>(method, path, body === undefined ? undefined : JSON.stringify(body));
}

/** ``body`` as it is: a JSON text (then so typed), or a FormData (multipart, typed by fetch). */
export async function send<T>(method: string, path: string, body?: string | FormData): Promise<T> {
  const attempt = () => {
    const headers: Record<string, string> = {};
    const tokens = storedTokens();
    if (tokens) headers.Authorization = `Bearer ${tokens.token}`;
    if (typeof body === "string") headers["Content-Type"] = "application/json";
    return fetch(path, { method, headers, body });
  };
  let response = await attempt();
  if (response.status === 401 && (await renew())) response = await attempt();
  if (!response.ok) throw await failure(response);
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

export const get = <T>(path: string) => call<T>("GET", path);
export const post = <T>(path: string, body: unknown) => call<T>("POST", path, body);
export const patch = <T>(path: string, body: unknown) => call<T>("PATCH", path, body);

/** What an add-or-edit form sends: a new item POSTed to its collection at ``path``, or the
 * ``existing`` one changed by a PATCH at ``path/<id>``. */
export async function saveItem(
  path: string,
  existing: { id: string } | null,
  body: unknown,
): Promise<void> {
  if (existing) await patch(`${path}/${existing.id}`, body);
  else await post(path, body);
}
export const put = <T>(path: string, body: unknown) => call<T>("PUT", path, body);
export const remove = (path: string) => call<void>("DELETE", path);

/** A query string of the values given (empty ones left out): ``?page=2&search=ord``. */
export function query(values: Record<string, string | number | undefined | null>): string {
  const given = Object.entries(values).filter(([, v]) => v !== undefined && v !== null && v !== "");
  return given.length ? "?" + new URLSearchParams(given.map(([k, v]) => [k, String(v)])) : "";
}

export interface Page<T> {
  items: T[];
  page: number;
  size: number;
  total: number;
}

// The marketplace admin API (/api/admin/v1), for what only it offers the console (approving
// portal registrations). It signs in on its own (ID tokens, while token issuance is on):
// the console's token is not one of its tokens.

export const ADMIN_API = "/api/admin/v1";
const ADMIN_KEY = "portico.console.admin-tokens";

interface AdminTokens {
  id_token: string;
  refresh_token: string;
}

function adminTokens(): AdminTokens | null {
  const raw = sessionStorage.getItem(ADMIN_KEY);
  return raw ? (JSON.parse(raw) as AdminTokens) : null;
}

function storeAdminTokens(tokens: AdminTokens | null): void {
  if (tokens) sessionStorage.setItem(ADMIN_KEY, JSON.stringify(tokens));
  else sessionStorage.removeItem(ADMIN_KEY);
}

/** Whether this tab holds admin API tokens. */
export const adminSignedIn = () => adminTokens() !== null;

/** Forget the admin API's tokens (signing out of the console signs out of it too). */
export const adminSignOut = () => storeAdminTokens(null);

async function adminExchange(path: string, body: unknown): Promise<void> {
  const response = await fetch(ADMIN_API + path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw await failure(response);
  const { data } = (await response.json()) as { data: AdminTokens };
  storeAdminTokens({ id_token: data.id_token, refresh_token: data.refresh_token });
}

/** Sign in to the admin API with the account's email and password. */
export const adminSignIn = (email: string, password: string) =>
  adminExchange("/auth/token", { email, password });

let adminRenewing: Promise<boolean> | null = null;

function adminRenew(): Promise<boolean> {
  const tokens = adminTokens();
  if (!tokens) return Promise.resolve(false);
  adminRenewing ??= adminExchange("/auth/token/refresh", { refresh_token: tokens.refresh_token })
    .then(() => true)
    .catch(() => {
      storeAdminTokens(null);
      return false;
    })
    .finally(() => (adminRenewing = null));
  return adminRenewing;
}

/** A call of the admin API: its answer's envelope (``{data, meta?}``); a 401 renews once. */
export async function admin<T>(method: string, path: string, body?: unknown): Promise<T> {
  const attempt = () => {
    const headers: Record<string, string> = {};
    const tokens = adminTokens();
    if (tokens) headers.Authorization = `Bearer ${tokens.id_token}`;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return fetch(ADMIN_API + path, { method, headers, body: payload });
  };
  let response = await attempt();
  if (response.status === 401 && (await adminRenew())) response = await attempt();
  if (response.status === 401) storeAdminTokens(null); // signed out of it: ask again
  if (!response.ok) throw await failure(response);
  return (await response.json()) as T;
}
