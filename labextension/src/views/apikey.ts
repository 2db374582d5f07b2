/**
 * The key field (DESIGN §12, "The key"): a password box and Save, shown while the
 * kernel has no API key, after a no-key error, or when a key was not saved. The key
 * goes straight to the kernel (`set_key`), which keeps it outside the notebook; the
 * box is emptied at once and the key is never kept, shown or echoed here.
 */
import { button, h } from './dom';

/** What the card says (plain text). */
export const KEY_TEXT = {
  title: 'Your Anthropic API key',
  about:
    'Loom keeps it in your system keyring, or in a file only you can read in your ' +
    'Loom config folder — never in the notebook, its folder, the archive or any output.',
  other: 'Or run %cowork login in a cell, or export ANTHROPIC_API_KEY=... before starting Jupyter.',
  saving: 'Saving…'
};

export class KeyCard {
  readonly node = h('div', { className: 'loom-Key', loom: 'key-card' });

  /** `save` sends the key to the kernel; false when it could not be sent. */
  constructor(save: (key: string) => boolean) {
    this._save = save;
    this.node.setAttribute('role', 'region');
    this.node.setAttribute('aria-label', KEY_TEXT.title);
    this.node.hidden = true;
    this._input.type = 'password';
    this._input.className = 'loom-Key-input';
    this._input.dataset.loom = 'api-key';
    this._input.placeholder = 'sk-ant-…';
    this._input.autocomplete = 'off';
    this._input.spellcheck = false;
    this._input.setAttribute('aria-label', 'Anthropic API key');
    this._input.addEventListener('keydown', event => {
      if (event.key === 'Enter' && !event.isComposing) {
        event.preventDefault();
        this._submit();
      }
    });
    this._button = button('Save key', { loom: 'api-key-save' }, () => this._submit());
    this._button.classList.add('loom-mod-accent');
    const row = h('div', { className: 'loom-Key-row' }, this._input, this._button);
    this.node.append(
      h('div', { className: 'loom-Key-title', text: KEY_TEXT.title }),
      h('div', { className: 'loom-Key-about', text: KEY_TEXT.about }),
      row,
      this._note,
      h('div', { className: 'loom-Key-other', text: KEY_TEXT.other })
    );
  }

  /** Show or hide the field; `problem` is why the last key was not saved. */
  show(open: boolean, problem: string): void {
    this.node.hidden = !open;
    this._button.disabled = false;
    this._note.textContent = problem;
    this._note.hidden = problem === '';
    if (!open) {
      this._input.value = '';
    }
  }

  /** Empty the box first, then send: the key lives on in no node or variable here. */
  private _submit(): void {
    const sent = this._send(this._input.value);
    this._input.value = '';
    if (sent) {
      this._button.disabled = true;
      this._note.textContent = KEY_TEXT.saving;
      this._note.hidden = false;
    }
  }

  private _send(key: string): boolean {
    return key.trim() !== '' && this._save(key);
  }

  private readonly _save: (key: string) => boolean;
  private readonly _input = document.createElement('input');
  private readonly _button: HTMLButtonElement;
  private readonly _note = h('div', { className: 'loom-Key-note', loom: 'api-key-note' });
}
