// Where the Agents screen sits in the console (its code is loaded when it is first opened).
import type { ScreenRoute } from '../../screens.tsx';

export const route: ScreenRoute = {
  path: '/agents',
  label: 'Agents',
  // A kill-only key opens it too: it kills by id or public key (kill-by-identifier.tsx).
  scope: ['agents:manage', 'agents:kill'],
  order: 20,
};
