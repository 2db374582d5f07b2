/**
 * Cells as the agent reads them: outputs as short text (images named, never
 * inlined), the error a cell raised, its provenance, the "Fix" prompt and the
 * size budget of a read reply. Pure functions over nbformat-shaped data.
 */
import type { DocCell, Provenance } from './protocol';

/** Each cell's outputs, as text, are cut to this many characters. */
export const OUTPUT_LIMIT = 2000;
/** A whole `notebook_reply` stays under this many characters of JSON. */
export const REPLY_BUDGET = 300_000;
/** How many traceback lines the Fix prompt carries. */
export const TRACEBACK_LINES = 15;

type Output = { [key: string]: unknown };
/** The error of an output: name, message and the traceback (ANSI stripped). */
export type CellError = { ename: string; evalue: string; traceback: string[] };

// eslint-disable-next-line no-control-regex -- ANSI escapes are control characters
const ANSI = /\u001b\[[0-9;?]*[A-Za-z]|\u001b\][^\u0007]*\u0007/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

/** nbformat multiline strings may be a list of pieces. */
function joined(value: unknown): string {
  if (Array.isArray(value)) {
    return value.map(String).join('');
  }
  return typeof value === 'string' ? value : '';
}

/** Keep the head and the tail of a long text, saying how much was cut. */
export function trimMiddle(text: string, limit = OUTPUT_LIMIT): string {
  if (text.length <= limit) {
    return text;
  }
  const marker = `\n… [${text.length - limit} characters cut] …\n`;
  const keep = Math.max(0, limit - marker.length);
  const head = Math.ceil(keep / 2);
  return text.slice(0, head) + marker + text.slice(text.length - (keep - head));
}

/** The error output's name, message and traceback, or null for other outputs. */
export function outputError(output: Output): CellError | null {
  if (output.output_type !== 'error') {
    return null;
  }
  const traceback = Array.isArray(output.traceback) ? output.traceback.map(String) : [];
  return {
    ename: String(output.ename ?? 'Error'),
    evalue: String(output.evalue ?? ''),
    traceback: stripAnsi(traceback.join('\n')).split('\n')
  };
}

/** The last error among a cell's outputs, if any. */
export function lastError(outputs: readonly Output[]): CellError | null {
  for (let i = outputs.length - 1; i >= 0; i--) {
    const error = outputError(outputs[i]);
    if (error !== null) {
      return error;
    }
  }
  return null;
}

/** A rich output as text: its text/plain, every other type named like "[image/png]". */
function dataText(data: unknown): string {
  if (typeof data !== 'object' || data === null) {
    return '';
  }
  const bundle = data as Record<string, unknown>;
  const named = Object.keys(bundle)
    .filter(mime => mime !== 'text/plain')
    .map(mime => `[${mime}]`);
  const plain = joined(bundle['text/plain']);
  return [...named, plain].filter(part => part !== '').join('\n');
}

/** One output as text. */
export function outputText(output: Output): string {
  switch (output.output_type) {
    case 'stream':
      return joined(output.text);
    case 'execute_result':
    case 'display_data':
      return dataText(output.data);
    case 'error': {
      const error = outputError(output) as CellError;
      const tail = error.traceback.slice(-TRACEBACK_LINES).join('\n');
      return `${error.ename}: ${error.evalue}\n${tail}`.trimEnd();
    }
    default:
      return '';
  }
}

/** A cell's outputs as one text of at most `limit` characters. */
export function outputsText(outputs: readonly Output[], limit = OUTPUT_LIMIT): string {
  const parts = outputs.map(outputText).filter(part => part !== '');
  return trimMiddle(parts.join('\n'), limit);
}

/** The cell's `metadata.loom`, when it is provenance Loom wrote. */
export function readProvenance(value: unknown): Provenance | null {
  if (typeof value !== 'object' || value === null) {
    return null;
  }
  const loom = value as Partial<Provenance>;
  if (typeof loom.turn !== 'number') {
    return null;
  }
  return {
    session: String(loom.session ?? ''),
    turn: loom.turn,
    tool_call: String(loom.tool_call ?? ''),
    action: Private.ACTIONS.has(String(loom.action))
      ? (loom.action as Provenance['action'])
      : 'edited'
  };
}

/** The message the Fix button sends for a cell that raised. */
export function fixPrompt(cellId: string, source: string, error: CellError): string {
  const tail = error.traceback
    .slice(-TRACEBACK_LINES)
    .map(line => stripAnsi(line))
    .join('\n');
  return [
    `Fix cell ${cellId}. Its source:`,
    '```python',
    source,
    '```',
    `It raised ${error.ename}: ${error.evalue}`,
    tail,
    'Propose the fix with edit_cell on this cell.'
  ].join('\n');
}

/** The JSON size of a value (what the reply costs on the wire). */
export function jsonSize(value: unknown): number {
  return JSON.stringify(value).length;
}

const OMITTED = '[outputs omitted: the notebook is too large to read whole]';

/**
 * Cells that fit a reply of `budget` characters (with `overhead` for the rest of
 * the reply): first the largest outputs give way, then the largest sources are cut.
 */
export function fitBudget(cells: DocCell[], budget = REPLY_BUDGET, overhead = 500): DocCell[] {
  const fitted = cells.map(cell => ({ ...cell }));
  let excess = jsonSize(fitted) + overhead - budget;
  const bySize = (key: 'outputs' | 'source'): DocCell[] =>
    [...fitted].sort((x, y) => y[key].length - x[key].length);
  for (const cell of bySize('outputs')) {
    if (excess <= 0 || cell.outputs.length <= OMITTED.length) {
      break;
    }
    excess -= jsonSize(cell.outputs) - jsonSize(OMITTED);
    cell.outputs = OMITTED;
  }
  for (const cell of bySize('source')) {
    if (excess <= 0) {
      break;
    }
    const keep = Math.max(0, cell.source.length - excess - 200);
    const before = jsonSize(cell.source);
    cell.source = `${cell.source.slice(0, keep)}\n… [${cell.source.length - keep} characters cut]`;
    excess -= before - jsonSize(cell.source);
  }
  return fitted;
}

namespace Private {
  export const ACTIONS = new Set(['inserted', 'edited', 'deleted', 'moved']);
}
