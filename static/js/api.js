/**
 * fetch() for the JSON endpoints: sends JSON, the CSRF token in the X-CSRFToken header
 * (read from <meta name="csrf-token">), and returns {ok, status, body}.
 */

function csrfToken() {
  return document.querySelector('meta[name="csrf-token"]')?.content ?? "";
}

export async function api(url, { method = "GET", body = undefined } = {}) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (method !== "GET") headers["X-CSRFToken"] = csrfToken();
  const response = await fetch(url, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: "same-origin",
  });
  let payload = null;
  try { payload = await response.json(); } catch { payload = { error: `HTTP ${response.status}` }; }
  return { ok: response.ok, status: response.status, body: payload };
}
