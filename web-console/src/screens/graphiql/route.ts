// Where GraphiQL sits in the console (its code is loaded when it is first opened). No scope: any
// key may run operations, and each field checks its own. The gateway sends a browser that opens
// /graphql here (control-plane/console/plugin.ts, GRAPHIQL_PATH).
import type { ScreenRoute } from '../../screens.tsx';

export const route: ScreenRoute = {
  path: '/graphiql',
  label: 'GraphiQL',
  order: 90,
};
