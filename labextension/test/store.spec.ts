/**
 * The conversation reducer: replay by `seq`, reopening after a gap or a
 * restart, one entry per turn piece, and events that come twice or late.
 */
import { Change, ChatStore, Entry, ToolEntry } from '../src/store';
import {
  ApprovalModeView,
  HistoryEntry,
  KernelBody,
  KernelMessage,
  ModelOptions,
  TrustView
} from '../src/protocol';

/** One kernel message: a body stamped as the kernel's outbox stamps it (its own turn wins). */
function msg(seq: number, body: KernelBody, kernelSession = 'k1'): KernelMessage {
  return { seq, kernel_session: kernelSession, turn: null, ...body };
}

const text = (turn: number, delta: string): KernelBody => ({ type: 'text', turn, delta });
const started = (turn: number, words: string): KernelBody => ({
  type: 'turn_started',
  turn,
  source: 'sidebar',
  text: words,
  client_id: null
});
const done = (turn: number, answer: string): KernelBody => ({
  type: 'turn_done',
  turn,
  stop_reason: 'end_turn',
  text: answer
});
const toolInput = (turn: number, partial: string): KernelBody => ({
  type: 'tool_input',
  turn,
  call_id: 'c1',
  name: 'run_python',
  partial
});
const toolStarted = (turn: number, input: Record<string, unknown>): KernelBody => ({
  type: 'tool_started',
  turn,
  call_id: 'c1',
  name: 'run_python',
  summary: 'run_python',
  input
});
const toolFinished = (turn: number, result: string): KernelBody => ({
  type: 'tool_finished',
  turn,
  call_id: 'c1',
  name: 'run_python',
  summary: 'ran 1 line',
  is_error: false,
  duration_ms: 12,
  result,
  input: { code: '1 + 1' }
});
/** A history item (a person's message or an answer) without thinking. */
const item = (
  kind: 'user' | 'assistant',
  turn: number,
  words: string,
  thought = '',
  redacted = false
): HistoryEntry => ({ kind, turn, text: words, thinking: thought, thinking_redacted: redacted });
const thinking = (turn: number, delta: string, redacted = false): KernelBody => ({
  type: 'thinking',
  turn,
  delta,
  redacted
});
const options = (effort: ModelOptions['effort'], levels: string[] = ['low', 'high', 'max']) =>
  ({
    model: 'claude-sonnet-5-5',
    thinking: 'off',
    effort,
    thinking_supported: true,
    effort_levels: levels
  }) as ModelOptions;
const notice = (message: string): KernelBody => ({ type: 'notice', level: 'info', message });

function welcome(
  history: HistoryEntry[] = [],
  opts: ModelOptions | null = null,
  approval: ApprovalModeView | null = null,
  trust: TrustView | null = null,
  hasKey = true
): KernelBody {
  return {
    type: 'welcome',
    session: null,
    history,
    more_before: null,
    busy: false,
    state: { type: 'status', state: 'idle', detail: '' },
    queue: [],
    subshells: true,
    tasks: [],
    options: opts,
    approval,
    trust,
    has_key: hasKey
  };
}

/** A store fed `messages` in order, and what each `apply` answered. */
function fed(messages: KernelMessage[]): { store: ChatStore; applied: boolean[] } {
  const store = new ChatStore();
  return { store, applied: messages.map(message => store.apply(message)) };
}

/** The entries as short strings, in order. */
function shown(store: ChatStore): string[] {
  return store.entries.map(label);
}

function label(entry: Entry): string {
  switch (entry.kind) {
    case 'user':
    case 'assistant':
      return `${entry.kind}:${entry.text}`;
    case 'tool':
      return `tool:${entry.name}`;
    case 'approval':
      return `approval:${entry.tool}`;
    case 'notice':
      return `notice:${entry.message}`;
    case 'thinking':
      return `thinking${entry.streaming ? '…' : ''}${entry.redacted ? '[redacted]' : ''}:${entry.text}`;
  }
}

function recorded(store: ChatStore): Change[] {
  const seen: Change[] = [];
  store.changed.connect((_, change) => seen.push(change));
  return seen;
}

function onlyTool(store: ChatStore): ToolEntry {
  const tools = store.entries.filter((entry): entry is ToolEntry => entry.kind === 'tool');
  expect(tools).toHaveLength(1);
  return tools[0];
}

describe('replay by seq', () => {
  it('applies each event once and remembers the last seq', () => {
    const { store, applied } = fed([
      msg(1, started(1, 'hi')),
      msg(2, text(1, 'Hel')),
      msg(2, text(1, 'Hel')),
      msg(3, text(1, 'lo'))
    ]);
    expect(applied).toEqual([true, true, false, true]);
    expect(shown(store)).toEqual(['user:hi', 'assistant:Hello']);
    expect(store.lastSeq).toBe(3);
  });

  it('adds only the missing events from a replay that overlaps what the page has', () => {
    const { store } = fed([msg(1, started(1, 'hi')), msg(2, text(1, 'a')), msg(3, text(1, 'b'))]);
    const replay = [2, 3, 4, 5].map(seq => msg(seq, text(1, String(seq))));
    expect(replay.map(message => store.apply(message))).toEqual([false, false, true, true]);
    expect(shown(store)).toEqual(['user:hi', 'assistant:ab45']);
    expect(store.lastSeq).toBe(5);
  });

  it('always applies replies, which carry the current seq without advancing it', () => {
    const { store } = fed([msg(1, started(1, 'hi')), msg(2, text(1, 'a'))]);
    expect(store.apply(msg(2, notice('one')))).toBe(true);
    expect(store.apply(msg(2, notice('two')))).toBe(true);
    expect(store.apply(msg(2, { type: 'sessions', items: [] }))).toBe(true);
    expect(store.lastSeq).toBe(2);
    expect(shown(store)).toEqual(['user:hi', 'assistant:a', 'notice:one', 'notice:two']);
  });

  it('tells a broadcast notice from a reply by the envelope: only the broadcast is numbered', () => {
    const { store } = fed([msg(1, started(1, 'hi')), msg(2, text(1, 'a'))]);
    const broadcast = { ...msg(3, notice('restarted the server')), reply_to: null };
    expect(store.apply(broadcast)).toBe(true);
    expect(store.lastSeq).toBe(3); // a reconnect asks for what came after it
    expect(store.apply(broadcast)).toBe(false); // replayed: shown once
    expect(store.apply({ ...msg(3, notice('to this page')), reply_to: '' })).toBe(true);
    expect(store.apply({ ...msg(3, notice('to this page')), reply_to: 'r1' })).toBe(true);
    expect(store.lastSeq).toBe(3);
    expect(store.apply({ ...msg(3, { type: 'sessions', items: [] }), reply_to: '' })).toBe(true);
    expect(shown(store)).toEqual([
      'user:hi',
      'assistant:a',
      'notice:restarted the server',
      'notice:to this page',
      'notice:to this page'
    ]);
  });

  it("accepts the running turn's events after a welcome, though their seq is lower", () => {
    const { store } = fed([msg(9, text(1, 'old')), msg(10, welcome())]);
    expect(store.apply(msg(7, started(2, 'go')))).toBe(true);
    expect(store.apply(msg(8, text(2, 'so far')))).toBe(true);
    expect(store.apply(msg(8, text(2, 'so far')))).toBe(false);
    expect(shown(store)).toEqual(['user:go', 'assistant:so far']);
  });
});

describe('reload', () => {
  it('continues the same conversation when the reopened comm replays what it missed', () => {
    const { store } = fed([msg(1, started(1, 'hi')), msg(2, text(1, 'Hel'))]);
    const resume = { since_seq: store.lastSeq, kernel_session: store.kernelSession };
    expect(resume).toEqual({ since_seq: 2, kernel_session: 'k1' });
    [msg(3, text(1, 'lo')), msg(4, done(1, 'Hello'))].forEach(message => store.apply(message));
    expect(shown(store)).toEqual(['user:hi', 'assistant:Hello']);
    expect(store.entries[1]).toMatchObject({ kind: 'assistant', streaming: false });
  });

  it("rebuilds the entries from a welcome's history after a gap", () => {
    const { store } = fed([msg(1, started(1, 'stale')), msg(2, text(1, 'x'))]);
    const changes = recorded(store);
    const history: HistoryEntry[] = [
      item('user', 1, 'hi'),
      {
        kind: 'tool',
        turn: 2,
        call_id: 'c9',
        name: 'read_file',
        input: { path: 'a.csv' },
        summary: 'read a.csv',
        is_error: false,
        result: 'x,y'
      },
      item('assistant', 3, 'Hello')
    ];
    store.apply(msg(50, welcome(history)));
    expect(shown(store)).toEqual(['user:hi', 'tool:read_file', 'assistant:Hello']);
    expect(onlyTool(store)).toMatchObject({ summary: 'read a.csv', result: 'x,y', done: true });
    expect(changes.map(change => change.kind)).toContain('reset');
    expect(store.lastSeq).toBeNull();
  });

  it('takes a restarted kernel, which numbers from 1 again, for a new stream', () => {
    const { store } = fed([msg(40, started(1, 'before')), msg(41, text(1, 'x'))]);
    expect(store.apply(msg(0, welcome(), 'k2'))).toBe(true);
    expect(store.apply(msg(1, started(1, 'after'), 'k2'))).toBe(true);
    expect(store.kernelSession).toBe('k2');
    expect(shown(store)).toEqual(['user:after']);
  });

  it('takes a low seq from a restarted kernel as new even before its welcome', () => {
    const { store } = fed([msg(40, started(1, 'before'))]);
    expect(store.apply(msg(1, { type: 'status', state: 'thinking', detail: '' }, 'k2'))).toBe(true);
    expect(store.state).toBe('thinking');
    expect(store.lastSeq).toBe(1);
  });

  it('prepends older history pages, skipping entries already shown', () => {
    const { store } = fed([msg(1, welcome([item('user', 5, 'newer')]))]);
    const page: HistoryEntry[] = [item('user', 3, 'older'), item('user', 5, 'newer')];
    store.apply(msg(1, { type: 'history', items: page, more_before: 2 }));
    expect(shown(store)).toEqual(['user:older', 'user:newer']);
    expect(store.moreBefore).toBe(2);
  });
});

describe("merging a turn's pieces", () => {
  it('streams text deltas into one assistant message', () => {
    const store = new ChatStore();
    const changes = recorded(store);
    [msg(1, started(1, 'hi')), msg(2, text(1, 'Hel')), msg(3, text(1, 'lo'))].forEach(m =>
      store.apply(m)
    );
    expect(shown(store)).toEqual(['user:hi', 'assistant:Hello']);
    expect(changes.filter(change => change.kind === 'text')).toHaveLength(1);
    expect(store.entries[1]).toMatchObject({ streaming: true });
  });

  it("builds one tool card from the input's pieces, its start and its end", () => {
    const { store } = fed([
      msg(1, started(1, 'add')),
      msg(2, toolInput(1, '{"code": "1 +')),
      msg(3, toolInput(1, ' 1"}')),
      msg(4, toolStarted(1, { code: '1 + 1' })),
      msg(5, toolFinished(1, '2'))
    ]);
    expect(onlyTool(store)).toMatchObject({
      partial: '{"code": "1 + 1"}',
      input: { code: '1 + 1' },
      summary: 'ran 1 line',
      result: '2',
      durationMs: 12,
      streaming: false,
      done: true
    });
  });

  it('starts a new message below a tool card when text follows it', () => {
    const { store } = fed([
      msg(1, started(1, 'add')),
      msg(2, text(1, 'Let me run it.')),
      msg(3, toolStarted(1, { code: '1 + 1' })),
      msg(4, toolFinished(1, '2')),
      msg(5, text(1, 'It is 2.')),
      msg(6, done(1, 'It is 2.'))
    ]);
    expect(shown(store)).toEqual([
      'user:add',
      'assistant:Let me run it.',
      'tool:run_python',
      'assistant:It is 2.'
    ]);
    expect(store.entries.some(e => e.kind === 'assistant' && e.streaming)).toBe(false);
  });

  it("shows a turn's final text when its deltas were missed, and only once", () => {
    const { store } = fed([msg(1, started(1, 'hi')), msg(2, done(1, 'Hello'))]);
    expect(shown(store)).toEqual(['user:hi', 'assistant:Hello']);
    const streamed = fed([msg(1, started(1, 'hi')), msg(2, text(1, 'Hi')), msg(3, done(1, 'Hi'))]);
    expect(shown(streamed.store)).toEqual(['user:hi', 'assistant:Hi']);
  });

  it('closes an approval in place with its decision', () => {
    const { store } = fed([
      msg(1, {
        type: 'approval',
        request_id: 'r1',
        tool: 'run_python',
        input: { code: 'rm()' },
        preview: 'rm()',
        summary: 'run 1 line',
        always: 'every run_python call'
      }),
      msg(2, { type: 'approval_closed', request_id: 'r1', decision: 'deny', by: 'stdin' })
    ]);
    expect(store.entries).toHaveLength(1);
    expect(store.entries[0]).toMatchObject({ kind: 'approval', decision: 'deny', by: 'stdin' });
  });

  it('ends the streaming message and says why when the turn fails', () => {
    const { store } = fed([
      msg(1, started(1, 'hi')),
      msg(2, text(1, 'Hal')),
      msg(3, {
        type: 'turn_error',
        turn: 1,
        message: 'overloaded',
        error_type: 'ModelError',
        client_id: null
      })
    ]);
    expect(shown(store)).toEqual(['user:hi', 'assistant:Hal', 'notice:overloaded']);
    expect(store.entries[1]).toMatchObject({ streaming: false });
  });
});

describe('out-of-order and duplicated events', () => {
  it('drops an event older than the last one seen', () => {
    const { store, applied } = fed([
      msg(1, started(1, 'hi')),
      msg(3, text(1, 'b')),
      msg(2, text(1, 'a'))
    ]);
    expect(applied).toEqual([true, true, false]);
    expect(shown(store)).toEqual(['user:hi', 'assistant:b']);
  });

  it('keeps one entry per turn and per tool call when events come again with new seq', () => {
    const { store } = fed([
      msg(1, started(1, 'hi')),
      msg(2, toolStarted(1, { code: '1' })),
      msg(3, welcome()),
      msg(1, started(1, 'hi')),
      msg(2, toolStarted(1, { code: '1' })),
      msg(4, started(1, 'hi')),
      msg(5, toolStarted(1, { code: '1' }))
    ]);
    expect(shown(store)).toEqual(['user:hi', 'tool:run_python']);
  });

  it("makes a finished card from a tool's end when its start was missed", () => {
    const { store } = fed([msg(1, started(1, 'add')), msg(4, toolFinished(1, '2'))]);
    expect(onlyTool(store)).toMatchObject({ input: { code: '1 + 1' }, result: '2', done: true });
  });

  it('keeps a finished card finished when its start arrives late', () => {
    const { store } = fed([
      msg(1, started(1, 'add')),
      msg(2, toolFinished(1, '2')),
      msg(3, toolStarted(1, { code: '1 + 1' }))
    ]);
    expect(onlyTool(store)).toMatchObject({ result: '2', done: true, streaming: false });
  });

  it('ignores the close of an approval it never saw', () => {
    const { store, applied } = fed([
      msg(1, { type: 'approval_closed', request_id: 'r0', decision: 'allow', by: 'sidebar' })
    ]);
    expect(applied).toEqual([true]);
    expect(store.entries).toEqual([]);
  });
});

describe('thinking', () => {
  it("streams a turn's thinking into one block before its answer, done when the answer starts", () => {
    const { store } = fed([
      msg(1, started(1, 'why?')),
      msg(2, thinking(1, 'Let me ')),
      msg(3, thinking(1, 'think.'))
    ]);
    expect(shown(store)).toEqual(['user:why?', 'thinking…:Let me think.']);
    const changes = recorded(store);
    store.apply(msg(4, text(1, 'Because.')));
    expect(shown(store)).toEqual(['user:why?', 'thinking:Let me think.', 'assistant:Because.']);
    expect(changes.map(change => change.kind)).toEqual(['updated', 'added']);
  });

  it('applies a replayed thinking piece once', () => {
    const { store, applied } = fed([
      msg(1, started(1, 'q')),
      msg(2, thinking(1, 'a')),
      msg(2, thinking(1, 'a')),
      msg(3, thinking(1, 'b')),
      msg(3, thinking(1, 'b'))
    ]);
    expect(applied).toEqual([true, true, false, true, false]);
    expect(shown(store)).toEqual(['user:q', 'thinking…:ab']);
  });

  it('emits only the new piece of a streaming block', () => {
    const { store } = fed([msg(1, started(1, 'q')), msg(2, thinking(1, 'a'))]);
    const changes = recorded(store);
    store.apply(msg(3, thinking(1, 'bc')));
    expect(changes).toEqual([{ kind: 'thinking', entry: store.entries[1], delta: 'bc' }]);
  });

  it('ends the thinking at a tool call, and thinking after the tool is a new block', () => {
    const { store } = fed([
      msg(1, started(1, 'q')),
      msg(2, thinking(1, 'first')),
      msg(3, toolStarted(1, { code: '1' })),
      msg(4, toolFinished(1, '1')),
      msg(5, thinking(1, 'second')),
      msg(6, done(1, ''))
    ]);
    expect(shown(store)).toEqual([
      'user:q',
      'thinking:first',
      'tool:run_python',
      'thinking:second'
    ]);
  });

  it('marks a block that had redacted thinking and ends it with the turn', () => {
    const { store } = fed([
      msg(1, started(1, 'q')),
      msg(2, thinking(1, '', true)),
      msg(3, thinking(1, 'plain'))
    ]);
    expect(shown(store)).toEqual(['user:q', 'thinking…[redacted]:plain']);
    store.apply(
      msg(4, { type: 'turn_error', turn: 1, message: 'boom', error_type: 'X', client_id: null })
    );
    expect(shown(store)[1]).toBe('thinking[redacted]:plain');
  });

  it("shows an archived answer's thinking before it, and a thinking-only answer alone", () => {
    const history: HistoryEntry[] = [
      item('user', 1, 'q'),
      item('assistant', 2, '', 'only thought'),
      item('assistant', 4, 'Answer', 'why', true)
    ];
    const { store } = fed([msg(9, welcome(history))]);
    expect(shown(store)).toEqual([
      'user:q',
      'thinking:only thought',
      'thinking[redacted]:why',
      'assistant:Answer'
    ]);
  });
});

describe('model options', () => {
  it('takes the options from the welcome and from each options message, once by seq', () => {
    const store = new ChatStore();
    const changes = recorded(store);
    store.apply(msg(1, welcome([], options('default'))));
    expect(store.options?.effort).toBe('default');
    expect(store.apply(msg(2, { type: 'options', options: options('high') }))).toBe(true);
    expect(store.apply(msg(2, { type: 'options', options: options('low') }))).toBe(false);
    expect(store.options?.effort).toBe('high');
    expect(changes.filter(change => change.kind === 'options')).toHaveLength(2);
  });

  it('keeps the known options when a welcome has none (session not open yet)', () => {
    const { store } = fed([
      msg(1, { type: 'options', options: options('max') }),
      msg(2, welcome())
    ]);
    expect(store.options?.effort).toBe('max');
  });
});

describe('folder trust and the approval mode', () => {
  const folder = (status: TrustView['status']): TrustView => ({
    root: '/srv/repo',
    status,
    asks: ['MCP server tools: sh -c "id > ran"', 'approval: auto']
  });
  const trustMsg = (status: TrustView['status'], show = false): KernelBody => ({
    type: 'trust',
    trust: folder(status),
    show
  });
  const mode = (m: ApprovalModeView['mode'], source: ApprovalModeView['source']): KernelBody => ({
    type: 'approval_mode',
    approval: { mode: m, source }
  });

  it('opens the card on a welcome for a folder that is untrusted or changed', () => {
    for (const status of ['untrusted', 'changed'] as const) {
      const { store } = fed([msg(1, welcome([], null, null, folder(status)))]);
      expect([store.trust?.status, store.trustOpen]).toEqual([status, true]);
    }
    for (const status of ['trusted', 'denied', 'not-needed'] as const) {
      const { store } = fed([msg(1, welcome([], null, null, folder(status)))]);
      expect([store.trust?.status, store.trustOpen]).toEqual([status, false]);
    }
  });

  it('opens on /trust whatever the status, and closes once the folder is decided', () => {
    const store = new ChatStore();
    const changes = recorded(store);
    store.apply(msg(1, welcome([], null, null, folder('trusted'))));
    expect(store.trustOpen).toBe(false);
    store.apply(msg(2, trustMsg('trusted', true)));
    expect(store.trustOpen).toBe(true);
    store.apply(msg(3, trustMsg('denied')));
    expect([store.trust?.status, store.trustOpen]).toEqual(['denied', false]);
    store.apply(msg(4, trustMsg('changed')));
    expect(store.trustOpen).toBe(true);
    store.apply(msg(5, trustMsg('not-needed')));
    expect(store.trustOpen).toBe(false);
    expect(changes.filter(change => change.kind === 'trust')).toHaveLength(5);
  });

  it('closes here when the person puts it off, and a replayed trust does not reopen it', () => {
    const { store } = fed([msg(1, welcome()), msg(2, trustMsg('untrusted', true))]);
    store.closeTrust();
    expect(store.trustOpen).toBe(false);
    expect(store.apply(msg(2, trustMsg('untrusted', true)))).toBe(false);
    expect(store.trustOpen).toBe(false);
  });

  it('takes the approval mode from the welcome and each approval_mode, once by seq', () => {
    const store = new ChatStore();
    const changes = recorded(store);
    store.apply(msg(1, welcome([], null, { mode: 'ask', source: 'default' })));
    expect(store.approval).toEqual({ mode: 'ask', source: 'default' });
    expect(store.apply(msg(2, mode('auto', 'project')))).toBe(true);
    expect(store.apply(msg(2, mode('read-only', 'magic')))).toBe(false);
    expect(store.approval).toEqual({ mode: 'auto', source: 'project' });
    store.apply(msg(3, welcome())); // a welcome without one (session not open yet) keeps it
    expect(store.approval).toEqual({ mode: 'auto', source: 'project' });
    expect(changes.filter(change => change.kind === 'approval-mode')).toHaveLength(3);
  });
});

describe('the key field (DESIGN §12, "The key")', () => {
  const noKey: KernelBody = {
    type: 'turn_error',
    turn: null,
    message: 'No Anthropic API key yet. Run %cowork login in a cell…',
    error_type: 'MissingKeyError',
    client_id: 'q1'
  };
  const key = (hasKey: boolean, problem = ''): KernelBody => ({
    type: 'key',
    has_key: hasKey,
    where: hasKey ? '~/.config/loom/anthropic-api-key (readable by you only)' : '',
    problem
  });

  it('opens on a welcome without a key and closes once the kernel has one', () => {
    const { store } = fed([msg(1, welcome([], null, null, null, false))]);
    expect([store.hasKey, store.keyOpen]).toEqual([false, true]);
    store.apply(msg(2, key(true)));
    expect([store.hasKey, store.keyOpen, store.keyProblem]).toEqual([true, false, '']);
  });

  it('opens after a no-key error, and stays closed with a key', () => {
    const { store } = fed([msg(1, welcome()), msg(2, noKey)]);
    expect(store.keyOpen).toBe(true);
    expect(shown(store)).toEqual(['notice:No Anthropic API key yet. Run %cowork login in a cell…']);
    const fresh = fed([msg(1, welcome())]).store;
    expect(fresh.keyOpen).toBe(false);
  });

  it('keeps the field open with the reason when a key was not saved (a reply)', () => {
    const { store } = fed([msg(5, welcome([], null, null, null, false)), msg(6, noKey)]);
    expect(store.apply(msg(6, key(false, 'That does not look like an API key.')))).toBe(true);
    expect([store.keyOpen, store.keyProblem]).toEqual([
      true,
      'That does not look like an API key.'
    ]);
  });

  it('knows whether there is a key and where it is kept, never the key', () => {
    const { store } = fed([msg(1, welcome([], null, null, null, false)), msg(2, key(true))]);
    expect(store.keyWhere).toContain('readable by you only');
  });
});

describe("the footer's usage", () => {
  const usage = (cost: number) => ({
    type: 'usage' as const,
    input_tokens: 1200,
    output_tokens: 80,
    cost_usd: cost,
    context_tokens: 1200,
    context_budget: 100_000,
    unpriced: false
  });

  type Welcome = Extract<KernelBody, { type: 'welcome' }>;
  const welcomeWith = (used: Welcome['usage']): KernelBody => ({
    ...(welcome() as Welcome),
    usage: used
  });

  it("shows a reopened session's cost from its welcome, before any turn", () => {
    const { store } = fed([msg(1, welcomeWith(usage(0.42)))]);
    expect(store.usage).toEqual({
      inputTokens: 1200,
      outputTokens: 80,
      costUsd: 0.42,
      unpriced: false,
      contextTokens: 1200,
      contextBudget: 100_000
    });
  });

  it('follows each request after it, and a welcome of a session without one clears it', () => {
    const { store } = fed([msg(1, welcomeWith(usage(0.42))), msg(2, usage(0.5))]);
    expect(store.usage?.costUsd).toBe(0.5);
    store.apply(msg(3, welcomeWith(null)));
    expect(store.usage).toBeNull();
  });

  it('keeps what it shows when an older kernel’s welcome says nothing of usage', () => {
    const { store } = fed([msg(1, usage(0.3)), msg(2, welcome())]);
    expect(store.usage?.costUsd).toBe(0.3);
  });
});
