/**
 * The sidebar <-> kernel protocol (comm target "loom", version 1): typed
 * messages and the validation of what the kernel sends. The reference is
 * docs/sidebar-protocol.md.
 */

export const PROTOCOL_VERSION = 1;
export const COMM_TARGET = 'loom';

export type Decision = 'allow' | 'deny' | 'always';
export type KernelState = 'idle' | 'thinking' | 'waiting-approval' | 'queued' | 'waiting-cell';
export type NoticeLevel = 'info' | 'warning' | 'error';

export type SessionSummary = {
  id: string;
  title: string;
  prompts: number;
  turns: number;
  model: string;
  approval: string;
  last_active: string;
};

export type TextItem = { kind: 'user' | 'assistant'; turn: number; text: string };
export type ToolItem = {
  kind: 'tool';
  turn: number;
  call_id: string;
  name: string;
  input: unknown;
  summary: string;
  is_error: boolean;
  result: string;
};
export type HistoryItem = TextItem | ToolItem;

export type Queued = { client_id: string; text: string };

export type Subtask = {
  id: string;
  description: string;
  status: string;
  attempt: number;
  elapsed_s: number;
  tokens: number;
  last_tool: string | null;
};
export type Task = { task_id: string; goal: string; status: string; subtasks: Subtask[] };

export type SessionRow = {
  id: string;
  title: string;
  prompts: number;
  turns: number;
  last_active: string;
  status: string;
  current: boolean;
};
export type SearchHit = { session_id: string; turn: number; role: string; snippet: string };

/** What the kernel sends, by `type` (the envelope fields come separately). */
export type KernelBody =
  | {
      type: 'welcome';
      session: SessionSummary | null;
      history: HistoryItem[];
      more_before: number | null;
      busy: boolean;
      state: { state: KernelState; detail: string };
      queue: Queued[];
      subshells: boolean;
      tasks: Task[];
    }
  | { type: 'history'; items: HistoryItem[]; more_before: number | null }
  | {
      type: 'turn_started';
      turn: number;
      source: 'cell' | 'sidebar';
      text: string;
      client_id: string | null;
    }
  | { type: 'text'; turn: number; delta: string }
  | { type: 'tool_started'; turn: number; call_id: string; name: string; input: unknown }
  | { type: 'tool_input'; turn: number; call_id: string; name: string; partial: string }
  | {
      type: 'tool_finished';
      turn: number;
      call_id: string;
      name: string;
      summary: string;
      is_error: boolean;
      duration_ms: number;
      result: string;
      input?: unknown;
    }
  | { type: 'approval'; request_id: string; tool: string; input: unknown; preview: string }
  | { type: 'approval_closed'; request_id: string; decision: Decision; by: string }
  | {
      type: 'usage';
      input_tokens: number;
      output_tokens: number;
      cost_usd: number;
      context_tokens: number;
      context_budget: number;
    }
  | { type: 'turn_done'; turn: number; stop_reason: string; text: string }
  | { type: 'turn_error'; turn: number | null; message: string; error_type: string }
  | { type: 'status'; state: KernelState; detail: string }
  | { type: 'queue'; items: Queued[] }
  | { type: 'sessions'; items: SessionRow[] }
  | {
      type: 'session_changed';
      session: SessionSummary | null;
      history: HistoryItem[];
      more_before: number | null;
    }
  | { type: 'search_results'; query: string; hits: SearchHit[] }
  | ({ type: 'task' } & Task)
  | { type: 'notice'; level: NoticeLevel; message: string }
  | { type: 'cell'; source: string };

export type Envelope = { seq: number; kernel_session: string };
export type KernelMessage = KernelBody & Envelope;
export type KernelType = KernelBody['type'];

/** What the front sends. */
export type Hello = {
  type: 'hello';
  protocol: number;
  notebook_path: string;
  since_seq: number | null;
  kernel_session: string | null;
  client: 'lab' | 'notebook7';
  /** The server's folder, which `notebook_path` is relative to ('' when unknown). */
  server_root: string;
};
export type FrontMessage =
  | Hello
  | { type: 'send'; client_id: string; text: string }
  | { type: 'cancel_queued'; client_id: string }
  | { type: 'stop' }
  | { type: 'approve'; request_id: string; decision: Decision }
  | { type: 'load_more'; before_turn: number }
  | { type: 'sessions' }
  | { type: 'resume'; session: string }
  | { type: 'new' }
  | { type: 'fork'; at_turn: number | null }
  | { type: 'search'; query: string }
  | { type: 'set_notebook'; path: string; server_root: string };

/** A field's JSON kind; a trailing "?" also admits null or absence. */
type Kind = 'string' | 'number' | 'boolean' | 'array' | 'object' | 'any' | `${Base}?`;
type Base = 'string' | 'number' | 'boolean' | 'array' | 'object';

/** The fields each kernel message must carry (beyond `type`, `seq`, `kernel_session`). */
const SHAPES: { [T in KernelType]: Record<string, Kind> } = {
  welcome: { session: 'object?', history: 'array', more_before: 'number?', state: 'object' },
  history: { items: 'array', more_before: 'number?' },
  turn_started: { turn: 'number', text: 'string', client_id: 'string?' },
  text: { turn: 'number', delta: 'string' },
  tool_started: { turn: 'number', call_id: 'string', name: 'string', input: 'any' },
  tool_input: { turn: 'number', call_id: 'string', name: 'string', partial: 'string' },
  tool_finished: { call_id: 'string', name: 'string', is_error: 'boolean', result: 'string' },
  approval: { request_id: 'string', tool: 'string', input: 'any', preview: 'string?' },
  approval_closed: { request_id: 'string', decision: 'string' },
  usage: { input_tokens: 'number', output_tokens: 'number', cost_usd: 'number' },
  turn_done: { turn: 'number', stop_reason: 'string?', text: 'string?' },
  turn_error: { turn: 'number?', message: 'string' },
  status: { state: 'string', detail: 'string?' },
  queue: { items: 'array' },
  sessions: { items: 'array' },
  session_changed: { session: 'object?', history: 'array', more_before: 'number?' },
  search_results: { query: 'string', hits: 'array' },
  task: { task_id: 'string', goal: 'string', status: 'string', subtasks: 'array' },
  notice: { level: 'string', message: 'string' },
  cell: { source: 'string' }
};

function kindOf(value: unknown): Base | 'null' {
  if (value === null || value === undefined) {
    return 'null';
  }
  if (Array.isArray(value)) {
    return 'array';
  }
  const kind = typeof value;
  return kind === 'string' || kind === 'number' || kind === 'boolean' ? kind : 'object';
}

function fits(value: unknown, kind: Kind): boolean {
  if (kind === 'any') {
    return true;
  }
  const actual = kindOf(value);
  if (kind.endsWith('?')) {
    return actual === 'null' || actual === kind.slice(0, -1);
  }
  return actual === kind;
}

function isKernelType(type: unknown): type is KernelType {
  return typeof type === 'string' && Object.prototype.hasOwnProperty.call(SHAPES, type);
}

/**
 * Validate one message from the kernel; return it typed, or an error string
 * naming what is wrong (unknown type or a missing/mistyped field).
 */
export function parseKernelMessage(data: unknown): KernelMessage | string {
  if (kindOf(data) !== 'object') {
    return 'not a JSON object';
  }
  const record = data as Record<string, unknown>;
  if (!isKernelType(record.type)) {
    return `unknown message type ${JSON.stringify(record.type)}`;
  }
  if (typeof record.seq !== 'number' || typeof record.kernel_session !== 'string') {
    return `${record.type}: missing seq or kernel_session`;
  }
  for (const [field, kind] of Object.entries(SHAPES[record.type])) {
    if (!fits(record[field], kind)) {
      return `${record.type}: field ${field} is not ${kind}`;
    }
  }
  return record as KernelMessage;
}

/** The code a tool input carries (run_python's `code`), if any. */
export function inputCode(input: unknown): string | null {
  if (kindOf(input) !== 'object') {
    return null;
  }
  const code = (input as Record<string, unknown>).code;
  return typeof code === 'string' ? code : null;
}

/**
 * The `code` string of a tool input whose JSON is still streaming, decoded as
 * far as it has arrived (so code shows while the model writes it).
 */
export function partialCode(partial: string): string | null {
  const match = /"code"\s*:\s*"((?:[^"\\]|\\.)*)(\\?)/.exec(partial);
  if (match === null) {
    return null;
  }
  try {
    return JSON.parse(`"${match[1].replace(/\\u[0-9a-fA-F]{0,3}$/, '')}"`) as string;
  } catch {
    return match[1];
  }
}
