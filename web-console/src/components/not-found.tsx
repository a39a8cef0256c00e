// What the console shows at a path no screen has (a mistyped or outdated link): it says so and
// names the path, with a link home, instead of quietly showing another screen in its place.
import { Anchor, Code, Stack, Text, Title } from '@mantine/core';
import { Link, useLocation } from 'wouter';

export function NotFound({ home }: { home: { readonly path: string; readonly label: string } }) {
  const [location] = useLocation();
  return (
    <Stack gap="sm" maw={640}>
      <Title order={2}>Page not found</Title>
      <Text>
        The console has no page at <Code>/console{location}</Code>. The navigation lists every
        screen.
      </Text>
      <Anchor component={Link} href={home.path}>
        Go to {home.label}
      </Anchor>
    </Stack>
  );
}
