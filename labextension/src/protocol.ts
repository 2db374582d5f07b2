/**
 * The sidebar <-> kernel protocol (comm target "loom"). The types and the
 * validators are generated (src/generated/, from the kernel's
 * loom_jupyter/host/wire/protocol.py through its JSON Schema); this
 * module names what the views use and reads what the kernel sends.
 */
import type {
  ApprovalClosed,
  HistoryItem as TextItem,
  Inbound,
  KernelMessage,
  NoticeMsg,
  Outbound,
  Status,
  ToolItem,
  TrustDecisionMsg
} from './generated/protocol';
import { PROTOCOL_VERSION } from './generated/protocol';
import { validateKernelMessage } from './generated/validators';

export type {
  ApprovalModeView,
  CellChange,
  ChangeResult,
  DocCell,
  Hello,
  KernelMessage,
  ModelOptions,
  NotebookReply,
  NotebookRequest,
  Provenance,
  Queued,
  RevertStep,
  SearchHitItem,
  SessionRow,
  SessionSummary,
  SlashCommand,
  SubtaskItem,
  TaskView,
  ToolItem,
  TrustView
} from './generated/protocol';
export type { TextItem };
export { PROTOCOL_VERSION };

export const COMM_TARGET = 'loom';

/** This page's protocol version as the hello sends it: the major, and the minor beside it. */
export const [PROTOCOL_MAJOR, PROTOCOL_MINOR] = PROTOCOL_VERSION.split('.').map(Number);

export type Decision = ApprovalClosed['decision'];
/** The person's answer on the trust card. */
export type TrustDecision = TrustDecisionMsg['decision'];
export type KernelState = Status['state'];
export type NoticeLevel = NoticeMsg['level'];
export type HistoryEntry = TextItem | ToolItem;
/** A kernel message's own fields (without the envelope). */
export type KernelBody = Outbound;
export type KernelType = Outbound['type'];
/** What the front sends. */
export type FrontMessage = Inbound;

type Validator = ((data: unknown) => boolean) & {
  errors?: { instancePath: string; message?: string }[] | null;
};

/**
 * Validate one message from the kernel against the generated schema; return
 * it typed, or an error string naming the first thing wrong.
 */
export function parseKernelMessage(data: unknown): KernelMessage | string {
  const validate = validateKernelMessage as Validator;
  if (validate(data)) {
    return data as KernelMessage;
  }
  const [error] = validate.errors ?? [];
  const type = (data as { type?: unknown } | null)?.type;
  const where = error?.instancePath || '/';
  return `${JSON.stringify(type)}: ${where} ${error?.message ?? 'is not a kernel message'}`;
}

/**
 * The messages a 1.0 kernel sends to one front as replies (the current seq, not advanced):
 * its envelope has no `reply_to` to say so. A 1.1 kernel's envelope says it of each message.
 */
const REPLIES_OF_1_0 = new Set<KernelType>([
  'welcome',
  'history',
  'sessions',
  'search_results',
  'notice',
  'command_result',
  'key',
  'notebook_request',
  'completions',
  'origin',
  'examples'
]);

/**
 * Whether a kernel message is a reply to this front (it carries the current seq without
 * advancing it, and is never replayed) rather than a numbered broadcast event.
 */
export function isReply(message: KernelMessage): boolean {
  if (message.reply_to !== undefined) {
    return message.reply_to !== null;
  }
  return REPLIES_OF_1_0.has(message.type); // a 1.0 kernel: its envelope does not say
}

/**
 * Reads the kernel's messages: each one typed, or a notice for the person when this page
 * cannot read it (never dropped without a word). It learns the kernel's protocol version
 * from the kernel's welcome.
 */
export class KernelReader {
  /** The kernel's protocol version from its welcome (`1.0` when the welcome does not say). */
  get kernelVersion(): string | null {
    return this._kernelVersion;
  }

  /**
   * The message typed; or, for a message this page cannot read, the notice that says so
   * (null when the same problem was already told: one notice, not one per message).
   */
  read(data: unknown): { message: KernelMessage } | { notice: string | null } {
    const welcome = Private.welcomeVersion(data);
    if (welcome !== null) {
      this._kernelVersion = welcome;
    }
    const parsed = parseKernelMessage(data);
    if (typeof parsed !== 'string') {
      return { message: parsed };
    }
    console.warn(`loom: a kernel message this page cannot read (${parsed})`);
    const told = `${this._kernelVersion}: ${parsed}`;
    if (this._told.has(told)) {
      return { notice: null };
    }
    this._told.add(told);
    return { notice: unreadableNotice(parsed, this._kernelVersion) };
  }

  /** A new kernel: its version is not known until its welcome. */
  reset(): void {
    this._kernelVersion = null;
    this._told.clear();
  }

  private _kernelVersion: string | null = null;
  private readonly _told = new Set<string>();
}

/** What the person is told of a kernel message this page cannot read. */
export function unreadableNotice(problem: string, kernelVersion: string | null): string {
  return (
    `This page (Loom protocol ${PROTOCOL_VERSION}) could not read a message from the ` +
    `kernel (Loom protocol ${kernelVersion ?? 'unknown'}): ${problem}. If it keeps ` +
    'happening, install the same loom_jupyter for JupyterLab and for the kernel, then ' +
    'restart the kernel and reload the page.'
  );
}

namespace Private {
  /** The kernel's version a welcome carries, read before validation ('1.0': none said). */
  export function welcomeVersion(data: unknown): string | null {
    if (typeof data !== 'object' || data === null) {
      return null;
    }
    const { type, protocol } = data as { type?: unknown; protocol?: unknown };
    if (type !== 'welcome') {
      return null;
    }
    return typeof protocol === 'string' ? protocol : '1.0';
  }
}

/** The code a tool input carries (run_python's `code`), if any. */
export function inputCode(input: unknown): string | null {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return null;
  }
  const fields = input as Record<string, unknown>;
  const key = CODE_KEYS.find(name => typeof fields[name] === 'string');
  return key === undefined ? null : (fields[key] as string);
}

/** The input fields shown as code: run_python's `code`, the cell tools' `source`. */
const CODE_KEYS = ['code', 'source'] as const;

/**
 * The other short fields of an input whose code is shown (`cell_id: a56db4cd`),
 * on one line; "" when there are none.
 */
export function inputFields(input: unknown): string {
  if (inputCode(input) === null) {
    return '';
  }
  return Object.entries(input as Record<string, unknown>)
    .filter(([name, value]) => !(CODE_KEYS as readonly string[]).includes(name) && value !== null)
    .filter(([, value]) => ['string', 'number', 'boolean'].includes(typeof value))
    .map(([name, value]) => `${name}: ${String(value).slice(0, 80)}`)
    .join(' · ');
}

/**
 * The `code` string of a tool input whose JSON is still streaming, decoded as
 * far as it has arrived (so code shows while the model writes it).
 */
export function partialCode(partial: string): string | null {
  const match = /"(?:code|source)"\s*:\s*"((?:[^"\\]|\\.)*)(\\?)/.exec(partial);
  if (match === null) {
    return null;
  }
  try {
    return JSON.parse(`"${match[1].replace(/\\u[0-9a-fA-F]{0,3}$/, '')}"`) as string;
  } catch {
    return match[1];
  }
}
