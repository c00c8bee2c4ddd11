/**
 * Topics and groups with their figures (backlog, in flight, oldest age, dead letters),
 * polled every few seconds while the tab is visible; forms to create a topic and a group.
 */
import type { GroupDetail, Topic, TopicDetail } from '../../lib/client/types.js';
import { api, ApiProblem, enc, listAll } from './api.js';
import { field, h, input, say, select, show, statusLine, table, values } from './dom.js';

export const POLL_MS = 3000;

/** Ages as people read them: 42 s, 3 min, 2 h. */
export function age(seconds: number): string {
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)} min`;
  return `${Math.floor(seconds / 3600)} h`;
}

export function overviewView(onSelectGroup: (group: string) => void): { element: HTMLElement; refresh: () => Promise<void> } {
  const topics = h('div');
  const groups = h('div');
  const line = statusLine();
  /** What the last refresh could not read (cleared by the next one that reads everything). */
  const pollLine = statusLine();
  const updated = h('p', { class: 'muted' });

  const topicForm = h('form', { class: 'inline', 'aria-label': 'Create a topic' },
    field('Topic name', input('name', { required: true, pattern: '[A-Za-z0-9._-]{1,128}' })),
    field('Type', select('type', ['standard', 'fifo'])),
    h('button', { type: 'submit' }, 'Create topic'));
  const groupForm = h('form', { class: 'inline', 'aria-label': 'Create a group' },
    field('Group name', input('name', { required: true, pattern: '[A-Za-z0-9._-]{1,128}' })),
    field('Subscribed topics (comma-separated)', input('topics', { required: true })),
    field('Max deliveries', input('maxDeliveries', { type: 'number', min: 1, max: 1000, placeholder: '16' })),
    field('Visibility timeout (s)', input('visibility', { type: 'number', min: 1, max: 43200, placeholder: '30' })),
    h('button', { type: 'submit' }, 'Create group'));

  topicForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const v = values(topicForm);
    void run(`Topic ${v.name} created.`, () => api('PUT', `/v1/topics/${enc(v.name ?? '')}`, { type: v.type }));
  });
  groupForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const v = values(groupForm);
    const subscriptions = (v.topics ?? '').split(',').map((t) => t.trim()).filter(Boolean).map((topic) => ({ topic }));
    const body = {
      subscriptions,
      ...(v.maxDeliveries ? { maxDeliveries: Number(v.maxDeliveries) } : {}),
      ...(v.visibility ? { visibilityTimeoutSeconds: Number(v.visibility) } : {}),
    };
    void run(`Group ${v.name} created.`, () => api('PUT', `/v1/groups/${enc(v.name ?? '')}`, body));
  });

  async function run(done: string, action: () => Promise<unknown>) {
    try {
      await action();
      say(line, done);
      await refresh();
    } catch (error) {
      say(line, String((error as Error).message), 'error');
    }
  }

  let busy = false;
  async function refresh(): Promise<void> {
    if (busy) return; // a slow server must not pile polls up
    busy = true;
    try {
      const [topicList, groupList] = await Promise.all([listAll<Topic>('/v1/topics', 'topics'), listAll<{ name: string }>('/v1/groups', 'groups')]);
      const [topicDetails, groupDetails] = await Promise.all([
        Promise.all(topicList.map((t) => api<TopicDetail>('GET', `/v1/topics/${enc(t.name)}`).catch(() => null))),
        Promise.all(groupList.map((g) => api<GroupDetail>('GET', `/v1/groups/${enc(g.name)}`).catch(() => null))),
      ]);
      show(topics, table('Topics', ['Topic', 'Type', 'Messages (approx.)', 'Groups'],
        topicDetails.filter((t): t is TopicDetail => t !== null).map((t) => [t.name, t.type, t.approximateMessages ?? '–', t.subscribers.join(', ')])));
      show(groups, table('Groups', ['Group', 'Topics', 'Backlog', 'In flight', 'Pending', 'Oldest', 'Dead letters', ''],
        groupDetails.filter((g): g is GroupDetail => g !== null).map((g) => [
          g.name,
          g.subscriptions.map((s) => s.topic).join(', '),
          h('span', { 'data-figure': 'backlog', 'data-group': g.name }, g.backlog),
          g.inFlight,
          g.pending,
          age(g.oldestMessageAgeSeconds),
          g.deadLettered,
          h('button', { type: 'button', class: 'small', onclick: () => onSelectGroup(g.name) }, `Open ${g.name}`),
        ])));
      const unread = [...topicList.filter((_, i) => !topicDetails[i]).map((t) => `topic ${t.name}`), ...groupList.filter((_, i) => !groupDetails[i]).map((g) => `group ${g.name}`)];
      if (unread.length) say(pollLine, `Could not read ${unread.join(', ')}: not shown.`, 'error');
      else say(pollLine, '');
      updated.textContent = `Updated ${new Date().toLocaleTimeString()}; refreshed every ${POLL_MS / 1000} s while this tab is visible.`;
    } catch (error) {
      say(pollLine, error instanceof ApiProblem && error.status === 401 ? 'Unauthorized: enter the token above.' : String((error as Error).message), 'error');
    } finally {
      busy = false;
    }
  }

  const element = h('section', { 'aria-labelledby': 'overview-h' },
    h('h2', { id: 'overview-h' }, 'Topics and groups'), updated, pollLine, line, topics, groups, topicForm, groupForm);
  return { element, refresh };
}
