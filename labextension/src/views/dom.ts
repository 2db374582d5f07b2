/** Small DOM helpers shared by the views (elements, buttons, number formats). */

export type Props = {
  className?: string;
  /** The automation role: `data-loom` (see DESIGN §6 for the pinned ones). */
  loom?: string;
  data?: Record<string, string>;
  text?: string;
  title?: string;
};

/** Create an element with a class, a data-loom role, data attributes and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (props.className !== undefined) {
    node.className = props.className;
  }
  if (props.loom !== undefined) {
    node.dataset.loom = props.loom;
  }
  Object.assign(node.dataset, props.data ?? {});
  if (props.title !== undefined) {
    node.title = props.title;
  }
  if (props.text !== undefined) {
    node.textContent = props.text;
  }
  node.append(...children);
  return node;
}

/** A button that calls `onClick`; `props.loom` names it for automation. */
export function button(label: string, props: Props, onClick: () => void): HTMLButtonElement {
  const node = h('button', { className: 'loom-Button', ...props, text: label });
  node.type = 'button';
  node.addEventListener('click', onClick);
  return node;
}

/** Pretty JSON of a tool input, or its code when it is code. */
export function inputText(input: unknown): string {
  try {
    return JSON.stringify(input, null, 2) ?? '';
  } catch {
    return String(input);
  }
}

export function formatDuration(ms: number | null): string {
  if (ms === null) {
    return '';
  }
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

export function formatTokens(count: number): string {
  return count.toLocaleString('en-US');
}

/**
 * Dollars for people, the kernel's rule (`cost_text` in loom_jupyter/models/pricing.py;
 * test/cost-cases.json is the table both check): cents from $1 up (`$1,234.50`); below,
 * up to four decimals with trailing zeros dropped down to cents (`$0.50`, `$0.0123`);
 * `<$0.0001` for what rounds to nothing. `toFixed` rounds the exact value, ties up.
 */
export function formatCost(usd: number): string {
  if (!(usd > 0)) {
    return '$0.00';
  }
  if (usd >= 1) {
    const [whole, cents] = usd.toFixed(2).split('.');
    return `$${whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${cents}`;
  }
  const four = usd.toFixed(4);
  return Number(four) === 0 ? '<$0.0001' : `$${four.replace(/0{1,2}$/, '')}`;
}

/** A cost for people, never "$0.00" for what has no public price (as the kernel says it). */
export function costText(usd: number | null, unpriced: boolean): string {
  if (usd === null || (unpriced && usd === 0)) {
    return 'price unknown';
  }
  return unpriced ? `${formatCost(usd)} + price unknown` : formatCost(usd);
}

/** "3 min ago" style text for an ISO timestamp (the raw text when unparsable). */
export function relativeTime(iso: string, now = Date.now()): string {
  const when = Date.parse(iso);
  if (Number.isNaN(when)) {
    return iso;
  }
  const minutes = Math.round((now - when) / 60000);
  if (minutes < 1) {
    return 'just now';
  }
  if (minutes < 60) {
    return `${minutes} min ago`;
  }
  const hours = Math.round(minutes / 60);
  return hours < 48 ? `${hours} h ago` : new Date(when).toLocaleDateString();
}
