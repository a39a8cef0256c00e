// The Policies screen: NPL versions with a checked YAML editor, and the gateway policy form. Every
// read and change here needs policies:manage (the API's gatewayPolicy and nplPolicyVersions do).
import { Stack, Tabs, Title } from '@mantine/core';
import { IconFileCode, IconShieldCog } from '@tabler/icons-react';
import { RequireScope } from '../../components/require-scope.tsx';
import { GatewayPolicyTab } from './gateway-policy-form.tsx';
import { NplPoliciesTab } from './npl-policies-tab.tsx';

const SCOPE = 'policies:manage';

function PoliciesScreen() {
  return (
    <Stack gap="md">
      <Title order={2}>Policies</Title>
      <RequireScope scope={SCOPE} to="read and change the NPL policies and the gateway policy">
        <Tabs defaultValue="npl" keepMounted={false}>
          <Tabs.List>
            <Tabs.Tab value="npl" leftSection={<IconFileCode size={16} />}>
              NPL policies
            </Tabs.Tab>
            <Tabs.Tab value="gateway" leftSection={<IconShieldCog size={16} />}>
              Gateway policy
            </Tabs.Tab>
          </Tabs.List>
          <Tabs.Panel value="npl" pt="md">
            <NplPoliciesTab />
          </Tabs.Panel>
          <Tabs.Panel value="gateway" pt="md">
            <GatewayPolicyTab />
          </Tabs.Panel>
        </Tabs>
      </RequireScope>
    </Stack>
  );
}

export default PoliciesScreen;
