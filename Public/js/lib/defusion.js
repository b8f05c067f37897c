// The defusion exercise: a thought shown as words on a coloured background that the person moves, resizes, turns
// and restyles, by touch, with buttons or with the keyboard. The arithmetic lives here, apart from the page, so
// each way of changing the words does exactly the same.

/** Backgrounds, each with text colours that keep a contrast of at least 4.5:1 on it. */
export const PALETTE = [
  { background: "#1d3557", inks: ["#ffffff", "#ffd166", "#a8dadc"] },
  { background: "#ffd166", inks: ["#1a1a1a", "#5a189a", "#7a1f1f"] },
  { background: "#2a9d8f", inks: ["#000000"] },
  { background: "#f1faee", inks: ["#1d3557", "#7a1f1f", "#1a1a1a"] },
  { background: "#5a189a", inks: ["#ffffff", "#ffd166"] },
  { background: "#ef476f", inks: ["#000000"] },
];

export const FONTS = [
  "system-ui, sans-serif",
  "Georgia, 'Times New Roman', serif",
  "ui-monospace, 'Courier New', monospace",
  "'Comic Sans MS', 'Comic Neue', cursive",
  "Impact, 'Arial Black', sans-serif",
];

export const LIMITS = { minScale: 0.4, maxScale: 3, step: 24, scaleStep: 0.15, turnStep: 15 };

/** Where the words start: in the middle, upright, at their size, on a background chosen by `random` (0 ≤ r < 1). */
export function initialState(random = Math.random) {
  const palette = Math.floor(random() * PALETTE.length) % PALETTE.length;
  return { x: 0, y: 0, scale: 1, rotation: 0, font: 0, palette, ink: 0 };
}

/** Keeps the words' middle inside the stage (`bounds` = half its width and height), on whole pixels and degrees, and their size within limits. */
export function clamp(state, bounds) {
  return {
    ...state,
    x: Math.round(Math.max(-bounds.x, Math.min(bounds.x, state.x))),
    y: Math.round(Math.max(-bounds.y, Math.min(bounds.y, state.y))),
    scale: Math.max(LIMITS.minScale, Math.min(LIMITS.maxScale, state.scale)),
    rotation: ((Math.round(state.rotation) % 360) + 540) % 360 - 180,
  };
}

/** One step of a button or key: move, resize, turn, or the next font or colours. */
export function applyTool(state, tool) {
  const next = { ...state };
  switch (tool) {
    case "left": next.x -= LIMITS.step; break;
    case "right": next.x += LIMITS.step; break;
    case "up": next.y -= LIMITS.step; break;
    case "down": next.y += LIMITS.step; break;
    case "bigger": next.scale += LIMITS.scaleStep; break;
    case "smaller": next.scale -= LIMITS.scaleStep; break;
    case "turnLeft": next.rotation -= LIMITS.turnStep; break;
    case "turnRight": next.rotation += LIMITS.turnStep; break;
    case "font": next.font = (state.font + 1) % FONTS.length; break;
    case "colour":
      // The next text colour on this background, then the next background.
      next.ink = state.ink + 1;
      if (next.ink >= PALETTE[state.palette].inks.length) {
        next.ink = 0;
        next.palette = (state.palette + 1) % PALETTE.length;
      }
      break;
    default: return state;
  }
  return next;
}

/** The tool a key stands for on the words, or null. */
export function toolForKey(key) {
  return (
    {
      ArrowLeft: "left",
      ArrowRight: "right",
      ArrowUp: "up",
      ArrowDown: "down",
      "+": "bigger",
      "=": "bigger",
      "-": "smaller",
      "[": "turnLeft",
      "]": "turnRight",
      f: "font",
      F: "font",
      c: "colour",
      C: "colour",
    }[key] || null
  );
}

/**
 * Two fingers: the size follows the distance between them and the angle their turn, from where they started
 * (`from`, two points) to where they are (`to`), applied to the state the gesture began with.
 */
export function pinch(start, from, to) {
  const distance = (a, b) => Math.hypot(b.x - a.x, b.y - a.y);
  const angle = (a, b) => (Math.atan2(b.y - a.y, b.x - a.x) * 180) / Math.PI;
  const before = distance(from[0], from[1]);
  if (before < 1) return start;
  return {
    ...start,
    scale: start.scale * (distance(to[0], to[1]) / before),
    rotation: start.rotation + (angle(to[0], to[1]) - angle(from[0], from[1])),
  };
}

/** The CSS transform that shows a state, the words' middle at the stage's. */
export function transform(state) {
  return `translate(-50%, -50%) translate(${state.x}px, ${state.y}px) rotate(${state.rotation}deg) scale(${state.scale})`;
}
