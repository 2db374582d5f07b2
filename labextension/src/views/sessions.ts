/** The session picker (new / fork / resume) and the search box over the archive. */
import { SearchHitItem, SessionRow, SessionSummary } from '../protocol';
import { button, h, relativeTime } from './dom';

export type SessionActions = {
  list: () => void;
  resume: (id: string) => void;
  create: () => void;
  fork: () => void;
  search: (query: string) => void;
  jump: (hit: SearchHitItem) => void;
};

export class SessionBar {
  readonly node = h('div', { className: 'loom-SessionBar' });

  constructor(actions: SessionActions) {
    this._actions = actions;
    this._picker.className = 'loom-Sessions';
    this._picker.dataset.loom = 'sessions';
    this._picker.append(this._current, this._panel);
    this._picker.addEventListener('toggle', () => this._picker.open && actions.list());
    this._search.className = 'loom-Search-input';
    this._search.dataset.loom = 'search';
    this._search.type = 'search';
    this._search.placeholder = 'Search this notebook’s conversations';
    this._search.addEventListener('keydown', event => this._onSearchKey(event));
    this.node.append(this._picker, this._search, this._hits);
    this.showSession(null);
    this.showSessions([]);
    this.showHits(null);
  }

  showSession(session: SessionSummary | null): void {
    this._current.replaceChildren(
      h('span', {
        className: 'loom-Sessions-title',
        loom: 'session-title',
        text: session?.title || 'New conversation'
      }),
      h('span', { className: 'loom-Sessions-meta', text: session ? Private.counts(session) : '' })
    );
  }

  showSessions(rows: SessionRow[]): void {
    const tools = h('div', { className: 'loom-Sessions-tools' });
    tools.append(
      button('New', { loom: 'session-new' }, () => this._closeThen(this._actions.create)),
      button(
        'Fork',
        { loom: 'session-fork', title: 'A new session that starts with this one’s history' },
        () => this._closeThen(this._actions.fork)
      )
    );
    this._panel.replaceChildren(tools, ...rows.map(row => this._row(row)));
  }

  showHits(result: { query: string; hits: SearchHitItem[] } | null): void {
    this._hits.hidden = result === null;
    if (result === null) {
      return;
    }
    const rows = result.hits.map(hit => {
      const row = button(
        '',
        { loom: 'search-hit', data: { session: hit.session_id, turn: String(hit.turn) } },
        () => this._actions.jump(hit)
      );
      row.append(
        h('span', { className: 'loom-Hit-turn', text: `#${hit.turn} ${hit.role}` }),
        h('span', { className: 'loom-Hit-snippet', text: hit.snippet })
      );
      return row;
    });
    const empty = h('div', {
      className: 'loom-Hit-empty',
      text: `No matches for “${result.query}”`
    });
    this._hits.replaceChildren(...(rows.length > 0 ? rows : [empty]));
  }

  close(): void {
    this._picker.open = false;
  }

  /** Open the picker (it asks for the list), as `/sessions` does. */
  open(): void {
    this._picker.open = true;
  }

  /** Search as if typed in the search box (`/search WORDS`). */
  search(query: string): void {
    this._search.value = query;
    this._actions.search(query);
  }

  private _closeThen(action: () => void): void {
    this.close();
    action();
  }

  private _row(row: SessionRow): HTMLElement {
    const node = button(
      '',
      { loom: 'session', data: { session: row.id, current: String(row.current) } },
      () => {
        this.close();
        this._actions.resume(row.id);
      }
    );
    node.classList.add('loom-SessionRow');
    node.disabled = row.current;
    node.append(
      h('span', { className: 'loom-SessionRow-title', text: row.title || row.id.slice(0, 8) }),
      h('span', {
        className: 'loom-SessionRow-meta',
        text: `${Private.counts(row)} · ${relativeTime(row.last_active)}`
      })
    );
    return node;
  }

  private _onSearchKey(event: KeyboardEvent): void {
    if (event.key === 'Enter') {
      const query = this._search.value.trim();
      if (query === '') {
        this.showHits(null);
      } else {
        this._actions.search(query);
      }
    } else if (event.key === 'Escape') {
      this._search.value = '';
      this.showHits(null);
    }
  }

  private readonly _actions: SessionActions;
  private readonly _picker = document.createElement('details');
  private readonly _current = h('summary', { className: 'loom-Sessions-current' });
  private readonly _panel = h('div', { className: 'loom-Sessions-panel' });
  private readonly _search = document.createElement('input');
  private readonly _hits = h('div', { className: 'loom-Hits', loom: 'search-results' });
}

namespace Private {
  export function counts(session: { prompts: number; turns: number }): string {
    const prompts = `${session.prompts} prompt${session.prompts === 1 ? '' : 's'}`;
    return `${prompts} · ${session.turns} turns`;
  }
}
