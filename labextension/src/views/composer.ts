/**
 * The message box with Send and Stop, the queued messages as chips with cancel,
 * and the completion list of slash commands and @-mentions.
 */
import { Queued } from '../protocol';
import {
  CompletionContext,
  CompletionItem,
  CompletionList,
  SlashCommand,
  applyCompletion,
  commandItems,
  completionContext
} from './completion';
import { button, h } from './dom';

export type ComposerActions = {
  send: (text: string) => void;
  stop: () => void;
  cancel: (clientId: string) => void;
  /** Ask the kernel what `@query` may name (answered through `showMentions`). */
  complete?: (query: string) => void;
  /** The slash commands the kernel offers (its `welcome`), for completion. */
  commands?: () => readonly SlashCommand[];
};

export class Composer {
  readonly node = h('div', { className: 'loom-Composer' });

  constructor(actions: ComposerActions) {
    this._actions = actions;
    this._input.dataset.loom = 'input';
    this._input.className = 'loom-Composer-input';
    this._input.rows = 3;
    this._input.placeholder = 'Ask Loom… (Enter to send, Shift+Enter for a new line)';
    this._input.addEventListener('keydown', event => this._onKey(event));
    this._input.addEventListener('input', () => this._refresh());
    this._input.addEventListener('click', () => this._refresh());
    this._input.addEventListener('blur', () => this._completions.hide());
    this._send = button('Send', { loom: 'send' }, () => this._submit());
    this._send.classList.add('loom-mod-accent');
    this._stop = button('Stop', { loom: 'stop' }, actions.stop);
    const row = h('div', { className: 'loom-Composer-row' }, this._input);
    row.append(h('div', { className: 'loom-Composer-buttons' }, this._send, this._stop));
    this.node.append(this._chips, this._completions.node, row);
  }

  /** The kernel's mention completions for `query`; ignored when the box moved on. */
  showMentions(query: string, items: CompletionItem[]): void {
    const context = this._context();
    if (context?.kind === 'mention' && context.query === query) {
      this._completions.show(items);
    }
  }

  /** Stop is offered whenever a turn may be running or about to (before any token). */
  setBusy(busy: boolean): void {
    this._stop.disabled = !busy;
  }

  setQueue(items: Queued[]): void {
    this._chips.hidden = items.length === 0;
    this._chips.replaceChildren(...items.map(item => this._chip(item)));
  }

  focus(): void {
    this._input.focus();
  }

  /** Put `text` in the box (an example prompt), caret at its end. */
  fill(text: string): void {
    this._input.value = text;
    this._input.focus();
    this._input.setSelectionRange(text.length, text.length);
  }

  /** A message that could not be sent comes back, before what was typed since. */
  restore(text: string): void {
    const typed = this._input.value.trim();
    this.fill(typed === '' ? text : `${text}\n${typed}`);
  }

  private _chip(item: Queued): HTMLElement {
    const chip = h('div', {
      className: 'loom-Chip',
      loom: 'queued',
      data: { clientId: item.client_id },
      title: item.text
    });
    chip.append(
      h('span', { className: 'loom-Chip-label', text: 'queued' }),
      h('span', { className: 'loom-Chip-text', text: item.text }),
      button('×', { loom: 'cancel-queued', title: 'Cancel this message' }, () =>
        this._actions.cancel(item.client_id)
      )
    );
    return chip;
  }

  private _context(): CompletionContext | null {
    const caret = this._input.selectionStart ?? this._input.value.length;
    if (caret !== this._input.selectionEnd) {
      return null;
    }
    return completionContext(this._input.value, caret);
  }

  /** Show what the text at the caret completes (commands here, mentions by the kernel). */
  private _refresh(): void {
    const context = this._context();
    if (context === null) {
      this._completions.hide();
    } else if (context.kind === 'command') {
      this._completions.show(commandItems(this._actions.commands?.() ?? [], context.query));
    } else if (this._actions.complete !== undefined) {
      this._actions.complete(context.query);
    }
  }

  private _pickCompletion(item: CompletionItem): void {
    const context = this._context();
    this._completions.hide();
    if (context === null) {
      return;
    }
    const next = applyCompletion(this._input.value, context, item);
    this._input.value = next.text;
    this._input.setSelectionRange(next.caret, next.caret);
    this._input.focus();
    if (item.kind === 'file' && item.label.endsWith('/')) {
      this._refresh(); // a folder: go on into it
    }
  }

  /** Up/Down move, Tab/Enter pick, Escape closes while the list shows. */
  private _completionKey(event: KeyboardEvent): boolean {
    if (!this._completions.visible || event.isComposing) {
      return false;
    }
    const moves: Record<string, number> = { ArrowDown: 1, ArrowUp: -1 };
    if (event.key in moves) {
      this._completions.move(moves[event.key]);
    } else if ((event.key === 'Tab' || event.key === 'Enter') && !event.shiftKey) {
      const item = this._completions.selected;
      if (item === null) {
        return false;
      }
      this._pickCompletion(item);
    } else if (event.key === 'Escape') {
      this._completions.hide();
    } else {
      return false;
    }
    event.preventDefault();
    event.stopPropagation();
    return true;
  }

  private _onKey(event: KeyboardEvent): void {
    if (this._completionKey(event)) {
      return;
    }
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      this._submit();
    }
  }

  private _submit(): void {
    const text = this._input.value.trim();
    if (text !== '') {
      this._input.value = '';
      this._completions.hide();
      this._actions.send(text);
    }
  }

  private readonly _actions: ComposerActions;
  private readonly _input = document.createElement('textarea');
  private readonly _send: HTMLButtonElement;
  private readonly _stop: HTMLButtonElement;
  private readonly _chips = h('div', { className: 'loom-Chips', loom: 'queue' });
  private readonly _completions = new CompletionList(item => this._pickCompletion(item));
}
