// A copy of the person's data: ask for it, see when it is ready, download it once.

import { api } from "../lib/api.js";
import { formatDateTime, message } from "../lib/i18n.js";
import { session } from "../lib/storage.js";

export async function run() {
  const status = document.getElementById("my-data-status");
  const request = document.getElementById("my-data-request");
  const download = document.getElementById("my-data-download");
  const show = (text, kind = "") => {
    status.className = `notice ${kind}`.trim();
    status.textContent = text;
    status.hidden = false;
  };
  let timer = null;
  const refresh = async () => {
    clearTimeout(timer);
    const result = await api("GET", "/me/export/status");
    const copy = result.ok ? result.data : null;
    download.hidden = copy?.status !== "ready";
    request.hidden = copy?.status === "queued" || copy?.status === "running";
    if (!copy) return;
    // The page's own texts for the copy, apart from the app's ("queued" is also a change waiting on the device).
    show(message(`copy.${copy.status}`, { until: copy.expiresAt ? formatDateTime(copy.expiresAt) : "" }), copy.status === "failed" ? "error" : "");
    // While it is being written, look again now and then.
    if (request.hidden) timer = setTimeout(refresh, 5000);
  };
  request.addEventListener("click", async () => {
    request.disabled = true;
    await api("POST", "/me/export");
    request.disabled = false;
    await refresh();
  });
  download.addEventListener("click", async () => {
    download.disabled = true;
    let response;
    try {
      response = await fetch("/api/v1/me/export", { headers: { Authorization: `Bearer ${session.token}` }, credentials: "omit" });
    } catch {
      response = null;
    }
    download.disabled = false;
    if (!response?.ok) return refresh();
    const link = document.createElement("a");
    link.href = URL.createObjectURL(await response.blob());
    link.download = "interlude-my-data.zip";
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
    await refresh();
    show(message("copy.downloaded"), "ok");
  });
  await refresh();
}
