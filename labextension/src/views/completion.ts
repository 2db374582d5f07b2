/**
 * Slash commands and @-mentions in the message box: what the text at the caret
 * asks to complete, and the completion list (`[data-loom="completions"]`
 * holding `[data-loom="completion"]`, DESIGN §9). The kernel answers mention
 * completions (variables, cells, files); commands are completed here, from the
 * kernel's own table (`welcome.commands`, which `/help` lists): the page offers what
 * this kernel can do, whatever version either is.
 */
import type { CompletionItem } from '../generated/protocol';
import type { SlashCommand } from '../protocol';
import { h } from './dom';

export type { CompletionItem, SlashCommand };

/** A slash command's whole form: `/rebuild NAME [NAME ...] [--yes]`. */
export function commandUsage(command: SlashCommand): string {
  return `/${command.name} ${command.args}`.trimEnd();
}

/** What the text at the caret completes: a command name or a mention. */
export type CompletionContext = {
  kind: 'command' | 'mention';
  /** What is typed so far (without the `/` or `@`). */
  query: string;
  /** Where the `/` or `@` is, and where the typed token ends (the caret). */
  start: number;
  end: number;
};

const MENTION_CHARS = /[\w.\-/:]/;

/** The completion the caret asks for in `text`, or null. */
export function completionContext(text: string, caret: number): CompletionContext | null {
  if (text.startsWith('/')) {
    const word = text.slice(1, caret);
    if (/^[a-z]*$/i.test(word) && !/\S/.test(text.slice(caret, caret + 1))) {
      return { kind: 'command', query: word.toLowerCase(), start: 0, end: caret };
    }
  }
  let at = caret;
  while (at > 0 && MENTION_CHARS.test(text[at - 1])) {
    at -= 1;
  }
  if (at === 0 || text[at - 1] !== '@') {
    return null;
  }
  const before = at >= 2 ? text[at - 2] : '';
  if (before !== '' && !/[\s([{,;"']/.test(before)) {
    return null; // an e-mail address, not a mention
  }
  return { kind: 'mention', query: text.slice(at, caret), start: at - 1, end: caret };
}

/** A command's line beside its name: its arguments, then what it does (as in `/help`). */
export function commandDetail(command: SlashCommand): string {
  return command.args === '' ? command.description : `${command.args} — ${command.description}`;
}

/** Commands of `commands` whose name starts with `query`, as completion items. */
export function commandItems(commands: readonly SlashCommand[], query: string): CompletionItem[] {
  return commands
    .filter(c => c.name.startsWith(query.toLowerCase()))
    .map(c => ({
      kind: 'command',
      label: c.name,
      detail: commandDetail(c)
    }));
}

/** `text` with the context's token replaced by `item`; the new text and caret. */
export function applyCompletion(
  text: string,
  context: CompletionContext,
  item: CompletionItem
): { text: string; caret: number } {
  const folder = item.kind === 'file' && item.label.endsWith('/');
  const inserted =
    item.kind === 'command' ? `/${item.label} ` : `@${item.label}${folder ? '' : ' '}`;
  const rest = text.slice(context.end).replace(/^[\w.\-/:]*/, '');
  const after = rest.startsWith(' ') && inserted.endsWith(' ') ? rest.slice(1) : rest;
  const head = text.slice(0, context.start) + inserted;
  return { text: head + after, caret: head.length };
}

/** A sent message that is a slash command of `commands`: the command and its arguments,
 * else null. */
export function parseSlash(
  commands: readonly SlashCommand[],
  text: string
): { command: SlashCommand; name: string; args: string } | null {
  const match = /^\/([a-z]+)(?:\s+([\s\S]*))?$/i.exec(text.trim());
  if (match === null) {
    return null;
  }
  const name = match[1].toLowerCase();
  const command = commands.find(c => c.name === name);
  if (command === undefined) {
    return null;
  }
  return { command, name, args: (match[2] ?? '').trim() };
}

/** The list under the message box: pick with Up/Down and Tab/Enter, or the mouse. */
export class CompletionList {
  readonly node = h('div', { className: 'loom-Completions', loom: 'completions' });

  constructor(pick: (item: CompletionItem) => void) {
    this._pick = pick;
    this.node.setAttribute('role', 'listbox');
    this.hide();
  }

  get visible(): boolean {
    return !this.node.hidden;
  }

  show(items: CompletionItem[]): void {
    this._items = items;
    this._active = 0;
    this.node.hidden = items.length === 0;
    this.node.replaceChildren(...items.map((item, index) => this._row(item, index)));
    this._mark();
  }

  hide(): void {
    this._items = [];
    this.node.hidden = true;
    this.node.replaceChildren();
  }

  /** Move the highlight (wraps around). */
  move(delta: number): void {
    const count = this._items.length;
    if (count > 0) {
      this._active = (this._active + delta + count) % count;
      this._mark();
    }
  }

  /** The highlighted item, or null. */
  get selected(): CompletionItem | null {
    return this._items[this._active] ?? null;
  }

  private _row(item: CompletionItem, index: number): HTMLElement {
    const row = h(
      'div',
      {
        className: 'loom-Completion',
        loom: 'completion',
        data: { kind: item.kind, label: item.label }
      },
      h('span', {
        className: 'loom-Completion-label',
        text: item.kind === 'command' ? `/${item.label}` : `@${item.label}`
      }),
      h('span', { className: 'loom-Completion-detail', text: item.detail })
    );
    row.setAttribute('role', 'option');
    // mousedown, not click: the message box keeps its focus and caret
    row.addEventListener('mousedown', event => {
      event.preventDefault();
      this._pick(item);
    });
    row.addEventListener('mousemove', () => {
      if (this._active !== index) {
        this._active = index;
        this._mark();
      }
    });
    return row;
  }

  private _mark(): void {
    this.node.querySelectorAll('[data-loom="completion"]').forEach((row, index) => {
      row.classList.toggle('loom-mod-active', index === this._active);
      row.setAttribute('aria-selected', String(index === this._active));
    });
    this.node.children[this._active]?.scrollIntoView?.({ block: 'nearest' });
  }

  private readonly _pick: (item: CompletionItem) => void;
  private _items: CompletionItem[] = [];
  private _active = 0;
}
