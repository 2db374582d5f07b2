/** The message box with Send and Stop, and the queued messages as chips with cancel. */
import { Queued } from '../protocol';
import { button, h } from './dom';

export type ComposerActions = {
  send: (text: string) => void;
  stop: () => void;
  cancel: (clientId: string) => void;
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
    this._send = button('Send', { loom: 'send' }, () => this._submit());
    this._send.classList.add('loom-mod-accent');
    this._stop = button('Stop', { loom: 'stop' }, actions.stop);
    const row = h('div', { className: 'loom-Composer-row' }, this._input);
    row.append(h('div', { className: 'loom-Composer-buttons' }, this._send, this._stop));
    this.node.append(this._chips, row);
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

  private _onKey(event: KeyboardEvent): void {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      this._submit();
    }
  }

  private _submit(): void {
    const text = this._input.value.trim();
    if (text !== '') {
      this._input.value = '';
      this._actions.send(text);
    }
  }

  private readonly _actions: ComposerActions;
  private readonly _input = document.createElement('textarea');
  private readonly _send: HTMLButtonElement;
  private readonly _stop: HTMLButtonElement;
  private readonly _chips = h('div', { className: 'loom-Chips', loom: 'queue' });
}
