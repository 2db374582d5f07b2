/**
 * The message box's completion logic: what the caret completes (a slash
 * command or an @-mention), the commands' filter, putting a pick into the text,
 * reading a sent slash command, and the store's command cards. The command table is
 * the kernel's (`welcome.commands`); the tests use today's, generated from the kernel's
 * registry into src/generated/lists.ts (tests/jupyter/test_slash_commands.py checks it).
 */
import { ChatStore, Entry, PAGE_COMMANDS } from '../src/store';
import { SLASH_COMMANDS } from '../src/generated/lists';
import { KernelMessage, SlashCommand } from '../src/protocol';
import {
  CompletionItem,
  applyCompletion,
  commandItems as itemsOf,
  commandUsage,
  completionContext,
  parseSlash as parseIn
} from '../src/views/completion';

const commandItems = (query: string): CompletionItem[] => itemsOf(SLASH_COMMANDS, query);
const parseSlash = (text: string): { name: string; args: string } | null => {
  const found = parseIn(SLASH_COMMANDS, text);
  return found === null ? null : { name: found.name, args: found.args };
};

/** A welcome with an idle kernel and no session, plus ``extra`` (1.1's ``commands``). */
const welcome = (extra: { commands?: SlashCommand[] }): KernelMessage =>
  ({
    seq: 1,
    kernel_session: 'k1',
    turn: null,
    type: 'welcome',
    session: null,
    history: [],
    more_before: null,
    busy: false,
    state: { state: 'idle', detail: '' },
    queue: [],
    subshells: false,
    tasks: [],
    options: null,
    approval: null,
    trust: null,
    has_key: true,
    ...extra
  }) as unknown as KernelMessage;

const at = (text: string): number => text.length;

describe('completionContext', () => {
  it('completes a command name while the text starts with a slash and the caret is in it', () => {
    expect(completionContext('/', 1)).toEqual({ kind: 'command', query: '', start: 0, end: 1 });
    expect(completionContext('/Se', 3)).toEqual({ kind: 'command', query: 'se', start: 0, end: 3 });
    expect(completionContext('/search churn', at('/search churn'))).toBeNull();
    expect(completionContext('a /se', 5)).toBeNull();
  });

  it('completes a mention after @ at the start or after a space or bracket', () => {
    expect(completionContext('@', 1)).toEqual({ kind: 'mention', query: '', start: 0, end: 1 });
    const text = 'plot (@sal';
    expect(completionContext(text, at(text))).toEqual({
      kind: 'mention',
      query: 'sal',
      start: 6,
      end: 10
    });
    expect(completionContext('look at @data/sa', 16)?.query).toBe('data/sa');
    expect(completionContext('see @cell:ab1', 13)?.query).toBe('cell:ab1');
  });

  it('ignores e-mail addresses, finished mentions and a caret elsewhere', () => {
    expect(completionContext('mail a@b.com', 12)).toBeNull();
    expect(completionContext('@df is big', 10)).toBeNull();
    expect(completionContext('@df and more', 3)?.query).toBe('df');
    expect(completionContext('@df and more', 0)).toBeNull();
  });
});

describe('commandItems', () => {
  it('lists every command with its description for a bare slash, in order', () => {
    const items = commandItems('');
    expect(items.map(i => i.label)).toEqual(SLASH_COMMANDS.map(c => c.name));
    expect(items.every(i => i.kind === 'command' && i.detail.length > 0)).toBe(true);
    expect(items.map(i => i.label)).toEqual(
      expect.arrayContaining(['new', 'fork', 'sessions', 'search', 'cost', 'model', 'effort'])
    );
    expect(items.map(i => i.label)).toEqual(
      expect.arrayContaining(['delegate', 'rebuild', 'export', 'mcp', 'help'])
    );
  });

  it('comes from the table generated from the kernel’s, and reads as its /help line', () => {
    // /help answers `- \`USAGE\` — DESCRIPTION` per row of the same table (kernel side)
    for (const [index, item] of commandItems('').entries()) {
      const command = SLASH_COMMANDS[index];
      const row = `/${item.label}${command.args === '' ? ' — ' : ' '}${item.detail}`;
      expect(row).toBe(`${commandUsage(command)} — ${command.description}`);
    }
    const rebuild = SLASH_COMMANDS.find(c => c.name === 'rebuild')!;
    expect(commandUsage(rebuild)).toBe('/rebuild NAME [NAME ...] [--yes]');
    expect(rebuild).toMatchObject({ front: false });
    expect(SLASH_COMMANDS.filter(c => c.front).map(c => c.name)).toEqual([
      'new',
      'fork',
      'sessions',
      'search'
    ]);
  });

  it('completes /reb to /rebuild, with its arguments', () => {
    const [item] = commandItems('reb');
    expect(commandItems('reb')).toHaveLength(1);
    expect(item.label).toBe('rebuild');
    expect(item.detail).toMatch(/^NAME \[NAME \.\.\.\] \[--yes\] — /);
    const context = completionContext('/reb', 4)!;
    expect(applyCompletion('/reb', context, item)).toEqual({ text: '/rebuild ', caret: 9 });
    expect(parseSlash('/rebuild total --yes')).toEqual({ name: 'rebuild', args: 'total --yes' });
  });

  it('filters by prefix as the person types', () => {
    expect(commandItems('se').map(i => i.label)).toEqual(['sessions', 'search']);
    expect(commandItems('M').map(i => i.label)).toEqual(['model', 'mcp']);
    expect(commandItems('zz')).toEqual([]);
  });
});

describe('applyCompletion', () => {
  const variable: CompletionItem = { kind: 'variable', label: 'sales', detail: 'DataFrame' };

  it('replaces the command being typed by the whole command and a space', () => {
    const context = completionContext('/ses', 4)!;
    const item = commandItems('ses')[0];
    expect(applyCompletion('/ses', context, item)).toEqual({ text: '/sessions ', caret: 10 });
  });

  it('replaces the mention token, keeping the text around it', () => {
    const text = 'plot @sa by region';
    const context = completionContext(text, 8)!;
    expect(applyCompletion(text, context, variable)).toEqual({
      text: 'plot @sales by region',
      caret: 12
    });
  });

  it('completes a whole token even when the caret is inside it', () => {
    const text = 'plot @saXYZ';
    const context = completionContext(text, 8)!;
    expect(applyCompletion(text, context, variable).text).toBe('plot @sales ');
  });

  it('leaves the caret after a folder so the person can go on into it', () => {
    const folder: CompletionItem = { kind: 'file', label: 'data/', detail: 'folder' };
    const context = completionContext('read @da', 8)!;
    expect(applyCompletion('read @da', context, folder)).toEqual({
      text: 'read @data/',
      caret: 11
    });
  });
});

describe('parseSlash', () => {
  it('reads a known command and its arguments', () => {
    expect(parseSlash('/mcp')).toEqual({ name: 'mcp', args: '' });
    expect(parseSlash('  /delegate clean the data\nthen plot  ')).toEqual({
      name: 'delegate',
      args: 'clean the data\nthen plot'
    });
    expect(parseSlash('/Search churn')).toEqual({ name: 'search', args: 'churn' });
  });

  it('leaves text that is no known command to the model', () => {
    expect(parseSlash('/usr/bin/python is old')).toBeNull();
    expect(parseSlash('/nope')).toBeNull();
    expect(parseSlash('what does /cost do?')).toBeNull();
  });
});

describe('the command table of the kernel', () => {
  it('comes in its welcome: before it nothing completes, after it what this kernel offers', () => {
    const store = new ChatStore();
    expect(itemsOf(store.commands, '')).toEqual([]);
    expect(parseIn(store.commands, '/cost')).toBeNull(); // unknown yet: a message
    const mine: SlashCommand[] = [
      { name: 'cost', args: '', description: 'tokens and cost', front: false },
      { name: 'frobnicate', args: 'X', description: 'a newer kernel’s', front: false }
    ];
    store.apply(welcome({ commands: mine }));
    expect(itemsOf(store.commands, 'fr').map(i => i.label)).toEqual(['frobnicate']);
    expect(parseIn(store.commands, '/frobnicate now')).toMatchObject({ args: 'now' });
    expect(parseIn(store.commands, '/rebuild x')).toBeNull(); // not this kernel's
  });

  it('from a 1.0 kernel (no table) is the commands the page answers itself', () => {
    const store = new ChatStore();
    store.apply(welcome({})); // a 1.0 welcome has no `commands`
    expect(store.commands).toBe(PAGE_COMMANDS);
    expect(parseIn(store.commands, '/new')).toMatchObject({ name: 'new' });
    expect(parseIn(store.commands, '/cost')).toBeNull(); // that kernel's own: unknown here
    // the same rows as today's kernel marks `front`
    expect(PAGE_COMMANDS).toEqual(SLASH_COMMANDS.filter(c => c.front));
  });
});

describe('command results in the store', () => {
  it('become notice entries that name their command, warnings when not ok', () => {
    const store = new ChatStore();
    const added: Entry[] = [];
    store.changed.connect((_, change) => change.kind === 'added' && added.push(change.entry));
    const result = (seq: number, ok: boolean): KernelMessage => ({
      seq,
      kernel_session: 'k1',
      turn: null,
      type: 'command_result',
      name: 'mcp',
      text: '| server |',
      ok
    });
    expect(store.apply(result(3, true))).toBe(true);
    expect(store.apply(result(3, false))).toBe(true); // a reply: never dropped as seen
    expect(added).toEqual([
      expect.objectContaining({ kind: 'notice', command: 'mcp', level: 'info' }),
      expect.objectContaining({ kind: 'notice', command: 'mcp', level: 'warning' })
    ]);
    expect(store.lastSeq).toBeNull();
  });
});
