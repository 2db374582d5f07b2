/** The footer's cost: never "$0.00" for what ran on a model without a public price. */
import { costText } from '../src/views/dom';
import table from './cost-cases.json';

describe('costText', () => {
  it('shows a priced cost as dollars', () => {
    expect(costText(0.0012, false)).toBe('$0.0012');
    expect(costText(12.5, false)).toBe('$12.50');
  });

  it('says the price is unknown instead of $0', () => {
    expect(costText(0, true)).toBe('price unknown');
    expect(costText(0.02, true)).toBe('$0.02 + price unknown');
  });

  // The kernel's cost_text (tests/models/test_pricing.py) checks the same table.
  it.each(table.cases)('formats $usd (unknown: $unknown) as the kernel does', c => {
    expect(costText(c.usd, c.unknown)).toBe(c.text);
  });
});
