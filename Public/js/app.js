// The patient app's entry: what every page shares (connection banner, service worker, outbox, language switch,
// signed-in parts), then the page's own module from pages/, chosen by the page's data-page (or its form's
// data-form). Page modules import what they need from lib/; nothing in lib/ imports a page or this file.
// app/layout.leaf names the lib/ modules this file and most pages import (modulepreload), so a phone fetches them
// side by side instead of one import after another.

import { api, goToLogin } from "./lib/api.js";
import { checkConsents } from "./lib/consent.js";
import { countMessage, message } from "./lib/i18n.js";
import * as outbox from "./lib/outbox.js";
import { session } from "./lib/storage.js";

/** The pages that have a module, by the name the page gives itself. */
const PAGES = new Set([
  "access-log",
  "appointments",
  "audiograms",
  "consents",
  "events",
  "forgot-password",
  "health-data",
  "home",
  "intervention",
  "interventions",
  "invitation",
  "login",
  "moods",
  "my-data",
  "pairing",
  "preview",
  "profile",
  "questionnaire",
  "questionnaires",
  "register",
  "reset-password",
  "results",
  "schedule",
  "studies",
  "therapies",
  "therapist",
  "thoughts",
  "verify",
  "verify-pending",
]);

function showSignedInParts() {
  const signedIn = Boolean(session.token);
  document.querySelectorAll("[data-signed-in]").forEach((node) => (node.hidden = !signedIn));
  document.querySelectorAll("[data-signed-out]").forEach((node) => (node.hidden = signedIn));
}

/**
 * The tab bar at the thumb: the current page's tab marked; left out where the page keeps its own actions at the
 * bottom of the screen (a questionnaire being answered).
 */
function showTabBar() {
  const bar = document.querySelector(".tabbar");
  if (!bar) return;
  if (document.querySelector(".sticky-actions")) {
    bar.hidden = true;
    return;
  }
  document.body.classList.toggle("with-tabbar", !bar.hidden);
  for (const link of bar.querySelectorAll("a")) {
    if (link.getAttribute("href") === location.pathname) link.setAttribute("aria-current", "page");
  }
}

function watchConnection() {
  const banner = document.getElementById("connection");
  if (!banner) return;
  const update = () => (banner.hidden = navigator.onLine);
  window.addEventListener("online", update);
  window.addEventListener("offline", update);
  update();
}

function keepLanguageSwitchOnPage() {
  const link = document.querySelector("[data-language-switch]");
  if (!link) return;
  const url = new URL(link.href, location.href);
  url.searchParams.set("next", location.pathname + location.search);
  link.href = url.pathname + url.search;
}

/** Shows how many changes wait to be sent and what the server refused, and sends them when possible. */
async function watchOutbox() {
  if (!session.token || !("indexedDB" in window)) return;
  const status = document.getElementById("outbox-status");
  const reportList = document.getElementById("outbox-reports");
  const show = async () => {
    const waiting = await outbox.pending();
    status.textContent = countMessage("waiting", waiting.length);
    status.hidden = waiting.length === 0;
    const reports = await outbox.reports();
    reportList.replaceChildren();
    reportList.hidden = reports.length === 0;
    for (const report of reports) {
      const item = document.createElement("li");
      item.textContent = `${message(report.status === "conflict" ? "conflict" : "refused")} ${report.detail}`.trim();
      const dismiss = document.createElement("button");
      dismiss.type = "button";
      dismiss.className = "link";
      dismiss.textContent = message("dismiss");
      dismiss.addEventListener("click", () => outbox.dismiss(report.id));
      item.append(" ", dismiss);
      reportList.append(item);
    }
  };
  window.addEventListener("interlude:outbox", show);
  window.addEventListener("online", () => outbox.flush(api));
  await show();
  await outbox.flush(api);
}

/** Puts a study's new consent version to the person at their visit, and again when the server holds a change back. */
function watchConsents() {
  if (!session.token) return;
  window.addEventListener("interlude:consent-needed", () => {
    const notice = document.getElementById("consent-needed");
    if (notice && !document.querySelector('[data-page="consents"]')) notice.hidden = false;
  });
  checkConsents();
}

/**
 * Tells the person at their visit when their notifications stopped reaching this device, with a way to turn them on
 * again; asked once per browser session, and only on a device that had them on.
 */
async function watchPush() {
  if (!session.token || !localStorage.getItem("interlude.pushDevice")) return;
  if (sessionStorage.getItem("interlude.pushChecked")) return;
  sessionStorage.setItem("interlude.pushChecked", "1");
  const { pushDeviceGone } = await import("./lib/push.js");
  const notice = document.getElementById("push-gone");
  if (notice && (await pushDeviceGone())) notice.hidden = false;
}

/**
 * The service worker keeps the app's files for the next visit; it is registered once the page has shown what it
 * came for, so its download of those files does not share a slow link with the page's own requests.
 */
function registerServiceWorker() {
  if ("serviceWorker" in navigator) navigator.serviceWorker.register("/app/sw.js", { scope: "/app" }).catch(() => {});
}

watchConnection();
watchOutbox();
watchConsents();
watchPush();
keepLanguageSwitchOnPage();
showSignedInParts();
showTabBar();
if (document.querySelector("[data-requires-session]") && !session.token) {
  goToLogin(false);
} else {
  const pageName =
    document.querySelector("[data-page]")?.dataset.page || document.querySelector("form[data-form]")?.dataset.form;
  if (PAGES.has(pageName)) {
    import(`./pages/${pageName}.js`).then((page) => page.run()).finally(registerServiceWorker);
  } else {
    registerServiceWorker();
  }
}
