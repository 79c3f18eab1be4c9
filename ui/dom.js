// A tiny element builder so components stay declarative without a framework or a build step.

/**
 * h('div', { class: 'x', dataset: { testid: 'y' }, onclick: f }, child, 'text', [more])
 * Attributes starting with "on" become listeners; null/false attributes and children are skipped.
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === 'dataset') Object.assign(el.dataset, value);
    else if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  el.append(...flatten(children));
  return el;
}

function flatten(children) {
  return children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false)
    .map((c) => (c instanceof Node ? c : document.createTextNode(String(c))));
}

/** Replaces all children of `el`. */
export function mount(el, ...children) {
  el.replaceChildren(...flatten(children));
}
