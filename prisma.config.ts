import { defineConfig } from 'prisma/config';

// The datasource URL is only needed by `prisma migrate deploy` on machines that have the native engine;
// the application builds its own driver adapter (src/db.ts).
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://localhost:5432/perimeter' },
});
