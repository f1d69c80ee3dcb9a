/**
 * Theme and motion preferences, reflected on <html> for the CSS:
 *
 * - `data-theme="light" | "dark" | "system"`: the visitor's choice, stored under the key
 *   `theme` (default system). With "system" the CSS follows `prefers-color-scheme`.
 * - `data-motion="full" | "reduced" | "none"`: the animation level in effect. The stored
 *   level (key `animationLevel`, default "full") is lowered to "reduced" while the system
 *   asks for reduced motion.
 *
 * templates/base.html has an inline copy of `applyStoredPreferences` in <head> so the
 * stored theme applies before the first paint (no flash of the wrong theme).
 */
import { getItem, setItem, StorageKeys } from "./storage";

export type Theme = "light" | "dark" | "system";
export type AnimationLevel = "full" | "reduced" | "none";

export const THEMES: readonly Theme[] = ["light", "dark", "system"];
export const ANIMATION_LEVELS: readonly AnimationLevel[] = ["full", "reduced", "none"];

type Listener = () => void;
const listeners = new Set<Listener>();

function notify() {
  for (const l of listeners) l();
}

/** Called whenever the theme or motion attributes change. */
export function subscribePreferences(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function getTheme(): Theme {
  const v = getItem(StorageKeys.theme);
  return v === "light" || v === "dark" ? v : "system";
}

/** The theme actually shown: "system" resolved through the media query. */
export function resolvedTheme(theme: Theme = getTheme()): "light" | "dark" {
  if (theme !== "system") return theme;
  return matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

export function setTheme(theme: Theme): void {
  setItem(StorageKeys.theme, theme);
  document.documentElement.dataset.theme = theme;
  notify();
}

/** light -> dark -> system -> light: the order the header's toggle steps through. */
export function nextTheme(theme: Theme): Theme {
  return theme === "light" ? "dark" : theme === "dark" ? "system" : "light";
}

export function getAnimationLevel(): AnimationLevel {
  const v = getItem(StorageKeys.animationLevel);
  return v === "reduced" || v === "none" ? v : "full";
}

export function prefersReducedMotion(): boolean {
  return typeof matchMedia === "function" && matchMedia("(prefers-reduced-motion: reduce)").matches;
}

/** The level in effect: the stored one, lowered to "reduced" when the system asks. */
export function effectiveMotion(level: AnimationLevel = getAnimationLevel(), reduced = prefersReducedMotion()): AnimationLevel {
  if (reduced && level === "full") return "reduced";
  return level;
}

export function setAnimationLevel(level: AnimationLevel): void {
  setItem(StorageKeys.animationLevel, level);
  document.documentElement.dataset.motion = effectiveMotion(level);
  notify();
}

/** Writes both attributes from storage and the system settings. */
export function applyStoredPreferences(): void {
  const root = document.documentElement;
  root.dataset.theme = getTheme();
  root.dataset.motion = effectiveMotion();
}

let watching = false;

/** Applies the preferences and keeps them current when the system settings or another tab change them. */
export function initPreferences(): void {
  applyStoredPreferences();
  if (watching) return;
  watching = true;
  const update = () => {
    applyStoredPreferences();
    notify();
  };
  matchMedia("(prefers-reduced-motion: reduce)").addEventListener("change", update);
  matchMedia("(prefers-color-scheme: dark)").addEventListener("change", notify);
  window.addEventListener("storage", (e) => {
    if (e.key === StorageKeys.theme || e.key === StorageKeys.animationLevel || e.key === null) update();
  });
}
