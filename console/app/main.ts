/**
 * The Sluice web console: one page over the public v1 API on its own origin (the local
 * runtime, or `sluice console`, which signs for a deployed stack).
 */
import { saveToken, savedToken } from './api.js';
import { field, h, input, say, statusLine } from './dom.js';
import { groupView } from './group.js';
import { lookupView } from './lookup.js';
import { overviewView, POLL_MS } from './overview.js';
import { sendView } from './send.js';
import { transactionsView } from './transactions.js';

const tokenLine = statusLine();
const tokenInput = input('token', { type: 'password', autocomplete: 'current-password' });
const tokenForm = h('form', { class: 'inline', 'aria-label': 'Access token' },
  field('Bearer token (local runtime with SLUICE_API_TOKEN; kept in this tab only)', tokenInput),
  h('button', { type: 'submit' }, 'Use token'));
tokenForm.addEventListener('submit', (event) => {
  event.preventDefault();
  saveToken(tokenInput.value.trim());
  tokenInput.value = '';
  say(tokenLine, savedToken() ? 'Token saved for this tab.' : 'Token cleared.');
  void overview.refresh();
});
say(tokenLine, savedToken() ? 'A token is saved for this tab.' : 'No token: fine for a local runtime without SLUICE_API_TOKEN, or behind `sluice console`.');

const lookup = lookupView();
const overview = overviewView((name) => void group.open(name));
const group = groupView(lookup, () => void overview.refresh());

document.body.append(
  h('a', { href: '#main', class: 'skip' }, 'Skip to content'),
  h('header', {}, h('h1', {}, 'Sluice console'), tokenForm, tokenLine),
  h('main', { id: 'main' }, overview.element, group.element, sendView(() => void overview.refresh()), lookup.element, transactionsView()),
);

// Live figures: poll while the tab is visible, pause while it is hidden, refresh at once on return.
let timer: ReturnType<typeof setInterval> | undefined;
function poll() {
  clearInterval(timer);
  timer = undefined;
  if (document.hidden) return;
  void overview.refresh();
  timer = setInterval(() => void overview.refresh(), POLL_MS);
}
document.addEventListener('visibilitychange', poll);
poll();
