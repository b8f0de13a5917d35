// Recognises the Prisma errors that mean a client mistake rather than a server fault.
export type PrismaErrorKind = "unique" | "foreign-key" | "not-found";

const codes: Record<string, PrismaErrorKind> = { P2002: "unique", P2003: "foreign-key", P2025: "not-found" };

export function prismaErrorKind(err: unknown): PrismaErrorKind | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" ? codes[code] : undefined;
}
