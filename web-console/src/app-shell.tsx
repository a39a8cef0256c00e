// The signed-in frame: navigation, tenant and key, colour scheme switch and sign-out around the
// current screen. Screens are routed under /console by wouter.
import {
  ActionIcon,
  AppShell,
  Badge,
  Burger,
  Group,
  Loader,
  NavLink,
  Stack,
  Text,
  Title,
  Tooltip,
  useComputedColorScheme,
  useMantineColorScheme,
} from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { IconLogout, IconMoon, IconSun } from '@tabler/icons-react';
import { Suspense } from 'react';
import { Link, Redirect, Route, Switch, useLocation } from 'wouter';
import { SCREENS, ScreenView } from './screens.tsx';
import { useSession } from './session/session.tsx';

function ColorSchemeSwitch() {
  const { setColorScheme } = useMantineColorScheme();
  const computed = useComputedColorScheme('light');
  const next = computed === 'dark' ? 'light' : 'dark';
  return (
    <Tooltip label={`Switch to ${next} theme`}>
      <ActionIcon
        variant="default"
        size="lg"
        aria-label={`Switch to ${next} theme`}
        onClick={() => setColorScheme(next)}
      >
        {computed === 'dark' ? <IconSun size={18} /> : <IconMoon size={18} />}
      </ActionIcon>
    </Tooltip>
  );
}

export function ConsoleShell() {
  const session = useSession();
  const [opened, { toggle, close }] = useDisclosure();
  const [location] = useLocation();
  const tenant = session.viewer.tenant;
  return (
    <AppShell
      header={{ height: 56 }}
      navbar={{ width: 220, breakpoint: 'sm', collapsed: { mobile: !opened } }}
      padding="md"
    >
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group gap="sm" wrap="nowrap">
            <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label="Menu" />
            <Title order={1} size="h4">
              Agent Gateway
            </Title>
          </Group>
          <Group gap="sm" wrap="nowrap">
            <Text size="sm" c="dimmed" visibleFrom="sm">
              Tenant <strong>{tenant.displayName ?? tenant.name}</strong>
            </Text>
            <ColorSchemeSwitch />
            <Tooltip label="Sign out (forgets the key in this tab)">
              <ActionIcon
                variant="default"
                size="lg"
                aria-label="Sign out"
                onClick={session.signOut}
              >
                <IconLogout size={18} />
              </ActionIcon>
            </Tooltip>
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" component="nav" aria-label="Screens">
        <Stack gap={2}>
          {SCREENS.map((screen) => (
            <NavLink
              key={screen.path}
              component={Link}
              href={screen.path}
              label={screen.label}
              active={location === screen.path || location.startsWith(`${screen.path}/`)}
              onClick={close}
              rightSection={
                !screen.scope || session.hasScope(screen.scope) ? null : (
                  <Badge size="xs" variant="light" color="gray">
                    no scope
                  </Badge>
                )
              }
            />
          ))}
        </Stack>
      </AppShell.Navbar>
      <AppShell.Main>
        <Suspense fallback={<Loader aria-label="Loading the screen" m="md" />}>
          <Switch>
            {SCREENS.map((screen) => (
              <Route key={screen.path} path={screen.path} nest>
                <ScreenView loader={screen.loader} />
              </Route>
            ))}
            <Route>
              <Redirect to={SCREENS[0]?.path ?? '/'} replace />
            </Route>
          </Switch>
        </Suspense>
      </AppShell.Main>
    </AppShell>
  );
}
