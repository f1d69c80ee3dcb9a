/**
 * Safe access to the browser's storage. Private modes, disabled storage and full quotas
 * make localStorage throw; every helper here swallows that and behaves as "nothing stored".
 *
 * The keys are the ones SPEC section 3 lists under "Browser-stored values".
 */
export const StorageKeys = {
  freeUsageCount: "freeUsageCount",
  theme: "theme",
  /** Animation level: "full" (default), "reduced" or "none". */
  animationLevel: "animationLevel",
  notificationPromptShown: "notificationPromptShown",
  notificationPromptDismissed: "notificationPromptDismissed",
  hasIdentificationHistory: "hasIdentificationHistory",
  notificationPermission: "notificationPermission",
  testimonialCompleted: (identificationId: string | number) => `testimonial-completed-${identificationId}`,
} as const;

/** Free identifications a visitor gets before they must sign in (SPEC section 9). */
export const FREE_IDENTIFICATIONS = 1;

function store(kind: "local" | "session"): Storage | null {
  try {
    return kind === "local" ? window.localStorage : window.sessionStorage;
  } catch {
    return null;
  }
}

export function getItem(key: string, kind: "local" | "session" = "local"): string | null {
  try {
    return store(kind)?.getItem(key) ?? null;
  } catch {
    return null;
  }
}

export function setItem(key: string, value: string, kind: "local" | "session" = "local"): boolean {
  try {
    const s = store(kind);
    if (!s) return false;
    s.setItem(key, value);
    return true;
  } catch {
    return false;
  }
}

export function removeItem(key: string, kind: "local" | "session" = "local"): void {
  try {
    store(kind)?.removeItem(key);
  } catch {
    /* storage unavailable: nothing to remove */
  }
}

export function getJson<T>(key: string, kind: "local" | "session" = "local"): T | null {
  const raw = getItem(key, kind);
  if (raw === null) return null;
  try {
    return JSON.parse(raw) as T;
  } catch {
    return null;
  }
}

export function setJson(key: string, value: unknown, kind: "local" | "session" = "local"): boolean {
  return setItem(key, JSON.stringify(value), kind);
}

/** How many free identifications this browser has used (a missing or bad value is 0). */
export function getFreeUsageCount(): number {
  const n = Number.parseInt(getItem(StorageKeys.freeUsageCount) ?? "0", 10);
  return Number.isFinite(n) && n > 0 ? n : 0;
}

/** Counts one more successful guest identification and returns the new count. */
export function incrementFreeUsageCount(): number {
  const next = getFreeUsageCount() + 1;
  setItem(StorageKeys.freeUsageCount, String(next));
  return next;
}

/** Signing in, registering and logging out clear the counter (SPEC sections 1 and 4). */
export function clearFreeUsageCount(): void {
  removeItem(StorageKeys.freeUsageCount);
}

/** A guest who used their free identification must sign in before the next one. */
export function isFreeUsageExhausted(): boolean {
  return getFreeUsageCount() >= FREE_IDENTIFICATIONS;
}
