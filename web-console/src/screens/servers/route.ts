// Where the MCP servers screen sits in the console (its code is loaded when it is first opened).
import type { ScreenRoute } from '../../screens.tsx';

export const route: ScreenRoute = {
  path: '/servers',
  label: 'MCP servers',
  scope: 'policies:manage',
  order: 50,
};
