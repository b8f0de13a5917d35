// Derives the PostgreSQL Prisma schema from prisma/schema.prisma: the models are shared, only the
// provider and the generated client's location differ. Run by `npm run generate`.
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";

const source = readFileSync("prisma/schema.prisma", "utf8");
const derived = source
  .replace('provider = "sqlite"', 'provider = "postgresql"')
  .replace('output              = "../gen/prisma/sqlite"', 'output              = "postgresql"');
if (!derived.includes('"postgresql"') || !derived.includes('output              = "postgresql"')) {
  throw new Error("prisma/schema.prisma no longer has the provider/output lines this script rewrites");
}
mkdirSync("gen/prisma", { recursive: true });
writeFileSync(
  "gen/prisma/schema.postgresql.prisma",
  "// Generated from prisma/schema.prisma by prisma/derive-postgresql-schema.mjs. Do not edit.\n" + derived,
);
