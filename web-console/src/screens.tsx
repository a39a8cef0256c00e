// The console's screens, found at build time: every `screens/<name>/` holds `route.ts` (path,
// label, scope, place in the navigation; bundled with the shell) and `screen.tsx` (the screen as
// its default export; its own chunk, loaded when first opened), so adding a screen touches no
// shared file and the first page loads only the code it shows. The navigation shows every screen
// and each screen explains a missing scope itself; a key lands on the first screen it may open.
import { type ComponentType, use } from 'react';

export interface ScreenRoute {
  /** Route under /console, e.g. `/approvals`. */
  readonly path: string;
  readonly label: string;
  /**
   * The scope that opens it, or several of which any one is enough; none for a screen any key may
   * use (GraphiQL: each field checks its own scope).
   */
  readonly scope?: string | readonly string[];
  /** Position in the navigation (ascending). */
  readonly order: number;
}

export interface ScreenEntry extends ScreenRoute {
  readonly loader: ScreenLoader;
}

const routes = import.meta.glob<{ route: ScreenRoute }>('./screens/*/route.ts', { eager: true });
const views = import.meta.glob<{ default: ComponentType }>('./screens/*/screen.tsx');

/**
 * A screen's code, fetched on first render, or at once for the screen the page opens on. Not
 * React.lazy: lazy suspends on its first render even when the chunk is already here, and React
 * then holds the fallback for its reveal throttle (300 ms); a screen whose chunk has arrived
 * renders at once. The loading promise is marked settled the way React's `use` reads a thenable
 * (`status`, `value`), so `use` returns at once for a loaded screen instead of suspending.
 */
export class ScreenLoader {
  #loaded: ComponentType | null = null;
  #loading: Promise<void> | null = null;

  constructor(private readonly load: () => Promise<{ default: ComponentType }>) {}

  get loaded(): ComponentType | null {
    return this.#loaded;
  }

  start(): Promise<void> {
    if (!this.#loading) {
      const loading = this.load().then((module) => {
        this.#loaded = module.default;
        Object.assign(loading, { status: 'fulfilled', value: undefined });
      });
      this.#loading = loading;
    }
    return this.#loading;
  }
}

/**
 * Renders a screen, suspending (for the shell's Suspense) until its code is here. `use` is called
 * on every render, loaded or not: React replays a suspended component when its promise settles and
 * refuses a replay that no longer calls `use` (the render before suspended in it).
 */
export function ScreenView({ loader }: { loader: ScreenLoader }) {
  use(loader.start());
  const Loaded = loader.loaded;
  return Loaded ? <Loaded /> : null;
}

/** The page's own path below /console, e.g. `/approvals/…`. */
const opened = window.location.pathname.replace(/^\/console/, '');

export const SCREENS: readonly ScreenEntry[] = Object.entries(routes)
  .map(([file, module]) => {
    const load = views[file.replace(/route\.ts$/, 'screen.tsx')];
    if (!load) throw new Error(`${file} has no screen.tsx beside it`);
    const { path } = module.route;
    const loader = new ScreenLoader(load);
    // The screen the page opens on starts loading now, beside the sign-in check, not after it.
    if (opened === path || opened.startsWith(`${path}/`)) void loader.start();
    return { ...module.route, loader };
  })
  .sort((a, b) => a.order - b.order);

/** Whether a key may open the screen: it holds its scope (or one of its scopes). */
export function mayOpen(screen: ScreenRoute, hasScope: (scope: string) => boolean): boolean {
  if (screen.scope === undefined) return true;
  return typeof screen.scope === 'string' ? hasScope(screen.scope) : screen.scope.some(hasScope);
}

/**
 * Where a key lands after sign-in: the first screen it may open (an approver's key: Approvals,
 * not an Overview it cannot read); the first screen for a key that may open none.
 */
export function homeScreen(hasScope: (scope: string) => boolean): ScreenEntry {
  // A screen without a scope (GraphiQL) is a tool, not a home.
  const home =
    SCREENS.find((screen) => screen.scope !== undefined && mayOpen(screen, hasScope)) ?? SCREENS[0];
  if (!home) throw new Error('the console has no screens (web-console/src/screens/*/route.ts)');
  return home;
}
