/**
 * Where a variable came from (issue 21), beside the chat. Inline code in an
 * answer whose whole text is a Python identifier is a variable mention
 * (`[data-loom="variable-mention"][data-name]`, marked once per finished
 * message); hovering it (or focusing it) asks the kernel with `where_from` and
 * shows the `origin` in a tooltip (`[data-loom="provenance-tip"]`): the cell
 * that last set it, its first lines, the chain it depends on and the rebuild
 * estimate. Everything shown is text (textContent), never HTML.
 */
import type { Origin } from '../generated/protocol';
import { h } from './dom';

export type { Origin };

/** How long the pointer rests on a mention before its tip is asked for. */
export const HOVER_DELAY_MS = 250;
/** Longer inline code is no variable mention (the kernel refuses over 200). */
export const MAX_NAME_CHARS = 100;
/** Answers kept per chat (until the next turn starts or ends, or a cell runs). */
const MAX_CACHED = 200;
/** A question unanswered this long is asked again on the next hover. */
const ASK_AGAIN_MS = 5000;
const IDENTIFIER = /^[\p{L}_][\p{L}\p{N}_]*$/u;
const KEYWORDS = new Set(
  (
    'False None True and as assert async await break class continue def del elif else ' +
    'except finally for from global if import in is lambda nonlocal not or pass raise ' +
    'return try while with yield'
  ).split(' ')
);

/** Whether inline code `text` names a variable: one identifier, not a keyword. */
export function isVariableName(text: string): boolean {
  return text.length <= MAX_NAME_CHARS && IDENTIFIER.test(text) && !KEYWORDS.has(text);
}

/**
 * Mark the variable mentions among `root`'s inline code (code blocks are not
 * mentions); focusable, so the keyboard reaches their tips too. Idempotent.
 */
export function markMentions(root: ParentNode): number {
  let marked = 0;
  root.querySelectorAll('code').forEach(code => {
    const name = code.textContent ?? '';
    if (code.closest('pre') !== null || !isVariableName(name)) {
      return;
    }
    code.dataset.loom = 'variable-mention';
    code.dataset.name = name;
    code.tabIndex = 0;
    code.classList.add('loom-VariableMention');
    marked += 1;
  });
  return marked;
}

/** An `@name` mention in the person's text (as the kernel finds them: not in an address). */
const AT_MENTION = /(?<![\w@.])@([\p{L}_][\p{L}\p{N}_]*)(?![\w.\-/:])/gu;

/**
 * The person's message as text and mentions: each `@name` of a variable is a
 * focusable `[data-loom="variable-mention"]` span holding the same text, so its
 * tip works as in an answer; everything else stays plain text.
 */
export function withMentions(text: string): (Node | string)[] {
  const parts: (Node | string)[] = [];
  let at = 0;
  for (const match of text.matchAll(AT_MENTION)) {
    const name = match[1];
    const start = match.index ?? 0;
    if (!isVariableName(name)) {
      continue;
    }
    parts.push(text.slice(at, start));
    const span = h('span', {
      className: 'loom-VariableMention',
      loom: 'variable-mention',
      data: { name },
      text: match[0]
    });
    span.tabIndex = 0;
    parts.push(span);
    at = start + match[0].length;
  }
  parts.push(text.slice(at));
  return parts.filter(part => part !== '');
}

/** `0.12 s`, `3.4 s`, `2 min 5 s` (as the kernel's tables say it). */
export function seconds(value: number): string {
  if (value >= 60) {
    return `${Math.floor(value / 60)} min ${Math.floor(value % 60)} s`;
  }
  return value < 10 ? `${value.toFixed(2)} s` : `${value.toFixed(1)} s`;
}

/** One line of a tip: what it says and how it looks. */
export type TipLine = { part: 'head' | 'code' | 'chain' | 'estimate' | 'why'; text: string };

/** What a tip says of an `origin`, line by line. */
export function tipLines(origin: Origin): TipLine[] {
  const name = origin.variable;
  if (!origin.found) {
    return [{ part: 'why', text: `${name} — ${origin.why}` }];
  }
  const more = origin.more_lines > 0 ? `\n… (${origin.more_lines} more lines)` : '';
  const steps = origin.steps.map(step => `${step.label} ${step.first_line}`);
  if (origin.more_steps > 0) {
    steps.push(`and ${origin.more_steps} more`);
  }
  return [
    { part: 'head', text: `${name} — last set by ${origin.setter} at ${origin.when}` },
    { part: 'code', text: origin.code + more },
    {
      part: 'chain',
      text: steps.length > 0 ? `depends on: ${steps.join(', ')}` : 'depends on no earlier execution'
    },
    { part: 'estimate', text: `rebuild estimate: ${seconds(origin.estimated_s)}` }
  ];
}

/** The tip's content for `lines`: text nodes only (code in a monospace <pre>). */
export function tipNodes(lines: TipLine[]): HTMLElement[] {
  return lines.map(line =>
    h(line.part === 'code' ? 'pre' : 'div', {
      className: `loom-ProvenanceTip-${line.part}`,
      data: { part: line.part },
      text: line.text
    })
  );
}

/**
 * The tips of one chat: hover or focus a mention inside `root`, and after
 * HOVER_DELAY_MS its origin is shown (from the cache, or asked for with
 * `ask`, which is false when no kernel listens). One listener per event on
 * `root`, none per mention.
 */
export class ProvenanceTips {
  readonly node = h('div', { className: 'loom-ProvenanceTip', loom: 'provenance-tip' });

  constructor(root: HTMLElement, ask: (name: string) => boolean) {
    this._root = root;
    this._ask = ask;
    this.node.setAttribute('role', 'tooltip');
    this.node.id = `loom-provenance-tip-${++tipCounter}`;
    this.node.hidden = true;
    root.addEventListener('mouseover', this._onEnter);
    root.addEventListener('focusin', this._onEnter);
    root.addEventListener('mouseout', this._onLeave);
    root.addEventListener('focusout', this._onLeave);
    root.addEventListener('scroll', this.hide, true);
  }

  /** The kernel's answer to a `where_from`. */
  answer(origin: Origin): void {
    if (this._pending.get(origin.name)?.generation === this._generation) {
      if (this._cache.size >= MAX_CACHED) {
        this._cache.clear();
      }
      this._cache.set(origin.name, origin);
    }
    this._pending.delete(origin.name);
    if (this._target?.dataset.name === origin.name && !this.node.hidden) {
      this._show(this._target, tipLines(origin), 'shown');
    }
  }

  /** A turn started or ended, or a cell ran: every answer so far may be stale. */
  invalidate(): void {
    this._generation += 1;
    this._cache.clear();
    this._pending.clear();
  }

  /** Hide the tip (the pointer left, Escape, a scroll, the chat went away). */
  readonly hide = (): void => {
    window.clearTimeout(this._timer);
    this._timer = 0;
    this._target?.removeAttribute('aria-describedby');
    this._target = null;
    this.node.hidden = true;
    document.removeEventListener('keydown', this._onKey, true);
  };

  dispose(): void {
    this.hide();
    this.node.remove();
    this._root.removeEventListener('mouseover', this._onEnter);
    this._root.removeEventListener('focusin', this._onEnter);
    this._root.removeEventListener('mouseout', this._onLeave);
    this._root.removeEventListener('focusout', this._onLeave);
    this._root.removeEventListener('scroll', this.hide, true);
  }

  private readonly _onEnter = (event: Event): void => {
    const mention = mentionOf(event.target);
    if (mention === null || mention === this._target) {
      return;
    }
    this.hide();
    this._target = mention;
    this._timer = window.setTimeout(() => this._open(mention), HOVER_DELAY_MS);
  };

  private readonly _onLeave = (event: Event): void => {
    const next = (event as MouseEvent | FocusEvent).relatedTarget;
    if (this._target !== null && !(next instanceof Node && this._target.contains(next))) {
      this.hide();
    }
  };

  private readonly _onKey = (event: KeyboardEvent): void => {
    if (event.key === 'Escape') {
      this.hide();
    }
  };

  /** The delay passed: show what is known, and ask the kernel when nothing is. */
  private _open(mention: HTMLElement): void {
    this._timer = 0;
    const name = mention.dataset.name ?? '';
    const cached = this._cache.get(name);
    if (cached !== undefined) {
      this._show(mention, tipLines(cached), 'shown');
      return;
    }
    const asked = this._pending.get(name);
    if (asked === undefined || performance.now() - asked.at > ASK_AGAIN_MS) {
      if (!this._ask(name)) {
        const offline = `${name} — Loom is not running in this kernel`;
        this._show(mention, [{ part: 'why', text: offline }], 'shown');
        return;
      }
      this._pending.set(name, { generation: this._generation, at: performance.now() });
    }
    const looking = `${name} — looking up where it came from…`;
    this._show(mention, [{ part: 'head', text: looking }], 'loading');
  }

  private _show(mention: HTMLElement, lines: TipLine[], state: 'loading' | 'shown'): void {
    if (!this.node.isConnected) {
      document.body.append(this.node);
    }
    this.node.replaceChildren(...tipNodes(lines));
    this.node.dataset.name = mention.dataset.name ?? '';
    this.node.dataset.state = state;
    this.node.hidden = false;
    mention.setAttribute('aria-describedby', this.node.id);
    document.addEventListener('keydown', this._onKey, true);
    this._place(mention);
  }

  /** Below the mention (above it near the window's bottom), inside the window. */
  private _place(mention: HTMLElement): void {
    const at = mention.getBoundingClientRect();
    const { offsetWidth: width, offsetHeight: height } = this.node;
    const left = Math.max(4, Math.min(at.left, window.innerWidth - width - 4));
    const below = at.bottom + 4 + height <= window.innerHeight;
    this.node.style.left = `${left}px`;
    this.node.style.top = `${below ? at.bottom + 4 : Math.max(4, at.top - height - 4)}px`;
  }

  private readonly _root: HTMLElement;
  private readonly _ask: (name: string) => boolean;
  private readonly _cache = new Map<string, Origin>();
  /** Names asked for: in which generation, and when. */
  private readonly _pending = new Map<string, { generation: number; at: number }>();
  private _generation = 0;
  private _target: HTMLElement | null = null;
  private _timer = 0;
}

let tipCounter = 0;

function mentionOf(target: EventTarget | null): HTMLElement | null {
  return target instanceof Element
    ? target.closest<HTMLElement>('[data-loom="variable-mention"]')
    : null;
}
