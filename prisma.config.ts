// Prisma CLI configuration. The gateway itself never runs the Prisma CLI at run time: it applies
// migrations through the WASM schema engine (prisma/tools/), and the client uses driver adapters.
import { defineConfig } from 'prisma/config';

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
});
