// Where the Agents screen sits in the console (its code is loaded when it is first opened).
import type { ScreenRoute } from '../../screens.tsx';

export const route: ScreenRoute = {
  path: '/agents',
  label: 'Agents',
  scope: 'agents:manage',
  order: 20,
};
