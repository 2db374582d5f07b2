/**
 * The trust card (DESIGN §12): what the notebook's folder asks for — its MCP
 * servers' whole command lines, the approval and web settings it wants, its
 * instruction files — and Allow / Deny. Everything it shows came from the
 * folder, which someone else may have written: it is set as text only (never
 * HTML, never markdown) and never cut short.
 *
 * An answer is about what the card shows: it carries the view's `digest`, and
 * the kernel records it only while the folder still hashes to that (else it
 * sends the folder as it is now, with a `note`, and the card shows that). What
 * would make Loom ask the person less (`loosens`) is asked apart, with its own
 * checkbox, unchecked until the person ticks it. The words come from the
 * kernel's `loom_jupyter.trust` (generated: src/generated/trust.ts).
 */
import type { TrustDecisionMsg } from '../generated/protocol';
import { LOOSEN_QUESTION, STATUS_WORDS } from '../generated/trust';
import { TrustDecision, TrustView } from '../protocol';
import { button, h } from './dom';

export { LOOSEN_QUESTION, STATUS_WORDS };

type Status = TrustView['status'];

/** The person's answer on the card: the decision, the digest of the view they answered,
 * and whether they let the folder loosen approvals (the `trust_decision` message's fields). */
export type TrustAnswer = Required<Omit<TrustDecisionMsg, 'type'>>;

/** Words of the kernel's (lower case, no full stop) as a sentence. */
function sentence(words: string): string {
  const text = words.charAt(0).toUpperCase() + words.slice(1);
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

/** What the card says, as plain text lines (the view sets them with textContent). */
export function trustText(trust: TrustView): {
  title: string;
  root: string;
  status: string;
  asks: string[];
  hint: string;
  note: string;
  loosens: string[];
  question: string;
} {
  const deciding = trust.status !== 'not-needed';
  return {
    title: deciding ? 'Trust this folder?' : 'Folder trust',
    root: trust.root,
    status: sentence(STATUS_WORDS[trust.status]),
    asks: [...trust.asks],
    hint: deciding
      ? 'Your own settings always win. Until you trust it, Loom works without these.'
      : '',
    note: trust.note ?? '',
    loosens: [...(trust.loosens ?? [])],
    question: LOOSEN_QUESTION
  };
}

export class TrustCard {
  readonly node = h('div', { className: 'loom-Trust', loom: 'trust' });

  constructor(decide: (answer: TrustAnswer) => boolean, close: () => void) {
    this._decide = decide;
    this._close = close;
    this.node.setAttribute('role', 'region');
    this.node.setAttribute('aria-label', 'Folder trust');
    this.node.hidden = true;
  }

  /**
   * Show the folder's trust, or hide the card. Every call draws the card afresh from
   * `trust` (a new view: new content, its digest, the checkbox unticked again unless the
   * folder is trusted with it), so an answer is always about the view on screen.
   */
  show(trust: TrustView | null, open: boolean): void {
    this.node.hidden = trust === null || !open;
    if (trust === null || !open) {
      this.node.replaceChildren();
      return;
    }
    const text = trustText(trust);
    this.node.dataset.status = trust.status;
    const asks = h('div', { className: 'loom-Trust-asks', loom: 'trust-asks' });
    asks.append(...text.asks.map(line => h('div', { className: 'loom-Trust-ask', text: line })));
    const parts: HTMLElement[] = [
      h(
        'div',
        { className: 'loom-Trust-head' },
        h('span', { className: 'loom-Trust-title', text: text.title }),
        this._closeButton(trust.status)
      )
    ];
    if (text.note !== '') {
      const note = h('div', {
        className: 'loom-Trust-notice',
        loom: 'trust-note',
        text: text.note
      });
      note.setAttribute('role', 'alert');
      parts.push(note);
    }
    parts.push(
      h('div', { className: 'loom-Trust-root', loom: 'trust-root', text: text.root }),
      h('div', { className: 'loom-Trust-status', loom: 'trust-status', text: text.status })
    );
    if (text.asks.length > 0) {
      parts.push(h('div', { className: 'loom-Trust-label', text: 'It asks for:' }), asks);
    }
    const deciding = trust.status !== 'not-needed';
    let box: HTMLInputElement | null = null;
    if (deciding && text.loosens.length > 0) {
      box = h('input', { className: 'loom-Trust-approval', loom: 'trust-approval' });
      box.type = 'checkbox';
      box.checked = trust.status === 'trusted' && trust.with_approval === true;
      parts.push(this._loosening(box, text.loosens));
    }
    if (text.hint !== '') {
      parts.push(h('div', { className: 'loom-Trust-note', text: text.hint }));
    }
    if (deciding) {
      parts.push(this._buttons(trust.digest ?? null, box));
    }
    this.node.replaceChildren(...parts);
  }

  /**
   * What would make Loom ask the person less, under its own checkbox `box` (unchecked
   * unless the person already let this very folder loosen approvals: a trusted folder
   * shown again).
   */
  private _loosening(box: HTMLInputElement, lines: string[]): HTMLElement {
    const label = h('label', { className: 'loom-Trust-question' }, box, LOOSEN_QUESTION);
    const list = h('div', { className: 'loom-Trust-asks', loom: 'trust-loosens' });
    list.append(...lines.map(line => h('div', { className: 'loom-Trust-ask', text: line })));
    const about =
      'Unticked, trusting the folder keeps your approval mode: Loom asks you as before.';
    return h(
      'div',
      { className: 'loom-Trust-loosen', loom: 'trust-loosen' },
      label,
      list,
      h('div', { className: 'loom-Trust-note', text: about })
    );
  }

  /**
   * Allow and Deny, about the view whose `digest` is given (and its loosening `box`);
   * Allow waits (disabled) for the kernel's answer, Deny closes at once (the kernel opens
   * the card again when the folder changed since it was shown).
   */
  private _buttons(digest: string | null, box: HTMLInputElement | null): HTMLElement {
    const row = h('div', { className: 'loom-Trust-buttons' });
    const controls = (): (HTMLButtonElement | HTMLInputElement)[] => [
      ...Array.from(row.querySelectorAll('button')),
      ...(box === null ? [] : [box])
    ];
    const answer = (decision: TrustDecision): TrustAnswer => ({
      decision,
      digest,
      with_approval: decision === 'trust' && box?.checked === true
    });
    const allowTitle = 'Start its MCP servers and send its instruction files, from the next turn';
    const allow = button('Trust folder', { loom: 'trust-allow', title: allowTitle }, () => {
      const sent = answer('trust');
      controls().forEach(c => (c.disabled = true));
      if (!this._decide(sent)) {
        controls().forEach(c => (c.disabled = false));
      }
    });
    allow.classList.add('loom-mod-accent');
    const denyTitle = 'Keep its extras off (asked again when what it asks for changes)';
    const deny = button("Don't trust", { loom: 'trust-deny', title: denyTitle }, () => {
      if (this._decide(answer('deny'))) {
        this._close();
      }
    });
    row.append(allow, deny);
    return row;
  }

  /** Close the card without deciding (`/trust` opens it again). */
  private _closeButton(status: Status): HTMLButtonElement {
    const title = status === 'not-needed' ? 'Close' : 'Decide later (/trust opens this again)';
    const close = button('×', { loom: 'trust-close', title }, () => this._close());
    close.setAttribute('aria-label', title);
    close.classList.add('loom-Trust-close');
    return close;
  }

  private readonly _decide: (answer: TrustAnswer) => boolean;
  private readonly _close: () => void;
}
