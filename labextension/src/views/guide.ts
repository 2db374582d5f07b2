/**
 * What an empty conversation shows: what Loom can do in this notebook, a few example
 * prompts the kernel built from the live namespace ("Describe `df`"), and how `/`
 * commands and `@` mentions work. The prompts are plain text; a click puts one in the
 * message box (nothing is sent by itself).
 */
import { button, h } from './dom';

export const GUIDE_TEXT = {
  title: 'What Loom can do here',
  about:
    "Loom works inside this notebook's kernel: it sees your variables, runs code where " +
    'your data is, and edits cells when you allow it. Every turn is kept beside the notebook.',
  tryThese: 'Try one (click to put it in the message box):',
  keys: 'Type / for commands (/help lists them) and @ to mention a variable, cell or file.'
};

export class Guide {
  readonly node = h('div', { className: 'loom-Guide', loom: 'guide' });

  /** `pick` puts an example in the message box. */
  constructor(pick: (text: string) => void) {
    this._pick = pick;
    this.node.hidden = true;
    this.node.append(
      h('div', { className: 'loom-Guide-title', text: GUIDE_TEXT.title }),
      h('div', { className: 'loom-Guide-about', text: GUIDE_TEXT.about }),
      h('div', { className: 'loom-Guide-label', text: GUIDE_TEXT.tryThese }),
      this._examples,
      h('div', { className: 'loom-Guide-keys', text: GUIDE_TEXT.keys })
    );
  }

  get visible(): boolean {
    return !this.node.hidden;
  }

  show(visible: boolean): void {
    this.node.hidden = !visible;
  }

  /** The kernel's example prompts (plain text). */
  setExamples(prompts: readonly string[]): void {
    this._examples.replaceChildren(
      ...prompts.map(text => {
        const example = button(
          text,
          { loom: 'example', title: 'Put this in the message box' },
          () => this._pick(text)
        );
        example.classList.add('loom-Guide-example');
        return example;
      })
    );
  }

  private readonly _pick: (text: string) => void;
  private readonly _examples = h('div', { className: 'loom-Guide-examples', loom: 'examples' });
}
