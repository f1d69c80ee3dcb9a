/**
 * The client error log of SPEC "Log entry": the last 100 errors and warnings seen in this
 * tab, for the debug overlay and bug reports. Uncaught errors and unhandled rejections are
 * recorded once `installGlobalErrorLog()` ran (the runtime does that).
 */
export type LogLevel = "error" | "warning";

export interface LogEntry {
  id: string;
  timestamp: string;
  level: LogLevel;
  message: string;
  source: string;
  stack?: string;
  userAgent: string;
  url: string;
  userId?: string | number | null;
}

export const LOG_LIMIT = 100;

const entries: LogEntry[] = [];
let currentUserId: string | number | null = null;
let counter = 0;

/** Tags later entries with the signed-in user's id. */
export function setLogUser(id: string | number | null): void {
  currentUserId = id;
}

export function newId(prefix = "log"): string {
  counter += 1;
  const rand = Math.random().toString(36).slice(2, 8);
  return `${prefix}_${Date.now().toString(36)}_${counter}${rand}`;
}

function record(level: LogLevel, message: string, source: string, error?: unknown): LogEntry {
  const entry: LogEntry = {
    id: newId(),
    timestamp: new Date().toISOString(),
    level,
    message,
    source,
    stack: error instanceof Error ? error.stack : undefined,
    userAgent: typeof navigator === "undefined" ? "" : navigator.userAgent,
    url: typeof location === "undefined" ? "" : location.href,
    userId: currentUserId,
  };
  entries.push(entry);
  if (entries.length > LOG_LIMIT) entries.splice(0, entries.length - LOG_LIMIT);
  return entry;
}

/** Records an error and prints it to the console. */
export function logError(message: string, source = "app", error?: unknown): LogEntry {
  const entry = record("error", message, source, error);
  console.error(`[${source}] ${message}`, ...(error === undefined ? [] : [error]));
  return entry;
}

/** Records a warning and prints it to the console. */
export function logWarning(message: string, source = "app", error?: unknown): LogEntry {
  const entry = record("warning", message, source, error);
  console.warn(`[${source}] ${message}`, ...(error === undefined ? [] : [error]));
  return entry;
}

/** Oldest first; a copy. */
export function getLogs(): LogEntry[] {
  return entries.slice();
}

export function clearLogs(): void {
  entries.length = 0;
}

let installed = false;

/** Records uncaught errors and unhandled promise rejections (without printing them again). */
export function installGlobalErrorLog(): void {
  if (installed || typeof window === "undefined") return;
  installed = true;
  window.addEventListener("error", (e) => {
    record("error", e.message || "Uncaught error", e.filename || "window", e.error);
  });
  window.addEventListener("unhandledrejection", (e) => {
    const reason: unknown = e.reason;
    record("error", reason instanceof Error ? reason.message : String(reason), "promise", reason);
  });
}
