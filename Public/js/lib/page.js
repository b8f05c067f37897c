// Small helpers for the server-rendered pages the app fills in.

export function fillTimeZones() {
  const list = document.getElementById("time-zones");
  if (list && typeof Intl.supportedValuesOf === "function") {
    for (const zone of Intl.supportedValuesOf("timeZone")) {
      const option = document.createElement("option");
      option.value = zone;
      list.append(option);
    }
  }
}

export function deviceTimeZone() {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone;
  } catch {
    return "";
  }
}

export function setText(id, text) {
  const node = document.getElementById(id);
  if (node) node.textContent = text || "";
}

/** The width, in CSS pixels, a chart drawn by the server is shown at in `container` (the server takes 240 to 1200). */
export function chartWidth(container) {
  const style = getComputedStyle(container);
  const inner = container.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  return Math.max(240, Math.min(1200, Math.floor(inner || 600)));
}
