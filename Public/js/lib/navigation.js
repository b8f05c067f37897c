// Where a `next=` parameter may send the browser: only to a page of this site, as the browser itself reads it
// (it drops tabs and line breaks, reads "\" as "/", and "//host" is another site).

export function safeNext(value, fallback, origin = globalThis.location?.origin) {
  if (typeof value !== "string" || !origin) return fallback;
  const cleaned = value.replace(/[\t\n\r]/g, "").trim();
  if (!cleaned.startsWith("/") || cleaned.startsWith("//") || cleaned.includes("\\")) return fallback;
  try {
    const url = new URL(cleaned, origin);
    return url.origin === origin ? url.pathname + url.search + url.hash : fallback;
  } catch {
    return fallback;
  }
}
