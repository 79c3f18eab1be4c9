// The status language (UI.md): one glyph, one colour and one word per look, used everywhere —
// tabs, sidebar, track, header. Never colour alone: the glyph and the word say the same. The core
// words it once (paseo-core's model/attention.rs `status_language`: each look's glyph and word,
// the buckets in urgency order) and the app info brings it at start (`setStatusLanguage`); the
// page holds none of it, so the window, the tray and every other client say the same.
import { h } from './dom.js';

let LOOKS = {};
let URGENCY = [];
let BUCKET_NAMES = new Set();
let NO_ACTIVITY = '';

/** Takes the core's status language (the app info's `statusLanguage`). */
export function setStatusLanguage(language) {
  LOOKS = language?.looks ?? {};
  URGENCY = Array.isArray(language?.urgency) ? language.urgency : [];
  BUCKET_NAMES = new Set(URGENCY);
  NO_ACTIVITY = language?.noActivity ?? '';
}

/** The bucket names, most urgent first (SPEC 6's order, 'done' last). */
export function urgency() {
  return URGENCY;
}

/** A look's word ("needs you", "finished", "canceled"…). */
export function lookWord(look) {
  return LOOKS[look]?.word ?? '';
}

/** A look's glyph. */
export function lookGlyph(look) {
  return LOOKS[look]?.glyph ?? '';
}

/**
 * The bucket an agent shows. The backend decides it by the one status rule (paseo-core's
 * model/status.rs) and sends it in every agent snapshot; the UI never recomputes it.
 */
export function agentBucket(agent) {
  return BUCKET_NAMES.has(agent.bucket) ? agent.bucket : 'done';
}

/**
 * What an agent's glyph and colour show: its bucket, or `canceled`/`denied`. The backend
 * decides it (paseo-core's model/attention.rs `look`) and sends it as the agent's `look`.
 */
export function agentLook(agent) {
  return LOOKS[agent.look] ? agent.look : agentBucket(agent);
}

/**
 * The word for an agent ("starting", "queued · 3rd", "needs you: approve start", "canceled"…):
 * the backend words it by its status rule (paseo-core's model/attention.rs) and sends it as the
 * agent's `statusWord`; the UI never recomputes it.
 */
export function agentLabel(agent) {
  const word = agent.statusWord;
  return typeof word === 'string' && word ? word : lookWord(agentBucket(agent));
}

export function isActive(agent) {
  return agent.status === 'running' || agent.status === 'initializing';
}

/** The word for a workspace's bucket (null: no agent contributes anything). */
export function workspaceLabel(bucket) {
  return bucket ? lookWord(bucket) : NO_ACTIVITY;
}

/** A glyph element for a look; the word goes in its accessible name. */
export function glyph(look, label) {
  const b = LOOKS[look] ? look : 'done';
  const word = label ?? lookWord(b);
  return h('span', { class: `glyph s-${b}`, role: 'img', 'aria-label': word, title: word }, lookGlyph(b));
}

/** Updates a glyph element made by `glyph` in place. */
export function updateGlyph(el, bucket, label) {
  const b = LOOKS[bucket] ? bucket : 'done';
  const cls = `glyph s-${b}`;
  if (el.className !== cls) el.className = cls;
  const word = label ?? lookWord(b);
  if (el.getAttribute('aria-label') !== word) {
    el.setAttribute('aria-label', word);
    el.setAttribute('title', word);
  }
  const mark = lookGlyph(b);
  if (el.textContent !== mark) el.textContent = mark;
}

/** An agent's display name: its title, else its provider and the start of its id. */
export function agentName(agent) {
  if (!agent) return 'unknown agent';
  // The core's name for it (model/attention.rs `display_name`), sent only when not its title.
  return agent.name ?? agent.title;
}

const POWER_TITLES = {
  full: 'Full power: acts without asking you',
  asks: 'Asks you before it acts',
};

/** Shows an agent's power (SPEC 14) in a small tag: a fact, not an alarm. */
export function setPower(el, power) {
  const p = POWER_TITLES[power] ? power : null;
  el.hidden = !p;
  if (!p) return;
  if (el.textContent !== p) el.textContent = p;
  if (el.getAttribute('title') !== POWER_TITLES[p]) el.setAttribute('title', POWER_TITLES[p]);
  if (el.dataset.power !== p) el.dataset.power = p;
}

const REACH_TITLES = {
  contained: "Contained: writes only its own folder and reads nothing of your secrets or of Paseo's data",
  unconfined: 'Unconfined: runs with your whole reach (your choice, or containment is off)',
};

/**
 * Whether an agent runs in its sandbox (SPEC 16): the backend decides (its `unconfined`: the
 * user's choice for it or its provider, or containment off) and the window only says it. Where
 * containment is unavailable agents show contained: they do not start, and say why.
 */
export function reachOf(agent) {
  return agent.unconfined ? 'unconfined' : 'contained';
}

/** Shows an agent's reach beside its power: "contained" or "unconfined". */
export function setReach(el, reach) {
  const r = REACH_TITLES[reach] ? reach : null;
  el.hidden = !r;
  if (!r) return;
  if (el.textContent !== r) el.textContent = r;
  if (el.getAttribute('title') !== REACH_TITLES[r]) el.setAttribute('title', REACH_TITLES[r]);
  if (el.dataset.reach !== r) el.dataset.reach = r;
}

/** What the agent changed on disk, compactly ("3 files +40 −2"); '' when nothing or not counted. */
export function changesText(agent) {
  const c = agent.changes;
  if (!c || !c.files) return '';
  return `${c.files} file${c.files === 1 ? '' : 's'} +${c.additions} −${c.deletions}`;
}
