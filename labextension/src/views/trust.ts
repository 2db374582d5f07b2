/**
 * The trust card (DESIGN §12): what the notebook's folder asks for — its MCP
 * servers' whole command lines, the approval and web settings it wants, its
 * instruction files — and Allow / Deny. Everything it shows came from the
 * folder, which someone else may have written: it is set as text only (never
 * HTML, never markdown) and never cut short.
 */
import { TrustDecision, TrustView } from '../protocol';
import { button, h } from './dom';

type Status = TrustView['status'];

/** The folder's status in words. */
export const STATUS_WORDS: Record<Status, string> = {
  untrusted:
    'Not trusted: its MCP servers do not start, its instruction files are not sent, ' +
    'and its approval and web settings only tighten yours.',
  changed: 'Changed since you trusted it: its extras are off until you trust it again.',
  trusted: 'Trusted: its MCP servers, settings and instruction files are used.',
  denied: 'You chose not to trust it: its extras stay off.',
  'not-needed': 'Nothing to trust: the folder asks for nothing that needs it.'
};

/** What the card says, as plain text lines (the view sets them with textContent). */
export function trustText(trust: TrustView): {
  title: string;
  root: string;
  status: string;
  asks: string[];
  note: string;
} {
  const deciding = trust.status !== 'not-needed';
  return {
    title: deciding ? 'Trust this folder?' : 'Folder trust',
    root: trust.root,
    status: STATUS_WORDS[trust.status],
    asks: [...trust.asks],
    note: deciding
      ? 'Your own settings always win. Until you trust it, Loom works without these.'
      : ''
  };
}

export class TrustCard {
  readonly node = h('div', { className: 'loom-Trust', loom: 'trust' });

  constructor(decide: (decision: TrustDecision) => boolean, close: () => void) {
    this._decide = decide;
    this._close = close;
    this.node.setAttribute('role', 'region');
    this.node.setAttribute('aria-label', 'Folder trust');
    this.node.hidden = true;
  }

  /** Show the folder's trust, or hide the card. */
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
      ),
      h('div', { className: 'loom-Trust-root', loom: 'trust-root', text: text.root }),
      h('div', { className: 'loom-Trust-status', loom: 'trust-status', text: text.status })
    ];
    if (text.asks.length > 0) {
      parts.push(h('div', { className: 'loom-Trust-label', text: 'It asks for:' }), asks);
    }
    if (text.note !== '') {
      parts.push(h('div', { className: 'loom-Trust-note', text: text.note }));
    }
    if (trust.status !== 'not-needed') {
      parts.push(this._buttons());
    }
    this.node.replaceChildren(...parts);
  }

  /** Allow and Deny; Allow waits (disabled) for the kernel's answer, Deny closes at once. */
  private _buttons(): HTMLElement {
    const row = h('div', { className: 'loom-Trust-buttons' });
    const all = (): HTMLButtonElement[] => Array.from(row.querySelectorAll('button'));
    const allowTitle = 'Start its MCP servers and send its instruction files, from the next turn';
    const allow = button('Trust folder', { loom: 'trust-allow', title: allowTitle }, () => {
      all().forEach(b => (b.disabled = true));
      if (!this._decide('trust')) {
        all().forEach(b => (b.disabled = false));
      }
    });
    allow.classList.add('loom-mod-accent');
    const denyTitle = 'Keep its extras off (asked again when what it asks for changes)';
    const deny = button("Don't trust", { loom: 'trust-deny', title: denyTitle }, () => {
      if (this._decide('deny')) {
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

  private readonly _decide: (decision: TrustDecision) => boolean;
  private readonly _close: () => void;
}
