/**
 * The conversation state of one notebook's sidebar: a reducer over kernel
 * messages. Views subscribe to `changed` and update only what a change names.
 */
import { ISignal, Signal } from '@lumino/signaling';

import { NOTEBOOK_TOOLS, SLASH_COMMANDS } from './generated/lists';
import {
  ApprovalModeView,
  Decision,
  HistoryEntry,
  KernelBody,
  KernelMessage,
  KernelState,
  ModelOptions,
  NoticeLevel,
  Queued,
  SearchHitItem,
  SessionRow,
  SessionSummary,
  SlashCommand,
  TaskView,
  TrustView,
  isReply
} from './protocol';

export type UserEntry = { kind: 'user'; key: string; turn: number | null; text: string };
export type AssistantEntry = {
  kind: 'assistant';
  key: string;
  turn: number;
  text: string;
  streaming: boolean;
};
/** A turn's thinking, shown collapsed before the answer it leads to. */
export type ThinkingEntry = {
  kind: 'thinking';
  key: string;
  turn: number;
  /** Plain text (never HTML). */
  text: string;
  /** Part of it came encrypted by the API: nothing to show for that part. */
  redacted: boolean;
  streaming: boolean;
};
export type ToolEntry = {
  kind: 'tool';
  key: string;
  turn: number;
  name: string;
  input: unknown;
  partial: string;
  summary: string;
  result: string;
  isError: boolean;
  durationMs: number | null;
  /** Only the input's JSON so far is known: the tool has not started. */
  streaming: boolean;
  done: boolean;
  /** The outside agent that made the call (e.g. 'Claude Code'); '' or none: Loom's own. */
  outside?: string;
};
export type ApprovalEntry = {
  kind: 'approval';
  key: string;
  requestId: string;
  tool: string;
  input: unknown;
  preview: string;
  summary: string;
  /** What Always would allow from then on ('' unnamed); null: not offered (a guard rail). */
  always: string | null;
  /** 'run': may the call run? 'keep': keep a protected change Loom undid (preview: the diff). */
  question: 'run' | 'keep';
  decision: Decision | null;
  by: string | null;
};
export type NoticeEntry = {
  kind: 'notice';
  key: string;
  level: NoticeLevel;
  message: string;
  /** The slash command this answers (a `command_result` card), if any. */
  command?: string;
};
export type Entry =
  UserEntry | AssistantEntry | ThinkingEntry | ToolEntry | ApprovalEntry | NoticeEntry;

export type Usage = {
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  /** Some of the cost ran on a model without a public price. */
  unpriced: boolean;
  contextTokens: number;
  contextBudget: number;
};

/** A `usage` message's fields, as it comes alone or in a `welcome`. */
type UsageFields = Extract<KernelBody, { type: 'usage' }>;

/** What changed; views redraw only that part. */
export type Change =
  | { kind: 'reset' }
  | { kind: 'added'; entry: Entry }
  | { kind: 'prepended'; entries: Entry[] }
  | { kind: 'updated'; entry: Entry }
  | { kind: 'text'; entry: AssistantEntry; delta: string }
  | { kind: 'thinking'; entry: ThinkingEntry; delta: string }
  | { kind: 'options' }
  | { kind: 'approval-mode' }
  | { kind: 'trust' }
  | { kind: 'key' }
  | { kind: 'status' }
  | { kind: 'usage' }
  | { kind: 'queue' }
  | { kind: 'sessions' }
  | { kind: 'search' }
  | { kind: 'task'; task: TaskView }
  | { kind: 'session' }
  | { kind: 'cell'; source: string };

/** The messages that name a tool call: its start, or its end when the start was missed. */
type ToolMessage = Extract<KernelMessage, { type: 'tool_started' | 'tool_finished' }>;

let noticeCounter = 0;

/** Turn errors that mean "no usable API key": the key field opens (DESIGN §12, "The key"). */
const KEY_ERRORS = new Set(['MissingKeyError', 'MissingApiKeyError', 'AuthenticationError']);

/** The trust statuses that open the card by themselves (DESIGN §12). */
const ASKING = new Set<TrustView['status']>(['untrusted', 'changed']);

/** Entry keys by kind: a tool call and its approval request may share an id. */
const toolKey = (callId: string): string => `c:${callId}`;
const approvalKey = (requestId: string): string => `r:${requestId}`;

/** A tool card's entry before anything but its call is known. */
function newTool(
  turn: number,
  callId: string,
  name: string,
  input: unknown,
  outside = ''
): ToolEntry {
  return {
    kind: 'tool',
    key: toolKey(callId),
    turn,
    name,
    input,
    partial: '',
    summary: '',
    result: '',
    isError: false,
    durationMs: null,
    streaming: false,
    done: false,
    outside
  };
}

/** History items (archive rows) as entries: an answer's thinking comes before it. */
export function historyEntries(items: HistoryEntry[]): Entry[] {
  return items.flatMap((item): Entry[] => {
    if (item.kind === 'tool') {
      const tool: ToolEntry = {
        kind: 'tool',
        key: toolKey(item.call_id),
        turn: item.turn,
        name: item.name,
        input: item.input,
        partial: '',
        summary: item.summary,
        result: item.result,
        isError: item.is_error,
        durationMs: null,
        streaming: false,
        done: true,
        outside: item.outside ?? ''
      };
      return [tool];
    }
    const key = `t${item.turn}`;
    if (item.kind === 'user') {
      return [{ kind: 'user', key, turn: item.turn, text: item.text }];
    }
    const entries: Entry[] = [];
    if (item.thinking !== '' || item.thinking_redacted) {
      entries.push({
        kind: 'thinking',
        key: `k${item.turn}`,
        turn: item.turn,
        text: item.thinking,
        redacted: item.thinking_redacted,
        streaming: false
      });
    }
    if (item.text.trim() !== '') {
      entries.push({ kind: 'assistant', key, turn: item.turn, text: item.text, streaming: false });
    }
    return entries;
  });
}

/** The state of one notebook's conversation as the kernel reported it. */
/** The slash commands the page answers itself, offered when the kernel's `welcome` has no
 * table (a protocol 1.0 kernel): with a newer kernel its own table says these and more. */
export const PAGE_COMMANDS: readonly SlashCommand[] = SLASH_COMMANDS.filter(c => c.front);

export class ChatStore {
  entries: Entry[] = [];
  session: SessionSummary | null = null;
  moreBefore: number | null = null;
  state: KernelState = 'idle';
  detail = '';
  usage: Usage | null = null;
  queue: Queued[] = [];
  sessions: SessionRow[] = [];
  search: { query: string; hits: SearchHitItem[] } | null = null;
  tasks = new Map<string, TaskView>();
  subshells = false;
  /** Thinking and effort, and what the current model takes (null: not known yet). */
  options: ModelOptions | null = null;
  /** The approval mode in force and where it came from (null: not known yet). */
  approval: ApprovalModeView | null = null;
  /** What the notebook's folder asks for and the person's decision (null: not known yet). */
  trust: TrustView | null = null;
  /** Whether the trust card is open. */
  trustOpen = false;
  /** Whether requests have an API key (null: not known yet). Never the key itself. */
  hasKey: boolean | null = null;
  /** The slash commands this kernel offers, from its `welcome` (none before it). */
  commands: readonly SlashCommand[] = [];
  /** Whether the key field shows: no key, a no-key error, or a key that was not saved. */
  keyOpen = false;
  /** Why the key just sent was not saved ('' when it was). */
  keyProblem = '';
  /** Where the key in force is kept, in words ('' when unknown or none). */
  keyWhere = '';
  lastSeq: number | null = null;
  kernelSession: string | null = null;

  /** Emits every change, after the state reflects it. */
  get changed(): ISignal<this, Change> {
    return this._changed;
  }

  /** Add a notice made by the front (connection states, restarts). */
  notice(level: NoticeLevel, message: string): void {
    this._add({ kind: 'notice', key: `n${noticeCounter++}`, level, message });
  }

  /** Close the trust card here (the person answered it, or put it off). */
  closeTrust(): void {
    if (this.trustOpen) {
      this.trustOpen = false;
      this._changed.emit({ kind: 'trust' });
    }
  }

  /**
   * Apply one kernel message. Returns false for a message already seen
   * (a replay overlapping what this page has).
   */
  apply(message: KernelMessage): boolean {
    if (this._seen(message)) {
      return false;
    }
    this.kernelSession = message.kernel_session;
    if (message.type === 'welcome') {
      // The running turn's events may follow with their original (lower)
      // seq numbers: accept everything after a welcome.
      this.lastSeq = null;
    } else if (!isReply(message)) {
      this.lastSeq = message.seq;
    }
    this._reduce(message);
    return true;
  }

  /**
   * Replies carry the current seq without advancing it, so only events can repeat. The
   * envelope tells which is which (`reply_to`), so a broadcast notice is an event.
   */
  private _seen(message: KernelMessage): boolean {
    return (
      !isReply(message) &&
      message.kernel_session === this.kernelSession &&
      this.lastSeq !== null &&
      message.seq <= this.lastSeq
    );
  }

  private _reduce(message: KernelMessage): void {
    switch (message.type) {
      case 'welcome':
        this._welcome(message);
        return;
      case 'history':
        this._prepend(historyEntries(message.items), message.more_before);
        return;
      case 'session_changed':
        this._reset(message.session, historyEntries(message.history), message.more_before);
        return;
      case 'turn_started':
        this._add({
          kind: 'user',
          key: `u${message.turn}`,
          turn: message.turn,
          text: message.text
        });
        return;
      case 'text':
        this._text(message.turn, message.delta);
        return;
      case 'thinking':
        this._thinking(message.turn, message.delta, message.redacted);
        return;
      case 'options':
        this.options = message.options;
        this._changed.emit({ kind: 'options' });
        return;
      case 'approval_mode':
        this.approval = message.approval;
        this._changed.emit({ kind: 'approval-mode' });
        return;
      case 'trust':
        this._trust(message.trust, message.show);
        return;
      case 'tool_started':
        this._toolStarted(message);
        return;
      case 'tool_input':
        this._toolInput(message);
        return;
      case 'tool_finished':
        this._toolFinished(message);
        return;
      case 'approval':
        this._add({
          kind: 'approval',
          key: approvalKey(message.request_id),
          requestId: message.request_id,
          tool: message.tool,
          input: message.input,
          preview: message.preview,
          summary: message.summary,
          always: message.always === undefined ? '' : message.always,
          question: message.question ?? 'run',
          decision: null,
          by: null
        });
        return;
      case 'approval_closed':
        this._update(approvalKey(message.request_id), entry => {
          if (entry.kind === 'approval') {
            entry.decision = message.decision;
            entry.by = message.by;
          }
        });
        return;
      case 'usage':
        this._usage(message);
        return;
      case 'turn_done':
        this._turnDone(message.turn, message.text);
        return;
      case 'turn_error':
        this._endStreaming(message.turn);
        this.notice('error', message.message);
        if (KEY_ERRORS.has(message.error_type)) {
          this._key(message.error_type === 'AuthenticationError', '', true); // refused: replace it
        }
        return;
      case 'key':
        this.keyWhere = message.where;
        this._key(message.has_key, message.problem, false);
        return;
      case 'status':
        this.state = message.state;
        this.detail = message.detail;
        this._changed.emit({ kind: 'status' });
        return;
      case 'queue':
        this.queue = message.items;
        this._changed.emit({ kind: 'queue' });
        return;
      case 'sessions':
        this.sessions = message.items;
        this._changed.emit({ kind: 'sessions' });
        this._refreshSession(message.items.find(row => row.current));
        return;
      case 'search_results':
        this.search = { query: message.query, hits: message.hits };
        this._changed.emit({ kind: 'search' });
        return;
      case 'task':
        this._task(message);
        return;
      case 'notice':
        this.notice(message.level, message.message);
        return;
      case 'command_result':
        this._add({
          kind: 'notice',
          key: `n${noticeCounter++}`,
          level: message.ok ? 'info' : 'warning',
          message: message.text,
          command: message.name
        });
        return;
      case 'cell':
        this._changed.emit({ kind: 'cell', source: message.source });
        return;
    }
  }

  private _welcome(message: Extract<KernelMessage, { type: 'welcome' }>): void {
    this.state = message.state.state;
    this.detail = message.state.detail;
    this.queue = message.queue;
    this.subshells = message.subshells;
    this.tasks = new Map(message.tasks.map(task => [task.task_id, task]));
    this.options = message.options ?? this.options;
    this.approval = message.approval ?? this.approval;
    this.commands = message.commands ?? PAGE_COMMANDS; // a 1.0 kernel sends no table
    this._reset(message.session, historyEntries(message.history), message.more_before);
    this._changed.emit({ kind: 'status' });
    this._changed.emit({ kind: 'queue' });
    this._changed.emit({ kind: 'options' });
    this._changed.emit({ kind: 'approval-mode' });
    if (message.trust !== null) {
      this._trust(message.trust, false);
    }
    this._key(message.has_key ?? true, '', false);
    if (message.usage !== undefined) {
      this._usage(message.usage); // the footer as the session's last request left it
    }
  }

  /** The footer's usage (null: no request yet). */
  private _usage(usage: UsageFields | null): void {
    this.usage =
      usage === null
        ? null
        : {
            inputTokens: usage.input_tokens,
            outputTokens: usage.output_tokens,
            costUsd: usage.cost_usd,
            unpriced: usage.unpriced,
            contextTokens: usage.context_tokens,
            contextBudget: usage.context_budget
          };
    this._changed.emit({ kind: 'usage' });
  }

  /** The key's state; the field opens without a key, on a problem, or when `open`. */
  private _key(hasKey: boolean, problem: string, open: boolean): void {
    this.hasKey = hasKey;
    this.keyProblem = problem;
    this.keyOpen = !hasKey || problem !== '' || open;
    this._changed.emit({ kind: 'key' });
  }

  /**
   * The folder's trust: the card opens when asked to (`/trust`) or when the folder asks
   * for something not yet trusted, and closes once it is decided or needs nothing.
   */
  private _trust(trust: TrustView, show: boolean): void {
    this.trust = trust;
    this.trustOpen = show || ASKING.has(trust.status);
    this._changed.emit({ kind: 'trust' });
  }

  private _reset(session: SessionSummary | null, entries: Entry[], more: number | null): void {
    this.session = session;
    this.moreBefore = more;
    this.entries = entries;
    this._open = [];
    this._byKey = new Map(entries.map(entry => [entry.key, entry]));
    this._changed.emit({ kind: 'reset' });
    this._changed.emit({ kind: 'session' });
  }

  /** The session list also tells the current session's title and counts. */
  private _refreshSession(row: SessionRow | undefined): void {
    if (row === undefined) {
      return;
    }
    const { id, title, prompts, turns, last_active } = row;
    const base = this.session?.id === id ? this.session : { model: '', approval: '' };
    this.session = { ...base, id, title, prompts, turns, last_active };
    this._changed.emit({ kind: 'session' });
  }

  private _prepend(entries: Entry[], more: number | null): void {
    const fresh = entries.filter(entry => !this._byKey.has(entry.key));
    this.moreBefore = more;
    this.entries = [...fresh, ...this.entries];
    fresh.forEach(entry => this._byKey.set(entry.key, entry));
    this._changed.emit({ kind: 'prepended', entries: fresh });
  }

  private _add(entry: Entry): void {
    const known = this._byKey.get(entry.key);
    if (known !== undefined) {
      Object.assign(known, entry);
      this._changed.emit({ kind: 'updated', entry: known });
      return;
    }
    this.entries.push(entry);
    this._byKey.set(entry.key, entry);
    this._changed.emit({ kind: 'added', entry });
  }

  private _update(key: string, change: (entry: Entry) => void): void {
    const entry = this._byKey.get(key);
    if (entry !== undefined) {
      change(entry);
      this._changed.emit({ kind: 'updated', entry });
    }
  }

  /**
   * Thinking streams into one block until something else of the turn comes
   * (its answer, a tool call): thinking after that starts a new block.
   */
  private _thinking(turn: number, delta: string, redacted: boolean): void {
    const last = this.entries[this.entries.length - 1];
    if (last?.kind === 'thinking' && last.turn === turn && last.streaming) {
      last.text += delta;
      if (redacted && !last.redacted) {
        last.redacted = true;
        this._changed.emit({ kind: 'updated', entry: last });
      }
      if (delta !== '') {
        this._changed.emit({ kind: 'thinking', entry: last, delta });
      }
      return;
    }
    const key = `k${turn}-${this.entries.length}-${noticeCounter++}`;
    const entry: ThinkingEntry = {
      kind: 'thinking',
      key,
      turn,
      text: delta,
      redacted,
      streaming: true
    };
    this._open.push(entry);
    this._add(entry);
  }

  /** The turn's thinking is done once anything else of the turn arrives. */
  private _endThinking(turn: number | null): void {
    if (this._open.length === 0) {
      return;
    }
    const ending = this._open.filter(entry => turn === null || entry.turn === turn);
    this._open = this._open.filter(entry => !ending.includes(entry));
    for (const entry of ending) {
      entry.streaming = false;
      this._changed.emit({ kind: 'updated', entry });
    }
  }

  /** Text after a tool card starts a new message below the card. */
  private _text(turn: number, delta: string): void {
    this._endThinking(turn);
    const last = this.entries[this.entries.length - 1];
    if (last?.kind === 'assistant' && last.turn === turn && last.streaming) {
      last.text += delta;
      this._changed.emit({ kind: 'text', entry: last, delta });
      return;
    }
    const key = `a${turn}-${this.entries.length}-${noticeCounter++}`;
    this._add({ kind: 'assistant', key, turn, text: delta, streaming: true });
  }

  /** Input JSON as the model writes it: the first piece makes the card, before the tool starts. */
  private _toolInput(message: Extract<KernelMessage, { type: 'tool_input' }>): void {
    const { turn, call_id, name, partial } = message;
    this._endThinking(turn);
    if (!this._byKey.has(toolKey(call_id))) {
      const tool = newTool(turn, call_id, name, {}, message.outside ?? '');
      this._add({ ...tool, partial, streaming: true });
      return;
    }
    this._update(toolKey(call_id), entry => {
      if (entry.kind === 'tool') {
        entry.partial += partial;
      }
    });
  }

  /** A card made while the input streamed is the same card: it gets the parsed input. */
  private _toolStarted(message: ToolMessage): void {
    const { turn, call_id: callId, name, input } = message;
    this._endThinking(turn);
    if (!this._byKey.has(toolKey(callId))) {
      this._add(newTool(turn, callId, name, input, message.outside ?? ''));
      return;
    }
    this._update(toolKey(callId), entry => {
      if (entry.kind === 'tool') {
        entry.input = input;
        entry.name = name;
        entry.streaming = false;
        entry.outside = message.outside || entry.outside; // a card its input made first
      }
    });
  }

  private _toolFinished(message: Extract<ToolMessage, { type: 'tool_finished' }>): void {
    if (!this._byKey.has(toolKey(message.call_id))) {
      this._toolStarted(message);
    }
    this._update(toolKey(message.call_id), entry => {
      if (entry.kind === 'tool') {
        entry.summary = message.summary;
        entry.input = message.input;
        entry.result = message.result;
        entry.isError = message.is_error;
        entry.durationMs = message.duration_ms;
        entry.streaming = false;
        entry.done = true;
      }
    });
  }

  /** A turn's final text shows even when its deltas were missed. */
  private _turnDone(turn: number, text: string): void {
    const streamed = this.entries.some(e => e.kind === 'assistant' && e.turn === turn);
    if (!streamed && text !== '') {
      this._add({ kind: 'assistant', key: `a${turn}-final`, turn, text, streaming: false });
    }
    this._endStreaming(turn);
  }

  private _endStreaming(turn: number | null): void {
    this._endThinking(turn);
    for (const entry of this.entries) {
      if (entry.kind === 'assistant' && entry.streaming && (turn === null || entry.turn === turn)) {
        entry.streaming = false;
        this._changed.emit({ kind: 'updated', entry });
      }
    }
  }

  private _task(task: TaskView): void {
    const { task_id, goal, status, subtasks, type } = task;
    const snapshot = { task_id, goal, status, subtasks, type };
    this.tasks.set(task_id, snapshot);
    this._changed.emit({ kind: 'task', task: snapshot });
  }

  private _byKey = new Map<string, Entry>();
  /** Thinking blocks still streaming (ended by the turn's next piece). */
  private _open: ThinkingEntry[] = [];
  private readonly _changed = new Signal<this, Change>(this);
}

/** The tools that change the notebook: a turn that ran one offers "revert" (generated). */
export { NOTEBOOK_TOOLS };

/**
 * The person's turns (their message's turn number) whose tool cards changed the
 * notebook. A tool card belongs to the user message above it (archive rows
 * number each row, so the card's own turn is not the message's).
 */
export function notebookTurns(entries: readonly Entry[]): Set<number> {
  const turns = new Set<number>();
  let turn: number | null = null;
  for (const entry of entries) {
    if (entry.kind === 'user') {
      turn = entry.turn;
    } else if (entry.kind === 'tool' && turn !== null && NOTEBOOK_TOOLS.has(entry.name)) {
      if (entry.done && !entry.isError) {
        turns.add(turn);
      }
    }
  }
  return turns;
}
