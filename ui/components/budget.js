// Budgets (SPEC 18) in the agent pane: the header's "N of M tokens" (the budget over the agent's
// tree, from its whole snapshot's `treeBudget`) and "Budget…", which opens a small dialog to set,
// raise or clear a root's budget; and the words of a turn held on a budget, whose "Raise budget…"
// opens the same dialog for the agent whose budget was used up.
import { h, setAttr, setText } from '../dom.js';
import { closePopup, showPopup } from '../popup.js';
import { getAgent, setBudget } from '../backend.js';
import { fleet } from '../store.js';
import { agentName } from '../status.js';

const count = (n) => Number(n).toLocaleString('en-US');
const usd = (n) => `$${Number(n).toFixed(2)}`;

/** "1,200 of 5,000 tokens" (and the cost, when capped): what the tree used of its budget. */
export function budgetText(tb) {
  if (!tb?.budget) return '';
  const parts = [];
  if (tb.budget.treeTokens != null)
    parts.push(`${count(tb.used?.tokens ?? 0)} of ${count(tb.budget.treeTokens)} tokens`);
  if (tb.budget.treeCostUsd != null)
    parts.push(`${usd(tb.used?.costUsd ?? 0)} of ${usd(tb.budget.treeCostUsd)}`);
  return parts.join(' · ');
}

/** The header's budget: its words and the "Budget…" button (roots only: a child's is given by its creator). */
export class BudgetControl {
  constructor() {
    this.agentId = null;
    this.text = h('span', { class: 'meta budget-text', dataset: { testid: 'agent-budget' } });
    this.button = h(
      'button',
      {
        class: 'small ghost budget-open',
        type: 'button',
        dataset: { testid: 'budget-open' },
        'aria-haspopup': 'dialog',
        title: "Set, raise or clear this tree's budget: agents' turns past it wait for you",
        onclick: () => openBudget(this.button, this.agentId),
      },
      'Budget…',
    );
    this.el = h('span', { class: 'budget' }, this.text, this.button);
  }

  /** `agent`: its card; `detail`: its whole snapshot (with `treeBudget`), when the window has it. */
  render(agent, detail) {
    this.agentId = agent.id;
    const tb = detail?.treeBudget ?? null;
    const words = budgetText(tb);
    setText(this.text, words);
    this.text.hidden = !words;
    this.text.classList.toggle('reached', !!tb?.reached);
    setAttr(
      this.text,
      'title',
      tb
        ? `${tb.agentId === agent.id ? "This agent's" : 'The'} tree's budget${tb.reached ? ': used up, agents\u2019 next turns wait for you' : ''}`
        : null,
    );
    this.button.hidden = !!agent.parentAgentId;
  }
}

/** The dialog that sets, raises or clears `agentId`'s budget, at `anchor` (its budget read first). */
export async function openBudget(anchor, agentId) {
  if (!agentId) return;
  let own = null;
  try {
    own = (await getAgent(agentId))?.budget ?? null;
  } catch {
    // Shown empty: setting it still works, and an error then says why.
  }
  const agent = fleet.agents.get(agentId);
  const tokens = h('input', {
    type: 'number',
    min: '0',
    step: 'any',
    inputmode: 'numeric',
    placeholder: 'no cap',
    value: own?.treeTokens ?? '',
    dataset: { testid: 'budget-tokens' },
    'aria-label': 'Tokens the tree may use',
  });
  const cost = h('input', {
    type: 'number',
    min: '0',
    step: 'any',
    inputmode: 'decimal',
    placeholder: 'no cap',
    value: own?.treeCostUsd ?? '',
    dataset: { testid: 'budget-cost' },
    'aria-label': 'USD the tree may cost',
  });
  const error = h('div', {
    class: 'error budget-error',
    role: 'status',
    dataset: { testid: 'budget-error' },
  });
  const save = async (budget) => {
    for (const b of el.querySelectorAll('button')) b.disabled = true;
    try {
      await setBudget(agentId, budget);
      closePopup(true);
    } catch (e) {
      for (const b of el.querySelectorAll('button')) b.disabled = false;
      setText(error, e.message);
    }
  };
  const read = () => {
    const t = tokens.value.trim();
    const c = cost.value.trim();
    const budget = {};
    if (t) {
      const n = Number(t);
      if (!Number.isSafeInteger(n) || n < 0) return setText(error, 'Tokens: a whole number, 0 or more.');
      budget.treeTokens = n;
    }
    if (c) {
      const n = Number(c);
      if (!Number.isFinite(n) || n < 0) return setText(error, 'USD: a number, 0 or more.');
      budget.treeCostUsd = n;
    }
    save(Object.keys(budget).length ? budget : null);
  };
  const submit = h(
    'button',
    { type: 'submit', class: 'primary small', dataset: { testid: 'budget-save' } },
    own ? 'Raise' : 'Set',
  );
  const clear = own
    ? h(
        'button',
        { type: 'button', class: 'small', dataset: { testid: 'budget-clear' }, onclick: () => save(null) },
        'Clear',
      )
    : null;
  const close = h(
    'button',
    { type: 'button', class: 'small ghost', onclick: () => closePopup(true) },
    'Cancel',
  );
  const el = h(
    'form',
    {
      class: 'menu budget-dialog',
      role: 'dialog',
      'aria-label': 'Budget',
      dataset: { testid: 'budget-dialog' },
      onsubmit: (e) => {
        e.preventDefault();
        read();
      },
    },
    h('div', { class: 'budget-title' }, `Budget of ${agent ? agentName(agent) : 'this agent'}’s tree`),
    h(
      'div',
      { class: 'muted budget-help' },
      'Every agent below it counts, detached ones it started too. Past the budget, agents’ next turns wait for you; yours never do.',
    ),
    h('div', { class: 'budget-fields' }, h('label', {}, 'Tokens', tokens), h('label', {}, 'USD', cost)),
    error,
    h('div', { class: 'budget-actions' }, clear, h('span', { class: 'spacer' }), close, submit),
  );
  showPopup(anchor, el, { focus: tokens, align: 'right', place: 'auto' });
}

/** The words of a turn held on a budget: whose tree stopped, how much it used, the turn itself. */
export function budgetHeldText(agent, p) {
  const input = p.input || {};
  const caller = fleet.agents.get(input.caller);
  const who = h('b', {}, agentName(agent));
  const what = input.notice
    ? ['A finish notice for ', who, ' waits']
    : [h('b', {}, caller ? agentName(caller) : 'An agent'), ' asked ', who, ' for a turn; it waits'];
  return h(
    'div',
    { class: 'perm-text', dataset: { testid: 'permission-budget' } },
    h('div', {}, h('b', { dataset: { testid: 'budget-words' } }, p.toolName)),
    h(
      'div',
      { class: 'muted' },
      what,
      `: the tree${input.tree ? ` of “${input.tree}”` : ''} used its budget. Allow runs this one turn; raising the budget runs every turn that waits on it.`,
    ),
    h('pre', { class: 'perm-prompt mono', dataset: { testid: 'permission-prompt' } }, input.prompt ?? ''),
    h('div', { class: 'perm-error error' }),
  );
}

/** "Raise budget…" beside Allow and Deny: the dialog for the agent whose budget was used up. */
export function raiseButton(p) {
  const b = h(
    'button',
    {
      type: 'button',
      dataset: { testid: 'budget-raise' },
      'aria-haspopup': 'dialog',
      onclick: () => openBudget(b, p.input?.budgetAgentId),
    },
    'Raise budget…',
  );
  return b;
}
