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
  SearchHit,
  SessionRow,
  SessionSummary,
  SlashCommand,
  SubtaskItem,
  TaskView,
  ToolItem,
  TrustView
} from './generated/protocol';
export type { TextItem };
export { PROTOCOL_VERSION } from './generated/protocol';

export const COMM_TARGET = 'loom';

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
