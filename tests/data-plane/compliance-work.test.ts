// The compliance batch's cost model (data-plane/routes/compliance/work.ts): how much evaluation
// work a regular expression is charged. The budget it feeds is tested over HTTP in
// compliance.test.ts.
import { expect, it } from 'vitest';
import { patternWeight } from '../../data-plane/routes/compliance/work.js';

it('weighs regular expressions by length and counted repetitions', () => {
  expect(patternWeight('^[a-z]+$')).toBe(16);
  expect(patternWeight('\\d{4}-\\d{2}')).toBe(2 * 11 * 4 * 2);
  expect(patternWeight('(.|..){100}c')).toBe(2400);
  expect(patternWeight('(a{100}){100}')).toBe(8192);
  expect(patternWeight('a{2,}')).toBe(2 * 5 * 3);
});
