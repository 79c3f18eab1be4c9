// Process output as a terminal shows it: the backend parsed its escape sequences into styled runs
// (`runs` on an output item, each `len` characters of its text); this turns them into spans. The
// 16 named colours come from the theme (readable on light and dark backgrounds); the 256-colour
// cube and 24-bit colours are used as given. Items stored before runs existed are plain text.
import { h } from '../dom.js';

/** The xterm 256-colour palette beyond the 16 named ones: a 6×6×6 cube, then 24 greys. */
function paletteRgb(n) {
  if (n >= 232) {
    const v = 8 + (n - 232) * 10;
    return `rgb(${v}, ${v}, ${v})`;
  }
  const i = n - 16;
  const step = (c) => (c === 0 ? 0 : 55 + c * 40);
  return `rgb(${step(Math.floor(i / 36))}, ${step(Math.floor(i / 6) % 6)}, ${step(i % 6)})`;
}

/** A run's colour as CSS: a theme variable for the named 16, else the colour itself. */
function cssColor(c) {
  if (Number.isInteger(c) && c >= 0 && c < 16) return `var(--ansi-${c})`;
  if (Number.isInteger(c) && c >= 16 && c < 256) return paletteRgb(c);
  if (Array.isArray(c) && c.length === 3 && c.every((v) => Number.isInteger(v) && v >= 0 && v < 256)) {
    return `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
  }
  return null;
}

function styled(text, run) {
  let fg = run.fg ?? null;
  let bg = run.bg ?? null;
  if (run.inverse) {
    [fg, bg] = [bg ?? 'fg', fg ?? 'bg'];
  }
  const color = fg === 'fg' ? 'var(--fg)' : fg === 'bg' ? 'var(--bg)' : fg !== null ? cssColor(fg) : null;
  const back = bg === 'fg' ? 'var(--fg)' : bg === 'bg' ? 'var(--bg)' : bg !== null ? cssColor(bg) : null;
  const classes = ['term'];
  if (run.bold) classes.push('term-bold');
  if (run.dim) classes.push('term-dim');
  if (run.italic) classes.push('term-italic');
  if (run.underline) classes.push('term-underline');
  if (run.strike) classes.push('term-strike');
  const span = h('span', { class: classes.join(' ') }, text);
  // Through the CSSOM: the page's CSP refuses inline style attributes.
  if (color) span.style.color = color;
  if (back) span.style.backgroundColor = back;
  return span;
}

function isPlain(run) {
  return (
    run.fg == null &&
    run.bg == null &&
    !run.bold &&
    !run.dim &&
    !run.italic &&
    !run.underline &&
    !run.inverse &&
    !run.strike
  );
}

/** The children of an output item's body: text nodes and styled spans. */
export function termText(text, runs) {
  if (!Array.isArray(runs) || runs.length === 0) return [text];
  const chars = Array.from(text);
  const out = [];
  let at = 0;
  for (const run of runs) {
    const len = Number(run?.len) || 0;
    if (len <= 0) continue;
    const piece = chars.slice(at, at + len).join('');
    at += len;
    if (!piece) break;
    out.push(isPlain(run) ? piece : styled(piece, run));
  }
  // Runs cover the text; should they fall short, the rest is still shown.
  if (at < chars.length) out.push(chars.slice(at).join(''));
  return out;
}
