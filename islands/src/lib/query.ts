/**
 * The query cache every island shares (SPEC section 9) and the typed hooks for the data
 * most islands need.
 *
 * Queries: fresh 5 min, kept 10 min, no refetch on focus, no polling; `retry` is asked with
 * the number of failures before the current one and says yes while it is below 2 (so two
 * retries at most), waiting 1 s, 2 s, 4 s ... capped at 30 s; never retried on 4xx except
 * 408 and 429. Mutations: retried at most once, never on 4xx.
 */
import { QueryClient, useQuery, type UseQueryResult } from "@tanstack/react-query";
import { getJson, statusOf } from "./api";

export const MINUTE = 60_000;
export const QUERY_STALE_MS = 5 * MINUTE;
export const QUERY_GC_MS = 10 * MINUTE;
export const QUERY_MAX_FAILURES = 2;
export const RETRY_BASE_MS = 1000;
export const RETRY_CAP_MS = 30_000;

/** A 4xx that retrying cannot fix (everything but 408 Request Timeout and 429 Too Many Requests). */
export function isFinalClientError(error: unknown): boolean {
  const s = statusOf(error);
  return s !== null && s >= 400 && s < 500 && s !== 408 && s !== 429;
}

/** Query retry rule (React Query passes the failures before this one): retry while below 2, never on a final 4xx. */
export function shouldRetryQuery(failureCount: number, error: Error): boolean {
  if (isFinalClientError(error)) return false;
  return failureCount < QUERY_MAX_FAILURES;
}

/** Mutation retry rule: at most one retry, never on any 4xx. */
export function shouldRetryMutation(failureCount: number, error: Error): boolean {
  const s = statusOf(error);
  if (s !== null && s >= 400 && s < 500) return false;
  return failureCount < 1;
}

/** Exponential backoff from 1 s, capped at 30 s (attemptIndex counts from 0). */
export function retryDelay(attemptIndex: number): number {
  return Math.min(RETRY_BASE_MS * 2 ** attemptIndex, RETRY_CAP_MS);
}

export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        staleTime: QUERY_STALE_MS,
        gcTime: QUERY_GC_MS,
        refetchOnWindowFocus: false,
        refetchInterval: false,
        retry: shouldRetryQuery,
        retryDelay,
      },
      mutations: {
        retry: shouldRetryMutation,
        retryDelay,
      },
    },
  });
}

/** Query keys, one place, so islands invalidate each other's data by name. */
export const queryKeys = {
  settings: ["/api/settings"] as const,
  models: ["/api/models"] as const,
  currentUser: ["/api/user"] as const,
};

/** GET /api/settings: the key-value settings map (SPEC section 3). */
export type Settings = Record<string, string>;

export type Engine = "google" | "openai" | "xai" | "anthropic" | "ensemble";

/** GET /api/models. */
export interface ModelsResponse {
  available: Partial<Record<Engine | string, boolean>>;
  recommended: string;
}

export interface CurrentUser {
  id: number;
  username: string;
  email: string;
  role?: string;
  isAdmin?: boolean;
  createdAt?: string;
  [key: string]: unknown;
}

export const settingsQuery = {
  queryKey: queryKeys.settings,
  queryFn: () => getJson<Settings>("/api/settings"),
  staleTime: 10_000,
  refetchOnMount: true,
  refetchOnWindowFocus: true,
  retry: shouldRetryQuery,
} as const;

export const modelsQuery = {
  queryKey: queryKeys.models,
  queryFn: () => getJson<ModelsResponse>("/api/models"),
  staleTime: 30_000,
} as const;

/** The signed-in user, or null on 401 or any other failure (SPEC section 4 "Session"). */
export async function fetchCurrentUser(): Promise<CurrentUser | null> {
  try {
    return (await getJson<CurrentUser>("/api/user")) ?? null;
  } catch {
    return null;
  }
}

export const currentUserQuery = {
  queryKey: queryKeys.currentUser,
  queryFn: fetchCurrentUser,
  staleTime: QUERY_STALE_MS,
  gcTime: QUERY_GC_MS,
  retry: false,
} as const;

/** Settings: stale after 10 s, refetched on mount and focus, 2 retries. */
export function useSettings(): UseQueryResult<Settings> {
  return useQuery(settingsQuery);
}

/** Engine availability: stale after 30 s. */
export function useModels(): UseQueryResult<ModelsResponse> {
  return useQuery(modelsQuery);
}

/** The signed-in user (null when signed out): fresh 5 min, no retry. */
export function useCurrentUser(): UseQueryResult<CurrentUser | null> {
  return useQuery(currentUserQuery);
}

/** Whether a user may open admin pages (role admin or the isAdmin flag, SPEC section 6). */
export function isAdmin(user: CurrentUser | null | undefined): boolean {
  return !!user && (user.role === "admin" || user.isAdmin === true);
}
