// The service's HTTP API, as the page calls it: relative paths (the page is <base>/dashboard, the
// API <base>/v1/...), with the tenant's bearer token, which lives in sessionStorage: entered once
// per tab, gone when the tab closes.
const TOKEN_KEY = "ascrun.token";

export const storedToken = {
  get: () => sessionStorage.getItem(TOKEN_KEY),
  set: (token) => sessionStorage.setItem(TOKEN_KEY, token),
  forget: () => sessionStorage.removeItem(TOKEN_KEY),
};

// A refusal as the API words it: {"error": {"kind", "message"}}.
export class ApiError extends Error {
  constructor(status, kind, message) {
    super(message);
    this.status = status;
    this.kind = kind;
  }
}

export async function get(path, { text = false } = {}) {
  const token = storedToken.get();
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  let response;
  try {
    response = await fetch(path, { headers, cache: "no-store" });
  } catch (e) {
    throw new ApiError(0, "unreachable", `the service did not answer (${e.message})`);
  }
  if (!response.ok) {
    const body = await response.json().catch(() => null);
    const error = body?.error ?? { kind: "http", message: `${response.status} ${response.statusText}` };
    throw new ApiError(response.status, error.kind, error.message);
  }
  return text ? response.text() : response.json();
}
