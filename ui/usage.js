// Usage and cost as one compact line ("12.3k in · 1.2k out · $0.04"), with the whole breakdown
// for a tooltip; for shell and command agents, the last run's wall time and exit code instead.
// Costs are shown only when the agent's CLI reported them; nothing here knows a price.

/** 950 → "950", 12345 → "12.3k", 4500000 → "4.5M". */
export function compactCount(n) {
  const v = Number(n) || 0;
  if (v < 1000) return String(v);
  if (v < 1e6) return `${trim(v / 1000)}k`;
  return `${trim(v / 1e6)}M`;
}

function trim(x) {
  return x >= 100 ? String(Math.round(x)) : x.toFixed(1).replace(/\.0$/, '');
}

/** "$0.04"; below a cent, enough digits to be nonzero ("$0.0009"). */
export function money(usd) {
  const v = Number(usd) || 0;
  if (v === 0) return '$0';
  if (v >= 0.01) return `$${v.toFixed(2)}`;
  return `$${v.toPrecision(1)}`;
}

function hasUsage(u) {
  return !!u && ((u.turns ?? 0) > 0 || u.costUsd != null);
}

/** The compact line of a usage object, '' when there is none. */
export function usageText(u) {
  if (!hasUsage(u)) return '';
  const parts = [`${compactCount(u.inputTokens)} in`, `${compactCount(u.outputTokens)} out`];
  if (u.costUsd != null) parts.push(money(u.costUsd));
  return parts.join(' · ');
}

/** The whole breakdown, for a tooltip. */
export function usageTitle(u, what) {
  if (!hasUsage(u)) return '';
  const n = (x) => (Number(x) || 0).toLocaleString('en-US');
  const cost =
    u.costUsd != null ? `, $${Number(u.costUsd).toFixed(4)} as the CLI reported it` : ', no cost reported';
  return (
    `${what}: ${n(u.inputTokens)} input, ${n(u.outputTokens)} output, ${n(u.cacheReadTokens)} cache read, ` +
    `${n(u.cacheWriteTokens)} cache write tokens over ${n(u.turns)} turn${u.turns === 1 ? '' : 's'}${cost}`
  );
}

/** "1.2s · exit 0" for a shell or command agent's last turn, '' before its first. */
export function runText(run) {
  if (!run) return '';
  const ms = Number(run.wallMs) || 0;
  const time =
    ms < 1000
      ? `${ms}ms`
      : ms < 60000
        ? `${(ms / 1000).toFixed(1)}s`
        : `${Math.floor(ms / 60000)}m ${Math.round((ms % 60000) / 1000)}s`;
  return `${time} · ${run.exitCode == null ? 'killed by a signal' : `exit ${run.exitCode}`}`;
}

/**
 * What an agent's header shows: its own usage, then its tree's when descendants added to it;
 * or its last run. {text, title}
 */
export function agentUsage(agent) {
  const own = agent?.usage;
  const tree = agent?.treeUsage;
  if (hasUsage(own) || hasUsage(tree)) {
    const withTree = hasUsage(tree) && (tree.turns ?? 0) !== (own?.turns ?? 0);
    const text = [usageText(own) || 'no usage yet', withTree ? `with subagents ${usageText(tree)}` : null]
      .filter(Boolean)
      .join(' — ');
    const title = [usageTitle(own, 'This agent'), withTree ? usageTitle(tree, 'With its subagents') : null]
      .filter(Boolean)
      .join('\n');
    return { text, title };
  }
  const run = runText(agent?.lastRun);
  return { text: run, title: run ? 'The last turn: wall time and exit code' : '' };
}

/** What a track row or a list shows: the tree's usage (the agent's when it has none), or the run. */
export function treeUsageText(agent) {
  const u = hasUsage(agent?.treeUsage) ? agent.treeUsage : agent?.usage;
  return usageText(u) || runText(agent?.lastRun);
}
