// Status line: backend state, process and fleet counts, always visible at the bottom.
import { h, mount } from '../dom.js';
import { agentBucket } from '../status.js';
import { countsLine } from './counts-line.js';

export function renderStatus(el, state) {
  el.dataset.state = state.kind;
  if (state.kind === 'connecting') {
    mount(el, h('span', { dataset: { testid: 'status-line' } }, 'Connecting to the backend…'));
    return;
  }
  if (state.kind === 'error') {
    mount(
      el,
      h(
        'span',
        { class: 'error', dataset: { testid: 'status-line' } },
        `Backend unavailable: ${state.message}`,
      ),
    );
    return;
  }
  const { info, counts } = state;
  // The fleet's line as the backend words it (paseo-core model/tally.rs); its "needs you" and
  // "failed" list those agents.
  const line = countsLine(
    counts.tally.line,
    (kind) => state.agents().filter((a) => !a.host && agentBucket(a) === kind),
    state.open,
  );
  // Each connected host's own line after this machine's (SPEC 17), as the tray counts them.
  const hosts = (state.hosts ?? [])
    .filter((host) => host.state === 'connected' && host.counts?.tally?.line?.length)
    .map((host) =>
      h(
        'span',
        { class: 'status-host', dataset: { testid: 'status-host', host: host.name } },
        ` · on ${host.name}: `,
        countsLine(
          // Short beside this machine's: what is happening there, and its total.
          host.counts.tally.line.filter((p) => p.kind === 'total' || p.count > 0),
          (kind) => state.agents().filter((a) => a.host === host.name && agentBucket(a) === kind),
          state.open,
        ),
      ),
    );
  mount(
    el,
    h(
      'span',
      { dataset: { testid: 'status-line' } },
      h('span', { class: `dot ${info.backend}`, 'aria-hidden': 'true' }, '●'),
      ` Backend ${info.backend} · pid ${info.pid} · `,
      line,
      hosts,
    ),
    saidNote(state.said, state.open),
    h(
      'span',
      { class: 'muted status-right' },
      containmentNote(state.containment),
      state.mcpUrl
        ? h(
            'span',
            { title: 'Where agents reach the paseo MCP server', dataset: { testid: 'mcp-url' } },
            `MCP ${state.mcpUrl.replace(/^https?:\/\//, '')}`,
          )
        : null,
      // Passing news needs the room more than the version (also in the sidebar's header).
      state.said ? null : h('span', {}, `${info.product} ${info.version}`),
    ),
  );
}

/**
 * Says how agents are contained here (SPEC 16: the app says at start which engine works): a quiet
 * "Contained · bubblewrap" when it works, a caution when it is off or unavailable.
 */
function containmentNote(c) {
  if (!c) return null;
  if (c.state === 'on') {
    return h(
      'span',
      {
        class: 'muted containment-ok',
        title: c.message,
        dataset: { testid: 'containment-status', state: c.state },
      },
      `Contained · ${c.engine}`,
    );
  }
  const word = c.state === 'off' ? 'Containment off' : 'Containment unavailable';
  return h(
    'span',
    {
      class: 'containment-warning',
      title: c.message,
      dataset: { testid: 'containment-status', state: c.state },
    },
    word,
  );
}

/**
 * Passing news (an idle agent closed to make room for a waiting start, SPEC 14): said at once
 * where the user looks for the fleet's state, and a link to the agent it concerns, whose
 * timeline keeps the whole story.
 */
function saidNote(said, open) {
  if (!said) return null;
  return h(
    'button',
    {
      class: 'status-said',
      type: 'button',
      title: `${said.message}. It resumes when you use it: open it.`,
      dataset: { testid: 'status-said', agentId: said.agentId },
      onclick: () => open?.(said.agentId),
    },
    said.message,
  );
}
