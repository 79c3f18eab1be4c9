// Boots the shell: asks the backend who it is, then renders the sidebar, tabs, pane and status.
import * as backend from './backend.js';
import { renderSidebar } from './components/sidebar.js';
import { renderTabStrip } from './components/tab-strip.js';
import { renderOverview, renderOverviewError } from './components/overview-pane.js';
import { renderStatus } from './components/status-bar.js';

const $ = (testid) => document.querySelector(`[data-testid="${testid}"]`);

async function boot() {
  const status = $('status-bar');
  renderStatus(status, { kind: 'connecting' });
  renderTabStrip($('tab-strip'));
  try {
    const info = await backend.appInfo();
    renderSidebar($('sidebar'), info);
    renderOverview($('pane-region'), info);
    renderStatus(status, { kind: 'ready', info });
    document.body.dataset.ready = 'true';
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    renderOverviewError($('pane-region'), message);
    renderStatus(status, { kind: 'error', message });
    document.body.dataset.ready = 'error';
  }
}

boot();
